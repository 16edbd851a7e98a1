/* The GIMP 2.10 plug-in's settings, their checks and their PDB form
 * (halftone-vals.h).
 *
 * Copyright (C) 2026 the GEGL Halftone authors. GPL-3.0-or-later.
 */
#include "ht-config.h"

#include <string.h>

#include <glib/gi18n-lib.h>

#include "halftone.h"
#include "halftone-vals.h"

#define MENU_PATH "<Image>/Filters/Distorts"

/* The operation's defaults, except the inter-plane weights: 0.2, which
 * the dialog offers as a start (the operation's 0 makes plane-dependent
 * colour the same as per-channel). */
const HalftoneVals halftone_defaults = {
  HT_FILTER_FLOYD_STEINBERG, "- * 7; 3 5 1 / 16", 2, HT_COLOR_LUMA, 0, FALSE, HT_BACKEND_AUTO, 0, 1,
  4, 1.0, HT_INIT_FLOYD_STEINBERG, HT_SCHEDULE_PARALLEL, 0,
  0,
  0.2, 0.2, 0.0, 1.0,
};

gboolean
halftone_is_search (gint algorithm)
{
  return algorithm == HT_ALGORITHM_LES || algorithm == HT_ALGORITHM_PES || algorithm == HT_ALGORITHM_DBS;
}

/* ------------------------------------------------------------ checks */

/* "0 floyd-steinberg, 1 jarvis-judice-ninke, ...": the accepted values,
 * for messages. */
static gchar *
list_values (ht_list list)
{
  GString         *s = g_string_new (NULL);
  gint             n = 0;
  const ht_choice *c = ht_choices (list, &n);

  for (gint i = 0; i < n; i++)
    g_string_append_printf (s, "%s%d %s", i ? ", " : "", c[i].value, c[i].name);
  return g_string_free (s, FALSE);
}

/* The message `format` (translated; %s: the accepted values, %d: the
 * value given) for a value that is not in the library's list. */
static gchar *
not_in_list (const gchar *format, ht_list list, gint value)
{
  gchar *values  = list_values (list);
  gchar *message = g_strdup_printf (format, values, value);

  g_free (values);
  return message;
}

static gboolean
fraction (gdouble f)
{
  return f >= 0.0 && f <= 1.0; /* false for NaN too */
}

gchar *
halftone_check_vals (const HalftoneVals *v)
{
  if (!ht_choice_by_value (HT_LIST_ALGORITHMS, v->algorithm))
    /* TRANSLATORS: %s: the accepted values ("0 auto, 1 cpu, 2 cuda"); %d: the value given */
    /* xgettext:c-format */
    return not_in_list (_("algorithm must be one of %s; got %d"), HT_LIST_ALGORITHMS, v->algorithm);
  if (v->window < 1 || v->window > HT_SEARCH_WINDOW_MAX || !(v->sigma >= 0.25 && v->sigma <= 4.0))
    /* TRANSLATORS: the largest window size, the window size given, sigma given */
    return g_strdup_printf (_("window must be 1..%d and sigma 0.25..4, got %d and %g"), HT_SEARCH_WINDOW_MAX,
                            v->window, v->sigma);
  if (!ht_choice_by_value (HT_LIST_INITS, v->init))
    /* TRANSLATORS: %s: the accepted values ("0 random, 1 floyd-steinberg"); %d: the value given */
    /* xgettext:c-format */
    return not_in_list (_("init must be one of %s; got %d"), HT_LIST_INITS, v->init);
  if (!ht_choice_by_value (HT_LIST_SCHEDULES, v->schedule))
    /* TRANSLATORS: %s: the accepted values ("0 parallel, 1 raster"); %d: the value given */
    /* xgettext:c-format */
    return not_in_list (_("schedule must be one of %s; got %d"), HT_LIST_SCHEDULES, v->schedule);
  if (v->max_rounds < 0 || v->max_rounds > 1000000 || v->seed < 0)
    return g_strdup_printf (_("max-rounds must be 0..1000000 and seed 0 or more, got %d and %d"),
                            v->max_rounds, v->seed);
  if (!fraction (v->interplane_forward) || !fraction (v->interplane_backward) ||
      v->interplane_forward + v->interplane_backward > 1.0 || !fraction (v->randomize) || !fraction (v->black))
    return g_strdup_printf (_("interplane-forward, interplane-backward (together at most 1), randomize and "
                              "black must be 0..1, got %g, %g, %g and %g"),
                            v->interplane_forward, v->interplane_backward, v->randomize, v->black);
  if (v->levels < 2 || v->levels > 256)
    return g_strdup_printf (_("levels must be 2..256, got %d"), v->levels);
  if (!ht_choice_by_value (HT_LIST_COLOR_MODES, v->color_mode))
    /* TRANSLATORS: %s: the accepted values ("0 auto, 1 cpu, 2 cuda"); %d: the value given */
    /* xgettext:c-format */
    return not_in_list (_("color mode must be one of %s; got %d"), HT_LIST_COLOR_MODES, v->color_mode);
  if (v->space < 0 || v->space > 1)
    return g_strdup_printf (_("space must be 0 or 1, got %d"), v->space);
  if (!ht_choice_by_value (HT_LIST_BACKENDS, v->backend))
    /* TRANSLATORS: %s: the accepted values ("0 auto, 1 cpu, 2 cuda"); %d: the value given */
    /* xgettext:c-format */
    return not_in_list (_("backend must be one of %s; got %d"), HT_LIST_BACKENDS, v->backend);
  if (v->threads < 0 || v->threads > 1024)
    return g_strdup_printf (_("threads must be 0..1024, got %d"), v->threads);
  if (v->algorithm == HT_FILTER_CUSTOM)
    {
      ht_filter f;
      char      err[256] = "";

      if (ht_filter_parse (v->coefficients, &f, err, sizeof err) != HT_OK)
        return g_strdup_printf (_("bad coefficients \"%s\": %s"), v->coefficients, err);
    }
  return NULL;
}

gboolean
halftone_same_vals (const HalftoneVals *a, const HalftoneVals *b)
{
  return a->algorithm == b->algorithm && a->levels == b->levels &&
         a->color_mode == b->color_mode && a->space == b->space &&
         a->serpentine == b->serpentine &&
         a->backend == b->backend && a->threads == b->threads &&
         a->window == b->window && a->sigma == b->sigma && a->init == b->init &&
         a->schedule == b->schedule && a->max_rounds == b->max_rounds && a->seed == b->seed &&
         a->interplane_forward == b->interplane_forward && a->interplane_backward == b->interplane_backward &&
         a->randomize == b->randomize && a->black == b->black &&
         (a->algorithm != HT_FILTER_CUSTOM || strcmp (a->coefficients, b->coefficients) == 0);
}

/* ------------------------------------------------------------ the PDB */

/* "WHAT { FLOYD-STEINBERG (0), ..., CUSTOM (8) }": a PDB argument's
 * description in the style of GIMP's own, from the library's list. */
static gchar *
pdb_enum_doc (const gchar *what, ht_list list)
{
  GString         *s = g_string_new (what);
  gint             n = 0;
  const ht_choice *c = ht_choices (list, &n);

  g_string_append (s, " {");
  for (gint i = 0; i < n; i++)
    {
      gchar *up = g_ascii_strup (c[i].name, -1);

      g_string_append_printf (s, "%s %s (%d)", i ? "," : "", up, c[i].value);
      g_free (up);
    }
  g_string_append (s, " }");
  return g_string_free (s, FALSE);
}

void
halftone_install_procedures (void)
{
  gchar *algorithm_doc = pdb_enum_doc ("Error filter or search method", HT_LIST_ALGORITHMS);
  gchar *coefficients_doc = g_strdup_printf ("Custom filter for algorithm %d, e.g. \"- * 7; 3 5 1 / 16\" "
                                             "(ignored otherwise)", (gint) HT_FILTER_CUSTOM);
  gchar *color_doc = pdb_enum_doc ("Color mode", HT_LIST_COLOR_MODES);
  gchar *backend_doc = pdb_enum_doc ("Backend", HT_LIST_BACKENDS);
  gchar *init_doc = pdb_enum_doc ("Search methods: the image the search starts from", HT_LIST_INITS);
  gchar *schedule_doc = pdb_enum_doc ("Search methods: order of the windows", HT_LIST_SCHEDULES);
  gchar *window_doc = g_strdup_printf ("LES and PES: side of the searched windows (1..%d)", HT_SEARCH_WINDOW_MAX);
  const GimpParamDef args[PDB_ARGS_FULL] = {
    { GIMP_PDB_INT32,    "run-mode",     "The run mode { RUN-INTERACTIVE (0), RUN-NONINTERACTIVE (1), RUN-WITH-LAST-VALS (2) }" },
    { GIMP_PDB_IMAGE,    "image",        "Input image (unused)" },
    { GIMP_PDB_DRAWABLE, "drawable",     "Input drawable" },
    { GIMP_PDB_INT32,    "algorithm",    algorithm_doc },
    { GIMP_PDB_STRING,   "coefficients", coefficients_doc },
    { GIMP_PDB_INT32,    "levels",       "Output levels per channel (2..256)" },
    { GIMP_PDB_INT32,    "color-mode",   color_doc },
    { GIMP_PDB_INT32,    "space",        "Space { PERCEPTUAL (0), LINEAR (1) }" },
    { GIMP_PDB_INT32,    "serpentine",   "Serpentine scan (TRUE or FALSE)" },
    { GIMP_PDB_INT32,    "backend",      backend_doc },
    { GIMP_PDB_INT32,    "threads",      "CPU threads (0 = all cores, up to 1024)" },
    /* plug-in-halftone-dither2 only */
    { GIMP_PDB_INT32,    "window",       window_doc },
    { GIMP_PDB_FLOAT,    "sigma",        "Search methods: sigma of the Gaussian eye model in pixels (0.25..4)" },
    { GIMP_PDB_INT32,    "init",         init_doc },
    { GIMP_PDB_INT32,    "schedule",     schedule_doc },
    { GIMP_PDB_INT32,    "max-rounds",   "Search methods: stop after this many rounds (0 = when a round changes nothing)" },
    { GIMP_PDB_INT32,    "seed",         "Key of the random numbers (the search's random start, the filter perturbation), 0 or more" },
    { GIMP_PDB_FLOAT,    "interplane-forward",  "Plane-dependent and CMYK modes: share of a plane's error passed to the next plane (0..1)" },
    { GIMP_PDB_FLOAT,    "interplane-backward", "Plane-dependent and CMYK modes: share passed back to the previous plane of the next pixel (0..1; forward + backward <= 1)" },
    { GIMP_PDB_FLOAT,    "randomize",    "Plane-dependent and CMYK modes: perturbation of the filter's weights (0..1)" },
    { GIMP_PDB_FLOAT,    "black",        "CMYK mode: black generation (0..1)" },
  };
  const gchar *help = "Turns the drawable into black and white dots (or a few "
                      "levels per channel) by error diffusion (Floyd-Steinberg and "
                      "related filters) or a search (LES, PES, DBS), through the "
                      "GEGL operation halftone:dither. Works on the selection's "
                      "bounding box; the selection mask is applied when the result "
                      "is merged.";

  gimp_plugin_domain_register (GETTEXT_PACKAGE, HT_LOCALEDIR);

  gimp_install_procedure (PLUG_IN_PROC,
                          N_("Halftone by exact error diffusion"),
                          help, "GEGL Halftone authors", "GPL-3.0-or-later", "2026",
                          N_("_Halftone (Error Diffusion)..."),
                          "RGB*, GRAY*", GIMP_PLUGIN,
                          PDB_ARGS_SHORT, 0, args, NULL);
  gimp_plugin_menu_register (PLUG_IN_PROC, MENU_PATH);
  gimp_install_procedure (PLUG_IN_PROC_FULL,
                          "Halftone by exact error diffusion or search, with every property",
                          help, "GEGL Halftone authors", "GPL-3.0-or-later", "2026",
                          NULL, "RGB*, GRAY*", GIMP_PLUGIN,
                          PDB_ARGS_FULL, 0, args, NULL);
  g_free (algorithm_doc);
  g_free (coefficients_doc);
  g_free (color_doc);
  g_free (backend_doc);
  g_free (init_doc);
  g_free (schedule_doc);
  g_free (window_doc);
}

gboolean
halftone_vals_from_params (gint nparams, const GimpParam *param, HalftoneVals *v, gchar **error)
{
  if (nparams != PDB_ARGS_SHORT && nparams != PDB_ARGS_FULL)
    {
      /* TRANSLATORS: the procedure's name, the two argument counts it takes, the count given */
      *error = g_strdup_printf (_("%s takes %d or %d arguments, got %d"), PLUG_IN_PROC, PDB_ARGS_SHORT,
                                PDB_ARGS_FULL, nparams);
      return FALSE;
    }
  *v = halftone_defaults;
  v->algorithm  = param[3].data.d_int32;
  g_strlcpy (v->coefficients, param[4].data.d_string ? param[4].data.d_string : "", COEF_MAX);
  v->levels     = param[5].data.d_int32;
  v->color_mode = param[6].data.d_int32;
  v->space      = param[7].data.d_int32;
  v->serpentine = param[8].data.d_int32 != 0;
  v->backend    = param[9].data.d_int32;
  v->threads    = param[10].data.d_int32;
  if (nparams == PDB_ARGS_FULL)
    {
      v->window              = param[11].data.d_int32;
      v->sigma               = param[12].data.d_float;
      v->init                = param[13].data.d_int32;
      v->schedule            = param[14].data.d_int32;
      v->max_rounds          = param[15].data.d_int32;
      v->seed                = param[16].data.d_int32;
      v->interplane_forward  = param[17].data.d_float;
      v->interplane_backward = param[18].data.d_float;
      v->randomize           = param[19].data.d_float;
      v->black               = param[20].data.d_float;
    }
  return TRUE;
}
