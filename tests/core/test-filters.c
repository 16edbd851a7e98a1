/* The built-in filters, every one the library lists (HT_LIST_FILTERS):
 *  - each row is a filter the rules allow: weights on pixels not yet
 *    processed and in reach, ordered by (dy, dx), each positive, their
 *    sum at most the divisor;
 *  - its derived data (number of weights, Q12 weights, reach, delay) is
 *    what a derivation written here from the definitions gives, and what
 *    the parser gives for the filter's own text (ht_filter_format, then
 *    ht_filter_parse);
 *  - it is in every list under one id and one name: ht_filter_builtin,
 *    ht_filter_by_name, HT_LIST_ALGORITHMS, ht_params_set_algorithm; and
 *    no built-in filter is missing from HT_LIST_FILTERS;
 *  - the delays are the paper's (2 for Floyd-Steinberg, 3 for JJN), and
 *    the derivation here agrees with the parser's on custom filters. */
#include "ht-test.h"

/* ------------------------------------------ the derivation written here */

typedef struct {
  int left, right, down, delay;
} derived;

/* Reach: how far the weights go left, right and down of the current
 * pixel. Delay: the k of Kasagi et al.'s k-delay parallel scan (Sec.
 * III), in which pixel (x, y) is processed at step x + k y, so that row
 * y+1 does column x once row y has done column x + k - 1. A pixel's value
 * is final once every pixel that passes error to it is done: the pixel
 * (x - dx, y - dy) of a weight (dx, dy) runs at step x - dx + k (y - dy),
 * which must come before x + k y. The delay is the least k >= 1 for which
 * that holds for every weight, found by trying k = 1, 2, ... */
static derived derive_here(const ht_filter *f)
{
  derived d = { 0, 0, 0, 0 };
  for (int i = 0; i < f->ntaps; i++) {
    const int dx = f->taps[i].dx, dy = f->taps[i].dy;
    if (dx < 0 && -dx > d.left)
      d.left = -dx;
    if (dx > 0 && dx > d.right)
      d.right = dx;
    if (dy > d.down)
      d.down = dy;
  }
  for (int k = 1; k <= HT_FILTER_MAX_LEFT + 1 && !d.delay; k++) {
    bool before = true;
    for (int i = 0; i < f->ntaps; i++) {
      const long x = 100, y = 100; /* any pixel: only the differences count */
      const long source_step = (x - f->taps[i].dx) + k * (y - f->taps[i].dy), step = x + k * y;
      before = before && source_step < step;
    }
    if (before)
      d.delay = k;
  }
  return d;
}

static void check_derived(const ht_filter *f, const char *what)
{
  const derived d = derive_here(f);
  CHECK(d.delay >= 1, "%s: no delay up to %d makes the scan valid", what, HT_FILTER_MAX_LEFT + 1);
  CHECK(f->reach_left == d.left && f->reach_right == d.right && f->reach_down == d.down,
        "%s: reach %d/%d/%d, derived here %d/%d/%d", what, f->reach_left, f->reach_right, f->reach_down, d.left,
        d.right, d.down);
  CHECK(f->delay == d.delay, "%s: delay %d, derived here %d", what, f->delay, d.delay);
}

/* The rules of docs/coefficients.md and docs/arithmetic.md, on a filter's
 * taps and its Q12 weights. */
static void check_rules(const ht_filter *f, const char *what)
{
  CHECK(f->ntaps >= 1 && f->ntaps <= HT_FILTER_MAX_TAPS, "%s: %d weights", what, f->ntaps);
  CHECK(f->den >= 1 && f->den <= HT_FILTER_MAX_DIVISOR, "%s: divisor %d", what, (int)f->den);
  long long sum = 0, qsum = 0;
  for (int t = 0; t < f->ntaps && t < HT_FILTER_MAX_TAPS; t++) {
    const ht_tap *a = &f->taps[t];
    CHECK(a->dy >= 0 && a->dy <= HT_FILTER_MAX_DOWN && a->dx >= -HT_FILTER_MAX_LEFT && a->dx <= HT_FILTER_MAX_RIGHT,
          "%s: weight %d at (%d, %d) is out of reach", what, t + 1, a->dx, a->dy);
    CHECK(a->dy > 0 || a->dx > 0, "%s: weight %d at (%d, %d) is on a pixel already processed", what, t + 1, a->dx,
          a->dy);
    CHECK(a->num >= 1 && a->num <= HT_FILTER_MAX_WEIGHT, "%s: weight %d is %d", what, t + 1, (int)a->num);
    if (t > 0) {
      const ht_tap *b = &f->taps[t - 1];
      CHECK(b->dy < a->dy || (b->dy == a->dy && b->dx < a->dx),
            "%s: weight %d at (%d, %d) does not follow weight %d at (%d, %d) in (dy, dx) order", what, t + 1, a->dx,
            a->dy, t, b->dx, b->dy);
    }
    /* Q12: within one unit of num * 4096 / den (rounded, or nudged by one) */
    const long long exact = (long long)a->num * 4096, stored = (long long)a->q * f->den;
    CHECK(stored - exact < f->den && exact - stored < f->den, "%s: weight %d/%d stored as %d/4096", what,
          (int)a->num, (int)f->den, (int)a->q);
    sum += a->num;
    qsum += a->q;
  }
  CHECK(sum <= f->den, "%s: weights sum to %lld, more than the divisor %d", what, sum, (int)f->den);
  /* the stored weights keep the tone: their sum is the sum's Q12, half up */
  const long long want = f->den > 0 ? (2 * sum * 4096 + f->den) / (2 * (long long)f->den) : -1;
  CHECK(qsum == want, "%s: Q12 weights sum to %lld, not %lld", what, qsum, want);
}

/* The numbers a help text gives ("7 weights over 2 rows") are the row's. */
static void check_help(const ht_choice *c, const ht_filter *f)
{
  const char *w = strstr(c->help, " weights"), *o = strstr(c->help, " over ");
  int rows;
  if (w) {
    const char *d = w;
    while (d > c->help && d[-1] >= '0' && d[-1] <= '9')
      d--;
    if (d < w)
      CHECK(atoi(d) == f->ntaps, "%s: the help says %d weights, the filter has %d", c->name, atoi(d), f->ntaps);
  }
  if (o && sscanf(o, " over %d rows", &rows) == 1)
    CHECK(rows == f->reach_down + 1, "%s: the help says %d rows, the filter has %d", c->name, rows,
          f->reach_down + 1);
}

/* The filter's text, parsed, is the same filter: the same weights (offsets,
 * numerators, Q12 values, in order), divisor, reach and delay; the text is
 * stable. */
static void check_text(const ht_filter *f)
{
  char text[512], err[256];
  CHECK(ht_filter_format(f, text, sizeof text) == HT_OK, "%s: format failed", f->name);
  ht_filter g;
  ht_status s = ht_filter_parse(text, &g, err, sizeof err);
  CHECK(s == HT_OK, "%s: \"%s\" does not parse: %s", f->name, text, err);
  if (s != HT_OK)
    return;
  CHECK(g.ntaps == f->ntaps, "%s: %d taps parsed, %d built in", f->name, g.ntaps, f->ntaps);
  CHECK(g.den == f->den, "%s: divisor %d vs %d", f->name, g.den, f->den);
  for (int t = 0; t < f->ntaps && t < g.ntaps; t++)
    CHECK(g.taps[t].dx == f->taps[t].dx && g.taps[t].dy == f->taps[t].dy && g.taps[t].num == f->taps[t].num &&
              g.taps[t].q == f->taps[t].q,
          "%s: tap %d: parsed (%d, %d) %d q%d, built in (%d, %d) %d q%d", f->name, t, g.taps[t].dx, g.taps[t].dy,
          g.taps[t].num, g.taps[t].q, f->taps[t].dx, f->taps[t].dy, f->taps[t].num, f->taps[t].q);
  CHECK(g.reach_left == f->reach_left && g.reach_right == f->reach_right && g.reach_down == f->reach_down,
        "%s: reach parsed %d/%d/%d, built in %d/%d/%d", f->name, g.reach_left, g.reach_right, g.reach_down,
        f->reach_left, f->reach_right, f->reach_down);
  CHECK(g.delay == f->delay, "%s: delay parsed %d, built in %d", f->name, g.delay, f->delay);
  char again[512];
  CHECK(ht_filter_format(&g, again, sizeof again) == HT_OK && strcmp(text, again) == 0, "%s: \"%s\" vs \"%s\"",
        f->name, text, again);
}

/* The filter is in every list under its one id and name. */
static void check_lists(const ht_choice *c, const ht_filter *f)
{
  CHECK((int)f->id == c->value, "%s: listed as %d, its id is %d", c->name, c->value, (int)f->id);
  CHECK(strcmp(f->name, c->name) == 0, "filter %d: listed as %s, named %s", c->value, c->name, f->name);
  CHECK(ht_filter_by_name(c->name) == f, "%s: lookup by name", c->name);
  CHECK(c->label && c->label[0] && c->help, "%s: no label", c->name);
  CHECK(c->value < HT_ALGORITHM_LES, "%s: id %d is not below the search methods' values", c->name, c->value);
  const ht_choice *a = ht_choice_by_value(HT_LIST_ALGORITHMS, c->value);
  CHECK(a && strcmp(a->name, c->name) == 0, "%s: not in HT_LIST_ALGORITHMS under %d", c->name, c->value);
  ht_params p;
  ht_params_init(&p);
  p.method = HT_METHOD_DBS;
  CHECK(ht_params_set_algorithm(&p, c->value) == HT_OK && p.method == HT_METHOD_ERROR_DIFFUSION &&
            p.filter.id == f->id && p.filter.den == f->den && p.filter.ntaps == f->ntaps &&
            p.filter.delay == f->delay && ht_params_algorithm(&p) == c->value,
        "%s: ht_params_set_algorithm(%d)", c->name, c->value);
}

int main(void)
{
  int n = 0;
  const ht_choice *c = ht_choices(HT_LIST_FILTERS, &n);
  CHECK(c && n >= 2 && c[n - 1].value == HT_FILTER_CUSTOM, "HT_LIST_FILTERS: %d entries, custom not last", n);
  int nbuiltin = 0;
  for (int i = 0; c && i < n; i++) {
    for (int j = 0; j < i; j++)
      CHECK(c[j].value != c[i].value && strcmp(c[j].name, c[i].name) != 0, "filters %d and %d: %d %s, %d %s", j, i,
            c[j].value, c[j].name, c[i].value, c[i].name);
    if (c[i].value == HT_FILTER_CUSTOM)
      continue;
    nbuiltin++;
    const ht_filter *f = ht_filter_builtin((ht_filter_id)c[i].value);
    CHECK(f != NULL, "%s (%d) is listed but no built-in filter", c[i].name, c[i].value);
    if (!f)
      continue;
    check_lists(&c[i], f);
    check_rules(f, f->name);
    check_derived(f, f->name);
    check_help(&c[i], f);
    check_text(f);
  }
  CHECK(nbuiltin == test_nbuiltin(), "%d built-in filters listed, the tests' helper walks %d", nbuiltin,
        test_nbuiltin());
  /* no built-in filter is missing from the list: every id a filter can
   * have is below the search methods' values (halftone.h) */
  for (int id = 0; id <= HT_ALGORITHM_DBS + 1; id++) {
    const ht_filter *f = ht_filter_builtin((ht_filter_id)id);
    CHECK(!f || ((int)f->id == id && ht_choice_by_value(HT_LIST_FILTERS, id) != NULL),
          "built-in filter %d (%s) is not in HT_LIST_FILTERS", id, f ? f->name : "");
  }
  CHECK(ht_filter_builtin(HT_FILTER_CUSTOM) == NULL, "HT_FILTER_CUSTOM is not a built-in");
  CHECK(ht_filter_by_name("custom") == NULL && ht_filter_by_name("no-such-filter") == NULL &&
            ht_filter_by_name(NULL) == NULL,
        "unknown names");

  /* the paper's delays */
  CHECK(ht_filter_builtin(HT_FILTER_FLOYD_STEINBERG)->delay == 2, "Floyd-Steinberg delay");
  CHECK(ht_filter_builtin(HT_FILTER_JARVIS_JUDICE_NINKE)->delay == 3, "JJN delay");
  /* the example of the documentation is Floyd-Steinberg */
  ht_filter fs;
  char err[256];
  CHECK(ht_filter_parse("- * 7; 3 5 1 / 16", &fs, err, sizeof err) == HT_OK, "%s", err);
  const ht_filter *b = ht_filter_builtin(HT_FILTER_FLOYD_STEINBERG);
  bool same = fs.ntaps == b->ntaps && fs.den == b->den;
  for (int t = 0; same && t < b->ntaps; t++)
    same = fs.taps[t].dx == b->taps[t].dx && fs.taps[t].dy == b->taps[t].dy && fs.taps[t].num == b->taps[t].num &&
           fs.taps[t].q == b->taps[t].q;
  CHECK(same, "parsed Floyd-Steinberg differs from the built-in");

  /* the parser's derivation against the one here, on shapes the built-in
   * filters do not have: nothing below, reach 4 two rows down, the whole
   * grid, weights far left on rows 2 and 3 */
  static const char *const customs[] = {
    "* 1 / 2",
    "*; 1",
    "- * 0 3; 2 0 1 / 8",
    "- - - - * 5; 0 0 0 0 0 0 0 0 0; 3 0 0 0 0 0 0 0 1 / 16",
    "- - - - * 1 2 3 4; 1 1 1 1 1 1 1 1 1; 1 0 0 0 2 0 0 0 1; 1 1 1 1 1 1 1 1 1 / 64",
    "- - - * 1; 0 0 1 0 0; 1 0 0 0 0 / 4",
    "- - - - * 1; 0 0 0 0 0 0; 0 0 0 0 0 0; 1 0 0 0 0 0 / 2",
    "* 0 0 0 1; 0; 0; 0 / 2",
  };
  for (size_t i = 0; i < sizeof customs / sizeof customs[0]; i++) {
    ht_filter f;
    CHECK(ht_filter_parse(customs[i], &f, err, sizeof err) == HT_OK, "\"%s\": %s", customs[i], err);
    check_rules(&f, customs[i]);
    check_derived(&f, customs[i]);
  }
  return test_finish("test-filters");
}
