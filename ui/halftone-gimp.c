/* GIMP 2.10 plug-in: halftone the active drawable with the GEGL operation
 * halftone:dither, with a dialog and a live 1:1 preview.
 *
 * The preview shows the true result: error diffusion of a crop is not the
 * same as the crop of the diffused image, so the whole drawable (the
 * selection's bounding box) is halftoned once per parameter change and
 * the visible part of that result is shown, pixel for pixel or enlarged.
 *
 * This file: the dialog and the run. The settings and the PDB procedures
 * are in halftone-vals.c, running the op (and the preview's thread) in
 * preview-job.c, the GPU check in gpu-probe.c, the zoomable view in
 * preview-view.c.
 *
 * Copyright (C) 2026 the GEGL Halftone authors. GPL-3.0-or-later.
 */
#include "ht-config.h"

#include <math.h>
#include <string.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wconversion"
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#include <libgimp/gimp.h>
#include <libgimp/gimpui.h>
#pragma GCC diagnostic pop

#include <glib/gi18n-lib.h>

#include "halftone.h"
#include "gpu-probe.h"
#include "halftone-vals.h"
#include "preview-job.h"
#include "preview-view.h"

#define PLUG_IN_BINARY "halftone-gimp"
#define PLUG_IN_ROLE   "gegl-halftone-dither"
#define GEGL_OP        "halftone:dither"
/* GIMP's data of this session: set once a missing GPU was told */
#define GPU_TOLD_KEY   "plug-in-halftone-gpu-told"

typedef struct PreviewState PreviewState;

/* The widgets of one parameter of the library's description. */
typedef struct
{
  PreviewState *st;
  ht_param_id   id;
  GtkObject    *adj;    /* a number's scale entry, or NULL             */
  GtkWidget    *widget; /* a switch's, choice's or text's widget       */
  GtkWidget    *label;
  GtkWidget    *note;   /* text: the check's message, under the field  */
  gboolean      op_has; /* the installed op has the property           */
  GtkWidget    *table;  /* where its row is: a hidden row takes no     */
  gint          row;    /* spacing either                              */
} ParamWidgets;

/* The dialog's state: the last full result and what it was made from,
 * and the computation under way. */
struct PreviewState
{
  gint32        drawable_id;
  HalftoneVals *vals;
  GtkWidget    *dialog;
  HtView       *view;
  ParamWidgets  params[HT_PARAM_COUNT];
  gchar        *problem;    /* why the values cannot run, where no field
                               shows it, or NULL                        */
  GtkWidget    *gpu_label;  /* whether a GPU is usable, and why not    */
  GtkWidget    *status;     /* what the preview shows                  */
  GtkWidget    *progress;
  GeglBuffer   *source;  /* the drawable, cropped to the selection bounds */
  GeglBuffer   *result;  /* the last finished preview, or NULL          */
  HalftoneVals  result_vals;
  gchar        *result_note; /* its run's notice (CPU fall-back), or NULL */
  gchar        *failed;      /* why the last run gave no halftone, or NULL */
  PreviewJob   *job;         /* the computation under way, or NULL        */
  gboolean      again;       /* a change came while it ran                */
  guint         progress_timer;
  GpuProbe     *gpu_probe;
};

static void query (void);
static void run   (const gchar      *name,
                   gint              nparams,
                   const GimpParam  *param,
                   gint             *nreturn_vals,
                   GimpParam       **return_vals);

const GimpPlugInInfo PLUG_IN_INFO = { NULL, NULL, query, run };

MAIN ()


/* ------------------------------------------------------------ the lists */

/* A combo box of the list's entries (values: the library's), labels
 * translated through the plug-in's domain. */
static GtkWidget *
list_combo (ht_list list)
{
  GtkWidget       *combo = gimp_int_combo_box_new (NULL, 0, NULL);
  gint             n = 0;
  const ht_choice *c = ht_choices (list, &n);

  for (gint i = 0; i < n; i++)
    gimp_int_combo_box_append (GIMP_INT_COMBO_BOX (combo),
                               GIMP_INT_STORE_VALUE, c[i].value,
                               GIMP_INT_STORE_LABEL, g_dgettext (GETTEXT_PACKAGE, c[i].label),
                               -1);
  return combo;
}

static void
query (void)
{
  halftone_install_procedures ();
}

/* ------------------------------------------------------------ rendering */

/* The bar, and from the third second on the time left, told from the
 * time so far and the fraction (the search methods' fraction moves with
 * their work: core/shared/search_progress.h). */
static void
on_progress (GeglNode *node, gdouble fraction, gpointer user)
{
  static gint64 started, told;
  const gint64  now = g_get_monotonic_time ();

  (void) node;
  (void) user;
  if (!started || fraction <= 0.0)
    started = told = now;
  gimp_progress_update (fraction);
  if (fraction >= 0.01 && fraction < 1.0 && now - started >= 3 * G_USEC_PER_SEC && now - told >= G_USEC_PER_SEC)
    {
      const gdouble left = (gdouble) (now - started) / G_USEC_PER_SEC * (1.0 - fraction) / fraction;
      gchar        *text;

      told = now;
      if (left >= 90.0)
        /* TRANSLATORS: the progress bar's text while halftoning */
        text = g_strdup_printf (_("Halftoning: about %d min left"), (gint) (left / 60.0 + 0.5));
      else
        text = g_strdup_printf (_("Halftoning: about %d s left"), (gint) (left + 0.5));
      gimp_progress_set_text (text);
      g_free (text);
    }
}

/* The drawable's pixels inside the selection bounds; NULL when the
 * selection does not touch the drawable. */
static GeglBuffer *
get_source (gint32 drawable_id)
{
  gint          x, y, w, h;
  GeglBuffer   *whole, *part;
  GeglRectangle r;

  if (!gimp_drawable_mask_intersect (drawable_id, &x, &y, &w, &h))
    return NULL;
  r = (GeglRectangle) { x, y, w, h };
  whole = gimp_drawable_get_buffer (drawable_id);
  part  = gegl_buffer_new (&r, gegl_buffer_get_format (whole));
  gegl_buffer_copy (whole, &r, GEGL_ABYSS_NONE, part, &r);
  g_object_unref (whole);
  return part;
}

/* Applies the halftone to the drawable, undoably: shadow buffer, then
 * merge (which also applies the selection mask), then update. */
static gboolean
apply (gint32 drawable_id, const HalftoneVals *v, GeglBuffer *ready, gchar **error)
{
  GeglBuffer *source = get_source (drawable_id);
  GeglBuffer *result, *shadow;
  const GeglRectangle *r;
  RenderTalk  talk = { NULL, G_CALLBACK (on_progress), NULL, NULL, NULL, FALSE };

  if (!source)
    return TRUE; /* nothing selected on this drawable: nothing to do */

  gimp_progress_init (_("Halftoning"));
  /* the preview's result for these values is what a new run would give */
  result = ready ? g_object_ref (ready) : halftone_render (source, v, &talk);
  if (!result)
    {
      g_object_unref (source);
      /* TRANSLATORS: %s: why, e.g. "out of memory for a 9000x9000 image" */
      *error = g_strdup_printf (_("Halftoning failed, the layer is unchanged: %s"), talk.failed);
      g_free (talk.failed);
      g_free (talk.notice);
      return FALSE;
    }
  /* A missing GPU is told once a GIMP session, not at every Repeat. */
  if (talk.notice && !(talk.no_gpu && gimp_get_data_size (GPU_TOLD_KEY) > 0))
    {
      const guint8 told = 1;

      g_message ("%s", talk.notice);
      if (talk.no_gpu)
        gimp_set_data (GPU_TOLD_KEY, &told, sizeof told);
    }
  g_free (talk.notice);
  r = gegl_buffer_get_extent (source);
  shadow = gimp_drawable_get_shadow_buffer (drawable_id);
  gegl_buffer_copy (result, r, GEGL_ABYSS_NONE, shadow, r);
  gegl_buffer_flush (shadow);
  g_object_unref (shadow);
  gimp_drawable_merge_shadow (drawable_id, TRUE);
  gimp_drawable_update (drawable_id, r->x, r->y, r->width, r->height);
  gimp_progress_update (1.0);
  g_object_unref (result);
  g_object_unref (source);
  return TRUE;
}


/* ------------------------------------------------------------ dialog */

/* Fills `vis` (drawable coordinates) with what OK will make of it: the
 * result where the selection is, the original elsewhere (the view shows
 * a border around the selection), blended by the mask. Before the first
 * result, the original. */
static void
preview_fill (const GeglRectangle *vis, guchar *src, gpointer user)
{
  PreviewState        *st  = user;
  gsize                npx = (gsize) vis->width * (gsize) vis->height;
  guchar              *orig = g_malloc0 (npx * 4), *mask = g_malloc (npx);
  GeglBuffer          *whole = gimp_drawable_get_buffer (st->drawable_id);
  gint32               image = gimp_item_get_image (st->drawable_id);
  const GeglRectangle *ext = st->result ? gegl_buffer_get_extent (st->result) : NULL;

  gegl_buffer_get (whole, vis, 1.0, babl_format ("R'G'B'A u8"), orig, GEGL_AUTO_ROWSTRIDE, GEGL_ABYSS_NONE);
  g_object_unref (whole);
  if (st->result)
    gegl_buffer_get (st->result, vis, 1.0, babl_format ("R'G'B'A u8"), src, GEGL_AUTO_ROWSTRIDE,
                     GEGL_ABYSS_NONE);
  if (gimp_selection_is_empty (image))
    memset (mask, 255, npx);
  else
    {
      gint          ox, oy;
      GeglBuffer   *sel = gimp_drawable_get_buffer (gimp_image_get_selection (image));
      GeglRectangle in_image;

      gimp_drawable_offsets (st->drawable_id, &ox, &oy);
      in_image = (GeglRectangle) { vis->x + ox, vis->y + oy, vis->width, vis->height };
      gegl_buffer_get (sel, &in_image, 1.0, babl_format ("Y u8"), mask, GEGL_AUTO_ROWSTRIDE, GEGL_ABYSS_NONE);
      g_object_unref (sel);
    }
  for (gsize i = 0; i < npx; i++)
    {
      gint  x = vis->x + (gint) (i % (gsize) vis->width), y = vis->y + (gint) (i / (gsize) vis->width);
      guint m = mask[i];

      if (!ext || x < ext->x || y < ext->y || x >= ext->x + ext->width || y >= ext->y + ext->height)
        m = 0; /* not computed: outside the selection bounds */
      for (gint c = 0; c < 4; c++)
        src[i * 4 + (gsize) c] = (guchar) ((src[i * 4 + (gsize) c] * m +
                                            orig[i * 4 + (gsize) c] * (255 - m) + 127) / 255);
    }
  g_free (orig);
  g_free (mask);
}

/* The line under the preview: what it shows, and what went wrong. */
static void
update_status (PreviewState *st)
{
  GString *s = g_string_new (NULL);
  gint     x, y, w, h;

  if (!st->source)
    g_string_append (s, _("The selection does not touch this layer: OK changes nothing."));
  else if (gimp_drawable_mask_intersect (st->drawable_id, &x, &y, &w, &h) &&
           !gimp_selection_is_empty (gimp_item_get_image (st->drawable_id)))
    /* TRANSLATORS: the selection's bounding box: width, height, x, y */
    g_string_append_printf (s, _("Halftones the selection's %d×%d box at (%d, %d), blended by its mask."), w, h, x, y);
  else
    g_string_append (s, _("Halftones the whole layer."));
  /* a long search says so before it starts (the estimate from the
   * image's size, the method and the threads) */
  if (st->source)
    {
      const GeglRectangle *e    = gegl_buffer_get_extent (st->source);
      const gdouble        secs = halftone_vals_estimate (st->vals, e->width, e->height,
                                                          babl_format_get_n_components (
                                                            gegl_buffer_get_format (st->source)));

      if (secs >= 2.0)
        {
          char took[32];

          ht_format_duration (secs, took, sizeof took);
          g_string_append (s, " ");
          /* TRANSLATORS: %s: a duration, e.g. "12 min" */
          g_string_append_printf (s, _("On the CPU this takes about %s."), took);
        }
    }
  if (st->job)
    g_string_append_printf (s, " %s", _("Computing…"));
  if (st->problem)
    g_string_append_printf (s, "\n%s", st->problem);
  else if (st->failed && !st->job)
    /* TRANSLATORS: %s: why the run gave no halftone */
    g_string_append_printf (s, "\n%s", st->failed);
  else if (st->result_note && halftone_same_vals (&st->result_vals, st->vals))
    g_string_append_printf (s, "\n%s", st->result_note);
  gtk_label_set_text (GTK_LABEL (st->status), s->str);
  g_string_free (s, TRUE);
}

/* ---------------------------------------------- preview off the UI thread */

/* One computation at a time (preview-job.c); a change while it runs
 * cancels it and starts a new one once it has ended. */

static void preview_changed (PreviewState *st);

static gboolean
show_progress (gpointer data)
{
  PreviewState *st = data;

  if (!st->job)
    {
      st->progress_timer = 0;
      gtk_widget_hide (st->progress);
      return G_SOURCE_REMOVE;
    }
  gtk_widget_show (st->progress);
  gtk_progress_bar_set_fraction (GTK_PROGRESS_BAR (st->progress), preview_job_progress (st->job));
  return G_SOURCE_CONTINUE;
}

static void
job_done (PreviewJob *job, gpointer data)
{
  PreviewState *st = data;

  st->job = NULL;
  if (!preview_job_cancelled (job))
    {
      g_clear_object (&st->result);
      g_clear_pointer (&st->result_note, g_free);
      g_clear_pointer (&st->failed, g_free);
      st->result      = preview_job_take (job, &st->result_note, &st->failed);
      st->result_vals = *preview_job_vals (job);
      ht_view_redraw (st->view);
    }
  preview_job_free (job);
  if (st->again)
    {
      st->again = FALSE;
      preview_changed (st);
    }
  update_status (st);
}

/* After any change: the check's message (under a text field where it is
 * about one, else in the status line), OK's sensitivity, and a new
 * preview computation. */
static void
preview_changed (PreviewState *st)
{
  gint     at      = -1;
  gchar   *problem = halftone_check_vals (st->vals, &at);
  gboolean noted   = FALSE;

  /* the parser's message (with the position) next to the field; OK only
   * for values that can run */
  for (gint id = 0; id < HT_PARAM_COUNT; id++)
    if (st->params[id].note)
      {
        gboolean here = problem && at == id;

        if (here)
          gtk_label_set_text (GTK_LABEL (st->params[id].note), problem);
        gtk_widget_set_visible (st->params[id].note, here);
        noted |= here;
      }
  const gboolean runs = problem == NULL;

  gtk_dialog_set_response_sensitive (GTK_DIALOG (st->dialog), GTK_RESPONSE_OK, runs);
  g_free (st->problem);
  st->problem = noted ? NULL : problem;
  if (noted)
    g_free (problem);
  if (!st->source || !runs ||
      (st->result && halftone_same_vals (&st->result_vals, st->vals) && !st->job))
    {
      update_status (st);
      return;
    }
  if (st->job)
    {
      preview_job_cancel (st->job);
      st->again = TRUE;
      update_status (st);
      return;
    }
  st->job = preview_job_start (st->source, st->vals, job_done, st);
  if (!st->progress_timer)
    st->progress_timer = g_timeout_add (100, show_progress, st);
  update_status (st);
}

/* ------------------------------------------------------------ GPU */

/* The GPU line is about backend cuda: shown only where it is chosen
 * (Automatic picks the CPU by itself, without a word). */
static void
gpu_line_visible (PreviewState *st)
{
  if (st->gpu_label)
    gtk_widget_set_visible (st->gpu_label, (gint) st->vals->value[HT_PARAM_BACKEND] == HT_BACKEND_CUDA);
}

/* The line under the backend, once the probe (gpu-probe.c) knows. */
static gboolean
gpu_show (gpointer data)
{
  PreviewState *st  = data;
  const gchar  *why = NULL;
  gchar        *text;

  if (!st->gpu_label)
    return G_SOURCE_REMOVE;
  if (!gpu_probe_result (st->gpu_probe, &why))
    return G_SOURCE_CONTINUE;
  /* one short line in the user's words; the library's reason (a module
   * path, a driver version) is the tooltip's */
  text = g_strdup (why ? _("No NVIDIA GPU found: the CPU computes, with the same result.")
                       : _("An NVIDIA GPU is usable."));
  gtk_label_set_text (GTK_LABEL (st->gpu_label), text);
  gimp_help_set_help_data (st->gpu_label, why, NULL);
  g_free (text);
  gpu_line_visible (st);
  return G_SOURCE_REMOVE;
}
/* ------------------------------------------------------------ dialog */

/* Every parameter's widgets are sensitive where the run uses the
 * parameter (ht_param_used for the algorithm and colour mode) and the
 * installed op has it. */
static void
update_sensitivity (PreviewState *st)
{
  for (gint id = 0; id < HT_PARAM_COUNT; id++)
    {
      const ParamWidgets *pw   = &st->params[id];
      const gboolean      used = halftone_param_active (st->vals, (ht_param_id) id);
      const gboolean      on   = pw->op_has && used;

      /* only what the chosen algorithm and colour mode use is shown (a
       * dozen methods' settings at once would be a wall of insensitive
       * rows); a setting the installed op lacks shows, insensitive */
      if (pw->adj)
        {
          gimp_scale_entry_set_sensitive (pw->adj, on);
          gtk_widget_set_visible (GIMP_SCALE_ENTRY_SCALE (pw->adj), used);
          gtk_widget_set_visible (GIMP_SCALE_ENTRY_SPINBUTTON (pw->adj), used);
          gtk_widget_set_visible (GIMP_SCALE_ENTRY_LABEL (pw->adj), used);
        }
      if (pw->widget)
        {
          gtk_widget_set_sensitive (pw->widget, on);
          gtk_widget_set_visible (pw->widget, used);
        }
      if (pw->label)
        {
          gtk_widget_set_sensitive (pw->label, on);
          gtk_widget_set_visible (pw->label, used);
        }
      if (pw->note && !used)
        gtk_widget_hide (pw->note);
      if (pw->table)
        gtk_table_set_row_spacing (GTK_TABLE (pw->table), (guint) pw->row, used ? 6 : 0);
    }
}

static void
param_changed (PreviewState *st)
{
  update_sensitivity (st);
  gpu_line_visible (st);
  preview_changed (st);
}

/* A number as the widget shows it: its decimals (a slider gives more),
 * a whole number for the other types. */
static void
on_param_number (GtkAdjustment *adj, ParamWidgets *pw)
{
  const ht_param *d     = ht_param_info (pw->id);
  const gdouble   scale = d->type == HT_TYPE_NUMBER ? pow (10.0, d->digits) : 1.0;

  pw->st->vals->value[pw->id] = floor (gtk_adjustment_get_value (adj) * scale + 0.5) / scale;
  param_changed (pw->st);
}

static void
on_param_toggled (GtkToggleButton *button, ParamWidgets *pw)
{
  pw->st->vals->value[pw->id] = gtk_toggle_button_get_active (button) ? 1 : 0;
  param_changed (pw->st);
}

static void
on_param_choice (GtkWidget *combo, ParamWidgets *pw)
{
  gint value = 0;

  if (gimp_int_combo_box_get_active (GIMP_INT_COMBO_BOX (combo), &value))
    pw->st->vals->value[pw->id] = value;
  param_changed (pw->st);
}

static void
on_param_text (GtkEntry *entry, ParamWidgets *pw)
{
  g_strlcpy (pw->st->vals->text[pw->id], gtk_entry_get_text (entry), HALFTONE_TEXT_MAX);
  param_changed (pw->st);
}

static void
on_zoom_changed (GtkWidget *combo, PreviewState *st)
{
  gimp_int_combo_box_get_active (GIMP_INT_COMBO_BOX (combo), &st->vals->zoom);
  ht_view_set_zoom (st->view, st->vals->zoom);
}

static GtkWidget *
int_combo (const gchar *first_label, gint first_value, ...)
{
  GtkWidget *combo;
  va_list    ap;

  va_start (ap, first_value);
  combo = gimp_int_combo_box_new_valist (first_label, first_value, ap);
  va_end (ap);
  return combo;
}

/* The option tables have three columns: a label, then a widget across
 * the other two, or a number's label, slider and spin button
 * (gimp_scale_entry_new). */
#define TABLE_COLUMNS 3

static void
attach_row (GtkWidget *table, gint row, const gchar *label, GtkWidget *widget, GtkWidget **label_out)
{
  GtkWidget *l = gtk_label_new_with_mnemonic (label);

  gtk_misc_set_alignment (GTK_MISC (l), 0.0, 0.5);
  gtk_label_set_mnemonic_widget (GTK_LABEL (l), widget);
  gtk_table_attach (GTK_TABLE (table), l, 0, 1, (guint) row, (guint) row + 1, GTK_FILL, GTK_FILL, 0, 0);
  gtk_table_attach (GTK_TABLE (table), widget, 1, TABLE_COLUMNS, (guint) row, (guint) row + 1,
                    GTK_EXPAND | GTK_FILL, GTK_FILL, 0, 0);
  gtk_widget_show (l);
  gtk_widget_show (widget);
  if (label_out)
    *label_out = l;
}

/* A wrapped italic note in the table's widget columns. */
static GtkWidget *
attach_note (GtkWidget *table, gint row)
{
  GtkWidget *l = gtk_label_new ("");

  gtk_label_set_line_wrap (GTK_LABEL (l), TRUE);
  gtk_widget_set_size_request (l, 260, -1);
  gtk_misc_set_alignment (GTK_MISC (l), 0.0, 0.5);
  gimp_label_set_attributes (GTK_LABEL (l), PANGO_ATTR_STYLE, PANGO_STYLE_ITALIC, -1);
  gtk_table_attach (GTK_TABLE (table), l, 1, TABLE_COLUMNS, (guint) row, (guint) row + 1, GTK_FILL, GTK_FILL, 0, 0);
  gtk_widget_show (l);
  return l;
}

/* A new table for a group of options. */
static GtkWidget *
options_table (void)
{
  GtkWidget *table = gtk_table_new (1, TABLE_COLUMNS, FALSE);

  gtk_table_set_row_spacings (GTK_TABLE (table), 6);
  gtk_table_set_col_spacings (GTK_TABLE (table), 6);
  return table;
}

/* The widgets of parameter `id` in row *row (and the rows after it)
 * of `table`, made from its description: a number a slider with a spin
 * button (its range, the slider's part of it, its decimals; within the
 * installed op's range), a switch a check button, a choice the library's
 * list, text an entry with a line for the check's message under it. */
static void
add_param (PreviewState *st, GtkWidget *table, gint *row, ht_param_id id)
{
  const ht_param *d     = ht_param_info (id);
  ParamWidgets   *pw    = &st->params[id];
  gdouble        *value = &st->vals->value[id];
  const gchar    *label = g_dgettext (GETTEXT_PACKAGE, d->label);
  /* TRANSLATORS: an option's label in the dialog, e.g. "Levels:" */
  gchar          *text  = g_strdup_printf (_("%s:"), label);
  gchar          *tip;

  pw->st     = st;
  pw->id     = id;
  pw->op_has = gegl_operation_find_property (GEGL_OP, d->name) != NULL;
  pw->table  = table;
  pw->row    = *row;
  tip = pw->op_has ? g_strdup (d->help)
                   : g_strdup_printf ("%s\n%s", d->help,
                                      _("The installed halftone:dither operation is older than this plug-in "
                                        "and does not have this setting."));
  switch (d->type)
    {
    case HT_TYPE_INT:
    case HT_TYPE_NUMBER:
    case HT_TYPE_SEED:
      {
        const gboolean whole = d->type != HT_TYPE_NUMBER;
        const gdouble  step  = whole ? 1.0 : pow (10.0, d->digits >= 2 ? 1 - d->digits : -d->digits);
        gdouble        lo = d->min, hi = d->max, op_lo, op_hi;

        /* what both the description and the installed op take */
        if (pw->op_has && halftone_op_range (d->name, &op_lo, &op_hi))
          {
            lo = MAX (lo, op_lo);
            hi = MIN (hi, op_hi);
          }
        *value  = CLAMP (*value, lo, hi);
        pw->adj = gimp_scale_entry_new (GTK_TABLE (table), 0, *row, text, 100, whole ? 8 : 5, *value,
                                        CLAMP (d->ui_min, lo, hi), CLAMP (d->ui_max, lo, hi), step, step * 10,
                                        whole ? 0 : (guint) d->digits, FALSE, lo, hi, tip, NULL);
        g_signal_connect (pw->adj, "value-changed", G_CALLBACK (on_param_number), pw);
        break;
      }
    case HT_TYPE_BOOL:
      pw->widget = gtk_check_button_new_with_label (label);
      gtk_toggle_button_set_active (GTK_TOGGLE_BUTTON (pw->widget), *value != 0);
      g_signal_connect (pw->widget, "toggled", G_CALLBACK (on_param_toggled), pw);
      gtk_table_attach (GTK_TABLE (table), pw->widget, 0, TABLE_COLUMNS, (guint) *row, (guint) *row + 1, GTK_FILL,
                        GTK_FILL, 0, 0);
      gtk_widget_show (pw->widget);
      break;
    case HT_TYPE_CHOICE:
      pw->widget = list_combo (d->list);
      gimp_int_combo_box_set_active (GIMP_INT_COMBO_BOX (pw->widget), (gint) *value);
      g_signal_connect (pw->widget, "changed", G_CALLBACK (on_param_choice), pw);
      attach_row (table, *row, text, pw->widget, &pw->label);
      break;
    case HT_TYPE_TEXT:
      pw->widget = gtk_entry_new ();
      gtk_entry_set_max_length (GTK_ENTRY (pw->widget), HALFTONE_TEXT_MAX - 1);
      gtk_entry_set_text (GTK_ENTRY (pw->widget), st->vals->text[id]);
      g_signal_connect (pw->widget, "changed", G_CALLBACK (on_param_text), pw);
      attach_row (table, *row, text, pw->widget, &pw->label);
      pw->note = attach_note (table, ++*row);
      gtk_widget_hide (pw->note);
      break;
    }
  if (pw->widget)
    gtk_widget_set_tooltip_text (pw->widget, tip);
  (*row)++;
  g_free (text);
  g_free (tip);
}

/* Help opens the project's documentation of the dialog (installed with
 * the plug-in), not GIMP's manual, which does not know it. */
static void
show_help (const gchar *help_id, gpointer data)
{
  const gchar *doc = HT_HTMLDIR "/gimp.html";
  gchar       *uri;
  GError      *error = NULL;

  (void) help_id;
  (void) data;
  uri = g_filename_to_uri (doc, NULL, NULL);
  if (!uri || !gtk_show_uri (NULL, uri, GDK_CURRENT_TIME, &error))
    {
      /* TRANSLATORS: %s: a file name */
      g_message (_("The documentation is in %s (it could not be opened: %s)."), doc,
                 error ? error->message : "no URI");
      g_clear_error (&error);
    }
  g_free (uri);
}

/* The dialog: the preview on the left, the options on the right in a
 * scrolled column (it fits a 768-pixel-high screen however many options
 * there are), the technical ones in an Advanced section. Returns whether
 * OK was pressed; *ready gets the preview's result where it was computed
 * for the final values. */
static gboolean
dialog (gint32 drawable_id, HalftoneVals *vals, GeglBuffer **ready)
{
  PreviewState st = { 0 };
  GtkWidget   *dlg, *hbox, *left, *scroll, *right, *main_table, *table, *expander, *w, *hint, *zbox;
  gboolean     ok;
  gint         row = 0, x = 0, y = 0, width = 1, height = 1;
  GeglRectangle region;

  gimp_ui_init (PLUG_IN_BINARY, FALSE);

  st.drawable_id = drawable_id;
  st.vals        = vals;
  st.source      = get_source (drawable_id);

  dlg = gimp_dialog_new (_("Halftone"), PLUG_IN_ROLE,
                         NULL, 0,
                         show_help, PLUG_IN_PROC,
                         _("_Cancel"), GTK_RESPONSE_CANCEL,
                         _("_OK"),     GTK_RESPONSE_OK,
                         NULL);
  st.dialog = dlg;
  gtk_dialog_set_alternative_button_order (GTK_DIALOG (dlg), GTK_RESPONSE_OK,
                                           GTK_RESPONSE_CANCEL, -1);
  gimp_window_set_transient (GTK_WINDOW (dlg));

  hbox = gtk_hbox_new (FALSE, 12);
  gtk_container_set_border_width (GTK_CONTAINER (hbox), 12);
  gtk_box_pack_start (GTK_BOX (gtk_dialog_get_content_area (GTK_DIALOG (dlg))), hbox, TRUE, TRUE, 0);
  left = gtk_vbox_new (FALSE, 6);
  gtk_box_pack_start (GTK_BOX (hbox), left, TRUE, TRUE, 0);

  /* The view shows the selection's bounds with a border of the layer
   * around them, 1:1 by default: a halftone seen scaled down is
   * meaningless. */
  gimp_drawable_mask_intersect (drawable_id, &x, &y, &width, &height);
  {
    const gint dw = gimp_drawable_width (drawable_id), dh = gimp_drawable_height (drawable_id);
    const gint bx = MIN (16, x), by = MIN (16, y);

    region = (GeglRectangle) { x - bx, y - by, MIN (dw - x + bx, width + bx + 16),
                               MIN (dh - y + by, height + by + 16) };
    region.width  = MAX (1, region.width);
    region.height = MAX (1, region.height);
  }
  st.view = ht_view_new (&region, 420, 300, preview_fill, &st);
  gtk_box_pack_start (GTK_BOX (left), ht_view_widget (st.view), TRUE, TRUE, 0);

  zbox = gtk_hbox_new (FALSE, 6);
  w = int_combo (_("1:1 (actual pixels)"), 1, "2:1", 2, "3:1", 3, "4:1", 4, "8:1", 8, NULL);
  gimp_int_combo_box_set_active (GIMP_INT_COMBO_BOX (w), vals->zoom);
  g_signal_connect (w, "changed", G_CALLBACK (on_zoom_changed), &st);
  {
    GtkWidget *l = gtk_label_new_with_mnemonic (_("Preview _zoom:"));

    gtk_label_set_mnemonic_widget (GTK_LABEL (l), w);
    gtk_box_pack_start (GTK_BOX (zbox), l, FALSE, FALSE, 0);
  }
  gtk_box_pack_start (GTK_BOX (zbox), w, FALSE, FALSE, 0);
  st.progress = gtk_progress_bar_new ();
  gtk_box_pack_start (GTK_BOX (zbox), st.progress, TRUE, TRUE, 0);
  gtk_box_pack_start (GTK_BOX (left), zbox, FALSE, FALSE, 0);
  gtk_widget_show_all (zbox);
  gtk_widget_hide (st.progress);

  st.status = gtk_label_new ("");
  gtk_label_set_line_wrap (GTK_LABEL (st.status), TRUE);
  gtk_widget_set_size_request (st.status, 400, -1);
  gtk_misc_set_alignment (GTK_MISC (st.status), 0.0, 0.5);
  gtk_box_pack_start (GTK_BOX (left), st.status, FALSE, FALSE, 0);

  /* xgettext:no-c-format */
  hint = gtk_label_new (_("The preview shows the exact result: the whole selection is "
                          "halftoned, then the visible part is shown. Drag it to move. "
                          "Judge a halftone at 100 % (View → Zoom → 1:1): scaled down it "
                          "shows as gray moiré."));
  gtk_label_set_line_wrap (GTK_LABEL (hint), TRUE);
  gtk_widget_set_size_request (hint, 400, -1);
  gtk_misc_set_alignment (GTK_MISC (hint), 0.0, 0.5);
  gimp_label_set_attributes (GTK_LABEL (hint), PANGO_ATTR_STYLE, PANGO_STYLE_ITALIC, -1);
  gtk_box_pack_start (GTK_BOX (left), hint, FALSE, FALSE, 0);
  gtk_widget_show_all (left);

  scroll = gtk_scrolled_window_new (NULL, NULL);
  gtk_scrolled_window_set_policy (GTK_SCROLLED_WINDOW (scroll), GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC);
  gtk_scrolled_window_set_shadow_type (GTK_SCROLLED_WINDOW (scroll), GTK_SHADOW_NONE);
  gtk_widget_set_size_request (scroll, -1, 320);
  gtk_box_pack_start (GTK_BOX (hbox), scroll, FALSE, FALSE, 0);
  right = gtk_vbox_new (FALSE, 12);
  gtk_scrolled_window_add_with_viewport (GTK_SCROLLED_WINDOW (scroll), right);
  gtk_viewport_set_shadow_type (GTK_VIEWPORT (gtk_bin_get_child (GTK_BIN (scroll))), GTK_SHADOW_NONE);

  /* The method parameters, from the library's description, in its
   * groups and order, in one table so that the columns line up: the
   * algorithm and what only it uses, then the output and the colour
   * under headings; under Advanced where it runs (every backend gives
   * the same bits). */
  main_table = options_table ();
  gtk_box_pack_start (GTK_BOX (right), main_table, FALSE, FALSE, 0);
  for (gint group = HT_GROUP_ALGORITHM; group <= HT_GROUP_ADVANCED; group++)
    {
      if (group == HT_GROUP_ADVANCED)
        {
          expander = gtk_expander_new_with_mnemonic (_("Ad_vanced"));
          gtk_box_pack_start (GTK_BOX (right), expander, FALSE, FALSE, 0);
          table = options_table ();
          gtk_container_add (GTK_CONTAINER (expander), table);
          row = 0;
        }
      else
        table = main_table;
      if (group == HT_GROUP_OUTPUT || group == HT_GROUP_COLOR)
        {
          w = gtk_label_new (group == HT_GROUP_OUTPUT ? _("Output") : _("Color"));
          gimp_label_set_attributes (GTK_LABEL (w), PANGO_ATTR_WEIGHT, PANGO_WEIGHT_BOLD, -1);
          gtk_misc_set_alignment (GTK_MISC (w), 0.0, 1.0);
          gtk_widget_set_size_request (w, -1, 30);
          gtk_table_attach (GTK_TABLE (table), w, 0, TABLE_COLUMNS, (guint) row, (guint) row + 1, GTK_FILL,
                            GTK_FILL, 0, 0);
          row++;
        }
      for (gint id = 0; id < HT_PARAM_COUNT; id++)
        {
          /* a group added to the description later goes under Advanced */
          if (MIN ((gint) ht_param_info ((ht_param_id) id)->group, HT_GROUP_ADVANCED) != group)
            continue;
          add_param (&st, table, &row, (ht_param_id) id);
          if (id == HT_PARAM_BACKEND)
            {
              st.gpu_label = attach_note (table, row++);
              gtk_label_set_text (GTK_LABEL (st.gpu_label), _("Looking for a GPU…"));
            }
        }
    }

  gtk_widget_show_all (hbox);
  update_sensitivity (&st);
  gpu_line_visible (&st);
  st.gpu_probe = gpu_probe_start ();
  g_timeout_add (100, gpu_show, &st);
  preview_changed (&st);
  ht_view_set_zoom (st.view, vals->zoom);
  gtk_widget_show (dlg);

  ok = gimp_dialog_run (GIMP_DIALOG (dlg)) == GTK_RESPONSE_OK;

  if (st.job)
    preview_job_stop (st.job);
  if (st.progress_timer)
    g_source_remove (st.progress_timer);
  gpu_probe_free (st.gpu_probe);
  g_source_remove_by_user_data (&st); /* gpu_show, where still waiting */
  *ready = ok && st.result && halftone_same_vals (&st.result_vals, vals) ? g_steal_pointer (&st.result) : NULL;
  gtk_widget_destroy (dlg);
  ht_view_free (st.view);
  g_clear_object (&st.result);
  g_clear_object (&st.source);
  g_free (st.result_note);
  g_free (st.failed);
  g_free (st.problem);
  return ok;
}

/* ------------------------------------------------------------ run */

static void
run (const gchar      *name,
     gint              nparams,
     const GimpParam  *param,
     gint             *nreturn_vals,
     GimpParam       **return_vals)
{
  static GimpParam  values[2];
  GimpRunMode       run_mode = (GimpRunMode) param[0].data.d_int32;
  gint32            drawable_id = param[2].data.d_drawable;
  HalftoneVals      vals;
  GimpPDBStatusType status = GIMP_PDB_SUCCESS;
  gchar            *error = NULL;
  GeglBuffer       *ready = NULL; /* the preview's result for the final values */

  bindtextdomain (GETTEXT_PACKAGE, HT_LOCALEDIR);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  textdomain (GETTEXT_PACKAGE);

  /* The operation is GPL-3.0-or-later; GEGL lists it only to programs
   * that accept that licence (GIMP does too). */
  g_object_set (gegl_config (), "application-license", "GPL3", NULL);
  gegl_init (NULL, NULL);

  *nreturn_vals = 1;
  *return_vals  = values;
  values[0].type          = GIMP_PDB_STATUS;
  values[0].data.d_status = GIMP_PDB_SUCCESS;
  halftone_vals_defaults (&vals);

  if (!gegl_has_operation (GEGL_OP))
    {
      status = GIMP_PDB_EXECUTION_ERROR;
      error  = g_strdup (_("the GEGL operation halftone:dither is not installed "
                           "(see docs/gegl.md for where GEGL looks for it)"));
    }
  else
    switch (run_mode)
      {
      case GIMP_RUN_INTERACTIVE:
        /* the defaults where nothing usable is stored (an older
         * version's settings are not read) */
        halftone_vals_load (&vals);
        if (!dialog (drawable_id, &vals, &ready))
          status = GIMP_PDB_CANCEL;
        break;

      case GIMP_RUN_NONINTERACTIVE:
        /* any of the procedures: its arguments, the defaults for the
         * rest */
        if (!halftone_vals_from_params (name, nparams, param, &vals, &error))
          status = GIMP_PDB_CALLING_ERROR;
        break;

      case GIMP_RUN_WITH_LAST_VALS:
        halftone_vals_load (&vals);
        break;
      }

  if (status == GIMP_PDB_SUCCESS)
    {
      error = halftone_check_vals (&vals, NULL);
      if (error)
        status = GIMP_PDB_CALLING_ERROR;
      else if (!gimp_drawable_is_rgb (drawable_id) && !gimp_drawable_is_gray (drawable_id))
        {
          status = GIMP_PDB_EXECUTION_ERROR;
          error  = g_strdup (_("only RGB and grayscale layers can be halftoned"));
        }
    }

  if (status == GIMP_PDB_SUCCESS)
    {
      if (!apply (drawable_id, &vals, ready, &error))
        status = GIMP_PDB_EXECUTION_ERROR;
      else
        {
          if (run_mode != GIMP_RUN_NONINTERACTIVE)
            gimp_displays_flush ();
          if (run_mode == GIMP_RUN_INTERACTIVE)
            halftone_vals_store (&vals);
        }
    }

  g_clear_object (&ready);
  values[0].data.d_status = status;
  if (error)
    {
      static gchar message[512];

      g_strlcpy (message, error, sizeof message);
      g_free (error);
      *nreturn_vals = 2;
      values[1].type = GIMP_PDB_STRING;
      values[1].data.d_string = message;
      if (run_mode == GIMP_RUN_INTERACTIVE)
        g_message ("%s", message);
    }
  gegl_exit ();
}
