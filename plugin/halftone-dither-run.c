/* halftone:dither's runs of the core over GEGL buffers (the operation's
 * properties and GEGL glue are in halftone-dither.c).
 *
 * Error diffusion on the CPU, the common case in GIMP, runs in bands of
 * rows: each band is read from the input buffer in the format the core
 * takes, halftoned with the error rows the band above left (ht_run_band,
 * bit-identical to one run of the whole image), and written into the
 * output; the band memory is reused from band to band, so that no
 * whole-image copy is made. Only the rows down to the last one asked for
 * are computed. The other runs (the search methods, the coupled colour
 * modes, serpentine, backend cuda) need the whole image at once.
 *
 * Copyright (C) 2026 the GEGL Halftone authors. GPL-3.0-or-later.
 */
#include "ht-config.h"

#ifndef G_LOG_DOMAIN
#define G_LOG_DOMAIN "gegl-halftone"
#endif

/* GEGL's inline helpers do not build clean under -Wconversion. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wconversion"
#include <gegl.h>
#include <gegl-plugin.h>
#pragma GCC diagnostic pop

#include <string.h>

#include "halftone-dither-run.h"

/* ht_run, with the cmyk mode's ink planes (ht_output_layout: inks)
 * rendered as the RGB that the op outputs (GIMP layers are RGB) by
 * ht_inks_to_rgb. */
static ht_status
run_planes (ht_context *ctx, const ht_image *in, ht_image *out, const ht_params *params)
{
  ht_layout layout;
  ht_image  ink;
  ht_status status;

  if (ht_output_layout (params, in->channels, FALSE, &layout) != HT_OK || !layout.inks)
    return ht_run (ctx, in, out, params); /* which says what does not fit */
  ink = *out;
  ink.channels = layout.channels;
  ink.stride   = (size_t) out->width * (size_t) ink.channels * (out->format == HT_FORMAT_U16 ? 2u : 1u);
  ink.data     = g_try_malloc (ink.stride * (size_t) out->height);
  if (!ink.data)
    return HT_ERR_NO_MEMORY;
  status = ht_run (ctx, in, &ink, params);
  if (status == HT_OK)
    status = ht_inks_to_rgb (&ink, out);
  g_free (ink.data);
  return status;
}

/* Whether a run over `area` can start, and on which backend. FALSE,
 * with the reason in `why`, for what is known before any pixel is read:
 * settings the library refuses (ht_check), an image larger than the
 * library takes. Settings that backend cuda cannot run (e.g.
 * serpentine) but the CPU can run on the CPU, with a note in `why` (see
 * run_core; ht_check_or_cpu). A run that can start may still fail (out
 * of memory, a NaN pixel). */
static gboolean
run_can_start (const ht_params *params, const GeglRectangle *area, ht_backend asked,
               ht_backend *backend, gchar *why, gsize why_size)
{
  ht_context *ctx;
  ht_status   status;

  if (area->width > HT_MAX_SIDE || area->height > HT_MAX_SIDE ||
      (gint64) area->width * area->height > HT_MAX_PIXELS)
    {
      g_snprintf (why, why_size, "a %dx%d image is larger than the library takes "
                  "(%" G_GINT64_FORMAT " pixels a side, %" G_GINT64_FORMAT " in all)",
                  area->width, area->height, (gint64) HT_MAX_SIDE, (gint64) HT_MAX_PIXELS);
      return FALSE;
    }
  /* One thread: ht_check then starts no workers. */
  *backend = asked;
  ctx = ht_context_new ();
  if (!ctx)
    return TRUE; /* the run will say it */
  ht_context_set_backend (ctx, asked);
  ht_context_set_threads (ctx, 1);
  status = ht_check_or_cpu (ctx, params, backend);
  if (status != HT_OK || *backend != asked)
    g_snprintf (why, why_size, "%s", ht_context_message (ctx));
  ht_context_free (ctx);
  return status == HT_OK;
}

/* GIMP 3 shows in its window only the log messages of its own domains
 * and of "GEGL" (libgimpbase's list; warnings only in debug builds,
 * level MESSAGE always), so inside GIMP a line for the user also goes
 * there, from the main loop: GIMP's message dialogs are not for other
 * threads. Elsewhere (gegl, scripts) the op's own domain is enough. */
static gboolean
in_gimp (void)
{
  const gchar *name = g_get_prgname ();

  return name && g_str_has_prefix (name, "gimp");
}

/* GIMP re-runs the op at every change of a setting, so a text typed
 * into a field (the coefficients) fails at every keystroke until it
 * parses. GIMP hears a message only once the settings have rested for
 * TELL_GIMP_MS and the newest run still fails: one message when the user
 * stops typing, none when the text is finished in time. */
#define TELL_GIMP_MS 1500

static GMutex  gimp_pending_lock;
static guint   gimp_pending_source;
static gchar  *gimp_pending_text;

static gboolean
tell_gimp (gpointer unused)
{
  gchar *text;

  (void) unused;
  g_mutex_lock (&gimp_pending_lock);
  text                = gimp_pending_text;
  gimp_pending_text   = NULL;
  gimp_pending_source = 0;
  g_mutex_unlock (&gimp_pending_lock);
  if (text)
    g_log ("GEGL", G_LOG_LEVEL_MESSAGE, "%s", text);
  g_free (text);
  return G_SOURCE_REMOVE;
}

/* Replaces GIMP's waiting message by `text`, or drops it (NULL: a run
 * went well). */
static void
tell_gimp_later (const gchar *text)
{
  g_mutex_lock (&gimp_pending_lock);
  if (gimp_pending_source)
    g_source_remove (gimp_pending_source);
  /* gimp-console has no one typing: at once */
  gimp_pending_source = !text ? 0 : g_timeout_add (strstr (g_get_prgname (), "console") ? 0 : TELL_GIMP_MS,
                                                   tell_gimp, NULL);
  g_free (gimp_pending_text);
  gimp_pending_text = g_strdup (text);
  g_mutex_unlock (&gimp_pending_lock);
}

/* A run gave the halftone: nothing waits to be told. */
static void
told_nothing (GeglOperation *operation)
{
  g_object_set_data (G_OBJECT (operation), "halftone-warned", NULL);
  if (in_gimp ())
    tell_gimp_later (NULL);
}

/* Tells the user `text` (a warning on the op's log domain, and GIMP 3's
 * message once the settings rest), once per text until a run succeeds:
 * GIMP's preview runs the operation again at every change. */
static void
tell (GeglOperation *operation, const gchar *text)
{
  if (g_strcmp0 (g_object_get_data (G_OBJECT (operation), "halftone-warned"), text) == 0)
    return;
  g_warning ("%s", text);
  if (in_gimp ())
    tell_gimp_later (text);
  g_object_set_data_full (G_OBJECT (operation), "halftone-warned", g_strdup (text), g_free);
}

/* The input is passed on: says why. A program that runs the op in its
 * own process (the GIMP 2.10 plug-in) reads the reason of the last run
 * from the operation object's data "halftone-failed" (NULL after a run
 * that gave the halftone); "halftone-notice" is a note on a run that
 * gave it, and "halftone-no-gpu" (non-NULL) says the note is that the
 * GPU asked for was missing or failed. */
void
halftone_warn_pass_through (GeglOperation *operation, const gchar *why)
{
  gchar *text = g_strdup_printf ("halftone:dither: %s; passing the input through unchanged", why);

  g_object_set_data_full (G_OBJECT (operation), "halftone-failed", g_strdup (why), g_free);
  tell (operation, text);
  g_free (text);
}

typedef struct
{
  GeglOperation *operation;
  GThread       *thread;
  const gint    *cancel;
} ProgressData;

static bool
progress_cb (double fraction, void *user)
{
  ProgressData *pd = user;

  /* GEGL's progress signal is only emitted from the thread that runs the
   * operation; a parallel backend may call back from its workers. The
   * core already throttles the calls to a few per second. */
  if (g_thread_self () == pd->thread)
    gegl_operation_progress (pd->operation, fraction, "");
  /* A program that runs the op in its own process may cancel a run (the
   * GIMP 2.10 plug-in's preview, made stale by a newer change): it sets
   * the operation's data "halftone-cancel" to a gint that it sets to 1. */
  return !(pd->cancel && g_atomic_int_get (pd->cancel));
}

static void
notice_cb (const char *message, void *user)
{
  (void) user;
  g_info ("halftone:dither: %s", message);
}

/* The core context outlives a call. GIMP runs the operation again at
 * every change of the preview, and a context keeps the wavefront's worker
 * threads and, once a GPU run has opened it, the CUDA module with its
 * device context and buffers: making those again each time costs from a
 * millisecond (threads) to a large part of a second (CUDA). The process
 * keeps one idle context; a call takes it, or makes its own while another
 * call holds it (a context runs one job at a time). Where a main loop
 * runs (GIMP), a timer that looks once a second frees the idle context
 * after KEEP_SECONDS without use, so that its memory, on the GPU too,
 * goes back; HT_GEGL_KEEP_SECONDS sets other seconds, 0 keeps none. */
#define KEEP_SECONDS 30

static GMutex      kept_lock;
static ht_context *kept;       /* the idle context, or NULL          */
static gint64      kept_since; /* when it was put back (monotonic us) */
static guint       kept_timer; /* the timer that frees it, or 0       */

static guint
keep_seconds (void)
{
  const gchar *s = g_getenv ("HT_GEGL_KEEP_SECONDS");
  gchar       *end;
  guint64      v;

  if (!s || !*s)
    return KEEP_SECONDS;
  v = g_ascii_strtoull (s, &end, 10);
  return *end == '\0' && v <= 24 * 3600 ? (guint) v : KEEP_SECONDS;
}

static gboolean
drop_kept (gpointer user)
{
  ht_context *idle = NULL;
  gboolean    again;

  (void) user;
  g_mutex_lock (&kept_lock);
  if (kept && g_get_monotonic_time () - kept_since >= (gint64) keep_seconds () * G_USEC_PER_SEC)
    {
      idle = kept;
      kept = NULL;
    }
  again = kept != NULL;
  if (!again)
    kept_timer = 0;
  g_mutex_unlock (&kept_lock);
  if (idle)
    {
      g_debug ("halftone:dither: freed the idle core context");
      ht_context_free (idle);
    }
  return again ? G_SOURCE_CONTINUE : G_SOURCE_REMOVE;
}

static ht_context *
context_take (void)
{
  ht_context *ctx;

  g_mutex_lock (&kept_lock);
  ctx  = kept;
  kept = NULL;
  g_mutex_unlock (&kept_lock);
  if (!ctx && (ctx = ht_context_new ()))
    g_debug ("halftone:dither: made a core context");
  return ctx;
}

/* A context whose run failed is not kept: after a GPU fault its device
 * may stay unusable. */
static void
context_put_back (ht_context *ctx, gboolean ran_well)
{
  const guint seconds = keep_seconds ();

  if (!ctx)
    return;
  ht_context_set_progress (ctx, NULL, NULL); /* its data was the caller's */
  g_mutex_lock (&kept_lock);
  if (ran_well && seconds > 0 && !kept)
    {
      kept       = ctx;
      ctx        = NULL;
      kept_since = g_get_monotonic_time ();
      if (!kept_timer)
        kept_timer = g_timeout_add_seconds (1, drop_kept, NULL);
    }
  g_mutex_unlock (&kept_lock);
  ht_context_free (ctx);
}

/* Runs the core over the whole of `area` of `input` at once on
 * `backend` (`fallback`: why it is not the one asked for, or NULL): the
 * core's output (plan->core_format, rows of area->width pixels), or NULL
 * after a warning that says why (the caller then passes the input on). */
static guchar *
run_core (GeglOperation *operation, GeglBuffer *input, const GeglRectangle *area, const Plan *plan,
          const ht_params *params, ht_backend backend, gint threads, const gchar *fallback_why)
{
  ProgressData    pd = { operation, g_thread_self (),
                           g_object_get_data (G_OBJECT (operation), "halftone-cancel") };
  ht_context     *ctx;
  ht_image        in, out;
  ht_status       status;
  gsize           in_bpp  = (gsize) babl_format_get_bytes_per_pixel (plan->in_format);
  gsize           out_bpp = (gsize) babl_format_get_bytes_per_pixel (plan->core_format);
  guchar         *in_data, *out_data;
  gchar          *fallback = g_strdup (fallback_why);
  gboolean        gpu_fault = FALSE;

  in_data  = g_try_malloc ((gsize) area->width * (gsize) area->height * in_bpp);
  out_data = g_try_malloc ((gsize) area->width * (gsize) area->height * out_bpp);
  ctx = context_take ();
  if (!in_data || !out_data || !ctx)
    {
      gchar why_oom[64];

      g_snprintf (why_oom, sizeof why_oom, "out of memory for a %dx%d image", area->width, area->height);
      halftone_warn_pass_through (operation, why_oom);
      g_free (in_data);
      g_free (out_data);
      context_put_back (ctx, TRUE);
      return NULL;
    }

  gegl_buffer_get (input, area, 1.0, plan->in_format, in_data,
                   GEGL_AUTO_ROWSTRIDE, GEGL_ABYSS_NONE);

  in  = (ht_image) { area->width, area->height, (size_t) area->width * in_bpp, plan->in_channels,
                     plan->in_type, in_data };
  out = (ht_image) { area->width, area->height, (size_t) area->width * out_bpp, plan->out_channels,
                     plan->out_type, out_data };

  ht_context_set_backend (ctx, backend);
  ht_context_set_threads (ctx, threads);
  ht_context_set_progress (ctx, progress_cb, &pd);
  ht_context_set_notice (ctx, notice_cb, NULL);

  /* a search says what it will cost before it starts (a large window
   * takes days; the library refuses one over HT_ESTIMATE_LIMIT_S unless
   * run-long is set): as the progress message, and as the operation's
   * data "halftone-estimate" for a front end to read, since GeglNode's
   * "progress" signal carries the fraction alone */
  {
    gchar     said[128] = "", took[32];
    ht_layout layout;

    if ((ht_method_describe (params->method)->caps & HT_MCAP_SEARCH) &&
        ht_output_layout (params, in.channels, FALSE, &layout) == HT_OK)
      {
        ht_format_duration (ht_estimate_seconds (params, area->width, area->height, layout.planes, threads),
                            took, sizeof took);
        g_snprintf (said, sizeof said, "%s: estimated to take %s on the CPU",
                    ht_method_describe (params->method)->name, took);
      }
    g_object_set_data_full (G_OBJECT (operation), "halftone-estimate", g_strdup (said), g_free);
    gegl_operation_progress (operation, 0.0, said);
  }
  status = run_planes (ctx, &in, &out, params);
  /* An image editor has no use for a refusal here: backend cuda without
   * a usable GPU (or with one that fails) gives the CPU's result, which
   * is the same bits, and says so (the halftone CLI refuses instead). */
  if ((status == HT_ERR_NO_GPU || status == HT_ERR_GPU) && backend == HT_BACKEND_CUDA)
    {
      gpu_fault = status == HT_ERR_GPU;
      /* The user reads what happened in their words; the module's path
       * and the variables that steer it are for the log
       * (G_MESSAGES_DEBUG=gegl-halftone) and `halftone --verbose`. */
      g_info ("halftone:dither: backend cuda: %s", ht_context_message (ctx));
      g_free (fallback);
      fallback = g_strdup (gpu_fault ? "the NVIDIA GPU failed" : "no NVIDIA GPU found");
      ht_context_set_backend (ctx, HT_BACKEND_CPU);
      status = run_planes (ctx, &in, &out, params);
    }
  gegl_operation_progress (operation, 1.0, "");

  if (status == HT_ERR_CANCELLED && pd.cancel && g_atomic_int_get (pd.cancel))
    g_object_set_data_full (G_OBJECT (operation), "halftone-failed", g_strdup ("cancelled"), g_free);
  else if (status != HT_OK)
    halftone_warn_pass_through (operation, ht_context_message (ctx));
  else if (fallback)
    {
      static gint told_no_gpu = 0;
      /* the library's words for a missing GPU, the same in every front end */
      gchar      *text = !gpu_fault && !fallback_why
                           ? g_strdup_printf ("halftone:dither: %s", ht_notice_no_gpu ())
                           : g_strdup_printf ("halftone:dither: %s; computed on the CPU, same result", fallback);

      /* A program that runs the op in its own process reads the notice
       * of every run and says it as it sees fit (the GIMP 2.10 plug-in:
       * once). A missing GPU stays missing: the log and GIMP 3 hear it
       * once a process, not at every repeat or preview. */
      g_object_set_data_full (G_OBJECT (operation), "halftone-notice", g_strdup (text), g_free);
      g_object_set_data (G_OBJECT (operation), "halftone-no-gpu", GINT_TO_POINTER (backend == HT_BACKEND_CUDA &&
                                                                                 !fallback_why));
      if (!gpu_fault && status == HT_OK && backend == HT_BACKEND_CUDA && !fallback_why &&
          !g_atomic_int_compare_and_exchange (&told_no_gpu, 0, 1))
        g_info ("%s", text);
      else
        tell (operation, text);
      g_free (text);
    }
  else
    told_nothing (operation);
  g_free (fallback);
  /* after a GPU fault the device may stay unusable: not kept */
  context_put_back (ctx, status == HT_OK && !gpu_fault);
  g_free (in_data);
  if (status != HT_OK)
    {
      g_free (out_data);
      return NULL;
    }
  return out_data;
}

/* Float output: the exact fractions q / (levels - 1) rather than the
 * core's evenly spaced u16 values round(q * 65535 / (levels - 1)), which
 * this table maps back (alpha stays v / 65535). In linear light the
 * core's u16 values are the stored values nearest each level's light,
 * no fraction of the stored scale: they stay v / 65535. */
static gfloat *
float_levels (const ht_params *params)
{
  gfloat    *lut = g_try_new (gfloat, 65536);
  const gint lm  = params->levels - 1;

  if (lut)
    for (gint v = 0; v < 65536; v++)
      lut[v] = params->space == HT_SPACE_LINEAR ? (gfloat) v / 65535.0f
                                                : (gfloat) (gint) (((gint64) v * lm + 32767) / 65535) / (gfloat) lm;
  return lut;
}

/* Writes `part` of the output from `rows` (the core's levels for part's
 * first pixel, `stride` bytes a row), as plan->core_format or, for float
 * output, through `lut` (float_levels) into `band` (part->height rows of
 * part->width pixels) as plan->out_format. */
static void
put_levels (GeglBuffer *output, const Plan *plan, const gfloat *lut, const guchar *rows, gsize stride,
            const GeglRectangle *part, gfloat *band)
{
  const gint  ch     = plan->out_channels;
  const gint  colors = ch - (plan->alpha ? 1 : 0);
  const gsize n      = (gsize) part->width * (gsize) ch;

  if (!plan->float_out)
    {
      gegl_buffer_set (output, part, 0, plan->core_format, rows, (gint) stride);
      return;
    }
  for (gint y = 0; y < part->height; y++)
    {
      const guint16 *row  = (const guint16 *) (const void *) (rows + (gsize) y * stride);
      gfloat        *frow = band + (gsize) y * n;

      for (gsize i = 0; i < n; i += (gsize) ch)
        {
          for (gint c = 0; c < colors; c++)
            frow[i + (gsize) c] = lut[row[i + (gsize) c]];
          if (colors < ch)
            frow[i + (gsize) colors] = (gfloat) row[i + (gsize) colors] / 65535.0f;
        }
    }
  gegl_buffer_set (output, part, 0, plan->out_format, band, GEGL_AUTO_ROWSTRIDE);
}

/* Rows of a band: HT_GEGL_BAND_ROWS (1..65536, for tests and
 * measurements), else about 2 MiB of input a band, 16 to 256 rows: more
 * rows cost cache misses, fewer the fixed cost of a band (the core's
 * start, the buffers' tile look-ups). */
static gint
band_rows (gsize in_row_bytes, gint height)
{
  const gchar *s = g_getenv ("HT_GEGL_BAND_ROWS");
  gint64       rows = (gint64) ((2u << 20) / MAX (in_row_bytes, 1));

  if (s && *s)
    {
      gchar  *end;
      guint64 v = g_ascii_strtoull (s, &end, 10);

      if (*end == '\0' && v >= 1 && v <= 65536)
        return (gint) MIN ((gint64) v, (gint64) height);
    }
  rows = CLAMP (rows, 16, 256);
  return (gint) MIN (rows, (gint64) height);
}

/* Progress of one band mapped onto the whole run's. */
typedef struct
{
  ProgressData pd;
  gdouble      base, span;
} BandProgress;

static bool
band_progress_cb (double fraction, void *user)
{
  BandProgress *bp = user;

  return progress_cb (bp->base + fraction * bp->span, &bp->pd);
}

typedef enum
{
  BANDS_DONE,        /* the output is written                       */
  BANDS_FAILED,      /* said why; the input is to be passed on       */
  BANDS_UNSUPPORTED  /* the core runs these settings only at once:
                        nothing was written                         */
} BandsResult;

/* Error diffusion in bands of rows: each band read from `input` as
 * plan->in_format into the same band memory, run with the error rows
 * the band above left (ht_run_band, the same bits as one ht_run of the
 * whole area), its part of `roi` written into the context's output at
 * once. Rows below `roi` are not computed. */
static BandsResult
run_bands (GeglOperation *operation, GeglOperationContext *context, GeglBuffer *input, const Plan *plan,
           const ht_params *params, ht_backend backend, gint threads, const GeglRectangle *area,
           const GeglRectangle *roi)
{
  BandProgress bp = { { operation, g_thread_self (),
                        g_object_get_data (G_OBJECT (operation), "halftone-cancel") }, 0.0, 0.0 };
  const gsize  in_bpp   = (gsize) babl_format_get_bytes_per_pixel (plan->in_format);
  const gsize  out_bpp  = (gsize) babl_format_get_bytes_per_pixel (plan->core_format);
  const gsize  width    = (gsize) area->width;
  ht_layout    layout;
  const gint   planes   = ht_output_layout (params, plan->in_channels, FALSE, &layout) == HT_OK ? layout.planes : 0;
  const gint   carry    = ht_carry_rows (params);
  const gint   end      = roi->y + roi->height; /* the last row needed, + 1 */
  const gint   rows     = band_rows (width * in_bpp, end - area->y);
  const gsize  carry_n  = (gsize) MAX (carry, 0) * (gsize) planes * width;
  guchar      *in_band  = g_try_malloc (width * in_bpp * (gsize) rows);
  guchar      *out_band = g_try_malloc (width * out_bpp * (gsize) rows);
  gint32      *carried  = carry_n ? g_try_new (gint32, 2 * carry_n) : NULL;
  gfloat      *lut      = plan->float_out ? float_levels (params) : NULL;
  gfloat      *fband    = plan->float_out ? g_try_new (gfloat, (gsize) roi->width * (gsize) plan->out_channels
                                                                 * (gsize) rows) : NULL;
  ht_context  *ctx      = context_take ();
  GeglBuffer  *output   = NULL;
  ht_status    status   = HT_OK;
  BandsResult  result;

  if (!in_band || !out_band || (carry_n && !carried) || (plan->float_out && (!lut || !fband)) || !ctx)
    {
      gchar why[64];

      g_snprintf (why, sizeof why, "out of memory for a %dx%d image", area->width, area->height);
      halftone_warn_pass_through (operation, why);
      result = BANDS_FAILED;
      goto done;
    }

  ht_context_set_backend (ctx, backend);
  ht_context_set_threads (ctx, threads);
  ht_context_set_progress (ctx, band_progress_cb, &bp);
  ht_context_set_notice (ctx, notice_cb, NULL);
  gegl_operation_progress (operation, 0.0, "");

  for (gint y = area->y; y < end; y += rows)
    {
      const GeglRectangle band = { area->x, y, area->width, MIN (rows, end - y) };
      const gint          k    = (y - area->y) / rows;
      ht_image            in   = { band.width, band.height, width * in_bpp, plan->in_channels,
                                   plan->in_type, in_band };
      ht_image            out  = { band.width, band.height, width * out_bpp, plan->out_channels,
                                   plan->out_type, out_band };
      /* the carried rows alternate between the two halves */
      ht_band             hb   = { y - area->y,
                                   y == area->y || !carried ? NULL : carried + (gsize) ((k + 1) % 2) * carry_n,
                                   carried ? carried + (gsize) (k % 2) * carry_n : NULL };
      GeglRectangle       part;

      if (bp.pd.cancel && g_atomic_int_get (bp.pd.cancel))
        {
          status = HT_ERR_CANCELLED;
          break;
        }
      bp.base = (gdouble) (y - area->y) / (gdouble) (end - area->y);
      bp.span = (gdouble) band.height / (gdouble) (end - area->y);
      gegl_buffer_get (input, &band, 1.0, plan->in_format, in_band, (gint) (width * in_bpp), GEGL_ABYSS_NONE);
      status = ht_run_band (ctx, &in, &out, params, &hb);
      if (status != HT_OK)
        break;
      if (gegl_rectangle_intersect (&part, &band, roi))
        {
          if (!output)
            output = gegl_operation_context_get_target (context, "output");
          put_levels (output, plan, lut,
                      out_band + (gsize) (part.y - y) * width * out_bpp + (gsize) (part.x - area->x) * out_bpp,
                      width * out_bpp, &part, fband);
        }
    }
  if (status == HT_ERR_UNSUPPORTED && !output)
    result = BANDS_UNSUPPORTED;
  else if (status == HT_ERR_CANCELLED && bp.pd.cancel && g_atomic_int_get (bp.pd.cancel))
    {
      g_object_set_data_full (G_OBJECT (operation), "halftone-failed", g_strdup ("cancelled"), g_free);
      result = BANDS_FAILED;
    }
  else if (status != HT_OK)
    {
      halftone_warn_pass_through (operation, ht_context_message (ctx));
      result = BANDS_FAILED;
    }
  else
    {
      told_nothing (operation);
      result = BANDS_DONE;
    }
  if (result != BANDS_UNSUPPORTED)
    gegl_operation_progress (operation, 1.0, "");
done:
  context_put_back (ctx, status == HT_OK || result == BANDS_UNSUPPORTED);
  g_free (in_band);
  g_free (out_band);
  g_free (carried);
  g_free (lut);
  g_free (fband);
  return result;
}

gboolean
halftone_pass_through (GeglOperationContext *context, GObject *input)
{
  gegl_operation_context_take_object (context, "output", g_object_ref (input));
  return TRUE;
}

gboolean
halftone_process (GeglOperation *operation, GeglOperationContext *context, GObject *input, const Plan *plan,
                  const ht_params *params, ht_backend asked, gint threads, const GeglRectangle *area,
                  const GeglRectangle *roi)
{
  ht_backend backend;
  gchar      why[512] = "";
  guchar    *levels_data;
  gfloat    *lut = NULL, *band = NULL;
  gint       rows;

  g_object_set_data (G_OBJECT (operation), "halftone-failed", NULL);
  g_object_set_data (G_OBJECT (operation), "halftone-notice", NULL);
  g_object_set_data (G_OBJECT (operation), "halftone-no-gpu", NULL);
  if (!run_can_start (params, area, asked, &backend, why, sizeof why))
    {
      halftone_warn_pass_through (operation, why);
      return halftone_pass_through (context, input);
    }
  if (backend == asked && ht_params_run_in_bands (params, asked))
    switch (run_bands (operation, context, GEGL_BUFFER (input), plan, params, backend, threads, area, roi))
      {
      case BANDS_DONE:
        return TRUE;
      case BANDS_FAILED:
        return halftone_pass_through (context, input);
      case BANDS_UNSUPPORTED:
        break; /* the whole image at once, below */
      }

  /* The output buffer is only made once the halftone is there. */
  levels_data = run_core (operation, GEGL_BUFFER (input), area, plan, params, backend, threads,
                          backend != asked ? why : NULL);
  if (!levels_data)
    return halftone_pass_through (context, input);
  rows = band_rows ((gsize) roi->width * (gsize) plan->out_channels * sizeof (gfloat), roi->height);
  if (plan->float_out &&
      (!(lut = float_levels (params)) ||
       !(band = g_try_new (gfloat, (gsize) roi->width * (gsize) plan->out_channels * (gsize) rows))))
    {
      g_snprintf (why, sizeof why, "out of memory for a %dx%d image", area->width, area->height);
      halftone_warn_pass_through (operation, why);
      g_free (lut);
      g_free (levels_data);
      return halftone_pass_through (context, input);
    }
  {
    GeglBuffer *output = gegl_operation_context_get_target (context, "output");
    const gsize out_bpp = (gsize) babl_format_get_bytes_per_pixel (plan->core_format);
    const gsize stride  = (gsize) area->width * out_bpp;

    for (gint y = roi->y; y < roi->y + roi->height; y += rows)
      {
        const GeglRectangle part = { roi->x, y, roi->width, MIN (rows, roi->y + roi->height - y) };

        put_levels (output, plan, lut,
                    levels_data + (gsize) (y - area->y) * stride + (gsize) (roi->x - area->x) * out_bpp,
                    stride, &part, band);
      }
  }
  g_free (lut);
  g_free (band);
  g_free (levels_data);
  return TRUE;
}
