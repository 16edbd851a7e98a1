/* What the tests of the GEGL operation halftone:dither share: the check
 * macro, GEGL's start and end with a log handler that counts warnings, a
 * test picture, and running the op in a small graph.
 *
 * Copyright (C) 2026 the GEGL Halftone authors. GPL-3.0-or-later.
 */
#ifndef HT_OP_TEST_H
#define HT_OP_TEST_H

#include <glib.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wconversion"
#include <gegl.h>
#include <gegl-plugin.h>
#pragma GCC diagnostic pop

#define OP "halftone:dither"

static int failures;
static int checks;

#define CHECK(cond, ...)                                   \
  do {                                                     \
    checks++;                                              \
    if (!(cond)) {                                         \
      failures++;                                          \
      fprintf (stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
      fprintf (stderr, __VA_ARGS__);                       \
      fprintf (stderr, "\n");                              \
    }                                                      \
  } while (0)

static int warnings; /* warnings seen by the log handler since reset */
static GString *last_warning;
static GString *last_warning_domain;
static gint contexts_made;  /* the op's debug lines about its kept core context */
static gint contexts_freed;

static void
log_handler (const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer user)
{
  (void) user;
  if (level & (G_LOG_LEVEL_WARNING | G_LOG_LEVEL_CRITICAL))
    {
      warnings++;
      g_string_assign (last_warning, message);
      g_string_assign (last_warning_domain, domain ? domain : "(null)");
    }
  if (strstr (message, "halftone:dither: made a core context"))
    g_atomic_int_inc (&contexts_made);
  if (strstr (message, "halftone:dither: freed the idle core context"))
    g_atomic_int_inc (&contexts_freed);
  fprintf (stderr, "  (log %s: %s)\n", domain ? domain : "-", message);
}

/* Starts GEGL for a test of the op, with log_handler. */
static G_GNUC_UNUSED void
op_test_start (gint *argc, gchar ***argv)
{
  last_warning = g_string_new ("");
  last_warning_domain = g_string_new ("");
  /* The op is GPL-3.0-or-later; GEGL only lists such ops to programs
   * that accept the GPL3 (gegl itself and GIMP do). */
  g_object_set (gegl_config (), "application-license", "GPL3", NULL);
  gegl_init (argc, argv);
  g_log_set_default_handler (log_handler, NULL);
}

/* Whether the op is registered; says where it was looked for if not. */
static G_GNUC_UNUSED gboolean
op_registered (void)
{
  CHECK (gegl_has_operation (OP), "%s is not registered (GEGL_PATH=%s)", OP, g_getenv ("GEGL_PATH"));
  return gegl_has_operation (OP);
}

/* Prints the count of checks, ends GEGL; the exit status. */
static G_GNUC_UNUSED int
op_test_end (void)
{
  printf ("%d checks, %d failed\n", checks, failures);
  g_string_free (last_warning, TRUE);
  g_string_free (last_warning_domain, TRUE);
  gegl_exit ();
  return failures ? 1 : 0;
}

/* A test program's main: GEGL started, `tests` run one after another
 * where the op is registered, the exit status. */
static G_GNUC_UNUSED int
op_test_main (gint argc, gchar **argv, void (*const *tests) (void), gsize n)
{
  op_test_start (&argc, &argv);
  if (op_registered ())
    for (gsize i = 0; i < n; i++)
      tests[i] ();
  return op_test_end ();
}

/* The last warning: one at least since `warnings` was reset, in the op's
 * log domain, naming `needle` and `says` (what the op did instead). */
static G_GNUC_UNUSED void
check_warning_says (const gchar *needle, const gchar *says, const gchar *what)
{
  CHECK (warnings >= 1, "%s: no warning", what);
  if (warnings < 1)
    return;
  CHECK (strstr (last_warning->str, needle) != NULL && strstr (last_warning->str, says),
         "%s: the warning does not name \"%s\" and \"%s\": %s", what, needle, says, last_warning->str);
  CHECK (g_strcmp0 (last_warning_domain->str, "gegl-halftone") == 0, "%s: warning in log domain %s", what,
         last_warning_domain->str);
}

/* A deterministic test picture: gradients, a disc and noise, so that
 * every filter produces a busy, different pattern. 8-bit R'G'B'A. */
static G_GNUC_UNUSED guchar *
make_rgba8 (gint w, gint h)
{
  guchar  *p = g_malloc ((gsize) w * (gsize) h * 4);
  guint32  s = 12345;

  for (gint y = 0; y < h; y++)
    for (gint x = 0; x < w; x++)
      {
        guchar *q = p + ((gsize) y * (gsize) w + (gsize) x) * 4;
        gint    dx = x - w / 2, dy = y - h / 2;

        s = s * 1103515245u + 12345u;
        q[0] = (guchar) ((x * 255) / (w - 1));
        q[1] = (guchar) ((y * 255) / (h - 1));
        q[2] = (guchar) (dx * dx + dy * dy < (w * w) / 16 ? 200 : (s >> 16) & 0xff);
        q[3] = (guchar) (((x + y) * 255) / (w + h - 2));
      }
  return p;
}

static G_GNUC_UNUSED GeglBuffer *
buffer_from_rgba8 (const guchar *rgba, gint w, gint h, const gchar *format)
{
  GeglRectangle r = { 0, 0, w, h };
  GeglBuffer   *b = gegl_buffer_new (&r, babl_format (format));

  gegl_buffer_set (b, &r, 0, babl_format ("R'G'B'A u8"), rgba, GEGL_AUTO_ROWSTRIDE);
  return b;
}

/* Runs the op on `in` with the given properties; returns the output,
 * and in `announced` (may be NULL) the output format that its prepare()
 * announced. */
static G_GNUC_UNUSED GeglBuffer *
run_op_valist (GeglBuffer *in, const Babl **announced, const gchar *first_property, va_list ap)
{
  GeglNode   *g    = gegl_node_new ();
  GeglBuffer *out  = NULL;
  GeglNode   *src  = gegl_node_new_child (g, "operation", "gegl:buffer-source",
                                          "buffer", in, NULL);
  GeglNode   *op   = gegl_node_new_child (g, "operation", OP, NULL);
  GeglNode   *sink = gegl_node_new_child (g, "operation", "gegl:buffer-sink",
                                          "buffer", &out, NULL);

  if (first_property)
    gegl_node_set_valist (op, first_property, ap);
  gegl_node_link_many (src, op, sink, NULL);
  gegl_node_process (sink);
  if (announced)
    *announced = gegl_operation_get_format (gegl_node_get_gegl_operation (op), "output");
  g_object_unref (g);
  return out;
}

/* run_op_valist with the properties as arguments, NULL-terminated. */
static G_GNUC_UNUSED GeglBuffer *
run_op_announced (GeglBuffer *in, const Babl **announced, const gchar *first_property, ...)
{
  GeglBuffer *out;
  va_list     ap;

  va_start (ap, first_property);
  out = run_op_valist (in, announced, first_property, ap);
  va_end (ap);
  return out;
}

#define run_op(in, ...) run_op_announced ((in), NULL, __VA_ARGS__)

/* Blits `rect` of the op's output on `in` (with the given properties)
 * in `format` (NULL: the input's), and returns the output format the op
 * announced in `announced` (may be NULL). Unlike a buffer-sink, which has
 * GEGL copy the whole output into the node's cache, this reads only
 * `rect`. */
static G_GNUC_UNUSED guchar *
blit_op_valist (GeglBuffer *in, const GeglRectangle *rect, const Babl *format, const Babl **announced,
                const gchar *first_property, va_list ap)
{
  const Babl *f   = format ? format : gegl_buffer_get_format (in);
  guchar     *buf = g_malloc ((gsize) rect->width * (gsize) rect->height *
                              (gsize) babl_format_get_bytes_per_pixel (f));
  GeglNode   *g   = gegl_node_new ();
  GeglNode   *src = gegl_node_new_child (g, "operation", "gegl:buffer-source", "buffer", in, NULL);
  GeglNode   *op  = gegl_node_new_child (g, "operation", OP, NULL);

  if (first_property)
    gegl_node_set_valist (op, first_property, ap);
  gegl_node_link (src, op);
  gegl_node_blit (op, 1.0, rect, f, buf, GEGL_AUTO_ROWSTRIDE, GEGL_BLIT_DEFAULT);
  if (announced)
    *announced = gegl_operation_get_format (gegl_node_get_gegl_operation (op), "output");
  g_object_unref (g);
  return buf;
}

/* How many rows of `roi` of the op's output on `in`, blitted alone as
 * Y'A u8 (with the given properties), differ from `all`: the whole
 * result as Y'A u8, rows of `width` pixels. */
static G_GNUC_UNUSED gint
part_rows_differ (GeglBuffer *in, const GeglRectangle *roi, const guchar *all, gint width,
                  const gchar *first_property, ...)
{
  guchar  *part;
  gint     diff = 0;
  va_list  ap;

  va_start (ap, first_property);
  part = blit_op_valist (in, roi, babl_format ("Y'A u8"), NULL, first_property, ap);
  va_end (ap);
  for (gint y = 0; y < roi->height; y++)
    diff += memcmp (part + (gsize) y * (gsize) roi->width * 2,
                    all + ((gsize) (y + roi->y) * (gsize) width + (gsize) roi->x) * 2,
                    (gsize) roi->width * 2) != 0;
  g_free (part);
  return diff;
}

static G_GNUC_UNUSED gpointer
get_pixels (GeglBuffer *b, const gchar *format)
{
  const GeglRectangle *r   = gegl_buffer_get_extent (b);
  const Babl          *f   = babl_format (format);
  gpointer             mem = g_malloc ((gsize) r->width * (gsize) r->height *
                                       (gsize) babl_format_get_bytes_per_pixel (f));

  gegl_buffer_get (b, r, 1.0, f, mem, GEGL_AUTO_ROWSTRIDE, GEGL_ABYSS_NONE);
  return mem;
}

#endif
