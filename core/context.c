/* Context, parameters, format conversion and dispatch to the backends. */
#include "internal.h"

#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct ht_context {
  ht_backend backend;
  int threads;
  ht_progress_fn progress;
  void *progress_user;
  ht_notice_fn notice;
  void *notice_user;
  ht_cuda *cuda;         /* opened on first GPU run                  */
  ht_pool *pool;         /* the wavefront's threads, from its first run */
  bool cuda_tried;
  char cuda_msg[HT_MSG_MAX];
  ht_backend last_backend;
  ht_variant last_variant;
  char msg[HT_MSG_MAX];
};

const char *ht_version(void) { return "0.1.0"; }

const char *ht_status_string(ht_status s)
{
  switch (s) {
  case HT_OK: return "success";
  case HT_ERR_INVALID_ARGUMENT: return "invalid argument";
  case HT_ERR_BAD_SIZE: return "bad image size";
  case HT_ERR_BAD_PIXEL: return "bad pixel value";
  case HT_ERR_BAD_COEFFICIENTS: return "bad filter coefficients";
  case HT_ERR_NO_MEMORY: return "out of memory";
  case HT_ERR_UNSUPPORTED: return "unsupported combination";
  case HT_ERR_NO_GPU: return "no usable GPU";
  case HT_ERR_GPU: return "GPU failure";
  case HT_ERR_CANCELLED: return "cancelled";
  case HT_ERR_IO: return "input/output error";
  }
  return "unknown status";
}

static const char *const variant_names[] = {
  [HT_VARIANT_AUTO] = "auto", [HT_VARIANT_ED] = "ed", [HT_VARIANT_EC] = "ec",
  [HT_VARIANT_ED_RC] = "ed-rc", [HT_VARIANT_EC_RC] = "ec-rc",
  [HT_VARIANT_WAVEFRONT] = "wavefront",
};

/* In the order of ht_variant from HT_VARIANT_GPU_FIRST. */
static const char *const gpu_variant_names[HT_VARIANT_GPU_END - HT_VARIANT_GPU_FIRST] = {
  "gpu-fast",
  "gpu-3d-ped", "gpu-2d-ped-atomic", "gpu-2d-ped-double", "gpu-2d-pec",
  "gpu-3d-ped-perm", "gpu-2d-ped-atomic-perm", "gpu-2d-ped-double-perm", "gpu-2d-pec-perm",
  "gpu-pb-ped", "gpu-pb-ped-rc", "gpu-pb-pec", "gpu-pb-pec-rc",
};

const char *ht_variant_name(ht_variant v)
{
  if ((int)v >= 0 && v < HT_VARIANT_COUNT_CPU)
    return variant_names[v];
  if (v >= HT_VARIANT_GPU_FIRST && v < HT_VARIANT_GPU_END)
    return gpu_variant_names[v - HT_VARIANT_GPU_FIRST];
  return "unknown";
}

int ht_variant_from_name(const char *name)
{
  if (!name)
    return -1;
  for (int i = 0; i < HT_VARIANT_COUNT_CPU; i++)
    if (strcmp(variant_names[i], name) == 0)
      return i;
  for (int i = HT_VARIANT_GPU_FIRST; i < HT_VARIANT_GPU_END; i++)
    if (strcmp(gpu_variant_names[i - HT_VARIANT_GPU_FIRST], name) == 0)
      return i;
  return -1;
}

void ht_params_init(ht_params *p)
{
  if (!p)
    return;
  memset(p, 0, sizeof *p);
  p->filter = *ht_filter_builtin(HT_FILTER_FLOYD_STEINBERG);
  p->levels = 2;
  p->scan = HT_SCAN_RASTER;
  p->color = HT_COLOR_LUMA;
  p->alpha = false;
  p->variant = HT_VARIANT_AUTO;
}

ht_context *ht_context_new(void)
{
  ht_context *ctx = calloc(1, sizeof *ctx);
  if (ctx) {
    ctx->backend = HT_BACKEND_AUTO;
    ctx->last_backend = HT_BACKEND_CPU;
  }
  return ctx;
}

void ht_context_free(ht_context *ctx)
{
  if (!ctx)
    return;
  if (ctx->cuda)
    ht_cuda_close(ctx->cuda);
  ht_pool_free(ctx->pool);
  free(ctx);
}

void ht_context_set_backend(ht_context *ctx, ht_backend b) { if (ctx) ctx->backend = b; }
void ht_context_set_threads(ht_context *ctx, int n) { if (ctx) ctx->threads = n < 0 ? 0 : n; }
void ht_context_set_progress(ht_context *ctx, ht_progress_fn fn, void *user)
{
  if (ctx) {
    ctx->progress = fn;
    ctx->progress_user = user;
  }
}
void ht_context_set_notice(ht_context *ctx, ht_notice_fn fn, void *user)
{
  if (ctx) {
    ctx->notice = fn;
    ctx->notice_user = user;
  }
}
const char *ht_context_message(const ht_context *ctx) { return ctx ? ctx->msg : "no context"; }
ht_backend ht_context_last_backend(const ht_context *ctx) { return ctx ? ctx->last_backend : HT_BACKEND_CPU; }
ht_variant ht_context_last_variant(const ht_context *ctx) { return ctx ? ctx->last_variant : HT_VARIANT_AUTO; }

void ht_set_msg(char *msg, const char *fmt, ...)
{
  if (!msg)
    return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, HT_MSG_MAX, fmt, ap);
  va_end(ap);
}

static ht_status fail(ht_context *ctx, ht_status s, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static ht_status fail(ht_context *ctx, ht_status s, const char *fmt, ...)
{
  /* formatted aside first: callers pass job->msg, which is ctx->msg */
  char buf[HT_MSG_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  memcpy(ctx->msg, buf, sizeof ctx->msg);
  return s;
}

static void *alloc(ht_job *job, size_t count, size_t size, bool zero)
{
  if (count && size > SIZE_MAX / count) {
    ht_set_msg(job->msg, "out of memory: %zu x %zu bytes is too large", count, size);
    return NULL;
  }
  void *p = zero ? calloc(count ? count : 1, size ? size : 1) : malloc(count && size ? count * size : 1);
  if (!p)
    ht_set_msg(job->msg, "out of memory: could not allocate %zu bytes of working memory", count * size);
  return p;
}

void *ht_alloc(ht_job *job, size_t count, size_t size) { return alloc(job, count, size, true); }

/* For buffers that are written before they are read: calloc zeroes a
 * block that malloc reuses, megabytes on the calling thread before the
 * wavefront's threads start (BENCHMARKS.md, tenth session). */
void *ht_alloc_raw(ht_job *job, size_t count, size_t size) { return alloc(job, count, size, false); }

int64_t ht_now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The cores this process may run on: those of its affinity mask where
 * the system says (so `taskset -c 0,1` means 2), else all online. */
int ht_online_cores(void)
{
#ifdef __linux__
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) >= 1)
    return CPU_COUNT(&set) > 1024 ? 1024 : CPU_COUNT(&set);
#endif
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n < 1 ? 1 : n > 1024 ? 1024 : (int)n;
}

bool ht_job_tick(ht_job *job, int64_t done, int64_t total)
{
  if (ht_job_cancelled(job))
    return false;
  if (!job->progress)
    return true;
  int64_t now = ht_now_ns();
  if (done < total && now - job->last_tick_ns < 50000000)
    return true;
  job->last_tick_ns = now;
  double f = job->base + job->span * (total > 0 ? (double)done / (double)total : 1.0);
  if (!job->progress(f, job->user)) {
    atomic_store(&job->cancelled, 1);
    return false;
  }
  return true;
}

size_t ht_format_row_bytes(ht_format format, int64_t width, int channels)
{
  if (width <= 0 || channels <= 0)
    return 0;
  switch (format) {
  case HT_FORMAT_U8: return (size_t)width * (size_t)channels;
  case HT_FORMAT_U16: return (size_t)width * (size_t)channels * 2;
  case HT_FORMAT_F32: return (size_t)width * (size_t)channels * 4;
  case HT_FORMAT_BIT1: return ((size_t)width * (size_t)channels + 7) / 8;
  }
  return 0;
}

/* ------------------------------------------------------------ row I/O */

static inline int32_t fx_from_f32(float f)
{
  if (!(f > 0.0f))
    return 0;
  if (f >= 1.0f)
    return HT_FX_ONE;
  return (int32_t)lrintf(f * (float)HT_FX_ONE);
}

static inline int32_t sample_fx(const ht_rows *r, const uint8_t *row, int64_t x, int c)
{
  size_t i = (size_t)x * (size_t)r->in_channels + (size_t)c;
  switch (r->in_format) {
  case HT_FORMAT_U8: return ht_fx_from_u8(row[i]);
  case HT_FORMAT_U16: return ((const uint16_t *)(const void *)row)[i];
  case HT_FORMAT_F32: return fx_from_f32(((const float *)(const void *)row)[i]);
  default: return 0;
  }
}

/* Rec. 709 luma of the stored values, weights in 1/65536 summing to 1. */
static inline int32_t luma_fx(int32_t r, int32_t g, int32_t b)
{
  return (int32_t)((13933 * (int64_t)r + 46871 * (int64_t)g + 4732 * (int64_t)b + 32768) >> 16);
}

static void load_row(const ht_rows *r, int64_t y, int64_t x0, int64_t n, int32_t *dst)
{
  const uint8_t *row = r->in + (size_t)y * r->in_stride;
  if (r->in_channel >= 0) {
    if (r->in_format == HT_FORMAT_U8 && r->in_channels == 1) {
      row += x0;
      for (int64_t i = 0; i < n; i++) /* the hot case: let it vectorise */
        dst[i] = ht_fx_from_u8(row[i]);
      return;
    }
    for (int64_t i = 0; i < n; i++)
      dst[i] = sample_fx(r, row, x0 + i, r->in_channel);
    return;
  }
  for (int64_t i = 0; i < n; i++)
    dst[i] = luma_fx(sample_fx(r, row, x0 + i, 0), sample_fx(r, row, x0 + i, 1), sample_fx(r, row, x0 + i, 2));
}

static void store_row(const ht_rows *r, int64_t y, int64_t x0, int64_t n, const uint8_t *lv)
{
  uint8_t *row = r->out + (size_t)y * r->out_stride;
  switch (r->out_format) {
  case HT_FORMAT_U8:
    if (r->out_channels == 1) {
      row += x0;
      for (int64_t i = 0; i < n; i++)
        row[i] = (uint8_t)r->lut[lv[i]];
    } else {
      for (int64_t i = 0; i < n; i++)
        row[(size_t)(x0 + i) * (size_t)r->out_channels + (size_t)r->out_channel] = (uint8_t)r->lut[lv[i]];
    }
    break;
  case HT_FORMAT_U16: {
    uint16_t *o = (uint16_t *)(void *)row;
    for (int64_t i = 0; i < n; i++)
      o[(size_t)(x0 + i) * (size_t)r->out_channels + (size_t)r->out_channel] = r->lut[lv[i]];
    break;
  }
  case HT_FORMAT_BIT1: {
    row += x0 >> 3; /* x0 is a multiple of 8 */
    int64_t i = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    /* 1-bit output means levels == 2, so every index is 0 or 1: flip the
     * eight low bits of eight bytes and gather them, first pixel to the
     * most significant bit, with one multiply. */
    for (; i + 8 <= n; i += 8) {
      uint64_t v;
      memcpy(&v, lv + i, 8);
      v = ~v & UINT64_C(0x0101010101010101);
      row[i >> 3] = (uint8_t)((v * UINT64_C(0x8040201008040201)) >> 56);
    }
#endif
    for (; i + 8 <= n; i += 8) {
      unsigned b = 0;
      for (int k = 0; k < 8; k++)
        b = (b << 1) | (lv[i + k] == 0);
      row[i >> 3] = (uint8_t)b;
    }
    if (i < n) { /* the end of the row */
      const int64_t is = i;
      unsigned b = 0;
      int k = 0;
      for (; i < n; i++, k++)
        b = (b << 1) | (lv[i] == 0);
      row[is >> 3] = (uint8_t)(b << (8 - k));
    }
    break;
  }
  case HT_FORMAT_F32:
    break;
  }
}

static void rows_set_lut(ht_rows *r, bool indices)
{
  int L = r->levels;
  int32_t max = r->out_format == HT_FORMAT_U16 ? 65535 : 255;
  for (int q = 0; q < 256; q++) {
    if (indices)
      r->lut[q] = (uint16_t)q;
    else if (q < L)
      r->lut[q] = (uint16_t)((2 * q * max + (L - 1)) / (2 * (L - 1)));
    else
      r->lut[q] = (uint16_t)max;
  }
}

/* The table of ht_fx_quantize over 0..HT_FX_ONE, filled a run of equal
 * levels at a time (the function is monotonic): its run ends are found by
 * bisection with ht_fx_quantize itself, about 16 calls per level instead
 * of 65536 divisions, which matters for small images. */
static void fill_quantize_lut(uint8_t *lut, int levels)
{
  for (int32_t v = 0; v <= HT_FX_ONE;) {
    int32_t q = ht_fx_quantize(v, levels), lo = v, hi = HT_FX_ONE + 1;
    while (lo + 1 < hi) { /* quantize(lo) == q, quantize(hi) != q or hi past the end */
      int32_t mid = lo + (hi - lo) / 2;
      if (ht_fx_quantize(mid, levels) == q)
        lo = mid;
      else
        hi = mid;
    }
    memset(lut + v, q, (size_t)(hi - v));
    v = hi;
  }
}

bool ht_level_table_init(ht_level_table *t, ht_job *job, int levels)
{
  memset(t, 0, sizeof *t);
  for (int i = 0; i < levels; i++)
    t->value[i] = ht_fx_level(i, levels);
  if (levels == 2)
    return true;
  t->lut = ht_alloc(job, (size_t)HT_FX_ONE + 1, 1);
  if (!t->lut)
    return false;
  fill_quantize_lut(t->lut, levels);
  return true;
}

void ht_level_table_free(ht_level_table *t)
{
  free(t->lut);
  t->lut = NULL;
}

/* ---------------------------------------------------------- validation */

static ht_status check_filter(ht_context *ctx, const ht_filter *f)
{
  if (f->ntaps <= 0 || f->ntaps > HT_FILTER_MAX_TAPS || f->den <= 0)
    return fail(ctx, HT_ERR_BAD_COEFFICIENTS, "filter has no weights or a non-positive divisor");
  int64_t qsum = 0;
  for (int i = 0; i < f->ntaps; i++) {
    const ht_tap *t = &f->taps[i];
    if (t->dy < 0 || t->dy > HT_FILTER_MAX_DOWN || t->dx > HT_FILTER_MAX_RIGHT ||
        -t->dx > HT_FILTER_MAX_LEFT || (t->dy == 0 && t->dx <= 0) || t->q < 0)
      return fail(ctx, HT_ERR_BAD_COEFFICIENTS, "filter weight %d points at a pixel already processed or too far away", i + 1);
    qsum += t->q;
  }
  if (qsum > HT_Q_ONE)
    return fail(ctx, HT_ERR_BAD_COEFFICIENTS, "filter weights sum to more than 1");
  return HT_OK;
}

static ht_status check_image(ht_context *ctx, const ht_image *im, const char *what, bool output)
{
  if (!im || !im->data)
    return fail(ctx, HT_ERR_INVALID_ARGUMENT, "%s image: no pixel data", what);
  if (im->width <= 0 || im->height <= 0)
    return fail(ctx, HT_ERR_BAD_SIZE, "%s image: size %lldx%lld has no pixels", what,
                (long long)im->width, (long long)im->height);
  if (im->width > HT_MAX_SIDE || im->height > HT_MAX_SIDE || im->width * im->height > HT_MAX_PIXELS)
    return fail(ctx, HT_ERR_BAD_SIZE, "%s image: size %lldx%lld is larger than the supported %lld pixels a side / %lld in all",
                what, (long long)im->width, (long long)im->height, (long long)HT_MAX_SIDE, (long long)HT_MAX_PIXELS);
  if (im->channels < 1 || im->channels > 4)
    return fail(ctx, HT_ERR_INVALID_ARGUMENT, "%s image: %d channels (1 to 4 supported)", what, im->channels);
  if ((int)im->format < 0 || im->format > HT_FORMAT_BIT1 || (!output && im->format == HT_FORMAT_BIT1) ||
      (output && im->format == HT_FORMAT_F32))
    return fail(ctx, HT_ERR_INVALID_ARGUMENT, "%s image: unsupported sample format", what);
  if (im->stride < ht_format_row_bytes(im->format, im->width, im->channels))
    return fail(ctx, HT_ERR_INVALID_ARGUMENT, "%s image: stride %zu is shorter than a row (%zu bytes)", what,
                im->stride, ht_format_row_bytes(im->format, im->width, im->channels));
  return HT_OK;
}

static ht_status scan_floats(ht_context *ctx, const ht_image *in)
{
  for (int64_t y = 0; y < in->height; y++) {
    const float *row = (const float *)(const void *)((const uint8_t *)in->data + (size_t)y * in->stride);
    size_t n = (size_t)in->width * (size_t)in->channels;
    for (size_t i = 0; i < n; i++)
      if (!isfinite(row[i]))
        return fail(ctx, HT_ERR_BAD_PIXEL, "input pixel (%zu, %lld) is %s; nothing was written",
                    i / (size_t)in->channels, (long long)y, isnan(row[i]) ? "NaN" : "infinite");
  }
  return HT_OK;
}

/* ------------------------------------------------------------ dispatch */

static void notice(ht_context *ctx, const char *text)
{
  if (ctx->notice)
    ctx->notice(text, ctx->notice_user);
}

/* Backend auto takes the GPU only where it is expected to be faster, by a
 * model whose three costs were measured on the 16-vCPU H100 host
 * (BENCHMARKS.md, twelfth session, and the GPU table):
 *  - opening the GPU (module, device context, streams), once per
 *    context: HT_AUTO_GPU_OPEN_MS, default 300 (a whole `halftone
 *    --backend cuda` run of a 1024² image took 0.36-0.39 s, against
 *    3-6 ms on the CPU);
 *  - a run on an open GPU: 0.5 ms plus 0.1 ns a pixel (end to end from
 *    pageable memory: 0.52 ms at 1K², 8.7 ms at 8K², 17.8 to 29.3 ms at
 *    16K² for 1-bit and 8-bit output);
 *  - the CPU: 1 ns a pixel on one thread (the wavefront at 16K²: 1.05 to
 *    1.13), and T threads at 65% of T times that (16 threads: 9-12.8x).
 * So a process that halftones one image (the CLI, a gegl graph) stays on
 * the CPU up to about 0.45 G pixels on 2 cores; a context kept for many
 * images (GIMP's) uses its GPU, once open, from about 0.8 M pixels on 2
 * cores. With 16 or more threads the model never prefers the GPU, as the
 * GPU host's measurements do not (16 threads: 30 ms at 16K², within
 * 1.7x of the open GPU). Rows are one plane: a colour image run per
 * channel is judged by one channel. */
static bool auto_wants_gpu(const ht_context *ctx, const ht_job *job, const ht_rows *rows)
{
  const double px = (double)rows->width * (double)rows->height;
  const double cpu_ms = px * 1e-6 / (job->threads > 1 ? 0.65 * job->threads : 1.0);
  double open_ms = 300;
  const char *env = getenv("HT_AUTO_GPU_OPEN_MS");
  if (env && *env) {
    char *end;
    const double v = strtod(env, &end);
    if (*end == '\0' && v >= 0 && v <= 1e7)
      open_ms = v;
  }
  return 0.5 + px * 0.1e-6 + (ctx->cuda || ctx->cuda_tried ? 0 : open_ms) < cpu_ms;
}

static ht_status run_job(ht_context *ctx, ht_job *job, const ht_rows *rows, ht_variant variant)
{
  ht_backend backend = ctx->backend;
  bool gpu_variant = variant >= HT_VARIANT_GPU_FIRST;
  if (gpu_variant && backend == HT_BACKEND_CPU)
    return fail(ctx, HT_ERR_UNSUPPORTED, "a GPU variant was asked for with backend cpu");
  if (backend != HT_BACKEND_CPU && job->scan == HT_SCAN_SERPENTINE) {
    if (backend == HT_BACKEND_CUDA)
      return fail(ctx, HT_ERR_UNSUPPORTED, "the serpentine scan runs sequentially on the CPU only; use backend cpu or auto");
    backend = HT_BACKEND_CPU;
  }
  if (backend != HT_BACKEND_CPU && !gpu_variant && variant != HT_VARIANT_AUTO) {
    if (backend == HT_BACKEND_CUDA)
      return fail(ctx, HT_ERR_UNSUPPORTED, "variant %s is a CPU variant; the cuda backend has its own", ht_variant_name(variant));
    backend = HT_BACKEND_CPU;
  }
  if (backend == HT_BACKEND_AUTO && !gpu_variant && !auto_wants_gpu(ctx, job, rows))
    backend = HT_BACKEND_CPU; /* quietly: the GPU was not tried */
  if (backend != HT_BACKEND_CPU) {
    if (!ctx->cuda_tried) {
      ctx->cuda_tried = true;
      ctx->cuda = ht_cuda_open(ctx->cuda_msg);
    }
    if (ctx->cuda) {
      ht_status s = ht_cuda_run(ctx->cuda, job, rows, gpu_variant ? variant : HT_VARIANT_AUTO);
      if (s == HT_OK) {
        ctx->last_backend = HT_BACKEND_CUDA;
        ctx->last_variant = variant;
        return s;
      }
      if (s == HT_ERR_CANCELLED || backend == HT_BACKEND_CUDA || gpu_variant)
        return fail(ctx, s, "%s", job->msg[0] ? job->msg : ht_status_string(s));
      char line[HT_MSG_MAX + 64];
      snprintf(line, sizeof line, "GPU failed (%s); running on the CPU", job->msg);
      notice(ctx, line);
      job->msg[0] = '\0';
    } else {
      if (backend == HT_BACKEND_CUDA || gpu_variant)
        return fail(ctx, HT_ERR_NO_GPU, "backend cuda: %s", ctx->cuda_msg);
      if (ctx->cuda_msg[0]) {
        char line[HT_MSG_MAX + 64];
        snprintf(line, sizeof line, "no GPU (%s); running on the CPU", ctx->cuda_msg);
        notice(ctx, line);
        ctx->cuda_msg[0] = '\0'; /* say it once per context */
      }
    }
  }

  if (variant == HT_VARIANT_AUTO)
    variant = job->scan == HT_SCAN_SERPENTINE ? HT_VARIANT_ED : HT_VARIANT_WAVEFRONT;
  if (job->scan == HT_SCAN_SERPENTINE && variant != HT_VARIANT_ED)
    return fail(ctx, HT_ERR_UNSUPPORTED,
                "the serpentine scan cannot run as a wavefront; it runs sequentially with variant ed (or auto)");
  ht_status s;
  switch (variant) {
  case HT_VARIANT_ED: s = ht_ed_run(job, rows); break;
  case HT_VARIANT_EC: s = ht_ec_run(job, rows); break;
  case HT_VARIANT_ED_RC: s = ht_ed_rc_run(job, rows); break;
  case HT_VARIANT_EC_RC: s = ht_ec_rc_run(job, rows); break;
  case HT_VARIANT_WAVEFRONT: s = ht_wavefront_run(job, rows); break;
  default: return fail(ctx, HT_ERR_INVALID_ARGUMENT, "unknown variant %d", (int)variant);
  }
  if (s != HT_OK)
    return fail(ctx, s, "%s", job->msg[0] ? job->msg : ht_status_string(s));
  ctx->last_backend = HT_BACKEND_CPU;
  ctx->last_variant = variant;
  return HT_OK;
}

static ht_status prepare_job(ht_context *ctx, const ht_params *p, ht_job *job)
{
  if (p->levels < 2 || p->levels > 256)
    return fail(ctx, HT_ERR_INVALID_ARGUMENT, "levels must be 2..256, got %d", p->levels);
  if ((int)p->scan < 0 || p->scan > HT_SCAN_SERPENTINE)
    return fail(ctx, HT_ERR_INVALID_ARGUMENT, "unknown scan %d", (int)p->scan);
  if ((int)p->variant < 0 || (p->variant >= HT_VARIANT_COUNT_CPU && p->variant < HT_VARIANT_GPU_FIRST) ||
      p->variant >= HT_VARIANT_GPU_END)
    return fail(ctx, HT_ERR_INVALID_ARGUMENT, "unknown variant %d", (int)p->variant);
  ht_status s = check_filter(ctx, &p->filter);
  if (s != HT_OK)
    return s;
  memset(job, 0, sizeof *job);
  job->filter = p->filter;
  ht_filter_derive(&job->filter);
  job->levels = p->levels;
  job->scan = p->scan;
  job->threads = ctx->threads > 0 ? ctx->threads : ht_online_cores();
  if (job->threads > 1 && !ctx->pool)
    ctx->pool = ht_pool_new(HT_POOL_MAX); /* NULL: threads of the run's own */
  job->pool = ctx->pool;
  job->progress = ctx->progress;
  job->user = ctx->progress_user;
  job->span = 1.0;
  job->msg = ctx->msg;
  atomic_init(&job->cancelled, 0);
  return HT_OK;
}

ht_status ht_run_plane(ht_context *ctx, const uint16_t *in, size_t in_stride, uint8_t *out,
                       size_t out_stride, int64_t width, int64_t height, const ht_params *p)
{
  if (!ctx)
    return HT_ERR_INVALID_ARGUMENT;
  ctx->msg[0] = '\0';
  if (!p)
    return fail(ctx, HT_ERR_INVALID_ARGUMENT, "no parameters");
  ht_image iin = { width, height, in_stride, 1, HT_FORMAT_U16, (void *)(uintptr_t)in };
  ht_image iout = { width, height, out_stride, 1, HT_FORMAT_U8, out };
  ht_status s = check_image(ctx, &iin, "input", false);
  if (s == HT_OK)
    s = check_image(ctx, &iout, "output", true);
  ht_job job;
  if (s == HT_OK)
    s = prepare_job(ctx, p, &job);
  if (s != HT_OK)
    return s;
  ht_rows rows = { 0 };
  rows.width = width;
  rows.height = height;
  rows.load = load_row;
  rows.store = store_row;
  rows.in = (const uint8_t *)in;
  rows.in_stride = in_stride;
  rows.in_channels = 1;
  rows.in_channel = 0;
  rows.in_format = HT_FORMAT_U16;
  rows.out = out;
  rows.out_stride = out_stride;
  rows.out_channels = 1;
  rows.out_format = HT_FORMAT_U8;
  rows.levels = p->levels;
  rows_set_lut(&rows, true);
  return run_job(ctx, &job, &rows, p->variant);
}

static void copy_alpha(const ht_image *in, ht_image *out)
{
  int ci = in->channels - 1, co = out->channels - 1;
  for (int64_t y = 0; y < in->height; y++) {
    const uint8_t *ri = (const uint8_t *)in->data + (size_t)y * in->stride;
    uint8_t *ro = (uint8_t *)out->data + (size_t)y * out->stride;
    for (int64_t x = 0; x < in->width; x++) {
      size_t ii = (size_t)x * (size_t)in->channels + (size_t)ci;
      size_t io = (size_t)x * (size_t)out->channels + (size_t)co;
      int32_t a;
      switch (in->format) {
      case HT_FORMAT_U8: a = ht_fx_from_u8(ri[ii]); break;
      case HT_FORMAT_U16: a = ((const uint16_t *)(const void *)ri)[ii]; break;
      default: a = fx_from_f32(((const float *)(const void *)ri)[ii]); break;
      }
      if (out->format == HT_FORMAT_U8)
        ro[io] = (uint8_t)((a + 128) / 257);
      else
        ((uint16_t *)(void *)ro)[io] = (uint16_t)a;
    }
  }
}

ht_status ht_run(ht_context *ctx, const ht_image *in, ht_image *out, const ht_params *p)
{
  if (!ctx)
    return HT_ERR_INVALID_ARGUMENT;
  ctx->msg[0] = '\0';
  if (!p)
    return fail(ctx, HT_ERR_INVALID_ARGUMENT, "no parameters");
  ht_status s = check_image(ctx, in, "input", false);
  if (s == HT_OK)
    s = check_image(ctx, out, "output", true);
  if (s != HT_OK)
    return s;
  if (in->width != out->width || in->height != out->height)
    return fail(ctx, HT_ERR_INVALID_ARGUMENT, "output is %lldx%lld but input is %lldx%lld",
                (long long)out->width, (long long)out->height, (long long)in->width, (long long)in->height);
  int alpha = p->alpha ? 1 : 0;
  int colors = in->channels - alpha;
  if (colors < 1)
    return fail(ctx, HT_ERR_INVALID_ARGUMENT, "input has an alpha channel only");
  if ((int)p->color < 0 || p->color > HT_COLOR_PER_CHANNEL)
    return fail(ctx, HT_ERR_INVALID_ARGUMENT, "unknown colour mode %d", (int)p->color);
  bool luma = p->color == HT_COLOR_LUMA && colors >= 3;
  int planes = luma ? 1 : colors;
  if (p->color == HT_COLOR_LUMA && colors == 2)
    return fail(ctx, HT_ERR_INVALID_ARGUMENT, "input has 2 channels: set alpha for gray+alpha");
  int want = planes + (alpha && out->format != HT_FORMAT_BIT1 ? 1 : 0);
  if (p->color == HT_COLOR_LUMA && colors == 1)
    planes = 1;
  if (out->channels != want)
    return fail(ctx, HT_ERR_INVALID_ARGUMENT, "output needs %d channel(s), has %d", want, out->channels);
  if (out->format == HT_FORMAT_BIT1 && (p->levels != 2 || planes != 1))
    return fail(ctx, HT_ERR_INVALID_ARGUMENT, "1-bit output needs levels 2 and a single plane");
  const uint8_t *ib = in->data, *ie = ib + (size_t)(in->height - 1) * in->stride +
                                          ht_format_row_bytes(in->format, in->width, in->channels);
  const uint8_t *ob = out->data, *oe = ob + (size_t)(out->height - 1) * out->stride +
                                           ht_format_row_bytes(out->format, out->width, out->channels);
  if (ib < oe && ob < ie)
    return fail(ctx, HT_ERR_INVALID_ARGUMENT, "output overlaps input");
  ht_job job;
  s = prepare_job(ctx, p, &job);
  if (s != HT_OK)
    return s;
  if (in->format == HT_FORMAT_F32 && (s = scan_floats(ctx, in)) != HT_OK)
    return s;

  for (int c = 0; c < planes; c++) {
    ht_rows rows = { 0 };
    rows.width = in->width;
    rows.height = in->height;
    rows.load = load_row;
    rows.store = store_row;
    rows.in = in->data;
    rows.in_stride = in->stride;
    rows.in_channels = in->channels;
    rows.in_channel = luma ? -1 : c;
    rows.in_format = in->format;
    rows.out = out->data;
    rows.out_stride = out->stride;
    rows.out_channels = out->channels;
    rows.out_channel = c;
    rows.out_format = out->format;
    rows.levels = p->levels;
    rows_set_lut(&rows, false);
    job.base = (double)c / planes;
    job.span = 1.0 / planes;
    s = run_job(ctx, &job, &rows, p->variant);
    if (s != HT_OK)
      return s;
  }
  if (alpha && out->format != HT_FORMAT_BIT1)
    copy_alpha(in, out);
  if (ctx->progress)
    ctx->progress(1.0, ctx->progress_user);
  return HT_OK;
}
