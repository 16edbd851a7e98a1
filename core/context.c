/* The context, the parameters, and dispatch: which backend and which
 * implementation runs each plane. Everything an algorithm uses lies below
 * this file (job, rows, levels, pool); nothing below calls up into it. */
#include "color/color.h"
#include "cost.h"
#include "cuda_loader.h"
#include "describe.h"
#include "methods.h"
#include "filter.h"
#include "image.h"
#include "impl.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ht_context {
  ht_backend backend;
  int threads;
  ht_progress_fn progress;
  void *progress_user;
  ht_notice_fn notice;
  void *notice_user;
  ht_cuda *cuda;         /* opened on first GPU run                  */
  ht_pool *pool;         /* the threaded variants' workers, from the first run */
  bool cuda_tried;
  char cuda_msg[HT_MSG_MAX];
  bool cuda_said;     /* ht_notice_no_gpu given                       */
  int threads_said;   /* the thread count a notice was given for       */
  ht_backend last_backend;
  ht_variant last_variant;
  int64_t last_rounds;
  char msg[HT_MSG_MAX];
};

void ht_params_init(ht_params *p)
{
  if (!p)
    return;
  memset(p, 0, sizeof *p);
  p->variant = HT_VARIANT_AUTO;
  p->alpha = false;
  ht_params_defaults(p); /* the description's defaults (describe.c) */
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
const char *ht_context_gpu_detail(const ht_context *ctx) { return ctx && !ctx->cuda ? ctx->cuda_msg : ""; }

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
int64_t ht_context_last_rounds(const ht_context *ctx) { return ctx ? ctx->last_rounds : 0; }

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

static void notice(ht_context *ctx, const char *text)
{
  if (ctx->notice)
    ctx->notice(text, ctx->notice_user);
}

/* ---------------------------------------------------------- parameters */

static int plane_levels(const ht_params *p, int plane)
{
  return plane < HT_MAX_PLANES && p->plane_levels[plane] ? p->plane_levels[plane] : p->levels;
}

static unsigned caps_of(ht_method m)
{
  const method_row *r = ht_method_row(m);
  return r ? r->caps : 0;
}

/* Beyond this many threads a core, a notice says they only slow the run. */
#define HT_THREADS_PER_CORE_MAX 8

static bool is_search(ht_method m) { return caps_of(m) & HT_MCAP_SEARCH; }

/* A search whose estimate is beyond reason is refused before it starts,
 * unless forced: a 5 x 5 window on a large image runs for months with a
 * progress bar that hardly moves (HT_ESTIMATE_LIMIT_S, halftone.h). */
static ht_status check_cost(ht_context *ctx, const ht_params *p, int64_t width, int64_t height, int planes)
{
  if (!is_search(p->method) || p->run_long || ctx->backend == HT_BACKEND_CUDA)
    return HT_OK;
  const double s = ht_estimate_seconds(p, width, height, planes, ctx->threads);
  if (s <= HT_ESTIMATE_LIMIT_S)
    return HT_OK;
  char took[32], win[32] = "";
  ht_format_duration(s, took, sizeof took);
  if (p->method != HT_METHOD_DBS)
    snprintf(win, sizeof win, " with a %d x %d window", p->window, p->window);
  const char *opt = ht_param_info(HT_PARAM_RUN_LONG)->name;
  return fail(ctx, HT_ERR_UNSUPPORTED, "%s%s on %lldx%lld pixels%s is estimated to take %s on the CPU, over %.0f "
              "hour(s); nothing was computed (a smaller window, or %s (--%s), runs it)",
              ht_method_row(p->method)->choice.name, win, (long long)width, (long long)height,
              planes > 1 ? " in all its planes" : "", took, HT_ESTIMATE_LIMIT_S / 3600, opt, opt);
}

/* The colour modes whose planes run together (core/color/). */
static bool is_coupled(ht_color_mode c) { return c == HT_COLOR_PLANE_DEPENDENT || c == HT_COLOR_CMYK; }

/* The colour modes of `colors` (bit 1 << mode) as "a or b". */
static void color_names(unsigned colors, char *buf, size_t size)
{
  int n = 0, total = 0;
  const ht_choice *c = ht_choices(HT_LIST_COLOR_MODES, &n);
  for (int i = 0; i < n; i++)
    total += (colors >> c[i].value) & 1u;
  size_t len = 0;
  buf[0] = '\0';
  for (int i = 0, k = 0; i < n && len < size; i++)
    if ((colors >> c[i].value) & 1u) {
      int w = snprintf(buf + len, size - len, "%s%s", k == 0 ? "" : k == total - 1 ? " or " : ", ", c[i].name);
      if (w < 0)
        break;
      len += (size_t)w;
      k++;
    }
}

/* What plane-dependent colour error diffusion needs (docs/color.md), and
 * whether the method takes the colour mode. */
static ht_status check_color(ht_context *ctx, const ht_params *p, const method_row *r)
{
  bool coupled = p->randomize != 0.0;
  /* Users know their planes by colour, not by number. */
  static const char *const colours[2][HT_MAX_PLANES] = { { "red", "green", "blue", "fourth" },
                                                          { "cyan", "magenta", "yellow", "black" } };
  const char *const *plane = colours[p->color == HT_COLOR_CMYK];
  for (int i = 0; i < HT_MAX_PLANES; i++) {
    if (ht_pd_q12(p->plane_weights.forward[i]) + ht_pd_q12(p->plane_weights.backward[i]) > HT_Q_ONE)
      return fail(ctx, HT_ERR_INVALID_ARGUMENT, "inter-plane weights of the %s plane: forward %g and backward %g "
                  "add up to more than 1 (the filter takes what they leave)", plane[i],
                  p->plane_weights.forward[i], p->plane_weights.backward[i]);
    /* A weight has a non-zero default (describe.c) that other modes
     * ignore; a weight other than 0 and its default asks for coupling. */
    const double f = p->plane_weights.forward[i], b = p->plane_weights.backward[i];
    coupled |= (f != 0.0 && f != ht_param_info(HT_PARAM_INTERPLANE_FORWARD)->def) ||
               (b != 0.0 && b != ht_param_info(HT_PARAM_INTERPLANE_BACKWARD)->def);
  }
  const char *mode = ht_choice_by_value(HT_LIST_COLOR_MODES, (int)p->color)->name;
  if (is_coupled(p->color)) {
    if (p->method != HT_METHOD_ERROR_DIFFUSION && !(r->caps & HT_MCAP_COUPLED))
      return fail(ctx, HT_ERR_UNSUPPORTED, "colour mode %s is plane-dependent error diffusion; %s runs each plane on "
                  "its own (use --color per-channel)", mode, r->choice.name);
    return HT_OK;
  }
  if (!(r->colors & (1u << p->color))) {
    char names[128];
    color_names(r->colors, names, sizeof names);
    return fail(ctx, HT_ERR_INVALID_ARGUMENT, "method %s needs colour mode %s", r->choice.name, names);
  }
  if (coupled)
    return fail(ctx, HT_ERR_UNSUPPORTED, "inter-plane weights and randomize need colour mode plane-dependent or "
                "cmyk; %s runs each plane on its own", mode);
  return HT_OK;
}

/* The plane-dependent run's planes and weights in fixed point
 * (docs/arithmetic.md); the caller fills cj->rows. */
static void color_job_init(const ht_params *p, int planes, bool cmyk, ht_color_job *cj)
{
  memset(cj, 0, sizeof *cj);
  cj->planes = planes;
  cj->cmyk = cmyk;
  cj->black = (int32_t)(p->black * 65536.0 + 0.5);
  cj->amount = ht_pd_q12(p->randomize);
  for (int j = 0; j < planes; j++) {
    cj->levels[j] = plane_levels(p, j);
    /* the strength scales what goes to the other planes as it does the
     * filter (prepare_job) */
    const int32_t strength = HT_FX_STRENGTH_Q(p->strength);
    cj->forward[j] = j + 1 < planes ? ht_fx_scale_q(ht_pd_q12(p->plane_weights.forward[j]), strength) : 0;
    cj->backward[j] = j > 0 ? ht_fx_scale_q(ht_pd_q12(p->plane_weights.backward[j]), strength) : 0;
  }
}

/* What a method cannot do, from its capabilities (describe.c). */
static ht_status check_method(ht_context *ctx, const ht_params *p, const method_row *r)
{
  const char *name = r->choice.name;
  if (!(r->caps & HT_MCAP_LEVELS))
    for (int i = 0; i < HT_MAX_PLANES; i++)
      if (plane_levels(p, i) != 2)
        return i == 0 || p->levels != 2
                 ? fail(ctx, HT_ERR_UNSUPPORTED, "%s gives binary output only (levels 2), got levels %d", name,
                        p->levels)
                 : fail(ctx, HT_ERR_UNSUPPORTED, "%s gives binary output only (levels 2), got %d levels for plane %d",
                        name, plane_levels(p, i), i + 1);
  if (p->scan != HT_SCAN_RASTER && !(r->caps & HT_MCAP_SERPENTINE))
    return fail(ctx, HT_ERR_UNSUPPORTED, "%s has no scan order a serpentine could change; the serpentine scan "
                "does not apply", name);
  if ((r->caps & HT_MCAP_SEARCH) && p->schedule == HT_SCHEDULE_RASTER && ctx->threads > 1)
    return fail(ctx, HT_ERR_UNSUPPORTED, "the raster schedule of %s is sequential by definition (the paper's CPU "
                "reference); %d threads were asked for: use 1 or 0, or the parallel schedule", name, ctx->threads);
  return HT_OK;
}

/* Everything about the parameters that needs no image: the ranges of
 * the description (describe.c), then what goes together. */
static ht_status check_params(ht_context *ctx, const ht_params *p)
{
  const method_row *r = ht_method_row(p->method);
  if (!r)
    return fail(ctx, HT_ERR_INVALID_ARGUMENT, "unknown method %d", (int)p->method);
  if (ht_params_check_ranges(p, ctx->msg, HT_MSG_MAX) != HT_OK)
    return HT_ERR_INVALID_ARGUMENT;
  const ht_param *lv = ht_param_info(HT_PARAM_LEVELS);
  for (int i = 0; i < HT_MAX_PLANES; i++)
    if (p->plane_levels[i] != 0 && (p->plane_levels[i] < lv->min || p->plane_levels[i] > lv->max))
      return fail(ctx, HT_ERR_INVALID_ARGUMENT, "levels of plane %d must be %g..%g (or 0 for the common levels), got "
                  "%d", i + 1, lv->min, lv->max, p->plane_levels[i]);
  if (p->variant != HT_VARIANT_AUTO && !ht_impl_of(p->variant))
    return fail(ctx, HT_ERR_INVALID_ARGUMENT, "unknown variant %d", (int)p->variant);
  ht_status cs = check_color(ctx, p, r);
  if (cs != HT_OK)
    return cs;
  if (!ht_filter_check(&p->filter, ctx->msg))
    return HT_ERR_BAD_COEFFICIENTS;
  return check_method(ctx, p, r);
}

static ht_status prepare_job(ht_context *ctx, const ht_params *p, ht_job *job)
{
  ht_status s = check_params(ctx, p);
  if (s != HT_OK)
    return s;
  memset(job, 0, sizeof *job);
  job->method = is_coupled(p->color) ? HT_METHOD_PLANE_DEPENDENT : p->method;
  job->filter = p->filter;
  ht_filter_derive(&job->filter);
  /* the strength scales the weights, not the errors, so that every
   * backend and carried row meets the same integers (docs/arithmetic.md);
   * reach and delay stay the filter's */
  const int32_t strength = HT_FX_STRENGTH_Q(p->strength);
  for (int i = 0; i < job->filter.ntaps; i++)
    job->filter.taps[i].q = ht_fx_scale_q(job->filter.taps[i].q, strength);
  job->levels = p->levels;
  job->scan = p->scan;
  job->seed = p->seed;
  job->params = p;
  job->threads = ctx->threads > 0 ? ctx->threads : ht_online_cores();
  /* far more threads than cores only wait for each other (4096 on 2
   * cores ran 40 times slower); the bits are the same, so the run goes on
   * as asked, once said */
  if (ctx->threads > HT_THREADS_PER_CORE_MAX * ht_online_cores() && ctx->threads_said != ctx->threads) {
    char line[160];
    snprintf(line, sizeof line, "%d threads on %d core(s) run slower than one a core, with the same result "
             "(0 takes every core)", ctx->threads, ht_online_cores());
    notice(ctx, line);
    ctx->threads_said = ctx->threads;
  }
  if (is_search(p->method)) {
    ht_eye_init(&job->eye, &p->eye); /* check_params checked the eye */
    job->window = p->window;
    job->init = p->init;
    job->objective = p->method == HT_METHOD_DBS ? p->objective : HT_OBJECTIVE_LES;
    job->schedule = p->schedule;
    job->max_rounds = p->max_rounds;
    if (p->schedule == HT_SCHEDULE_RASTER)
      job->threads = 1;
  }
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

/* ------------------------------------------------------------ dispatch */

/* The implementation for the job on the context's backend: the asked-for
 * variant if it takes the job, else the backend's fastest that does;
 * under backend auto the GPU's where the cost model prefers it.
 * HT_ERR_UNSUPPORTED (ctx->msg set) when none can. */
static ht_status choose(ht_context *ctx, const ht_job *job, const ht_rows *rows, ht_variant variant,
                        const ht_impl **out)
{
  const ht_backend backend = ctx->backend;
  char why[HT_MSG_MAX];
  if (variant != HT_VARIANT_AUTO) {
    const ht_impl *impl = ht_impl_of(variant);
    if (impl->backend == HT_BACKEND_CUDA && backend == HT_BACKEND_CPU)
      return fail(ctx, HT_ERR_UNSUPPORTED, "variant %s runs on the GPU; backend cpu was asked for", impl->name);
    if (impl->backend == HT_BACKEND_CPU && backend == HT_BACKEND_CUDA)
      return fail(ctx, HT_ERR_UNSUPPORTED, "variant %s is a CPU variant; the cuda backend has its own", impl->name);
    if (!ht_impl_takes(impl, job, why))
      return fail(ctx, HT_ERR_UNSUPPORTED, "%s", why);
    *out = impl;
    return HT_OK;
  }
  if (backend != HT_BACKEND_CPU) {
    const ht_impl *gpu = ht_impl_default(HT_BACKEND_CUDA, job, why);
    if (!gpu && backend == HT_BACKEND_CUDA)
      return fail(ctx, HT_ERR_UNSUPPORTED, "backend cuda: %s", why);
    const double pixels = (double)rows->width * (double)rows->height;
    const bool open = ctx->cuda || ctx->cuda_tried;
    /* the search methods count on the GPU only where a driver shows
     * itself, so that machines without one stay quietly on the CPU */
    if (gpu && (backend == HT_BACKEND_CUDA ||
                (is_search(job->method)
                   ? ht_cuda_maybe_present() &&
                       ht_cost_prefers_gpu_search((int)job->method, job->window, pixels, job->threads, open)
                   : ht_cost_prefers_gpu(pixels, job->threads, open)))) {
      *out = gpu;
      return HT_OK;
    }
  }
  *out = ht_impl_default(HT_BACKEND_CPU, job, why);
  return *out ? HT_OK : fail(ctx, HT_ERR_UNSUPPORTED, "%s", why);
}

static ht_status run_job(ht_context *ctx, ht_job *job, const ht_rows *rows, ht_variant variant)
{
  const ht_impl *impl = NULL;
  ht_status s = choose(ctx, job, rows, variant, &impl);
  if (s != HT_OK)
    return s;
  if (impl->backend == HT_BACKEND_CUDA) {
    if (!ctx->cuda_tried) {
      ctx->cuda_tried = true;
      ctx->cuda = ht_cuda_open(ctx->cuda_msg);
    }
    const bool insist = ctx->backend == HT_BACKEND_CUDA || variant != HT_VARIANT_AUTO;
    if (!ctx->cuda) {
      if (insist)
        return fail(ctx, HT_ERR_NO_GPU, "backend cuda: %s", ctx->cuda_msg);
      if (ctx->cuda_msg[0] && !ctx->cuda_said) {
        /* the words a user needs; the module path and the driver's
         * details stay with ht_context_gpu_detail */
        notice(ctx, ht_notice_no_gpu());
        ctx->cuda_said = true; /* say it once per context */
      }
    } else {
      job->cuda = ctx->cuda;
      job->variant = impl->variant;
      s = impl->run(job, rows);
      if (s == HT_OK) {
        ctx->last_backend = HT_BACKEND_CUDA;
        ctx->last_variant = impl->variant;
        return s;
      }
      if (s == HT_ERR_CANCELLED || insist)
        return fail(ctx, s, "%s", job->msg[0] ? job->msg : ht_status_string(s));
      char line[HT_MSG_MAX + 64];
      snprintf(line, sizeof line, "GPU failed (%s); running on the CPU", job->msg);
      notice(ctx, line);
      job->msg[0] = '\0';
    }
    impl = ht_impl_default(HT_BACKEND_CPU, job, ctx->msg);
    if (!impl)
      return HT_ERR_UNSUPPORTED;
  }
  job->variant = impl->variant;
  s = impl->run(job, rows);
  if (s != HT_OK)
    return fail(ctx, s, "%s", job->msg[0] ? job->msg : ht_status_string(s));
  ctx->last_backend = HT_BACKEND_CPU;
  ctx->last_variant = impl->variant;
  return HT_OK;
}

/* ---------------------------------------------------------- entry points */

ht_status ht_check(ht_context *ctx, const ht_params *p)
{
  if (!ctx)
    return HT_ERR_INVALID_ARGUMENT;
  ctx->msg[0] = '\0';
  if (!p)
    return fail(ctx, HT_ERR_INVALID_ARGUMENT, "no parameters");
  ht_job job;
  ht_status s = prepare_job(ctx, p, &job);
  if (s != HT_OK)
    return s;
  /* the choice of backend auto needs the image's size; here an empty one
   * keeps auto's choice on the CPU, which takes whatever the GPU takes */
  const ht_rows none = { 0 };
  const ht_impl *impl;
  return choose(ctx, &job, &none, p->variant, &impl);
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
  ht_status s = ht_image_check(&iin, "input", false, ctx->msg);
  if (s == HT_OK)
    s = ht_image_check(&iout, "output", true, ctx->msg);
  if (s == HT_OK && ht_images_overlap(&iin, &iout))
    return fail(ctx, HT_ERR_INVALID_ARGUMENT, "output overlaps input");
  ht_job job;
  if (s == HT_OK)
    s = prepare_job(ctx, p, &job);
  if (s == HT_OK)
    s = check_cost(ctx, p, width, height, 1);
  if (s != HT_OK)
    return s;
  ht_rows rows;
  ht_rows_init(&rows, &iin, 0, &iout, 0, p->levels, true);
  if (p->space == HT_SPACE_LINEAR)
    ht_rows_set_linear(&rows, false, true);
  ht_color_job cj;
  if (job.method == HT_METHOD_PLANE_DEPENDENT) { /* one plane: plain error diffusion's bits */
    color_job_init(p, 1, false, &cj);
    cj.levels[0] = p->levels;
    cj.rows[0] = rows;
    job.color = &cj;
  }
  ctx->last_rounds = 0;
  s = run_job(ctx, &job, &rows, p->variant);
  if (s == HT_OK)
    ctx->last_rounds = job.rounds;
  return s;
}

/* ht_run and ht_run_band: the planes of `in` into `out`, the band's
 * carried rows where `band` is not NULL, streamed where `stream` is. */
static ht_status run_image(ht_context *ctx, const ht_image *in, ht_image *out, const ht_params *p,
                           const ht_band *band, const ht_stream *stream)
{
  if (!ctx)
    return HT_ERR_INVALID_ARGUMENT;
  ctx->msg[0] = '\0';
  if (!p)
    return fail(ctx, HT_ERR_INVALID_ARGUMENT, "no parameters");
  ht_status s = ht_image_check(in, "input", false, ctx->msg);
  if (s == HT_OK)
    s = ht_image_check(out, "output", true, ctx->msg);
  if (s != HT_OK)
    return s;
  if (in->width != out->width || in->height != out->height)
    return fail(ctx, HT_ERR_INVALID_ARGUMENT, "output is %lldx%lld but input is %lldx%lld",
                (long long)out->width, (long long)out->height, (long long)in->width, (long long)in->height);
  if ((int)p->color < 0 || p->color > HT_COLOR_CMYK)
    return fail(ctx, HT_ERR_INVALID_ARGUMENT, "unknown colour mode %d", (int)p->color);
  ht_layout layout;
  if (ht_output_layout(p, in->channels, out->format == HT_FORMAT_BIT1, &layout) != HT_OK)
    return fail(ctx, HT_ERR_INVALID_ARGUMENT, "%s", layout.why);
  const int alpha = p->alpha ? 1 : 0;
  const int colors = in->channels - alpha;
  const bool luma = p->color == HT_COLOR_LUMA && colors >= 3;
  const bool cmyk = layout.inks;
  int planes = layout.planes;
  if (out->channels != layout.channels)
    return fail(ctx, HT_ERR_INVALID_ARGUMENT, "output needs %d channel(s), has %d", layout.channels, out->channels);
  if (out->format == HT_FORMAT_BIT1 && (planes != 1 || plane_levels(p, 0) != 2))
    return fail(ctx, HT_ERR_INVALID_ARGUMENT, "1-bit output needs levels 2 and a single plane");
  if (stream && planes != 1)
    return fail(ctx, HT_ERR_UNSUPPORTED, "a streamed band has one plane (gray, or luma); this run has %d", planes);
  if (stream && stream->chunk < 1)
    return fail(ctx, HT_ERR_INVALID_ARGUMENT, "streamed band: chunk must be 1 or more columns, got %lld",
                (long long)stream->chunk);
  if (ht_images_overlap(in, out))
    return fail(ctx, HT_ERR_INVALID_ARGUMENT, "output overlaps input");
  if (band && band->y0 < 0)
    return fail(ctx, HT_ERR_INVALID_ARGUMENT, "band: first row %lld is negative", (long long)band->y0);
  if (band && is_coupled(p->color))
    return fail(ctx, HT_ERR_UNSUPPORTED, "colour mode %s runs the planes of the whole image together; it cannot run "
                "as a band", ht_choice_by_value(HT_LIST_COLOR_MODES, (int)p->color)->name);
  if (band && !(caps_of(p->method) & HT_MCAP_BANDS) && ht_method_row(p->method))
    return fail(ctx, HT_ERR_UNSUPPORTED, is_search(p->method) ? "%s searches the whole plane at once; it cannot run "
                "as a band" : "%s cannot run as a band", ht_method_row(p->method)->choice.name);
  ht_job job;
  s = prepare_job(ctx, p, &job);
  if (s == HT_OK)
    s = check_cost(ctx, p, in->width, in->height, planes);
  if (s != HT_OK)
    return s;
  if (in->format == HT_FORMAT_F32 && (s = ht_image_check_floats(in, ctx->msg)) != HT_OK)
    return s;

  const size_t carry = band ? (size_t)ht_job_carry_rows(&job) * (size_t)in->width : 0;
  ctx->last_rounds = 0;
  ht_color_job cj;
  if (job.method == HT_METHOD_PLANE_DEPENDENT) { /* every plane in one run (core/color/) */
    color_job_init(p, planes, cmyk, &cj);
    for (int c = 0; c < planes; c++) {
      ht_rows_init(&cj.rows[c], in, c < colors ? c : 0, out, c, cj.levels[c], false);
      if (p->space == HT_SPACE_LINEAR)
        ht_rows_set_linear(&cj.rows[c], cmyk, false);
    }
    job.color = &cj;
    job.levels = cj.levels[0];
    s = run_job(ctx, &job, &cj.rows[0], p->variant);
    if (s != HT_OK)
      return s;
    planes = 0; /* done */
  }
  for (int c = 0; c < planes; c++) {
    ht_rows rows;
    job.levels = plane_levels(p, luma ? 0 : c);
    ht_rows_init(&rows, in, luma ? -1 : c, out, c, job.levels, false);
    if (p->space == HT_SPACE_LINEAR)
      ht_rows_set_linear(&rows, false, false);
    job.plane = c;
    job.base = (double)c / planes;
    job.span = 1.0 / planes;
    if (band) {
      job.y0 = band->y0;
      job.carry_in = band->above ? band->above + (size_t)c * carry : NULL;
      job.carry_out = band->below ? band->below + (size_t)c * carry : NULL;
    }
    job.stream = stream;
    s = run_job(ctx, &job, &rows, p->variant);
    if (s != HT_OK)
      return s;
  }
  if (alpha && out->format != HT_FORMAT_BIT1)
    ht_rows_copy_alpha(in, out);
  ctx->last_rounds = job.rounds;
  if (ctx->progress)
    ctx->progress(1.0, ctx->progress_user);
  return HT_OK;
}

ht_status ht_check_or_cpu(ht_context *ctx, const ht_params *p, ht_backend *backend)
{
  if (!ctx || !backend)
    return HT_ERR_INVALID_ARGUMENT;
  const ht_backend asked = ctx->backend;
  *backend = asked;
  ht_status s = ht_check(ctx, p);
  if (s != HT_ERR_UNSUPPORTED || asked != HT_BACKEND_CUDA)
    return s;
  char refusal[HT_MSG_MAX];
  memcpy(refusal, ctx->msg, sizeof refusal);
  ctx->backend = HT_BACKEND_CPU;
  s = ht_check(ctx, p);
  ctx->backend = asked;
  if (s == HT_OK)
    *backend = HT_BACKEND_CPU;
  memcpy(ctx->msg, refusal, sizeof ctx->msg); /* what cuda refused: the note, or the refusal */
  return s == HT_OK ? HT_OK : HT_ERR_UNSUPPORTED;
}

ht_status ht_run(ht_context *ctx, const ht_image *in, ht_image *out, const ht_params *p)
{
  return run_image(ctx, in, out, p, NULL, NULL);
}

ht_status ht_run_band(ht_context *ctx, const ht_image *in, ht_image *out, const ht_params *p, const ht_band *band)
{
  if (ctx && !band) {
    ctx->msg[0] = '\0';
    return fail(ctx, HT_ERR_INVALID_ARGUMENT, "no band");
  }
  return run_image(ctx, in, out, p, band, NULL);
}

ht_status ht_run_band_stream(ht_context *ctx, const ht_image *in, ht_image *out, const ht_params *p,
                             const ht_stream *stream)
{
  if (ctx && !stream) {
    ctx->msg[0] = '\0';
    return fail(ctx, HT_ERR_INVALID_ARGUMENT, "no stream");
  }
  const ht_band band = { stream ? stream->y0 : 0, stream ? stream->above : NULL, stream ? stream->below : NULL };
  return run_image(ctx, in, out, p, &band, stream);
}

int ht_carry_rows(const ht_params *p)
{
  if (!p)
    return -1;
  char msg[HT_MSG_MAX];
  if (!ht_filter_check(&p->filter, msg))
    return -1;
  ht_filter f = p->filter;
  ht_filter_derive(&f);
  return f.reach_down;
}
