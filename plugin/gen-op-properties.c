/* gen-op-properties: prints halftone:dither's property block (the chant
 * lines of GEGL's gegl-op.h) from the library's description of its
 * parameters (ht_param_info, ht_param_uses: core/describe.c), so that
 * the op's properties, their ranges, defaults, labels, blurbs and when
 * GIMP shows them are the description's and nothing is restated by hand.
 * Run at build time (plugin/meson.build); halftone-dither.c includes
 * what it prints.
 *
 * A parameter is property `name` ('-' read as '_' in the C identifier,
 * o->max_rounds for "max-rounds"). Its "visible" key is a GUM expression
 * (GIMP's language for ui_meta keys: `prop {nick, ...}`, `&`, `|`,
 * parentheses) made from its conditions (ht_param_uses): the algorithms
 * and colour modes in which it is used, and the values of the parameter
 * a use depends on (the seed of a search: `init {random}`); a parameter
 * used everywhere gets none. The program checks the conditions against
 * ht_param_used for every algorithm and colour mode, and fails on any
 * difference (tests/gegl/test-op-description.c evaluates the keys on
 * the op).
 *
 * Usage: gen-op-properties [OUTPUT]  (standard output without OUTPUT)
 *
 * Copyright (C) 2026 the GEGL Halftone authors. GPL-3.0-or-later.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "halftone.h"

#define MAX_ALGORITHMS 64
#define MAX_COLORS 8
#define KEY_MAX 512
#define EXPR_MAX 4096

/* GEGL's property_int holds a gint: a description range past it would be
 * cut on the op, so it is refused where the properties are made. */
#define OP_INT_MAX 2147483647.0

static FILE *out;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fail(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "gen-op-properties: ");
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(1);
}

/* `text` as a C string literal's contents. */
static void put_c_string(const char *text)
{
  for (const char *s = text; *s; s++) {
    if (*s == '"' || *s == '\\')
      fputc('\\', out);
    if (*s == '\n')
      fputs("\\n", out);
    else
      fputc(*s, out);
  }
}

/* A double as a C literal that stays a double ("1.0", "0.25"). */
static void put_double(double v)
{
  char buf[64] = "";
  /* the shortest form that reads back the same */
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (strtod(buf, NULL) == v)
      break;
  }
  fputs(buf, out);
  if (!strpbrk(buf, ".eEn"))
    fputs(".0", out);
}

static void put_int(double v)
{
  if (v == OP_INT_MAX)
    fputs("G_MAXINT", out);
  else
    fprintf(out, "%.0f", v);
}

/* "max-rounds" -> "max_rounds" (`camel` false) or "MaxRounds" (true). */
static void put_identifier(const char *name, bool camel)
{
  bool up = camel;
  for (const char *s = name; *s; s++) {
    if (*s == '-') {
      if (!camel)
        fputc('_', out);
      up = camel;
      continue;
    }
    fputc(up && *s >= 'a' && *s <= 'z' ? *s - 'a' + 'A' : *s, out);
    up = false;
  }
}

/* ------------------------------------------------ the visible key */

static int nalg, ncol;
static const ht_choice *algs, *cols;

/* Whether condition `u` holds for algorithm `a` (HT_LIST_ALGORITHMS)
 * in colour mode `c`, whatever the value of its `when`. A method whose
 * algorithm is -1 runs the filters (HT_LIST_FILTERS, under their ids). */
static bool holds(const ht_param_use *u, int a, int c)
{
  const ht_method_info *m = ht_method_describe(u->method);
  if (!m || !(u->colors & (1u << c)))
    return false;
  if (u->algorithm >= 0)
    return u->algorithm == a;
  if (m->algorithm >= 0)
    return m->algorithm == a;
  return ht_choice_by_value(HT_LIST_FILTERS, a) != NULL;
}

static void append(char *buf, size_t size, const char *text)
{
  size_t len = strlen(buf);
  if (len + strlen(text) >= size)
    fail("a visible key longer than %zu bytes", size);
  memcpy(buf + len, text, strlen(text) + 1);
}

/* The GUM term of `u`'s `when`: "init {random}"; "" where it has none. */
static void when_term(const ht_param_use *u, char *buf, size_t size)
{
  buf[0] = '\0';
  if (!u->when_values)
    return;
  const ht_param *w = ht_param_info(u->when);
  if (!w)
    fail("a condition depends on parameter %d, which is not described", (int)u->when);
  if (w->type == HT_TYPE_BOOL) {
    if ((u->when_values & 3u) == 3u)
      return;
    if (u->when_values & 1u)
      append(buf, size, "!");
    append(buf, size, w->name);
    return;
  }
  if (w->type != HT_TYPE_CHOICE)
    fail("a condition depends on %s, which is neither a choice nor a switch", w->name);
  int n = 0;
  const ht_choice *c = ht_choices(w->list, &n);
  bool first = true;
  append(buf, size, w->name);
  append(buf, size, " {");
  for (int i = 0; i < n; i++)
    if (c[i].value >= 0 && c[i].value < 32 && (u->when_values & (1u << c[i].value))) {
      append(buf, size, first ? "" : ", ");
      append(buf, size, c[i].name);
      first = false;
    }
  append(buf, size, "}");
}

/* What shows parameter `id` in cell (a, c): false where it is hidden;
 * else `key` is "" where it always shows, or the GUM condition on the
 * other parameters under which it shows. */
static bool cell(ht_param_id id, int a, int c, char *key)
{
  int n = 0;
  const ht_param_use *u = ht_param_uses(id, &n);
  bool any = false;
  key[0] = '\0';
  if (!u || n == 0) /* always used */
    return true;
  for (int k = 0; k < n; k++) {
    char term[KEY_MAX];
    if (!holds(&u[k], algs[a].value, cols[c].value))
      continue;
    when_term(&u[k], term, sizeof term);
    if (!term[0]) {
      key[0] = '\0';
      return true;
    }
    if (any && !strstr(key, term)) {
      append(key, KEY_MAX, " | ");
      append(key, KEY_MAX, term);
    } else if (!any) {
      append(key, KEY_MAX, term);
    }
    any = true;
  }
  if (any && strchr(key, '|')) {
    char wrapped[KEY_MAX + 2];
    snprintf(wrapped, sizeof wrapped, "(%s)", key);
    if (strlen(wrapped) >= KEY_MAX)
      fail("a condition longer than %d bytes", KEY_MAX);
    strcpy(key, wrapped);
  }
  return any;
}

static void list_clause(char *buf, const char *prop, const ht_choice *c, int n, const bool *in)
{
  bool first = true;
  append(buf, EXPR_MAX, prop);
  append(buf, EXPR_MAX, " {");
  for (int i = 0; i < n; i++)
    if (in[i]) {
      append(buf, EXPR_MAX, first ? "" : ", ");
      append(buf, EXPR_MAX, c[i].name);
      first = false;
    }
  append(buf, EXPR_MAX, "}");
}

/* The visible key of parameter `id` into `expr`; false where the
 * parameter is always used (no key). The cells with the same condition
 * are written as rectangles: the algorithms that show it in the same
 * colour modes, those modes, the condition. */
static bool visible_expression(ht_param_id id, char *expr)
{
  static char keys[MAX_ALGORITHMS][MAX_COLORS][KEY_MAX];
  static bool shown[MAX_ALGORITHMS][MAX_COLORS];
  const ht_param *d = ht_param_info(id);
  const ht_param *alg_p = ht_param_info(HT_PARAM_ALGORITHM), *col_p = ht_param_info(HT_PARAM_COLOR);
  bool everywhere = true;

  for (int a = 0; a < nalg; a++)
    for (int c = 0; c < ncol; c++) {
      shown[a][c] = cell(id, a, c, keys[a][c]);
      if (shown[a][c] != ht_param_used(id, algs[a].value, (ht_color_mode)cols[c].value))
        fail("%s, algorithm %s, colour mode %s: its conditions (ht_param_uses) and ht_param_used differ", d->name,
             algs[a].name, cols[c].name);
      everywhere = everywhere && shown[a][c] && !keys[a][c][0];
    }
  if (everywhere)
    return false;

  /* the rectangles of each condition, in the order the cells come */
  static bool done[MAX_ALGORITHMS][MAX_COLORS];
  char terms[MAX_ALGORITHMS * MAX_COLORS][EXPR_MAX / 4];
  int nterms = 0;
  memset(done, 0, sizeof done);
  for (int a0 = 0; a0 < nalg; a0++)
    for (int c0 = 0; c0 < ncol; c0++) {
      if (!shown[a0][c0] || done[a0][c0])
        continue;
      const char *key = keys[a0][c0];
      /* the colour modes of a0 with this condition ... */
      bool colors[MAX_COLORS], in_algs[MAX_ALGORITHMS];
      int ncolors = 0, nalgs = 0;
      for (int c = 0; c < ncol; c++) {
        colors[c] = shown[a0][c] && !done[a0][c] && strcmp(keys[a0][c], key) == 0;
        ncolors += colors[c];
      }
      /* ... and every algorithm with this condition in just those */
      for (int a = 0; a < nalg; a++) {
        bool same = true;
        for (int c = 0; c < ncol && same; c++)
          same = colors[c] == (shown[a][c] && !done[a][c] && strcmp(keys[a][c], key) == 0);
        in_algs[a] = same;
        nalgs += same;
      }
      for (int a = 0; a < nalg; a++)
        for (int c = 0; c < ncol; c++)
          if (in_algs[a] && colors[c])
            done[a][c] = true;

      char term[EXPR_MAX] = "";
      int pieces = 0;
      if (nalgs < nalg) {
        list_clause(term, alg_p->name, algs, nalg, in_algs);
        pieces++;
      }
      if (ncolors < ncol) {
        append(term, EXPR_MAX, pieces ? " & " : "");
        list_clause(term, col_p->name, cols, ncol, colors);
        pieces++;
      }
      if (key[0]) {
        append(term, EXPR_MAX, pieces ? " & " : "");
        append(term, EXPR_MAX, key);
        pieces++;
      }
      if (strlen(term) + 3 >= sizeof terms[0])
        fail("%s: a term longer than %zu bytes", d->name, sizeof terms[0]);
      /* parenthesised where it is one of several and has several pieces */
      snprintf(terms[nterms++], sizeof terms[0], pieces > 1 ? "(%s)" : "%s", term);
    }
  expr[0] = '\0';
  for (int t = 0; t < nterms; t++) {
    const char *s = terms[t];
    size_t len = strlen(s);
    if (nterms == 1 && s[0] == '(' && s[len - 1] == ')') { /* alone: no parentheses */
      char inner[EXPR_MAX];
      snprintf(inner, sizeof inner, "%.*s", (int)(len - 2), s + 1);
      append(expr, EXPR_MAX, inner);
    } else {
      append(expr, EXPR_MAX, t ? " | " : "");
      append(expr, EXPR_MAX, s);
    }
  }
  return true;
}

/* ------------------------------------------------------- the block */

/* A chant line up to its default: the macro, the C identifier and the
 * label, marked for translation in the op's domain. */
static void put_head(const char *macro, const ht_param *d)
{
  fprintf(out, "%s (", macro);
  put_identifier(d->name, false);
  fputs(", _(\"", out);
  put_c_string(d->label);
  fputs("\")", out);
}

/* "  value_range (0, 1000000000)\n" */
static void put_range(const char *macro, double lo, double hi, bool integer)
{
  fprintf(out, "  %s (", macro);
  integer ? put_int(lo) : put_double(lo);
  fputs(", ", out);
  integer ? put_int(hi) : put_double(hi);
  fputs(")\n", out);
}

static void put_property(ht_param_id id)
{
  const ht_param *d = ht_param_info(id);
  const bool integer = d->type == HT_TYPE_INT || d->type == HT_TYPE_SEED;
  char expr[EXPR_MAX];

  switch (d->type) {
  case HT_TYPE_INT:
  case HT_TYPE_SEED:
  case HT_TYPE_NUMBER:
    put_head(integer ? "property_int" : "property_double", d);
    fputs(", ", out);
    integer ? put_int(d->def) : put_double(d->def);
    fputs(")\n", out);
    break;
  case HT_TYPE_BOOL:
    put_head("property_boolean", d);
    fprintf(out, ", %s)\n", d->def != 0.0 ? "TRUE" : "FALSE");
    break;
  case HT_TYPE_CHOICE: {
    const ht_choice *c = ht_choice_by_value(d->list, (int)d->def);
    put_head("property_enum", d);
    fputs(",\n               Halftone", out);
    put_identifier(d->name, true);
    fputs(", halftone_", out);
    put_identifier(d->name, false);
    fprintf(out, ",\n               %d) /* %s */\n", (int)d->def, c ? c->name : "?");
    break;
  }
  case HT_TYPE_TEXT:
    put_head("property_string", d);
    fputs(", \"", out);
    put_c_string(d->def_text ? d->def_text : "");
    fputs("\")\n", out);
    break;
  }
  fputs("  description (_(\"", out);
  put_c_string(d->help);
  fputs("\"))\n", out);

  if (integer || d->type == HT_TYPE_NUMBER) {
    /* every front end takes the description's range whole (the seed's
     * too): a property that would cut it is a mistake in the description */
    if (integer && (d->max > OP_INT_MAX || d->min < -OP_INT_MAX - 1))
      fail("%s: %.17g..%.17g does not fit GEGL's int", d->name, d->min, d->max);
    const double max = d->max;
    const double ui_max = d->ui_max;
    put_range("value_range", d->min, max, integer);
    if (d->ui_min != d->min || ui_max != max)
      put_range("ui_range", d->ui_min, ui_max, integer);
    if (d->type == HT_TYPE_NUMBER && d->digits > 0)
      fprintf(out, "  ui_digits (%d)\n", d->digits);
  }
  if (visible_expression(id, expr)) {
    fputs("  ui_meta (\"visible\", \"", out);
    put_c_string(expr);
    fputs("\")\n", out);
  }
  fputs("\n", out);
}

int main(int argc, char **argv)
{
  out = stdout;
  if (argc > 2) {
    fprintf(stderr, "usage: gen-op-properties [OUTPUT]\n");
    return 2;
  }
  if (argc == 2 && !(out = fopen(argv[1], "w"))) {
    perror(argv[1]);
    return 1;
  }
  algs = ht_choices(HT_LIST_ALGORITHMS, &nalg);
  cols = ht_choices(HT_LIST_COLOR_MODES, &ncol);
  if (!algs || !cols || nalg > MAX_ALGORITHMS || ncol > MAX_COLORS)
    fail("the algorithm or colour mode list is empty or longer than %d", MAX_ALGORITHMS);

  fputs("/* halftone:dither's properties, made from the library's description of\n"
        " * its parameters (core/describe.c) by plugin/gen-op-properties.c at\n"
        " * build time: do not edit. Read by halftone-dither.c inside\n"
        " * GEGL_PROPERTIES; with HALFTONE_OP_LIST_TYPES defined, the enum types\n"
        " * of the choice parameters instead (HALFTONE_LIST_TYPE (function,\n"
        " * TypeName, parameter id)). */\n\n",
        out);

  fputs("#ifdef HALFTONE_OP_LIST_TYPES\n\n", out);
  for (int i = 0; i < HT_PARAM_COUNT; i++) {
    const ht_param *d = ht_param_info((ht_param_id)i);
    if (d->type != HT_TYPE_CHOICE)
      continue;
    fputs("HALFTONE_LIST_TYPE (halftone_", out);
    put_identifier(d->name, false);
    fputs(", Halftone", out);
    put_identifier(d->name, true);
    fprintf(out, ", %d) /* %s */\n", i, d->name);
  }
  fputs("\n#else\n\n", out);

  /* in the dialog's order: by group, in each in the description's order */
  for (int g = HT_GROUP_ALGORITHM; g <= HT_GROUP_ADVANCED; g++)
    for (int i = 0; i < HT_PARAM_COUNT; i++)
      if ((int)ht_param_info((ht_param_id)i)->group == g)
        put_property((ht_param_id)i);

  fputs("#endif /* HALFTONE_OP_LIST_TYPES */\n", out);
  if (fflush(out) != 0 || ferror(out) || (out != stdout && fclose(out) != 0)) {
    perror(argc == 2 ? argv[1] : "stdout");
    return 1;
  }
  return 0;
}
