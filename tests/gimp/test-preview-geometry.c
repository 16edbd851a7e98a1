/* The GIMP 2.10 dialog's zoomed preview reaches every pixel at every zoom
 * (ui/preview-geometry.h): for images from 1 to 70 pixels long, views
 * from 1 to 90 pixels and every zoom the dialog offers, scrolling through
 * the whole range shows every image pixel; what the view draws at each
 * position is exactly the span it reports, inside the image. A reference
 * written out here (pixel (scroll + v) / zoom for each screen pixel v)
 * is checked against the span.
 *
 * Copyright (C) 2026 the GEGL Halftone authors. GPL-3.0-or-later.
 */
#include <stdio.h>
#include <string.h>

#include "preview-geometry.h"

static int failures, checks;

#define CHECK(cond, ...)                                   \
  do {                                                     \
    checks++;                                              \
    if (!(cond)) {                                         \
      if (failures++ < 20) {                               \
        printf ("FAIL: " __VA_ARGS__);                     \
        printf ("\n");                                     \
      }                                                    \
    }                                                      \
  } while (0)

int
main (void)
{
  static const int zooms[] = { 1, 2, 3, 4, 8 };
  unsigned char    seen[80];

  for (int len = 1; len <= 70; len++)
    for (size_t z = 0; z < sizeof zooms / sizeof zooms[0]; z++)
      for (int view = 1; view <= 90; view += (view < 12 ? 1 : 7))
        {
          const int     zoom = zooms[z];
          const int64_t max  = ht_view_scroll_max (len, zoom, view);

          memset (seen, 0, sizeof seen);
          CHECK (max == (len * zoom > view ? len * zoom - view : 0), "len %d zoom %d view %d: max %lld", len,
                 zoom, view, (long long) max);
          for (int64_t scroll = 0; scroll <= max; scroll++)
            {
              int64_t first, count, lo = len, hi = -1;

              ht_view_span (len, zoom, view, scroll, &first, &count);
              CHECK (first >= 0 && count >= 1 && first + count <= len,
                     "len %d zoom %d view %d scroll %lld: span %lld+%lld outside", len, zoom, view,
                     (long long) scroll, (long long) first, (long long) count);
              /* the reference: what each screen pixel shows */
              for (int v = 0; v < view; v++)
                {
                  int64_t p = (scroll + v) / zoom;

                  if (p >= len)
                    break;
                  seen[p] = 1;
                  lo = p < lo ? p : lo;
                  hi = p > hi ? p : hi;
                }
              CHECK (lo == first && hi == first + count - 1,
                     "len %d zoom %d view %d scroll %lld: span %lld+%lld, drawn %lld..%lld", len, zoom, view,
                     (long long) scroll, (long long) first, (long long) count, (long long) lo, (long long) hi);
            }
          for (int p = 0; p < len; p++)
            CHECK (seen[p], "len %d zoom %d view %d: pixel %d never shown", len, zoom, view, p);
        }
  /* the case of the report: 451 x 300 at 4:1 in a 440 x 300 view */
  {
    int64_t first, count;

    ht_view_span (300, 4, 300, ht_view_scroll_max (300, 4, 300), &first, &count);
    CHECK (first + count == 300, "300 rows at 4:1 in 300: the last row is not reached (%lld+%lld)",
           (long long) first, (long long) count);
    ht_view_span (451, 4, 440, ht_view_scroll_max (451, 4, 440), &first, &count);
    CHECK (first + count == 451, "451 columns at 4:1 in 440: the last column is not reached");
  }
  printf ("%d checks, %d failed\n", checks, failures);
  return failures ? 1 : 0;
}
