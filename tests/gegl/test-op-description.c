/* halftone:dither against the library's description of its parameters
 * (ht_param_info, ht_param_uses, ht_param_used: core/describe.c), so
 * that the op cannot drift from it: every parameter is a property of its
 * name with the description's type, range (the seed's clamped to GEGL's
 * int), slider range, decimals, default, label and blurb; every property
 * is a parameter or the op's own `space`; and the "visible" key of each
 * property, evaluated as GIMP evaluates it (a small evaluator of the GUM
 * the generator writes: `prop {nick, ...}`, a boolean `prop`, `0`, `1`,
 * `!`, `&`, `|`, parentheses) on the op object for every algorithm,
 * colour mode and value of the parameters a use depends on (init), is
 * what the library says a run with those values uses (ht_params_use),
 * and over those values what ht_param_used says.
 *
 * Copyright (C) 2026 the GEGL Halftone authors. GPL-3.0-or-later.
 */
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "halftone.h"
#include "describe.h" /* ht_params_use: what a run of given parameters uses */
#include "op-test.h"

/* GEGL's int property holds a gint, and every range of the description
 * (the seed's 0..2^31 - 1 too) is taken whole: the op cuts none. */
static gdouble
op_int (gdouble v)
{
  return v;
}

/* ------------------------------------------------ the GUM evaluator */

typedef struct
{
  GObject     *object;
  const gchar *s;     /* what is left of the expression */
  gchar        tok[128];
  gboolean     error;
  gchar        why[256];
} Gum;

static void
gum_error (Gum *g, const gchar *why)
{
  if (!g->error)
    g_snprintf (g->why, sizeof g->why, "%s at '%s'", why, g->tok);
  g->error = TRUE;
}

/* The next token: a name (a letter or '_', then letters, digits, '_',
 * '-'), or one character; "" at the end. */
static void
gum_next (Gum *g)
{
  gsize n = 0;

  while (g_ascii_isspace (*g->s))
    g->s++;
  if (g_ascii_isalpha (*g->s) || *g->s == '_')
    while ((g_ascii_isalnum (g->s[n]) || g->s[n] == '_' || g->s[n] == '-') && n + 1 < sizeof g->tok)
      n++;
  else if (*g->s)
    n = 1;
  memcpy (g->tok, g->s, n);
  g->tok[n] = '\0';
  g->s += n;
}

static gboolean gum_or (Gum *g);

/* `prop {nick, ...}` for an enum property, `prop` for a boolean one. */
static gboolean
gum_property (Gum *g)
{
  GParamSpec *pspec = g_object_class_find_property (G_OBJECT_GET_CLASS (g->object), g->tok);
  gboolean    result = FALSE;

  if (!pspec)
    {
      gum_error (g, "no such property");
      return FALSE;
    }
  gum_next (g);
  if (G_IS_PARAM_SPEC_BOOLEAN (pspec))
    {
      g_object_get (g->object, pspec->name, &result, NULL);
      return result;
    }
  if (!G_IS_PARAM_SPEC_ENUM (pspec) || strcmp (g->tok, "{") != 0)
    {
      gum_error (g, "a property that is neither a switch nor an enum with {values}");
      return FALSE;
    }
  {
    GEnumClass *ec = G_PARAM_SPEC_ENUM (pspec)->enum_class;
    gint        value = 0;

    g_object_get (g->object, pspec->name, &value, NULL);
    do
      {
        GEnumValue *v;

        gum_next (g);
        v = g_enum_get_value_by_nick (ec, g->tok);
        if (!v)
          {
            gum_error (g, "not a value of the enum");
            return FALSE;
          }
        result = result || v->value == value;
        gum_next (g);
      }
    while (strcmp (g->tok, ",") == 0);
    if (strcmp (g->tok, "}") != 0)
      gum_error (g, "an unterminated value list");
    gum_next (g);
  }
  return result;
}

static gboolean
gum_not (Gum *g)
{
  gboolean result;

  if (g->error)
    return FALSE;
  if (strcmp (g->tok, "!") == 0)
    {
      gum_next (g);
      return !gum_not (g);
    }
  if (strcmp (g->tok, "(") == 0)
    {
      gum_next (g);
      result = gum_or (g);
      if (strcmp (g->tok, ")") != 0)
        gum_error (g, "an unterminated group");
      gum_next (g);
      return result;
    }
  if (strcmp (g->tok, "0") == 0 || strcmp (g->tok, "1") == 0)
    {
      result = g->tok[0] == '1';
      gum_next (g);
      return result;
    }
  if (g_ascii_isalpha (g->tok[0]) || g->tok[0] == '_')
    return gum_property (g);
  gum_error (g, "an unexpected token");
  return FALSE;
}

static gboolean
gum_and (Gum *g)
{
  gboolean result = gum_not (g);

  while (!g->error && strcmp (g->tok, "&") == 0)
    {
      gum_next (g);
      result = gum_not (g) && result; /* both sides parsed */
    }
  return result;
}

static gboolean
gum_or (Gum *g)
{
  gboolean result = gum_and (g);

  while (!g->error && strcmp (g->tok, "|") == 0)
    {
      gum_next (g);
      result = gum_and (g) || result;
    }
  return result;
}

/* `expr` on the properties of `object`; FALSE with the reason in `why`
 * for an expression it cannot read. */
static gboolean
gum_eval (GObject *object, const gchar *expr, gboolean *result, gchar *why, gsize why_size)
{
  Gum g = { object, expr, "", FALSE, "" };

  gum_next (&g);
  *result = gum_or (&g);
  if (!g.error && g.tok[0])
    gum_error (&g, "trailing text");
  if (g.error)
    g_snprintf (why, why_size, "%s", g.why);
  return !g.error;
}

static void
test_evaluator (void)
{
  GeglNode *graph = gegl_node_new ();
  GeglNode *node = gegl_node_new_child (graph, "operation", OP, "algorithm", HT_ALGORITHM_PES,
                                        "color-mode", HT_COLOR_CMYK, "serpentine", TRUE, NULL);
  GObject  *object = G_OBJECT (gegl_node_get_gegl_operation (node));
  static const struct
  {
    const gchar *expr;
    gint         want; /* -1: not readable */
  } cases[] = {
    { "algorithm {les, pes}", 1 },
    { "algorithm {les}", 0 },
    { "color-mode {cmyk}", 1 },
    { "algorithm {pes} & color-mode {luma, per-channel}", 0 },
    { "algorithm {les} | color-mode {cmyk}", 1 },
    { "algorithm {les} | algorithm {pes} & color-mode {luma}", 0 }, /* & binds first */
    { "(algorithm {les} | algorithm {pes}) & !color-mode {luma}", 1 },
    { "serpentine & !0 & 1", 1 },
    { "algorithm {nonsense}", -1 },
    { "no-such-property", -1 },
    { "algorithm {les", -1 },
    { "(algorithm {les}", -1 },
    { "algorithm {les} &", -1 },
    { "algorithm {les} color-mode {cmyk}", -1 },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      gboolean result = FALSE;
      gchar    why[256] = "";
      gboolean ok = gum_eval (object, cases[i].expr, &result, why, sizeof why);

      if (cases[i].want < 0)
        CHECK (!ok, "evaluator read '%s' as %d", cases[i].expr, result);
      else
        CHECK (ok && result == cases[i].want, "evaluator: '%s' is %d (%s), want %d", cases[i].expr, result,
               ok ? "read" : why, cases[i].want);
    }
  g_object_unref (graph);
}

/* --------------------------------------------- properties and ranges */

static void
test_parameters_are_properties (void)
{
  for (gint i = 0; i < HT_PARAM_COUNT; i++)
    {
      const ht_param *d  = ht_param_info ((ht_param_id) i);
      GParamSpec     *ps = gegl_operation_find_property (OP, d->name);

      CHECK (ps != NULL, "parameter %s has no property", d->name);
      if (!ps)
        continue;
      CHECK (g_strcmp0 (g_param_spec_get_nick (ps), d->label) == 0, "%s: label '%s', the description '%s'",
             d->name, g_param_spec_get_nick (ps), d->label);
      CHECK (g_strcmp0 (g_param_spec_get_blurb (ps), d->help) == 0, "%s: blurb '%s', the description '%s'",
             d->name, g_param_spec_get_blurb (ps), d->help);
      switch (d->type)
        {
        case HT_TYPE_INT:
        case HT_TYPE_SEED:
          CHECK (G_IS_PARAM_SPEC_INT (ps) && GEGL_IS_PARAM_SPEC_INT (ps), "%s is not a GEGL int", d->name);
          if (G_IS_PARAM_SPEC_INT (ps) && GEGL_IS_PARAM_SPEC_INT (ps))
            {
              GParamSpecInt    *v = G_PARAM_SPEC_INT (ps);
              GeglParamSpecInt *u = GEGL_PARAM_SPEC_INT (ps);

              CHECK (v->minimum == d->min && v->maximum == op_int (d->max) && v->default_value == d->def,
                     "%s: %d..%d default %d, the description %g..%g default %g", d->name, v->minimum,
                     v->maximum, v->default_value, d->min, d->max, d->def);
              CHECK (u->ui_minimum == d->ui_min && u->ui_maximum == op_int (d->ui_max),
                     "%s: slider %d..%d, the description %g..%g", d->name, u->ui_minimum, u->ui_maximum,
                     d->ui_min, d->ui_max);
            }
          /* a seed the CLI takes the op must take too (issue 37) */
          CHECK (d->max <= (gdouble) G_MAXINT && d->min >= (gdouble) G_MININT, "%s: %g..%g does not fit GEGL's int",
                 d->name, d->min, d->max);
          break;
        case HT_TYPE_NUMBER:
          CHECK (G_IS_PARAM_SPEC_DOUBLE (ps) && GEGL_IS_PARAM_SPEC_DOUBLE (ps), "%s is not a GEGL double", d->name);
          if (G_IS_PARAM_SPEC_DOUBLE (ps) && GEGL_IS_PARAM_SPEC_DOUBLE (ps))
            {
              GParamSpecDouble    *v = G_PARAM_SPEC_DOUBLE (ps);
              GeglParamSpecDouble *u = GEGL_PARAM_SPEC_DOUBLE (ps);

              CHECK (v->minimum == d->min && v->maximum == d->max && v->default_value == d->def,
                     "%s: %g..%g default %g, the description %g..%g default %g", d->name, v->minimum,
                     v->maximum, v->default_value, d->min, d->max, d->def);
              CHECK (u->ui_minimum == d->ui_min && u->ui_maximum == d->ui_max, "%s: slider %g..%g, the description %g..%g",
                     d->name, u->ui_minimum, u->ui_maximum, d->ui_min, d->ui_max);
              CHECK (d->digits <= 0 || u->ui_digits == d->digits, "%s: %d decimals, the description %d", d->name,
                     u->ui_digits, d->digits);
            }
          break;
        case HT_TYPE_BOOL:
          CHECK (G_IS_PARAM_SPEC_BOOLEAN (ps) && G_PARAM_SPEC_BOOLEAN (ps)->default_value == (d->def != 0.0),
                 "%s is not a switch defaulting to %g", d->name, d->def);
          break;
        case HT_TYPE_TEXT:
          CHECK (G_IS_PARAM_SPEC_STRING (ps) && g_strcmp0 (G_PARAM_SPEC_STRING (ps)->default_value, d->def_text) == 0,
                 "%s is not a string defaulting to '%s'", d->name, d->def_text);
          break;
        case HT_TYPE_CHOICE:
          CHECK (G_IS_PARAM_SPEC_ENUM (ps), "%s is not an enum", d->name);
          if (G_IS_PARAM_SPEC_ENUM (ps))
            {
              GEnumClass      *ec = G_PARAM_SPEC_ENUM (ps)->enum_class;
              gint             n  = 0;
              const ht_choice *c  = ht_choices (d->list, &n);

              CHECK (G_PARAM_SPEC_ENUM (ps)->default_value == (gint) d->def, "%s defaults to %d, the description %g",
                     d->name, G_PARAM_SPEC_ENUM (ps)->default_value, d->def);
              CHECK ((gint) ec->n_values == n, "%s has %u values, the library's list %d", d->name, ec->n_values, n);
              for (gint k = 0; k < n && k < (gint) ec->n_values; k++)
                CHECK (ec->values[k].value == c[k].value && g_strcmp0 (ec->values[k].value_nick, c[k].name) == 0,
                       "%s value %d is %d '%s', the library's %d '%s'", d->name, k, ec->values[k].value,
                       ec->values[k].value_nick, c[k].value, c[k].name);
            }
          break;
        }
    }
}

/* Every property of the op is a parameter. */
static void
test_properties_are_parameters (void)
{
  guint        n = 0;
  GParamSpec **specs = gegl_operation_list_properties (OP, &n);
  gint         seen = 0;

  for (guint k = 0; k < n; k++)
    {
      const gchar *name = g_param_spec_get_name (specs[k]);

      if (g_type_is_a (G_PARAM_SPEC_VALUE_TYPE (specs[k]), GEGL_TYPE_BUFFER)) /* the pads */
        continue;
      CHECK (ht_param_find (name) >= 0 && strcmp (ht_param_info ((ht_param_id) ht_param_find (name))->name, name) == 0,
             "property %s is not a parameter of the library", name);
      seen++;
    }
  CHECK (seen == HT_PARAM_COUNT, "%d properties for %d parameters", seen, HT_PARAM_COUNT);
  g_free (specs);
}

/* ------------------------------------------------- the visible keys */

#define MAX_WHEN 4

/* The parameters that a use depends on (init), each with its values. */
typedef struct
{
  ht_param_id id;
  gint        values[64];
  gint        n;
} When;

static gint
when_parameters (When *when)
{
  gint nwhen = 0;

  for (gint i = 0; i < HT_PARAM_COUNT; i++)
    {
      gint                n = 0;
      const ht_param_use *u = ht_param_uses ((ht_param_id) i, &n);

      for (gint k = 0; k < n; k++)
        {
          gboolean known = FALSE;

          if (!u[k].when_values)
            continue;
          for (gint w = 0; w < nwhen; w++)
            known = known || when[w].id == u[k].when;
          if (known || nwhen == MAX_WHEN)
            continue;
          when[nwhen].id = u[k].when;
          when[nwhen].n  = 0;
          if (ht_param_info (u[k].when)->type == HT_TYPE_BOOL)
            {
              when[nwhen].values[when[nwhen].n++] = 0;
              when[nwhen].values[when[nwhen].n++] = 1;
            }
          else
            {
              gint             nc = 0;
              const ht_choice *c  = ht_choices (ht_param_info (u[k].when)->list, &nc);

              for (gint j = 0; j < nc && j < 64; j++)
                when[nwhen].values[when[nwhen].n++] = c[j].value;
            }
          nwhen++;
        }
    }
  return nwhen;
}

/* The library's parameters for a run of `algorithm` in `color` with the
 * `when` parameters at values `at`, set as the op sets them (text only
 * where it is used: the custom filter's coefficients). */
static void
run_params (ht_params *p, gint algorithm, gint color, const When *when, gint nwhen, const gint *at)
{
  ht_params_init (p);
  CHECK (ht_params_set_number (p, HT_PARAM_ALGORITHM, algorithm, NULL, 0) == HT_OK, "algorithm %d", algorithm);
  CHECK (ht_params_set_number (p, HT_PARAM_COLOR, color, NULL, 0) == HT_OK, "color mode %d", color);
  for (gint w = 0; w < nwhen; w++)
    CHECK (ht_params_set_number (p, when[w].id, when[w].values[at[w]], NULL, 0) == HT_OK, "%s %d",
           ht_param_info (when[w].id)->name, when[w].values[at[w]]);
  for (gint i = 0; i < HT_PARAM_COUNT; i++)
    {
      const ht_param *d = ht_param_info ((ht_param_id) i);

      if (d->type == HT_TYPE_TEXT && ht_param_used ((ht_param_id) i, algorithm, (ht_color_mode) color))
        CHECK (ht_params_set_text (p, (ht_param_id) i, d->def_text, NULL, 0) == HT_OK, "%s '%s'", d->name,
               d->def_text);
    }
}

static void
test_visible_keys (void)
{
  GeglNode        *graph = gegl_node_new ();
  GeglNode        *node = gegl_node_new_child (graph, "operation", OP, NULL);
  GObject         *object = G_OBJECT (gegl_node_get_gegl_operation (node));
  gint             nalg = 0, ncol = 0, keys = 0, cells = 0;
  const ht_choice *algs = ht_choices (HT_LIST_ALGORITHMS, &nalg);
  const ht_choice *cols = ht_choices (HT_LIST_COLOR_MODES, &ncol);
  When             when[MAX_WHEN];
  const gint       nwhen = when_parameters (when);

  CHECK (nwhen >= 1, "no use depends on another parameter (the seed on init)");
  for (gint i = 0; i < HT_PARAM_COUNT; i++)
    {
      const ht_param *d     = ht_param_info ((ht_param_id) i);
      GParamSpec     *ps    = gegl_operation_find_property (OP, d->name);
      const gchar    *expr  = ps ? gegl_param_spec_get_property_key (ps, "visible") : NULL;
      gint            nuses = 0;
      gboolean        everywhere = TRUE;

      if (!ps)
        continue; /* said by test_parameters_are_properties */
      ht_param_uses ((ht_param_id) i, &nuses);
      keys += expr != NULL;
      for (gint a = 0; a < nalg; a++)
        for (gint c = 0; c < ncol; c++)
          {
            const gboolean used = ht_param_used ((ht_param_id) i, algs[a].value, (ht_color_mode) cols[c].value);
            gboolean       any = FALSE;
            gint           at[MAX_WHEN] = { 0 };

            everywhere = everywhere && used;
            /* every combination of the values of the `when` parameters */
            for (;;)
              {
                ht_params p;
                gboolean  want, shown = TRUE;
                gchar     why[256] = "", values[256] = "";

                run_params (&p, algs[a].value, cols[c].value, when, nwhen, at);
                want = ht_params_use (&p, (ht_param_id) i);
                CHECK (!want || used, "%s: a run of %s in %s uses it, ht_param_used says not", d->name, algs[a].name,
                       cols[c].name);
                g_object_set (object, "algorithm", algs[a].value, "color-mode", cols[c].value, NULL);
                for (gint w = 0; w < nwhen; w++)
                  {
                    const ht_param *wd = ht_param_info (when[w].id);
                    gsize           len = strlen (values);

                    g_object_set (object, wd->name, when[w].values[at[w]], NULL);
                    g_snprintf (values + len, sizeof values - len, ", %s %d", wd->name, when[w].values[at[w]]);
                  }
                if (expr && !gum_eval (object, expr, &shown, why, sizeof why))
                  {
                    CHECK (FALSE, "%s: visible key '%s' does not read: %s", d->name, expr, why);
                    goto next_parameter;
                  }
                CHECK (shown == want, "%s is %s for algorithm %s, colour mode %s%s, which %s it (visible: %s)",
                       d->name, shown ? "shown" : "hidden", algs[a].name, cols[c].name, values,
                       want ? "uses" : "does not use", expr ? expr : "(none)");
                any = any || shown;
                cells++;

                gint w = 0;
                while (w < nwhen && ++at[w] == when[w].n)
                  at[w++] = 0;
                if (w == nwhen)
                  break;
              }
            /* ht_param_used: for some value of the `when` parameters */
            CHECK (any == used, "%s: shown for some %s (%d) in algorithm %s, colour mode %s; ht_param_used says %d",
                   d->name, nwhen ? ht_param_info (when[0].id)->name : "value", any, algs[a].name, cols[c].name,
                   used);
          }
      /* a parameter always used has no key: GIMP shows it always */
      CHECK ((nuses == 0) == everywhere && (expr == NULL) == everywhere,
             "%s: %d conditions, used everywhere %d, visible key %s", d->name, nuses, everywhere,
             expr ? expr : "(none)");
    next_parameter:;
    }
  CHECK (keys >= 10, "only %d properties have a visible key", keys);
  fprintf (stderr, "  %d cells of %d algorithms x %d colour modes x the values of %d parameter(s) checked\n", cells,
           nalg, ncol, nwhen);
  g_object_unref (graph);
}

int
main (int argc, char **argv)
{
  op_test_start (&argc, &argv);
  if (op_registered ())
    {
      test_evaluator ();
      test_parameters_are_properties ();
      test_properties_are_parameters ();
      test_visible_keys ();
    }
  return op_test_end ();
}
