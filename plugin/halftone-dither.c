/* halftone:dither — exact error-diffusion halftoning as a GEGL operation.
 *
 * This file follows the layout of GEGL's own operations: the property
 * block below is read several times by gegl-op.h (to declare the
 * properties struct, register the enums and install the GParamSpecs),
 * the code after #else is the operation itself.
 *
 * The error diffusion is done by libhalftone (core/); this file only
 * converts between GEGL buffers and the core's image layout. Error
 * diffusion is global (every pixel depends on all pixels above and to its
 * left), so the operation always computes the whole input at once. Its
 * output has the input's format; a run that fails for any reason hands
 * on the input itself, with a warning that says why.
 *
 * Copyright (C) 2026 the GEGL Halftone authors. GPL-3.0-or-later.
 */
#include "ht-config.h"

/* The domain of the op's log messages (g_warning and friends), so that
 * they read "gegl-halftone-WARNING", not "(null)-WARNING"; before GLib,
 * whose headers fall back to no domain. gegl-op.h includes this file
 * again, hence the guard. */
#ifndef G_LOG_DOMAIN
#define G_LOG_DOMAIN "gegl-halftone"
#endif

#include <glib/gi18n-lib.h>

#ifdef GEGL_PROPERTIES

/* The algorithm, backend and colour-mode enums are the library's lists
 * (ht_choices in core/halftone.h), registered at run time: their values
 * are the library's enum values, their nicks the library's names
 * ("floyd-steinberg", "cuda", "per-channel": what gegl graphs and GIMP
 * presets store), their labels the library's, translated. A filter added
 * to core/filters.c appears here by itself. gegl-op.h reads this block
 * several times and calls TYPE_get_type() for each property_enum below;
 * the guard keeps one definition of those functions. */
#ifndef HALFTONE_DITHER_LIBRARY_ENUMS
#define HALFTONE_DITHER_LIBRARY_ENUMS

#include "halftone.h"

typedef int HalftoneAlgorithm; /* HT_LIST_ALGORITHMS: filter ids, then les, pes, dbs */
typedef int HalftoneInit;      /* ht_search_init     */
typedef int HalftoneSchedule;  /* ht_search_schedule */
typedef int HalftoneBackend;   /* ht_backend    */
typedef int HalftoneColorMode; /* ht_color_mode */

static GType
halftone_register_list (const gchar *type_name, ht_list list)
{
  int               n = 0;
  const ht_choice  *c = ht_choices (list, &n);
  GEnumValue       *values = g_new0 (GEnumValue, (gsize) n + 1); /* kept: GLib keeps a pointer */

  for (int i = 0; i < n; i++)
    {
      values[i].value      = c[i].value;
      values[i].value_name = dgettext (GETTEXT_PACKAGE, c[i].label);
      values[i].value_nick = c[i].name;
    }
  return g_enum_register_static (type_name, values);
}

#define HALFTONE_LIST_TYPE(type_name, TypeName, list)                         \
  static GType                                                               \
  type_name##_get_type (void)                                                \
  {                                                                          \
    static gsize type = 0;                                                   \
                                                                             \
    if (g_once_init_enter (&type))                                           \
      g_once_init_leave (&type, halftone_register_list (#TypeName, list));   \
    return (GType) type;                                                     \
  }

HALFTONE_LIST_TYPE (halftone_algorithm, HalftoneAlgorithm, HT_LIST_ALGORITHMS)
HALFTONE_LIST_TYPE (halftone_init, HalftoneInit, HT_LIST_INITS)
HALFTONE_LIST_TYPE (halftone_schedule, HalftoneSchedule, HT_LIST_SCHEDULES)
HALFTONE_LIST_TYPE (halftone_backend, HalftoneBackend, HT_LIST_BACKENDS)
HALFTONE_LIST_TYPE (halftone_color_mode, HalftoneColorMode, HT_LIST_COLOR_MODES)

#undef HALFTONE_LIST_TYPE
#endif /* HALFTONE_DITHER_LIBRARY_ENUMS */

/* The op's own list: whether the core is given the stored (gamma-encoded)
 * values or linear light. */
enum_start (halftone_space)
  enum_value (HALFTONE_SPACE_PERCEPTUAL, "perceptual", N_("Perceptual (gamma-encoded values)"))
  enum_value (HALFTONE_SPACE_LINEAR, "linear", N_("Linear light"))
enum_end (HalftoneSpace)

property_enum (algorithm, _("Algorithm"),
               HalftoneAlgorithm, halftone_algorithm,
               HT_FILTER_FLOYD_STEINBERG)
  description (_("Error filter that spreads each pixel's quantization error "
                 "to its unprocessed neighbours, or a search for the black and "
                 "white image that looks most like the original (LES, PES, DBS)"))

property_string (coefficients, _("Coefficients"), "- * 7; 3 5 1 / 16")
  description (_("Custom error filter: rows separated by ';', '*' marks the "
                 "current pixel, '-' the pixels before it, an optional "
                 "'/ divisor' at the end; for example \"- * 7; 3 5 1 / 16\""))
  ui_meta ("visible", "algorithm {custom}")

/* The search methods (docs/search.md): shown for them only. */
property_int (window, _("Window size"), 4)
  description (_("Side of the square windows whose black-and-white patterns "
                 "are searched; each step up makes LES about 30 times slower"))
  value_range (1, HT_SEARCH_WINDOW_MAX)
  ui_meta ("visible", "algorithm {les, pes}")

property_double (sigma, _("Eye model sigma"), 1.0)
  description (_("Standard deviation in pixels of the Gaussian that models "
                 "the eye: larger values look from farther away"))
  value_range (0.25, 4.0)
  ui_meta ("visible", "algorithm {les, pes, dbs}")

property_enum (init, _("Start from"),
               HalftoneInit, halftone_init,
               HT_INIT_FLOYD_STEINBERG)
  description (_("The image the search starts from: Floyd-Steinberg error "
                 "diffusion (fewer rounds) or random dither from the seed"))
  ui_meta ("visible", "algorithm {les, pes, dbs}")

property_enum (schedule, _("Schedule"),
               HalftoneSchedule, halftone_schedule,
               HT_SCHEDULE_PARALLEL)
  description (_("Order of the windows: parallel blocks on every core, or "
                 "raster order on one (the paper's sequential reference)"))
  ui_meta ("visible", "algorithm {les, pes, dbs}")

property_int (max_rounds, _("Maximum rounds"), 0)
  description (_("Stop the search after this many rounds (0: when a round "
                 "changes nothing)"))
  value_range (0, 1000000)
  ui_range (0, 50)
  ui_meta ("visible", "algorithm {les, pes, dbs}")

property_int (levels, _("Levels"), 2)
  description (_("Number of output levels per channel (2 gives pure black and white)"))
  value_range (2, 256)
  ui_range (2, 16)

property_enum (color_mode, _("Color mode"),
               HalftoneColorMode, halftone_color_mode,
               HT_COLOR_LUMA)
  description (_("Halftone the luminance of a color image (gray output), "
                 "every color channel on its own, the channels together "
                 "(plane-dependent: less grain), or CMYK inks shown as RGB"))

/* Plane-dependent colour (docs/color.md): shown for the modes that use
 * them, as GEGL's newsprint op shows its per-plane properties. */
property_double (interplane_forward, _("Inter-plane weight, forward"), 0.0)
  description (_("Share of each color plane's error passed to the next "
                 "plane of the same pixel: dots of different colors stop "
                 "piling up on the same pixels (0.2 is a good start)"))
  value_range (0.0, 1.0)
  ui_meta ("visible", "color-mode {plane-dependent, cmyk}")

property_double (interplane_backward, _("Inter-plane weight, backward"), 0.0)
  description (_("Share of each color plane's error passed back to the "
                 "previous plane of the next pixel; forward plus backward "
                 "may not exceed 1"))
  value_range (0.0, 1.0)
  ui_meta ("visible", "color-mode {plane-dependent, cmyk}")

property_double (randomize, _("Randomize filter"), 0.0)
  description (_("Perturb the error filter's weights per pixel by up to "
                 "this much (their sum kept), which breaks periodic patterns"))
  value_range (0.0, 1.0)
  ui_meta ("visible", "color-mode {plane-dependent, cmyk}")

property_int (seed, _("Random seed"), 0)
  description (_("Key of the random numbers (the filter perturbation of "
                 "plane-dependent color, the random start of a search); the "
                 "same seed gives the same image"))
  value_range (0, G_MAXINT)

property_double (black, _("Black generation"), 1.0)
  description (_("Share of the gray common to cyan, magenta and yellow that "
                 "is printed with black ink"))
  value_range (0.0, 1.0)
  ui_meta ("visible", "color-mode {cmyk}")

property_enum (space, _("Space"),
               HalftoneSpace, halftone_space,
               HALFTONE_SPACE_PERCEPTUAL)
  description (_("Dither the gamma-encoded values as stored in image files "
                 "(like the halftone command-line tool), or linear light"))

property_boolean (serpentine, _("Serpentine scan"), FALSE)
  description (_("Process every other row right to left, which breaks up "
                 "directional artifacts (sequential, CPU only)"))

property_enum (backend, _("Backend"),
               HalftoneBackend, halftone_backend,
               HT_BACKEND_AUTO)
  description (_("Where the error diffusion runs; every backend gives the "
                 "same result, bit for bit"))

property_int (threads, _("Threads"), 0)
  description (_("CPU threads to use (0 = all cores)"))
  value_range (0, 1024)
  ui_range (0, 64)

#else

#define GEGL_OP_FILTER
#define GEGL_OP_NAME     halftone_dither
#define GEGL_OP_C_SOURCE halftone-dither.c
/* The module entry points are written below, so that the translation
 * domain is bound before GEGL reads any label. */
#define GEGL_OP_BUNDLE

/* GEGL's inline helpers do not build clean under -Wconversion; they are
 * included here first, quietly, and the include guards keep them so. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wconversion"
#include <gegl.h>
#include <gegl-plugin.h>
#pragma GCC diagnostic pop

#include <gegl-op.h>
#include <operation/gegl-operation-context.h>

#include <string.h>

#include "halftone.h"

/* The whole composition of the reference test: a gray ramp, dithered with
 * the default properties. The hash below was computed by running it
 * (build/tests/gegl/test-gegl-op --print-reference-hash). */
static const gchar reference_composition[] =
  "<?xml version='1.0' encoding='UTF-8'?>"
  "<gegl>"
  "  <node operation='halftone:dither'/>"
  "  <node operation='gegl:crop' width='256' height='64'/>"
  "  <node operation='gegl:linear-gradient' start-x='0' start-y='0'"
  "        end-x='256' end-y='0' start-color='black' end-color='white'/>"
  "</gegl>";

/* What the core is given and what it gives back, for one input format. */
typedef struct
{
  const Babl *in_format;   /* what the input is converted to          */
  const Babl *out_format;  /* the halftone's own format, converted to
                              the input's for the output             */
  const Babl *core_format; /* what the core writes (u8 or u16)        */
  ht_format   in_type;
  ht_format   out_type;
  int         in_channels;
  int         out_channels;
  gboolean    alpha;
  gboolean    float_out;   /* output levels as floats from u16 levels */
} Plan;

static void
make_plan (GeglOperation *operation, Plan *plan)
{
  GeglProperties *o      = GEGL_PROPERTIES (operation);
  const Babl     *source = gegl_operation_get_source_format (operation, "input");
  const Babl     *space  = source ? babl_format_get_space (source) : NULL;
  gboolean        linear = o->space == HALFTONE_SPACE_LINEAR;
  gboolean        alpha  = FALSE;
  gboolean        color  = TRUE;
  const Babl     *type   = NULL;
  const gchar    *tname;
  const gchar    *in_model, *out_model;
  gchar           name[64];

  if (source)
    {
      gint n = babl_format_get_n_components (source);

      alpha = babl_format_has_alpha (source);
      color = n - (alpha ? 1 : 0) >= 3;
      type  = babl_format_get_type (source, 0);
    }

  /* 8- and 16-bit data stay integer (what the CLI does on PNG/PGM);
   * anything else goes through float. */
  if (type == babl_type ("u8"))
    {
      tname = "u8";
      plan->in_type = plan->out_type = HT_FORMAT_U8;
      plan->float_out = FALSE;
    }
  else if (type == babl_type ("u16"))
    {
      tname = "u16";
      plan->in_type = plan->out_type = HT_FORMAT_U16;
      plan->float_out = FALSE;
    }
  else
    {
      tname = "float";
      plan->in_type   = HT_FORMAT_F32;
      plan->out_type  = HT_FORMAT_U16;
      plan->float_out = TRUE;
    }

  if (color)
    in_model = linear ? (alpha ? "RGBA" : "RGB") : (alpha ? "R'G'B'A" : "R'G'B'");
  else
    in_model = linear ? (alpha ? "YA" : "Y") : (alpha ? "Y'A" : "Y'");

  /* Luminance mode turns colour into one gray plane (core/context.c). */
  if (color && o->color_mode == HT_COLOR_LUMA)
    out_model = linear ? (alpha ? "YA" : "Y") : (alpha ? "Y'A" : "Y'");
  else
    out_model = in_model;

  /* Linear light is always read as float: linear 8-bit values would
   * throw away most of the shadows before the diffusion sees them. */
  if (linear)
    plan->in_type = HT_FORMAT_F32;
  g_snprintf (name, sizeof name, "%s %s", in_model,
              plan->in_type == HT_FORMAT_F32 ? "float" : tname);
  plan->in_format = babl_format_with_space (name, space);
  g_snprintf (name, sizeof name, "%s %s", out_model, tname);
  plan->out_format = babl_format_with_space (name, space);
  g_snprintf (name, sizeof name, "%s %s", out_model,
              plan->out_type == HT_FORMAT_U8 ? "u8" : "u16");
  plan->core_format = babl_format_with_space (name, space);

  plan->alpha        = alpha;
  plan->in_channels  = babl_format_get_n_components (plan->in_format);
  plan->out_channels = babl_format_get_n_components (plan->out_format);
}

/* Fills `filter` from the properties. On a bad custom string writes the
 * parser's message into `err` and returns FALSE. */
static gboolean
get_filter (GeglProperties *o, ht_filter *filter, gchar *err, gsize err_size)
{
  const ht_filter *builtin;

  /* the property's values are the library's HT_LIST_ALGORITHMS values:
   * the ht_filter_id values, then the search methods (no filter) */
  if (o->algorithm == HT_ALGORITHM_LES || o->algorithm == HT_ALGORITHM_PES || o->algorithm == HT_ALGORITHM_DBS)
    return TRUE;
  if (o->algorithm == HT_FILTER_CUSTOM)
    return ht_filter_parse (o->coefficients ? o->coefficients : "",
                            filter, err, err_size) == HT_OK;

  builtin = ht_filter_builtin ((ht_filter_id) o->algorithm);
  if (!builtin) /* GObject lets only the enum's values through */
    {
      g_snprintf (err, err_size, "unknown algorithm %d", o->algorithm);
      return FALSE;
    }
  *filter = *builtin;
  return TRUE;
}

/* The run's parameters from the properties; FALSE with the reason in
 * `why` for a bad custom string. */
static gboolean
get_params (GeglProperties *o, const Plan *plan, ht_params *params, gchar *why, gsize why_size)
{
  gchar err[256] = "";

  ht_params_init (params);
  if (!get_filter (o, &params->filter, err, sizeof err))
    {
      g_snprintf (why, why_size, "coefficients \"%s\": %s", o->coefficients ? o->coefficients : "", err);
      return FALSE;
    }
  ht_params_set_algorithm (params, o->algorithm); /* the method; the filter stays */
  params->window     = o->window;
  params->eye.sigma  = o->sigma;
  params->init       = (ht_search_init) o->init;
  params->schedule   = (ht_search_schedule) o->schedule;
  params->max_rounds = o->max_rounds;
  params->levels = o->levels;
  params->scan   = o->serpentine ? HT_SCAN_SERPENTINE : HT_SCAN_RASTER;
  params->color  = (ht_color_mode) o->color_mode;
  params->alpha  = plan->alpha;
  for (gint j = 0; j < HT_MAX_PLANES; j++)
    {
      params->plane_weights.forward[j]  = o->interplane_forward;
      params->plane_weights.backward[j] = o->interplane_backward;
    }
  params->randomize = o->randomize;
  params->seed      = (uint64_t) o->seed;
  params->black     = o->black;
  return TRUE;
}

/* ht_run, with the cmyk mode's four ink planes rendered as the RGB that
 * the op outputs (GIMP layers are RGB): a channel's light is what its
 * ink and the black ink leave, R = max - min(max, C + K). */
static ht_status
run_planes (ht_context *ctx, const ht_image *in, ht_image *out, const ht_params *params)
{
  ht_image  ink;
  ht_status status;
  gsize     sb;
  gint      a;

  if (params->color != HT_COLOR_CMYK)
    return ht_run (ctx, in, out, params);
  sb  = out->format == HT_FORMAT_U16 ? 2 : 1;
  a   = params->alpha ? 1 : 0;
  ink = *out;
  ink.channels = 4 + a;
  ink.stride   = (size_t) out->width * (size_t) ink.channels * sb;
  ink.data     = g_try_malloc (ink.stride * (size_t) out->height);
  if (!ink.data)
    return HT_ERR_NO_MEMORY;
  status = ht_run (ctx, in, &ink, params);
  for (gint64 y = 0; status == HT_OK && y < out->height; y++)
    for (gint64 x = 0; x < out->width; x++)
      {
        const guint max = sb == 2 ? 65535u : 255u;
        const gsize  si  = (gsize) y * ink.stride / sb + (gsize) x * (gsize) ink.channels;
        const gsize  di  = (gsize) y * out->stride / sb + (gsize) x * (gsize) out->channels;

        for (gint c = 0; c < 3 + a; c++)
          {
            guint v;

            if (c == 3) /* alpha as it is */
              v = sb == 2 ? ((guint16 *) ink.data)[si + 4] : ((guint8 *) ink.data)[si + 4];
            else
              {
                guint i = sb == 2 ? ((guint16 *) ink.data)[si + (gsize) c] + ((guint16 *) ink.data)[si + 3]
                                  : ((guint8 *) ink.data)[si + (gsize) c] + ((guint8 *) ink.data)[si + 3];
                v = i >= max ? 0 : max - i;
              }
            if (sb == 2)
              ((guint16 *) out->data)[di + (gsize) c] = (guint16) v;
            else
              ((guint8 *) out->data)[di + (gsize) c] = (guint8) v;
          }
      }
  g_free (ink.data);
  return status;
}

/* Whether a run over `area` can start, and on which backend. FALSE,
 * with the reason in `why`, for what is known before any pixel is read:
 * a bad custom string, settings the library refuses (ht_check), an image
 * larger than the library takes. Settings that backend cuda cannot run
 * (e.g. serpentine) but the CPU can run on the CPU, with a note in
 * `why` (see run_core). A run that can start may still fail (out of
 * memory, a NaN pixel). */
static gboolean
run_can_start (GeglOperation *operation, const Plan *plan, const GeglRectangle *area,
               ht_params *params, ht_backend *backend, gchar *why, gsize why_size)
{
  GeglProperties *o = GEGL_PROPERTIES (operation);
  ht_context     *ctx;
  ht_status       status;

  if (!get_params (o, plan, params, why, why_size))
    return FALSE;
  if (area->width > HT_MAX_SIDE || area->height > HT_MAX_SIDE ||
      (gint64) area->width * area->height > HT_MAX_PIXELS)
    {
      g_snprintf (why, why_size, "a %dx%d image is larger than the library takes "
                  "(%" G_GINT64_FORMAT " pixels a side, %" G_GINT64_FORMAT " in all)",
                  area->width, area->height, (gint64) HT_MAX_SIDE, (gint64) HT_MAX_PIXELS);
      return FALSE;
    }
  /* One thread: ht_check then starts no workers. */
  *backend = (ht_backend) o->backend;
  ctx = ht_context_new ();
  if (!ctx)
    return TRUE; /* the run will say it */
  ht_context_set_backend (ctx, *backend);
  ht_context_set_threads (ctx, 1);
  status = ht_check (ctx, params);
  if (status != HT_OK)
    g_snprintf (why, why_size, "%s", ht_context_message (ctx));
  if (status == HT_ERR_UNSUPPORTED && *backend == HT_BACKEND_CUDA)
    {
      ht_context_set_backend (ctx, HT_BACKEND_CPU);
      if (ht_check (ctx, params) == HT_OK)
        {
          *backend = HT_BACKEND_CPU;
          status   = HT_OK; /* `why` keeps what cuda refused */
        }
    }
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

static gboolean
tell_gimp (gpointer text)
{
  g_log ("GEGL", G_LOG_LEVEL_MESSAGE, "%s", (const gchar *) text);
  return G_SOURCE_REMOVE;
}

/* Tells the user `text` (a warning on the op's log domain, and GIMP 3's
 * message), once per text until a run succeeds: GIMP's preview runs the
 * operation again at every change. */
static void
tell (GeglOperation *operation, const gchar *text)
{
  if (g_strcmp0 (g_object_get_data (G_OBJECT (operation), "halftone-warned"), text) == 0)
    return;
  g_warning ("%s", text);
  if (in_gimp ())
    g_idle_add_full (G_PRIORITY_DEFAULT_IDLE, tell_gimp, g_strdup (text), g_free);
  g_object_set_data_full (G_OBJECT (operation), "halftone-warned", g_strdup (text), g_free);
}

/* The input is passed on: says why. A program that runs the op in its
 * own process (the GIMP 2.10 plug-in) reads the reason of the last run
 * from the operation object's data "halftone-failed" (NULL after a run
 * that gave the halftone). */
static void
warn_pass_through (GeglOperation *operation, const gchar *why)
{
  gchar *text = g_strdup_printf ("halftone:dither: %s; passing the input through unchanged", why);

  g_object_set_data_full (G_OBJECT (operation), "halftone-failed", g_strdup (why), g_free);
  tell (operation, text);
  g_free (text);
}

/* The output has the input's own format, whatever the run does: the
 * halftone is converted into it (a luma halftone of a colour image has
 * equal colour channels), and on any failure the input buffer itself is
 * the output. A format that depended on the run's success could not be
 * chosen here, as some failures are only found while running (no usable
 * GPU, out of memory, a NaN pixel), and GEGL converts an operation's
 * output to the format announced here (the node's cache has it) — a gray
 * format would turn a failed run's colour input gray. */
static void
prepare (GeglOperation *operation)
{
  const Babl *source = gegl_operation_get_source_format (operation, "input");
  Plan        plan;

  make_plan (operation, &plan);
  gegl_operation_set_format (operation, "input", plan.in_format);
  gegl_operation_set_format (operation, "output", source ? source : plan.out_format);
}

static GeglRectangle
get_required_for_output (GeglOperation       *operation,
                         const gchar         *input_pad,
                         const GeglRectangle *roi)
{
  GeglRectangle result = *gegl_operation_source_get_bounding_box (operation, "input");

  /* An infinite plane cannot be diffused; ask for what was asked. */
  if (gegl_rectangle_is_infinite_plane (&result))
    return *roi;
  return result;
}

static GeglRectangle
get_cached_region (GeglOperation       *operation,
                   const GeglRectangle *roi)
{
  GeglRectangle result = *gegl_operation_source_get_bounding_box (operation, "input");

  if (gegl_rectangle_is_infinite_plane (&result))
    return *roi;
  return result;
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

/* Runs the core over `area` of `input`: the core's output (plan->
 * core_format, rows of area->width pixels), or NULL after a warning that
 * says why (the caller then passes the input on). */
static guchar *
run_core (GeglOperation *operation, GeglBuffer *input, const GeglRectangle *area, const Plan *plan)
{
  GeglProperties *o  = GEGL_PROPERTIES (operation);
  ProgressData    pd = { operation, g_thread_self (),
                           g_object_get_data (G_OBJECT (operation), "halftone-cancel") };
  ht_params       params;
  ht_backend      backend;
  ht_context     *ctx;
  ht_image        in, out;
  ht_status       status;
  gsize           in_bpp  = (gsize) babl_format_get_bytes_per_pixel (plan->in_format);
  gsize           out_bpp = (gsize) babl_format_get_bytes_per_pixel (plan->core_format);
  guchar         *in_data, *out_data;
  gchar           why[512] = "";
  gchar          *fallback = NULL;
  gboolean        gpu_fault = FALSE;

  g_object_set_data (G_OBJECT (operation), "halftone-failed", NULL);
  g_object_set_data (G_OBJECT (operation), "halftone-notice", NULL);
  if (!run_can_start (operation, plan, area, &params, &backend, why, sizeof why))
    {
      warn_pass_through (operation, why);
      return NULL;
    }
  if (backend != (ht_backend) o->backend)
    fallback = g_strdup (why);

  in_data  = g_try_malloc ((gsize) area->width * (gsize) area->height * in_bpp);
  out_data = g_try_malloc ((gsize) area->width * (gsize) area->height * out_bpp);
  ctx = context_take ();
  if (!in_data || !out_data || !ctx)
    {
      gchar why_oom[64];

      g_snprintf (why_oom, sizeof why_oom, "out of memory for a %dx%d image", area->width, area->height);
      warn_pass_through (operation, why_oom);
      g_free (in_data);
      g_free (out_data);
      context_put_back (ctx, TRUE);
      return NULL;
    }

  gegl_buffer_get (input, area, 1.0, plan->in_format, in_data,
                   GEGL_AUTO_ROWSTRIDE, GEGL_ABYSS_NONE);

  in.width     = area->width;
  in.height    = area->height;
  in.stride    = (size_t) area->width * in_bpp;
  in.channels  = plan->in_channels;
  in.format    = plan->in_type;
  in.data      = in_data;
  out.width    = area->width;
  out.height   = area->height;
  out.stride   = (size_t) area->width * out_bpp;
  out.channels = plan->out_channels;
  out.format   = plan->out_type;
  out.data     = out_data;

  ht_context_set_backend (ctx, backend);
  ht_context_set_threads (ctx, o->threads);
  ht_context_set_progress (ctx, progress_cb, &pd);
  ht_context_set_notice (ctx, notice_cb, NULL);

  gegl_operation_progress (operation, 0.0, "");
  status = run_planes (ctx, &in, &out, &params);
  /* An image editor has no use for a refusal here: backend cuda without
   * a usable GPU (or with one that fails) gives the CPU's result, which
   * is the same bits, and says so (the halftone CLI refuses instead). */
  if ((status == HT_ERR_NO_GPU || status == HT_ERR_GPU) && backend == HT_BACKEND_CUDA)
    {
      gpu_fault = status == HT_ERR_GPU;
      fallback  = g_strdup (ht_context_message (ctx));
      ht_context_set_backend (ctx, HT_BACKEND_CPU);
      status = run_planes (ctx, &in, &out, &params);
    }
  gegl_operation_progress (operation, 1.0, "");

  if (status == HT_ERR_CANCELLED && pd.cancel && g_atomic_int_get (pd.cancel))
    g_object_set_data_full (G_OBJECT (operation), "halftone-failed", g_strdup ("cancelled"), g_free);
  else if (status != HT_OK)
    warn_pass_through (operation, ht_context_message (ctx));
  else if (fallback)
    {
      gchar *text = g_strdup_printf ("halftone:dither: %s; computed on the CPU instead (the same result)",
                                     fallback);

      g_object_set_data_full (G_OBJECT (operation), "halftone-notice", g_strdup (text), g_free);
      tell (operation, text);
      g_free (text);
    }
  else
    g_object_set_data (G_OBJECT (operation), "halftone-warned", NULL);
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

/* Writes the part `roi` of the core's output `levels` (rows of
 * area->width pixels from area's corner) into `output`. Float output
 * gets the exact fractions q / (levels - 1) rather than the core's
 * evenly spaced u16 values, converted a band of rows at a time through
 * `band` (band_rows rows of roi->width pixels). */
static void
write_output (GeglBuffer *output, const Plan *plan, gint levels, const guchar *levels_data,
              const GeglRectangle *area, const GeglRectangle *roi, gfloat *band, gint band_rows)
{
  const gsize   out_bpp = (gsize) babl_format_get_bytes_per_pixel (plan->core_format);
  const gsize   stride  = (gsize) area->width * out_bpp;
  const guchar *first   = levels_data + (gsize) (roi->y - area->y) * stride +
                          (gsize) (roi->x - area->x) * out_bpp;
  const gint    lm      = levels - 1;
  const gint    colors  = plan->out_channels - (plan->alpha ? 1 : 0);
  const gsize   n       = (gsize) roi->width * (gsize) plan->out_channels;

  if (!plan->float_out)
    {
      gegl_buffer_set (output, roi, 0, plan->core_format, first, (gint) stride);
      return;
    }
  for (gint y0 = 0; y0 < roi->height; y0 += band_rows)
    {
      GeglRectangle part = { roi->x, roi->y + y0, roi->width, MIN (band_rows, roi->height - y0) };

      for (gint y = 0; y < part.height; y++)
        {
          const guint16 *row  = (const guint16 *) (const void *) (first + (gsize) (y0 + y) * stride);
          gfloat        *frow = band + (gsize) y * n;

          for (gsize i = 0; i < n; i++)
            {
              if ((gint) (i % (gsize) plan->out_channels) < colors)
                {
                  gint q = (gint) (((gint64) row[i] * lm + 32767) / 65535);
                  frow[i] = (gfloat) q / (gfloat) lm;
                }
              else
                frow[i] = row[i] / 65535.0f;
            }
        }
      gegl_buffer_set (output, &part, 0, plan->out_format, band, GEGL_AUTO_ROWSTRIDE);
    }
}

/* Hands the input buffer itself on as the output: the input's pixels in
 * the input's own format, whatever went wrong. */
static gboolean
pass_through (GeglOperationContext *context, GObject *input)
{
  gegl_operation_context_take_object (context, "output", g_object_ref (input));
  return TRUE;
}

/* The whole run, in place of GeglOperationFilter's process: the output
 * buffer is only made once the halftone is there, so that on any failure
 * the input buffer itself can be the output. */
static gboolean
operation_process (GeglOperation        *operation,
                   GeglOperationContext *context,
                   const gchar          *output_prop,
                   const GeglRectangle  *result,
                   gint                  level)
{
  GeglProperties      *o     = GEGL_PROPERTIES (operation);
  GObject             *input = gegl_operation_context_get_object (context, "input");
  const GeglRectangle *box   = gegl_operation_source_get_bounding_box (operation, "input");
  GeglRectangle        area, roi;
  Plan                 plan;
  guchar              *levels_data;
  gfloat              *band = NULL;
  gint                 band_rows = 0;

  (void) level;
  if (g_strcmp0 (output_prop, "output") != 0)
    {
      g_warning ("halftone:dither: asked for pad %s, which a filter does not have", output_prop);
      return FALSE;
    }
  if (!input || !box)
    {
      /* nothing connected: an empty output, as a filter gives */
      gegl_operation_context_get_target (context, "output");
      return TRUE;
    }
  /* An infinite plane cannot be diffused; do what was asked. */
  area = gegl_rectangle_is_infinite_plane (box) ? *result : *box;
  if (area.width <= 0 || area.height <= 0 || !gegl_rectangle_intersect (&roi, result, &area))
    return pass_through (context, input);

  make_plan (operation, &plan);
  levels_data = run_core (operation, GEGL_BUFFER (input), &area, &plan);
  if (levels_data && plan.float_out)
    {
      /* bands of about 1 MiB of floats */
      gsize row_bytes = (gsize) roi.width * (gsize) plan.out_channels * sizeof (gfloat);

      band_rows = (gint) CLAMP ((1 << 20) / row_bytes, 1, (gsize) roi.height);
      band = g_try_malloc (row_bytes * (gsize) band_rows);
      if (!band)
        {
          gchar why[64];

          g_snprintf (why, sizeof why, "out of memory for a %dx%d image", area.width, area.height);
          warn_pass_through (operation, why);
          g_clear_pointer (&levels_data, g_free);
        }
    }
  if (!levels_data)
    return pass_through (context, input);

  write_output (gegl_operation_context_get_target (context, "output"), &plan, o->levels, levels_data,
                &area, &roi, band, band_rows);
  g_free (band);
  g_free (levels_data);
  return TRUE;
}

static void
gegl_op_class_init (GeglOpClass *klass)
{
  GeglOperationClass       *operation_class = GEGL_OPERATION_CLASS (klass);

  operation_class->prepare                 = prepare;
  operation_class->process                 = operation_process;
  operation_class->get_required_for_output = get_required_for_output;
  operation_class->get_cached_region       = get_cached_region;
  /* Error diffusion is one global pass: split into tiles it would leave
   * seams. The core runs its own threads. */
  operation_class->threaded                = FALSE;
  operation_class->want_in_place           = FALSE;

  gegl_operation_class_set_keys (operation_class,
    "name",            "halftone:dither",
    "title",           _("Halftone (Error Diffusion)"),
    "categories",      "dither",
    "gimp:menu-path",  "<Image>/Filters/Distorts",
    "gimp:menu-label", _("Halftone (Error Diffusion)..."),
    "license",         "GPL3+",
    "reference-hash",  "bcc0292a118eff3c1cdc6431571fc40a",
    "reference-composition", reference_composition,
    "description",
    _("Turn a continuous-tone image into black and white dots (or a few "
      "levels) by error diffusion: Floyd–Steinberg and related filters, "
      "computed exactly on all CPU cores or an NVIDIA GPU"),
    NULL);
}

G_MODULE_EXPORT const GeglModuleInfo *
gegl_module_query (GTypeModule *module)
{
  (void) module;
  return &modinfo;
}

G_MODULE_EXPORT gboolean
gegl_module_register (GTypeModule *module)
{
  /* Labels and enum names are translated when the class is built, so
   * the catalog must be known before registering the type. */
  bindtextdomain (GETTEXT_PACKAGE, HT_LOCALEDIR);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  gegl_op_halftone_dither_register_type (module);
  return TRUE;
}

#endif
