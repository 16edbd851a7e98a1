/* Every CPU implementation of error diffusion that the library lists
 * (HT_LIST_VARIANTS) equals ed bit for bit, the threaded ones (as their
 * rows say, HT_CAP_THREADS) on 1..8 threads and more threads than rows,
 * for every built-in filter (HT_LIST_FILTERS) and custom ones, levels 2,
 * 3, 16 (and 256 once), on random images, awkward shapes and a real
 * photograph. core/diffusion/ed.c is the ground truth (its own
 * correctness is checked against an independent loop in
 * test-reference.c).
 *
 * Built a second time against the library whose wavefront gives its
 * bands random heights (HT_WF_HEIGHT_TEST): then it also checks that
 * bands of other than the usual height were taken, and that bands of
 * the diagonal kernel went on in other threads than they started in.
 *
 * usage: test-equivalence PHOTO.pgm [shapes|photo|random]  */
#include "ht-test.h"

#include "impl.h" /* the implementations' rows: which ones run on several threads */

#ifdef HT_WF_HEIGHT_TEST
#include <stdatomic.h>
extern _Atomic long long ht_wf_test_other_heights; /* core/diffusion/wavefront_sched.c, test builds */
extern _Atomic long long ht_wf_test_moves;
extern _Atomic long long ht_wf_test_overruns;
#endif

static const char *const customs[] = {
  "- * 0 3; 2 0 1 / 8",              /* footprint (1, 2, 1)              */
  "* 1 / 2",                          /* nothing below: delay 1           */
  "- - - - * 5; 0 0 0 0 0 0 0 0 0; 3 0 0 0 0 0 0 0 1 / 16", /* delay 3, left 4 */
  "- - - - * 1 2 3 4; 1 1 1 1 1 1 1 1 1; 1 0 0 0 2 0 0 0 1; 1 1 1 1 1 1 1 1 1 / 64",
  "- * 7; 3 5 1",                     /* Floyd-Steinberg, parsed           */
};

static int cmp_planes(const uint8_t *a, const uint8_t *b, int64_t w, int64_t h, int64_t *fx, int64_t *fy)
{
  for (int64_t y = 0; y < h; y++)
    for (int64_t x = 0; x < w; x++)
      if (a[y * w + x] != b[y * w + x]) {
        *fx = x;
        *fy = y;
        return 1;
      }
  return 0;
}

/* The implementations compared with ed: every other CPU one of error
 * diffusion in the library's list. */
static ht_variant others[TEST_MAX_VARIANTS];
static int nothers;

static void find_variants(void)
{
  ht_variant all[TEST_MAX_VARIANTS];
  int n = test_variants(HT_METHOD_ERROR_DIFFUSION, HT_BACKEND_CPU, all, TEST_MAX_VARIANTS);
  CHECK(n <= TEST_MAX_VARIANTS, "%d CPU variants, the test holds %d", n, TEST_MAX_VARIANTS);
  bool has_ed = false;
  for (int i = 0; i < n && i < TEST_MAX_VARIANTS; i++) {
    if (all[i] == HT_VARIANT_ED)
      has_ed = true;
    else
      others[nothers++] = all[i];
  }
  CHECK(has_ed && nothers > 0, "the variant list has %s and %d other CPU variants of error diffusion",
        has_ed ? "ed" : "no ed", nothers);
}

/* Whether the row of variant v says that it runs on the context's
 * threads: then the thread counts are worth a sweep. */
static bool threaded(ht_variant v)
{
  const ht_impl *impl = ht_impl_of(v);
  return impl && (impl->caps & HT_CAP_THREADS);
}

/* Runs every CPU variant on `in` (a threaded one on each of the thread
 * counts, the others on the first) and compares with ED. */
static void check_all(ht_context *ctx, const uint16_t *in, int64_t w, int64_t h, const ht_filter *f,
                      const char *fname, int levels, const int *threads, int nthreads, const char *what)
{
  size_t n = (size_t)(w * h);
  uint8_t *ref = xmalloc(n), *out = xmalloc(n);
  ht_params p;
  ht_params_init(&p);
  p.filter = *f;
  p.levels = levels;
  p.variant = HT_VARIANT_ED;
  ht_context_set_threads(ctx, 1);
  ht_status s = ht_run_plane(ctx, in, (size_t)w * 2, ref, (size_t)w, w, h, &p);
  CHECK(s == HT_OK, "ed on %s: %s", what, ht_context_message(ctx));
  /* levels really are level indices */
  for (size_t i = 0; i < n; i++)
    if (ref[i] >= levels) {
      CHECK(0, "%s: level %d out of range", what, ref[i]);
      break;
    }
  for (int vi = 0; vi < nothers; vi++)
    for (int ti = 0; ti < (threaded(others[vi]) ? nthreads : 1); ti++) {
      const ht_variant v = others[vi];
      const int t = threads[ti];
      ht_context_set_threads(ctx, t);
      p.variant = v;
      memset(out, 0xA5, n);
      s = ht_run_plane(ctx, in, (size_t)w * 2, out, (size_t)w, w, h, &p);
      CHECK(s == HT_OK, "%s threads %d on %s: %s", ht_variant_name(v), t, what, ht_context_message(ctx));
      int64_t fx, fy;
      if (s == HT_OK && cmp_planes(ref, out, w, h, &fx, &fy))
        CHECK(0, "%s (threads %d) differs from ed at (%lld, %lld): %d vs %d; %s, %s, levels %d, %lldx%lld",
              ht_variant_name(v), t, (long long)fx, (long long)fy, out[fy * w + fx], ref[fy * w + fx], what,
              fname, levels, (long long)w, (long long)h);
    }
  free(ref);
  free(out);
}

static int nfilters(void) { return test_nfilters((int)(sizeof customs / sizeof customs[0])); }

static void get_filter(int i, ht_filter *f, const char **name)
{
  *f = test_filter_at(i, customs);
  *name = i < test_nbuiltin() ? f->name : customs[i - test_nbuiltin()];
}

static const int all_threads[] = { 1, 2, 3, 4, 5, 6, 7, 8 };

static void run_random(ht_context *ctx)
{
  /* sizes around the wavefront's chunk size (32), widths where it picks
   * bands of 4, 8 and 16 rows for 2 to 8 threads, and widths past the
   * 1024 columns of its sliding error rows (2100, 4200) */
  static const int64_t sizes[][2] = { { 127, 251 }, { 300, 67 }, { 513, 41 }, { 64, 64 },
                                      { 1000, 3 }, { 2100, 37 }, { 4200, 35 } };
  const int levels[] = { 2, 3, 16 };
  uint64_t seed = 1;
  for (int fi = 0; fi < nfilters(); fi++) {
    ht_filter f;
    const char *name;
    get_filter(fi, &f, &name);
    for (int li = 0; li < 3; li++)
      for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        int64_t w = sizes[si][0], h = sizes[si][1];
        uint16_t *in = random_plane(w, h, seed++);
        check_all(ctx, in, w, h, &f, name, levels[li], all_threads, 8, "random image");
        free(in);
      }
  }
  /* 256 levels, the other end of the range */
  uint16_t *in = random_plane(200, 100, 999);
  check_all(ctx, in, 200, 100, ht_filter_builtin(HT_FILTER_FLOYD_STEINBERG), "floyd-steinberg", 256,
            all_threads, 8, "random image");
  check_all(ctx, in, 200, 100, ht_filter_builtin(HT_FILTER_STUCKI), "stucki", 256, all_threads, 8,
            "random image");
  free(in);
  /* An image large enough that the wavefront keeps 8 threads for
   * Floyd-Steinberg and Sierra Lite, binary (it gives each thread at least
   * 2^18 pixels; the diagonal kernel where the CPU has AVX2) */
  in = random_plane(2051, 1031, 4242);
  check_all(ctx, in, 2051, 1031, ht_filter_builtin(HT_FILTER_FLOYD_STEINBERG), "floyd-steinberg", 2, all_threads, 8,
            "random image");
  check_all(ctx, in, 2051, 1031, ht_filter_builtin(HT_FILTER_SIERRA_LITE), "sierra-lite", 2, all_threads, 8,
            "random image");
  free(in);
}

static void run_shapes(ht_context *ctx)
{
  static const int64_t shapes[][2] = {
    { 1, 1 }, { 1, 2 }, { 2, 1 }, { 2, 2 }, { 1, 37 }, { 37, 1 }, { 1, 300 }, { 300, 1 },
    { 3, 3 }, { 5, 17 }, { 17, 5 }, { 9, 40 }, { 63, 9 }, { 65, 9 }, { 129, 17 }, { 200, 2 },
  };
  const int threads[] = { 1, 2, 3, 4, 8, 64 };
  const int levels[] = { 2, 3, 16 };
  uint64_t seed = 100;
  for (int fi = 0; fi < nfilters(); fi++) {
    ht_filter f;
    const char *name;
    get_filter(fi, &f, &name);
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
      int64_t w = shapes[si][0], h = shapes[si][1];
      uint16_t *in = random_plane(w, h, seed++);
      check_all(ctx, in, w, h, &f, name, levels[si % 3], threads, 6, "awkward shape");
      free(in);
    }
  }
}

static void run_photo(ht_context *ctx, const char *path)
{
  int64_t w, h;
  uint8_t *pgm = read_pgm(path, &w, &h);
  CHECK(pgm != NULL, "the photo fixture %s is needed", path);
  if (!pgm)
    return;
  uint16_t *in = xmalloc((size_t)(w * h) * 2);
  for (int64_t i = 0; i < w * h; i++)
    in[i] = (uint16_t)(pgm[i] * 257);
  const int levels[] = { 2, 3, 16 };
  for (int fi = 0; fi < nfilters(); fi++) {
    ht_filter f;
    const char *name;
    get_filter(fi, &f, &name);
    for (int li = 0; li < 3; li++)
      check_all(ctx, in, w, h, &f, name, levels[li], all_threads, 8, "photo");
  }
  /* the whole-image entry too: 8-bit in, 8-bit and 1-bit out */
  size_t n = (size_t)(w * h), nb = (size_t)((w + 7) / 8 * h);
  uint8_t *ref = xmalloc(n), *out = xmalloc(n), *refb = xmalloc(nb), *outb = xmalloc(nb);
  for (int vi = -1; vi < nothers; vi++)
    for (int t = 1; t <= (vi >= 0 && threaded(others[vi]) ? 4 : 1); t++) {
      const ht_variant v = vi < 0 ? HT_VARIANT_ED : others[vi];
      ht_params p;
      ht_params_init(&p);
      p.variant = v;
      ht_context_set_threads(ctx, t);
      ht_image I = { w, h, (size_t)w, 1, HT_FORMAT_U8, pgm };
      ht_image O = { w, h, (size_t)w, 1, HT_FORMAT_U8, v == HT_VARIANT_ED ? ref : out };
      ht_image B = { w, h, (size_t)(w + 7) / 8, 1, HT_FORMAT_BIT1, v == HT_VARIANT_ED ? refb : outb };
      CHECK(ht_run(ctx, &I, &O, &p) == HT_OK, "ht_run %s: %s", ht_variant_name(p.variant), ht_context_message(ctx));
      CHECK(ht_run(ctx, &I, &B, &p) == HT_OK, "ht_run %s: %s", ht_variant_name(p.variant), ht_context_message(ctx));
      CHECK(ht_context_last_variant(ctx) == p.variant, "last variant %d, asked for %d",
            (int)ht_context_last_variant(ctx), v);
      if (v != HT_VARIANT_ED) {
        CHECK(memcmp(ref, out, n) == 0, "ht_run, 8-bit out: %s (%d threads) differs from ed",
              ht_variant_name(p.variant), t);
        CHECK(memcmp(refb, outb, nb) == 0, "ht_run, 1-bit out: %s (%d threads) differs from ed",
              ht_variant_name(p.variant), t);
      }
    }
  free(ref);
  free(out);
  free(refb);
  free(outb);
  free(in);
  free(pgm);
}

int main(int argc, char **argv)
{
  if (argc < 2) {
    fprintf(stderr, "usage: %s PHOTO.pgm [shapes|photo|random]\n", argv[0]);
    return 1;
  }
  const char *part = argc > 2 ? argv[2] : "all";
  ht_context *ctx = ht_context_new();
  CHECK(ctx != NULL, "context");
  if (!ctx)
    return 1;
  ht_context_set_backend(ctx, HT_BACKEND_CPU);
  find_variants();
  if (!strcmp(part, "all") || !strcmp(part, "shapes"))
    run_shapes(ctx);
  if (!strcmp(part, "all") || !strcmp(part, "photo"))
    run_photo(ctx, argv[1]);
  if (!strcmp(part, "all") || !strcmp(part, "random"))
    run_random(ctx);
#ifdef HT_WF_HEIGHT_TEST
  CHECK(atomic_load(&ht_wf_test_other_heights) > 0, "the height-test wavefront never took a band of another height");
  printf("bands of another height: %lld\n", (long long)atomic_load(&ht_wf_test_other_heights));
#if defined(__x86_64__) || defined(__i386__)
  /* where the diagonal kernel runs, its bands also change threads: with
   * the random part's hundreds of bands, always (the photo's few, on a
   * loaded machine, once did not; the shapes are mostly too narrow) */
  if ((!strcmp(part, "all") || !strcmp(part, "random")) && __builtin_cpu_supports("avx2"))
    CHECK(atomic_load(&ht_wf_test_moves) > 0, "no diagonal band went on in another thread");
#endif
  printf("diagonal bands that went on in another thread: %lld\n", (long long)atomic_load(&ht_wf_test_moves));
  CHECK(atomic_load(&ht_wf_test_overruns) == 0, "%lld diagonal blocks ran ahead of the band above",
        (long long)atomic_load(&ht_wf_test_overruns));
#endif
  ht_context_free(ctx);
  return test_finish("test-equivalence");
}
