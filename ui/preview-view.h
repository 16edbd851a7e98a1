/* The GIMP 2.10 dialog's preview: a part of the image shown 1:1 or
 * enlarged (each pixel a zoom x zoom block, never smoothed: dots stay
 * dots), with scrollbars and dragging that reach every pixel at every
 * zoom (preview-geometry.h). It shows what a callback fills in.
 *
 * Copyright (C) 2026 the GEGL Halftone authors. GPL-3.0-or-later.
 */
#ifndef HT_PREVIEW_VIEW_H
#define HT_PREVIEW_VIEW_H

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wconversion"
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#include <libgimp/gimp.h>
#include <libgimp/gimpui.h>
#pragma GCC diagnostic pop

/* Fills `rect` (image coordinates) as R'G'B'A u8 rows of rect->width. */
typedef void (*HtViewFill) (const GeglRectangle *rect, guchar *rgba, gpointer user);

typedef struct HtView HtView;

/* A view of `region` (image coordinates), at least min_width x
 * min_height screen pixels where the region is that large. */
HtView    *ht_view_new    (const GeglRectangle *region, gint min_width, gint min_height,
                           HtViewFill fill, gpointer user);
GtkWidget *ht_view_widget (HtView *view);
/* Keeps the pixel at the view's centre there. */
void       ht_view_set_zoom (HtView *view, gint zoom);
/* Draws again (after the callback's content changed). */
void       ht_view_redraw (HtView *view);
void       ht_view_free   (HtView *view);

#endif
