/* Applying the halftone to a drawable in GIMP 3: the selection's
 * bounding box is halftoned whole by the op in a worker thread (so that
 * the plug-in's main loop keeps talking to GIMP and a cancel stops it),
 * GIMP's progress bar follows the op's progress, and the result goes to
 * the shadow buffer, merged only at the end: a cancel or a failure leaves
 * the layer as it was.
 *
 * Copyright (C) 2026 the GEGL Halftone authors. GPL-3.0-or-later.
 */
#ifndef HT_HALFTONE_APPLY_H
#define HT_HALFTONE_APPLY_H

#include "halftone-gimp3.h"
#include "preview-job.h"

/* The selection's bounding box within the drawable; FALSE where the
 * selection and the drawable do not meet. */
gboolean    halftone_apply_area   (GimpDrawable *drawable, GeglRectangle *area);

/* A copy of the drawable's pixels in `area`, in its own format: what the
 * op halftones, for the preview and the apply alike. */
GeglBuffer *halftone_apply_source (GimpDrawable *drawable, const GeglRectangle *area);

/* Runs the main loop until `job` has ended (its done callback quits
 * `loop`), with GIMP's progress bar following it; `cancel` (may be NULL)
 * cancels the job. */
void        halftone_apply_wait   (PreviewJob *job, GMainLoop *loop, GCancellable *cancel);

/* Halftones `source` with `v` as halftone_apply_wait runs it: the result,
 * or NULL with *error set (cancelled, or the op's one-line reason).
 * *notice gets the run's notice (the CPU computed it instead of the GPU)
 * or NULL. */
GeglBuffer *halftone_apply_render (GeglBuffer *source, const HalftoneVals *v, GCancellable *cancel,
                                   gchar **notice, GError **error);

/* Writes `result` (covering `area`) to the drawable's shadow buffer and
 * merges it as one undo step (GIMP applies the selection mask). */
void        halftone_apply_merge  (GimpDrawable *drawable, GeglBuffer *result, const GeglRectangle *area);

/* The whole apply: area, source, render, merge. FALSE with *error set
 * where nothing was merged. */
gboolean    halftone_apply        (GimpDrawable *drawable, const HalftoneVals *v, GCancellable *cancel,
                                   GError **error);

#endif
