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

/* The dialog's state: the last full result and what it was made from,
 * and the computation under way. */
typedef struct
{
  gint32        drawable_id;
  HalftoneVals *vals;
  GtkWidget    *dialog;
  HtView       *view;
  GtkWidget    *coef_entry;
  GtkWidget    *coef_label;
  GtkWidget    *search[10]; /* the search methods' controls and labels */
  GtkWidget    *coef_error; /* the parser's message, under the field   */
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
} PreviewState;

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

static void
on_progress (GeglNode *node, gdouble fraction, gpointer user)
{
  (void) node;
  (void) user;
  gimp_progress_update (fraction);
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
  RenderTalk  talk = { NULL, G_CALLBACK (on_progress), NULL, NULL, NULL };

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
  if (talk.notice)
    g_message ("%s", talk.notice);
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
  if (st->job)
    g_string_append_printf (s, " %s", _("Computing…"));
  if (st->failed && !st->job)
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

/* After any change: the coefficients' message, OK's sensitivity, and a
 * new preview computation. */
static void
preview_changed (PreviewState *st)
{
  gchar *problem = halftone_check_vals (st->vals);

  /* the parser's message (with the position) next to the field; OK only
   * for values that can run */
  if (st->vals->algorithm == HT_FILTER_CUSTOM && problem)
    gtk_label_set_text (GTK_LABEL (st->coef_error), problem);
  gtk_widget_set_visible (st->coef_error, st->vals->algorithm == HT_FILTER_CUSTOM && problem);
  gtk_dialog_set_response_sensitive (GTK_DIALOG (st->dialog), GTK_RESPONSE_OK, problem == NULL);
  g_free (problem);
  if (!st->source || gtk_widget_get_visible (st->coef_error) ||
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

/* The line under the backend, once the probe (gpu-probe.c) knows. */
static gboolean
gpu_show (gpointer data)
{
  PreviewState *st  = data;
  const gchar  *why = NULL;
  gchar        *text;

  if (!gpu_probe_result (st->gpu_probe, &why))
    return G_SOURCE_CONTINUE;
  if (why)
    /* TRANSLATORS: %s: why, e.g. "backend cuda: no NVIDIA driver (...)" */
    text = g_strdup_printf (_("No usable GPU (%s): the CPU computes, with the same result."), why);
  else
    text = g_strdup (_("An NVIDIA GPU is usable."));
  gtk_label_set_text (GTK_LABEL (st->gpu_label), text);
  g_free (text);
  return G_SOURCE_REMOVE;
}
/* ------------------------------------------------------------ dialog */

static void
update_sensitivity (PreviewState *st)
{
  gboolean custom = st->vals->algorithm == HT_FILTER_CUSTOM;

  gtk_widget_set_sensitive (st->coef_entry, custom);
  gtk_widget_set_sensitive (st->coef_label, custom);
  for (gsize i = 0; i < G_N_ELEMENTS (st->search); i++)
    if (st->search[i])
      gtk_widget_set_sensitive (st->search[i], halftone_is_search (st->vals->algorithm) &&
                                (i >= 2 || st->vals->algorithm != HT_ALGORITHM_DBS)); /* dbs: no window */
}

static void
on_algorithm_changed (GtkWidget *combo, PreviewState *st)
{
  gimp_int_combo_box_get_active (GIMP_INT_COMBO_BOX (combo), &st->vals->algorithm);
  update_sensitivity (st);
  preview_changed (st);
}

static void
on_int_combo_changed (GtkWidget *combo, gint *value)
{
  gimp_int_combo_box_get_active (GIMP_INT_COMBO_BOX (combo), value);
}

static void
on_coef_changed (GtkEntry *entry, PreviewState *st)
{
  g_strlcpy (st->vals->coefficients, gtk_entry_get_text (entry), COEF_MAX);
  preview_changed (st);
}

static void
on_invalidate (GtkWidget *widget, PreviewState *st)
{
  (void) widget;
  preview_changed (st);
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

static void
attach_row (GtkWidget *table, gint row, const gchar *label, GtkWidget *widget, GtkWidget **label_out)
{
  GtkWidget *l = gtk_label_new_with_mnemonic (label);

  gtk_misc_set_alignment (GTK_MISC (l), 0.0, 0.5);
  gtk_label_set_mnemonic_widget (GTK_LABEL (l), widget);
  gtk_table_attach (GTK_TABLE (table), l, 0, 1, (guint) row, (guint) row + 1, GTK_FILL, GTK_FILL, 0, 0);
  gtk_table_attach (GTK_TABLE (table), widget, 1, 2, (guint) row, (guint) row + 1,
                    GTK_EXPAND | GTK_FILL, GTK_FILL, 0, 0);
  gtk_widget_show (l);
  gtk_widget_show (widget);
  if (label_out)
    *label_out = l;
}

/* A wrapped italic note in the table's second column. */
static GtkWidget *
attach_note (GtkWidget *table, gint row)
{
  GtkWidget *l = gtk_label_new ("");

  gtk_label_set_line_wrap (GTK_LABEL (l), TRUE);
  gtk_widget_set_size_request (l, 260, -1);
  gtk_misc_set_alignment (GTK_MISC (l), 0.0, 0.5);
  gimp_label_set_attributes (GTK_LABEL (l), PANGO_ATTR_STYLE, PANGO_STYLE_ITALIC, -1);
  gtk_table_attach (GTK_TABLE (table), l, 1, 2, (guint) row, (guint) row + 1, GTK_FILL, GTK_FILL, 0, 0);
  gtk_widget_show (l);
  return l;
}

static GtkWidget *
spin (gint *value, gint lower, gint upper, PreviewState *st)
{
  GtkObject *adj  = gtk_adjustment_new (*value, lower, upper, 1, 10, 0);
  GtkWidget *spin = gtk_spin_button_new (GTK_ADJUSTMENT (adj), 1, 0);

  gtk_spin_button_set_numeric (GTK_SPIN_BUTTON (spin), TRUE);
  g_signal_connect (adj, "value-changed", G_CALLBACK (gimp_int_adjustment_update), value);
  if (st)
    g_signal_connect (adj, "value-changed", G_CALLBACK (on_invalidate), st);
  return spin;
}

/* A combo box of the list's entries that keeps *value and refreshes the
 * preview. */
static GtkWidget *
value_combo (ht_list list, gint *value, PreviewState *st)
{
  GtkWidget *combo = list_combo (list);

  gimp_int_combo_box_set_active (GIMP_INT_COMBO_BOX (combo), *value);
  g_signal_connect (combo, "changed", G_CALLBACK (on_int_combo_changed), value);
  g_signal_connect (combo, "changed", G_CALLBACK (on_invalidate), st);
  return combo;
}

/* The fractions of the op (0..1) as percent; `also`, where not NULL, gets
 * the same value (the inter-plane weight forward and back). */
static void
on_percent_changed (GtkAdjustment *adj, gdouble *f)
{
  gdouble *also = g_object_get_data (G_OBJECT (adj), "also");

  *f = gtk_adjustment_get_value (adj) / 100.0;
  if (also)
    *also = *f;
}

static GtkWidget *
percent_spin (gdouble *f, gdouble *also, gint upper, PreviewState *st)
{
  GtkObject *adj  = gtk_adjustment_new (CLAMP (floor (*f * 100.0 + 0.5), 0, upper), 0, upper, 1, 10, 0);
  GtkWidget *spin = gtk_spin_button_new (GTK_ADJUSTMENT (adj), 1, 0);

  gtk_spin_button_set_numeric (GTK_SPIN_BUTTON (spin), TRUE);
  g_object_set_data (G_OBJECT (adj), "also", also);
  g_signal_connect (adj, "value-changed", G_CALLBACK (on_percent_changed), f);
  g_signal_connect (adj, "value-changed", G_CALLBACK (on_invalidate), st);
  return spin;
}

/* Help opens the project's documentation of the dialog (installed with
 * the plug-in), not GIMP's manual, which does not know it. */
static void
show_help (const gchar *help_id, gpointer data)
{
  const gchar *doc = HT_DOCDIR "/gimp.html";
  gchar       *uri;
  GError      *error = NULL;

  (void) help_id;
  (void) data;
  if (!g_file_test (doc, G_FILE_TEST_EXISTS))
    doc = HT_DOCDIR "/gimp.md";
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
  GtkWidget   *dlg, *hbox, *left, *scroll, *right, *table, *adv, *expander, *w, *hint, *zbox;
  gboolean     ok;
  gint         row = 0, arow = 0, x = 0, y = 0, width = 1, height = 1;
  GeglRectangle region;

  gimp_ui_init (PLUG_IN_BINARY, FALSE);

  st.drawable_id = drawable_id;
  st.vals        = vals;
  st.source      = get_source (drawable_id);

  dlg = gimp_dialog_new (_("Halftone (Error Diffusion)"), PLUG_IN_ROLE,
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

  hint = gtk_label_new (_("The preview shows the exact result: the whole selection is "
                          "halftoned, then the visible part is shown. Drag it to move."));
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

  table = gtk_table_new (9, 2, FALSE);
  gtk_table_set_row_spacings (GTK_TABLE (table), 6);
  gtk_table_set_col_spacings (GTK_TABLE (table), 12);
  gtk_box_pack_start (GTK_BOX (right), table, FALSE, FALSE, 0);

  w = list_combo (HT_LIST_ALGORITHMS);
  gimp_int_combo_box_set_active (GIMP_INT_COMBO_BOX (w), vals->algorithm);
  g_signal_connect (w, "changed", G_CALLBACK (on_algorithm_changed), &st);
  attach_row (table, row++, _("_Algorithm:"), w, NULL);

  /* the search methods only (sensitive for them, update_sensitivity);
   * the tooltips are the op's descriptions */
  w = spin (&vals->window, 1, HT_SEARCH_WINDOW_MAX, &st);
  gtk_widget_set_tooltip_text (w, _("Side of the square windows whose black-and-white patterns "
                                    "are searched; each step up makes LES about 30 times slower"));
  attach_row (table, row++, _("Window size"), w, &st.search[1]);
  st.search[0] = w;
  {
    GtkObject *adj = gtk_adjustment_new (vals->sigma, 0.25, 4.0, 0.05, 0.25, 0);

    w = gtk_spin_button_new (GTK_ADJUSTMENT (adj), 0.05, 2);
    gtk_spin_button_set_numeric (GTK_SPIN_BUTTON (w), TRUE);
    g_signal_connect (adj, "value-changed", G_CALLBACK (gimp_double_adjustment_update), &vals->sigma);
    g_signal_connect (adj, "value-changed", G_CALLBACK (on_invalidate), &st);
  }
  gtk_widget_set_tooltip_text (w, _("Standard deviation in pixels of the Gaussian that models "
                                    "the eye: larger values look from farther away"));
  attach_row (table, row++, _("Eye model sigma"), w, &st.search[3]);
  st.search[2] = w;
  w = value_combo (HT_LIST_INITS, &vals->init, &st);
  gtk_widget_set_tooltip_text (w, _("The image the search starts from: Floyd-Steinberg error "
                                    "diffusion (fewer rounds) or random dither from the seed"));
  attach_row (table, row++, _("Start from"), w, &st.search[5]);
  st.search[4] = w;
  w = value_combo (HT_LIST_SCHEDULES, &vals->schedule, &st);
  gtk_widget_set_tooltip_text (w, _("Order of the windows: parallel blocks on every core, or "
                                    "raster order on one (the paper's sequential reference)"));
  attach_row (table, row++, _("Schedule"), w, &st.search[7]);
  st.search[6] = w;
  w = spin (&vals->max_rounds, 0, 1000000, &st);
  gtk_widget_set_tooltip_text (w, _("Stop the search after this many rounds (0: when a round "
                                    "changes nothing)"));
  attach_row (table, row++, _("Maximum rounds"), w, &st.search[9]);
  st.search[8] = w;

  st.coef_entry = gtk_entry_new ();
  gtk_entry_set_max_length (GTK_ENTRY (st.coef_entry), COEF_MAX - 1);
  gtk_entry_set_text (GTK_ENTRY (st.coef_entry), vals->coefficients);
  gtk_widget_set_tooltip_text (st.coef_entry,
                               _("Custom error filter: rows separated by ';', '*' marks the "
                                 "current pixel, '-' the pixels before it, an optional "
                                 "'/ divisor' at the end; for example \"- * 7; 3 5 1 / 16\""));
  g_signal_connect (st.coef_entry, "changed", G_CALLBACK (on_coef_changed), &st);
  attach_row (table, row++, _("C_oefficients:"), st.coef_entry, &st.coef_label);
  st.coef_error = attach_note (table, row++);

  w = spin (&vals->levels, 2, 256, &st);
  attach_row (table, row++, _("_Levels:"), w, NULL);

  w = value_combo (HT_LIST_COLOR_MODES, &vals->color_mode, &st);
  attach_row (table, row++, _("Color _mode:"), w, NULL);

  /* plane-dependent colour and cmyk only (the op ignores them otherwise) */
  w = percent_spin (&vals->interplane_forward, &vals->interplane_backward, 50, &st);
  gtk_widget_set_tooltip_text (w, _("Plane-dependent and CMYK modes: the share (%) of each color plane's error "
                                    "passed to its neighbouring planes, so that dots of different colors stop "
                                    "piling up on the same pixels; 20 is a good start"));
  attach_row (table, row++, _("_Inter-plane weight (%):"), w, NULL);
  w = percent_spin (&vals->randomize, NULL, 100, &st);
  gtk_widget_set_tooltip_text (w, _("Plane-dependent and CMYK modes: how much (%) the error filter's weights "
                                    "are perturbed per pixel, which breaks periodic patterns"));
  attach_row (table, row++, _("Ran_domize (%):"), w, NULL);
  w = spin (&vals->seed, 0, G_MAXINT, &st);
  gtk_widget_set_tooltip_text (w, _("Key of the random perturbation; the same seed gives the same image"));
  attach_row (table, row++, _("S_eed:"), w, NULL);
  w = percent_spin (&vals->black, NULL, 100, &st);
  gtk_widget_set_tooltip_text (w, _("CMYK mode: the share (%) of the gray common to cyan, magenta and yellow "
                                    "printed with black ink"));
  attach_row (table, row++, _("Blac_k generation (%):"), w, NULL);

  w = int_combo (_("Perceptual (gamma-encoded values)"), 0, _("Linear light"), 1, NULL);
  gimp_int_combo_box_set_active (GIMP_INT_COMBO_BOX (w), vals->space);
  g_signal_connect (w, "changed", G_CALLBACK (on_int_combo_changed), &vals->space);
  g_signal_connect (w, "changed", G_CALLBACK (on_invalidate), &st);
  attach_row (table, row++, _("_Space:"), w, NULL);

  w = gtk_check_button_new_with_mnemonic (_("Se_rpentine scan"));
  gtk_toggle_button_set_active (GTK_TOGGLE_BUTTON (w), vals->serpentine);
  g_signal_connect (w, "toggled", G_CALLBACK (gimp_toggle_button_update), &vals->serpentine);
  g_signal_connect (w, "toggled", G_CALLBACK (on_invalidate), &st);
  gtk_table_attach (GTK_TABLE (table), w, 1, 2, (guint) row, (guint) row + 1, GTK_FILL, GTK_FILL, 0, 0);
  gtk_widget_show (w);
  row++;

  /* Advanced: where it runs. Every backend gives the same bits. */
  expander = gtk_expander_new_with_mnemonic (_("Ad_vanced"));
  gtk_box_pack_start (GTK_BOX (right), expander, FALSE, FALSE, 0);
  adv = gtk_table_new (3, 2, FALSE);
  gtk_table_set_row_spacings (GTK_TABLE (adv), 6);
  gtk_table_set_col_spacings (GTK_TABLE (adv), 12);
  gtk_container_add (GTK_CONTAINER (expander), adv);

  w = value_combo (HT_LIST_BACKENDS, &vals->backend, &st);
  attach_row (adv, arow++, _("_Backend:"), w, NULL);
  st.gpu_label = attach_note (adv, arow++);
  gtk_label_set_text (GTK_LABEL (st.gpu_label), _("Looking for a GPU…"));

  w = spin (&vals->threads, 0, 1024, &st);
  gtk_widget_set_tooltip_text (w, _("CPU threads to use (0 = all cores)"));
  attach_row (adv, arow++, _("_Threads:"), w, NULL);

  gtk_widget_show_all (hbox);
  update_sensitivity (&st);
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
  HalftoneVals      vals = halftone_defaults;
  GimpPDBStatusType status = GIMP_PDB_SUCCESS;
  gchar            *error = NULL;
  GeglBuffer       *ready = NULL; /* the preview's result for the final values */

  (void) name;
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
        if (gimp_get_data_size (PLUG_IN_PROC) == sizeof vals)
          gimp_get_data (PLUG_IN_PROC, &vals);
        vals.coefficients[COEF_MAX - 1] = '\0';
        if (vals.zoom < 1 || vals.zoom > 8)
          vals.zoom = 1;
        {
          gchar *stale = halftone_check_vals (&vals);

          if (stale)
            vals = halftone_defaults; /* stored values from an older version */
          g_free (stale);
        }
        if (!dialog (drawable_id, &vals, &ready))
          status = GIMP_PDB_CANCEL;
        break;

      case GIMP_RUN_NONINTERACTIVE:
        /* either procedure: plug-in-halftone-dither's 11 arguments (the
         * rest from the defaults) or plug-in-halftone-dither2's 21 */
        if (!halftone_vals_from_params (nparams, param, &vals, &error))
          status = GIMP_PDB_CALLING_ERROR;
        break;

      case GIMP_RUN_WITH_LAST_VALS:
        if (gimp_get_data_size (PLUG_IN_PROC) == sizeof vals)
          gimp_get_data (PLUG_IN_PROC, &vals);
        vals.coefficients[COEF_MAX - 1] = '\0';
        break;
      }

  if (status == GIMP_PDB_SUCCESS)
    {
      error = halftone_check_vals (&vals);
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
            gimp_set_data (PLUG_IN_PROC, &vals, sizeof vals);
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
