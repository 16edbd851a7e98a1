/* The GIMP 2.10 plug-in's settings, their checks and their PDB form
 * (halftone-vals.h), all made from the library's description of the
 * parameters (ht_param_info).
 *
 * Copyright (C) 2026 the GEGL Halftone authors. GPL-3.0-or-later.
 */
#include "ht-config.h"

#include <math.h>
#include <string.h>

#include <glib/gi18n-lib.h>

#include "halftone.h"
#include "halftone-vals.h"

#define MENU_PATH "<Image>/Colors"

/* The arguments every procedure starts with. */
#define PDB_ARGS_FIRST 3

#ifndef HALFTONE_VALS_PORTABLE
/* What the arguments after the first three of the two fixed procedures
 * set, in the order scripts pass them (docs/gimp.md). */
static const gint legacy_args[] = {
  HT_PARAM_ALGORITHM, HT_PARAM_COEFFICIENTS, HT_PARAM_LEVELS, HT_PARAM_COLOR, HT_PARAM_SPACE,
  HT_PARAM_SERPENTINE, HT_PARAM_BACKEND, HT_PARAM_THREADS,
  /* plug-in-halftone-dither2 only */
  HT_PARAM_WINDOW, HT_PARAM_SIGMA, HT_PARAM_INIT, HT_PARAM_SCHEDULE, HT_PARAM_MAX_ROUNDS, HT_PARAM_SEED,
  HT_PARAM_INTERPLANE_FORWARD, HT_PARAM_INTERPLANE_BACKWARD, HT_PARAM_RANDOMIZE, HT_PARAM_BLACK,
};
#define LEGACY_SHORT 8 /* plug-in-halftone-dither's: algorithm .. threads */
#endif

void
halftone_vals_defaults (HalftoneVals *v)
{
  memset (v, 0, sizeof *v);
  for (gint id = 0; id < HT_PARAM_COUNT; id++)
    {
      const ht_param *d = ht_param_info ((ht_param_id) id);

      if (d->type == HT_TYPE_TEXT)
        g_strlcpy (v->text[id], d->def_text ? d->def_text : "", HALFTONE_TEXT_MAX);
      else
        v->value[id] = d->def;
    }
  v->zoom  = 1;
}

gint
halftone_vals_algorithm (const HalftoneVals *v)
{
  return (gint) v->value[HT_PARAM_ALGORITHM];
}

gint
halftone_vals_color (const HalftoneVals *v)
{
  return (gint) v->value[HT_PARAM_COLOR];
}

gboolean
halftone_param_active (const HalftoneVals *v, ht_param_id id)
{
  return ht_param_used (id, halftone_vals_algorithm (v), (ht_color_mode) halftone_vals_color (v));
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

/* A value of a parameter of the context (backend, threads), which
 * ht_params does not hold: the description's range or list. */
static gchar *
check_context_value (const ht_param *d, gdouble x)
{
  if (d->type == HT_TYPE_CHOICE)
    {
      gchar *values, *message;

      if (x == floor (x) && ht_choice_by_value (d->list, (gint) x))
        return NULL;
      values  = list_values (d->list);
      /* TRANSLATORS: a parameter's name ("backend"), its accepted values
       * ("0 auto, 1 cpu, 2 cuda"), the value given */
      message = g_strdup_printf (_("%s must be one of %s; got %g"), d->name, values, x);
      g_free (values);
      return message;
    }
  if (x >= d->min && x <= d->max && (d->type == HT_TYPE_NUMBER || x == floor (x)))
    return NULL;
  /* TRANSLATORS: a parameter's name, its least and largest values, the value given */
  return g_strdup_printf (_("%s must be %g..%g, got %g"), d->name, d->min, d->max, x);
}

gchar *
halftone_check_vals (const HalftoneVals *v, gint *param)
{
  static const ht_param_id first[] = { HT_PARAM_ALGORITHM, HT_PARAM_COLOR };
  ht_params   run, unused; /* what the run uses, and a scratch for the rest */
  char        why[512];
  ht_context *ctx;
  ht_backend  backend;
  ht_status   status;
  gchar      *problem = NULL;

  if (param)
    *param = -1;
  /* ht_param_used needs a known algorithm and colour mode: their own
   * messages first */
  ht_params_init (&unused);
  for (gsize i = 0; i < G_N_ELEMENTS (first); i++)
    if (ht_params_set_number (&unused, first[i], v->value[first[i]], why, sizeof why) != HT_OK)
      {
        if (param)
          *param = first[i];
        return g_strdup (why);
      }

  ht_params_init (&run);
  ht_params_init (&unused);
  for (gint id = 0; id < HT_PARAM_COUNT && !problem; id++)
    {
      const ht_param *d    = ht_param_info ((ht_param_id) id);
      const gboolean  used = halftone_param_active (v, (ht_param_id) id);
      ht_status       s;

      if (d->context)
        {
          problem = check_context_value (d, v->value[id]);
          s = HT_OK;
        }
      else if (d->type == HT_TYPE_TEXT)
        /* text is checked where it is used: the coefficients of custom */
        s = used ? ht_params_set_text (&run, (ht_param_id) id, v->text[id], why, sizeof why) : HT_OK;
      else
        s = ht_params_set_number (used ? &run : &unused, (ht_param_id) id, v->value[id], why, sizeof why);
      if (s != HT_OK)
        problem = g_strdup (why);
      if (problem && param)
        *param = id;
    }
  if (problem)
    return problem;

  /* what goes together, as the op checks it: a setting backend cuda
   * cannot run runs on the CPU */
  ctx = ht_context_new ();
  if (!ctx)
    return g_strdup (ht_status_string (HT_ERR_NO_MEMORY));
  ht_context_set_backend (ctx, (ht_backend) v->value[HT_PARAM_BACKEND]);
  ht_context_set_threads (ctx, (gint) v->value[HT_PARAM_THREADS]);
  status = ht_check_or_cpu (ctx, &run, &backend);
  if (status != HT_OK)
    problem = g_strdup (ht_context_message (ctx));
  ht_context_free (ctx);
  return problem;
}

gdouble
halftone_vals_estimate (const HalftoneVals *v, gint width, gint height, gint channels)
{
  ht_params p;
  ht_layout layout;
  char      why[256];

  ht_params_init (&p);
  for (gint id = 0; id < HT_PARAM_COUNT; id++)
    {
      const ht_param *d = ht_param_info ((ht_param_id) id);

      if (d->context || !halftone_param_active (v, (ht_param_id) id))
        continue;
      if (d->type == HT_TYPE_TEXT ? ht_params_set_text (&p, (ht_param_id) id, v->text[id], why, sizeof why) != HT_OK
                                  : ht_params_set_number (&p, (ht_param_id) id, v->value[id], why, sizeof why) != HT_OK)
        return -1.0;
    }
  if (!(ht_method_describe (p.method)->caps & HT_MCAP_SEARCH) ||
      ht_output_layout (&p, channels, FALSE, &layout) != HT_OK)
    return -1.0;
  return ht_estimate_seconds (&p, width, height, layout.planes, (gint) v->value[HT_PARAM_THREADS]);
}

gboolean
halftone_same_vals (const HalftoneVals *a, const HalftoneVals *b)
{
  for (gint id = 0; id < HT_PARAM_COUNT; id++)
    {
      const gboolean used = halftone_param_active (a, (ht_param_id) id);

      if (used != halftone_param_active (b, (ht_param_id) id))
        return FALSE;
      if (!used)
        continue;
      if (ht_param_info ((ht_param_id) id)->type == HT_TYPE_TEXT ? strcmp (a->text[id], b->text[id]) != 0
                                                                   : a->value[id] != b->value[id])
        return FALSE;
    }
  return TRUE;
}

#ifndef HALFTONE_VALS_PORTABLE
/* ------------------------------------------------------------ the PDB */

/* What the arguments after the first three of `proc` set; NULL for an
 * unknown procedure. */
static const gint *
proc_args (const gchar *proc, gint *count)
{
  static gint desc_args[HT_PARAM_COUNT];

  if (g_strcmp0 (proc, PLUG_IN_PROC) == 0)
    {
      *count = LEGACY_SHORT;
      return legacy_args;
    }
  if (g_strcmp0 (proc, PLUG_IN_PROC_FULL) == 0)
    {
      *count = (gint) G_N_ELEMENTS (legacy_args);
      return legacy_args;
    }
  if (g_strcmp0 (proc, PLUG_IN_PROC_DESC) == 0)
    {
      for (gint id = 0; id < HT_PARAM_COUNT; id++)
        desc_args[id] = id;
      *count = HT_PARAM_COUNT;
      return desc_args;
    }
  *count = 0;
  return NULL;
}

gint
halftone_pdb_arg_param (const gchar *proc, gint i)
{
  gint        count = 0;
  const gint *args  = proc_args (proc, &count);

  return args && i >= PDB_ARGS_FIRST && i < PDB_ARGS_FIRST + count ? args[i - PDB_ARGS_FIRST] : -1;
}

static GimpPDBArgType
pdb_type (ht_param_type type)
{
  switch (type)
    {
    case HT_TYPE_NUMBER: return GIMP_PDB_FLOAT;
    case HT_TYPE_TEXT:   return GIMP_PDB_STRING;
    case HT_TYPE_INT:
    case HT_TYPE_BOOL:
    case HT_TYPE_CHOICE:
    case HT_TYPE_SEED:   break;
    }
  return GIMP_PDB_INT32;
}

/* A parameter's PDB description: its help, then its values in the style
 * of GIMP's own ("{ FLOYD-STEINBERG (0), ..., CUSTOM (8) }", "(2..256)"). */
static gchar *
pdb_doc (const ht_param *d)
{
  GString *s = g_string_new (d->help);
  gint     n = 0;

  if (s->len)
    s->str[0] = g_ascii_toupper (s->str[0]);
  switch (d->type)
    {
    case HT_TYPE_CHOICE:
      {
        const ht_choice *c = ht_choices (d->list, &n);

        g_string_append (s, " {");
        for (gint i = 0; i < n; i++)
          {
            gchar *up = g_ascii_strup (c[i].name, -1);

            g_string_append_printf (s, "%s %s (%d)", i ? "," : "", up, c[i].value);
            g_free (up);
          }
        g_string_append (s, " }");
        break;
      }
    case HT_TYPE_INT:
    case HT_TYPE_NUMBER:
    case HT_TYPE_SEED: /* 0..2147483647: what GIMP 2.10's INT32 holds */
      g_string_append_printf (s, " (%.15g..%.15g)", d->min, d->max);
      break;
    case HT_TYPE_BOOL:
      g_string_append (s, " (TRUE or FALSE)");
      break;
    case HT_TYPE_TEXT:
      break;
    }
  return g_string_free (s, FALSE);
}

GimpParamDef *
halftone_pdb_args (const gchar *proc, gint *count)
{
  gint          n    = 0;
  const gint   *args = proc_args (proc, &n);
  GimpParamDef *defs;

  *count = 0;
  if (!args)
    return NULL;
  defs = g_new0 (GimpParamDef, PDB_ARGS_FIRST + n);
  defs[0] = (GimpParamDef) { GIMP_PDB_INT32, g_strdup ("run-mode"),
                             g_strdup ("The run mode { RUN-INTERACTIVE (0), RUN-NONINTERACTIVE (1), "
                                       "RUN-WITH-LAST-VALS (2) }") };
  defs[1] = (GimpParamDef) { GIMP_PDB_IMAGE, g_strdup ("image"), g_strdup ("Input image (unused)") };
  defs[2] = (GimpParamDef) { GIMP_PDB_DRAWABLE, g_strdup ("drawable"), g_strdup ("Input drawable") };
  for (gint i = 0; i < n; i++)
    {
      GimpParamDef *a = &defs[PDB_ARGS_FIRST + i];

      const ht_param *d = ht_param_info ((ht_param_id) args[i]);

      *a = (GimpParamDef) { pdb_type (d->type), g_strdup (d->name), pdb_doc (d) };
    }
  *count = PDB_ARGS_FIRST + n;
  return defs;
}

void
halftone_pdb_args_free (GimpParamDef *args, gint count)
{
  for (gint i = 0; args && i < count; i++)
    {
      g_free (args[i].name);
      g_free (args[i].description);
    }
  g_free (args);
}

void
halftone_install_procedures (void)
{
  static const gchar *const procs[] = { PLUG_IN_PROC, PLUG_IN_PROC_FULL, PLUG_IN_PROC_DESC };
  static const gchar *const blurbs[] = {
    N_("Halftone by exact error diffusion"),
    "Halftone by exact error diffusion or search, with every property of version 2",
    "Halftone with every parameter of the library's description, in its order",
  };
  const gchar *help = "Turns the drawable into black and white dots (or a few "
                      "levels per channel) by error diffusion (Floyd-Steinberg and "
                      "related filters), a search (LES, PES, DBS) or ordered "
                      "dithering, through the GEGL operation halftone:dither. Works "
                      "on the selection's bounding box; the selection mask is "
                      "applied when the result is merged. Arguments that the "
                      "chosen algorithm and colour mode do not use are checked but "
                      "ignored.";

  gimp_plugin_domain_register (GETTEXT_PACKAGE, HT_LOCALEDIR);
  for (gsize p = 0; p < G_N_ELEMENTS (procs); p++)
    {
      gint          n    = 0;
      GimpParamDef *args = halftone_pdb_args (procs[p], &n);

      gimp_install_procedure (procs[p], blurbs[p], help, "GEGL Halftone authors", "GPL-3.0-or-later", "2026",
                              p == 0 ? N_("_Halftone...") : NULL,
                              "RGB*, GRAY*", GIMP_PLUGIN, n, 0, args, NULL);
      halftone_pdb_args_free (args, n);
    }
  gimp_plugin_menu_register (PLUG_IN_PROC, MENU_PATH);
}

gboolean
halftone_vals_from_params (const gchar *proc, gint nparams, const GimpParam *param, HalftoneVals *v,
                           gchar **error)
{
  gint        n    = 0;
  const gint *args = proc_args (proc, &n);

  if (!args || nparams != PDB_ARGS_FIRST + n)
    {
      /* TRANSLATORS: the procedure's name, the argument count it takes, the count given */
      *error = g_strdup_printf (_("%s takes %d arguments, got %d"), proc ? proc : "?", PDB_ARGS_FIRST + n, nparams);
      return FALSE;
    }
  halftone_vals_defaults (v);
  for (gint i = 0; i < n; i++)
    {
      const GimpParam *p = &param[PDB_ARGS_FIRST + i];
      const ht_param  *d = ht_param_info ((ht_param_id) args[i]);

      switch (d->type)
        {
        case HT_TYPE_TEXT:
          g_strlcpy (v->text[args[i]], p->data.d_string ? p->data.d_string : "", HALFTONE_TEXT_MAX);
          break;
        case HT_TYPE_NUMBER:
          v->value[args[i]] = p->data.d_float;
          break;
        case HT_TYPE_BOOL: /* TRUE is any non-zero value, as GIMP's own take it */
          v->value[args[i]] = p->data.d_int32 != 0;
          break;
        case HT_TYPE_INT:
        case HT_TYPE_CHOICE:
        case HT_TYPE_SEED:
          v->value[args[i]] = p->data.d_int32;
          break;
        }
    }
  return TRUE;
}

/* ------------------------------------------------------------ remembered */

#define BLOB_MAGIC 0x48547633u /* "HTv3" */

typedef struct
{
  guint32      magic;
  guint32      signature;
  HalftoneVals vals;
} Blob;

/* The layout of HalftoneVals as the description makes it: the
 * parameters' names and types in their order. */
static guint32
blob_signature (void)
{
  guint32 h = 2166136261u; /* FNV-1a */

  for (gint id = 0; id < HT_PARAM_COUNT; id++)
    {
      const ht_param *d = ht_param_info ((ht_param_id) id);

      for (const gchar *c = d->name; *c; c++)
        h = (h ^ (guchar) *c) * 16777619u;
      h = (h ^ (guint32) d->type) * 16777619u;
    }
  return (h ^ (guint32) sizeof (HalftoneVals)) * 16777619u;
}

gpointer
halftone_vals_to_blob (const HalftoneVals *v, gsize *size)
{
  Blob *b = g_new0 (Blob, 1);

  b->magic     = BLOB_MAGIC;
  b->signature = blob_signature ();
  b->vals      = *v;
  *size = sizeof *b;
  return b;
}

gboolean
halftone_vals_from_blob (gconstpointer blob, gsize size, HalftoneVals *v)
{
  Blob   b;
  gchar *problem;

  if (!blob || size != sizeof b)
    return FALSE;
  memcpy (&b, blob, sizeof b);
  if (b.magic != BLOB_MAGIC || b.signature != blob_signature ())
    return FALSE;
  for (gint id = 0; id < HT_PARAM_COUNT; id++)
    b.vals.text[id][HALFTONE_TEXT_MAX - 1] = '\0';
  if (b.vals.zoom < 1 || b.vals.zoom > 8)
    b.vals.zoom = 1;
  problem = halftone_check_vals (&b.vals, NULL);
  g_free (problem);
  if (problem)
    return FALSE;
  *v = b.vals;
  return TRUE;
}

void
halftone_vals_store (const HalftoneVals *v)
{
  gsize    size = 0;
  gpointer blob = halftone_vals_to_blob (v, &size);

  gimp_set_data (PLUG_IN_PROC, blob, (guint32) size);
  g_free (blob);
}

gboolean
halftone_vals_load (HalftoneVals *v)
{
  const gint size = gimp_get_data_size (PLUG_IN_PROC);
  gpointer   blob;
  gboolean   ok;

  if (size != (gint) sizeof (Blob))
    return FALSE; /* nothing, or an older version's settings */
  blob = g_malloc (sizeof (Blob));
  ok   = gimp_get_data (PLUG_IN_PROC, blob) && halftone_vals_from_blob (blob, sizeof (Blob), v);
  g_free (blob);
  return ok;
}
#endif
