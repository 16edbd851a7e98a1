/* The GIMP 3 plug-in's dialog (halftone-dialog.h).
 *
 * Error diffusion of a crop is not the crop of the diffused image, and a
 * search's result depends on every pixel, so the preview halftones the
 * whole area (the selection's bounding box) once per change and shows
 * the visible part of that result: what OK writes. That takes from
 * milliseconds to minutes, so it runs in a worker thread (ui/preview-
 * job.c) with a progress bar; a change cancels it (the op stops within
 * about 50 ms) and starts the next once it has ended.
 *
 * Copyright (C) 2026 the GEGL Halftone authors. GPL-3.0-or-later.
 */
#include "ht-config.h"

#include <glib/gi18n-lib.h>

#include "halftone-apply.h"
#include "halftone-args.h"
#include "halftone-dialog.h"

/* The progress bar's refresh, and a pause after a change before the
 * preview starts, so that typing coefficients or dragging a slider does
 * not start a run per step. */
#define PROGRESS_MS 100
#define SETTLE_MS   150

/* The dialog's frames, in the order they are shown: the algorithm, the
 * method's settings (the algorithm group's other parameters), then the
 * description's groups. */
enum
{
  FRAME_ALGORITHM,
  FRAME_METHOD,
  FRAME_COLOR,
  FRAME_OUTPUT,
  FRAME_ADVANCED,
  FRAME_COUNT
};

typedef struct
{
  GimpProcedureDialog *dialog;
  GimpProcedureConfig *config;
  GimpDrawable        *drawable;
  GtkWidget           *preview;
  GtkWidget           *progress;
  GtkWidget           *message;
  GtkWidget           *frames[FRAME_COUNT];
  gboolean             has_area;
  GeglRectangle        area;
  GeglBuffer          *source;  /* the area's pixels, what every run halftones */
  const Babl          *format;  /* the preview area's format for this drawable */
  PreviewJob          *job;     /* the running computation, or NULL           */
  gint64               job_started;
  gboolean             pending; /* a change came while it ran                 */
  GeglBuffer          *result;  /* the last finished result, of result_vals   */
  HalftoneVals         result_vals;
  gchar               *failed;  /* why the last run gave no result            */
  HalftoneVals         failed_vals;
  guint                settle_id;
  guint                progress_id;
  GMainLoop           *waiting; /* OK waits for the running job               */
} Dialog;

static void refresh (Dialog *st);

/* ------------------------------------------------------------ drawing */

/* The format GimpDrawablePreview draws: 8-bit, the drawable's channels. */
static const Babl *
preview_format (GimpDrawable *drawable)
{
  const gboolean alpha = gimp_drawable_has_alpha (drawable);

  if (gimp_drawable_is_gray (drawable))
    return babl_format (alpha ? "Y'A u8" : "Y' u8");
  return babl_format (alpha ? "R'G'B'A u8" : "R'G'B' u8");
}

/* The visible part: the layer, with the result over the area where there
 * is one for the current settings (GimpDrawablePreview blends it by the
 * selection mask, as the merge does). */
static void
draw (Dialog *st)
{
  GimpPreview  *preview = GIMP_PREVIEW (st->preview);
  gint          x = 0, y = 0, w = 0, h = 0;
  const gint    bpp = babl_format_get_bytes_per_pixel (st->format);
  GeglRectangle vis, part;
  GeglBuffer   *whole;
  guchar       *pixels;

  gimp_preview_get_position (preview, &x, &y);
  gimp_preview_get_size (preview, &w, &h);
  if (w <= 0 || h <= 0)
    return;
  vis    = (GeglRectangle) { x, y, w, h };
  pixels = g_malloc ((gsize) w * (gsize) h * (gsize) bpp);
  whole  = gimp_drawable_get_buffer (st->drawable);
  gegl_buffer_get (whole, &vis, 1.0, st->format, pixels, w * bpp, GEGL_ABYSS_NONE);
  g_object_unref (whole);
  if (st->result && gimp_preview_get_update (preview) && gegl_rectangle_intersect (&part, &vis, &st->area))
    gegl_buffer_get (st->result, &part, 1.0, st->format,
                     pixels + ((gsize) (part.y - y) * (gsize) w + (gsize) (part.x - x)) * (gsize) bpp, w * bpp,
                     GEGL_ABYSS_NONE);
  gimp_preview_draw_buffer (preview, pixels, w * bpp);
  g_free (pixels);
}

static void
say (Dialog *st, const gchar *text)
{
  gtk_label_set_text (GTK_LABEL (st->message), text ? text : "");
  gtk_widget_set_visible (st->message, text && *text);
}

/* ----------------------------------------------------- the computation */

static gboolean
show_progress (gpointer data)
{
  Dialog *st = data;
  gchar  *text;

  if (!st->job)
    return G_SOURCE_CONTINUE;
  /* TRANSLATORS: the preview's progress, a percentage, and the seconds
   * it has run (the search methods' first rounds move the percentage
   * slowly: the seconds show that it works) */
  text = g_strdup_printf (_("Computing the preview: %.0f %% (%.0f s)"), 100.0 * preview_job_progress (st->job),
                          (gdouble) (g_get_monotonic_time () - st->job_started) / 1e6);
  gtk_progress_bar_set_fraction (GTK_PROGRESS_BAR (st->progress), preview_job_progress (st->job));
  gtk_progress_bar_set_text (GTK_PROGRESS_BAR (st->progress), text);
  g_free (text);
  return G_SOURCE_CONTINUE;
}

static void
idle_progress (Dialog *st)
{
  gtk_progress_bar_set_fraction (GTK_PROGRESS_BAR (st->progress), 0.0);
  gtk_progress_bar_set_text (GTK_PROGRESS_BAR (st->progress), st->result ? _("Preview ready") : "");
}

static void
job_done (PreviewJob *job, gpointer data)
{
  Dialog     *st = data;
  gchar      *notice = NULL, *failed = NULL;
  GeglBuffer *result = preview_job_take (job, &notice, &failed);

  if (result && !preview_job_cancelled (job))
    {
      g_clear_object (&st->result);
      st->result      = result;
      st->result_vals = *preview_job_vals (job);
      g_clear_pointer (&st->failed, g_free);
      say (st, notice);
      draw (st);
    }
  else
    {
      g_clear_object (&result);
      if (!preview_job_cancelled (job))
        {
          g_free (st->failed);
          st->failed      = g_strdup (failed ? failed : _("the halftone:dither operation gave no result"));
          st->failed_vals = *preview_job_vals (job);
          say (st, st->failed);
        }
    }
  g_free (notice);
  g_free (failed);
  preview_job_free (job);
  st->job = NULL;
  idle_progress (st);
  if (st->waiting)
    g_main_loop_quit (st->waiting);
  else if (st->pending)
    {
      st->pending = FALSE;
      refresh (st);
    }
}

static void
stop_job (Dialog *st)
{
  if (st->job)
    {
      const gint64 t0 = g_get_monotonic_time ();

      preview_job_stop (st->job);
      /* G_MESSAGES_DEBUG=halftone shows it (tests/gimp/gimp3-responsive.py) */
      g_log ("halftone", G_LOG_LEVEL_DEBUG, "the preview's computation stopped %.3f s after the cancel",
             (gdouble) (g_get_monotonic_time () - t0) / 1e6);
    }
  st->job     = NULL;
  st->pending = FALSE;
  idle_progress (st);
}

/* ------------------------------------------------------------ controls */

static gint
frame_of (ht_param_id id)
{
  const ht_param *d = ht_param_info (id);

  if (id == HT_PARAM_ALGORITHM)
    return FRAME_ALGORITHM;
  switch (d->group)
    {
    case HT_GROUP_ALGORITHM: return FRAME_METHOD;
    case HT_GROUP_OUTPUT:    return FRAME_OUTPUT;
    case HT_GROUP_COLOR:     return FRAME_COLOR;
    default:                 return FRAME_ADVANCED;
    }
}

/* Shows the controls the run uses (ht_param_used) and the frames that
 * have any. */
static void
show_used (Dialog *st, const HalftoneVals *v)
{
  gboolean any[FRAME_COUNT] = { FALSE };

  for (gint id = 0; id < HT_PARAM_COUNT; id++)
    {
      const ht_param *d    = ht_param_info ((ht_param_id) id);
      const gboolean  used = halftone_param_active (v, (ht_param_id) id);
      GtkWidget      *w    = gimp_procedure_dialog_get_widget (st->dialog, d->name, G_TYPE_NONE);

      if (w)
        gtk_widget_set_visible (w, used);
      any[frame_of ((ht_param_id) id)] |= used;
    }
  for (gint f = 0; f < FRAME_COUNT; f++)
    if (st->frames[f])
      gtk_widget_set_visible (st->frames[f], any[f]);
}

/* After a change: what is shown, whether OK can run, and the preview. */
static void
refresh (Dialog *st)
{
  HalftoneVals v;
  gchar       *problem;

  problem = halftone_args_to_vals (st->config, &v);
  show_used (st, &v);
  if (!problem)
    problem = halftone_check_vals (&v, NULL);
  gtk_dialog_set_response_sensitive (GTK_DIALOG (st->dialog), GTK_RESPONSE_OK, problem == NULL);
  if (problem)
    {
      /* under the preview, once, not a message box per keystroke */
      say (st, problem);
      g_free (problem);
      if (st->job)
        preview_job_cancel (st->job);
      st->pending = FALSE;
      return;
    }
  say (st, NULL);
  if (!st->has_area)
    return;
  /* a long search says so before it starts (the estimate from the
   * area's size, the method and the threads) */
  {
    const gdouble secs = halftone_vals_estimate (&v, st->area.width, st->area.height,
                                                 babl_format_get_n_components (gegl_buffer_get_format (st->source)));

    if (secs >= 2.0)
      {
        char   took[32];
        gchar *text;

        ht_format_duration (secs, took, sizeof took);
        /* TRANSLATORS: %s: a duration, e.g. "12 min" */
        text = g_strdup_printf (_("On the CPU this takes about %s."), took);
        say (st, text);
        g_free (text);
      }
  }
  if (!gimp_preview_get_update (GIMP_PREVIEW (st->preview)))
    {
      if (st->job)
        preview_job_cancel (st->job);
      st->pending = FALSE;
      draw (st);
      return;
    }
  if (st->result && halftone_same_vals (&st->result_vals, &v))
    {
      draw (st);
      return;
    }
  if (st->failed && halftone_same_vals (&st->failed_vals, &v))
    {
      /* these settings failed already: a scroll does not run them again */
      say (st, st->failed);
      return;
    }
  if (st->job)
    {
      if (!preview_job_cancelled (st->job) && halftone_same_vals (preview_job_vals (st->job), &v))
        return;
      /* the next starts when this one has ended (job_done): one
       * computation at a time */
      preview_job_cancel (st->job);
      st->pending = TRUE;
      return;
    }
  st->job         = preview_job_start (st->source, &v, job_done, st);
  st->job_started = g_get_monotonic_time ();
  show_progress (st);
}

static gboolean
settled (gpointer data)
{
  Dialog *st = data;

  st->settle_id = 0;
  refresh (st);
  return G_SOURCE_REMOVE;
}

static void
config_changed (GObject *config, GParamSpec *pspec, gpointer data)
{
  Dialog *st = data;

  (void) config;
  (void) pspec;
  /* the running computation is of old settings: stop it now, not after
   * the pause */
  if (st->job)
    preview_job_cancel (st->job);
  if (st->settle_id)
    g_source_remove (st->settle_id);
  st->settle_id = g_timeout_add (SETTLE_MS, settled, st);
}

static void
preview_invalidated (GimpPreview *preview, gpointer data)
{
  Dialog *st = data;

  (void) preview;
  /* scrolled or the Preview switch toggled: the switch may start or stop
   * a computation; a scroll only redraws */
  refresh (st);
  draw (st);
}

/* ------------------------------------------------------------ help */

static void
open_help (const gchar *help_id, gpointer help_data)
{
  gchar  *uri   = g_filename_to_uri (HT_GIMP3_HELP_HTML, NULL, NULL);
  GError *error = NULL;

  (void) help_id;
  (void) help_data;
  if (!uri || !g_app_info_launch_default_for_uri (uri, NULL, &error))
    gimp_message (error ? error->message : HT_GIMP3_HELP_HTML);
  g_clear_error (&error);
  g_free (uri);
}

/* ------------------------------------------------------------ layout */

/* A GimpProcedureDialog as gimp_procedure_dialog_new makes it, with our
 * Help: GIMP 3's help looks for the page in GIMP's own manual, while the
 * page is the plug-in's HTML docs (no Help button where they are not
 * installed). */
static GtkWidget *
new_dialog (GimpProcedure *procedure, GimpProcedureConfig *config)
{
  const gboolean help = g_file_test (HT_GIMP3_HELP_HTML, G_FILE_TEST_EXISTS);
  gboolean       header_bar = FALSE;

  g_object_get (gtk_settings_get_default (), "gtk-dialogs-use-header", &header_bar, NULL);
  /* GimpDialog falls back to GIMP's manual without a help function */
  gimp_dialogs_show_help_button (help);
  return g_object_new (GIMP_TYPE_PROCEDURE_DIALOG,
                       "procedure", procedure,
                       "config", config,
                       "title", _("Halftone"),
                       "role", PLUG_IN_BINARY,
                       "help-func", help ? open_help : NULL,
                       "help-id", PLUG_IN_PROC_GIMP3,
                       "use-header-bar", header_bar,
                       NULL);
}

/* The default widget of the argument, with the description's slider
 * range and decimals. */
static void
make_widget (Dialog *st, ht_param_id id)
{
  const ht_param *d = ht_param_info (id);
  GtkWidget      *w;

  if ((d->type != HT_TYPE_INT && d->type != HT_TYPE_NUMBER) || !(d->ui_max > d->ui_min))
    {
      gimp_procedure_dialog_get_widget (st->dialog, d->name, G_TYPE_NONE);
      return;
    }
  w = gimp_procedure_dialog_get_spin_scale (st->dialog, d->name, 1.0);
  if (w && GIMP_IS_SPIN_SCALE (w))
    {
      gimp_spin_scale_set_scale_limits (GIMP_SPIN_SCALE (w), d->ui_min, d->ui_max);
      if (d->type == HT_TYPE_NUMBER)
        gtk_spin_button_set_digits (GTK_SPIN_BUTTON (w), (guint) d->digits);
    }
}

static void
build (Dialog *st)
{
  static const gchar *const frame_ids[FRAME_COUNT]   = { "algorithm", "method", "color", "output", "advanced" };
  const gchar              *titles[FRAME_COUNT]      = { "", _("Method settings"), _("Color"),
                                                         _("Output"), _("Advanced") };
  GList                    *names[FRAME_COUNT]       = { NULL };
  GtkWidget                *box, *hint;
  const gchar              *hint_text;
  GtkCssProvider           *css;

  for (gint id = 0; id < HT_PARAM_COUNT; id++)
    {
      make_widget (st, (ht_param_id) id);
      names[frame_of ((ht_param_id) id)] =
        g_list_append (names[frame_of ((ht_param_id) id)], (gpointer) ht_param_info ((ht_param_id) id)->name);
    }

  for (gint f = 0; f < FRAME_COUNT; f++)
    {
      gchar *box_id   = g_strconcat (frame_ids[f], "-box", NULL);
      gchar *title_id = g_strconcat (frame_ids[f], "-title", NULL);
      gchar *frame_id = g_strconcat (frame_ids[f], "-frame", NULL);

      if (names[f])
        {
          gimp_procedure_dialog_fill_box_list (st->dialog, box_id, names[f]);
          gimp_procedure_dialog_get_label (st->dialog, title_id, titles[f], FALSE, FALSE);
          /* the algorithm's combo says "Algorithm" itself: no frame */
          if (f == FRAME_ADVANCED)
            st->frames[f] = gimp_procedure_dialog_fill_expander (st->dialog, frame_id, title_id, FALSE, box_id);
          else if (f != FRAME_ALGORITHM)
            st->frames[f] = gimp_procedure_dialog_fill_frame (st->dialog, frame_id, title_id, FALSE, box_id);
        }
      g_list_free (names[f]);
      g_free (box_id);
      g_free (title_id);
      g_free (frame_id);
    }
  gimp_procedure_dialog_fill_box (st->dialog, "controls", "algorithm-box", "method-frame", "color-frame",
                                  "output-frame", "advanced-frame", NULL);

  st->preview = gimp_procedure_dialog_get_drawable_preview (st->dialog, "preview", st->drawable);
  /* xgettext:no-c-format */
  hint_text = _("Judge a halftone at 100 % zoom: scaled down, its dots blur into gray.");
  hint      = gimp_procedure_dialog_get_label (st->dialog, "hint", hint_text, FALSE, FALSE);
  gtk_label_set_line_wrap (GTK_LABEL (hint), TRUE);
  gtk_label_set_max_width_chars (GTK_LABEL (hint), 40);
  box = gimp_procedure_dialog_fill_box (st->dialog, "preview-box", "preview", "hint", NULL);
  /* larger than GIMP's default preview (200): dots are judged at 1:1,
   * and 360 pixels show enough of them while the dialog still fits a
   * 768-line screen. GimpPreview sizes its area from its style property
   * "size" whenever its style changes, so the size is given there. */
  css = gtk_css_provider_new ();
  gtk_css_provider_load_from_data (css, "* { -GimpPreview-size: 360; }", -1, NULL);
  gtk_style_context_add_provider (gtk_widget_get_style_context (st->preview), GTK_STYLE_PROVIDER (css),
                                  GTK_STYLE_PROVIDER_PRIORITY_APPLICATION);
  g_object_unref (css);
  st->progress = gtk_progress_bar_new ();
  gtk_progress_bar_set_show_text (GTK_PROGRESS_BAR (st->progress), TRUE);
  gtk_box_pack_start (GTK_BOX (box), st->progress, FALSE, FALSE, 0);
  gtk_widget_show (st->progress);
  st->message = gtk_label_new (NULL);
  gtk_label_set_line_wrap (GTK_LABEL (st->message), TRUE);
  gtk_label_set_max_width_chars (GTK_LABEL (st->message), 40);
  gtk_label_set_xalign (GTK_LABEL (st->message), 0.0);
  gtk_box_pack_start (GTK_BOX (box), st->message, FALSE, FALSE, 0);

  box = gimp_procedure_dialog_fill_box (st->dialog, "main", "preview-box", "controls", NULL);
  gtk_orientable_set_orientation (GTK_ORIENTABLE (box), GTK_ORIENTATION_HORIZONTAL);
  gtk_box_set_spacing (GTK_BOX (box), 12);
  gimp_procedure_dialog_fill (st->dialog, "main", NULL);
}

/* ------------------------------------------------------------ OK */

/* Applies after OK: the preview's result where it is of these settings
 * (no second run), else the running preview of these settings awaited
 * with GIMP's progress bar, else a run of its own. */
static GimpPDBStatusType
apply (Dialog *st, GError **error)
{
  HalftoneVals v;
  gchar       *problem;

  problem = halftone_args_to_vals (st->config, &v);
  if (!problem)
    problem = halftone_check_vals (&v, NULL);
  if (problem)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, _("Halftone: %s"), problem);
      g_free (problem);
      return GIMP_PDB_EXECUTION_ERROR;
    }
  if (!st->has_area)
    return GIMP_PDB_SUCCESS;
  if (st->job && !preview_job_cancelled (st->job) && halftone_same_vals (preview_job_vals (st->job), &v))
    {
      gimp_progress_init (_("Halftone"));
      st->waiting = g_main_loop_new (NULL, FALSE);
      halftone_apply_wait (st->job, st->waiting, NULL);
      g_clear_pointer (&st->waiting, g_main_loop_unref);
      if (!st->result)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, _("Halftone: %s"),
                       st->failed ? st->failed : _("the halftone:dither operation gave no result"));
          return GIMP_PDB_EXECUTION_ERROR;
        }
    }
  if (st->result && halftone_same_vals (&st->result_vals, &v))
    {
      halftone_apply_merge (st->drawable, st->result, &st->area);
      return GIMP_PDB_SUCCESS;
    }
  if (st->failed && halftone_same_vals (&st->failed_vals, &v))
    {
      /* the preview ran these settings on the same pixels: the same failure */
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, _("Halftone: %s"), st->failed);
      return GIMP_PDB_EXECUTION_ERROR;
    }
  stop_job (st);
  return halftone_apply (st->drawable, &v, NULL, error) ? GIMP_PDB_SUCCESS : GIMP_PDB_EXECUTION_ERROR;
}

GimpPDBStatusType
halftone_dialog_run (GimpProcedure *procedure, GimpProcedureConfig *config, GimpDrawable *drawable,
                     GError **error)
{
  Dialog            st = { 0 };
  GimpPDBStatusType status;
  gulong            notify;

  st.config   = config;
  st.drawable = drawable;
  st.format   = preview_format (drawable);
  st.has_area = halftone_apply_area (drawable, &st.area);
  if (st.has_area)
    st.source = halftone_apply_source (drawable, &st.area);
  st.dialog = GIMP_PROCEDURE_DIALOG (new_dialog (procedure, config));
  build (&st);
  g_signal_connect (st.preview, "invalidated", G_CALLBACK (preview_invalidated), &st);
  notify         = g_signal_connect (config, "notify", G_CALLBACK (config_changed), &st);
  st.progress_id = g_timeout_add (PROGRESS_MS, show_progress, &st);
  gtk_widget_show (GTK_WIDGET (st.dialog));
  /* its natural size: nothing in it needs more */
  gtk_window_resize (GTK_WINDOW (st.dialog), 1, 1);
  refresh (&st);

  if (gimp_procedure_dialog_run (st.dialog))
    {
      gtk_widget_hide (GTK_WIDGET (st.dialog));
      status = apply (&st, error);
    }
  else
    status = GIMP_PDB_CANCEL;

  /* Cancel, Escape or closing: the running computation stops now */
  g_signal_handler_disconnect (config, notify);
  if (st.settle_id)
    g_source_remove (st.settle_id);
  g_source_remove (st.progress_id);
  stop_job (&st);
  g_clear_object (&st.result);
  g_clear_object (&st.source);
  g_free (st.failed);
  gtk_widget_destroy (GTK_WIDGET (st.dialog));
  return status;
}
