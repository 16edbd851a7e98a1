/* The GIMP 3 plug-in's common header: GIMP 3's libgimp and libgimpui
 * (their headers are not clean under -Wconversion) and the names shared
 * by its files.
 *
 * Copyright (C) 2026 the GEGL Halftone authors. GPL-3.0-or-later.
 */
#ifndef HT_HALFTONE_GIMP3_H
#define HT_HALFTONE_GIMP3_H

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wconversion"
#pragma GCC diagnostic ignored "-Wshadow"
#pragma GCC diagnostic ignored "-Wignored-qualifiers"
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#include <libgimp/gimp.h>
#include <libgimp/gimpui.h>
#pragma GCC diagnostic pop

#include "halftone-vals.h"

/* The procedure (the menu entry, scripts, Filters > Repeat). */
#define PLUG_IN_PROC_GIMP3 "plug-in-halftone"
#define PLUG_IN_BINARY     "halftone-gimp3"

#endif
