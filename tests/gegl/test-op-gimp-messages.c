/* What GIMP hears from halftone:dither while a user types coefficients:
 * GIMP runs the op again at every keystroke, and every prefix of a
 * filter that does not parse yet fails. Inside GIMP (a program named
 * gimp...) the op passes the input through quietly while the settings
 * change, and GIMP's window (log domain "GEGL", level MESSAGE) gets one
 * message once they rest with a text that still fails, and none when the
 * text is finished in time (plugin/halftone-dither-run.c, tell_gimp_later).
 * The keystrokes come without the main loop running in between, as GIMP
 * runs them faster than the pause: what is checked is which message
 * survives, not how fast anything is.
 *
 * Copyright (C) 2026 the GEGL Halftone authors. GPL-3.0-or-later.
 */
#include <glib.h>
#include <stdio.h>
#include <string.h>

#include "op-test.h"

static gint     gimp_messages;
static GString *gimp_last;

static void
gimp_window (const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer user)
{
  (void) domain, (void) level, (void) user;
  gimp_messages++;
  g_string_assign (gimp_last, message);
}

/* Runs the main loop for `ms`, as GIMP does while the user rests. */
static void
rest (gint ms)
{
  const gint64 until = g_get_monotonic_time () + (gint64) ms * 1000;

  while (g_get_monotonic_time () < until)
    {
      while (g_main_context_iteration (NULL, FALSE))
        ;
      g_usleep (20000);
    }
}

/* Types `text` a character at a time into the coefficients of a custom
 * filter, running the op after each (the preview); the last output. */
static void
type (GeglBuffer *in, const gchar *text)
{
  for (gsize n = 1; n <= strlen (text); n++)
    {
      gchar      *prefix = g_strndup (text, n);
      GeglBuffer *out    = run_op (in, "algorithm", 8, "coefficients", prefix, NULL);

      g_clear_object (&out);
      g_free (prefix);
    }
}

static void
test_typing (void)
{
  guchar     *rgba = make_rgba8 (24, 16);
  GeglBuffer *in   = buffer_from_rgba8 (rgba, 24, 16, "R'G'B'A u8");

  gimp_last = g_string_new ("");
  g_log_set_handler ("GEGL", G_LOG_LEVEL_MESSAGE, gimp_window, NULL);

  /* Stucki typed by hand: many prefixes fail, the whole parses */
  gimp_messages = 0;
  type (in, "- - * 8 4; 2 4 8 4 2; 1 2 4 2 1 / 42");
  rest (2500);
  CHECK (gimp_messages == 0, "a filter typed to the end: %d message(s) for GIMP, the last: %s", gimp_messages,
         gimp_last->str);

  /* a text left unparsable: one message once the typing stops */
  gimp_messages = 0;
  type (in, "- * 7; 3 x 1");
  CHECK (gimp_messages == 0, "while typing: %d message(s) for GIMP", gimp_messages);
  rest (2500);
  CHECK (gimp_messages == 1, "a text left unparsable: %d message(s) for GIMP, not 1", gimp_messages);
  CHECK (strstr (gimp_last->str, "coefficients") != NULL, "the message does not say what is wrong: %s",
         gimp_last->str);

  g_string_free (gimp_last, TRUE);
  g_object_unref (in);
  g_free (rgba);
}

int
main (int argc, char **argv)
{
  static void (*const tests[]) (void) = { test_typing };

  /* the op speaks to GIMP's window only inside GIMP */
  g_set_prgname ("gimp-3.0");
  return op_test_main (argc, argv, tests, G_N_ELEMENTS (tests));
}
