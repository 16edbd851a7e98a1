/* Every GPU variant of error diffusion the library lists (HT_LIST_VARIANTS)
 * against the CPU reference (core/diffusion/ed.c, variant ed), bit for bit,
 * with every built-in filter (HT_LIST_FILTERS). Exits 77 when no GPU is
 * usable.
 *   test-gpu PHOTO.pgm PART
 * PART: variants | filters | shapes | paths | stripes | errors | carry */
#include "ht-test.h"

static ht_context *cpu_ctx, *gpu_ctx;
static int runs;

static const char *const custom_wide = "- - - - * 5 3 1; 1 1 2 3 4 3 2 1 1; 0 0 0 1 2 1; 0 0 0 0 1 / 40";
static const char *const custom_tall = "- * 3; 2 4 2; 1 2 1; 0 1 / 20";
/* one row down but 2 columns left: gpu-fast's box is 2 rows deep */
static const char *const custom_wide1 = "- - * 4 2; 1 2 3 2 1 / 15";
/* the current row only: no rows to carry */
static const char *const custom_row = "- * 1 / 2";

static size_t row_bytes(ht_format f, int64_t w, int ch) { return ht_format_row_bytes(f, w, ch); }

typedef struct {
  ht_image im;
  uint8_t *mem;
} img;

static img make(int64_t w, int64_t h, int ch, ht_format f, size_t pad)
{
  img r;
  r.im.width = w;
  r.im.height = h;
  r.im.channels = ch;
  r.im.format = f;
  /* odd paddings test the row addressing; 16-bit and float rows still
   * start on whole samples, as halftone.h requires */
  const size_t sample = f == HT_FORMAT_U16 ? 2 : f == HT_FORMAT_F32 ? 4 : 1;
  r.im.stride = row_bytes(f, w, ch) + (pad + sample - 1) / sample * sample;
  r.mem = xmalloc(r.im.stride * (size_t)h);
  memset(r.mem, 0xA5, r.im.stride * (size_t)h);
  r.im.data = r.mem;
  return r;
}

/* Runs `p` on the CPU (variant ed) and on the GPU (variant v) and compares
 * every output byte of every row. */
static void compare(const char *what, const img *in, ht_format of, int och, const ht_params *p0, ht_variant v)
{
  ht_params p = *p0;
  img a = make(in->im.width, in->im.height, och, of, 3), b = make(in->im.width, in->im.height, och, of, 5);
  p.variant = HT_VARIANT_ED;
  ht_status s = ht_run(cpu_ctx, &in->im, &a.im, &p);
  CHECK(s == HT_OK, "%s: cpu: %s", what, ht_context_message(cpu_ctx));
  p.variant = v;
  s = ht_run(gpu_ctx, &in->im, &b.im, &p);
  runs++;
  CHECK(s == HT_OK, "%s [%s]: gpu: %s", what, ht_variant_name(v), ht_context_message(gpu_ctx));
  if (s == HT_OK) {
    CHECK(ht_context_last_backend(gpu_ctx) == HT_BACKEND_CUDA, "%s: did not run on the GPU", what);
    size_t rb = row_bytes(of, in->im.width, och);
    for (int64_t y = 0; y < in->im.height; y++) {
      const uint8_t *ra = a.mem + (size_t)y * a.im.stride, *rbp = b.mem + (size_t)y * b.im.stride;
      if (memcmp(ra, rbp, rb) != 0) {
        size_t x = 0;
        while (ra[x] == rbp[x])
          x++;
        CHECK(0, "%s [%s, %lldx%lld, %d levels, %s]: first difference at row %lld byte %zu (cpu %d, gpu %d)", what,
              ht_variant_name(v), (long long)in->im.width, (long long)in->im.height, p.levels, p.filter.name,
              (long long)y, x, ra[x], rbp[x]);
        break;
      }
    }
  }
  free(a.mem);
  free(b.mem);
}

static img random_img(int64_t w, int64_t h, int ch, ht_format f, uint64_t seed)
{
  img r = make(w, h, ch, f, 7);
  if (f == HT_FORMAT_F32) {
    uint64_t s = seed + 11;
    for (int64_t y = 0; y < h; y++)
      for (int64_t i = 0; i < w * ch; i++)
        ((float *)(void *)(r.mem + (size_t)y * r.im.stride))[i] = (float)(rng_next(&s) >> 40) / (float)(1 << 24);
  } else {
    fill_random(r.mem, r.im.stride, w * ch, h, f == HT_FORMAT_U8 ? 1 : 2, seed);
  }
  return r;
}

static ht_filter filter_of(const char *spec)
{
  ht_filter f;
  const ht_filter *b = ht_filter_by_name(spec);
  if (b)
    return *b;
  char err[256];
  if (ht_filter_parse(spec, &f, err, sizeof err) != HT_OK) {
    fprintf(stderr, "bad test filter %s: %s\n", spec, err);
    exit(99);
  }
  return f;
}

/* The GPU implementations of error diffusion, from the library's list. */
static ht_variant gpu_variants[TEST_MAX_VARIANTS];
static int ngpu;

static void find_variants(void)
{
  ngpu = test_variants(HT_METHOD_ERROR_DIFFUSION, HT_BACKEND_CUDA, gpu_variants, TEST_MAX_VARIANTS);
  CHECK(ngpu > 0 && ngpu <= TEST_MAX_VARIANTS, "%d GPU variants of error diffusion listed", ngpu);
  if (ngpu > TEST_MAX_VARIANTS)
    ngpu = TEST_MAX_VARIANTS;
}

static void part_variants(const img *photo)
{
  ht_params p;
  ht_params_init(&p);
  for (int vi = 0; vi < ngpu; vi++) {
    const ht_variant v = gpu_variants[vi];
    compare("photo", photo, HT_FORMAT_U8, 1, &p, v);
    img r = random_img(320, 200, 1, HT_FORMAT_U8, (uint64_t)v);
    compare("random 320x200", &r, HT_FORMAT_U8, 1, &p, v);
    free(r.mem);
  }
}

static void part_filters(const img *photo)
{
  const int levels[] = { 2, 3, 16 };
  ht_params p;
  ht_params_init(&p);
  img r = random_img(97, 61, 1, HT_FORMAT_U8, 3);
  static const char *const customs[] = { custom_wide, custom_tall };
  for (int vi = 0; vi < ngpu; vi++)
    for (int fi = 0; fi < test_nfilters(2); fi++) {
      const ht_variant v = gpu_variants[vi];
      p.filter = test_filter_at(fi, customs);
      for (int li = 0; li < 3; li++) {
        p.levels = levels[li];
        compare("filters, random", &r, HT_FORMAT_U8, 1, &p, v);
        if (v == HT_VARIANT_GPU_FAST)
          compare("filters, photo", photo, HT_FORMAT_U8, 1, &p, v);
      }
    }
  free(r.mem);
}

static void part_shapes(void)
{
  static const int64_t shapes[][2] = { { 1, 1 }, { 1, 300 }, { 300, 1 }, { 2, 3 }, { 31, 33 }, { 97, 89 },
                                       { 251, 241 }, { 33, 70 }, { 1000, 37 }, { 16384, 16 }, { 16, 16384 } };
  ht_params p;
  ht_params_init(&p);
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
    img r = random_img(shapes[i][0], shapes[i][1], 1, HT_FORMAT_U8, 100 + i);
    for (int vi = 0; vi < ngpu; vi++) {
      const ht_variant v = gpu_variants[vi];
      p.filter = filter_of("floyd-steinberg");
      p.levels = 2;
      compare("shapes", &r, HT_FORMAT_U8, 1, &p, v);
      if (v == HT_VARIANT_GPU_FAST || v == HT_VARIANT_GPU_PB_PEC_RC) {
        p.filter = filter_of("jarvis-judice-ninke");
        p.levels = 3;
        compare("shapes", &r, HT_FORMAT_U8, 1, &p, v);
        p.filter = filter_of(custom_wide);
        p.levels = 2;
        compare("shapes", &r, HT_FORMAT_U8, 1, &p, v);
      }
    }
    free(r.mem);
  }
}

/* The pipeline's input and output paths (gpu-fast and one paper variant). */
static void part_paths(void)
{
  ht_params p;
  ht_params_init(&p);
  const ht_variant vs[] = { HT_VARIANT_GPU_FAST, HT_VARIANT_GPU_PB_PEC };
  for (int k = 0; k < 2; k++) {
    ht_variant v = vs[k];
    for (int fi = 0; fi < 3; fi++) {
      p.filter = filter_of(fi == 0 ? "floyd-steinberg" : fi == 1 ? "stucki" : "atkinson");
      p.levels = 2;
      p.color = HT_COLOR_LUMA;
      p.alpha = false;
      img a = random_img(203, 117, 1, HT_FORMAT_U16, 21);
      compare("16-bit in", &a, HT_FORMAT_U8, 1, &p, v);
      compare("16-bit in, 16-bit out (store path)", &a, HT_FORMAT_U16, 1, &p, v);
      compare("16-bit in, packed bits out", &a, HT_FORMAT_BIT1, 1, &p, v);
      free(a.mem);
      img b = random_img(203, 117, 1, HT_FORMAT_F32, 22);
      compare("float in (load path)", &b, HT_FORMAT_U8, 1, &p, v);
      free(b.mem);
      img c = random_img(77, 59, 3, HT_FORMAT_U8, 23);
      compare("RGB luma (load path)", &c, HT_FORMAT_U8, 1, &p, v);
      compare("RGB luma, packed bits", &c, HT_FORMAT_BIT1, 1, &p, v);
      p.color = HT_COLOR_PER_CHANNEL;
      compare("RGB per channel", &c, HT_FORMAT_U8, 3, &p, v);
      free(c.mem);
      img d = random_img(61, 47, 4, HT_FORMAT_U8, 24);
      p.alpha = true;
      compare("RGBA per channel, alpha kept", &d, HT_FORMAT_U8, 4, &p, v);
      p.levels = 5;
      compare("RGBA per channel, 5 levels, 16-bit out", &d, HT_FORMAT_U16, 4, &p, v);
      free(d.mem);
      p.alpha = false;
      p.color = HT_COLOR_LUMA;
      p.levels = 2;
      for (int64_t w = 1; w <= 70; w += 3) {
        img e = random_img(w, 9 + w % 5, 1, HT_FORMAT_U8, 30 + (uint64_t)w);
        compare("packed bits, odd widths", &e, HT_FORMAT_BIT1, 1, &p, v);
        free(e.mem);
      }
    }
  }
  /* levels 256: every level is a lut entry */
  p.filter = filter_of("floyd-steinberg");
  p.levels = 256;
  img f = random_img(150, 90, 1, HT_FORMAT_U16, 40);
  compare("256 levels", &f, HT_FORMAT_U8, 1, &p, HT_VARIANT_GPU_FAST);
  free(f.mem);
}

/* Small stripes and chunks: the stripe flags, the carried error rows. */
static void part_stripes(void)
{
  ht_params p;
  ht_params_init(&p);
  static const char *const st[][2] = { { "32", "" }, { "64", "64" }, { "32", "96" }, { "", "32" } };
  /* the boundary words' 8-bit launch tags wrap within the first runs */
  setenv("HT_CUDA_FIRST_WTAG", "240", 1);
  for (size_t k = 0; k < sizeof st / sizeof st[0]; k++) {
    setenv("HT_CUDA_STRIPE_ROWS", st[k][0], 1);
    setenv("HT_CUDA_CHUNK_ROWS", st[k][1], 1);
    for (int fi = 0; fi < 4; fi++) {
      p.filter = filter_of(fi == 0 ? "floyd-steinberg" : fi == 1 ? "jarvis-judice-ninke" : fi == 2 ? "atkinson"
                                                                                                      : custom_wide);
      for (int li = 0; li < 2; li++) {
        p.levels = li ? 16 : 2;
        img a = random_img(301, 1003, 1, HT_FORMAT_U8, 50 + k);
        compare("stripes, 8-bit", &a, HT_FORMAT_U8, 1, &p, HT_VARIANT_GPU_FAST);
        free(a.mem);
        img b = random_img(129, 515, 1, HT_FORMAT_U16, 60 + k);
        compare("stripes, 16-bit", &b, li ? HT_FORMAT_U16 : HT_FORMAT_BIT1, 1, &p, HT_VARIANT_GPU_FAST);
        free(b.mem);
      }
    }
  }
  unsetenv("HT_CUDA_STRIPE_ROWS");
  unsetenv("HT_CUDA_CHUNK_ROWS");
  unsetenv("HT_CUDA_FIRST_WTAG");
}

/* ------------------------------------------------------------ carried rows */

/* Rows y0 .. y0 + h - 1 of `im`, in place. */
static ht_image band_view(const ht_image *im, int64_t y0, int64_t h)
{
  ht_image r = *im;
  r.height = h;
  r.data = (uint8_t *)im->data + (size_t)y0 * im->stride;
  return r;
}

enum { ALL_GPU, ALL_CPU, CPU_FIRST, GPU_FIRST }; /* where the bands run */

static bool band_on_gpu(int where, int i)
{
  return where == ALL_GPU || (where == CPU_FIRST && i % 2) || (where == GPU_FIRST && i % 2 == 0);
}

static size_t carry_size(const ht_params *p, const img *in, int planes)
{
  return (size_t)ht_carry_rows(p) * (size_t)in->im.width * (size_t)planes;
}

/* Runs `in` into `out` as bands of the heights hs[0], hs[1], ... (cycled
 * until the image ends), each band given the rows that the band above
 * returned; band i on the GPU (gpu-fast) or the CPU (ed) as `where` says.
 * Every band's carry_out is appended to `log` (nbands * carry_size). Returns
 * the number of bands, -1 after a failed run. */
static int run_bands(const char *what, ht_context *gpu, const img *in, img *out, const ht_params *p0, int planes,
                     const int *hs, int nh, int where, int32_t *log)
{
  const size_t cs = carry_size(p0, in, planes);
  int32_t *above = xmalloc(cs * sizeof(int32_t)), *below = xmalloc(cs * sizeof(int32_t));
  int nb = 0;
  for (int64_t y0 = 0; y0 < in->im.height; nb++) {
    const int64_t h = hs[nb % nh] < in->im.height - y0 ? hs[nb % nh] : in->im.height - y0;
    const bool on_gpu = band_on_gpu(where, nb);
    ht_params p = *p0;
    p.variant = on_gpu ? HT_VARIANT_GPU_FAST : HT_VARIANT_ED;
    ht_image bi = band_view(&in->im, y0, h), bo = band_view(&out->im, y0, h);
    ht_band band = { y0, y0 > 0 ? above : NULL, below };
    memset(below, 0x5c, cs * sizeof(int32_t)); /* every row must be written */
    ht_context *c = on_gpu ? gpu : cpu_ctx;
    ht_status s = ht_run_band(c, &bi, &bo, &p, &band);
    runs += on_gpu;
    if (s != HT_OK) {
      CHECK(0, "%s: band %d (rows %lld..%lld) on the %s: %s", what, nb, (long long)y0, (long long)(y0 + h - 1),
            on_gpu ? "GPU" : "CPU", ht_context_message(c));
      nb = -1;
      break;
    }
    if (on_gpu && ht_context_last_backend(c) != HT_BACKEND_CUDA) {
      CHECK(0, "%s: band %d did not run on the GPU", what, nb);
      nb = -1;
      break;
    }
    if (log)
      memcpy(log + (size_t)nb * cs, below, cs * sizeof(int32_t));
    int32_t *t = above;
    above = below;
    below = t;
    y0 += h;
  }
  free(above);
  free(below);
  return nb;
}

/* The first row where two outputs differ, or -1. */
static int64_t first_diff(const img *a, const img *b)
{
  const size_t rb = row_bytes(a->im.format, a->im.width, a->im.channels);
  for (int64_t y = 0; y < a->im.height; y++)
    if (memcmp(a->mem + (size_t)y * a->im.stride, b->mem + (size_t)y * b->im.stride, rb) != 0)
      return y;
  return -1;
}

static int bands_in(int64_t H, const int *hs, int nh)
{
  int n = 0;
  for (int64_t y = 0; y < H; n++)
    y += hs[n % nh];
  return n;
}

/* One image, one filter, one band split: the GPU's bands against the
 * whole image on the CPU (output) and against the same bands on the CPU
 * (every band's carried rows, so that what the GPU returns means what the
 * CPU's means); then bands alternating between CPU and GPU, both ways. */
static void carry_case(const char *what, ht_context *gpu, const img *in, ht_format of, int och, int planes,
                       const ht_params *p0, const int *hs, int nh)
{
  char label[256];
  ht_params p = *p0;
  img whole = make(in->im.width, in->im.height, och, of, 3), banded = make(in->im.width, in->im.height, och, of, 5);
  p.variant = HT_VARIANT_ED;
  ht_status s = ht_run(cpu_ctx, &in->im, &whole.im, &p);
  CHECK(s == HT_OK, "%s: cpu: %s", what, ht_context_message(cpu_ctx));
  const int n = bands_in(in->im.height, hs, nh);
  const size_t cs = carry_size(p0, in, planes);
  int32_t *log_gpu = xmalloc((size_t)n * cs * sizeof(int32_t)), *log_cpu = xmalloc((size_t)n * cs * sizeof(int32_t));
  snprintf(label, sizeof label, "%s [%d levels, %lldx%lld, bands of %d%s]", what, p.levels, (long long)in->im.width,
           (long long)in->im.height, hs[0], nh > 1 ? ", ..." : "");
  for (int where = ALL_GPU; where <= GPU_FIRST; where++) {
    memset(banded.mem, 0xA5, banded.im.stride * (size_t)banded.im.height);
    int nb = run_bands(label, gpu, in, &banded, p0, planes, hs, nh, where,
                       where == ALL_GPU ? log_gpu : where == ALL_CPU ? log_cpu : NULL);
    if (nb < 0)
      continue;
    CHECK(nb == n, "%s: %d bands, expected %d", label, nb, n);
    const int64_t y = first_diff(&whole, &banded);
    CHECK(y < 0, "%s, bands %s: output differs from the whole image on the CPU from row %lld", label,
          where == ALL_GPU ? "on the GPU" : where == ALL_CPU ? "on the CPU" : where == CPU_FIRST ? "CPU, GPU, ..." : "GPU, CPU, ...",
          (long long)y);
  }
  for (int b = 0; b < n; b++) {
    const int32_t *g = log_gpu + (size_t)b * cs, *c = log_cpu + (size_t)b * cs;
    if (memcmp(g, c, cs * sizeof(int32_t)) != 0) {
      size_t i = 0;
      while (g[i] == c[i])
        i++;
      const size_t per_plane = cs / (size_t)planes, w = (size_t)in->im.width;
      CHECK(0, "%s: band %d's carried rows differ: plane %zu row %zu column %zu: gpu %d, cpu %d", label, b,
            i / per_plane, i % per_plane / w, i % w, (int)g[i], (int)c[i]);
      break;
    }
  }
  free(log_gpu);
  free(log_cpu);
  free(whole.mem);
  free(banded.mem);
}

static void part_carry(void)
{
  static const int h1[] = { 1 }, h2[] = { 2 }, h3[] = { 3 }, h31[] = { 31 }, h32[] = { 32 }, h33[] = { 33 },
                   h100[] = { 100 }, mix[] = { 1, 33, 2, 100, 31, 3, 32, 64, 5, 17 };
  static const struct {
    const int *hs;
    int n;
  } splits[] = { { h1, 1 }, { h2, 1 }, { h3, 1 }, { h31, 1 }, { h32, 1 }, { h33, 1 }, { h100, 1 }, { mix, 10 } };
  const char *const fl[] = { "floyd-steinberg", "jarvis-judice-ninke", custom_tall, custom_wide1 };
  ht_params p;
  ht_params_init(&p);

  /* every split, filter and level count on two widths that are not
   * multiples of 32; 203 rows end most splits with a short band */
  static const int64_t widths[] = { 97, 301 };
  for (int wi = 0; wi < 2; wi++) {
    img in = random_img(widths[wi], 203, 1, HT_FORMAT_U8, 80 + (uint64_t)wi);
    for (int fi = 0; fi < 4; fi++)
      for (int li = 0; li < 2; li++) {
        p.filter = filter_of(fl[fi]);
        p.levels = li ? 5 : 2;
        for (size_t k = 0; k < sizeof splits / sizeof splits[0]; k++)
          carry_case(fl[fi], gpu_ctx, &in, HT_FORMAT_U8, 1, 1, &p, splits[k].hs, splits[k].n);
      }
    free(in.mem);
  }

  /* the other input and output paths, planes one after another in the
   * carried rows, and a filter with nothing to carry */
  {
    static const int hs[] = { 40, 1, 70, 2, 33 };
    img a = random_img(203, 117, 1, HT_FORMAT_U16, 81);
    p.filter = filter_of("floyd-steinberg");
    p.levels = 2;
    carry_case("16-bit in, packed bits out", gpu_ctx, &a, HT_FORMAT_BIT1, 1, 1, &p, hs, 5);
    p.filter = filter_of("jarvis-judice-ninke");
    p.levels = 5;
    carry_case("16-bit in, 16-bit out (store path)", gpu_ctx, &a, HT_FORMAT_U16, 1, 1, &p, hs, 5);
    free(a.mem);
    img c = random_img(77, 117, 3, HT_FORMAT_U8, 82);
    p.filter = filter_of(custom_tall);
    p.levels = 2;
    p.color = HT_COLOR_PER_CHANNEL;
    carry_case("RGB per channel", gpu_ctx, &c, HT_FORMAT_U8, 3, 3, &p, hs, 5);
    p.color = HT_COLOR_LUMA;
    carry_case("RGB luma (load path)", gpu_ctx, &c, HT_FORMAT_U8, 1, 1, &p, hs, 5);
    free(c.mem);
    img e = random_img(45, 80, 1, HT_FORMAT_U8, 83);
    p.filter = filter_of(custom_row);
    carry_case("current row only", gpu_ctx, &e, HT_FORMAT_U8, 1, 1, &p, hs, 5);
    free(e.mem);
  }

  /* bands that span several device chunks (64 rows, stripes of 32), the
   * boundary words' tags wrapping on the way (read when a context opens
   * the GPU) */
  {
    static const int hs[] = { 100, 65, 1, 64, 37, 130 };
    setenv("HT_CUDA_STRIPE_ROWS", "32", 1);
    setenv("HT_CUDA_CHUNK_ROWS", "64", 1);
    setenv("HT_CUDA_FIRST_WTAG", "250", 1);
    ht_context *c = ht_context_new();
    ht_context_set_backend(c, HT_BACKEND_CUDA);
    img in = random_img(301, 500, 1, HT_FORMAT_U8, 84);
    for (int fi = 0; fi < 4; fi++)
      for (int li = 0; li < 2; li++) {
        p.filter = filter_of(fl[fi]);
        p.levels = li ? 5 : 2;
        carry_case(fl[fi], c, &in, HT_FORMAT_U8, 1, 1, &p, hs, 6);
      }
    free(in.mem);
    ht_context_free(c);
    unsetenv("HT_CUDA_STRIPE_ROWS");
    unsetenv("HT_CUDA_CHUNK_ROWS");
    unsetenv("HT_CUDA_FIRST_WTAG");
  }

  /* refusals: the paper's variants do not carry rows; errors beyond the
   * boundary words' 24 bits */
  {
    img in = random_img(64, 40, 1, HT_FORMAT_U8, 85), out = make(64, 40, 1, HT_FORMAT_U8, 0);
    p.filter = filter_of("floyd-steinberg");
    p.levels = 2;
    int32_t *above = xmalloc(64 * sizeof(int32_t)), *below = xmalloc(64 * sizeof(int32_t));
    memset(above, 0, 64 * sizeof(int32_t));
    ht_band band = { 40, above, below };
    p.variant = HT_VARIANT_GPU_PB_PEC_RC;
    ht_status s = ht_run_band(gpu_ctx, &in.im, &out.im, &p, &band);
    CHECK(s == HT_ERR_UNSUPPORTED, "a paper variant with carried rows: status %d (%s)", (int)s,
          ht_context_message(gpu_ctx));
    above[17] = 1 << 24;
    p.variant = HT_VARIANT_GPU_FAST;
    s = ht_run_band(gpu_ctx, &in.im, &out.im, &p, &band);
    CHECK(s == HT_ERR_UNSUPPORTED && strstr(ht_context_message(gpu_ctx), "24 bits"),
          "a carried error of 1 << 24: status %d (%s)", (int)s, ht_context_message(gpu_ctx));
    /* and the context still works */
    above[17] = -300;
    s = ht_run_band(gpu_ctx, &in.im, &out.im, &p, &band);
    CHECK(s == HT_OK, "after a refusal: %s", ht_context_message(gpu_ctx));
    free(above);
    free(below);
    free(in.mem);
    free(out.mem);
  }
}

static int notices;
static char notice_text[512];
static void on_notice(const char *m, void *u)
{
  (void)u;
  notices++;
  snprintf(notice_text, sizeof notice_text, "%s", m);
}

static int ticks;
static bool cancel_at_second(double f, void *u)
{
  (void)f;
  (void)u;
  return ++ticks < 2;
}

/* Backend auto, with the GPU failing as `knob` makes it: the exact
 * result on the CPU, and one notice that names the failure. (Auto tries
 * the GPU only where it expects it to be faster: here opening it is
 * free and the CPU has one thread, and the image has 0.96 M pixels.) */
static void auto_falls_back(const img *in, img *out, const img *ref, const char *knob)
{
  const size_t n = (size_t)(in->im.width * in->im.height);
  ht_params p;
  ht_params_init(&p);
  p.variant = HT_VARIANT_AUTO;
  notices = 0;
  setenv("HT_AUTO_GPU_OPEN_MS", "0", 1);
  ht_context *c = ht_context_new();
  ht_context_set_notice(c, on_notice, NULL);
  ht_context_set_threads(c, 1);
  memset(out->mem, 0x33, n);
  ht_status s = ht_run(c, &in->im, &out->im, &p);
  CHECK(s == HT_OK, "auto with %s: %s", knob, ht_context_message(c));
  CHECK(notices == 1 && strstr(notice_text, knob), "notice: %d, \"%s\"", notices, notice_text);
  CHECK(ht_context_last_backend(c) == HT_BACKEND_CPU, "%s: not on the CPU", knob);
  CHECK(memcmp(out->mem, ref->mem, n) == 0, "%s: fallback output differs", knob);
  ht_context_free(c);
  unsetenv("HT_AUTO_GPU_OPEN_MS");
}

static void part_errors(void)
{
  const int64_t w = 1200, h = 800;
  img in = random_img(w, h, 1, HT_FORMAT_U8, 70);
  img out = make(w, h, 1, HT_FORMAT_U8, 0), ref = make(w, h, 1, HT_FORMAT_U8, 0);
  ht_params p;
  ht_params_init(&p);
  p.variant = HT_VARIANT_ED;
  CHECK(ht_run(cpu_ctx, &in.im, &ref.im, &p) == HT_OK, "cpu");
  p.variant = HT_VARIANT_AUTO;

  /* simulated cudaMalloc failure: cuda -> clear error, nothing written */
  setenv("HT_CUDA_FAIL_ALLOC", "1", 1);
  for (int v = 0; v < 2; v++) {
    p.variant = v ? HT_VARIANT_GPU_PB_PEC_RC : HT_VARIANT_AUTO;
    ht_context *c = ht_context_new();
    ht_context_set_backend(c, HT_BACKEND_CUDA);
    memset(out.mem, 0x33, (size_t)(w * h));
    ht_status s = ht_run(c, &in.im, &out.im, &p);
    CHECK(s == HT_ERR_NO_MEMORY, "simulated allocation failure: status %d (%s)", (int)s, ht_context_message(c));
    CHECK(strstr(ht_context_message(c), "HT_CUDA_FAIL_ALLOC") != NULL, "message: %s", ht_context_message(c));
    bool untouched = true;
    for (int64_t i = 0; i < w * h; i++)
      untouched = untouched && out.mem[i] == 0x33;
    CHECK(untouched, "a failed GPU run wrote output");
    ht_context_free(c);
  }
  auto_falls_back(&in, &out, &ref, "HT_CUDA_FAIL_ALLOC");
  unsetenv("HT_CUDA_FAIL_ALLOC");

  /* a band that waits for words that never come (simulated: the first
   * band of the second chunk of 64 rows): cuda -> a clear error within
   * seconds, never a hang, and no wrong row reaches the caller (the
   * first chunk's rows may); then the same context works again; auto ->
   * the exact result on the CPU */
  setenv("HT_CUDA_FAIL_WAIT", "1", 1);
  setenv("HT_CUDA_STRIPE_ROWS", "32", 1);
  setenv("HT_CUDA_CHUNK_ROWS", "64", 1);
  ht_context *c = ht_context_new();
  ht_context_set_backend(c, HT_BACKEND_CUDA);
  p.variant = HT_VARIANT_GPU_FAST;
  memset(out.mem, 0x33, (size_t)(w * h));
  ht_status s = ht_run(c, &in.im, &out.im, &p);
  CHECK(s == HT_ERR_GPU, "lost word: status %d (%s)", (int)s, ht_context_message(c));
  CHECK(strstr(ht_context_message(c), "HT_CUDA_FAIL_WAIT") != NULL, "message: %s", ht_context_message(c));
  int64_t rows_kept = 0;
  for (int64_t y = 0; y < h; y++) {
    const uint8_t *r = out.mem + (size_t)(y * w), *e = ref.mem + (size_t)(y * w);
    bool untouched = true;
    for (int64_t x = 0; x < w; x++)
      untouched = untouched && r[x] == 0x33;
    CHECK(untouched || memcmp(r, e, (size_t)w) == 0, "a failed GPU run wrote a wrong row %lld", (long long)y);
    rows_kept += !untouched;
  }
  CHECK(rows_kept > 0 && rows_kept < h, "a failed GPU run stored %lld of %lld rows", (long long)rows_kept,
        (long long)h);
  unsetenv("HT_CUDA_FAIL_WAIT");
  s = ht_run(c, &in.im, &out.im, &p);
  CHECK(s == HT_OK && memcmp(out.mem, ref.mem, (size_t)(w * h)) == 0, "run after a lost word: %s",
        ht_context_message(c));
  ht_context_free(c);
  setenv("HT_CUDA_FAIL_WAIT", "1", 1);
  auto_falls_back(&in, &out, &ref, "HT_CUDA_FAIL_WAIT");
  unsetenv("HT_CUDA_FAIL_WAIT");
  unsetenv("HT_CUDA_STRIPE_ROWS");
  unsetenv("HT_CUDA_CHUNK_ROWS");

  /* cancel between stripes, then the same context still works */
  setenv("HT_CUDA_STRIPE_ROWS", "32", 1);
  c = ht_context_new();
  ht_context_set_backend(c, HT_BACKEND_CUDA);
  ht_context_set_progress(c, cancel_at_second, NULL);
  img big = random_img(2000, 3000, 1, HT_FORMAT_U8, 71);
  img bo = make(2000, 3000, 1, HT_FORMAT_U8, 0);
  ticks = 0;
  s = ht_run(c, &big.im, &bo.im, &p);
  CHECK(s == HT_ERR_CANCELLED, "cancel: status %d (%s)", (int)s, ht_context_message(c));
  ht_context_set_progress(c, NULL, NULL);
  s = ht_run(c, &in.im, &out.im, &p);
  CHECK(s == HT_OK && memcmp(out.mem, ref.mem, (size_t)(w * h)) == 0, "run after a cancel: %s",
        ht_context_message(c));
  ht_context_free(c);
  unsetenv("HT_CUDA_STRIPE_ROWS");
  free(big.mem);
  free(bo.mem);
  free(in.mem);
  free(out.mem);
  free(ref.mem);
}

int main(int argc, char **argv)
{
  if (argc < 3) {
    fprintf(stderr, "usage: %s PHOTO.pgm variants|filters|shapes|paths|stripes|errors|carry\n", argv[0]);
    return 99;
  }
  cpu_ctx = ht_context_new();
  gpu_ctx = ht_context_new();
  ht_context_set_backend(cpu_ctx, HT_BACKEND_CPU);
  ht_context_set_backend(gpu_ctx, HT_BACKEND_CUDA);
  {
    uint8_t a[1] = { 100 }, b[1];
    ht_image i = { 1, 1, 1, 1, HT_FORMAT_U8, a }, o = { 1, 1, 1, 1, HT_FORMAT_U8, b };
    ht_params p;
    ht_params_init(&p);
    ht_status s = ht_run(gpu_ctx, &i, &o, &p);
    if (s == HT_ERR_NO_GPU) {
      printf("skipped: %s\n", ht_context_message(gpu_ctx));
      return SKIP;
    }
  }
  int64_t pw, ph;
  uint8_t *pix = read_pgm(argv[1], &pw, &ph);
  if (!pix) {
    fprintf(stderr, "cannot read %s\n", argv[1]);
    return 99;
  }
  img photo = { { pw, ph, (size_t)pw, 1, HT_FORMAT_U8, pix }, pix };
  find_variants();

  const char *part = argv[2];
  if (!strcmp(part, "variants"))
    part_variants(&photo);
  else if (!strcmp(part, "filters"))
    part_filters(&photo);
  else if (!strcmp(part, "shapes"))
    part_shapes();
  else if (!strcmp(part, "paths"))
    part_paths();
  else if (!strcmp(part, "stripes"))
    part_stripes();
  else if (!strcmp(part, "errors"))
    part_errors();
  else if (!strcmp(part, "carry"))
    part_carry();
  else {
    fprintf(stderr, "unknown part %s\n", part);
    return 99;
  }
  free(pix);
  ht_context_free(cpu_ctx);
  ht_context_free(gpu_ctx);
  if (test_failures) {
    fprintf(stderr, "test-gpu %s: %d check(s) failed in %d GPU runs\n", part, test_failures, runs);
    return 1;
  }
  printf("test-gpu %s: %d GPU runs, all equal to the CPU\n", part, runs);
  return 0;
}
