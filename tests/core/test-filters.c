/* The built-in filter tables against their text form: formatting a
 * built-in and parsing it back gives the same taps (offsets, numerators,
 * Q12 weights), divisor, reach and delay; names round-trip; and the
 * derived delays are the paper's (2 for Floyd-Steinberg, 3 for JJN). */
#include "ht-test.h"

int main(void)
{
  for (int i = 0; i < HT_FILTER_COUNT_BUILTIN; i++) {
    const ht_filter *f = ht_filter_builtin((ht_filter_id)i);
    CHECK(f != NULL, "built-in %d missing", i);
    if (!f)
      continue;
    char text[512], err[256];
    CHECK(ht_filter_format(f, text, sizeof text) == HT_OK, "%s: format failed", f->name);
    ht_filter g;
    ht_status s = ht_filter_parse(text, &g, err, sizeof err);
    CHECK(s == HT_OK, "%s: \"%s\" does not parse: %s", f->name, text, err);
    if (s != HT_OK)
      continue;
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
    /* the text form is stable */
    char again[512];
    CHECK(ht_filter_format(&g, again, sizeof again) == HT_OK && strcmp(text, again) == 0, "%s: \"%s\" vs \"%s\"",
          f->name, text, again);
    CHECK(ht_filter_by_name(f->name) == f, "%s: lookup by name", f->name);
    int qsum = 0;
    for (int t = 0; t < f->ntaps; t++)
      qsum += f->taps[t].q;
    CHECK(qsum <= 4096, "%s: weights sum to %d/4096", f->name, qsum);
  }
  CHECK(ht_filter_builtin(HT_FILTER_FLOYD_STEINBERG)->delay == 2, "Floyd-Steinberg delay");
  CHECK(ht_filter_builtin(HT_FILTER_JARVIS_JUDICE_NINKE)->delay == 3, "JJN delay");
  CHECK(ht_filter_builtin(HT_FILTER_CUSTOM) == NULL, "HT_FILTER_CUSTOM is not a built-in");
  CHECK(ht_filter_by_name("no-such-filter") == NULL, "unknown name");
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
  return test_finish("test-filters");
}
