/* halftone:dither run in bands of rows gives the bits of one run of the
 * whole image, as the halftone CLI makes it (ht_run on the same values):
 * 8-bit gray, 8-bit R'G'B'A and float R'G'B'A layers, levels 2 and 3,
 * Jarvis-Judice-Ninke (its error reaches 2 rows down, so every band
 * hands 2 carried rows to the next), on an image taller than several
 * bands whose height is no multiple of the band height; bands of 16
 * rows, of 1 row (shorter than the carried rows) and of the op's own
 * choice (HT_GEGL_BAND_ROWS unset). A request for a part of the image
 * gives that part of the whole result.
 *
 * The module is found through GEGL_PATH (tests/gegl/meson.build).
 *
 * Copyright (C) 2026 the GEGL Halftone authors. GPL-3.0-or-later.
 */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "halftone.h"
#include "op-test.h"

typedef struct
{
  const gchar *layer;    /* the buffer's format                     */
  const gchar *core_in;  /* the values the core is given            */
  const gchar *compare;  /* the op's output read back in this       */
  gboolean     alpha;
  gboolean     is_float;
} Layer;

static const Layer layers[] = {
  { "Y' u8", "Y' u8", "Y' u8", FALSE, FALSE },
  { "R'G'B'A u8", "R'G'B'A u8", "Y'A u8", TRUE, FALSE },
  { "R'G'B'A float", "R'G'B'A float", "R'G'B'A float", TRUE, TRUE },
};

/* What the op must give: ht_run of the whole image on the layer's values
 * (luma mode), as `compare` samples. Float layers: the core's u16 levels
 * as the exact fractions q / (levels - 1) in R', G' and B', alpha
 * v / 65535. */
static gpointer
expected (GeglBuffer *in, const Layer *l, gint levels)
{
  const GeglRectangle *r   = gegl_buffer_get_extent (in);
  const gint           nin = babl_format_get_n_components (babl_format (l->core_in));
  const gint           no  = l->alpha ? 2 : 1;
  const gsize          px  = (gsize) r->width * (gsize) r->height;
  gpointer             src = get_pixels (in, l->core_in);
  guint16             *lev = g_new0 (guint16, px * (gsize) no);
  ht_image             ii  = { r->width, r->height,
                               (size_t) r->width * (size_t) nin * (l->is_float ? sizeof (gfloat) : 1), nin,
                               l->is_float ? HT_FORMAT_F32 : HT_FORMAT_U8, src };
  ht_image             oi  = { r->width, r->height, (size_t) r->width * (size_t) no * 2, no, HT_FORMAT_U16, lev };
  ht_context          *ctx = ht_context_new ();
  ht_params            p;
  gpointer             want;

  ht_params_init (&p);
  p.filter = *ht_filter_builtin (HT_FILTER_JARVIS_JUDICE_NINKE);
  p.levels = levels;
  p.alpha  = l->alpha;
  ht_context_set_backend (ctx, HT_BACKEND_CPU);
  if (!l->is_float)
    {
      /* 8-bit values in, 8-bit levels out, as the CLI writes them */
      oi.format = HT_FORMAT_U8;
      oi.stride = (size_t) r->width * (size_t) no;
    }
  CHECK (ht_run (ctx, &ii, &oi, &p) == HT_OK, "core: %s", ht_context_message (ctx));
  if (!l->is_float)
    want = lev;
  else
    {
      gfloat *f = g_new (gfloat, px * 4);

      for (gsize i = 0; i < px; i++)
        {
          gint q = (gint) (((gint64) lev[i * 2] * (levels - 1) + 32767) / 65535);

          f[i * 4] = f[i * 4 + 1] = f[i * 4 + 2] = (gfloat) q / (gfloat) (levels - 1);
          f[i * 4 + 3] = (gfloat) lev[i * 2 + 1] / 65535.0f;
        }
      g_free (lev);
      want = f;
    }
  ht_context_free (ctx);
  g_free (src);
  return want;
}

static void
test_bands_equal_whole (void)
{
  const gint          w = 61, h = 301; /* 301 = 18 * 16 + 13 */
  const gchar *const  rows[] = { "16", "1", NULL };
  guchar             *rgba = make_rgba8 (w, h);

  for (gsize k = 0; k < G_N_ELEMENTS (layers); k++)
    for (gint levels = 2; levels <= 3; levels++)
      {
        const Layer *l    = &layers[k];
        GeglBuffer  *in   = buffer_from_rgba8 (rgba, w, h, l->layer);
        gpointer     want = expected (in, l, levels);
        const gsize  size = (gsize) w * (gsize) h *
                            (gsize) babl_format_get_bytes_per_pixel (babl_format (l->compare));

        for (gsize b = 0; b < G_N_ELEMENTS (rows); b++)
          {
            GeglBuffer *out;
            gpointer    got;

            if (rows[b])
              g_setenv ("HT_GEGL_BAND_ROWS", rows[b], TRUE);
            else
              g_unsetenv ("HT_GEGL_BAND_ROWS");
            out = run_op (in, "algorithm", HT_FILTER_JARVIS_JUDICE_NINKE, "levels", levels,
                          "backend", HT_BACKEND_CPU, NULL);
            got = get_pixels (out, l->compare);
            CHECK (memcmp (got, want, size) == 0, "%s, levels %d, bands of %s rows: not the whole run's bits",
                   l->layer, levels, rows[b] ? rows[b] : "the op's");
            g_free (got);
            g_object_unref (out);
          }
        g_unsetenv ("HT_GEGL_BAND_ROWS");
        g_free (want);
        g_object_unref (in);
      }
  g_free (rgba);
}

/* A part below the first bands: the rows above it are run, the part
 * is that of the whole result. */
static void
test_part (void)
{
  const gint    w = 61, h = 301;
  guchar       *rgba = make_rgba8 (w, h);
  GeglBuffer   *in = buffer_from_rgba8 (rgba, w, h, "R'G'B'A u8");
  guchar       *all = expected (in, &layers[1], 2);
  GeglRectangle roi = { 17, 203, 29, 41 };
  gint          diff;

  g_setenv ("HT_GEGL_BAND_ROWS", "16", TRUE);
  diff = part_rows_differ (in, &roi, all, w, "algorithm", HT_FILTER_JARVIS_JUDICE_NINKE,
                           "backend", HT_BACKEND_CPU, NULL);
  CHECK (diff == 0, "%d rows of a part below the first bands differ from the whole result", diff);
  g_unsetenv ("HT_GEGL_BAND_ROWS");
  g_free (all); g_free (rgba);
  g_object_unref (in);
}

int
main (int argc, char **argv)
{
  static void (*const tests[]) (void) = { test_bands_equal_whole, test_part };

  return op_test_main (argc, argv, tests, G_N_ELEMENTS (tests));
}
