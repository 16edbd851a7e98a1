/* The GIMP 2.10 plug-in's settings: what the user sets, remembered
 * between runs (gimp_set_data), their checks and their PDB form.
 *
 * The method parameters are not restated here: they are the library's
 * description (ht_param_info, core/halftone.h), one value a parameter,
 * so that a parameter added there has its value, default, check, PDB
 * argument and dialog widget with no change in ui/.
 *
 * Copyright (C) 2026 the GEGL Halftone authors. GPL-3.0-or-later.
 */
#ifndef HT_HALFTONE_VALS_H
#define HT_HALFTONE_VALS_H

/* HALFTONE_VALS_PORTABLE (the GIMP 3 plug-in, ui/gimp3/) leaves out the
 * GIMP 2.10 PDB and gimp_set_data parts: GIMP 3's libgimp has neither. */
#ifdef HALFTONE_VALS_PORTABLE
#include <glib.h>
#else
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wconversion"
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#include <libgimp/gimp.h>
#pragma GCC diagnostic pop
#endif

#include "halftone.h"

/* The menu entry, with the 11 arguments it has always had. */
#define PLUG_IN_PROC      "plug-in-halftone-dither"
/* Those 11 and 10 more, in a fixed order too. GIMP 2.10's Script-Fu and
 * Python-Fu refuse a call with fewer arguments than the procedure has,
 * so neither list changes; new parameters go to the next procedure. */
#define PLUG_IN_PROC_FULL "plug-in-halftone-dither2"
/* Every parameter of the library's description, in its order (space
 * among them): made from the description, so that a parameter added
 * there appears here by itself (and the argument count changes with it). */
#define PLUG_IN_PROC_DESC "plug-in-halftone-dither3"

/* Room for a text parameter (the custom coefficients), NUL included. */
#define HALFTONE_TEXT_MAX 256

typedef struct
{
  /* a value for every parameter of the description (ht_param_id): a
   * number, a switch (0 or 1), a choice's value (the library's enum
   * values, which are also the GEGL operation's), a seed */
  gdouble value[HT_PARAM_COUNT];
  /* the parameters of type HT_TYPE_TEXT (the custom coefficients) */
  gchar   text[HT_PARAM_COUNT][HALFTONE_TEXT_MAX];
  gint    zoom;  /* preview magnification, 1..8 (dialog only)        */
} HalftoneVals;

/* The description's defaults, zoom 1. */
void     halftone_vals_defaults (HalftoneVals *v);

gint     halftone_vals_algorithm (const HalftoneVals *v);
gint     halftone_vals_color     (const HalftoneVals *v);

/* Whether a run with `v` uses parameter `id` (ht_param_used for v's
 * algorithm and colour mode): the dialog's sensitivity, what is set on
 * the op and what halftone_same_vals compares. */
gboolean halftone_param_active (const HalftoneVals *v, ht_param_id id);

/* NULL when the values can be used; else a one-line message, and in
 * *param (may be NULL) the parameter it is about, or -1 for a
 * combination. Ranges and types from the description (ht_params_set_
 * number/_text), combinations from ht_check; a parameter the run does
 * not use is range-checked but takes no part in the combinations. */
gchar   *halftone_check_vals (const HalftoneVals *v, gint *param);

/* A search's estimated seconds on the CPU (ht_estimate_seconds) for an
 * image of width x height with `channels` (alpha counted); -1 for a
 * method that is not a search or values that do not parse. What the
 * dialogs say before a long run starts. */
gdouble  halftone_vals_estimate (const HalftoneVals *v, gint width, gint height, gint channels);

/* Whether a and b give the same result (the zoom, and the values of
 * parameters the run does not use, aside). */
gboolean halftone_same_vals (const HalftoneVals *a, const HalftoneVals *b);

#ifndef HALFTONE_VALS_PORTABLE
/* Installs the PDB procedures and the menu entry (the query step). */
void     halftone_install_procedures (void);

/* The arguments of procedure `proc` (one of the three above), made from
 * the description; NULL for another name. Free with
 * halftone_pdb_args_free. */
GimpParamDef *halftone_pdb_args (const gchar *proc, gint *count);
void          halftone_pdb_args_free (GimpParamDef *args, gint count);
/* What argument `i` of `proc` sets: an ht_param_id, or -1 (run-mode, image, drawable, or out of range). */
gint          halftone_pdb_arg_param (const gchar *proc, gint i);

/* The values of a non-interactive call of `proc`: its arguments, the
 * defaults for the rest. FALSE with *error set where the procedure or
 * argument count is wrong. */
gboolean halftone_vals_from_params (const gchar *proc, gint nparams, const GimpParam *param, HalftoneVals *v,
                                    gchar **error);

/* The remembered settings (gimp_set_data under PLUG_IN_PROC), with a
 * signature of the description's layout: a blob of another size or
 * layout (an older version's) is not read. */
void     halftone_vals_store (const HalftoneVals *v);
/* FALSE (and *v untouched) where nothing usable is stored. */
gboolean halftone_vals_load  (HalftoneVals *v);
/* The blob halftone_vals_store stores, and its reading: FALSE for a
 * blob of another size or signature, or values that do not pass
 * halftone_check_vals. */
gpointer halftone_vals_to_blob   (const HalftoneVals *v, gsize *size);
gboolean halftone_vals_from_blob (gconstpointer blob, gsize size, HalftoneVals *v);
#endif

#endif
