/* halftone:dither — exact error-diffusion halftoning as a GEGL operation.
 *
 * This file follows the layout of GEGL's own operations: the property
 * block below is read several times by gegl-op.h (to declare the
 * properties struct, register the enums and install the GParamSpecs),
 * the code after #else is the operation itself.
 *
 * The error diffusion is done by libhalftone (core/); this file holds
 * the properties and the GEGL glue, halftone-dither-run.c the runs of the
 * core over the buffers. Error diffusion is global (every pixel depends
 * on all pixels above and to its left), so the operation computes every
 * row from the top of the input down to the last row asked for, in bands
 * of rows where it can. Its output has the input's format; a run that
 * fails for any reason hands on the input itself, with a warning that
 * says why.
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
#include "halftone-dither-run.h"

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

/* The whole run, in place of GeglOperationFilter's process: the output
 * buffer is only made once the first rows of the halftone are there, and
 * on any failure the input buffer itself is the output. */
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
  ht_params            params;
  gchar                why[512] = "";

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
    return halftone_pass_through (context, input);

  make_plan (operation, &plan);
  if (!get_params (o, &plan, &params, why, sizeof why))
    {
      g_object_set_data (G_OBJECT (operation), "halftone-notice", NULL);
      halftone_warn_pass_through (operation, why);
      return halftone_pass_through (context, input);
    }
  return halftone_process (operation, context, input, &plan, &params, (ht_backend) o->backend, o->threads,
                           &area, &roi);
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
