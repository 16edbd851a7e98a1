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
 *  - core on the op's input: ht_run alone on the layer as the op reads
 *    it (R'G'B'A u8, R'G'B'A float; read once before timing, alpha
 *    kept) into the op's core output (Y'A u8, Y'A u16), in memory
 *    reused across rounds: the core's share of the op, luma included.
 * Rounds alternate the rows, so that a busy machine slows them alike;
 * the median and the minimum of each row are reported, and the ratios
 * of the targets (8-bit: op <= 2x core; float: op <= 1.5x
 * convert) from the medians.
 * GEGL's tile cache is sized as GIMP sizes it (half the physical
 * memory) unless GEGL_CACHE_SIZE is set. GEGL_PATH must reach the op and
 * GEGL's own operations (when unset, this build's plugin/ folder and
 * GEGL's plug-in folder).
 */
#include "ht-config.h"

#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
  const char *core_out; /* what the core writes for the op    */
} Case;

static const Case cases[] = {
  { "8-bit RGBA", "R'G'B'A u8", "R'G'B'A u8", "Y'A u8", "Y'A u8" },
  { "float RGBA", "RGBA float", "R'G'B'A float", "Y'A float", "Y'A u16" },
};
#define N_CASES ((int) (sizeof cases / sizeof cases[0]))

enum { ROW_OP, ROW_CONVERT, ROW_DITHER, ROW_CORE, ROW_LAYER_CORE, N_ROWS };

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

/* The layer read once as the op reads it, and a reused output in the
 * core's format for the op, for "core on the op's input". */
typedef struct
{
  ht_image in, out;
} LayerCore;

static ht_format
sample_format (const Babl *f)
{
  const Babl *t = babl_format_get_type (f, 0);

  return t == babl_type ("u8") ? HT_FORMAT_U8 : t == babl_type ("u16") ? HT_FORMAT_U16 : HT_FORMAT_F32;
}

static void
layer_core_init (LayerCore *lc, GeglBuffer *layer, const Case *c, gint n)
{
  const Babl *fin  = babl_format (c->op_in);
  const Babl *fout = babl_format (c->core_out);
  gsize       inb  = (gsize) babl_format_get_bytes_per_pixel (fin);
  gsize       outb = (gsize) babl_format_get_bytes_per_pixel (fout);

  lc->in  = (ht_image) { n, n, (size_t) n * inb, babl_format_get_n_components (fin), sample_format (fin),
                         g_malloc ((gsize) n * (gsize) n * inb) };
  lc->out = (ht_image) { n, n, (size_t) n * outb, babl_format_get_n_components (fout), sample_format (fout),
                         g_malloc0 ((gsize) n * (gsize) n * outb) };
  gegl_buffer_get (layer, NULL, 1.0, fin, lc->in.data, GEGL_AUTO_ROWSTRIDE, GEGL_ABYSS_NONE);
}

static double
time_layer_core (ht_context *ctx, LayerCore *lc, const ht_params *p)
{
  ht_params q = *p;

  q.alpha = true;
  return time_core (ctx, &lc->in, &lc->out, &q);
}

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;

  return x < y ? -1 : x > y;
}

/* The median of `n` times (sorted in place). */
static double
median (double *t, gint n)
{
  qsort (t, (size_t) n, sizeof *t, cmp_double);
  return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

int
main (int argc, char **argv)
{
  gint        n      = argc > 1 ? atoi (argv[1]) : 3000;
  gint        rounds = argc > 2 ? atoi (argv[2]) : 7;
  GeglBuffer *layer[N_CASES];
  LayerCore   lc[N_CASES];
  double     *times[N_CASES][N_ROWS];
  double      med[N_CASES][N_ROWS], best[N_CASES][N_ROWS];
  ht_context *ctx;
  ht_params   p;
  ht_image    gray, out;

  if (n < 2 || rounds < 1)
    {
      fprintf (stderr, "usage: ht-bench-op [SIZE >= 2] [ROUNDS >= 1]\n");
      return 2;
    }
  if (!g_getenv ("GEGL_PATH"))
    g_setenv ("GEGL_PATH", HT_BENCH_OP_MODULE_DIR, TRUE);
  g_object_set (gegl_config (), "application-license", "GPL3", NULL);
  gegl_init (&argc, &argv);
  /* GEGL's tile cache as GIMP sizes it (half the physical memory; GEGL's
   * own default, 512 MiB, is less than this benchmark's buffers, and its
   * evictions would be timed with whatever runs); GEGL_CACHE_SIZE (MiB)
   * chooses another. */
  if (!g_getenv ("GEGL_CACHE_SIZE"))
    {
      long pages = sysconf (_SC_PHYS_PAGES), page = sysconf (_SC_PAGESIZE);

      if (pages > 0 && page > 0)
        g_object_set (gegl_config (), "tile-cache-size", (guint64) pages * (guint64) page / 2, NULL);
    }
  if (!gegl_has_operation ("halftone:dither"))
    {
      fprintf (stderr, "ht-bench-op: halftone:dither not found (set GEGL_PATH)\n");
      return 1;
    }

  for (gint c = 0; c < N_CASES; c++)
    {
      layer[c] = make_layer (n, babl_format (cases[c].layer));
      layer_core_init (&lc[c], layer[c], &cases[c], n);
      for (gint r = 0; r < N_ROWS; r++)
        times[c][r] = g_new0 (double, (gsize) rounds);
    }

  /* the core's input: the 8-bit layer's gray plane, as the op's luma */
  gray.width = gray.height = n;
  gray.channels = 1;
  gray.format   = HT_FORMAT_U8;
  gray.stride   = (size_t) n;
  gray.data     = g_malloc ((gsize) n * (gsize) n);
  gegl_buffer_get (layer[0], NULL, 1.0, babl_format ("Y' u8"), gray.data,
                   GEGL_AUTO_ROWSTRIDE, GEGL_ABYSS_NONE);
  out = gray;
  out.data = g_malloc ((gsize) n * (gsize) n);
  ctx = ht_context_new ();
  ht_params_init (&p);

  {
    guint64 cache;

    g_object_get (gegl_config (), "tile-cache-size", &cache, NULL);
    printf ("%dx%d, %d rounds, %d threads, GEGL tile cache %.0f MiB\n", n, n, rounds,
            (int) g_get_num_processors (), (double) cache / 1048576.0);
  }
  for (gint i = 0; i < rounds; i++)
    for (gint c = 0; c < N_CASES; c++)
      {
        double t[N_ROWS];

        t[ROW_OP]      = time_graph (layer[c], "halftone:dither");
        t[ROW_CORE]    = time_core (ctx, &gray, &out, &p);
        t[ROW_CONVERT] = time_convert (layer[c], &cases[c]);
        t[ROW_DITHER]  = time_graph (layer[c], "gegl:dither");
        t[ROW_LAYER_CORE] = time_layer_core (ctx, &lc[c], &p);
        printf ("round %d %-10s op %7.1f  core %6.1f  convert %7.1f  gegl:dither %7.1f  "
                "core on the op's input %6.1f ms\n",
                i + 1, cases[c].name, t[ROW_OP] * 1e3, t[ROW_CORE] * 1e3,
                t[ROW_CONVERT] * 1e3, t[ROW_DITHER] * 1e3, t[ROW_LAYER_CORE] * 1e3);
        for (gint r = 0; r < N_ROWS; r++)
          times[c][r][i] = t[r];
      }
  for (gint c = 0; c < N_CASES; c++)
    for (gint r = 0; r < N_ROWS; r++)
      {
        med[c][r]  = median (times[c][r], rounds);
        best[c][r] = times[c][r][0];
        g_free (times[c][r]);
      }

  printf ("\nmedians (minima) in ms\n"
          "| layer | op | core, gray plane | core on the op's input | convert to op's formats and back "
          "| gegl:dither | op / core | op / convert |\n|---|---|---|---|---|---|---|---|\n");
  for (gint c = 0; c < N_CASES; c++)
    printf ("| %s (%s) | %.1f (%.1f) | %.1f (%.1f) | %.1f (%.1f) | %.1f (%.1f) | %.1f (%.1f) | %.2f | %.2f |\n",
            cases[c].name, cases[c].layer, med[c][ROW_OP] * 1e3, best[c][ROW_OP] * 1e3,
            med[c][ROW_CORE] * 1e3, best[c][ROW_CORE] * 1e3, med[c][ROW_LAYER_CORE] * 1e3,
            best[c][ROW_LAYER_CORE] * 1e3, med[c][ROW_CONVERT] * 1e3, best[c][ROW_CONVERT] * 1e3,
            med[c][ROW_DITHER] * 1e3, best[c][ROW_DITHER] * 1e3, med[c][ROW_OP] / med[c][ROW_CORE],
            med[c][ROW_OP] / med[c][ROW_CONVERT]);
  printf ("targets (medians): 8-bit RGBA op/core <= 2 (%s); float RGBA op/convert <= 1.5 (%s)\n",
          med[0][ROW_OP] / med[0][ROW_CORE] <= 2.0 ? "met" : "not met",
          med[1][ROW_OP] / med[1][ROW_CONVERT] <= 1.5 ? "met" : "not met");

  ht_context_free (ctx);
  g_free (gray.data);
  g_free (out.data);
  for (gint c = 0; c < N_CASES; c++)
    {
      g_free (lc[c].in.data);
      g_free (lc[c].out.data);
      g_object_unref (layer[c]);
    }
  gegl_exit ();
  return 0;
}
