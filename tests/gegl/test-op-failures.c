/* Tests of the GEGL operation halftone:dither where something fails:
 * every failure hands on the input itself with a warning that says why
 * (bad coefficients, NaN pixels, an image larger than the library takes,
 * out of memory), while values a run does not use do not stop it;
 * backend cuda falls back to the CPU's bits with a warning where it
 * cannot run; and what a program embedding the op reads and sets on it
 * (the failure, the fall-back's note, cancel).
 *
 * The module is found through GEGL_PATH (tests/gegl/meson.build).
 *
 * Copyright (C) 2026 the GEGL Halftone authors. GPL-3.0-or-later.
 */
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "halftone.h"
#include "op-test.h"

/* `out` is `in`: the same format, and the same bytes over `check` (the
 * whole extent where NULL). */
static gboolean
same_as_input (GeglBuffer *in, GeglBuffer *out, const GeglRectangle *check, const gchar *what)
{
  const Babl          *f = gegl_buffer_get_format (in);
  const GeglRectangle *r = check ? check : gegl_buffer_get_extent (in);
  gsize                bytes = (gsize) r->width * (gsize) r->height * (gsize) babl_format_get_bytes_per_pixel (f);
  guchar              *a, *b;
  gboolean             same;

  CHECK (out != NULL, "%s: no output", what);
  if (!out)
    return FALSE;
  CHECK (gegl_buffer_get_format (out) == f, "%s: output format %s, the input's %s", what,
         babl_get_name (gegl_buffer_get_format (out)), babl_get_name (f));
  CHECK (gegl_rectangle_equal (gegl_buffer_get_extent (out), gegl_buffer_get_extent (in)),
         "%s: output extent differs from the input's", what);
  a = g_malloc (bytes);
  b = g_malloc (bytes);
  gegl_buffer_get (in, r, 1.0, f, a, GEGL_AUTO_ROWSTRIDE, GEGL_ABYSS_NONE);
  gegl_buffer_get (out, r, 1.0, f, b, GEGL_AUTO_ROWSTRIDE, GEGL_ABYSS_NONE);
  same = memcmp (a, b, bytes) == 0;
  CHECK (same, "%s: output pixels differ from the input's", what);
  g_free (a);
  g_free (b);
  return same && gegl_buffer_get_format (out) == f;
}

/* The warning of a failure: the input passed through. */
static void
check_warning (const gchar *needle, const gchar *what)
{
  check_warning_says (needle, "passing the input through", what);
}

/* The warning of backend cuda's fall-back to the CPU. */
static void
check_fallback_warning (const gchar *needle, const gchar *what)
{
  check_warning_says (needle, "computed on the CPU, same result", what);
}

/* `out` holds the same pixels as `want` (in `format`). */
static void
check_same_pixels (GeglBuffer *want, GeglBuffer *out, const gchar *format, const gchar *what)
{
  const GeglRectangle *r = gegl_buffer_get_extent (want);
  gsize   bytes = (gsize) r->width * (gsize) r->height * (gsize) babl_format_get_bytes_per_pixel (babl_format (format));
  guchar *a = g_malloc (bytes), *b = g_malloc (bytes);

  CHECK (out != NULL, "%s: no output", what);
  if (out)
    {
      gegl_buffer_get (want, r, 1.0, babl_format (format), a, GEGL_AUTO_ROWSTRIDE, GEGL_ABYSS_NONE);
      gegl_buffer_get (out, r, 1.0, babl_format (format), b, GEGL_AUTO_ROWSTRIDE, GEGL_ABYSS_NONE);
      CHECK (memcmp (a, b, bytes) == 0, "%s: not the CPU's halftone", what);
    }
  g_free (a);
  g_free (b);
}

static const gchar *const failure_formats[] = {
  "R'G'B'A u8", "Y' u8", "R'G'B' float", "Y'A float", "R'G'B'A u16",
};

static gboolean
is_float (const gchar *format)
{
  return strstr (format, "float") != NULL;
}

/* Frees the op's idle core context, so that the next calls make their
 * own and see the environment of the moment (HT_CUDA_MODULE). */
static void
drop_kept_context (GeglBuffer *in)
{
  g_setenv ("HT_GEGL_KEEP_SECONDS", "0", TRUE);
  g_object_unref (run_op (in, "backend", 1, NULL));
}

/* Every failure hands on the input itself, in its own format (colour and
 * gray, 8-bit, 16-bit and float), with a warning that says why; where the
 * failure is known before the run, prepare() announces that format too. */
static void
test_failures_pass_input_through (void)
{
  const gint w = 67, h = 41;
  guchar    *rgba = make_rgba8 (w, h);

  for (gsize k = 0; k < G_N_ELEMENTS (failure_formats); k++)
    {
      const gchar *fmt = failure_formats[k];
      GeglBuffer  *in  = buffer_from_rgba8 (rgba, w, h, fmt);
      const Babl  *announced = NULL;
      GeglBuffer  *out;
      gchar        what[128];

      /* a bad custom string */
      g_snprintf (what, sizeof what, "%s, bad coefficients", fmt);
      warnings = 0;
      out = run_op_announced (in, &announced, "algorithm", 8, "coefficients", "- * 7; 3 x 1", NULL);
      same_as_input (in, out, NULL, what);
      check_warning ("coefficients", what);
      CHECK (announced == babl_format (fmt), "%s: prepare announced %s", what, babl_get_name (announced));
      g_clear_object (&out);

      /* settings backend cuda refuses (ht_check) but the CPU runs: the
       * CPU's halftone, with a warning that says so (an image editor has
       * no use for a refusal; the CLI refuses) */
      g_snprintf (what, sizeof what, "%s, serpentine on backend cuda", fmt);
      {
        GeglBuffer *cpu = run_op (in, "serpentine", TRUE, "backend", 1, "color-mode", 1, NULL);

        warnings = 0;
        out = run_op_announced (in, &announced, "serpentine", TRUE, "backend", 2, "color-mode", 1, NULL);
        check_same_pixels (cpu, out, fmt, what);
        check_fallback_warning ("serpentine", what);
        CHECK (announced == babl_format (fmt), "%s: prepare announced %s", what, babl_get_name (announced));
        g_clear_object (&out);

        /* backend cuda without a usable GPU: a module that is not there */
        g_snprintf (what, sizeof what, "%s, backend cuda without a GPU", fmt);
        drop_kept_context (in);
        g_setenv ("HT_CUDA_MODULE", "/nonexistent/libhalftone-cuda.so", TRUE);
        g_object_unref (cpu);
        cpu = run_op (in, "backend", 1, NULL);
        warnings = 0;
        out = run_op (in, "backend", 2, NULL);
        check_same_pixels (cpu, out, fmt, what);
        /* in the user's words, once a process: the module's path is for
         * the log; a missing GPU stays missing at every repeat */
        {
          static gboolean told = FALSE;

          if (!told)
            check_fallback_warning ("no NVIDIA GPU found", what);
          else
            CHECK (warnings == 0, "%s: the missing GPU is told again: %s", what, last_warning->str);
          CHECK (warnings == 0 || strstr (last_warning->str, "/nonexistent") == NULL,
                 "%s: the user is shown the module's path: %s", what, last_warning->str);
          told = TRUE;
        }
        g_clear_object (&out);
        g_object_unref (cpu);
        g_unsetenv ("HT_CUDA_MODULE");
        g_unsetenv ("HT_GEGL_KEEP_SECONDS");
      }

      /* the library refuses the pixels: NaN */
      if (is_float (fmt))
        {
          const Babl   *f = babl_format (fmt);
          gfloat        px[4] = { 0.5f, 0.5f, 0.5f, 0.5f };
          GeglRectangle one = { 5, 3, 1, 1 };

          px[0] = NAN;
          gegl_buffer_set (in, &one, 0, f, px, GEGL_AUTO_ROWSTRIDE);
          g_snprintf (what, sizeof what, "%s, a NaN pixel", fmt);
          warnings = 0;
          for (gint color = 0; color <= 1; color++)
            {
              out = run_op (in, "color-mode", color, "backend", 1, NULL);
              same_as_input (in, out, NULL, what);
              check_warning ("NaN", what);
              g_clear_object (&out);
            }
        }
      g_object_unref (in);
    }
  g_free (rgba);
}

/* Blits `rect` of the op's output on `in` in the input's format, and
 * returns the output format the op announced (blit_op_valist). */
static guchar *
blit_op (GeglBuffer *in, const GeglRectangle *rect, const Babl **announced, const gchar *first_property, ...)
{
  guchar  *buf;
  va_list  ap;

  va_start (ap, first_property);
  buf = blit_op_valist (in, rect, NULL, announced, first_property, ap);
  va_end (ap);
  return buf;
}

/* Larger than the library takes, and out of memory: inputs of a side
 * beyond HT_MAX_SIDE, and of more than 10^9 pixels under an
 * address-space limit that leaves no room for them, run serpentine (a
 * scan that needs the whole image at once: in bands of rows, the rows
 * above a corner need little memory). The buffers are sparse and only a
 * corner is read back, so neither costs the memory it stands for. */
static void
test_failures_large (void)
{
  static const gchar *const fmts[] = { "R'G'B'A u8", "Y' u8", "R'G'B' float", "Y'A float" };
  const GeglRectangle corner = { 0, 0, 64, 16 };

  for (gsize k = 0; k < G_N_ELEMENTS (fmts); k++)
    {
      const Babl   *f = babl_format (fmts[k]);
      const gsize   bytes = (gsize) corner.width * (gsize) corner.height * (gsize) babl_format_get_bytes_per_pixel (f);
      GeglRectangle wide = { 0, 0, (gint) HT_MAX_SIDE + 1, corner.height };
      GeglRectangle big = { 0, 0, 40000, 30000 };
      GeglBuffer   *in = gegl_buffer_new (&wide, f);
      guchar       *rgba = make_rgba8 (corner.width, corner.height);
      guchar       *want = g_malloc (bytes), *got;
      const Babl   *announced = NULL;
      gchar         what[128];
      struct rlimit old, lim;
      FILE         *statm;
      unsigned long pages = 0;

      gegl_buffer_set (in, &corner, 0, babl_format ("R'G'B'A u8"), rgba, GEGL_AUTO_ROWSTRIDE);
      gegl_buffer_get (in, &corner, 1.0, f, want, GEGL_AUTO_ROWSTRIDE, GEGL_ABYSS_NONE);
      g_snprintf (what, sizeof what, "%s, %d pixels wide", fmts[k], wide.width);
      warnings = 0;
      got = blit_op (in, &corner, &announced, NULL);
      CHECK (memcmp (got, want, bytes) == 0, "%s: output pixels differ from the input's", what);
      check_warning ("larger than the library takes", what);
      CHECK (announced == f, "%s: the op announced %s", what, babl_get_name (announced));
      g_free (got);
      g_object_unref (in);

      /* out of memory: room for what GEGL needs, not for the image */
      in = gegl_buffer_new (&big, f);
      gegl_buffer_set (in, &corner, 0, babl_format ("R'G'B'A u8"), rgba, GEGL_AUTO_ROWSTRIDE);
      gegl_buffer_get (in, &corner, 1.0, f, want, GEGL_AUTO_ROWSTRIDE, GEGL_ABYSS_NONE);
      statm = fopen ("/proc/self/statm", "r");
      if (!statm || fscanf (statm, "%lu", &pages) != 1 || getrlimit (RLIMIT_AS, &old) != 0)
        {
          printf ("out of memory: not tested (no /proc/self/statm or RLIMIT_AS)\n");
          if (statm)
            fclose (statm);
          g_object_unref (in);
          g_free (rgba);
          g_free (want);
          continue;
        }
      fclose (statm);
      lim = old;
      lim.rlim_cur = (rlim_t) pages * (rlim_t) sysconf (_SC_PAGESIZE) + ((rlim_t) 512 << 20);
      if (old.rlim_cur != RLIM_INFINITY && lim.rlim_cur > old.rlim_cur)
        lim.rlim_cur = old.rlim_cur;
      g_snprintf (what, sizeof what, "%s, out of memory for %dx%d", fmts[k], big.width, big.height);
      warnings = 0;
      CHECK (setrlimit (RLIMIT_AS, &lim) == 0, "%s: setrlimit", what);
      got = blit_op (in, &corner, &announced, "backend", 1, "serpentine", TRUE, NULL);
      CHECK (setrlimit (RLIMIT_AS, &old) == 0, "%s: setrlimit back", what);
      CHECK (memcmp (got, want, bytes) == 0, "%s: output pixels differ from the input's", what);
      check_warning ("out of memory", what);
      CHECK (announced == f, "%s: the op announced %s", what, babl_get_name (announced));
      g_free (got);
      g_object_unref (in);
      g_free (rgba);
      g_free (want);
    }
}

/* backend=cuda: the same bits as the CPU, computed on the GPU where one
 * is usable; where not, on the CPU with a warning naming the problem (the
 * module itself loads anywhere). */
static void
test_backend_cuda (void)
{
  const gint  w = 67, h = 41;
  guchar     *rgba = make_rgba8 (w, h);
  GeglBuffer *in = buffer_from_rgba8 (rgba, w, h, "R'G'B'A u8");
  GeglBuffer *cpu = run_op (in, "backend", 1, NULL);
  GeglBuffer *gpu;
  guchar     *a, *b;

  warnings = 0;
  gpu = run_op (in, "backend", 2, NULL);
  a = get_pixels (cpu, "Y'A u8");
  b = get_pixels (gpu, "Y'A u8");
  CHECK (memcmp (a, b, (gsize) w * (gsize) h * 2) == 0, "cuda backend differs from the cpu backend");
  if (warnings > 0)
    CHECK ((strstr (last_warning->str, "cuda") != NULL || strstr (last_warning->str, "GPU") != NULL) &&
           strstr (last_warning->str, "computed on the CPU, same result") != NULL,
           "backend cuda fell back without saying why: %s", last_warning->str);
  printf ("backend cuda: %s\n", warnings ? last_warning->str : "ran, identical to cpu");
  g_free (a); g_free (b);
  g_object_unref (cpu); g_object_unref (gpu); g_object_unref (in);
  g_free (rgba);
}

/* Runs the op on `in` (properties as run_op) with `cancel` as its
 * "halftone-cancel" flag; gives the output, and the run's
 * "halftone-failed" and "halftone-notice" (g_free them). */
static GeglBuffer *
run_op_embedded (GeglBuffer *in, gint *cancel, gchar **failed, gchar **notice, const gchar *first_property, ...)
{
  GeglNode   *g    = gegl_node_new ();
  GeglBuffer *out  = NULL;
  GeglNode   *src  = gegl_node_new_child (g, "operation", "gegl:buffer-source", "buffer", in, NULL);
  GeglNode   *op   = gegl_node_new_child (g, "operation", OP, NULL);
  GeglNode   *sink = gegl_node_new_child (g, "operation", "gegl:buffer-sink", "buffer", &out, NULL);
  GObject    *obj  = G_OBJECT (gegl_node_get_gegl_operation (op));
  va_list     ap;

  va_start (ap, first_property);
  gegl_node_set_valist (op, first_property, ap);
  va_end (ap);
  if (cancel)
    g_object_set_data (obj, "halftone-cancel", cancel);
  gegl_node_link_many (src, op, sink, NULL);
  gegl_node_process (sink);
  *failed = g_strdup (g_object_get_data (obj, "halftone-failed"));
  *notice = g_strdup (g_object_get_data (obj, "halftone-notice"));
  g_object_unref (g);
  return out;
}

/* What a program running the op in its own process (the GIMP 2.10
 * plug-in) reads and sets on the operation object: the reason of a
 * pass-through, the note of a fall-back to the CPU, and a cancel, which
 * passes the input on without a warning. */
static void
test_embedding (void)
{
  const gint  w = 300, h = 200;
  guchar     *rgba = make_rgba8 (w, h);
  GeglBuffer *in = buffer_from_rgba8 (rgba, w, h, "R'G'B'A u8");
  GeglBuffer *out;
  gchar      *failed, *notice;
  gint        cancel = 1;

  out = run_op_embedded (in, NULL, &failed, &notice, "backend", 1, NULL);
  CHECK (failed == NULL && notice == NULL, "a good run: failed %s, notice %s", failed, notice);
  g_clear_object (&out); g_free (failed); g_free (notice);

  out = run_op_embedded (in, NULL, &failed, &notice, "algorithm", 8, "coefficients", "- * 7; 3 x 1", NULL);
  CHECK (failed && strstr (failed, "position") && strstr (failed, "coefficients"),
         "bad coefficients: failed is %s", failed);
  same_as_input (in, out, NULL, "embedded, bad coefficients");
  g_clear_object (&out); g_free (failed); g_free (notice);

  out = run_op_embedded (in, NULL, &failed, &notice, "backend", 2, "serpentine", TRUE, NULL);
  CHECK (failed == NULL && notice && strstr (notice, "computed on the CPU"),
         "serpentine on cuda: failed %s, notice %s", failed, notice);
  g_clear_object (&out); g_free (failed); g_free (notice);

  warnings = 0;
  out = run_op_embedded (in, &cancel, &failed, &notice, "backend", 1, NULL);
  CHECK (g_strcmp0 (failed, "cancelled") == 0, "cancelled run: failed is %s", failed);
  CHECK (warnings == 0, "a cancel asked for warned: %s", last_warning->str);
  same_as_input (in, out, NULL, "embedded, cancelled");
  g_clear_object (&out); g_free (failed); g_free (notice);

  g_object_unref (in);
  g_free (rgba);
}

/* A value the library refuses fails the run where the run uses it, and
 * is passed over (the default kept) where a property the run does not
 * use holds it: GIMP hides that property, and a value left there from
 * another algorithm must not stop this one. */
static void
test_unused_values (void)
{
  const gint  w = 37, h = 23;
  guchar     *rgba = make_rgba8 (w, h);
  GeglBuffer *in = buffer_from_rgba8 (rgba, w, h, "R'G'B'A u8");
  GeglBuffer *fs = run_op (in, NULL);
  GeglBuffer *out;

  warnings = 0;
  out = run_op (in, "algorithm", HT_ALGORITHM_BAYER, "mask-size", 3, NULL);
  same_as_input (in, out, NULL, "bayer, mask-size 3");
  check_warning ("mask-size", "bayer, mask-size 3");
  g_clear_object (&out);

  warnings = 0;
  out = run_op (in, "mask-size", 3, "coefficients", "- * 7; 3 x 1", NULL);
  check_same_pixels (fs, out, "R'G'B'A u8", "floyd-steinberg, mask-size 3 and bad coefficients");
  CHECK (warnings == 0, "floyd-steinberg with unused bad values: %d warnings (%s)", warnings, last_warning->str);
  g_clear_object (&out);

  g_object_unref (fs);
  g_object_unref (in);
  g_free (rgba);
}

int
main (int argc, char **argv)
{
  static void (*const tests[]) (void) = {
    test_failures_pass_input_through, test_failures_large, test_backend_cuda, test_embedding, test_unused_values,
  };

  return op_test_main (argc, argv, tests, G_N_ELEMENTS (tests));
}
