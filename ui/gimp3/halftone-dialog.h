/* The GIMP 3 plug-in's dialog: GimpProcedureDialog's widgets for the
 * procedure's arguments (made from the description), grouped as the
 * description groups them, only those the chosen algorithm and colour
 * mode use shown; a preview of the whole result computed in a worker
 * thread, with a progress bar, that any change, Cancel, Escape or closing
 * stops.
 *
 * Copyright (C) 2026 the GEGL Halftone authors. GPL-3.0-or-later.
 */
#ifndef HT_HALFTONE_DIALOG_H
#define HT_HALFTONE_DIALOG_H

#include "halftone-gimp3.h"

/* Shows the dialog; on OK applies the settings to the drawable (merging
 * the preview's result where it is of the final settings, else running
 * them with GIMP's progress bar). GIMP_PDB_SUCCESS, GIMP_PDB_CANCEL, or
 * GIMP_PDB_EXECUTION_ERROR with *error set. */
GimpPDBStatusType halftone_dialog_run (GimpProcedure *procedure, GimpProcedureConfig *config,
                                       GimpDrawable *drawable, GError **error);

#endif
