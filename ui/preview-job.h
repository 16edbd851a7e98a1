/* Running the GEGL operation for the GIMP 2.10 plug-in: once in the
 * calling thread (OK, scripts), or as the dialog's preview job in a
 * thread of its own that a newer change cancels.
 *
 * Copyright (C) 2026 the GEGL Halftone authors. GPL-3.0-or-later.
 */
#ifndef HT_PREVIEW_JOB_H
#define HT_PREVIEW_JOB_H

#include <gegl.h>

#include "halftone-vals.h"

/* What a run of the op said: why it gave no halftone, or its notice (e.g.
 * computed on the CPU instead of the GPU); the op leaves these on its
 * operation object (plugin/halftone-dither.c). */
typedef struct
{
  gint     *cancel;   /* set to 1 from another thread cancels the run */
  GCallback progress; /* the op's "progress" signal, or NULL          */
  gpointer  progress_data;
  gchar    *failed;
  gchar    *notice;
  gboolean  no_gpu;   /* the notice is that the GPU asked for was missing or failed */
} RenderTalk;

/* The installed op's range for its numeric, switch or enum property
 * `name` (an enum's: any int; its values are checked when set); FALSE
 * where it has no such property. */
gboolean    halftone_op_range (const gchar *name, gdouble *min, gdouble *max);

/* Halftones `source` with `v`, every parameter the run uses set on the
 * op by the description's name (a property the installed op lacks is
 * left out where `v` holds its default); returns a new buffer in the op's output
 * format covering the same extent, or NULL with talk->failed set: a
 * failed run never reaches the layer. */
GeglBuffer *halftone_render (GeglBuffer *source, const HalftoneVals *v, RenderTalk *talk);

/* One preview computation in a thread of its own. `done` runs in the
 * main loop when it has ended (finished, failed or cancelled); then the
 * owner takes what it wants and frees the job. */
typedef struct PreviewJob PreviewJob;
typedef void (*PreviewJobDone) (PreviewJob *job, gpointer user);

PreviewJob         *preview_job_start     (GeglBuffer *source, const HalftoneVals *vals,
                                           PreviewJobDone done, gpointer user);
/* Asks it to stop (the op stops within about 50 ms); `done` still runs. */
void                preview_job_cancel    (PreviewJob *job);
gboolean            preview_job_cancelled (PreviewJob *job);
/* 0..1, written by the thread */
gdouble             preview_job_progress  (PreviewJob *job);
const HalftoneVals *preview_job_vals      (PreviewJob *job);
/* After `done`: the result (NULL where it failed) and its run's notice
 * and failure (each NULL or a string the caller frees). A missing GPU's
 * notice is left out: the dialog's GPU line says it. */
GeglBuffer         *preview_job_take      (PreviewJob *job, gchar **notice, gchar **failed);
/* After `done`. */
void                preview_job_free      (PreviewJob *job);
/* Cancels, waits for the thread and frees, without `done` (closing). */
void                preview_job_stop      (PreviewJob *job);

#endif
