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

gboolean
halftone_op_range (const gchar *name, gdouble *min, gdouble *max)
{
  GParamSpec *p = gegl_operation_find_property (GEGL_OP, name);

  if (!p)
    return FALSE;
  switch (G_TYPE_FUNDAMENTAL (G_PARAM_SPEC_VALUE_TYPE (p)))
    {
    case G_TYPE_INT:
      *min = G_PARAM_SPEC_INT (p)->minimum;
      *max = G_PARAM_SPEC_INT (p)->maximum;
      return TRUE;
    case G_TYPE_UINT:
      *min = G_PARAM_SPEC_UINT (p)->minimum;
      *max = G_PARAM_SPEC_UINT (p)->maximum;
      return TRUE;
    case G_TYPE_INT64:
      *min = (gdouble) G_PARAM_SPEC_INT64 (p)->minimum;
      *max = (gdouble) G_PARAM_SPEC_INT64 (p)->maximum;
      return TRUE;
    case G_TYPE_UINT64:
      *min = (gdouble) G_PARAM_SPEC_UINT64 (p)->minimum;
      *max = (gdouble) G_PARAM_SPEC_UINT64 (p)->maximum;
      return TRUE;
    case G_TYPE_DOUBLE:
      *min = G_PARAM_SPEC_DOUBLE (p)->minimum;
      *max = G_PARAM_SPEC_DOUBLE (p)->maximum;
      return TRUE;
    case G_TYPE_FLOAT:
      *min = G_PARAM_SPEC_FLOAT (p)->minimum;
      *max = G_PARAM_SPEC_FLOAT (p)->maximum;
      return TRUE;
    case G_TYPE_BOOLEAN:
      *min = 0;
      *max = 1;
      return TRUE;
    case G_TYPE_ENUM:
      *min = G_MININT;
      *max = G_MAXINT;
      return TRUE;
    default:
      return FALSE;
    }
}

/* Whether `v` holds the description's default for parameter `id`: what
 * an op without that property uses (it starts from ht_params_init). */
static gboolean
is_default (const HalftoneVals *v, ht_param_id id)
{
  const ht_param *d = ht_param_info (id);

  return d->type == HT_TYPE_TEXT ? g_strcmp0 (v->text[id], d->def_text) == 0 : v->value[id] == d->def;
}

/* Sets parameter `id` of `v` on `op` as the op's property of the same
 * name, converted to the property's type; FALSE with *why set where the
 * installed op cannot take it (a property it does not have, with a value
 * other than the default, or a value outside its range). */
static gboolean
set_param (GeglNode *op, const HalftoneVals *v, ht_param_id id, gchar **why)
{
  const ht_param *d = ht_param_info (id);
  GParamSpec     *p = gegl_operation_find_property (GEGL_OP, d->name);
  GValue          value = G_VALUE_INIT;
  gdouble         x = v->value[id], lo = 0, hi = 0;
  GType           type;

  if (!p)
    {
      if (is_default (v, id))
        return TRUE; /* an older op: it runs with the default all the same */
      /* TRANSLATORS: a property's name ("eye-radius"); the operation is older than the plug-in */
      *why = g_strdup_printf (_("the installed halftone:dither operation has no property %s (it is older than "
                                "this plug-in): it runs only with that property's default"), d->name);
      return FALSE;
    }
  type = G_PARAM_SPEC_VALUE_TYPE (p);
  g_value_init (&value, type);
  if (d->type == HT_TYPE_TEXT)
    {
      if (type != G_TYPE_STRING)
        goto mismatch;
      g_value_set_string (&value, v->text[id]);
    }
  else
    {
      if (!halftone_op_range (d->name, &lo, &hi))
        goto mismatch;
      if (!(x >= lo && x <= hi))
        {
          /* TRANSLATORS: a property's name, its least and largest values in the installed operation, the value */
          *why = g_strdup_printf (_("the installed halftone:dither operation takes %s %g..%g, got %g"), d->name,
                                  lo, hi, x);
          g_value_unset (&value);
          return FALSE;
        }
      switch (G_TYPE_FUNDAMENTAL (type))
        {
        case G_TYPE_INT:     g_value_set_int (&value, (gint) x); break;
        case G_TYPE_UINT:    g_value_set_uint (&value, (guint) x); break;
        case G_TYPE_INT64:   g_value_set_int64 (&value, (gint64) x); break;
        case G_TYPE_UINT64:  g_value_set_uint64 (&value, (guint64) x); break;
        case G_TYPE_DOUBLE:  g_value_set_double (&value, x); break;
        case G_TYPE_FLOAT:   g_value_set_float (&value, (gfloat) x); break;
        case G_TYPE_BOOLEAN: g_value_set_boolean (&value, x != 0); break;
        case G_TYPE_ENUM:
          {
            GEnumClass *klass = g_type_class_ref (type);
            gboolean    known = g_enum_get_value (klass, (gint) x) != NULL;

            g_type_class_unref (klass);
            if (!known)
              goto mismatch;
            g_value_set_enum (&value, (gint) x);
            break;
          }
        default:
          goto mismatch;
        }
    }
  gegl_node_set_property (op, d->name, &value);
  g_value_unset (&value);
  return TRUE;

mismatch:
  /* TRANSLATORS: a property's name and value; the operation is of another version than the plug-in */
  *why = g_strdup_printf (_("the installed halftone:dither operation does not take %s %g"), d->name, x);
  g_value_unset (&value);
  return FALSE;
}

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
  /* the parameters this run uses, by the description's names (the op's
   * properties); the others keep the op's defaults */
  for (gint id = 0; id < HT_PARAM_COUNT; id++)
    if (halftone_param_active (v, (ht_param_id) id) && !set_param (op, v, (ht_param_id) id, &talk->failed))
      {
        g_object_unref (graph);
        return NULL;
      }
  if (talk->progress)
    g_signal_connect (op, "progress", talk->progress, talk->progress_data);
  if (talk->cancel)
    g_object_set_data (G_OBJECT (gegl_node_get_gegl_operation (op)), "halftone-cancel", talk->cancel);
  gegl_node_link_many (src, op, sink, NULL);
  gegl_node_process (sink);
  talk->failed = g_strdup (g_object_get_data (G_OBJECT (gegl_node_get_gegl_operation (op)), "halftone-failed"));
  talk->notice = g_strdup (g_object_get_data (G_OBJECT (gegl_node_get_gegl_operation (op)), "halftone-notice"));
  talk->no_gpu = g_object_get_data (G_OBJECT (gegl_node_get_gegl_operation (op)), "halftone-no-gpu") != NULL;
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
  /* a missing GPU is the dialog's GPU line's to tell (gpu-probe.c) */
  *notice = job->talk.no_gpu ? NULL : g_steal_pointer (&job->talk.notice);
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
