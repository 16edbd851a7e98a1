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

/* The properties are the library's parameters (ht_param_info: name,
 * type, range, default, label, help, and when GIMP shows each), printed
 * by gen-op-properties.c at build time into the build folder's
 * halftone-dither-properties.h and included below (`space` too: the
 * library decodes linear light itself, core/shared/srgb.h). Each
 * property is the parameter of that name, '-' read as '_' in C
 * (o->max_rounds). */

/* The enums of the choice parameters (algorithm, init, schedule,
 * color-mode, backend) are the library's lists (ht_choices), registered
 * at run time: their values are the library's enum values, their nicks
 * the library's names ("floyd-steinberg", "cuda", "per-channel": what
 * gegl graphs and GIMP presets store), their labels the library's,
 * translated. A filter added to core/filters.c appears here by itself.
 * gegl-op.h reads this block several times and calls TYPE_get_type() for
 * each property_enum; the guard keeps one definition of those
 * functions. */
#ifndef HALFTONE_DITHER_LIBRARY_ENUMS
#define HALFTONE_DITHER_LIBRARY_ENUMS

#include "halftone.h"

static GType
halftone_register_list (const gchar *type_name, ht_param_id id)
{
  int               n = 0;
  const ht_choice  *c = ht_choices (ht_param_info (id)->list, &n);
  GEnumValue       *values = g_new0 (GEnumValue, (gsize) n + 1); /* kept: GLib keeps a pointer */

  for (int i = 0; i < n; i++)
    {
      values[i].value      = c[i].value;
      values[i].value_name = dgettext (GETTEXT_PACKAGE, c[i].label);
      values[i].value_nick = c[i].name;
    }
  return g_enum_register_static (type_name, values);
}

/* One for each choice parameter (the generated file's first part):
 * TypeName (HalftoneColorMode) is the type of the property's field,
 * type_name_get_type() registers it. */
#define HALFTONE_LIST_TYPE(type_name, TypeName, id)                                \
  typedef int TypeName;                                                           \
  static GType                                                                    \
  type_name##_get_type (void)                                                     \
  {                                                                               \
    static gsize type = 0;                                                        \
                                                                                  \
    if (g_once_init_enter (&type))                                                \
      g_once_init_leave (&type, halftone_register_list (#TypeName, (ht_param_id) id)); \
    return (GType) type;                                                          \
  }

#define HALFTONE_OP_LIST_TYPES
#include "halftone-dither-properties.h"
#undef HALFTONE_OP_LIST_TYPES
#undef HALFTONE_LIST_TYPE
#endif /* HALFTONE_DITHER_LIBRARY_ENUMS */

/* Every parameter of the library, in the dialog's order (its groups). */
#include "halftone-dither-properties.h"

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

#include <math.h>
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

  /* the stored values whatever the space: the library turns them into
   * linear light itself (ht_params.space), as the CLI's runs do */
  if (color)
    in_model = alpha ? "R'G'B'A" : "R'G'B'";
  else
    in_model = alpha ? "Y'A" : "Y'";

  /* The planes the library makes of this input (ht_output_layout): one
   * gray plane (luminance mode turns colour into one) gives gray, the
   * others the input's model (cmyk's inks are shown as RGB, run_planes).
   * Where the colour mode does not fit the input the run fails and
   * passes the input on; the formats stay the input's. */
  {
    ht_params shape;
    ht_layout layout;

    ht_params_init (&shape);
    shape.alpha = alpha;
    if (ht_params_set_number (&shape, HT_PARAM_COLOR, o->color_mode, NULL, 0) == HT_OK &&
        ht_output_layout (&shape, (color ? 3 : 1) + (alpha ? 1 : 0), FALSE, &layout) == HT_OK &&
        layout.planes == 1)
      out_model = alpha ? "Y'A" : "Y'";
    else
      out_model = in_model;
  }

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

/* The number that a property of a parameter holds: an int, a double, a
 * switch (0 or 1) or an enum's value. */
static gdouble
property_number (const GValue *value)
{
  switch (G_TYPE_FUNDAMENTAL (G_VALUE_TYPE (value)))
    {
    case G_TYPE_INT:
      return g_value_get_int (value);
    case G_TYPE_DOUBLE:
      return g_value_get_double (value);
    case G_TYPE_BOOLEAN:
      return g_value_get_boolean (value) ? 1.0 : 0.0;
    case G_TYPE_ENUM:
      return g_value_get_enum (value);
    default:
      return NAN; /* refused by the library */
    }
}

/* The run's parameters from the properties: every parameter of the
 * library's description (but the context's, backend and threads) from
 * the property of its name, set as the library sets it from a number or
 * text (ht_params_set_number: the algorithm through
 * ht_params_set_algorithm). A parameter the run does not use is set all
 * the same (ht_check refuses what the run cannot do, as before), but its
 * text is not parsed (the coefficients would replace the filter of the
 * algorithm) and a value the library refuses keeps the default: a
 * hidden property does not stop a run. FALSE with the reason in `why`
 * for a value the run uses that the library refuses (a bad custom
 * filter). */
static gboolean
get_params (GeglOperation *operation, const Plan *plan, ht_params *params, gchar *why, gsize why_size)
{
  GObject      *object    = G_OBJECT (operation);
  GObjectClass *klass     = G_OBJECT_GET_CLASS (object);
  gint          algorithm = 0, color = 0;

  ht_params_init (params);
  g_object_get (object, ht_param_info (HT_PARAM_ALGORITHM)->name, &algorithm,
                ht_param_info (HT_PARAM_COLOR)->name, &color, NULL);
  for (gint i = 0; i < HT_PARAM_COUNT; i++)
    {
      const ht_param *d        = ht_param_info ((ht_param_id) i);
      GParamSpec     *pspec    = g_object_class_find_property (klass, d->name);
      const gboolean  used     = ht_param_used ((ht_param_id) i, algorithm, (ht_color_mode) color);
      GValue          value    = G_VALUE_INIT;
      gchar           err[256] = "";
      ht_status       status;

      if (d->context || (d->type == HT_TYPE_TEXT && !used))
        continue;
      if (!pspec) /* the properties are made from the description */
        {
          g_snprintf (why, why_size, "the op has no property %s", d->name);
          return FALSE;
        }
      g_value_init (&value, G_PARAM_SPEC_VALUE_TYPE (pspec));
      g_object_get_property (object, d->name, &value);
      if (d->type == HT_TYPE_TEXT)
        status = ht_params_set_text (params, (ht_param_id) i,
                                     g_value_get_string (&value) ? g_value_get_string (&value) : "",
                                     err, sizeof err);
      else
        status = ht_params_set_number (params, (ht_param_id) i, property_number (&value), err, sizeof err);
      g_value_unset (&value);
      if (status != HT_OK && used)
        {
          g_snprintf (why, why_size, "%s", err[0] ? err : d->name);
          return FALSE;
        }
    }
  params->alpha = plan->alpha;
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
  if (!get_params (operation, &plan, &params, why, sizeof why))
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
    /* No gimp:menu-path: GIMP 3 would run the op on its main thread for
     * the whole image, with no way to stop it or show progress (a search
     * took GIMP away for half an hour). GIMP 3's menu entry is the
     * plug-in plug-in-halftone (ui/gimp3/), which runs this op in a
     * process of its own; scripts and gegl graphs use the op itself. */
    "title",           _("Halftone"),
    "categories",      "dither",
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
