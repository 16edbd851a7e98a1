/* ht-bench-op: the GEGL operation halftone:dither beside what bounds it,
 * in one run (issue 23, item 8; BENCHMARKS.md "The GEGL op").
 *
 *   ht-bench-op [SIZE] [ROUNDS]      (default 3000 and 7)
 *
 * On a SIZE x SIZE GeglBuffer held as GIMP holds layers (8-bit
 * "R'G'B'A u8" and linear "RGBA float"), with the op's default
 * properties (Floyd-Steinberg, 2 levels, luminance), it times:
 *  - op: buffer-source -> halftone:dither -> buffer-sink, all of it;
 *  - core: ht_run alone on the image's gray plane ("Y' u8", read once
 *    before timing), the same parameters and threads;
 *  - convert: GEGL converting the buffer to the op's input format and
 *    the op's output format back into a buffer of the layer's format,
 *    in bands of rows as the op does, with nothing computed between;
 *  - gegl:dither with its defaults, the stock op beside ours;
 *  - whole: what the op does inside for the 8-bit layer, without GEGL:
 *    a whole-image copy of the R'G'B'A u8 pixels and ht_run on it into
 *    a whole-image Y'A u8 output, once in freshly allocated memory (as
 *    the op allocates per call) and once in memory reused across rounds,
 *    which shows what first touches of fresh pages cost.
 * Rounds alternate the rows, so that a busy machine slows them alike;
 * the minimum of each row is reported, and the ratios of the issue's
 * targets (8-bit: op <= 2x core; float: op <= 1.5x convert).
 * GEGL_PATH must reach the op and GEGL's own operations (when unset,
 * this build's plugin/ folder and GEGL's plug-in folder).
 */
#include "ht-config.h"

#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wconversion"
#include <gegl.h>
#pragma GCC diagnostic pop

#include "halftone.h"

/* The formats the op reads and writes for a layer's format (what
 * plugin/halftone-dither.c's plan picks for luminance mode). */
typedef struct
{
  const char *name;     /* the row's label                    */
  const char *layer;    /* the layer's (buffer's) format      */
  const char *op_in;    /* what the op reads                  */
  const char *op_out;   /* what the op writes                 */
} Case;

static const Case cases[] = {
  { "8-bit RGBA", "R'G'B'A u8", "R'G'B'A u8", "Y'A u8" },
  { "float RGBA", "RGBA float", "R'G'B'A float", "Y'A float" },
};
#define N_CASES ((int) (sizeof cases / sizeof cases[0]))

enum { ROW_OP, ROW_CONVERT, ROW_DITHER, ROW_CORE, ROW_FRESH, ROW_REUSED, N_ROWS };

/* A picture with detail everywhere: ramps and a pattern, in the layer's
 * format (converted by babl from R'G'B'A u8 values). */
static GeglBuffer *
make_layer (gint n, const Babl *format)
{
  GeglRectangle r   = { 0, 0, n, n };
  GeglBuffer   *b   = gegl_buffer_new (&r, format);
  guchar       *row = g_malloc ((gsize) n * 4);

  for (gint y = 0; y < n; y++)
    {
      GeglRectangle line = { 0, y, n, 1 };

      for (gint x = 0; x < n; x++)
        {
          row[x * 4 + 0] = (guchar) ((x * 255) / (n - 1));
          row[x * 4 + 1] = (guchar) ((y * 255) / (n - 1));
          row[x * 4 + 2] = (guchar) (((x ^ y) * 7) & 255);
          row[x * 4 + 3] = 255;
        }
      gegl_buffer_set (b, &line, 0, babl_format ("R'G'B'A u8"), row, GEGL_AUTO_ROWSTRIDE);
    }
  g_free (row);
  return b;
}

static double
now (void)
{
  return (double) g_get_monotonic_time () / 1e6;
}

/* source -> operation -> sink, timed from the start of processing. */
static double
time_graph (GeglBuffer *src, const char *operation)
{
  GeglNode   *g   = gegl_node_new ();
  GeglBuffer *out = NULL;
  GeglNode   *bs  = gegl_node_new_child (g, "operation", "gegl:buffer-source", "buffer", src, NULL);
  GeglNode   *op  = gegl_node_new_child (g, "operation", operation, NULL);
  GeglNode   *sk  = gegl_node_new_child (g, "operation", "gegl:buffer-sink", "buffer", &out, NULL);
  double      t0, t;

  gegl_node_link_many (bs, op, sk, NULL);
  t0 = now ();
  gegl_node_process (sk);
  t = now () - t0;
  if (!out || gegl_buffer_get_extent (out)->width != gegl_buffer_get_extent (src)->width)
    {
      fprintf (stderr, "ht-bench-op: %s gave no image\n", operation);
      exit (1);
    }
  g_clear_object (&out);
  g_object_unref (g);
  return t;
}

/* The conversions alone: the layer to the op's input format and the op's
 * output format into a new buffer of the layer's format, in bands of
 * 64 rows, the pixels themselves left as read. */
static double
time_convert (GeglBuffer *src, const Case *c)
{
  const GeglRectangle *e    = gegl_buffer_get_extent (src);
  const Babl          *fin  = babl_format (c->op_in);
  const Babl          *fout = babl_format (c->op_out);
  const gint           rows = 64;
  gsize                inb  = (gsize) babl_format_get_bytes_per_pixel (fin);
  gsize                outb = (gsize) babl_format_get_bytes_per_pixel (fout);
  guchar              *in   = g_malloc ((gsize) e->width * inb * (gsize) rows);
  guchar              *out  = g_malloc0 ((gsize) e->width * outb * (gsize) rows);
  GeglBuffer          *dst;
  double               t0, t;

  t0  = now ();
  dst = gegl_buffer_new (e, gegl_buffer_get_format (src));
  for (gint y = 0; y < e->height; y += rows)
    {
      GeglRectangle band = { e->x, e->y + y, e->width, MIN (rows, e->height - y) };

      gegl_buffer_get (src, &band, 1.0, fin, in, GEGL_AUTO_ROWSTRIDE, GEGL_ABYSS_NONE);
      gegl_buffer_set (dst, &band, 0, fout, out, GEGL_AUTO_ROWSTRIDE);
    }
  t = now () - t0;
  g_object_unref (dst);
  g_free (in);
  g_free (out);
  return t;
}

static double
time_core (ht_context *ctx, const ht_image *gray, ht_image *out, const ht_params *p)
{
  double    t0 = now ();
  ht_status s  = ht_run (ctx, gray, out, p);

  if (s != HT_OK)
    {
      fprintf (stderr, "ht-bench-op: core: %s\n", ht_context_message (ctx));
      exit (1);
    }
  return now () - t0;
}

/* A whole-image copy of `rgba` and ht_run on it with alpha kept, in
 * `in` and `out` if given, else in memory allocated (and freed) here. */
static double
time_whole (ht_context *ctx, const guchar *rgba, gint n, guchar *in, guchar *out, const ht_params *p)
{
  gsize     px = (gsize) n * (gsize) n;
  double    t0 = now ();
  guchar   *i  = in ? in : g_malloc (px * 4);
  guchar   *o  = out ? out : g_malloc (px * 2);
  ht_image  a  = { n, n, (size_t) n * 4, 4, HT_FORMAT_U8, i };
  ht_image  b  = { n, n, (size_t) n * 2, 2, HT_FORMAT_U8, o };
  ht_params q  = *p;
  double    t;

  memcpy (i, rgba, px * 4);
  q.alpha = true;
  if (ht_run (ctx, &a, &b, &q) != HT_OK)
    {
      fprintf (stderr, "ht-bench-op: core: %s\n", ht_context_message (ctx));
      exit (1);
    }
  if (!in)
    g_free (i);
  if (!out)
    g_free (o);
  t = now () - t0;
  return t;
}

int
main (int argc, char **argv)
{
  gint        n      = argc > 1 ? atoi (argv[1]) : 3000;
  gint        rounds = argc > 2 ? atoi (argv[2]) : 7;
  GeglBuffer *layer[N_CASES];
  double      best[N_CASES][N_ROWS];
  ht_context *ctx;
  ht_params   p;
  ht_image    gray, out;
  guchar     *rgba, *keep_in, *keep_out;

  if (n < 2 || rounds < 1)
    {
      fprintf (stderr, "usage: ht-bench-op [SIZE >= 2] [ROUNDS >= 1]\n");
      return 2;
    }
  if (!g_getenv ("GEGL_PATH"))
    g_setenv ("GEGL_PATH", HT_BENCH_OP_MODULE_DIR, TRUE);
  g_object_set (gegl_config (), "application-license", "GPL3", NULL);
  gegl_init (&argc, &argv);
  if (!gegl_has_operation ("halftone:dither"))
    {
      fprintf (stderr, "ht-bench-op: halftone:dither not found (set GEGL_PATH)\n");
      return 1;
    }

  for (gint c = 0; c < N_CASES; c++)
    {
      layer[c] = make_layer (n, babl_format (cases[c].layer));
      for (gint r = 0; r < N_ROWS; r++)
        best[c][r] = 1e30;
    }

  /* the core's input: the 8-bit layer's gray plane, as the op's luma */
  gray.width = gray.height = n;
  gray.channels = 1;
  gray.format   = HT_FORMAT_U8;
  gray.stride   = (size_t) n;
  gray.data     = g_malloc ((gsize) n * (gsize) n);
  gegl_buffer_get (layer[0], NULL, 1.0, babl_format ("Y' u8"), gray.data,
                   GEGL_AUTO_ROWSTRIDE, GEGL_ABYSS_NONE);
  rgba     = g_malloc ((gsize) n * (gsize) n * 4);
  keep_in  = g_malloc0 ((gsize) n * (gsize) n * 4);
  keep_out = g_malloc0 ((gsize) n * (gsize) n * 2);
  gegl_buffer_get (layer[0], NULL, 1.0, babl_format ("R'G'B'A u8"), rgba,
                   GEGL_AUTO_ROWSTRIDE, GEGL_ABYSS_NONE);
  out = gray;
  out.data = g_malloc ((gsize) n * (gsize) n);
  ctx = ht_context_new ();
  ht_params_init (&p);

  printf ("%dx%d, %d rounds, %d threads\n", n, n, rounds, (int) g_get_num_processors ());
  for (gint i = 0; i < rounds; i++)
    for (gint c = 0; c < N_CASES; c++)
      {
        double t[N_ROWS];

        t[ROW_OP]      = time_graph (layer[c], "halftone:dither");
        t[ROW_CORE]    = time_core (ctx, &gray, &out, &p);
        t[ROW_CONVERT] = time_convert (layer[c], &cases[c]);
        t[ROW_DITHER]  = time_graph (layer[c], "gegl:dither");
        /* the 8-bit layer's inner work, once a round */
        t[ROW_FRESH]   = c == 0 ? time_whole (ctx, rgba, n, NULL, NULL, &p) : 0.0;
        t[ROW_REUSED]  = c == 0 ? time_whole (ctx, rgba, n, keep_in, keep_out, &p) : 0.0;
        printf ("round %d %-10s op %7.1f  core %6.1f  convert %7.1f  gegl:dither %7.1f ms\n",
                i + 1, cases[c].name, t[ROW_OP] * 1e3, t[ROW_CORE] * 1e3,
                t[ROW_CONVERT] * 1e3, t[ROW_DITHER] * 1e3);
        for (gint r = 0; r < N_ROWS; r++)
          best[c][r] = MIN (best[c][r], t[r]);
      }

  printf ("\nminima (ms)\n| layer | op | core, gray plane | convert to op's formats and back | gegl:dither | op / core | op / convert |\n"
          "|---|---|---|---|---|---|---|\n");
  for (gint c = 0; c < N_CASES; c++)
    printf ("| %s (%s) | %.1f | %.1f | %.1f | %.1f | %.2f | %.2f |\n", cases[c].name, cases[c].layer,
            best[c][ROW_OP] * 1e3, best[c][ROW_CORE] * 1e3, best[c][ROW_CONVERT] * 1e3,
            best[c][ROW_DITHER] * 1e3, best[c][ROW_OP] / best[c][ROW_CORE],
            best[c][ROW_OP] / best[c][ROW_CONVERT]);
  printf ("whole-image copy + ht_run, 8-bit RGBA -> Y'A: fresh memory %.1f ms, reused memory %.1f ms\n",
          best[0][ROW_FRESH] * 1e3, best[0][ROW_REUSED] * 1e3);
  printf ("targets: 8-bit RGBA op/core <= 2 (%s); float RGBA op/convert <= 1.5 (%s)\n",
          best[0][ROW_OP] / best[0][ROW_CORE] <= 2.0 ? "met" : "not met",
          best[1][ROW_OP] / best[1][ROW_CONVERT] <= 1.5 ? "met" : "not met");

  ht_context_free (ctx);
  g_free (gray.data);
  g_free (rgba);
  g_free (keep_in);
  g_free (keep_out);
  g_free (out.data);
  for (gint c = 0; c < N_CASES; c++)
    g_object_unref (layer[c]);
  gegl_exit ();
  return 0;
}
