/* One axis of the GIMP 2.10 dialog's zoomed preview (preview-view.c),
 * kept free of GTK so that tests/gimp/test-preview-geometry.c can check
 * that every zoom reaches every pixel.
 *
 * `len` image pixels are shown `zoom` times enlarged (each a zoom x zoom
 * block) in a view `view` screen pixels long, scrolled by `scroll` screen
 * pixels, 0..ht_view_scroll_max(). Screen pixel v shows image pixel
 * (scroll + v) / zoom where that is below len.
 *
 * Copyright (C) 2026 the GEGL Halftone authors. GPL-3.0-or-later.
 */
#ifndef HT_PREVIEW_GEOMETRY_H
#define HT_PREVIEW_GEOMETRY_H

#include <stdint.h>

/* The scroll range: the enlarged image's length less the view's. The
 * scrollbar's upper bound is len * zoom and its page the view, so its
 * largest value is this. */
static inline int64_t
ht_view_scroll_max (int64_t len, int zoom, int64_t view)
{
  const int64_t full = len * zoom;

  return full > view ? full - view : 0;
}

/* The image pixels that the view shows at `scroll` (clamped to the
 * range): the first and how many. */
static inline void
ht_view_span (int64_t len, int zoom, int64_t view, int64_t scroll, int64_t *first, int64_t *count)
{
  const int64_t max = ht_view_scroll_max (len, zoom, view);
  int64_t       end;

  scroll = scroll < 0 ? 0 : scroll > max ? max : scroll;
  end    = scroll + view < len * zoom ? scroll + view : len * zoom;
  *first = scroll / zoom;
  *count = end > scroll ? (end + zoom - 1) / zoom - *first : 0;
}

#endif
