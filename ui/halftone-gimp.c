/* GIMP 2.10 plug-in: halftone the active drawable with the GEGL operation
 * halftone:dither, with a dialog and a live 1:1 preview.
 *
 * The preview shows the true result: error diffusion of a crop is not the
 * same as the crop of the diffused image, so the whole drawable (the
 * selection's bounding box) is halftoned once per parameter change and
 * the visible part of that result is shown, pixel for pixel or enlarged.
 *
 * Copyright (C) 2026 the GEGL Halftone authors. GPL-3.0-or-later.
 */
#include "ht-config.h"

#include <string.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wconversion"
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#include <libgimp/gimp.h>
#include <libgimp/gimpui.h>
#pragma GCC diagnostic pop

#include <glib/gi18n-lib.h>

#include "halftone.h"

#define PLUG_IN_PROC   "plug-in-halftone-dither"
#define PLUG_IN_BINARY "halftone-gimp"
#define PLUG_IN_ROLE   "gegl-halftone-dither"
#define GEGL_OP        "halftone:dither"
#define MENU_PATH      "<Image>/Filters/Distorts"

#define COEF_MAX 256

/* Everything the user sets; remembered between runs (gimp_set_data).
 * The algorithm, colour mode and backend are the library's enum values,
 * which are also the GEGL operation's: the lists (ht_choices) say which
 * there are. */
typedef struct
{
  gint     algorithm;  /* ht_filter_id (HT_LIST_FILTERS; custom is 8) */
  gchar    coefficients[COEF_MAX];
  gint     levels;     /* 2..256                                      */
  gint     color_mode; /* ht_color_mode (HT_LIST_COLOR_MODES)         */
  gint     space;      /* 0 perceptual, 1 linear (the op's own enum)  */
  gboolean serpentine;
  gint     backend;    /* ht_backend (HT_LIST_BACKENDS)               */
  gint     threads;    /* 0 = all cores                               */
  gint     zoom;       /* preview magnification, 1..8 (dialog only)   */
} HalftoneVals;

static const HalftoneVals defaults = {
  HT_FILTER_FLOYD_STEINBERG, "- * 7; 3 5 1 / 16", 2, HT_COLOR_LUMA, 0, FALSE, HT_BACKEND_AUTO, 0, 1,
};

/* The preview's state: the last full result and what it was made from. */
typedef struct
{
  gint32        drawable_id;
  HalftoneVals *vals;
  GtkWidget    *preview;
  GtkWidget    *coef_entry;
  GtkWidget    *coef_label;
  GtkWidget    *status;
  GeglBuffer   *source;  /* the drawable, cropped to the selection bounds */
  GeglBuffer   *result;  /* NULL until computed / after a change          */
  HalftoneVals  result_vals;
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

/* "WHAT { FLOYD-STEINBERG (0), ..., CUSTOM (8) }": a PDB argument's
 * description in the style of GIMP's own, from the library's list. */
static gchar *
pdb_enum_doc (const gchar *what, ht_list list)
{
  GString         *s = g_string_new (what);
  gint             n = 0;
  const ht_choice *c = ht_choices (list, &n);

  g_string_append (s, " {");
  for (gint i = 0; i < n; i++)
    {
      gchar *up = g_ascii_strup (c[i].name, -1);

      g_string_append_printf (s, "%s %s (%d)", i ? "," : "", up, c[i].value);
      g_free (up);
    }
  g_string_append (s, " }");
  return g_string_free (s, FALSE);
}

/* "0 floyd-steinberg, 1 jarvis-judice-ninke, ...": the accepted values,
 * for messages. */
static gchar *
list_values (ht_list list)
{
  GString         *s = g_string_new (NULL);
  gint             n = 0;
  const ht_choice *c = ht_choices (list, &n);

  for (gint i = 0; i < n; i++)
    g_string_append_printf (s, "%s%d %s", i ? ", " : "", c[i].value, c[i].name);
  return g_string_free (s, FALSE);
}

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
  gchar *algorithm_doc = pdb_enum_doc ("Error filter", HT_LIST_FILTERS);
  gchar *coefficients_doc = g_strdup_printf ("Custom filter for algorithm %d, e.g. \"- * 7; 3 5 1 / 16\" "
                                             "(ignored otherwise)", (gint) HT_FILTER_CUSTOM);
  gchar *color_doc = pdb_enum_doc ("Color mode", HT_LIST_COLOR_MODES);
  gchar *backend_doc = pdb_enum_doc ("Backend", HT_LIST_BACKENDS);
  const GimpParamDef args[] = {
    { GIMP_PDB_INT32,    "run-mode",     "The run mode { RUN-INTERACTIVE (0), RUN-NONINTERACTIVE (1), RUN-WITH-LAST-VALS (2) }" },
    { GIMP_PDB_IMAGE,    "image",        "Input image (unused)" },
    { GIMP_PDB_DRAWABLE, "drawable",     "Input drawable" },
    { GIMP_PDB_INT32,    "algorithm",    algorithm_doc },
    { GIMP_PDB_STRING,   "coefficients", coefficients_doc },
    { GIMP_PDB_INT32,    "levels",       "Output levels per channel (2..256)" },
    { GIMP_PDB_INT32,    "color-mode",   color_doc },
    { GIMP_PDB_INT32,    "space",        "Space { PERCEPTUAL (0), LINEAR (1) }" },
    { GIMP_PDB_INT32,    "serpentine",   "Serpentine scan (TRUE or FALSE)" },
    { GIMP_PDB_INT32,    "backend",      backend_doc },
    { GIMP_PDB_INT32,    "threads",      "CPU threads (0 = all cores, up to 1024)" },
  };

  gimp_plugin_domain_register (GETTEXT_PACKAGE, HT_LOCALEDIR);

  gimp_install_procedure (PLUG_IN_PROC,
                          N_("Halftone by exact error diffusion"),
                          "Turns the drawable into black and white dots (or a "
                          "few levels per channel) by error diffusion "
                          "(Floyd-Steinberg and related filters), through the "
                          "GEGL operation halftone:dither. Works on the "
                          "selection's bounding box; the selection mask is "
                          "applied when the result is merged.",
                          "GEGL Halftone authors",
                          "GPL-3.0-or-later",
                          "2026",
                          N_("_Halftone (Error Diffusion)..."),
                          "RGB*, GRAY*",
                          GIMP_PLUGIN,
                          G_N_ELEMENTS (args), 0,
                          args, NULL);

  gimp_plugin_menu_register (PLUG_IN_PROC, MENU_PATH);
  g_free (algorithm_doc);
  g_free (coefficients_doc);
  g_free (color_doc);
  g_free (backend_doc);
}

/* ------------------------------------------------------------ checks */

/* The message `format` (translated; %s: the accepted values, %d: the
 * value given) for a value that is not in the library's list. */
static gchar *
not_in_list (const gchar *format, ht_list list, gint value)
{
  gchar *values  = list_values (list);
  gchar *message = g_strdup_printf (format, values, value);

  g_free (values);
  return message;
}

/* NULL when the values can be used; else a one-line message. */
static gchar *
check_vals (const HalftoneVals *v)
{
  if (!ht_choice_by_value (HT_LIST_FILTERS, v->algorithm))
    /* TRANSLATORS: %s: the accepted values ("0 auto, 1 cpu, 2 cuda"); %d: the value given */
    /* xgettext:c-format */
    return not_in_list (_("algorithm must be one of %s; got %d"), HT_LIST_FILTERS, v->algorithm);
  if (v->levels < 2 || v->levels > 256)
    return g_strdup_printf (_("levels must be 2..256, got %d"), v->levels);
  if (!ht_choice_by_value (HT_LIST_COLOR_MODES, v->color_mode))
    /* TRANSLATORS: %s: the accepted values ("0 auto, 1 cpu, 2 cuda"); %d: the value given */
    /* xgettext:c-format */
    return not_in_list (_("color mode must be one of %s; got %d"), HT_LIST_COLOR_MODES, v->color_mode);
  if (v->space < 0 || v->space > 1)
    return g_strdup_printf (_("space must be 0 or 1, got %d"), v->space);
  if (!ht_choice_by_value (HT_LIST_BACKENDS, v->backend))
    /* TRANSLATORS: %s: the accepted values ("0 auto, 1 cpu, 2 cuda"); %d: the value given */
    /* xgettext:c-format */
    return not_in_list (_("backend must be one of %s; got %d"), HT_LIST_BACKENDS, v->backend);
  if (v->threads < 0 || v->threads > 1024)
    return g_strdup_printf (_("threads must be 0..1024, got %d"), v->threads);
  if (v->algorithm == HT_FILTER_CUSTOM)
    {
      ht_filter f;
      char      err[256] = "";

      if (ht_filter_parse (v->coefficients, &f, err, sizeof err) != HT_OK)
        return g_strdup_printf (_("bad coefficients \"%s\": %s"), v->coefficients, err);
    }
  return NULL;
}

/* ------------------------------------------------------------ rendering */

static void
on_progress (GeglNode *node, gdouble fraction, gpointer user)
{
  (void) node;
  (void) user;
  gimp_progress_update (fraction);
}

/* Halftones `source` with `v`; returns a new buffer in the op's output
 * format covering the same extent. */
static GeglBuffer *
render (GeglBuffer *source, const HalftoneVals *v, gboolean progress)
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
  if (progress)
    g_signal_connect (op, "progress", G_CALLBACK (on_progress), NULL);
  gegl_node_link_many (src, op, sink, NULL);
  gegl_node_process (sink);
  g_object_unref (graph);
  return out;
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
apply (gint32 drawable_id, const HalftoneVals *v, gchar **error)
{
  GeglBuffer *source = get_source (drawable_id);
  GeglBuffer *result, *shadow;
  const GeglRectangle *r;

  if (!source)
    return TRUE; /* nothing selected on this drawable: nothing to do */

  gimp_progress_init (_("Halftoning"));
  result = render (source, v, TRUE);
  if (!result)
    {
      g_object_unref (source);
      *error = g_strdup (_("the halftone:dither operation gave no result"));
      return FALSE;
    }
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

static gboolean
same_vals (const HalftoneVals *a, const HalftoneVals *b)
{
  return a->algorithm == b->algorithm && a->levels == b->levels &&
         a->color_mode == b->color_mode && a->space == b->space &&
         a->serpentine == b->serpentine &&
         (a->algorithm != HT_FILTER_CUSTOM || strcmp (a->coefficients, b->coefficients) == 0);
}

static void
preview_draw (GimpPreview *preview, PreviewState *st)
{
  gint          px, py, pw, ph, zoom = MAX (1, st->vals->zoom);
  gint          sw, sh;
  GeglRectangle vis;
  guchar       *src, *dst, *orig, *mask;
  gsize         npx;
  const GeglRectangle *ext;
  gchar        *problem;

  if (!st->source)
    return;
  problem = check_vals (st->vals);
  if (problem)
    {
      gtk_label_set_text (GTK_LABEL (st->status), problem);
      g_free (problem);
      return;
    }
  gtk_label_set_text (GTK_LABEL (st->status), "");

  if (!st->result || !same_vals (&st->result_vals, st->vals))
    {
      GdkCursor *busy = gdk_cursor_new (GDK_WATCH);
      GdkWindow *win  = gtk_widget_get_window (gtk_widget_get_toplevel (GTK_WIDGET (preview)));

      if (win)
        {
          gdk_window_set_cursor (win, busy);
          gdk_flush ();
        }
      g_clear_object (&st->result);
      st->result      = render (st->source, st->vals, FALSE);
      st->result_vals = *st->vals;
      if (win)
        gdk_window_set_cursor (win, NULL);
      gdk_cursor_unref (busy);
      if (!st->result)
        return;
    }

  /* Visible part in drawable coordinates; enlarged by `zoom`, each result
   * pixel becomes a zoom x zoom block (no smoothing: dots stay dots). */
  gimp_preview_get_position (preview, &px, &py);
  gimp_preview_get_size (preview, &pw, &ph);

  /* What the merge will make of it: the result where the selection is,
   * the original elsewhere (the preview shows a border around the
   * selection), blended by the mask. Composited here rather than with
   * gimp_preview_draw_buffer(), whose selection path in GIMP 2.10
   * offsets the buffer by the drawn width instead of the rowstride. */
  sw  = (pw + zoom - 1) / zoom;
  sh  = (ph + zoom - 1) / zoom;
  if (zoom > 1)
    {
      /* The scrollbars span the image for a 1:1 view; enlarged, fewer
       * pixels are shown, so map the scroll position over the whole
       * image or its right and bottom parts could never be reached. */
      gint bw = preview->xmax - preview->xmin, bh = preview->ymax - preview->ymin;

      px = bw > pw ? preview->xmin + (gint) ((gint64) (px - preview->xmin) * (bw - sw) / (bw - pw))
                   : preview->xmin;
      py = bh > ph ? preview->ymin + (gint) ((gint64) (py - preview->ymin) * (bh - sh) / (bh - ph))
                   : preview->ymin;
    }
  vis = (GeglRectangle) { px, py, sw, sh };
  npx = (gsize) sw * (gsize) sh;
  src  = g_malloc0 (npx * 4);
  orig = g_malloc0 (npx * 4);
  mask = g_malloc (npx);
  gegl_buffer_get (st->result, &vis, 1.0, babl_format ("R'G'B'A u8"), src,
                   GEGL_AUTO_ROWSTRIDE, GEGL_ABYSS_NONE);
  {
    GeglBuffer *whole = gimp_drawable_get_buffer (st->drawable_id);
    gint32      image = gimp_item_get_image (st->drawable_id);

    gegl_buffer_get (whole, &vis, 1.0, babl_format ("R'G'B'A u8"), orig,
                     GEGL_AUTO_ROWSTRIDE, GEGL_ABYSS_NONE);
    g_object_unref (whole);
    if (gimp_selection_is_empty (image))
      memset (mask, 255, npx);
    else
      {
        gint          ox, oy;
        GeglBuffer   *sel = gimp_drawable_get_buffer (gimp_image_get_selection (image));
        GeglRectangle in_image;

        gimp_drawable_offsets (st->drawable_id, &ox, &oy);
        in_image = (GeglRectangle) { vis.x + ox, vis.y + oy, sw, sh };
        gegl_buffer_get (sel, &in_image, 1.0, babl_format ("Y u8"), mask,
                         GEGL_AUTO_ROWSTRIDE, GEGL_ABYSS_NONE);
        g_object_unref (sel);
      }
  }
  ext = gegl_buffer_get_extent (st->result);
  for (gsize i = 0; i < npx; i++)
    {
      gint x = px + (gint) (i % (gsize) sw), y = py + (gint) (i / (gsize) sw);
      guint m = mask[i];

      if (x < ext->x || y < ext->y || x >= ext->x + ext->width || y >= ext->y + ext->height)
        m = 0; /* not computed: outside the selection bounds */
      for (gint c = 0; c < 4; c++)
        src[i * 4 + (gsize) c] = (guchar) ((src[i * 4 + (gsize) c] * m +
                                            orig[i * 4 + (gsize) c] * (255 - m) + 127) / 255);
    }

  dst = g_malloc0 ((gsize) pw * (gsize) ph * 4);
  for (gint y = 0; y < ph; y++)
    for (gint x = 0; x < pw; x++)
      memcpy (dst + ((gsize) y * (gsize) pw + (gsize) x) * 4,
              src + ((gsize) (y / zoom) * (gsize) sw + (gsize) (x / zoom)) * 4, 4);
  gimp_preview_area_draw (GIMP_PREVIEW_AREA (gimp_preview_get_area (preview)),
                          0, 0, pw, ph, GIMP_RGBA_IMAGE, dst, pw * 4);
  g_free (src);
  g_free (orig);
  g_free (mask);
  g_free (dst);
}

static void
update_sensitivity (PreviewState *st)
{
  gboolean custom = st->vals->algorithm == HT_FILTER_CUSTOM;

  gtk_widget_set_sensitive (st->coef_entry, custom);
  gtk_widget_set_sensitive (st->coef_label, custom);
}

static void
on_algorithm_changed (GtkWidget *combo, PreviewState *st)
{
  gimp_int_combo_box_get_active (GIMP_INT_COMBO_BOX (combo), &st->vals->algorithm);
  update_sensitivity (st);
  gimp_preview_invalidate (GIMP_PREVIEW (st->preview));
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
  gimp_preview_invalidate (GIMP_PREVIEW (st->preview));
}

static void
on_invalidate (GtkWidget *widget, PreviewState *st)
{
  (void) widget;
  gimp_preview_invalidate (GIMP_PREVIEW (st->preview));
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

static gboolean
dialog (gint32 drawable_id, HalftoneVals *vals)
{
  PreviewState st = { 0 };
  GtkWidget   *dlg, *vbox, *table, *w, *hint;
  gboolean     ok;
  gint         row = 0;

  gimp_ui_init (PLUG_IN_BINARY, FALSE);

  st.drawable_id = drawable_id;
  st.vals        = vals;
  st.source      = get_source (drawable_id);

  dlg = gimp_dialog_new (_("Halftone (Error Diffusion)"), PLUG_IN_ROLE,
                         NULL, 0,
                         gimp_standard_help_func, PLUG_IN_PROC,
                         _("_Cancel"), GTK_RESPONSE_CANCEL,
                         _("_OK"),     GTK_RESPONSE_OK,
                         NULL);
  gtk_dialog_set_alternative_button_order (GTK_DIALOG (dlg), GTK_RESPONSE_OK,
                                           GTK_RESPONSE_CANCEL, -1);
  gimp_window_set_transient (GTK_WINDOW (dlg));

  vbox = gtk_vbox_new (FALSE, 12);
  gtk_container_set_border_width (GTK_CONTAINER (vbox), 12);
  gtk_box_pack_start (GTK_BOX (gtk_dialog_get_content_area (GTK_DIALOG (dlg))),
                      vbox, TRUE, TRUE, 0);
  gtk_widget_show (vbox);

  /* 1:1 by default: a halftone seen scaled down is meaningless. */
  st.preview = gimp_drawable_preview_new_from_drawable_id (drawable_id);
  gtk_box_pack_start (GTK_BOX (vbox), st.preview, TRUE, TRUE, 0);
  gtk_widget_show (st.preview);
  g_signal_connect (st.preview, "invalidated", G_CALLBACK (preview_draw), &st);

  table = gtk_table_new (9, 2, FALSE);
  gtk_table_set_row_spacings (GTK_TABLE (table), 6);
  gtk_table_set_col_spacings (GTK_TABLE (table), 12);
  gtk_box_pack_start (GTK_BOX (vbox), table, FALSE, FALSE, 0);
  gtk_widget_show (table);

  w = list_combo (HT_LIST_FILTERS);
  gimp_int_combo_box_set_active (GIMP_INT_COMBO_BOX (w), vals->algorithm);
  g_signal_connect (w, "changed", G_CALLBACK (on_algorithm_changed), &st);
  attach_row (table, row++, _("_Algorithm:"), w, NULL);

  st.coef_entry = gtk_entry_new ();
  gtk_entry_set_max_length (GTK_ENTRY (st.coef_entry), COEF_MAX - 1);
  gtk_entry_set_text (GTK_ENTRY (st.coef_entry), vals->coefficients);
  gtk_widget_set_tooltip_text (st.coef_entry,
                               _("Custom error filter: rows separated by ';', '*' marks the "
                                 "current pixel, '-' the pixels before it, an optional "
                                 "'/ divisor' at the end; for example \"- * 7; 3 5 1 / 16\""));
  g_signal_connect (st.coef_entry, "changed", G_CALLBACK (on_coef_changed), &st);
  attach_row (table, row++, _("C_oefficients:"), st.coef_entry, &st.coef_label);

  w = spin (&vals->levels, 2, 256, &st);
  attach_row (table, row++, _("_Levels:"), w, NULL);

  w = list_combo (HT_LIST_COLOR_MODES);
  gimp_int_combo_box_set_active (GIMP_INT_COMBO_BOX (w), vals->color_mode);
  g_signal_connect (w, "changed", G_CALLBACK (on_int_combo_changed), &vals->color_mode);
  g_signal_connect (w, "changed", G_CALLBACK (on_invalidate), &st);
  attach_row (table, row++, _("Color _mode:"), w, NULL);

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

  w = list_combo (HT_LIST_BACKENDS);
  gimp_int_combo_box_set_active (GIMP_INT_COMBO_BOX (w), vals->backend);
  g_signal_connect (w, "changed", G_CALLBACK (on_int_combo_changed), &vals->backend);
  attach_row (table, row++, _("_Backend:"), w, NULL);

  w = spin (&vals->threads, 0, 1024, NULL);
  gtk_widget_set_tooltip_text (w, _("CPU threads to use (0 = all cores)"));
  attach_row (table, row++, _("_Threads:"), w, NULL);

  w = int_combo (_("1:1 (actual pixels)"), 1, "2:1", 2, "3:1", 3, "4:1", 4, "8:1", 8, NULL);
  gimp_int_combo_box_set_active (GIMP_INT_COMBO_BOX (w), vals->zoom);
  g_signal_connect (w, "changed", G_CALLBACK (on_int_combo_changed), &vals->zoom);
  g_signal_connect (w, "changed", G_CALLBACK (on_invalidate), &st);
  attach_row (table, row++, _("Preview _zoom:"), w, NULL);

  st.status = gtk_label_new ("");
  gtk_label_set_line_wrap (GTK_LABEL (st.status), TRUE);
  gtk_misc_set_alignment (GTK_MISC (st.status), 0.0, 0.5);
  gtk_box_pack_start (GTK_BOX (vbox), st.status, FALSE, FALSE, 0);
  gtk_widget_show (st.status);

  hint = gtk_label_new (_("The preview shows the exact result: the whole image is "
                          "halftoned, then the visible part is shown."));
  gtk_label_set_line_wrap (GTK_LABEL (hint), TRUE);
  gimp_label_set_attributes (GTK_LABEL (hint), PANGO_ATTR_STYLE, PANGO_STYLE_ITALIC, -1);
  gtk_box_pack_start (GTK_BOX (vbox), hint, FALSE, FALSE, 0);
  gtk_widget_show (hint);

  update_sensitivity (&st);
  gtk_widget_show (dlg);
  /* Room for a useful amount of dots at 1:1; set after the preview's
   * style handler has applied its default size, which it would reset. */
  if (st.source)
    {
      const GeglRectangle *bounds = gegl_buffer_get_extent (st.source);

      gtk_widget_set_size_request (gimp_preview_get_area (GIMP_PREVIEW (st.preview)),
                                   MIN (440, bounds->width), MIN (320, bounds->height));
    }

  ok = gimp_dialog_run (GIMP_DIALOG (dlg)) == GTK_RESPONSE_OK;

  gtk_widget_destroy (dlg);
  g_clear_object (&st.result);
  g_clear_object (&st.source);
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
  HalftoneVals      vals = defaults;
  GimpPDBStatusType status = GIMP_PDB_SUCCESS;
  gchar            *error = NULL;

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
          gchar *stale = check_vals (&vals);

          if (stale)
            vals = defaults; /* stored values from an older version */
          g_free (stale);
        }
        if (!dialog (drawable_id, &vals))
          status = GIMP_PDB_CANCEL;
        break;

      case GIMP_RUN_NONINTERACTIVE:
        if (nparams != 11)
          {
            status = GIMP_PDB_CALLING_ERROR;
            error  = g_strdup_printf (_("%s takes 11 arguments, got %d"), PLUG_IN_PROC, nparams);
            break;
          }
        vals.algorithm  = param[3].data.d_int32;
        g_strlcpy (vals.coefficients, param[4].data.d_string ? param[4].data.d_string : "", COEF_MAX);
        vals.levels     = param[5].data.d_int32;
        vals.color_mode = param[6].data.d_int32;
        vals.space      = param[7].data.d_int32;
        vals.serpentine = param[8].data.d_int32 != 0;
        vals.backend    = param[9].data.d_int32;
        vals.threads    = param[10].data.d_int32;
        break;

      case GIMP_RUN_WITH_LAST_VALS:
        if (gimp_get_data_size (PLUG_IN_PROC) == sizeof vals)
          gimp_get_data (PLUG_IN_PROC, &vals);
        vals.coefficients[COEF_MAX - 1] = '\0';
        break;
      }

  if (status == GIMP_PDB_SUCCESS)
    {
      error = check_vals (&vals);
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
      if (!apply (drawable_id, &vals, &error))
        status = GIMP_PDB_EXECUTION_ERROR;
      else
        {
          if (run_mode != GIMP_RUN_NONINTERACTIVE)
            gimp_displays_flush ();
          if (run_mode == GIMP_RUN_INTERACTIVE)
            gimp_set_data (PLUG_IN_PROC, &vals, sizeof vals);
        }
    }

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
