/* The GIMP 2.10 plug-in's settings: what the user sets, remembered
 * between runs (gimp_set_data), their checks and their PDB form.
 *
 * Copyright (C) 2026 the GEGL Halftone authors. GPL-3.0-or-later.
 */
#ifndef HT_HALFTONE_VALS_H
#define HT_HALFTONE_VALS_H

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wconversion"
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#include <libgimp/gimp.h>
#pragma GCC diagnostic pop

#define PLUG_IN_PROC      "plug-in-halftone-dither"
/* The same with every property of the operation as an argument. GIMP
 * 2.10's Script-Fu and Python-Fu refuse a call with fewer arguments than
 * the procedure has, so the first procedure keeps its 11 arguments for
 * the scripts written for it, and this one appends the rest. */
#define PLUG_IN_PROC_FULL "plug-in-halftone-dither2"
#define PDB_ARGS_SHORT    11
#define PDB_ARGS_FULL     21

#define COEF_MAX 256

/* The algorithm, colour mode, backend, start and schedule are the
 * library's enum values, which are also the GEGL operation's: the lists
 * (ht_choices) say which there are. The fractions are the operation's
 * (0..1). A change of this struct changes its size, so values stored by
 * an older version are not read (the defaults are used instead). */
typedef struct
{
  gint     algorithm;  /* HT_LIST_ALGORITHMS: ht_filter_id (custom is 8),
                          then les, pes, dbs (HT_ALGORITHM_*)         */
  gchar    coefficients[COEF_MAX];
  gint     levels;     /* 2..256                                      */
  gint     color_mode; /* ht_color_mode (HT_LIST_COLOR_MODES)         */
  gint     space;      /* 0 perceptual, 1 linear (the op's own enum)  */
  gboolean serpentine;
  gint     backend;    /* ht_backend (HT_LIST_BACKENDS)               */
  gint     threads;    /* 0 = all cores                               */
  gint     zoom;       /* preview magnification, 1..8 (dialog only)   */
  /* the search methods (docs/search.md) */
  gint     window;     /* m of les and pes, 1..HT_SEARCH_WINDOW_MAX  */
  gdouble  sigma;      /* the eye model, 0.25..4                     */
  gint     init;       /* ht_search_init (HT_LIST_INITS)             */
  gint     schedule;   /* ht_search_schedule (HT_LIST_SCHEDULES)     */
  gint     max_rounds; /* 0 = until a round changes nothing          */
  /* keys the search's random start and plane-dependent colour's
   * filter perturbation */
  gint     seed;
  /* plane-dependent colour and cmyk (docs/color.md) */
  gdouble  interplane_forward;
  gdouble  interplane_backward;
  gdouble  randomize;
  gdouble  black;      /* cmyk black generation                      */
} HalftoneVals;

extern const HalftoneVals halftone_defaults;

gboolean halftone_is_search (gint algorithm);

/* NULL when the values can be used; else a one-line message. */
gchar   *halftone_check_vals (const HalftoneVals *v);

/* Whether a and b give the same result (the zoom aside). */
gboolean halftone_same_vals (const HalftoneVals *a, const HalftoneVals *b);

/* Installs both PDB procedures and the menu entry (the query step). */
void     halftone_install_procedures (void);

/* The values of a non-interactive call of either procedure: the
 * arguments it has, the defaults for the rest. FALSE with *error set
 * where the argument count is wrong. */
gboolean halftone_vals_from_params (gint nparams, const GimpParam *param, HalftoneVals *v, gchar **error);

#endif
