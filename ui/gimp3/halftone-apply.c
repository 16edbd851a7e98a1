/* Applying the halftone to a drawable in GIMP 3 (halftone-apply.h).
 *
 * Copyright (C) 2026 the GEGL Halftone authors. GPL-3.0-or-later.
 */
#include "ht-config.h"

#include <glib/gi18n-lib.h>

#include "halftone-apply.h"

/* How often GIMP's progress bar is fed: often enough to look alive, few
 * enough PDB calls to cost nothing. */
#define PROGRESS_MS 100

gboolean
halftone_apply_area (GimpDrawable *drawable, GeglRectangle *area)
{
  gint x = 0, y = 0, w = 0, h = 0;

  if (!gimp_drawable_mask_intersect (drawable, &x, &y, &w, &h) || w <= 0 || h <= 0)
    return FALSE;
  *area = (GeglRectangle) { x, y, w, h };
  return TRUE;
}

GeglBuffer *
halftone_apply_source (GimpDrawable *drawable, const GeglRectangle *area)
{
  GeglBuffer *whole = gimp_drawable_get_buffer (drawable);
  GeglBuffer *part  = gegl_buffer_new (area, gegl_buffer_get_format (whole));

  /* a copy, not a sub-buffer: the worker thread must not read GIMP's
   * tiles while the main loop talks to GIMP */
  gegl_buffer_copy (whole, area, GEGL_ABYSS_NONE, part, area);
  g_object_unref (whole);
  return part;
}

static gboolean
feed_progress (gpointer data)
{
  gimp_progress_update (preview_job_progress (data));
  return G_SOURCE_CONTINUE;
}

static void
cancelled (GCancellable *cancel, gpointer job)
{
  (void) cancel;
  preview_job_cancel (job);
}

void
halftone_apply_wait (PreviewJob *job, GMainLoop *loop, GCancellable *cancel)
{
  guint  timer = g_timeout_add (PROGRESS_MS, feed_progress, job);
  gulong id    = cancel ? g_cancellable_connect (cancel, G_CALLBACK (cancelled), job, NULL) : 0;

  g_main_loop_run (loop);
  if (cancel)
    g_cancellable_disconnect (cancel, id);
  g_source_remove (timer);
}

static void
render_done (PreviewJob *job, gpointer loop)
{
  (void) job;
  g_main_loop_quit (loop);
}

GeglBuffer *
halftone_apply_render (GeglBuffer *source, const HalftoneVals *v, GCancellable *cancel, gchar **notice,
                       GError **error)
{
  GMainLoop  *loop = g_main_loop_new (NULL, FALSE);
  PreviewJob *job  = preview_job_start (source, v, render_done, loop);
  GeglBuffer *result;
  gchar      *failed = NULL;

  halftone_apply_wait (job, loop, cancel);
  result = preview_job_take (job, notice, &failed);
  if (preview_job_cancelled (job))
    {
      g_clear_object (&result);
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_CANCELLED, _("Halftone: cancelled; the layer is unchanged"));
    }
  else if (!result)
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, _("Halftone: %s"),
                 failed ? failed : _("the halftone:dither operation gave no result"));
  g_free (failed);
  preview_job_free (job);
  g_main_loop_unref (loop);
  return result;
}

void
halftone_apply_merge (GimpDrawable *drawable, GeglBuffer *result, const GeglRectangle *area)
{
  GeglBuffer *shadow = gimp_drawable_get_shadow_buffer (drawable);

  gegl_buffer_copy (result, area, GEGL_ABYSS_NONE, shadow, area);
  gegl_buffer_flush (shadow);
  g_object_unref (shadow);
  gimp_drawable_merge_shadow (drawable, TRUE);
  gimp_drawable_update (drawable, area->x, area->y, area->width, area->height);
}

gboolean
halftone_apply (GimpDrawable *drawable, const HalftoneVals *v, GCancellable *cancel, GError **error)
{
  GeglRectangle area;
  GeglBuffer   *source, *result;
  gchar        *notice = NULL;

  if (!halftone_apply_area (drawable, &area))
    return TRUE; /* nothing selected on this layer: nothing to do, as GIMP's own filters */
  gimp_progress_init (_("Halftone"));
  source = halftone_apply_source (drawable, &area);
  result = halftone_apply_render (source, v, cancel, &notice, error);
  g_object_unref (source);
  if (!result)
    {
      g_free (notice);
      return FALSE;
    }
  halftone_apply_merge (drawable, result, &area);
  g_object_unref (result);
  gimp_progress_update (1.0);
  if (notice)
    gimp_message (notice);
  g_free (notice);
  return TRUE;
}
