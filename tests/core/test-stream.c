/* Streamed bands (ht_run_band_stream): an image run as bands whose
 * carried rows come in and go out in column chunks equals ht_run (variant
 * ed) bit for bit, for every filter (those reaching 2 and 3 rows down and
 * 4 columns back too), levels 2..256, odd widths, band heights from 1 row
 * up, chunks of 1 column to more than the width, 8-bit and 16-bit input,
 * 8-bit and 1-bit output. The callbacks' contract is checked as it
 * goes: the band reads no carried-in column before `need` asked for it
 * (the test writes them only then, over garbage), the carried-out
 * columns that `ready` announces are final (the test copies them then
 * and compares with the end), x grows and ends at the width. A last part
 * runs the bands of an image on threads at once, each band waiting in
 * `need` for what the band above has announced: the wavefront of the MPI
 * tool, on one machine. Also the refusals.
 *
 * The same with threads in a band (ht_context_set_threads): its rows on
 * several threads, the callbacks still from the calling thread.
 *
 * usage: test-stream [bands|formats|threads|errors|band-threads] */
#include "ht-test.h"

#include <pthread.h>

static const char *const customs[] = {
  "* 1 / 2",                                                 /* stays on its row   */
  "- * 0 3; 2 0 1 / 8",                                      /* reaches 1 row down */
  "- - - - * 5; 0 0 0 0 0 0 0 0 0; 3 0 0 0 0 0 0 0 1 / 16", /* 2 rows, 4 left    */
  "- - - - * 1 2 3 4; 1 1 1 1 1 1 1 1 1; 1 0 0 0 2 0 0 0 1; 1 1 1 1 1 1 1 1 1 / 64", /* 3 rows */
  "- * 1; 0 0 4 / 8",                                        /* down-right only    */
};
#define NCUSTOM ((int)(sizeof customs / sizeof customs[0]))

/* One band's callbacks: `above` is filled from `source` (the band
 * above's carried-out rows) only as far as need() asks; ready() copies
 * the announced columns of `below` into `seen`. */
typedef struct {
  int64_t w;
  int D;
  const int32_t *source; /* NULL: nothing to copy (top band)          */
  int32_t *above, *below, *seen;
  int64_t need_x, ready_x;
  int calls_bad;
  pthread_t caller; /* the callbacks come from the thread that ran the band */
} contract;

static bool need_cb(int64_t x, void *user)
{
  contract *c = user;
  if (x <= c->need_x || x > c->w || !pthread_equal(pthread_self(), c->caller))
    c->calls_bad++;
  for (int r = 0; r < c->D && c->source; r++)
    for (int64_t i = c->need_x; i < x && i < c->w; i++)
      c->above[(size_t)r * (size_t)c->w + (size_t)i] = c->source[(size_t)r * (size_t)c->w + (size_t)i];
  c->need_x = x;
  return true;
}

static bool ready_cb(int64_t x, void *user)
{
  contract *c = user;
  if (x <= c->ready_x || x > c->w || !pthread_equal(pthread_self(), c->caller))
    c->calls_bad++;
  for (int r = 0; r < c->D; r++)
    for (int64_t i = c->ready_x; i < x && i < c->w; i++)
      c->seen[(size_t)r * (size_t)c->w + (size_t)i] = c->below[(size_t)r * (size_t)c->w + (size_t)i];
  c->ready_x = x;
  return true;
}

typedef struct {
  int64_t w, h;
  ht_format in_format, out_format;
  const uint8_t *in;  /* rows of in_stride */
  size_t in_stride, out_stride;
} picture;

static ht_image in_rows(const picture *p, int64_t y0, int64_t n)
{
  return (ht_image){ p->w, n, p->in_stride, 1, p->in_format, (void *)(uintptr_t)(p->in + (size_t)y0 * p->in_stride) };
}

static ht_image out_rows(const picture *p, uint8_t *out, int64_t y0, int64_t n)
{
  return (ht_image){ p->w, n, p->out_stride, 1, p->out_format, out + (size_t)y0 * p->out_stride };
}

/* The image run as streamed bands of heights[b % nh] with chunk k, in
 * order; false when a band failed. */
static bool run_streamed(ht_context *ctx, const picture *pic, const ht_params *par, const int *heights, int nh,
                         int64_t k, uint8_t *out, const char *what)
{
  const int D = ht_carry_rows(par);
  const size_t carry = (size_t)D * (size_t)pic->w;
  int32_t *prev = xmalloc(carry * sizeof(int32_t) + 4), *above = xmalloc(carry * sizeof(int32_t) + 4);
  int32_t *below = xmalloc(carry * sizeof(int32_t) + 4), *seen = xmalloc(carry * sizeof(int32_t) + 4);
  bool ok = true;
  int b = 0;
  for (int64_t y0 = 0; y0 < pic->h && ok; b++) {
    int64_t n = heights[b % nh] < pic->h - y0 ? heights[b % nh] : pic->h - y0;
    memset(above, 0x5A, carry * sizeof(int32_t));
    memset(below, 0xA5, carry * sizeof(int32_t));
    memset(seen, 0x33, carry * sizeof(int32_t));
    contract c = { pic->w, D, y0 > 0 ? prev : NULL, above, below, seen, 0, 0, 0, pthread_self() };
    ht_stream st = { y0, k, y0 > 0 ? above : NULL, below, need_cb, ready_cb, &c };
    ht_image i = in_rows(pic, y0, n), o = out_rows(pic, out, y0, n);
    ht_status s = ht_run_band_stream(ctx, &i, &o, par, &st);
    CHECK(s == HT_OK, "%s: band at row %lld (%lld rows): %s", what, (long long)y0, (long long)n,
          ht_context_message(ctx));
    ok = s == HT_OK;
    if (!ok)
      break;
    CHECK(c.calls_bad == 0, "%s: band at row %lld: %d callback(s) out of order", what, (long long)y0, c.calls_bad);
    CHECK(c.ready_x == pic->w, "%s: band at row %lld: ready ended at %lld of %lld", what, (long long)y0,
          (long long)c.ready_x, (long long)pic->w);
    CHECK(y0 == 0 || D == 0 || c.need_x == pic->w, "%s: band at row %lld: need ended at %lld", what,
          (long long)y0, (long long)c.need_x);
    CHECK(memcmp(seen, below, carry * sizeof(int32_t)) == 0,
          "%s: band at row %lld: carried-out columns changed after ready() announced them", what, (long long)y0);
    ok = test_failures == 0;
    int32_t *t = prev;
    prev = below;
    below = t;
    y0 += n;
  }
  free(prev);
  free(above);
  free(below);
  free(seen);
  return ok;
}

static void compare_with_run(ht_context *ctx, const picture *pic, const ht_params *par, const int *heights, int nh,
                             int64_t k, const char *what)
{
  const size_t bytes = pic->out_stride * (size_t)pic->h;
  uint8_t *want = xmalloc(bytes), *got = xmalloc(bytes);
  memset(want, 0, bytes);
  memset(got, 0, bytes);
  ht_params ref = *par;
  ref.variant = HT_VARIANT_ED;
  ht_image i = in_rows(pic, 0, pic->h), o = out_rows(pic, want, 0, pic->h);
  ht_status s = ht_run(ctx, &i, &o, &ref);
  CHECK(s == HT_OK, "%s: reference: %s", what, ht_context_message(ctx));
  if (run_streamed(ctx, pic, par, heights, nh, k, got, what))
    for (int64_t y = 0; y < pic->h; y++)
      if (memcmp(want + (size_t)y * pic->out_stride, got + (size_t)y * pic->out_stride,
                 ht_format_row_bytes(pic->out_format, pic->w, 1)) != 0) {
        CHECK(0, "%s: row %lld differs from ht_run", what, (long long)y);
        break;
      }
  free(want);
  free(got);
}

static picture make_picture(int64_t w, int64_t h, ht_format in_format, ht_format out_format, uint64_t seed,
                            uint8_t **storage)
{
  const int bytes = in_format == HT_FORMAT_U16 ? 2 : 1;
  picture p = { w, h, in_format, out_format, NULL, (size_t)w * (size_t)bytes, ht_format_row_bytes(out_format, w, 1) };
  *storage = xmalloc(p.in_stride * (size_t)h);
  fill_random(*storage, p.in_stride, w, h, bytes, seed);
  p.in = *storage;
  return p;
}

/* Every filter, levels, widths, band heights, chunks 1..W+. */
static void part_bands(ht_context *ctx)
{
  static const int64_t widths[] = { 1, 2, 7, 13, 33 };
  static const int levels[] = { 2, 3, 7, 256 };
  static const int heights_a[] = { 1 }, heights_b[] = { 2, 5, 1, 3 }, heights_c[] = { 9 };
  const int *hs[] = { heights_a, heights_b, heights_c };
  const int nhs[] = { 1, 4, 1 };
  char what[256];
  for (int fi = 0; fi < test_nfilters(NCUSTOM); fi++) {
    ht_params par;
    ht_params_init(&par);
    par.filter = test_filter_at(fi, customs);
    for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++) {
      uint8_t *store;
      picture pic = make_picture(widths[wi], 19, HT_FORMAT_U16, HT_FORMAT_U8, (uint64_t)(fi * 31 + (int)wi), &store);
      for (size_t li = 0; li < sizeof levels / sizeof levels[0]; li++) {
        par.levels = levels[li];
        for (int64_t k = 1; k <= pic.w + 2; k += (k < 4 ? 1 : 3)) {
          const int hsel = (int)((k + (int64_t)li) % 3);
          snprintf(what, sizeof what, "%s, %lldx%lld, levels %d, chunk %lld, heights %d", par.filter.name,
                   (long long)pic.w, (long long)pic.h, par.levels, (long long)k, hs[hsel][0]);
          compare_with_run(ctx, &pic, &par, hs[hsel], nhs[hsel], k, what);
          if (test_failures)
            break;
        }
      }
      free(store);
    }
  }
}

/* 8-bit input, 1-bit output (stored in whole bytes until a row ends),
 * larger images, the streamed band as a plain variant. */
static void part_formats(ht_context *ctx)
{
  static const int64_t shapes[][2] = { { 61, 40 }, { 200, 33 }, { 9, 70 }, { 1, 1 } };
  static const int heights[] = { 7, 3, 11 };
  char what[256];
  for (int fi = 0; fi < test_nfilters(NCUSTOM); fi += 2)
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
      ht_params par;
      ht_params_init(&par);
      par.filter = test_filter_at(fi, customs);
      uint8_t *store;
      picture pic = make_picture(shapes[si][0], shapes[si][1], HT_FORMAT_U8, HT_FORMAT_BIT1, (uint64_t)(fi + 100), &store);
      const int64_t ks[] = { 1, 5, 8, 17, pic.w };
      for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) {
        snprintf(what, sizeof what, "%s, 8-bit in, 1-bit out, %lldx%lld, chunk %lld", par.filter.name,
                 (long long)pic.w, (long long)pic.h, (long long)ks[ki]);
        compare_with_run(ctx, &pic, &par, heights, 3, ks[ki], what);
      }
      /* the whole image by variant stream through ht_run */
      const size_t bytes = pic.out_stride * (size_t)pic.h;
      uint8_t *want = xmalloc(bytes), *got = xmalloc(bytes);
      ht_image i = in_rows(&pic, 0, pic.h), ow = out_rows(&pic, want, 0, pic.h), og = out_rows(&pic, got, 0, pic.h);
      par.variant = HT_VARIANT_ED;
      CHECK(ht_run(ctx, &i, &ow, &par) == HT_OK, "ed: %s", ht_context_message(ctx));
      par.variant = HT_VARIANT_STREAM;
      CHECK(ht_run(ctx, &i, &og, &par) == HT_OK, "stream: %s", ht_context_message(ctx));
      CHECK(memcmp(want, got, bytes) == 0, "%s: variant stream differs from ed", par.filter.name);
      free(want);
      free(got);
      free(store);
    }
}

/* Bands on threads at once, each waiting in need() for the band above's
 * ready(): the MPI tool's wavefront without MPI. */
typedef struct band_thread band_thread;
struct band_thread {
  const picture *pic;
  const ht_params *par;
  int64_t y0, n, k;
  uint8_t *out;
  int32_t *above, *below; /* above is the band above's below           */
  band_thread *up;        /* NULL for the top band                      */
  pthread_mutex_t *lock;
  pthread_cond_t *cond;
  int64_t announced;      /* columns of below passed on, under lock     */
  ht_status status;
};

static bool wait_above(int64_t x, void *user)
{
  band_thread *b = user;
  pthread_mutex_lock(b->lock);
  while (b->up->announced < x)
    pthread_cond_wait(b->cond, b->lock);
  pthread_mutex_unlock(b->lock);
  return true;
}

static bool announce(int64_t x, void *user)
{
  band_thread *b = user;
  pthread_mutex_lock(b->lock);
  b->announced = x;
  pthread_cond_broadcast(b->cond);
  pthread_mutex_unlock(b->lock);
  return true;
}

static void *band_main(void *arg)
{
  band_thread *b = arg;
  ht_context *ctx = ht_context_new();
  ht_context_set_threads(ctx, 1);
  ht_stream st = { b->y0, b->k, b->up ? b->above : NULL, b->below, b->up ? wait_above : NULL, announce, b };
  ht_image i = in_rows(b->pic, b->y0, b->n), o = out_rows(b->pic, b->out, b->y0, b->n);
  b->status = ht_run_band_stream(ctx, &i, &o, b->par, &st);
  ht_context_free(ctx);
  if (b->status != HT_OK)
    announce(b->pic->w, b); /* let the band below end too */
  return NULL;
}

static void part_threads(ht_context *ctx)
{
  static const int filters[] = { HT_FILTER_FLOYD_STEINBERG, HT_FILTER_JARVIS_JUDICE_NINKE, HT_FILTER_ATKINSON };
  for (size_t fi = 0; fi < sizeof filters / sizeof filters[0]; fi++)
    for (int rr = 1; rr <= 8; rr *= 2) {
      ht_params par;
      ht_params_init(&par);
      par.filter = *ht_filter_builtin((ht_filter_id)filters[fi]);
      par.levels = rr == 4 ? 5 : 2;
      uint8_t *store;
      picture pic = make_picture(301, 64, HT_FORMAT_U8, HT_FORMAT_U8, (uint64_t)(fi * 5 + (size_t)rr), &store);
      const int64_t nb = (pic.h + rr - 1) / rr;
      const size_t carry = (size_t)ht_carry_rows(&par) * (size_t)pic.w + 1;
      band_thread *b = xmalloc((size_t)nb * sizeof *b);
      pthread_t *tid = xmalloc((size_t)nb * sizeof *tid);
      pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
      pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
      uint8_t *got = xmalloc(pic.out_stride * (size_t)pic.h), *want = xmalloc(pic.out_stride * (size_t)pic.h);
      for (int64_t j = 0; j < nb; j++) {
        int32_t *below = xmalloc(carry * sizeof(int32_t));
        b[j] = (band_thread){ &pic, &par, j * rr, rr < pic.h - j * rr ? rr : pic.h - j * rr, 7 + j % 3, got,
                              j ? b[j - 1].below : NULL, below, j ? &b[j - 1] : NULL, &lock, &cond, 0, HT_OK };
      }
      for (int64_t j = 0; j < nb; j++)
        if (pthread_create(&tid[j], NULL, band_main, &b[j]) != 0) {
          fprintf(stderr, "test-stream: cannot start a thread\n");
          exit(99);
        }
      for (int64_t j = 0; j < nb; j++)
        pthread_join(tid[j], NULL);
      for (int64_t j = 0; j < nb; j++)
        CHECK(b[j].status == HT_OK, "threads: band %lld failed", (long long)j);
      ht_params ref = par;
      ref.variant = HT_VARIANT_ED;
      ht_image i = in_rows(&pic, 0, pic.h), o = out_rows(&pic, want, 0, pic.h);
      CHECK(ht_run(ctx, &i, &o, &ref) == HT_OK, "reference: %s", ht_context_message(ctx));
      CHECK(memcmp(want, got, pic.out_stride * (size_t)pic.h) == 0, "threads: %s, bands of %d rows differ",
            par.filter.name, rr);
      for (int64_t j = 0; j < nb; j++)
        free(b[j].below);
      free(b);
      free(tid);
      free(got);
      free(want);
      free(store);
    }
}

static bool refuse(int64_t x, void *user)
{
  (void)x;
  (void)user;
  return false;
}

static void part_errors(ht_context *ctx)
{
  uint8_t in[3 * 8 * 4] = { 0 }, out[8 * 4 * 3];
  ht_params par;
  ht_params_init(&par);
  int32_t carry[8] = { 0 };
  ht_image gi = { 8, 4, 8, 1, HT_FORMAT_U8, in }, go = { 8, 4, 8, 1, HT_FORMAT_U8, out };
  ht_stream st = { 4, 3, carry, carry, NULL, NULL, NULL };
  CHECK(ht_run_band_stream(ctx, &gi, &go, &par, NULL) == HT_ERR_INVALID_ARGUMENT, "no stream accepted");
  st.chunk = 0;
  CHECK(ht_run_band_stream(ctx, &gi, &go, &par, &st) == HT_ERR_INVALID_ARGUMENT, "chunk 0 accepted");
  st.chunk = 3;
  ht_image ci = { 8, 4, 24, 3, HT_FORMAT_U8, in }, co = { 8, 4, 24, 3, HT_FORMAT_U8, out };
  par.color = HT_COLOR_PER_CHANNEL;
  CHECK(ht_run_band_stream(ctx, &ci, &co, &par, &st) == HT_ERR_UNSUPPORTED, "three planes accepted");
  par.color = HT_COLOR_LUMA;
  ht_image lo = { 8, 4, 8, 1, HT_FORMAT_U8, out };
  CHECK(ht_run_band_stream(ctx, &ci, &lo, &par, &st) == HT_OK, "luma of RGB: %s", ht_context_message(ctx));
  par.variant = HT_VARIANT_ED;
  CHECK(ht_run_band_stream(ctx, &gi, &go, &par, &st) == HT_ERR_UNSUPPORTED, "variant ed streamed");
  CHECK(strstr(ht_context_message(ctx), "stream") != NULL, "message: %s", ht_context_message(ctx));
  par.variant = HT_VARIANT_AUTO;
  st.need = refuse;
  CHECK(ht_run_band_stream(ctx, &gi, &go, &par, &st) == HT_ERR_CANCELLED, "need() returning false not a stop");
  st.need = NULL;
  st.ready = refuse;
  CHECK(ht_run_band_stream(ctx, &gi, &go, &par, &st) == HT_ERR_CANCELLED, "ready() returning false not a stop");
  par.scan = HT_SCAN_SERPENTINE;
  st.ready = NULL;
  CHECK(ht_run_band_stream(ctx, &gi, &go, &par, &st) == HT_ERR_UNSUPPORTED, "serpentine streamed");
}

int main(int argc, char **argv)
{
  const char *part = argc > 1 ? argv[1] : "bands";
  ht_context *ctx = ht_context_new();
  ht_context_set_threads(ctx, 1);
  if (strcmp(part, "bands") == 0)
    part_bands(ctx);
  else if (strcmp(part, "formats") == 0)
    part_formats(ctx);
  else if (strcmp(part, "threads") == 0)
    part_threads(ctx);
  else if (strcmp(part, "errors") == 0)
    part_errors(ctx);
  else if (strcmp(part, "band-threads") == 0) {
    for (int t = 2; t <= 5; t += 3) {
      ht_context_set_threads(ctx, t);
      part_bands(ctx);
      part_formats(ctx);
    }
  }
  else {
    fprintf(stderr, "usage: test-stream [bands|formats|threads|errors|band-threads]\n");
    return 2;
  }
  ht_context_free(ctx);
  return test_finish("test-stream");
}
