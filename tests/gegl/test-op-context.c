/* Tests of the GEGL operation halftone:dither's kept core context:
 * calls one after another share one, calls at the same time each get
 * their own and the same pixels, and an idle one is freed after
 * HT_GEGL_KEEP_SECONDS where a main loop runs (0 keeps none).
 *
 * The module is found through GEGL_PATH (tests/gegl/meson.build).
 *
 * Copyright (C) 2026 the GEGL Halftone authors. GPL-3.0-or-later.
 */
#include <glib.h>
#include <stdio.h>
#include <string.h>

#include "op-test.h"

static gboolean
same_buffers (GeglBuffer *a, GeglBuffer *b)
{
  const GeglRectangle *ra = gegl_buffer_get_extent (a), *rb = gegl_buffer_get_extent (b);
  gboolean             same = gegl_rectangle_equal (ra, rb);

  if (same)
    {
      guchar *pa = get_pixels (a, "Y' u8"), *pb = get_pixels (b, "Y' u8");
      same = memcmp (pa, pb, (gsize) ra->width * (gsize) ra->height) == 0;
      g_free (pa);
      g_free (pb);
    }
  return same;
}

typedef struct
{
  GeglBuffer *in;
  GeglBuffer *want;
  gint        threads;
  gint        bad;
} Runner;

static gpointer
run_many (gpointer user)
{
  Runner *r = user;

  for (gint k = 0; k < 6; k++)
    {
      GeglBuffer *out = run_op (r->in, "threads", r->threads, "backend", 1, NULL);
      if (!out || !same_buffers (out, r->want))
        r->bad++;
      if (out)
        g_object_unref (out);
    }
  return NULL;
}

/* Runs the default main loop until the op frees its idle context (a
 * debug line), for at most 8 s. */
static gboolean
wait_freed (void)
{
  const gint   freed = g_atomic_int_get (&contexts_freed);
  const gint64 end = g_get_monotonic_time () + 8 * G_USEC_PER_SEC;

  while (g_atomic_int_get (&contexts_freed) == freed && g_get_monotonic_time () < end)
    if (!g_main_context_iteration (NULL, FALSE))
      g_usleep (20000);
  return g_atomic_int_get (&contexts_freed) == freed + 1;
}

/* Calls one after another share one core context, whatever their
 * settings; calls at the same time each get one of their own and the
 * same pixels; an idle context is freed after HT_GEGL_KEEP_SECONDS where
 * a main loop runs, and 0 keeps none. */
static void
test_kept_context (void)
{
  const gint  w = 257, h = 129;
  guchar     *rgba = make_rgba8 (w, h);
  GeglBuffer *in = buffer_from_rgba8 (rgba, w, h, "R'G'B'A u8");
  GeglBuffer *want = run_op (in, "threads", 1, "backend", 1, NULL);
  gint        made;

  g_setenv ("HT_GEGL_KEEP_SECONDS", "30", TRUE);
  made = g_atomic_int_get (&contexts_made);
  for (gint t = 0; t < 4; t++)
    {
      GeglBuffer *out = run_op (in, "threads", t, "backend", 1, NULL);
      CHECK (same_buffers (out, want), "kept context, threads %d: other pixels", t);
      g_object_unref (out);
    }
  CHECK (g_atomic_int_get (&contexts_made) == made, "4 calls one after another made %d core contexts, not 0",
         g_atomic_int_get (&contexts_made) - made);

  {
    Runner   r[3];
    GThread *th[3];

    for (gint i = 0; i < 3; i++)
      {
        r[i] = (Runner) { in, want, i + 1, 0 };
        th[i] = g_thread_new ("halftone-test", run_many, &r[i]);
      }
    for (gint i = 0; i < 3; i++)
      {
        g_thread_join (th[i]);
        CHECK (r[i].bad == 0, "calls at the same time (%d threads each): %d of 6 gave other pixels",
               r[i].threads, r[i].bad);
      }
  }

  /* freed once idle for HT_GEGL_KEEP_SECONDS, by a main loop */
  g_setenv ("HT_GEGL_KEEP_SECONDS", "1", TRUE);
  {
    GeglBuffer *out = run_op (in, "threads", 2, "backend", 1, NULL);

    g_object_unref (out);
    CHECK (wait_freed (), "the idle context was not freed within 8 s");
    made = g_atomic_int_get (&contexts_made);
    out = run_op (in, "threads", 2, "backend", 1, NULL);
    CHECK (g_atomic_int_get (&contexts_made) == made + 1, "no new context after the idle one was freed");
    CHECK (same_buffers (out, want), "after the idle context was freed: other pixels");
    g_object_unref (out);
    CHECK (wait_freed (), "the second idle context was not freed within 8 s");
  }

  /* 0: none kept */
  g_setenv ("HT_GEGL_KEEP_SECONDS", "0", TRUE);
  made = g_atomic_int_get (&contexts_made);
  for (gint k = 0; k < 3; k++)
    g_object_unref (run_op (in, "threads", 2, "backend", 1, NULL));
  CHECK (g_atomic_int_get (&contexts_made) == made + 3, "HT_GEGL_KEEP_SECONDS=0: %d contexts for 3 calls, not 3",
         g_atomic_int_get (&contexts_made) - made);
  g_unsetenv ("HT_GEGL_KEEP_SECONDS");

  g_object_unref (want);
  g_object_unref (in);
  g_free (rgba);
}

int
main (int argc, char **argv)
{
  static void (*const tests[]) (void) = { test_kept_context };

  return op_test_main (argc, argv, tests, G_N_ELEMENTS (tests));
}
