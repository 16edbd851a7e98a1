/* The GIMP 3 procedure's arguments from the library's description
 * (halftone-args.h).
 *
 * Copyright (C) 2026 the GEGL Halftone authors. GPL-3.0-or-later.
 */
#include "ht-config.h"

#include <glib/gi18n-lib.h>

#include "halftone-args.h"

/* GIMP's int arguments are gint; every range of the description fits
 * (the seed's is 0..2^31 - 1 for this), the clamp only guards a cast. */
static gint
to_int (gdouble x)
{
  return x <= G_MININT ? G_MININT : x >= G_MAXINT ? G_MAXINT : (gint) x;
}

/* The library's list as a GimpChoice: nicks are the API names (the CLI's
 * values, the op's enum nicks), ids the enum values. */
static GimpChoice *
choice_of_list (ht_list list)
{
  GimpChoice      *choice = gimp_choice_new ();
  gint             n      = 0;
  const ht_choice *c      = ht_choices (list, &n);

  for (gint i = 0; i < n; i++)
    gimp_choice_add (choice, c[i].name, c[i].value, _(c[i].label), c[i].help[0] ? _(c[i].help) : "");
  return choice;
}

void
halftone_args_add (GimpProcedure *procedure)
{
  for (gint id = 0; id < HT_PARAM_COUNT; id++)
    {
      const ht_param *d     = ht_param_info ((ht_param_id) id);
      const gchar    *label = _(d->label);
      const gchar    *help  = _(d->help);

      switch (d->type)
        {
        case HT_TYPE_INT:
        case HT_TYPE_SEED:
          gimp_procedure_add_int_argument (procedure, d->name, label, help, to_int (d->min), to_int (d->max),
                                           to_int (d->def), G_PARAM_READWRITE);
          break;
        case HT_TYPE_NUMBER:
          gimp_procedure_add_double_argument (procedure, d->name, label, help, d->min, d->max, d->def,
                                              G_PARAM_READWRITE);
          break;
        case HT_TYPE_BOOL:
          gimp_procedure_add_boolean_argument (procedure, d->name, label, help, d->def != 0, G_PARAM_READWRITE);
          break;
        case HT_TYPE_CHOICE:
          {
            const ht_choice *c = ht_choice_by_value (d->list, (gint) d->def);

            gimp_procedure_add_choice_argument (procedure, d->name, label, help, choice_of_list (d->list),
                                                c ? c->name : NULL, G_PARAM_READWRITE);
            break;
          }
        case HT_TYPE_TEXT:
          gimp_procedure_add_string_argument (procedure, d->name, label, help, d->def_text ? d->def_text : "",
                                              G_PARAM_READWRITE);
          break;
        }
    }
}

gchar *
halftone_args_to_vals (GimpProcedureConfig *config, HalftoneVals *v)
{
  gchar *problem = NULL;

  halftone_vals_defaults (v);
  for (gint id = 0; id < HT_PARAM_COUNT; id++)
    {
      const ht_param *d = ht_param_info ((ht_param_id) id);

      switch (d->type)
        {
        case HT_TYPE_INT:
        case HT_TYPE_SEED:
          {
            gint x = 0;

            g_object_get (config, d->name, &x, NULL);
            v->value[id] = x;
            break;
          }
        case HT_TYPE_NUMBER:
          g_object_get (config, d->name, &v->value[id], NULL);
          break;
        case HT_TYPE_BOOL:
          {
            gboolean b = FALSE;

            g_object_get (config, d->name, &b, NULL);
            v->value[id] = b ? 1 : 0;
            break;
          }
        case HT_TYPE_CHOICE:
          v->value[id] = gimp_procedure_config_get_choice_id (config, d->name);
          break;
        case HT_TYPE_TEXT:
          {
            gchar *s = NULL;

            g_object_get (config, d->name, &s, NULL);
            if (g_strlcpy (v->text[id], s ? s : "", HALFTONE_TEXT_MAX) >= HALFTONE_TEXT_MAX && !problem)
              /* TRANSLATORS: a parameter's name, the longest text it takes */
              problem = g_strdup_printf (_("%s takes at most %d characters"), d->name, HALFTONE_TEXT_MAX - 1);
            g_free (s);
            break;
          }
        }
    }
  return problem;
}
