/* The GIMP 2.10 plug-in's settings against the library's description
 * (ui/halftone-vals.c; no GIMP needed, only its headers and libgimp to
 * link):
 *  - the PDB arguments: plug-in-halftone-dither and -dither2 keep their
 *    fixed names and types (scripts pass them by position);
 *    plug-in-halftone-dither3 has every parameter of the description
 *    (space among them) in its order, named as there, typed by its type, its
 *    help in the description, and reads them back into the settings;
 *  - the defaults are the description's, and pass the checks;
 *  - the checks: each parameter's range and type as the description
 *    says (its least and largest values taken, one past refused and
 *    named), text only where it is used, combinations by ht_check;
 *  - the dialog's sensitivity (halftone_param_active) for every
 *    algorithm and colour mode is ht_param_used, with what issue 30
 *    asked for spelled out;
 *  - what the preview compares, and the remembered settings: an older
 *    version's blob (another size) or another layout is not read.
 *
 * With --pdb PROC it prints PROC's arguments after the first three, one
 * a line: "name<TAB>type<TAB>default" (tests/gimp/gimp-search.py builds
 * its plug-in-halftone-dither3 call from them).
 *
 * Copyright (C) 2026 the GEGL Halftone authors. GPL-3.0-or-later.
 */
#include "ht-config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "halftone.h"
#include "halftone-vals.h"
#include "ht-check.h"

/* The settings of the version before the description (as gimp_set_data
 * stored them): a blob of this size must not be read. */
typedef struct
{
  gint     algorithm;
  gchar    coefficients[256];
  gint     levels, color_mode, space;
  gboolean serpentine;
  gint     backend, threads, zoom, window;
  gdouble  sigma;
  gint     init, schedule, max_rounds, seed;
  gdouble  interplane_forward, interplane_backward, randomize, black;
} OldVals;

static GimpPDBArgType
expected_type (ht_param_type t)
{
  return t == HT_TYPE_NUMBER ? GIMP_PDB_FLOAT : t == HT_TYPE_TEXT ? GIMP_PDB_STRING : GIMP_PDB_INT32;
}

static void
check_fixed_procedure (const gchar *proc, gint expect_count)
{
  /* the names and types scripts have passed since version 1 and 2 */
  static const struct
  {
    GimpPDBArgType type;
    const gchar   *name;
  } fixed[] = {
    { GIMP_PDB_INT32, "run-mode" },   { GIMP_PDB_IMAGE, "image" },     { GIMP_PDB_DRAWABLE, "drawable" },
    { GIMP_PDB_INT32, "algorithm" },  { GIMP_PDB_STRING, "coefficients" }, { GIMP_PDB_INT32, "levels" },
    { GIMP_PDB_INT32, "color-mode" }, { GIMP_PDB_INT32, "space" },     { GIMP_PDB_INT32, "serpentine" },
    { GIMP_PDB_INT32, "backend" },    { GIMP_PDB_INT32, "threads" },   { GIMP_PDB_INT32, "window" },
    { GIMP_PDB_FLOAT, "sigma" },      { GIMP_PDB_INT32, "init" },      { GIMP_PDB_INT32, "schedule" },
    { GIMP_PDB_INT32, "max-rounds" }, { GIMP_PDB_INT32, "seed" },      { GIMP_PDB_FLOAT, "interplane-forward" },
    { GIMP_PDB_FLOAT, "interplane-backward" }, { GIMP_PDB_FLOAT, "randomize" }, { GIMP_PDB_FLOAT, "black" },
  };
  gint          n    = 0;
  GimpParamDef *args = halftone_pdb_args (proc, &n);

  CHECK (n == expect_count, "%s has %d arguments, expected %d", proc, n, expect_count);
  for (gint i = 0; i < n && i < (gint) G_N_ELEMENTS (fixed); i++)
    {
      CHECK (args[i].type == fixed[i].type && strcmp (args[i].name, fixed[i].name) == 0,
             "%s argument %d is %s (type %d), expected %s (type %d)", proc, i, args[i].name, args[i].type,
             fixed[i].name, fixed[i].type);
      CHECK (args[i].description && *args[i].description, "%s argument %s has no description", proc, args[i].name);
      if (i >= 3)
        {
          gint id = halftone_pdb_arg_param (proc, i);

          CHECK (id >= 0 && strcmp (ht_param_info ((ht_param_id) id)->name, args[i].name) == 0,
                 "%s argument %d (%s) sets parameter %d", proc, i, args[i].name, id);
        }
    }
  halftone_pdb_args_free (args, n);
}

/* plug-in-halftone-dither3: the description. */
static void
check_description_procedure (void)
{
  gint          n    = 0;
  GimpParamDef *args = halftone_pdb_args (PLUG_IN_PROC_DESC, &n);

  CHECK (n == 3 + HT_PARAM_COUNT, "%s has %d arguments, expected %d", PLUG_IN_PROC_DESC, n, 3 + HT_PARAM_COUNT);
  for (gint id = 0; id < HT_PARAM_COUNT && 3 + id < n; id++)
    {
      const ht_param     *d = ht_param_info ((ht_param_id) id);
      const GimpParamDef *a = &args[3 + id];

      CHECK (strcmp (a->name, d->name) == 0, "argument %d is %s, the description's parameter %d is %s", 3 + id,
             a->name, id, d->name);
      CHECK (a->type == expected_type (d->type), "argument %s has type %d, expected %d", a->name, a->type,
             expected_type (d->type));
      /* the help, its first letter upper case */
      CHECK (d->help[0] && strstr (a->description, d->help + 1) != NULL, "argument %s's description \"%s\" lacks its help",
             a->name, a->description);
      CHECK (halftone_pdb_arg_param (PLUG_IN_PROC_DESC, 3 + id) == id, "argument %s sets parameter %d", a->name, id);
      if (d->type == HT_TYPE_CHOICE)
        {
          gint             count = 0;
          const ht_choice *c     = ht_choices (d->list, &count);

          for (gint k = 0; k < count; k++)
            {
              gchar *up   = g_ascii_strup (c[k].name, -1);
              gchar *item = g_strdup_printf ("%s (%d)", up, c[k].value);

              CHECK (strstr (a->description, item) != NULL, "argument %s's description lacks %s", a->name, item);
              g_free (up);
              g_free (item);
            }
        }
      /* the seed's too: GIMP 2.10's INT32 is the range every front end has */
      if (d->type == HT_TYPE_INT || d->type == HT_TYPE_NUMBER || d->type == HT_TYPE_SEED)
        {
          gchar *range = g_strdup_printf ("(%.15g..%.15g)", d->min, d->max);

          CHECK (strstr (a->description, range) != NULL, "argument %s's description lacks %s", a->name, range);
          g_free (range);
        }
    }
  CHECK (halftone_pdb_args ("plug-in-halftone-dither9", &n) == NULL && n == 0, "an unknown procedure has no arguments");
  CHECK (halftone_pdb_arg_param (PLUG_IN_PROC_DESC, 2) == -1 && halftone_pdb_arg_param (PLUG_IN_PROC_DESC, 999) == -1,
         "the first three and out of range set nothing");
  halftone_pdb_args_free (args, 3 + HT_PARAM_COUNT);
}

/* The values of `v` as the arguments of `proc` (strings point into v). */
static GimpParam *
params_of (const gchar *proc, const HalftoneVals *v, gint *n)
{
  GimpParamDef *defs = halftone_pdb_args (proc, n);
  GimpParam    *p    = g_new0 (GimpParam, *n);

  for (gint i = 0; i < *n; i++)
    {
      gint id = halftone_pdb_arg_param (proc, i);

      p[i].type = defs[i].type;
      if (id >= 0 && defs[i].type == GIMP_PDB_STRING)
        p[i].data.d_string = (gchar *) v->text[id];
      else if (id >= 0 && defs[i].type == GIMP_PDB_FLOAT)
        p[i].data.d_float = v->value[id];
      else if (id >= 0)
        p[i].data.d_int32 = (gint32) v->value[id];
    }
  halftone_pdb_args_free (defs, *n);
  return p;
}

static void
check_defaults_and_params (void)
{
  HalftoneVals d, v;
  gchar       *error = NULL, *problem;
  gint         n     = 0;
  GimpParam   *p;

  halftone_vals_defaults (&d);
  for (gint id = 0; id < HT_PARAM_COUNT; id++)
    {
      const ht_param *info = ht_param_info ((ht_param_id) id);

      if (info->type == HT_TYPE_TEXT)
        CHECK (strcmp (d.text[id], info->def_text) == 0, "%s's default is \"%s\"", info->name, d.text[id]);
      else
        CHECK (d.value[id] == info->def, "%s's default is %g, the description's %g", info->name, d.value[id],
               info->def);
    }
  CHECK (d.value[HT_PARAM_SPACE] == HT_SPACE_STORED && d.zoom == 1, "space %g, zoom %d", d.value[HT_PARAM_SPACE],
         d.zoom);
  problem = halftone_check_vals (&d, NULL);
  CHECK (problem == NULL, "the defaults are refused: %s", problem);
  g_free (problem);

  /* dither3 reads every value back; the fixed ones theirs, defaults for
   * the rest */
  v = d;
  v.value[HT_PARAM_ALGORITHM] = HT_ALGORITHM_DBS;
  v.value[HT_PARAM_SIGMA]     = 1.5;
  v.value[HT_PARAM_SEED]      = 8;
  v.value[HT_PARAM_EYE_RADIUS] = 5;
  v.value[HT_PARAM_MASK_SIZE] = 16;
  v.value[HT_PARAM_SERPENTINE] = 1;
  v.value[HT_PARAM_SPACE] = HT_SPACE_LINEAR;
  g_strlcpy (v.text[HT_PARAM_COEFFICIENTS], "- * 1; 1 / 2", HALFTONE_TEXT_MAX);
  {
    const gchar *procs[] = { PLUG_IN_PROC_DESC, PLUG_IN_PROC_FULL, PLUG_IN_PROC };

    for (gsize k = 0; k < G_N_ELEMENTS (procs); k++)
      {
        HalftoneVals back;

        p = params_of (procs[k], &v, &n);
        CHECK (halftone_vals_from_params (procs[k], n, p, &back, &error), "%s: %s", procs[k], error);
        for (gint id = 0; id < HT_PARAM_COUNT; id++)
          {
            gboolean has = FALSE;

            for (gint i = 3; i < n; i++)
              has |= halftone_pdb_arg_param (procs[k], i) == id;
            if (ht_param_info ((ht_param_id) id)->type == HT_TYPE_TEXT)
              CHECK (strcmp (back.text[id], has ? v.text[id] : d.text[id]) == 0, "%s: %s", procs[k],
                     ht_param_info ((ht_param_id) id)->name);
            else
              CHECK (back.value[id] == (has ? v.value[id] : d.value[id]), "%s: %s is %g", procs[k],
                     ht_param_info ((ht_param_id) id)->name, back.value[id]);
          }
        CHECK (back.value[HT_PARAM_SPACE] == HT_SPACE_LINEAR, "%s: space", procs[k]);
        CHECK (!halftone_vals_from_params (procs[k], n - 1, p, &back, &error), "%s: one argument less", procs[k]);
        g_clear_pointer (&error, g_free);
        g_free (p);
      }
  }
}

/* Each parameter alone: its least and largest values taken, one past
 * them refused with the parameter named; every value of a list taken. */
static void
check_ranges (void)
{
  HalftoneVals d, v;
  gint         at;
  gchar       *problem;

  halftone_vals_defaults (&d);
  for (gint id = 0; id < HT_PARAM_COUNT; id++)
    {
      const ht_param *info = ht_param_info ((ht_param_id) id);

      switch (info->type)
        {
        case HT_TYPE_INT:
        case HT_TYPE_NUMBER:
        case HT_TYPE_SEED:
          {
            const gdouble past = info->type == HT_TYPE_NUMBER ? 0.5 : 1;

            for (gint end = 0; end < 2; end++)
              {
                v = d;
                v.value[id] = end ? info->max : info->min;
                problem = halftone_check_vals (&v, &at);
                CHECK (problem == NULL, "%s %g refused: %s", info->name, v.value[id], problem);
                g_free (problem);
                v.value[id] = end ? info->max + past : info->min - past;
                problem = halftone_check_vals (&v, &at);
                CHECK (problem != NULL && at == id, "%s %g: taken or not named (%d: %s)", info->name, v.value[id], at,
                       problem);
                g_free (problem);
              }
            if (info->type != HT_TYPE_NUMBER)
              {
                v = d;
                v.value[id] = info->min + 0.5;
                problem = halftone_check_vals (&v, &at);
                CHECK (problem != NULL && at == id, "%s %g taken", info->name, v.value[id]);
                g_free (problem);
              }
            break;
          }
        case HT_TYPE_BOOL:
          for (gint x = -1; x <= 2; x++)
            {
              v = d;
              v.value[id] = x;
              problem = halftone_check_vals (&v, &at);
              CHECK ((x == 0 || x == 1) == (problem == NULL) && (problem == NULL || at == id), "%s %d: %s",
                     info->name, x, problem);
              g_free (problem);
            }
          break;
        case HT_TYPE_CHOICE:
          {
            gint             count = 0;
            const ht_choice *c     = ht_choices (info->list, &count);

            for (gint k = 0; k < count; k++)
              {
                v = d;
                v.value[id] = c[k].value;
                /* the search methods take luma; every mode takes error diffusion */
                problem = halftone_check_vals (&v, &at);
                CHECK (problem == NULL, "%s %s refused: %s", info->name, c[k].name, problem);
                g_free (problem);
              }
            v = d;
            v.value[id] = -1;
            problem = halftone_check_vals (&v, &at);
            CHECK (problem != NULL && at == id, "%s -1 taken", info->name);
            g_free (problem);
            break;
          }
        case HT_TYPE_TEXT:
          break;
        }
    }

  /* the coefficients: checked for custom only, the message for its field */
  v = d;
  g_strlcpy (v.text[HT_PARAM_COEFFICIENTS], "- * 7; 3 x", HALFTONE_TEXT_MAX);
  problem = halftone_check_vals (&v, &at);
  CHECK (problem == NULL, "bad coefficients refused for floyd-steinberg: %s", problem);
  g_free (problem);
  v.value[HT_PARAM_ALGORITHM] = HT_FILTER_CUSTOM;
  problem = halftone_check_vals (&v, &at);
  CHECK (problem != NULL && at == HT_PARAM_COEFFICIENTS && strstr (problem, "position"),
         "bad coefficients for custom: %d %s", at, problem);
  g_free (problem);
  g_strlcpy (v.text[HT_PARAM_COEFFICIENTS], "- - * 7 5; 3 5 7 5 3; 1 3 5 3 1 / 48", HALFTONE_TEXT_MAX);
  problem = halftone_check_vals (&v, &at);
  CHECK (problem == NULL, "good coefficients refused: %s", problem);
  g_free (problem);
  v = d;
  v.value[HT_PARAM_SPACE] = 2;
  problem = halftone_check_vals (&v, &at);
  CHECK (problem != NULL, "space 2 taken");
  g_free (problem);
}

static gchar *
check_with (gint algorithm, gint color, ht_param_id id, gdouble value, ht_param_id id2, gdouble value2, gint *at)
{
  HalftoneVals v;

  halftone_vals_defaults (&v);
  v.value[HT_PARAM_ALGORITHM] = algorithm;
  v.value[HT_PARAM_COLOR]     = color;
  v.value[id]  = value;
  v.value[id2] = value2;
  return halftone_check_vals (&v, at);
}

/* What goes together: ht_check's, for the parameters a run uses. */
static void
check_combinations (void)
{
  static const struct
  {
    gint        algorithm, color;
    ht_param_id id;
    gdouble     value;
    ht_param_id id2;
    gdouble     value2;
    gboolean    ok;
    const gchar *what;
  } cases[] = {
    { HT_ALGORITHM_LES, HT_COLOR_PLANE_DEPENDENT, HT_PARAM_WINDOW, 4, HT_PARAM_WINDOW, 4, FALSE,
      "les in plane-dependent colour" },
    { HT_ALGORITHM_BAYER, HT_COLOR_CMYK, HT_PARAM_MASK_SIZE, 8, HT_PARAM_MASK_SIZE, 8, FALSE, "bayer in cmyk" },
    { HT_FILTER_FLOYD_STEINBERG, HT_COLOR_PLANE_DEPENDENT, HT_PARAM_INTERPLANE_FORWARD, 0.6,
      HT_PARAM_INTERPLANE_BACKWARD, 0.6, FALSE, "inter-plane weights adding up to 1.2" },
    { HT_FILTER_FLOYD_STEINBERG, HT_COLOR_PLANE_DEPENDENT, HT_PARAM_INTERPLANE_FORWARD, 0.5,
      HT_PARAM_INTERPLANE_BACKWARD, 0.5, TRUE, "inter-plane weights adding up to 1" },
    { HT_FILTER_FLOYD_STEINBERG, HT_COLOR_LUMA, HT_PARAM_INTERPLANE_FORWARD, 0.6, HT_PARAM_INTERPLANE_BACKWARD, 0.6,
      TRUE, "inter-plane weights in luma (unused)" },
    { HT_FILTER_FLOYD_STEINBERG, HT_COLOR_LUMA, HT_PARAM_RANDOMIZE, 0.5, HT_PARAM_RANDOMIZE, 0.5, TRUE,
      "randomize in luma (unused)" },
    { HT_ALGORITHM_DBS, HT_COLOR_LUMA, HT_PARAM_LEVELS, 4, HT_PARAM_SERPENTINE, 1, TRUE,
      "levels 4 and serpentine with dbs (unused)" },
    { HT_FILTER_FLOYD_STEINBERG, HT_COLOR_LUMA, HT_PARAM_LEVELS, 4, HT_PARAM_SERPENTINE, 1, TRUE,
      "levels 4 and serpentine with floyd-steinberg" },
    { HT_ALGORITHM_LES, HT_COLOR_LUMA, HT_PARAM_SCHEDULE, HT_SCHEDULE_RASTER, HT_PARAM_THREADS, 2, FALSE,
      "the raster schedule on 2 threads" },
    { HT_ALGORITHM_LES, HT_COLOR_LUMA, HT_PARAM_SCHEDULE, HT_SCHEDULE_RASTER, HT_PARAM_THREADS, 1, TRUE,
      "the raster schedule on 1 thread" },
    { HT_ALGORITHM_BAYER, HT_COLOR_LUMA, HT_PARAM_MASK_SIZE, 12, HT_PARAM_MASK_SIZE, 12, FALSE,
      "mask size 12 (not a power of two)" },
    { HT_FILTER_FLOYD_STEINBERG, HT_COLOR_LUMA, HT_PARAM_MASK_SIZE, 12, HT_PARAM_MASK_SIZE, 12, FALSE,
      "mask size 12 with floyd-steinberg (unused, still out of range)" },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      gint   at      = -2;
      gchar *problem = check_with (cases[i].algorithm, cases[i].color, cases[i].id, cases[i].value, cases[i].id2,
                                   cases[i].value2, &at);

      CHECK ((problem == NULL) == cases[i].ok, "%s: %s", cases[i].what, problem ? problem : "taken");
      g_free (problem);
    }
}

/* The dialog's sensitivity, for every algorithm and colour mode. */
static void
check_sensitivity (void)
{
  gint             na = 0, nc = 0;
  const ht_choice *alg = ht_choices (HT_LIST_ALGORITHMS, &na);
  const ht_choice *col = ht_choices (HT_LIST_COLOR_MODES, &nc);
  HalftoneVals     v;

  halftone_vals_defaults (&v);
  for (gint a = 0; a < na; a++)
    for (gint c = 0; c < nc; c++)
      {
        const gint     algorithm = alg[a].value;
        const gboolean search    = algorithm == HT_ALGORITHM_LES || algorithm == HT_ALGORITHM_PES ||
                                algorithm == HT_ALGORITHM_DBS;
        const gboolean luma      = col[c].value == HT_COLOR_LUMA;
        const gboolean coupled   = col[c].value == HT_COLOR_PLANE_DEPENDENT || col[c].value == HT_COLOR_CMYK;

        v.value[HT_PARAM_ALGORITHM] = algorithm;
        v.value[HT_PARAM_COLOR]     = col[c].value;
        for (gint id = 0; id < HT_PARAM_COUNT; id++)
          CHECK (halftone_param_active (&v, (ht_param_id) id) ==
                   ht_param_used ((ht_param_id) id, algorithm, (ht_color_mode) col[c].value),
                 "%s with %s in %s", ht_param_info ((ht_param_id) id)->name, alg[a].name, col[c].name);
#define ACTIVE(id) halftone_param_active (&v, id)
        CHECK (ACTIVE (HT_PARAM_ALGORITHM) && ACTIVE (HT_PARAM_COLOR) && ACTIVE (HT_PARAM_BACKEND) &&
                 ACTIVE (HT_PARAM_THREADS), "%s in %s: always there", alg[a].name, col[c].name);
        if (search)
          CHECK (!ACTIVE (HT_PARAM_LEVELS) && !ACTIVE (HT_PARAM_SERPENTINE), "%s in %s: levels or serpentine",
                 alg[a].name, col[c].name);
        if (luma)
          CHECK (!ACTIVE (HT_PARAM_INTERPLANE_FORWARD) && !ACTIVE (HT_PARAM_INTERPLANE_BACKWARD) &&
                   !ACTIVE (HT_PARAM_RANDOMIZE) && !ACTIVE (HT_PARAM_BLACK),
                 "%s in luma: the colour controls", alg[a].name);
        if (algorithm < HT_ALGORITHM_LES)
          CHECK (ACTIVE (HT_PARAM_INTERPLANE_FORWARD) == coupled && ACTIVE (HT_PARAM_RANDOMIZE) == coupled &&
                   ACTIVE (HT_PARAM_BLACK) == (col[c].value == HT_COLOR_CMYK) && ACTIVE (HT_PARAM_LEVELS),
                 "%s in %s: the colour controls", alg[a].name, col[c].name);
        CHECK (ACTIVE (HT_PARAM_WINDOW) ==
                 ((algorithm == HT_ALGORITHM_LES || algorithm == HT_ALGORITHM_PES) && !coupled),
               "%s in %s: window", alg[a].name, col[c].name);
        CHECK (ACTIVE (HT_PARAM_SIGMA) == (search && !coupled) && ACTIVE (HT_PARAM_INIT) == (search && !coupled) &&
                 ACTIVE (HT_PARAM_MAX_ROUNDS) == (search && !coupled),
               "%s in %s: the search controls", alg[a].name, col[c].name);
        CHECK (ACTIVE (HT_PARAM_MASK_SIZE) == (algorithm == HT_ALGORITHM_BAYER && !coupled),
               "%s in %s: mask size", alg[a].name, col[c].name);
        CHECK (ACTIVE (HT_PARAM_COEFFICIENTS) == (algorithm == HT_FILTER_CUSTOM), "%s in %s: coefficients",
               alg[a].name, col[c].name);
#undef ACTIVE
      }
}

/* What the preview compares: the values a run uses, and space. */
static void
check_same (void)
{
  HalftoneVals a, b;

  halftone_vals_defaults (&a);
  b = a;
  b.value[HT_PARAM_WINDOW] = 2;
  g_strlcpy (b.text[HT_PARAM_COEFFICIENTS], "- * 1", HALFTONE_TEXT_MAX);
  b.zoom = 4;
  CHECK (halftone_same_vals (&a, &b), "unused values and the zoom count");
  b.value[HT_PARAM_LEVELS] = 3;
  CHECK (!halftone_same_vals (&a, &b), "levels do not count");
  b = a;
  b.value[HT_PARAM_SPACE] = HT_SPACE_LINEAR;
  CHECK (!halftone_same_vals (&a, &b), "space does not count");
  a.value[HT_PARAM_ALGORITHM] = b.value[HT_PARAM_ALGORITHM] = HT_FILTER_CUSTOM;
  b = a;
  g_strlcpy (b.text[HT_PARAM_COEFFICIENTS], "- * 1", HALFTONE_TEXT_MAX);
  CHECK (!halftone_same_vals (&a, &b), "custom coefficients do not count");
}

static void
check_blob (void)
{
  HalftoneVals v, back, d;
  gsize        size = 0;
  guchar      *blob;
  OldVals      old;

  halftone_vals_defaults (&d);
  v = d;
  v.value[HT_PARAM_ALGORITHM] = HT_ALGORITHM_PES;
  v.value[HT_PARAM_WINDOW]    = 3;
  v.zoom = 4;
  blob = halftone_vals_to_blob (&v, &size);
  back = d;
  CHECK (halftone_vals_from_blob (blob, size, &back) && back.value[HT_PARAM_ALGORITHM] == HT_ALGORITHM_PES &&
           back.value[HT_PARAM_WINDOW] == 3 && back.zoom == 4,
         "a stored blob read back");
  CHECK (!halftone_vals_from_blob (blob, size - 1, &back), "a blob one byte short read");
  blob[4] ^= 1; /* the signature */
  back = d;
  CHECK (!halftone_vals_from_blob (blob, size, &back) && back.value[HT_PARAM_ALGORITHM] == d.value[HT_PARAM_ALGORITHM],
         "a blob of another layout read");
  g_free (blob);

  memset (&old, 0, sizeof old);
  old.levels = 2;
  old.zoom   = 1;
  CHECK (sizeof old != size, "the old settings have the new size");
  CHECK (!halftone_vals_from_blob (&old, sizeof old, &back), "the old version's settings read");

  v = d;
  v.value[HT_PARAM_LEVELS] = 1;
  blob = halftone_vals_to_blob (&v, &size);
  CHECK (!halftone_vals_from_blob (blob, size, &back), "stored values that do not pass the checks read");
  g_free (blob);
  v = d;
  v.zoom = 0;
  memset (v.text[HT_PARAM_COEFFICIENTS], 'x', HALFTONE_TEXT_MAX); /* no NUL */
  blob = halftone_vals_to_blob (&v, &size);
  CHECK (halftone_vals_from_blob (blob, size, &back) && back.zoom == 1 &&
           strlen (back.text[HT_PARAM_COEFFICIENTS]) == HALFTONE_TEXT_MAX - 1,
         "zoom or text not made safe");
  g_free (blob);
}

static int
print_pdb (const gchar *proc)
{
  gint          n    = 0;
  GimpParamDef *args = halftone_pdb_args (proc, &n);
  HalftoneVals  d;

  if (!args)
    {
      fprintf (stderr, "unknown procedure %s\n", proc);
      return 2;
    }
  halftone_vals_defaults (&d);
  for (gint i = 3; i < n; i++)
    {
      const gint id = halftone_pdb_arg_param (proc, i);

      if (args[i].type == GIMP_PDB_STRING)
        printf ("%s\t%d\t%s\n", args[i].name, args[i].type, d.text[id]);
      else
        printf ("%s\t%d\t%.17g\n", args[i].name, args[i].type, d.value[id]);
    }
  halftone_pdb_args_free (args, n);
  return 0;
}

int
main (int argc, char **argv)
{
  if (argc == 3 && strcmp (argv[1], "--pdb") == 0)
    return print_pdb (argv[2]);
  check_fixed_procedure (PLUG_IN_PROC, 11);
  check_fixed_procedure (PLUG_IN_PROC_FULL, 21);
  check_description_procedure ();
  check_defaults_and_params ();
  check_ranges ();
  check_combinations ();
  check_sensitivity ();
  check_same ();
  check_blob ();
  return test_finish ("test-halftone-vals");
}
