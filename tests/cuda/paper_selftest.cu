/* Self-test and timing of the paper's twelve GPU variants (Table V (2)-(4)),
 * standalone (no libhalftone): every variant against a CPU reference
 * that is core/diffusion/ed.c's loop written again over
 * core/shared/fixed.h, for built-in and random filters, 2..256 levels,
 * 8- and 16-bit input with padded pitches, and shapes from 1x1 to very
 * wide and very tall; then kernel times for Floyd-Steinberg on 1K..16K
 * squares, each also checked.
 *
 * Built and run by the cuda suite (test cuda-paper-selftest, --quick
 * --no-bench); by hand:
 *   nvcc -std=c++17 -O3 -arch=sm_90 tests/cuda/paper_selftest.cu \
 *        cuda/diffusion/paper_global.cu cuda/diffusion/paper_parallelogram.cu \
 *        -o paper_selftest
 *   ./paper_selftest [--quick] [--no-bench] [--no-exact] [--only VARIANT]... [--max-side N]
 * Exit status 0 when every comparison matched, 1 otherwise, 77 without a
 * GPU. */
#include "../../cuda/diffusion/paper.h"
#include "../../core/shared/fixed.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

static const char *const variant_names[HT_GPU_PAPER_COUNT] = {
  "3-D PED",        "2-D PED atomicAdd",        "2-D PED double",        "2-D PEC",
  "3-D PED perm",   "2-D PED atomicAdd perm",   "2-D PED double perm",   "2-D PEC perm",
  "PB 2-D PED",     "PB 2-D PED RC",            "PB 2-D PEC",            "PB 2-D PEC RC",
};

#define CHECK(call)                                                                       \
  do {                                                                                    \
    cudaError_t e_ = (call);                                                              \
    if (e_ != cudaSuccess) {                                                              \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      exit(1);                                                                            \
    }                                                                                     \
  } while (0)

/* ------------------------------------------------------------- filters */

struct test_filter {
  char name[32];
  ht_filter f;
};

struct tap { int dx, dy, num; };

/* reach and delay as core/filters.c ht_filter_derive computes them */
static void derive(ht_filter *f)
{
  int left = 0, right = 0, down = 0, delay = 1, row_left[4] = { 0, 0, 0, 0 };
  for (int i = 0; i < f->ntaps; i++) {
    const int dx = f->taps[i].dx, dy = f->taps[i].dy;
    left = std::max(left, -dx);
    right = std::max(right, dx);
    down = std::max(down, dy);
    if (dy > 0)
      row_left[dy] = std::max(row_left[dy], -dx);
  }
  for (int dy = 1; dy <= down; dy++)
    delay = std::max(delay, (row_left[dy] + 1 + dy - 1) / dy);
  f->reach_left = left;
  f->reach_right = right;
  f->reach_down = down;
  f->delay = delay;
}

static test_filter make_filter(const char *name, const tap *taps, int n, int den)
{
  test_filter t;
  memset(&t, 0, sizeof t);
  snprintf(t.name, sizeof t.name, "%s", name);
  t.f.id = HT_FILTER_CUSTOM;
  snprintf(t.f.name, sizeof t.f.name, "%.31s", name);
  t.f.den = den;
  t.f.ntaps = n;
  int sum = 0;
  for (int i = 0; i < n; i++) {
    t.f.taps[i].dx = (int8_t)taps[i].dx;
    t.f.taps[i].dy = (int8_t)taps[i].dy;
    t.f.taps[i].num = taps[i].num;
    t.f.taps[i].q = HT_Q(taps[i].num, den);
    sum += t.f.taps[i].q;
  }
  /* keep the weights' sum at most 1 (the library corrects its rounding
   * the same way; any q is fine for exactness) */
  while (sum > HT_Q_ONE) {
    int best = 0;
    for (int i = 1; i < n; i++)
      if (t.f.taps[i].q > t.f.taps[best].q)
        best = i;
    t.f.taps[best].q--;
    sum--;
  }
  derive(&t.f);
  return t;
}

/* the tables of core/filters.c */
static std::vector<test_filter> builtin_filters()
{
  std::vector<test_filter> v;
  const tap fs[] = { { 1, 0, 7 }, { -1, 1, 3 }, { 0, 1, 5 }, { 1, 1, 1 } };
  const tap jjn[] = { { 1, 0, 7 }, { 2, 0, 5 }, { -2, 1, 3 }, { -1, 1, 5 }, { 0, 1, 7 }, { 1, 1, 5 },
                      { 2, 1, 3 }, { -2, 2, 1 }, { -1, 2, 3 }, { 0, 2, 5 }, { 1, 2, 3 }, { 2, 2, 1 } };
  const tap stucki[] = { { 1, 0, 8 }, { 2, 0, 4 }, { -2, 1, 2 }, { -1, 1, 4 }, { 0, 1, 8 }, { 1, 1, 4 },
                         { 2, 1, 2 }, { -2, 2, 1 }, { -1, 2, 2 }, { 0, 2, 4 }, { 1, 2, 2 }, { 2, 2, 1 } };
  const tap burkes[] = { { 1, 0, 8 }, { 2, 0, 4 }, { -2, 1, 2 }, { -1, 1, 4 }, { 0, 1, 8 }, { 1, 1, 4 }, { 2, 1, 2 } };
  const tap sierra3[] = { { 1, 0, 5 }, { 2, 0, 3 }, { -2, 1, 2 }, { -1, 1, 4 }, { 0, 1, 5 },
                          { 1, 1, 4 }, { 2, 1, 2 }, { -1, 2, 2 }, { 0, 2, 3 }, { 1, 2, 2 } };
  const tap sierra2[] = { { 1, 0, 4 }, { 2, 0, 3 }, { -2, 1, 1 }, { -1, 1, 2 }, { 0, 1, 3 }, { 1, 1, 2 }, { 2, 1, 1 } };
  const tap lite[] = { { 1, 0, 2 }, { -1, 1, 1 }, { 0, 1, 1 } };
  const tap atkinson[] = { { 1, 0, 1 }, { 2, 0, 1 }, { -1, 1, 1 }, { 0, 1, 1 }, { 1, 1, 1 }, { 0, 2, 1 } };
  v.push_back(make_filter("floyd-steinberg", fs, 4, 16));
  v.push_back(make_filter("jarvis-judice-ninke", jjn, 12, 48));
  v.push_back(make_filter("stucki", stucki, 12, 42));
  v.push_back(make_filter("burkes", burkes, 7, 32));
  v.push_back(make_filter("sierra-3", sierra3, 10, 32));
  v.push_back(make_filter("sierra-2", sierra2, 7, 16));
  v.push_back(make_filter("sierra-lite", lite, 3, 4));
  v.push_back(make_filter("atkinson", atkinson, 6, 8));
  return v;
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(void)
{
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (uint32_t)(rng_state >> 16);
}

/* every position of the largest filter: 4 right on the current row, 9
 * columns on each of 3 rows below (31 taps) */
static test_filter full_filter(void)
{
  tap t[32];
  int n = 0, den = 0;
  for (int dx = 1; dx <= 4; dx++) {
    t[n++] = { dx, 0, (int)(rnd() % 9) + 1 };
  }
  for (int dy = 1; dy <= 3; dy++)
    for (int dx = -4; dx <= 4; dx++)
      t[n++] = { dx, dy, (int)(rnd() % 9) + 1 };
  for (int i = 0; i < n; i++)
    den += t[i].num;
  return make_filter("full-31", t, n, den);
}

static test_filter random_filter(int idx)
{
  tap t[32];
  int n = 0, den = 0;
  bool used[4][9] = {};
  int want = 1 + (int)(rnd() % 10);
  /* at least one tap; positions drawn from the whole allowed area, and
   * sometimes from a narrow one (small reach, delay 1) */
  bool narrow = idx % 3 == 2;
  for (int tries = 0; n < want && tries < 200; tries++) {
    int dy = (int)(rnd() % 4), dx;
    if (narrow)
      dy = (int)(rnd() % 2);
    if (dy == 0)
      dx = 1 + (int)(rnd() % 4);
    else
      dx = narrow ? (int)(rnd() % 3) : (int)(rnd() % 9) - 4;
    if (used[dy][dx + 4])
      continue;
    used[dy][dx + 4] = true;
    t[n++] = { dx, dy, 1 + (int)(rnd() % 9) };
  }
  for (int i = 0; i < n; i++)
    den += t[i].num;
  den += (int)(rnd() % (den / 3 + 1)); /* some filters lose tone */
  char name[32];
  snprintf(name, sizeof name, "random-%d", idx);
  return make_filter(name, t, n, den);
}

/* ------------------------------------------------------------ reference */

/* core/diffusion/ed.c (raster scan) over HT_FX input */
static void reference(const int32_t *in, int W, int H, const ht_filter *f, int levels,
                      uint8_t *out)
{
  const int nrows = f->reach_down + 1;
  std::vector<int32_t> err((size_t)nrows * W, 0);
  for (int y = 0; y < H; y++) {
    int32_t *cur = &err[(size_t)(y % nrows) * W];
    for (int x = 0; x < W; x++) {
      int32_t v = in[(size_t)y * W + x] + cur[x];
      int32_t q = levels == 2 ? ht_fx_binary(v) : ht_fx_quantize(v, levels);
      int32_t e = v - ht_fx_level(q, levels);
      out[(size_t)y * W + x] = (uint8_t)q;
      for (int t = 0; t < f->ntaps; t++) {
        int tx = x + f->taps[t].dx, ty = y + f->taps[t].dy;
        if (tx < 0 || tx >= W || ty >= H)
          continue;
        err[(size_t)(ty % nrows) * W + tx] += ht_fx_term(e, f->taps[t].q);
      }
    }
    memset(cur, 0, (size_t)W * sizeof *cur);
  }
}

/* --------------------------------------------------------------- images */

struct image {
  int W, H, bits;
  size_t pitch;             /* bytes */
  std::vector<uint8_t> raw; /* as the GPU gets it */
  std::vector<int32_t> fx;  /* HT_FX values for the reference */
};

static image make_image(int W, int H, int bits, int kind)
{
  image im;
  im.W = W;
  im.H = H;
  im.bits = bits;
  im.pitch = (size_t)W * (size_t)(bits / 8) + (bits == 8 ? 5 : 6);
  im.raw.assign(im.pitch * (size_t)H, 0xA5);
  im.fx.resize((size_t)W * H);
  const int maxv = bits == 8 ? 255 : 65535;
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      int v;
      switch (kind % 4) {
      case 0: v = (int)(rnd() % (uint32_t)(maxv + 1)); break;
      case 1: v = (int)((int64_t)maxv * (x + y) / std::max(1, W + H - 2)); break;
      case 2: v = maxv / 2 + (int)(rnd() % 3) - 1; break; /* near the threshold */
      default: v = (rnd() & 1) ? maxv : 0; break;
      }
      uint8_t *row = &im.raw[(size_t)y * im.pitch];
      if (bits == 8) {
        row[x] = (uint8_t)v;
        im.fx[(size_t)y * W + x] = ht_fx_from_u8((uint8_t)v);
      } else {
        uint16_t s = (uint16_t)v;
        memcpy(row + 2 * x, &s, 2);
        im.fx[(size_t)y * W + x] = v;
      }
    }
  return im;
}

/* Runs variant v; returns the number of wrong pixels (or -1 on a CUDA
 * error), checking that the output's padding was not touched. */
static long run_and_compare(ht_gpu_paper_variant v, const image &im, const ht_filter *f, int levels,
                            const uint8_t *ref, const void *d_in, unsigned char *d_out,
                            size_t out_pitch, std::vector<uint8_t> &host_out, cudaStream_t st,
                            char *where, size_t where_size)
{
  const int W = im.W, H = im.H;
  CHECK(cudaMemsetAsync(d_out, 0xEE, out_pitch * (size_t)H, st));
  cudaError_t err = ht_gpu_paper_run(v, d_in, im.bits, im.pitch, d_out, out_pitch, W, H, f, levels, st);
  if (err != cudaSuccess) {
    snprintf(where, where_size, "CUDA error %s", cudaGetErrorString(err));
    return -1;
  }
  host_out.resize(out_pitch * (size_t)H);
  CHECK(cudaMemcpy(host_out.data(), d_out, out_pitch * (size_t)H, cudaMemcpyDeviceToHost));
  long bad = 0;
  for (int y = 0; y < H; y++) {
    const uint8_t *o = &host_out[(size_t)y * out_pitch];
    for (int x = 0; x < W; x++)
      if (o[x] != ref[(size_t)y * W + x]) {
        if (!bad)
          snprintf(where, where_size, "first at (x %d, y %d): got %d, want %d", x, y, o[x],
                   ref[(size_t)y * W + x]);
        bad++;
      }
    for (size_t x = (size_t)W; x < out_pitch; x++)
      if (o[x] != 0xEE) {
        if (!bad)
          snprintf(where, where_size, "padding written at (x %zu, y %d)", x, y);
        bad++;
      }
  }
  return bad;
}

/* ----------------------------------------------------------------- main */

int main(int argc, char **argv)
{
  bool quick = false, bench = true, exact = true;
  unsigned only = 0; /* variants to time; 0: all */
  int max_side = 16384;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--quick"))
      quick = true;
    else if (!strcmp(argv[i], "--no-bench"))
      bench = false;
    else if (!strcmp(argv[i], "--no-exact"))
      exact = false;
    else if (!strcmp(argv[i], "--only") && i + 1 < argc && atoi(argv[i + 1]) >= 0 &&
             atoi(argv[i + 1]) < HT_GPU_PAPER_COUNT)
      only |= 1u << atoi(argv[++i]);
    else if (!strcmp(argv[i], "--max-side") && i + 1 < argc)
      max_side = atoi(argv[++i]);
    else {
      fprintf(stderr, "usage: %s [--quick] [--no-bench] [--no-exact] [--only VARIANT]... [--max-side N]\n", argv[0]);
      return 2;
    }
  }
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    printf("SKIP: no CUDA device\n");
    return 77;
  }
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  printf("device: %s\n", prop.name);
  /* keep freed scratch in the stream-ordered pool between runs, so that
   * timings measure the algorithms rather than the driver's page mapping */
  cudaMemPool_t pool;
  CHECK(cudaDeviceGetDefaultMemPool(&pool, 0));
  uint64_t keep = UINT64_MAX;
  CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
  cudaStream_t st;
  CHECK(cudaStreamCreate(&st));

  long failures = 0, runs = 0, per_variant_fail[HT_GPU_PAPER_COUNT] = {};
  int printed = 0;

  /* --- bad arguments: an error code, never a crash --- */
  {
    std::vector<test_filter> fl = builtin_filters();
    ht_filter f = fl[0].f;
    void *din;
    unsigned char *dout;
    CHECK(cudaMalloc(&din, 64));
    CHECK(cudaMalloc((void **)&dout, 64));
    struct { const char *what; int v, bits, w, h, levels, ntaps, dx0, dy0; } bad[] = {
      { "variant out of range", HT_GPU_PAPER_COUNT, 8, 4, 4, 2, 4, 1, 0 },
      { "zero width", 0, 8, 0, 4, 2, 4, 1, 0 },
      { "negative height", 10, 8, 4, -1, 2, 4, 1, 0 },
      { "12-bit input", 0, 12, 4, 4, 2, 4, 1, 0 },
      { "1 level", 8, 8, 4, 4, 1, 4, 1, 0 },
      { "257 levels", 11, 8, 4, 4, 257, 4, 1, 0 },
      { "no taps", 3, 8, 4, 4, 2, 0, 1, 0 },
      { "tap on the current pixel", 9, 8, 4, 4, 2, 4, 0, 0 },
      { "tap 5 rows down", 2, 8, 4, 4, 2, 4, 1, 5 },
    };
    for (auto &b : bad) {
      ht_filter g = f;
      g.ntaps = b.ntaps;
      g.taps[0].dx = (int8_t)b.dx0;
      g.taps[0].dy = (int8_t)b.dy0;
      cudaError_t e = ht_gpu_paper_run((ht_gpu_paper_variant)b.v, din, b.bits, 16, dout, 16, b.w,
                                       b.h, &g, b.levels, st);
      runs++;
      if (e != cudaErrorInvalidValue) {
        printf("FAIL bad argument (%s): got %s\n", b.what, cudaGetErrorString(e));
        failures++;
      }
    }
    cudaError_t e = ht_gpu_paper_run(HT_GPU_PAPER_2D_PEC, din, 8, 16, dout, 16, 4, 4, NULL, 2, st);
    runs++;
    if (e != cudaErrorInvalidValue) {
      printf("FAIL bad argument (no filter): got %s\n", cudaGetErrorString(e));
      failures++;
    }
    CHECK(cudaFree(din));
    CHECK(cudaFree(dout));
  }

  /* --- exactness: filters x shapes x levels x bits --- */
  if (exact) {
    std::vector<test_filter> filters = builtin_filters();
    filters.push_back(full_filter());
    for (int i = 0; i < (quick ? 3 : 7); i++)
      filters.push_back(random_filter(i));
    /* a filter with only a current-row tap: no row depends on another */
    {
      const tap one[] = { { 1, 0, 1 } };
      filters.push_back(make_filter("row-only", one, 1, 2));
    }
    const int shapes[][2] = { { 1, 1 },   { 1, 37 },   { 37, 1 },  { 2, 2 },     { 31, 17 },
                              { 33, 65 }, { 67, 3 },   { 3, 67 },  { 101, 97 },  { 257, 129 },
                              { 64, 64 }, { 1031, 7 }, { 7, 1031 }, { 130, 300 }, { 4099, 2 } };
    const int level_list[] = { 2, 3, 4, 7, 16, 100, 255, 256 };
    const int nshapes = (int)(sizeof shapes / sizeof shapes[0]);
    int combo = 0;
    for (int si = 0; si < nshapes; si++) {
      if (quick && si % 2)
        continue;
      const int W = shapes[si][0], H = shapes[si][1];
      for (size_t fi = 0; fi < filters.size(); fi++, combo++) {
        const int bits = (combo % 3 == 2) ? 16 : 8;
        const int levels = (fi == 0 && si % 2 == 0) ? 2 : level_list[combo % 8];
        image im = make_image(W, H, bits, combo);
        const ht_filter f = filters[fi].f;
        std::vector<uint8_t> ref((size_t)W * H);
        reference(im.fx.data(), W, H, &f, levels, ref.data());
        void *d_in;
        unsigned char *d_out;
        const size_t out_pitch = (size_t)W + 7;
        CHECK(cudaMalloc(&d_in, im.raw.size()));
        CHECK(cudaMalloc((void **)&d_out, out_pitch * (size_t)H));
        CHECK(cudaMemcpy(d_in, im.raw.data(), im.raw.size(), cudaMemcpyHostToDevice));
        std::vector<uint8_t> host_out;
        for (int v = 0; v < HT_GPU_PAPER_COUNT; v++) {
          char where[160] = "";
          long bad = run_and_compare((ht_gpu_paper_variant)v, im, &f, levels, ref.data(), d_in, d_out,
                                     out_pitch, host_out, st, where, sizeof where);
          runs++;
          if (bad) {
            failures++;
            per_variant_fail[v]++;
            if (printed++ < 40)
              printf("FAIL %-24s %-20s L=%-3d %dx%d %d-bit: %ld wrong, %s\n", variant_names[v],
                     filters[fi].name, levels, W, H, bits, bad, where);
          }
        }
        CHECK(cudaFree(d_in));
        CHECK(cudaFree(d_out));
      }
    }
    /* --- larger and extreme shapes, fewer filters; and a delay above the
     * derived one (f->delay is honoured: slower, still exact) --- */
    {
      std::vector<test_filter> fl = builtin_filters();
      test_filter slow = fl[0];
      snprintf(slow.name, sizeof slow.name, "fs-delay-5");
      slow.f.delay = 5;
      const test_filter *pick[] = { &fl[0], &fl[1], &filters[8], &slow };
      const int big[][2] = { { 70001, 3 }, { 3, 20011 }, { 1, 50000 }, { 50000, 1 }, { 1500, 1001 } };
      int idx = 0;
      for (auto &sh : big)
        for (const test_filter *tf : pick) {
          if (quick && idx % 3)
            continue;
          const int W = sh[0], H = sh[1], bits = idx % 2 ? 16 : 8, levels = idx % 3 ? 2 : 5;
          idx++;
          image im = make_image(W, H, bits, idx);
          const ht_filter f = tf->f;
          std::vector<uint8_t> ref((size_t)W * H);
          reference(im.fx.data(), W, H, &f, levels, ref.data());
          void *d_in;
          unsigned char *d_out;
          const size_t out_pitch = (size_t)W + 3;
          CHECK(cudaMalloc(&d_in, im.raw.size()));
          CHECK(cudaMalloc((void **)&d_out, out_pitch * (size_t)H));
          CHECK(cudaMemcpy(d_in, im.raw.data(), im.raw.size(), cudaMemcpyHostToDevice));
          std::vector<uint8_t> host_out;
          for (int v = 0; v < HT_GPU_PAPER_COUNT; v++) {
            char where[160] = "";
            long bad = run_and_compare((ht_gpu_paper_variant)v, im, &f, levels, ref.data(), d_in, d_out,
                                       out_pitch, host_out, st, where, sizeof where);
            runs++;
            if (bad) {
              failures++;
              per_variant_fail[v]++;
              if (printed++ < 40)
                printf("FAIL %-24s %-20s L=%-3d %dx%d %d-bit: %ld wrong, %s\n", variant_names[v],
                       tf->name, levels, W, H, bits, bad, where);
            }
          }
          CHECK(cudaFree(d_in));
          CHECK(cudaFree(d_out));
        }
    }
    printf("exactness: %ld runs, %ld failed\n", runs, failures);
    for (int v = 0; v < HT_GPU_PAPER_COUNT; v++)
      printf("  %-24s %s (%ld failed)\n", variant_names[v], per_variant_fail[v] ? "FAIL" : "PASS",
             per_variant_fail[v]);

  }

  /* --- timing (Table V rows), Floyd-Steinberg, binary, 8-bit --- */
  if (bench) {
    const int sides[] = { 1024, 2048, 4096, 8192, 16384 };
    printf("\ntimes in ms, Floyd-Steinberg, 2 levels, 8-bit square images, one call of\n"
           "ht_gpu_paper_run (scratch from a warm pool, synchronised), median of 3\n");
    printf("%-24s", "variant");
    for (int s : sides)
      if (s <= max_side)
        printf(" %9dK", s / 1024);
    printf("\n");
    std::vector<test_filter> fl = builtin_filters();
    const ht_filter f = fl[0].f;
    double times[HT_GPU_PAPER_COUNT][5] = {};
    bool ok[HT_GPU_PAPER_COUNT][5] = {};
    for (int s = 0; s < 5; s++) {
      const int N = sides[s];
      if (N > max_side)
        continue;
      image im;
      im.W = im.H = N;
      im.bits = 8;
      im.pitch = (size_t)N;
      im.raw.resize((size_t)N * N);
      im.fx.resize((size_t)N * N);
      for (size_t p = 0; p < (size_t)N * N; p++) {
        size_t x = p % N, y = p / N;
        /* a smooth ramp with some texture, as photographs have */
        uint8_t v = (uint8_t)((x * 255 / N + y * 64 / N + (rnd() % 9)) % 256);
        im.raw[p] = v;
        im.fx[p] = ht_fx_from_u8(v);
      }
      std::vector<uint8_t> ref((size_t)N * N);
      reference(im.fx.data(), N, N, &f, 2, ref.data());
      void *d_in;
      unsigned char *d_out;
      CHECK(cudaMalloc(&d_in, im.raw.size()));
      CHECK(cudaMalloc((void **)&d_out, (size_t)N * N));
      CHECK(cudaMemcpy(d_in, im.raw.data(), im.raw.size(), cudaMemcpyHostToDevice));
      std::vector<uint8_t> host_out;
      cudaEvent_t e0, e1;
      CHECK(cudaEventCreate(&e0));
      CHECK(cudaEventCreate(&e1));
      for (int v = 0; v < HT_GPU_PAPER_COUNT; v++) {
        if (only && !(only >> v & 1u))
          continue;
        char where[160] = "";
        /* the first run warms the pool and is checked */
        long bad = run_and_compare((ht_gpu_paper_variant)v, im, &f, 2, ref.data(), d_in, d_out,
                                   (size_t)N, host_out, st, where, sizeof where);
        runs++;
        ok[v][s] = bad == 0;
        if (bad) {
          failures++;
          printf("FAIL %s %dx%d: %ld wrong, %s\n", variant_names[v], N, N, bad, where);
          continue;
        }
        double t[3];
        for (int rep = 0; rep < 3; rep++) {
          CHECK(cudaEventRecord(e0, st));
          CHECK(ht_gpu_paper_run((ht_gpu_paper_variant)v, d_in, 8, (size_t)N, d_out, (size_t)N, N, N,
                                 &f, 2, st));
          CHECK(cudaEventRecord(e1, st));
          CHECK(cudaEventSynchronize(e1));
          float ms;
          CHECK(cudaEventElapsedTime(&ms, e0, e1));
          t[rep] = ms;
        }
        std::sort(t, t + 3);
        times[v][s] = t[1];
      }
      CHECK(cudaEventDestroy(e0));
      CHECK(cudaEventDestroy(e1));
      CHECK(cudaFree(d_in));
      CHECK(cudaFree(d_out));
    }
    for (int v = 0; v < HT_GPU_PAPER_COUNT; v++) {
      if (only && !(only >> v & 1u))
        continue;
      printf("%-24s", variant_names[v]);
      for (int s = 0; s < 5; s++)
        if (sides[s] <= max_side) {
          if (ok[v][s])
            printf(" %10.3f", times[v][s]);
          else
            printf(" %10s", "FAIL");
        }
      printf("\n");
    }
  }
  /* --- one generic filter for comparison: Jarvis-Judice-Ninke, 4K --- */
  if (bench && max_side >= 4096) {
    const int N = 4096;
    std::vector<test_filter> fl = builtin_filters();
    const ht_filter f = fl[1].f;
    image im = make_image(N, N, 8, 1);
    std::vector<uint8_t> ref((size_t)N * N);
    reference(im.fx.data(), N, N, &f, 2, ref.data());
    void *d_in;
    unsigned char *d_out;
    CHECK(cudaMalloc(&d_in, im.raw.size()));
    CHECK(cudaMalloc((void **)&d_out, (size_t)N * N));
    CHECK(cudaMemcpy(d_in, im.raw.data(), im.raw.size(), cudaMemcpyHostToDevice));
    std::vector<uint8_t> host_out;
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    printf("\nJarvis-Judice-Ninke, 2 levels, 4096x4096 (same method), ms:\n");
    for (int v = 0; v < HT_GPU_PAPER_COUNT; v++) {
      if (only && !(only >> v & 1u))
        continue;
      char where[160] = "";
      long bad = run_and_compare((ht_gpu_paper_variant)v, im, &f, 2, ref.data(), d_in, d_out, (size_t)N,
                                 host_out, st, where, sizeof where);
      runs++;
      if (bad) {
        failures++;
        printf("  %-24s FAIL: %ld wrong, %s\n", variant_names[v], bad, where);
        continue;
      }
      double t[3];
      for (int rep = 0; rep < 3; rep++) {
        CHECK(cudaEventRecord(e0, st));
        CHECK(ht_gpu_paper_run((ht_gpu_paper_variant)v, d_in, 8, (size_t)N, d_out, (size_t)N, N, N, &f, 2,
                               st));
        CHECK(cudaEventRecord(e1, st));
        CHECK(cudaEventSynchronize(e1));
        float ms;
        CHECK(cudaEventElapsedTime(&ms, e0, e1));
        t[rep] = ms;
      }
      std::sort(t, t + 3);
      printf("  %-24s %10.3f\n", variant_names[v], t[1]);
    }
    CHECK(cudaEventDestroy(e0));
    CHECK(cudaEventDestroy(e1));
    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
  }
  CHECK(cudaStreamDestroy(st));
  printf("\n%s: %ld runs, %ld failed\n", failures ? "FAIL" : "PASS", runs, failures);
  return failures ? 1 : 0;
}
