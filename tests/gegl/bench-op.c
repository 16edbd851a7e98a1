/* Times the GEGL operation halftone:dither as GIMP and gegl graphs use
 * it: buffer-source -> halftone:dither -> buffer-sink, so the babl
 * conversions and buffer copies around the core are included.
 *
 *   bench-gegl-op [FILE | WIDTHxHEIGHT] [RUNS] [property=value ...]
 *
 * Default: data/sample.png resized is not needed; a WIDTHxHEIGHT argument
 * makes a synthetic R'G'B' u8 picture. Prints every run and min/median.
 */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wconversion"
#include <gegl.h>
#pragma GCC diagnostic pop

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

static GeglBuffer *
synthetic (gint w, gint h)
{
  GeglRectangle r = { 0, 0, w, h };
  GeglBuffer   *b = gegl_buffer_new (&r, babl_format ("R'G'B' u8"));
  guchar       *row = g_malloc ((gsize) w * 3);

  for (gint y = 0; y < h; y++)
    {
      GeglRectangle line = { 0, y, w, 1 };
      for (gint x = 0; x < w; x++)
        {
          row[x * 3 + 0] = (guchar) ((x * 255) / (w > 1 ? w - 1 : 1));
          row[x * 3 + 1] = (guchar) ((y * 255) / (h > 1 ? h - 1 : 1));
          row[x * 3 + 2] = (guchar) (((x ^ y) * 7) & 255);
        }
      gegl_buffer_set (b, &line, 0, babl_format ("R'G'B' u8"), row, GEGL_AUTO_ROWSTRIDE);
    }
  g_free (row);
  return b;
}

int
main (int argc, char **argv)
{
  const gchar *what = argc > 1 ? argv[1] : "4000x2660";
  gint         runs = argc > 2 ? atoi (argv[2]) : 5;
  gint         w = 0, h = 0;
  GeglBuffer  *src = NULL;
  double      *t;

  g_object_set (gegl_config (), "application-license", "GPL3", NULL);
  gegl_init (&argc, &argv);
  if (!gegl_has_operation ("halftone:dither"))
    {
      fprintf (stderr, "bench-gegl-op: halftone:dither not found (set GEGL_PATH)\n");
      return 1;
    }
  if (runs < 1)
    runs = 1;

  if (sscanf (what, "%dx%d", &w, &h) == 2 && w > 0 && h > 0)
    src = synthetic (w, h);
  else
    {
      GeglNode *g = gegl_node_new ();
      GeglNode *l = gegl_node_new_child (g, "operation", "gegl:load", "path", what, NULL);
      GeglNode *s = gegl_node_new_child (g, "operation", "gegl:buffer-sink", "buffer", &src, NULL);
      gegl_node_link (l, s);
      gegl_node_process (s);
      g_object_unref (g);
      if (!src || gegl_buffer_get_extent (src)->width <= 0)
        {
          fprintf (stderr, "bench-gegl-op: cannot load %s\n", what);
          return 1;
        }
      w = gegl_buffer_get_extent (src)->width;
      h = gegl_buffer_get_extent (src)->height;
    }

  t = g_new (double, (gsize) runs);
  for (gint i = 0; i < runs; i++)
    {
      GeglNode   *g   = gegl_node_new ();
      GeglBuffer *out = NULL;
      GeglNode   *bs  = gegl_node_new_child (g, "operation", "gegl:buffer-source", "buffer", src, NULL);
      GeglNode   *op  = gegl_node_new_child (g, "operation", "halftone:dither", NULL);
      GeglNode   *sk  = gegl_node_new_child (g, "operation", "gegl:buffer-sink", "buffer", &out, NULL);
      gint64      t0;

      for (gint a = 3; a < argc; a++)
        {
          gchar **kv = g_strsplit (argv[a], "=", 2);
          if (kv[0] && kv[1])
            {
              GParamSpec *ps = gegl_node_find_property (op, kv[0]);
              GValue      v = G_VALUE_INIT, sv = G_VALUE_INIT;

              if (ps)
                {
                  g_value_init (&v, ps->value_type);
                  if (G_IS_PARAM_SPEC_ENUM (ps))
                    {
                      GEnumValue *ev = g_enum_get_value_by_nick (G_PARAM_SPEC_ENUM (ps)->enum_class, kv[1]);
                      g_value_set_enum (&v, ev ? ev->value : 0);
                    }
                  else
                    {
                      g_value_init (&sv, G_TYPE_STRING);
                      g_value_set_string (&sv, kv[1]);
                      if (ps->value_type == G_TYPE_INT)
                        g_value_set_int (&v, atoi (kv[1]));
                      else if (ps->value_type == G_TYPE_BOOLEAN)
                        g_value_set_boolean (&v, strcmp (kv[1], "true") == 0);
                      else
                        g_value_transform (&sv, &v);
                      g_value_unset (&sv);
                    }
                  gegl_node_set_property (op, kv[0], &v);
                  g_value_unset (&v);
                }
              else
                fprintf (stderr, "bench-gegl-op: no property %s\n", kv[0]);
            }
          g_strfreev (kv);
        }
      gegl_node_link_many (bs, op, sk, NULL);
      t0 = g_get_monotonic_time ();
      gegl_node_process (sk);
      t[i] = (double) (g_get_monotonic_time () - t0) / 1e6;
      printf ("run %d: %.3f s\n", i + 1, t[i]);
      g_object_unref (out);
      g_object_unref (g);
    }
  qsort (t, (size_t) runs, sizeof *t, cmp_double);
  printf ("%dx%d, %d runs: min %.3f s, median %.3f s (%.1f Mpixel/s at the median)\n",
          w, h, runs, t[0], t[runs / 2], (double) w * h / t[runs / 2] / 1e6);
  g_free (t);
  g_object_unref (src);
  gegl_exit ();
  return 0;
}
