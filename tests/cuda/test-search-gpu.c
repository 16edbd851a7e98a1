/* The search methods on the GPU (les-gpu, pes-gpu, dbs-gpu, cuda/search/)
 * against the CPU (core/search/), by parts:
 *
 *  les, pes, dbs  for many shapes (1x1, 1xN, Nx1, primes, widths not a
 *                 multiple of 32, images smaller than one block, a photo),
 *                 windows m = 1..5, eyes of radius 1..7 and several
 *                 sigmas, seeds, both initial images and round limits:
 *                 the GPU's bits equal the CPU's (threaded, parallel
 *                 schedule), and so do the counts of rounds, windows
 *                 searched and windows changed (the skip map and the
 *                 stopping rule work alike);
 *  api            backend auto and backend cuda pick the GPU rows; the
 *                 raster schedule is refused on the GPU and runs on the
 *                 CPU under auto; levels other than 2 fail with a message
 *                 naming the method; a cancel gives HT_ERR_CANCELLED and
 *                 leaves the output alone; colour per channel (each plane
 *                 its own seed stream) equals the CPU.
 *
 * Exits 77 where no GPU is usable. argv: photo.pgm part */
#include "ht-test.h"
#include "search/search.h"

#include <stdbool.h>

typedef struct {
  int64_t w, h;
  uint8_t *in;
} pic;

static pic photo; /* the fixture */

static pic make_pic(int64_t w, int64_t h, uint64_t seed)
{
  pic p = { w, h, xmalloc((size_t)(w * h)) };
  if (photo.in && seed % 3 == 0 && w <= photo.w && h <= photo.h) {
    /* a crop of the photo, at an offset that depends on the seed */
    const int64_t ox = (int64_t)(seed * 7) % (photo.w - w + 1), oy = (int64_t)(seed * 13) % (photo.h - h + 1);
    for (int64_t y = 0; y < h; y++)
      memcpy(p.in + y * w, photo.in + (oy + y) * photo.w + ox, (size_t)w);
  } else {
    fill_random(p.in, (size_t)w, w, h, 1, seed);
  }
  return p;
}

typedef struct {
  int64_t rounds, searched, changed;
  int64_t reported; /* ht_context_last_rounds: what --metrics prints */
} counts;

/* Runs p on backend `backend` (threads for the CPU); output 0/1 bytes in
 * out, the counts of core/search/search.h. */
static ht_status run(const pic *m, const ht_params *p, ht_backend backend, uint8_t *out, counts *c, char *msg,
                     ht_variant *used)
{
  ht_context *ctx = ht_context_new();
  if (!ctx)
    exit(99);
  ht_context_set_backend(ctx, backend);
  ht_context_set_threads(ctx, backend == HT_BACKEND_CPU ? 4 : 0);
  ht_image I = { m->w, m->h, (size_t)m->w, 1, HT_FORMAT_U8, m->in };
  ht_image O = { m->w, m->h, (size_t)m->w, 1, HT_FORMAT_U8, out };
  const ht_status s = ht_run(ctx, &I, &O, p);
  if (msg)
    snprintf(msg, 256, "%s", ht_context_message(ctx));
  if (used)
    *used = ht_context_last_variant(ctx);
  c->reported = ht_context_last_rounds(ctx);
  ht_context_free(ctx);
  c->rounds = atomic_load(&ht_sx_last_rounds);
  c->searched = atomic_load(&ht_sx_last_searched);
  c->changed = atomic_load(&ht_sx_last_changed);
  for (int64_t i = 0; i < m->w * m->h; i++)
    out[i] = out[i] ? 1 : 0;
  return s;
}

static int compared;

/* One configuration on both backends. */
static void compare(const pic *m, const ht_params *p, const char *what)
{
  const size_t n = (size_t)(m->w * m->h);
  uint8_t *cpu = xmalloc(n), *gpu = xmalloc(n);
  memset(gpu, 0x55, n);
  counts cc, gc;
  char msg[256];
  ht_variant used;
  ht_status s = run(m, p, HT_BACKEND_CPU, cpu, &cc, msg, NULL);
  CHECK(s == HT_OK, "%s: cpu: %s", what, msg);
  s = run(m, p, HT_BACKEND_CUDA, gpu, &gc, msg, &used);
  CHECK(s == HT_OK, "%s: gpu: %s", what, msg);
  if (s == HT_OK) {
    CHECK(ht_variant_method(used) == (int)p->method && ht_variant_backend(used) == HT_BACKEND_CUDA,
          "%s: the GPU run used variant %s", what, ht_variant_name(used));
    size_t first = n;
    int64_t diff = 0;
    for (size_t i = 0; i < n; i++)
      if (cpu[i] != gpu[i]) {
        diff++;
        if (first == n)
          first = i;
      }
    CHECK(diff == 0, "%s: %lld of %zu pixels differ, the first at (%lld, %lld)", what, (long long)diff, n,
          (long long)(first % (size_t)m->w), (long long)(first / (size_t)m->w));
    CHECK(cc.rounds == gc.rounds && cc.searched == gc.searched && cc.changed == gc.changed,
          "%s: rounds, searched, changed: cpu %lld %lld %lld, gpu %lld %lld %lld", what, (long long)cc.rounds,
          (long long)cc.searched, (long long)cc.changed, (long long)gc.rounds, (long long)gc.searched,
          (long long)gc.changed);
    CHECK(cc.reported == cc.rounds && gc.reported == gc.rounds, "%s: rounds reported: cpu %lld of %lld, gpu %lld of %lld",
          what, (long long)cc.reported, (long long)cc.rounds, (long long)gc.reported, (long long)gc.rounds);
  }
  compared++;
  free(cpu);
  free(gpu);
}

static ht_params params(ht_method method, int m, double sigma, int radius, ht_search_init init, uint64_t seed,
                        int max_rounds)
{
  ht_params p;
  ht_params_init(&p);
  p.method = method;
  p.objective = HT_OBJECTIVE_LES; /* the GPU's (the filtered one runs on the CPU) */
  p.window = m;
  p.eye.sigma = sigma;
  p.eye.radius = radius;
  p.init = init;
  p.seed = seed;
  p.max_rounds = max_rounds;
  return p;
}

static const int64_t shapes[][2] = {
  { 1, 1 }, { 1, 9 }, { 9, 1 }, { 2, 2 }, { 13, 11 }, { 5, 17 }, { 24, 7 }, { 33, 31 }, { 1, 70 }, { 70, 1 },
  { 64, 37 }, { 37, 64 }, { 97, 3 }, { 3, 97 }, { 71, 53 },
};
#define NSHAPES (int)(sizeof shapes / sizeof shapes[0])

/* The eyes: (sigma, radius). */
static const struct {
  double sigma;
  int radius;
} eyes[] = { { 1.0, 3 }, { 0.7, 1 }, { 1.3, 2 }, { 2.0, 5 }, { 3.0, 7 } };

static void part_method(ht_method method)
{
  const char *name = method == HT_METHOD_LES ? "les" : method == HT_METHOD_PES ? "pes" : "dbs";
  int cfg = 0;
  for (int s = 0; s < NSHAPES; s++)
    for (int m = 1; m <= (method == HT_METHOD_DBS ? 1 : 5); m++) {
      /* windows of 5 x 5 cost 2^25 patterns (LES) or millions (PES)
       * each, on the CPU too: small images, small eyes */
      const int64_t area = shapes[s][0] * shapes[s][1];
      if (method != HT_METHOD_DBS && m == 5 && area > 100)
        continue;
      if (method == HT_METHOD_LES && m == 4 && area > 2500)
        continue;
      const int ne = method == HT_METHOD_DBS ? 5 : 2;
      for (int k = 0; k < ne; k++, cfg++) {
        const int e = (cfg + k) % 5;
        if (method != HT_METHOD_DBS && m >= 4 && eyes[e].radius > 3 && (m == 5 || area > 400))
          continue;
        const ht_search_init init = (cfg & 1) ? HT_INIT_RANDOM : HT_INIT_FLOYD_STEINBERG;
        const uint64_t seed = ((uint64_t)cfg * 0x9E3779B97F4A7C15ull + 5) & 0x7fffffff; /* the seed range: 0..2^31 - 1 */
        const int max_rounds = cfg % 7 == 3 ? 1 : cfg % 7 == 5 ? 2 : 0;
        pic im = make_pic(shapes[s][0], shapes[s][1], (uint64_t)cfg);
        const ht_params p = params(method, m, eyes[e].sigma, eyes[e].radius, init, seed, max_rounds);
        char what[160];
        snprintf(what, sizeof what, "%s %lldx%lld m=%d sigma=%g r=%d init=%s seed=%llu max_rounds=%d", name,
                 (long long)im.w, (long long)im.h, m, eyes[e].sigma, eyes[e].radius,
                 init == HT_INIT_RANDOM ? "random" : "fs", (unsigned long long)seed, max_rounds);
        compare(&im, &p, what);
        free(im.in);
      }
    }
  /* the paper's setting on the photo (m = 4 for LES, PES; sigma 1, r 3) */
  if (photo.in) {
    const int64_t w = method == HT_METHOD_LES ? 96 : photo.w, h = method == HT_METHOD_LES ? 64 : photo.h;
    pic im = make_pic(w, h, 3);
    for (int init = 0; init < 2; init++) {
      const ht_params p = params(method, 4, 1.0, 3, (ht_search_init)init, 11, 0);
      char what[96];
      snprintf(what, sizeof what, "%s photo %lldx%lld m=4 init=%s", name, (long long)w, (long long)h,
               init ? "fs" : "random");
      compare(&im, &p, what);
    }
    free(im.in);
  }
}

static int ticks;
static bool cancel_at_second(double fraction, void *user)
{
  (void)fraction;
  (void)user;
  return ++ticks < 2;
}

static void part_api(void)
{
  pic im = make_pic(200, 150, 4);
  const size_t n = (size_t)(im.w * im.h);
  uint8_t *out = xmalloc(n), *ref = xmalloc(n);
  counts c;
  char msg[256];
  ht_variant used;

  /* backend auto takes the GPU for a search method of this size (its
   * opening not counted: the cost model is not what is tested here) */
  setenv("HT_AUTO_GPU_OPEN_MS", "0", 1);
  ht_params p = params(HT_METHOD_LES, 4, 1.0, 3, HT_INIT_FLOYD_STEINBERG, 1, 0);
  CHECK(run(&im, &p, HT_BACKEND_AUTO, out, &c, msg, &used) == HT_OK, "auto: %s", msg);
  CHECK(used == HT_VARIANT_LES_GPU, "auto ran %s", ht_variant_name(used));
  CHECK(run(&im, &p, HT_BACKEND_CPU, ref, &c, msg, &used) == HT_OK, "cpu: %s", msg);
  CHECK(memcmp(out, ref, n) == 0, "auto's GPU result differs from the CPU's");
  /* the named variant */
  p.variant = HT_VARIANT_DBS_GPU;
  p.method = HT_METHOD_DBS;
  CHECK(run(&im, &p, HT_BACKEND_AUTO, out, &c, msg, &used) == HT_OK && used == HT_VARIANT_DBS_GPU,
        "variant dbs-gpu: %s", msg);
  p.variant = HT_VARIANT_AUTO;

  /* the raster schedule: refused on the GPU, the CPU under auto */
  p.schedule = HT_SCHEDULE_RASTER;
  CHECK(run(&im, &p, HT_BACKEND_CUDA, out, &c, msg, &used) == HT_ERR_UNSUPPORTED && strstr(msg, "raster"),
        "raster schedule on backend cuda: %s", msg);
  ht_context *ctx = ht_context_new();
  ht_context_set_threads(ctx, 1);
  ht_image I = { im.w, im.h, (size_t)im.w, 1, HT_FORMAT_U8, im.in };
  ht_image O = { im.w, im.h, (size_t)im.w, 1, HT_FORMAT_U8, out };
  CHECK(ht_run(ctx, &I, &O, &p) == HT_OK && ht_context_last_variant(ctx) == HT_VARIANT_DBS_CPU,
        "raster schedule under auto: %s, variant %s", ht_context_message(ctx),
        ht_variant_name(ht_context_last_variant(ctx)));
  ht_context_free(ctx);
  p.schedule = HT_SCHEDULE_PARALLEL;

  /* levels other than 2 */
  p.levels = 4;
  CHECK(run(&im, &p, HT_BACKEND_CUDA, out, &c, msg, &used) != HT_OK && strstr(msg, "dbs") && strstr(msg, "levels"),
        "levels 4: %s", msg);
  p.levels = 2;

  /* cancel: HT_ERR_CANCELLED, the output untouched */
  p.method = HT_METHOD_LES;
  p.window = 4;
  ctx = ht_context_new();
  ht_context_set_backend(ctx, HT_BACKEND_CUDA);
  ht_context_set_progress(ctx, cancel_at_second, NULL);
  memset(out, 0x77, n);
  ticks = 0;
  const ht_status s = ht_run(ctx, &I, &O, &p);
  CHECK(s == HT_ERR_CANCELLED, "cancel: status %d (%s)", (int)s, ht_context_message(ctx));
  bool untouched = true;
  for (size_t i = 0; i < n; i++)
    untouched = untouched && out[i] == 0x77;
  CHECK(untouched, "a cancelled GPU search wrote its output");
  ht_context_free(ctx);

  /* colour per channel: each plane its own seed stream, as on the CPU */
  {
    const int64_t w = 41, h = 29;
    uint8_t *rgb = xmalloc((size_t)(w * h * 3)), *o1 = xmalloc((size_t)(w * h * 3)), *o2 = xmalloc((size_t)(w * h * 3));
    fill_random(rgb, (size_t)(w * 3), w * 3, h, 1, 77);
    ht_params q = params(HT_METHOD_LES, 3, 1.0, 3, HT_INIT_RANDOM, 9, 0);
    q.color = HT_COLOR_PER_CHANNEL;
    ht_image Ic = { w, h, (size_t)(w * 3), 3, HT_FORMAT_U8, rgb };
    ht_image O1 = { w, h, (size_t)(w * 3), 3, HT_FORMAT_U8, o1 }, O2 = { w, h, (size_t)(w * 3), 3, HT_FORMAT_U8, o2 };
    ht_context *a = ht_context_new(), *b = ht_context_new();
    ht_context_set_backend(a, HT_BACKEND_CPU);
    ht_context_set_backend(b, HT_BACKEND_CUDA);
    const ht_status sa = ht_run(a, &Ic, &O1, &q), sb = ht_run(b, &Ic, &O2, &q);
    CHECK(sa == HT_OK && sb == HT_OK, "per channel: %s / %s", ht_context_message(a), ht_context_message(b));
    CHECK(sa != HT_OK || sb != HT_OK || memcmp(o1, o2, (size_t)(w * h * 3)) == 0, "per channel: GPU differs");
    ht_context_free(a);
    ht_context_free(b);
    free(rgb);
    free(o1);
    free(o2);
  }
  free(out);
  free(ref);
  free(im.in);
}

int main(int argc, char **argv)
{
  if (argc < 3) {
    fprintf(stderr, "usage: %s photo.pgm les|pes|dbs|api\n", argv[0]);
    return 99;
  }
  /* a GPU? */
  {
    ht_context *ctx = ht_context_new();
    ht_context_set_backend(ctx, HT_BACKEND_CUDA);
    uint8_t a[4] = { 10, 200, 30, 90 }, b[4];
    ht_image i = { 2, 2, 2, 1, HT_FORMAT_U8, a }, o = { 2, 2, 2, 1, HT_FORMAT_U8, b };
    ht_params p;
    ht_params_init(&p);
    p.method = HT_METHOD_DBS;
    p.objective = HT_OBJECTIVE_LES;
    const ht_status s = ht_run(ctx, &i, &o, &p);
    if (s == HT_ERR_NO_GPU) {
      printf("test-search-gpu: no usable GPU (%s): skipped\n", ht_context_message(ctx));
      ht_context_free(ctx);
      return SKIP;
    }
    ht_context_free(ctx);
  }
  photo.in = read_pgm(argv[1], &photo.w, &photo.h);
  const char *part = argv[2];
  if (!strcmp(part, "les"))
    part_method(HT_METHOD_LES);
  else if (!strcmp(part, "pes"))
    part_method(HT_METHOD_PES);
  else if (!strcmp(part, "dbs"))
    part_method(HT_METHOD_DBS);
  else if (!strcmp(part, "api"))
    part_api();
  else {
    fprintf(stderr, "unknown part %s\n", part);
    return 99;
  }
  free(photo.in);
  printf("test-search-gpu %s: %d configurations compared\n", part, compared);
  return test_finish("test-search-gpu");
}
