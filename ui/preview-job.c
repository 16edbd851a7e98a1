/* Running the GEGL operation for the GIMP 2.10 plug-in (preview-job.h).
 *
 * The preview is computed in a thread of its own so that the dialog never
 * blocks: one computation at a time; a change while it runs cancels it
 * and starts a new one once it has ended. Results come back to the main
 * loop in an idle callback.
 *
 * Copyright (C) 2026 the GEGL Halftone authors. GPL-3.0-or-later.
 */
#include "ht-config.h"

#include <glib/gi18n-lib.h>

#include "halftone.h"
#include "preview-job.h"

#define GEGL_OP "halftone:dither"

GeglBuffer *
halftone_render (GeglBuffer *source, const HalftoneVals *v, RenderTalk *talk)
{
  GeglNode   *graph = gegl_node_new ();
  GeglBuffer *out   = NULL;
  GeglNode   *src, *op, *sink;

  src  = gegl_node_new_child (graph, "operation", "gegl:buffer-source",
                              "buffer", source, NULL);
  op   = gegl_node_new_child (graph, "operation", GEGL_OP, NULL);
  sink = gegl_node_new_child (graph, "operation", "gegl:buffer-sink",
                              "buffer", &out, NULL);
  gegl_node_set (op,
                 "algorithm",    v->algorithm,
                 "coefficients", v->coefficients,
                 "levels",       v->levels,
                 "color-mode",   v->color_mode,
                 "space",        v->space,
                 "serpentine",   v->serpentine,
                 "backend",      v->backend,
                 "threads",      v->threads,
                 NULL);
  if (halftone_is_search (v->algorithm))
    gegl_node_set (op,
                   "window",     v->window,
                   "sigma",      v->sigma,
                   "init",       v->init,
                   "schedule",   v->schedule,
                   "max-rounds", v->max_rounds,
                   "seed",       v->seed,
                   NULL);
  if (v->color_mode == HT_COLOR_PLANE_DEPENDENT || v->color_mode == HT_COLOR_CMYK)
    gegl_node_set (op,
                   "interplane-forward",  v->interplane_forward,
                   "interplane-backward", v->interplane_backward,
                   "randomize",           v->randomize,
                   "seed",                v->seed,
                   "black",               v->black,
                   NULL);
  if (talk->progress)
    g_signal_connect (op, "progress", talk->progress, talk->progress_data);
  if (talk->cancel)
    g_object_set_data (G_OBJECT (gegl_node_get_gegl_operation (op)), "halftone-cancel", talk->cancel);
  gegl_node_link_many (src, op, sink, NULL);
  gegl_node_process (sink);
  talk->failed = g_strdup (g_object_get_data (G_OBJECT (gegl_node_get_gegl_operation (op)), "halftone-failed"));
  talk->notice = g_strdup (g_object_get_data (G_OBJECT (gegl_node_get_gegl_operation (op)), "halftone-notice"));
  g_object_unref (graph);
  if (!out && !talk->failed)
    talk->failed = g_strdup (_("the halftone:dither operation gave no result"));
  if (talk->failed)
    g_clear_object (&out);
  return out;
}

/* ---------------------------------------------- preview off the UI thread */

struct PreviewJob
{
  HalftoneVals   vals;
  GeglBuffer    *source;
  GThread       *thread;
  gint           cancel;
  gint           permille;  /* progress, written by the thread */
  guint          done_id;   /* the idle callback that hands the result on */
  PreviewJobDone done;
  gpointer       user;
  GeglBuffer    *result;
  RenderTalk     talk;
};

static void
job_progress (GeglNode *node, gdouble fraction, gpointer data)
{
  PreviewJob *job = data;

  (void) node;
  g_atomic_int_set (&job->permille, (gint) (CLAMP (fraction, 0.0, 1.0) * 1000));
}

static gboolean
job_done (gpointer data)
{
  PreviewJob *job = data;

  job->done (job, job->user);
  return G_SOURCE_REMOVE;
}

static gpointer
job_run (gpointer data)
{
  PreviewJob *job = data;

  job->talk.cancel        = &job->cancel;
  job->talk.progress      = G_CALLBACK (job_progress);
  job->talk.progress_data = job;
  job->result  = halftone_render (job->source, &job->vals, &job->talk);
  job->done_id = g_idle_add (job_done, job);
  return NULL;
}

PreviewJob *
preview_job_start (GeglBuffer *source, const HalftoneVals *vals, PreviewJobDone done, gpointer user)
{
  PreviewJob *job = g_new0 (PreviewJob, 1);

  job->vals   = *vals;
  job->source = g_object_ref (source);
  job->done   = done;
  job->user   = user;
  job->thread = g_thread_new ("halftone-preview", job_run, job);
  return job;
}

void
preview_job_cancel (PreviewJob *job)
{
  g_atomic_int_set (&job->cancel, 1);
}

gboolean
preview_job_cancelled (PreviewJob *job)
{
  return g_atomic_int_get (&job->cancel) != 0;
}

gdouble
preview_job_progress (PreviewJob *job)
{
  return g_atomic_int_get (&job->permille) / 1000.0;
}

const HalftoneVals *
preview_job_vals (PreviewJob *job)
{
  return &job->vals;
}

GeglBuffer *
preview_job_take (PreviewJob *job, gchar **notice, gchar **failed)
{
  *notice = g_steal_pointer (&job->talk.notice);
  *failed = g_steal_pointer (&job->talk.failed);
  return g_steal_pointer (&job->result);
}

/* `thread`: whether the thread is still to be joined. */
static void
job_free (PreviewJob *job, gboolean thread)
{
  if (thread)
    g_thread_join (job->thread);
  g_clear_object (&job->result);
  g_object_unref (job->source);
  g_free (job->talk.failed);
  g_free (job->talk.notice);
  g_free (job);
}

void
preview_job_free (PreviewJob *job)
{
  job_free (job, TRUE);
}

void
preview_job_stop (PreviewJob *job)
{
  preview_job_cancel (job);
  g_thread_join (job->thread);
  /* the thread has queued job_done by now: it must not run */
  g_source_remove (job->done_id);
  job_free (job, FALSE);
}
