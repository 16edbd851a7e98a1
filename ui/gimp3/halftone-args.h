/* The GIMP 3 procedure's arguments, made from the library's description
 * (ht_param_info): one argument a parameter, named as the op's property,
 * so that GimpProcedureDialog makes the widgets, GIMP remembers the last
 * settings and keeps presets, and scripts call it by argument name.
 *
 * Copyright (C) 2026 the GEGL Halftone authors. GPL-3.0-or-later.
 */
#ifndef HT_HALFTONE_ARGS_H
#define HT_HALFTONE_ARGS_H

#include "halftone-gimp3.h"

/* Adds an argument for every parameter of the description, in its
 * order. */
void     halftone_args_add      (GimpProcedure *procedure);

/* The values the config holds; NULL, or a one-line message where one
 * does not fit HalftoneVals (a text longer than it holds). */
gchar   *halftone_args_to_vals  (GimpProcedureConfig *config, HalftoneVals *v);

#endif
