/* The GIMP 2.10 dialog's zoomable preview (preview-view.h). GIMP's own
 * drawable preview sizes its scrollbars for 1:1, so enlarged it could not
 * reach most of the image; this one sizes them for the enlarged image.
 *
 * Copyright (C) 2026 the GEGL Halftone authors. GPL-3.0-or-later.
 */
#include "ht-config.h"

#include <string.h>

#include "preview-view.h"
#include "preview-geometry.h"

struct HtView
{
  GtkWidget     *table, *area;
  GtkAdjustment *hadj, *vadj;
  GeglRectangle  region;
  gint           zoom;
  HtViewFill     fill;
  gpointer       user;
  gboolean       dragging;
  gdouble        drag_x, drag_y, drag_h, drag_v;
};

/* The adjustments for the area's size and the zoom: upper is the
 * enlarged length, the page the view, so values reach
 * ht_view_scroll_max(). */
static void
update_adjustment (GtkAdjustment *adj, gint len, gint zoom, gint view)
{
  gdouble max = (gdouble) ht_view_scroll_max (len, zoom, view);

  gtk_adjustment_configure (adj, CLAMP (gtk_adjustment_get_value (adj), 0.0, max),
                            0.0, (gdouble) len * zoom, MAX (1, zoom), MAX (1, view / 2), view);
}

void
ht_view_redraw (HtView *v)
{
  GtkAllocation a;
  gint64        fx, nx, fy, ny;
  guchar       *src, *dst;
  gint          w, h, sx, sy;

  gtk_widget_get_allocation (v->area, &a);
  w = a.width;
  h = a.height;
  if (w <= 1 || h <= 1)
    return;
  update_adjustment (v->hadj, v->region.width, v->zoom, w);
  update_adjustment (v->vadj, v->region.height, v->zoom, h);
  sx = (gint) gtk_adjustment_get_value (v->hadj);
  sy = (gint) gtk_adjustment_get_value (v->vadj);
  ht_view_span (v->region.width, v->zoom, w, sx, &fx, &nx);
  ht_view_span (v->region.height, v->zoom, h, sy, &fy, &ny);

  dst = g_malloc0 ((gsize) w * (gsize) h * 4);
  if (nx > 0 && ny > 0)
    {
      GeglRectangle r = { v->region.x + (gint) fx, v->region.y + (gint) fy, (gint) nx, (gint) ny };

      src = g_malloc0 ((gsize) nx * (gsize) ny * 4);
      v->fill (&r, src, v->user);
      /* screen pixel (x, y) shows image pixel ((sx + x) / zoom, ...) */
      for (gint y = 0; y < h; y++)
        {
          gint64 iy = (sy + y) / v->zoom - fy;

          if (iy >= ny)
            break;
          for (gint x = 0; x < w; x++)
            {
              gint64 ix = (sx + x) / v->zoom - fx;

              if (ix >= nx)
                break;
              memcpy (dst + ((gsize) y * (gsize) w + (gsize) x) * 4,
                      src + ((gsize) iy * (gsize) nx + (gsize) ix) * 4, 4);
            }
        }
      g_free (src);
    }
  gimp_preview_area_draw (GIMP_PREVIEW_AREA (v->area), 0, 0, w, h, GIMP_RGBA_IMAGE, dst, w * 4);
  g_free (dst);
}

static void
on_size_allocate (GtkWidget *widget, GtkAllocation *a, HtView *v)
{
  (void) widget;
  (void) a;
  ht_view_redraw (v);
}

static void
on_scrolled (GtkAdjustment *adj, HtView *v)
{
  (void) adj;
  ht_view_redraw (v);
}

static gboolean
on_button (GtkWidget *widget, GdkEventButton *e, HtView *v)
{
  (void) widget;
  if (e->button != 1)
    return FALSE;
  v->dragging = e->type == GDK_BUTTON_PRESS;
  v->drag_x = e->x;
  v->drag_y = e->y;
  v->drag_h = gtk_adjustment_get_value (v->hadj);
  v->drag_v = gtk_adjustment_get_value (v->vadj);
  return TRUE;
}

/* Dragging moves the image with the pointer. */
static gboolean
on_motion (GtkWidget *widget, GdkEventMotion *e, HtView *v)
{
  (void) widget;
  if (!v->dragging)
    return FALSE;
  gtk_adjustment_set_value (v->hadj, CLAMP (v->drag_h - (e->x - v->drag_x), 0.0,
                                            gtk_adjustment_get_upper (v->hadj) - gtk_adjustment_get_page_size (v->hadj)));
  gtk_adjustment_set_value (v->vadj, CLAMP (v->drag_v - (e->y - v->drag_y), 0.0,
                                            gtk_adjustment_get_upper (v->vadj) - gtk_adjustment_get_page_size (v->vadj)));
  return TRUE;
}

HtView *
ht_view_new (const GeglRectangle *region, gint min_width, gint min_height, HtViewFill fill, gpointer user)
{
  HtView    *v = g_new0 (HtView, 1);
  GtkWidget *frame, *bar;

  v->region = *region;
  v->zoom   = 1;
  v->fill   = fill;
  v->user   = user;
  v->hadj   = GTK_ADJUSTMENT (gtk_adjustment_new (0, 0, 1, 1, 1, 1));
  v->vadj   = GTK_ADJUSTMENT (gtk_adjustment_new (0, 0, 1, 1, 1, 1));

  v->table = gtk_table_new (2, 2, FALSE);
  frame = gtk_frame_new (NULL);
  gtk_frame_set_shadow_type (GTK_FRAME (frame), GTK_SHADOW_IN);
  gtk_table_attach (GTK_TABLE (v->table), frame, 0, 1, 0, 1,
                    GTK_EXPAND | GTK_SHRINK | GTK_FILL, GTK_EXPAND | GTK_SHRINK | GTK_FILL, 0, 0);
  v->area = gimp_preview_area_new ();
  gtk_widget_set_size_request (v->area, MIN (min_width, region->width), MIN (min_height, region->height));
  gtk_widget_add_events (v->area, GDK_BUTTON_PRESS_MASK | GDK_BUTTON_RELEASE_MASK | GDK_POINTER_MOTION_MASK);
  gtk_container_add (GTK_CONTAINER (frame), v->area);
  g_signal_connect (v->area, "size-allocate", G_CALLBACK (on_size_allocate), v);
  g_signal_connect (v->area, "button-press-event", G_CALLBACK (on_button), v);
  g_signal_connect (v->area, "button-release-event", G_CALLBACK (on_button), v);
  g_signal_connect (v->area, "motion-notify-event", G_CALLBACK (on_motion), v);

  bar = gtk_hscrollbar_new (v->hadj);
  gtk_table_attach (GTK_TABLE (v->table), bar, 0, 1, 1, 2, GTK_EXPAND | GTK_SHRINK | GTK_FILL, GTK_FILL, 0, 0);
  bar = gtk_vscrollbar_new (v->vadj);
  gtk_table_attach (GTK_TABLE (v->table), bar, 1, 2, 0, 1, GTK_FILL, GTK_EXPAND | GTK_SHRINK | GTK_FILL, 0, 0);
  g_signal_connect (v->hadj, "value-changed", G_CALLBACK (on_scrolled), v);
  g_signal_connect (v->vadj, "value-changed", G_CALLBACK (on_scrolled), v);
  gtk_widget_show_all (v->table);
  return v;
}

GtkWidget *
ht_view_widget (HtView *v)
{
  return v->table;
}

void
ht_view_set_zoom (HtView *v, gint zoom)
{
  GtkAllocation a;
  gdouble       cx, cy;

  zoom = CLAMP (zoom, 1, 16);
  if (zoom == v->zoom)
    return;
  gtk_widget_get_allocation (v->area, &a);
  /* the image pixel at the centre, kept there */
  cx = (gtk_adjustment_get_value (v->hadj) + a.width / 2.0) / v->zoom;
  cy = (gtk_adjustment_get_value (v->vadj) + a.height / 2.0) / v->zoom;
  v->zoom = zoom;
  update_adjustment (v->hadj, v->region.width, zoom, a.width);
  update_adjustment (v->vadj, v->region.height, zoom, a.height);
  g_signal_handlers_block_by_func (v->hadj, on_scrolled, v);
  gtk_adjustment_set_value (v->hadj, CLAMP (cx * zoom - a.width / 2.0, 0.0,
                                            (gdouble) ht_view_scroll_max (v->region.width, zoom, a.width)));
  g_signal_handlers_unblock_by_func (v->hadj, on_scrolled, v);
  gtk_adjustment_set_value (v->vadj, CLAMP (cy * zoom - a.height / 2.0, 0.0,
                                            (gdouble) ht_view_scroll_max (v->region.height, zoom, a.height)));
  ht_view_redraw (v);
}

void
ht_view_free (HtView *v)
{
  g_free (v);
}
