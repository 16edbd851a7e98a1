/* GIMP 3 plug-in: plug-in-halftone, in a process of its own.
 *
 * GIMP 3 calls a GEGL filter's process() on its main thread for the whole
 * image, with no way to stop it, so a search method on a photo would
 * freeze GIMP for minutes. Here the op halftone:dither runs in the
 * plug-in's process, in a worker thread: GIMP stays responsive, the
 * dialog shows progress and a change or Cancel stops the computation.
 *
 * Copyright (C) 2026 the GEGL Halftone authors. GPL-3.0-or-later.
 */
#include "ht-config.h"

#include <string.h>

#include <glib/gi18n-lib.h>

#include "halftone-apply.h"
#include "halftone-args.h"
#include "halftone-dialog.h"

#ifdef HT_GIMP3_TEST_PROCEDURES
/* The tests' build only: the apply path with a cancel from a timer
 * (tests/gimp/gimp3-plugin.py), what GIMP's progress cancel or a script
 * cannot do through the PDB. */
#define TEST_CANCEL_PROC "plug-in-halftone-test-cancel"
#endif

typedef struct
{
  GimpPlugIn parent_instance;
} Halftone;

typedef struct
{
  GimpPlugInClass parent_class;
} HalftoneClass;

GType halftone_get_type (void) G_GNUC_CONST;
G_DEFINE_TYPE (Halftone, halftone, GIMP_TYPE_PLUG_IN)

static GList *
halftone_query_procedures (GimpPlugIn *plug_in)
{
  GList *list = g_list_append (NULL, g_strdup (PLUG_IN_PROC_GIMP3));

  (void) plug_in;
#ifdef TEST_CANCEL_PROC
  list = g_list_append (list, g_strdup (TEST_CANCEL_PROC));
#endif
  return list;
}

/* GIMP 3 takes only a catalog folder inside the plug-in's own; ours is
 * the project's locale folder (HT_LOCALEDIR), bound in
 * halftone_create_procedure instead. */
static gboolean
halftone_set_i18n (GimpPlugIn *plug_in, const gchar *procedure_name, gchar **gettext_domain, gchar **catalog_dir)
{
  (void) plug_in;
  (void) procedure_name;
  (void) gettext_domain;
  (void) catalog_dir;
  return FALSE;
}

static GimpValueArray *
fail (GimpProcedure *procedure, GimpPDBStatusType status, GError *error)
{
  return gimp_procedure_new_return_values (procedure, status, error);
}

/* The values of the config, checked: NULL with the one-line reason in
 * *error where they cannot run. */
static gboolean
config_vals (GimpProcedureConfig *config, HalftoneVals *v, GError **error)
{
  gchar *problem = halftone_args_to_vals (config, v);

  if (!problem)
    problem = halftone_check_vals (v, NULL);
  if (!problem && gegl_has_operation ("halftone:dither") == FALSE)
    problem = g_strdup (_("the GEGL operation halftone:dither is not installed (see docs/gimp.md)"));
  if (!problem)
    return TRUE;
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, _("Halftone: %s"), problem);
  g_free (problem);
  return FALSE;
}

static GimpValueArray *
halftone_run (GimpProcedure *procedure, GimpRunMode run_mode, GimpImage *image, GimpDrawable **drawables,
              GimpProcedureConfig *config, gpointer run_data)
{
  GimpDrawable *drawable;
  HalftoneVals  v;
  GError       *error = NULL;

  (void) image;
  (void) run_data;
  gegl_init (NULL, NULL);
  if (!drawables || !drawables[0] || drawables[1])
    {
      g_set_error (&error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   _("Halftone: works on one layer at a time; select a single layer"));
      return fail (procedure, GIMP_PDB_CALLING_ERROR, error);
    }
  drawable = drawables[0];

  if (run_mode == GIMP_RUN_INTERACTIVE)
    {
      GimpPDBStatusType status;

      gimp_ui_init (PLUG_IN_BINARY);
      status = halftone_dialog_run (procedure, config, drawable, &error);
      return fail (procedure, status, error);
    }

  /* non-interactive (scripts) and last values (Filters > Repeat): GIMP
   * has filled the config from the arguments or the last run */
  if (!config_vals (config, &v, &error))
    return fail (procedure, GIMP_PDB_CALLING_ERROR, error);
  if (!halftone_apply (drawable, &v, NULL, &error))
    return fail (procedure, GIMP_PDB_EXECUTION_ERROR, error);
  return gimp_procedure_new_return_values (procedure, GIMP_PDB_SUCCESS, NULL);
}

#ifdef TEST_CANCEL_PROC
static gint64 cancelled_at;

static gboolean
cancel_now (gpointer cancel)
{
  cancelled_at = g_get_monotonic_time ();
  g_cancellable_cancel (cancel);
  return G_SOURCE_REMOVE;
}

static GimpValueArray *
test_cancel_run (GimpProcedure *procedure, GimpRunMode run_mode, GimpImage *image, GimpDrawable **drawables,
                 GimpProcedureConfig *config, gpointer run_data)
{
  GCancellable *cancel = g_cancellable_new ();
  HalftoneVals  v;
  GError       *error = NULL;
  gint          after = 0;
  gboolean      ok;

  (void) run_mode;
  (void) image;
  (void) run_data;
  gegl_init (NULL, NULL);
  if (!config_vals (config, &v, &error))
    return fail (procedure, GIMP_PDB_CALLING_ERROR, error);
  g_object_get (config, "cancel-after-ms", &after, NULL);
  g_timeout_add ((guint) after, cancel_now, cancel);
  ok = halftone_apply (drawables[0], &v, cancel, &error);
  /* for the test's report, not checked: how long the stop took */
  if (cancelled_at)
    g_printerr ("halftone-gimp3-test: the apply returned %.3f s after the cancel\n",
                (gdouble) (g_get_monotonic_time () - cancelled_at) / 1e6);
  g_object_unref (cancel);
  return ok ? gimp_procedure_new_return_values (procedure, GIMP_PDB_SUCCESS, NULL)
            : fail (procedure, GIMP_PDB_EXECUTION_ERROR, error);
}
#endif

static GimpProcedure *
halftone_create_procedure (GimpPlugIn *plug_in, const gchar *name)
{
  GimpProcedure *procedure;

  bindtextdomain (GETTEXT_PACKAGE, HT_LOCALEDIR);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  gegl_init (NULL, NULL);
#ifdef TEST_CANCEL_PROC
  if (!strcmp (name, TEST_CANCEL_PROC))
    {
      procedure = gimp_image_procedure_new (plug_in, name, GIMP_PDB_PROC_TYPE_PLUGIN, test_cancel_run, NULL, NULL);
      gimp_procedure_set_image_types (procedure, "RGB*, GRAY*");
      gimp_procedure_set_documentation (procedure, "Test: plug-in-halftone's apply, cancelled by a timer",
                                        "For tests/gimp/gimp3-plugin.py only.", name);
      gimp_procedure_set_attribution (procedure, "GEGL Halftone authors", "GPL-3.0-or-later", "2026");
      halftone_args_add (procedure);
      gimp_procedure_add_int_argument (procedure, "cancel-after-ms", "Cancel after", "Milliseconds", 0, G_MAXINT,
                                       1000, G_PARAM_READWRITE);
      return procedure;
    }
#endif
  if (strcmp (name, PLUG_IN_PROC_GIMP3))
    return NULL;
  procedure = gimp_image_procedure_new (plug_in, name, GIMP_PDB_PROC_TYPE_PLUGIN, halftone_run, NULL, NULL);
  gimp_procedure_set_image_types (procedure, "RGB*, GRAY*");
  gimp_procedure_set_sensitivity_mask (procedure, GIMP_PROCEDURE_SENSITIVE_DRAWABLE);
  gimp_procedure_set_menu_label (procedure, _("_Halftone..."));
  /* Colors > Dither's section: the filter reduces the tones to a few
   * levels, as GEGL's dither does, where users look for it */
  gimp_procedure_add_menu_path (procedure, "<Image>/Colors/[Modify]");
  gimp_procedure_set_documentation (procedure, _("Halftone the layer: error diffusion, search or ordered dither"),
                                    _("Turns the layer into a halftone of a few levels (black and white by "
                                      "default) with the GEGL Halftone library: error diffusion, the LES, PES "
                                      "and DBS searches, plane-dependent colour, ordered dither. The result is "
                                      "the same bits as the halftone command-line tool's."),
                                    name);
  gimp_procedure_set_attribution (procedure, "GEGL Halftone authors", "GPL-3.0-or-later", "2026");
  halftone_args_add (procedure);
  return procedure;
}

static void
halftone_class_init (HalftoneClass *klass)
{
  GimpPlugInClass *plug_in_class = GIMP_PLUG_IN_CLASS (klass);

  plug_in_class->query_procedures = halftone_query_procedures;
  plug_in_class->create_procedure = halftone_create_procedure;
  plug_in_class->set_i18n         = halftone_set_i18n;
}

static void
halftone_init (Halftone *halftone)
{
  (void) halftone;
}

GIMP_MAIN (halftone_get_type ())
