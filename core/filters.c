/* Error filters: the built-in table, and the parser for custom ones.
 * A filter is data only; no algorithm loop knows any filter by name. A
 * new built-in filter is one row of `builtin` under a new id of
 * ht_filter_id (9 on; 8 is custom), and its label's translations in po/;
 * the lists and the tests take it from there. */
#include "filter.h"
#include "shared/fixed.h"
#include "job.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_(text) text
/* A macro's value as a string literal, for messages. */
#define STR_(x) #x
#define STR(x) STR_(x)
/* A weight of a built-in filter: the error of the current pixel goes to
 * (x + dx, y + dy) with weight num / the row's divisor. */
#define TAP(dx, dy, num) { (dx), (dy), (num) }

/* One row per built-in filter: its id, name, label for menus and help (the
 * choice), its divisor and its weights, ordered by (dy, dx) and ended by the
 * first of weight 0. Everything else a filter holds (the number of weights,
 * their Q12 values, the reach and the delay) is derived from these when the
 * table is first used (make_tables), by the code that derives them for a
 * parsed filter; the test suite checks the result against a derivation of its
 * own and against the parsed form of the filter's text. */
typedef struct {
  ht_choice choice;
  int32_t den;
  struct {
    int8_t dx, dy;
    int32_t num;
  } taps[HT_FILTER_MAX_TAPS];
} filter_row;

static const filter_row builtin[] = {
  { { HT_FILTER_FLOYD_STEINBERG, "floyd-steinberg", N_("Floyd–Steinberg"), "4 weights over 2 rows (1976)" }, 16,
    { TAP(1, 0, 7), TAP(-1, 1, 3), TAP(0, 1, 5), TAP(1, 1, 1) } },
  { { HT_FILTER_JARVIS_JUDICE_NINKE, "jarvis-judice-ninke", N_("Jarvis–Judice–Ninke"), "12 weights over 3 rows" }, 48,
    { TAP(1, 0, 7), TAP(2, 0, 5),
      TAP(-2, 1, 3), TAP(-1, 1, 5), TAP(0, 1, 7), TAP(1, 1, 5), TAP(2, 1, 3),
      TAP(-2, 2, 1), TAP(-1, 2, 3), TAP(0, 2, 5), TAP(1, 2, 3), TAP(2, 2, 1) } },
  { { HT_FILTER_STUCKI, "stucki", N_("Stucki"), "12 weights over 3 rows, sharper than Jarvis-Judice-Ninke" }, 42,
    { TAP(1, 0, 8), TAP(2, 0, 4),
      TAP(-2, 1, 2), TAP(-1, 1, 4), TAP(0, 1, 8), TAP(1, 1, 4), TAP(2, 1, 2),
      TAP(-2, 2, 1), TAP(-1, 2, 2), TAP(0, 2, 4), TAP(1, 2, 2), TAP(2, 2, 1) } },
  { { HT_FILTER_BURKES, "burkes", N_("Burkes"), "7 weights over 2 rows" }, 32,
    { TAP(1, 0, 8), TAP(2, 0, 4),
      TAP(-2, 1, 2), TAP(-1, 1, 4), TAP(0, 1, 8), TAP(1, 1, 4), TAP(2, 1, 2) } },
  { { HT_FILTER_SIERRA_3, "sierra-3", N_("Sierra (three rows)"), "10 weights over 3 rows" }, 32,
    { TAP(1, 0, 5), TAP(2, 0, 3),
      TAP(-2, 1, 2), TAP(-1, 1, 4), TAP(0, 1, 5), TAP(1, 1, 4), TAP(2, 1, 2),
      TAP(-1, 2, 2), TAP(0, 2, 3), TAP(1, 2, 2) } },
  { { HT_FILTER_SIERRA_2, "sierra-2", N_("Sierra (two rows)"), "7 weights over 2 rows" }, 16,
    { TAP(1, 0, 4), TAP(2, 0, 3),
      TAP(-2, 1, 1), TAP(-1, 1, 2), TAP(0, 1, 3), TAP(1, 1, 2), TAP(2, 1, 1) } },
  { { HT_FILTER_SIERRA_LITE, "sierra-lite", N_("Sierra Lite"), "3 weights over 2 rows, the lightest" }, 4,
    { TAP(1, 0, 2), TAP(-1, 1, 1), TAP(0, 1, 1) } },
  { { HT_FILTER_ATKINSON, "atkinson", N_("Atkinson"), "6 weights of 1/8 over 3 rows: passes on 3/4 of the error" }, 8,
    { TAP(1, 0, 1), TAP(2, 0, 1),
      TAP(-1, 1, 1), TAP(0, 1, 1), TAP(1, 1, 1), TAP(0, 2, 1) } },
};
#define NBUILTIN ((int)(sizeof builtin / sizeof builtin[0]))

/* The list HT_LIST_FILTERS: the built-in filters, then custom. */
static const ht_choice custom_choice = { HT_FILTER_CUSTOM, "custom", N_("Custom coefficients"),
                                         "your own filter, from --coefficients" };

/* The built-in filters and their list, made from `builtin` once. */
static ht_filter filters[NBUILTIN];
static ht_choice filter_choices[NBUILTIN + 1];
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static void quantize_weights(ht_filter *f);

static void make_tables(void)
{
  for (int i = 0; i < NBUILTIN; i++) {
    const filter_row *r = &builtin[i];
    ht_filter *f = &filters[i];
    memset(f, 0, sizeof *f);
    f->id = (ht_filter_id)r->choice.value;
    snprintf(f->name, sizeof f->name, "%s", r->choice.name);
    f->den = r->den;
    while (f->ntaps < HT_FILTER_MAX_TAPS && r->taps[f->ntaps].num != 0) {
      f->taps[f->ntaps] = (ht_tap){ r->taps[f->ntaps].dx, r->taps[f->ntaps].dy, r->taps[f->ntaps].num, 0 };
      f->ntaps++;
    }
    quantize_weights(f);
    ht_filter_derive(f);
    filter_choices[i] = r->choice;
  }
  filter_choices[NBUILTIN] = custom_choice;
}

const ht_choice *ht_filter_choices(int *count)
{
  pthread_once(&tables_once, make_tables);
  *count = NBUILTIN + 1;
  return filter_choices;
}

const ht_filter *ht_filter_builtin(ht_filter_id id)
{
  pthread_once(&tables_once, make_tables);
  for (int i = 0; i < NBUILTIN; i++)
    if (filters[i].id == id)
      return &filters[i];
  return NULL;
}

const ht_filter *ht_filter_by_name(const char *name)
{
  if (!name)
    return NULL;
  pthread_once(&tables_once, make_tables);
  for (int i = 0; i < NBUILTIN; i++)
    if (strcmp(filters[i].name, name) == 0)
      return &filters[i];
  return NULL;
}

bool ht_filter_check(const ht_filter *f, char *msg)
{
  if (f->ntaps <= 0 || f->ntaps > HT_FILTER_MAX_TAPS || f->den <= 0) {
    ht_set_msg(msg, "filter has no weights or a non-positive divisor");
    return false;
  }
  int64_t qsum = 0;
  for (int i = 0; i < f->ntaps; i++) {
    const ht_tap *t = &f->taps[i];
    if (t->dy < 0 || t->dy > HT_FILTER_MAX_DOWN || t->dx > HT_FILTER_MAX_RIGHT || -t->dx > HT_FILTER_MAX_LEFT ||
        (t->dy == 0 && t->dx <= 0) || t->q < 0) {
      ht_set_msg(msg, "filter weight %d points at a pixel already processed or too far away", i + 1);
      return false;
    }
    qsum += t->q;
  }
  if (qsum > HT_Q_ONE) {
    ht_set_msg(msg, "filter weights sum to more than 1");
    return false;
  }
  return true;
}

void ht_filter_derive(ht_filter *f)
{
  int left = 0, right = 0, down = 0, delay = 1;
  int row_left[HT_FILTER_MAX_DOWN + 1] = { 0 };
  for (int i = 0; i < f->ntaps; i++) {
    const ht_tap *t = &f->taps[i];
    if (-t->dx > left)
      left = -t->dx;
    if (t->dx > right)
      right = t->dx;
    if (t->dy > down)
      down = t->dy;
    if (t->dy > 0 && -t->dx > row_left[t->dy])
      row_left[t->dy] = -t->dx;
  }
  /* Row y+dy at column x collects from row y up to column x + row_left:
   * with a delay of k columns per row, dy * k >= row_left + 1. */
  for (int dy = 1; dy <= down; dy++) {
    int need = (row_left[dy] + 1 + dy - 1) / dy;
    if (need > delay)
      delay = need;
  }
  f->reach_left = left;
  f->reach_right = right;
  f->reach_down = down;
  f->delay = delay;
}

/* Q12 weights rounded half up, then corrected (largest remainders) so
 * that they sum to the rounded Q12 sum: a filter keeps its tone. */
static void quantize_weights(ht_filter *f)
{
  int64_t sum_num = 0, sum_q = 0;
  for (int i = 0; i < f->ntaps; i++) {
    f->taps[i].q = HT_Q((int64_t)f->taps[i].num, (int64_t)f->den);
    sum_num += f->taps[i].num;
    sum_q += f->taps[i].q;
  }
  int64_t target = HT_Q(sum_num, (int64_t)f->den);
  while (sum_q != target) {
    int step = sum_q < target ? 1 : -1;
    int best = -1;
    int64_t best_rem = 0;
    for (int i = 0; i < f->ntaps; i++) {
      /* remainder of the exact value over the stored one, in 1/den units */
      int64_t rem = (int64_t)f->taps[i].num * HT_Q_ONE - (int64_t)f->taps[i].q * f->den;
      if (step < 0)
        rem = -rem;
      if (f->taps[i].num > 0 && (best < 0 || rem > best_rem)) {
        best = i;
        best_rem = rem;
      }
    }
    if (best < 0)
      break;
    f->taps[best].q += step;
    sum_q += step;
  }
}

static int fail(char *err, size_t size, const char *text, const char *at, const char *what)
{
  if (err && size)
    snprintf(err, size, "custom coefficients, position %d: %s", (int)(at - text) + 1, what);
  return HT_ERR_BAD_COEFFICIENTS;
}

static const char *skip_space(const char *p)
{
  while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
    p++;
  return p;
}

ht_status ht_filter_parse(const char *text, ht_filter *out, char *err, size_t err_size)
{
  if (err && err_size)
    err[0] = '\0';
  if (!text || !out) {
    if (err && err_size)
      snprintf(err, err_size, "custom coefficients: no string given");
    return HT_ERR_INVALID_ARGUMENT;
  }
  ht_filter f;
  memset(&f, 0, sizeof f);
  f.id = HT_FILTER_CUSTOM;
  snprintf(f.name, sizeof f.name, "custom");

  const char *p = skip_space(text);
  if (!*p)
    return (ht_status)fail(err, err_size, text, p, "empty string; expected e.g. \"- * 7; 3 5 1 / 16\"");

  int row = 0, col = 0, star_col = -1;
  int64_t sum = 0;
  const char *divisor_at = NULL;
  int64_t divisor = 0;
  bool any_weight_on_row = false;

  for (;;) {
    p = skip_space(p);
    const char *tok = p;
    if (*p == '\0')
      break;
    if (*p == ';') {
      if (row == 0 && star_col < 0)
        return (ht_status)fail(err, err_size, text, tok, "the first row has no '*' marking the current pixel");
      if (col == 0)
        return (ht_status)fail(err, err_size, text, tok, "empty row");
      row++;
      col = 0;
      any_weight_on_row = false;
      if (row > HT_FILTER_MAX_DOWN)
        return (ht_status)fail(err, err_size, text, tok, "filter too large: at most 3 rows below the current one");
      p++;
      continue;
    }
    if (*p == '/') {
      p = skip_space(p + 1);
      divisor_at = p;
      if (*p == '-' && isdigit((unsigned char)p[1]))
        return (ht_status)fail(err, err_size, text, p, "the divisor must be positive");
      if (!isdigit((unsigned char)*p))
        return (ht_status)fail(err, err_size, text, p, "expected a number after '/'");
      errno = 0;
      char *end;
      long long d = strtoll(p, &end, 10);
      /* the limit is what the largest weights sum to: every divisor the
       * sum gives when "/ DEN" is left out can also be written */
      if (errno || d > HT_FILTER_MAX_DIVISOR) {
        char what[64];
        snprintf(what, sizeof what, "divisor too large (at most %d)", HT_FILTER_MAX_DIVISOR);
        return (ht_status)fail(err, err_size, text, p, what);
      }
      if (d <= 0)
        return (ht_status)fail(err, err_size, text, p, "the divisor must be positive");
      divisor = d;
      p = skip_space(end);
      if (*p)
        return (ht_status)fail(err, err_size, text, p, "unexpected text after the divisor");
      break;
    }
    if (*p == '*') {
      if (row > 0)
        return (ht_status)fail(err, err_size, text, tok, "'*' (the current pixel) belongs on the first row only");
      if (star_col >= 0)
        return (ht_status)fail(err, err_size, text, tok, "a second '*'; the current pixel is marked once");
      star_col = col++;
      p++;
      continue;
    }
    if (*p == '-' && !isdigit((unsigned char)p[1])) {
      if (row == 0 && star_col >= 0)
        return (ht_status)fail(err, err_size, text, tok, "'-' after '*' on the current row; give a weight (0 for none)");
      col++;
      p++;
      continue;
    }
    if (*p == '-' || isdigit((unsigned char)*p) || *p == '+') {
      errno = 0;
      char *end;
      long long v = strtoll(p, &end, 10);
      if (end == p)
        return (ht_status)fail(err, err_size, text, tok, "not a number");
      if (*end && !strchr(" \t\r\n;/", *end))
        return (ht_status)fail(err, err_size, text, tok, "not a whole number");
      if (v < 0)
        return (ht_status)fail(err, err_size, text, tok, "negative weight");
      if (errno || v > HT_FILTER_MAX_WEIGHT)
        return (ht_status)fail(err, err_size, text, tok, "weight too large (at most " STR(HT_FILTER_MAX_WEIGHT) ")");
      if (row == 0 && star_col < 0)
        return (ht_status)fail(err, err_size, text, tok,
                               "weight before '*' on the current row (those pixels are done; write '-')");
      int dx = col - star_col;
      if (row == 0 ? dx > HT_FILTER_MAX_RIGHT : (dx > HT_FILTER_MAX_RIGHT || -dx > HT_FILTER_MAX_LEFT))
        return (ht_status)fail(err, err_size, text, tok, "filter too large: at most 4 columns either side");
      if (v > 0) {
        if (f.ntaps == HT_FILTER_MAX_TAPS)
          return (ht_status)fail(err, err_size, text, tok, "filter too large: at most 32 weights");
        f.taps[f.ntaps].dx = (int8_t)dx;
        f.taps[f.ntaps].dy = (int8_t)row;
        f.taps[f.ntaps].num = (int32_t)v;
        f.ntaps++;
        sum += v;
      }
      any_weight_on_row = true;
      col++;
      p = end;
      continue;
    }
    return (ht_status)fail(err, err_size, text, tok, "unexpected character; use numbers, '-', '*', ';' and '/'");
  }
  (void)any_weight_on_row;
  if (star_col < 0)
    return (ht_status)fail(err, err_size, text, p, "no '*' marking the current pixel");
  if (col == 0 && row > 0)
    return (ht_status)fail(err, err_size, text, p, "empty last row");
  if (f.ntaps == 0)
    return (ht_status)fail(err, err_size, text, p, "all weights are zero");
  if (!divisor_at)
    divisor = sum;
  if (sum > divisor)
    return (ht_status)fail(err, err_size, text, divisor_at ? divisor_at : p,
                           "weights sum to more than the divisor (the error would grow without bound)");
  f.den = (int32_t)divisor;
  quantize_weights(&f);
  ht_filter_derive(&f);
  *out = f;
  return HT_OK;
}

/* The weights of a filter on the grid the syntax writes: num of the tap
 * at (dx, dy), rows 0..HT_FILTER_MAX_DOWN, columns -HT_FILTER_MAX_LEFT ..
 * HT_FILTER_MAX_RIGHT. */
typedef struct {
  int32_t num[HT_FILTER_MAX_DOWN + 1][HT_FILTER_MAX_LEFT + 1 + HT_FILTER_MAX_RIGHT];
  int left, right, down; /* how far the taps reach */
} weight_grid;

/* false for what the grid cannot hold: no taps or too many, a tap out of
 * reach or on a pixel already processed, two taps at one place. */
static bool grid_of(const ht_filter *f, weight_grid *g)
{
  memset(g, 0, sizeof *g);
  if (f->ntaps < 1 || f->ntaps > HT_FILTER_MAX_TAPS)
    return false;
  bool used[HT_FILTER_MAX_DOWN + 1][HT_FILTER_MAX_LEFT + 1 + HT_FILTER_MAX_RIGHT] = { { false } };
  for (int i = 0; i < f->ntaps; i++) {
    const ht_tap *t = &f->taps[i];
    if (t->dy < 0 || t->dy > HT_FILTER_MAX_DOWN || t->dx < -HT_FILTER_MAX_LEFT || t->dx > HT_FILTER_MAX_RIGHT ||
        (t->dy == 0 && t->dx <= 0) || used[t->dy][t->dx + HT_FILTER_MAX_LEFT])
      return false;
    used[t->dy][t->dx + HT_FILTER_MAX_LEFT] = true;
    g->num[t->dy][t->dx + HT_FILTER_MAX_LEFT] = t->num;
    if (-t->dx > g->left)
      g->left = -t->dx;
    if (t->dx > g->right)
      g->right = t->dx;
    if (t->dy > g->down)
      g->down = t->dy;
  }
  return true;
}

/* The text of grid `g` with divisor `den`; false when it does not fit. */
static bool write_grid(const weight_grid *g, int32_t den, char *buf, size_t size)
{
  size_t n = 0;
#define PUT(...)                                                         \
  do {                                                                   \
    int w_ = snprintf(buf + n, size - n, __VA_ARGS__);                   \
    if (w_ < 0 || (size_t)w_ >= size - n)                                \
      return false;                                                      \
    n += (size_t)w_;                                                     \
  } while (0)
  for (int dy = 0; dy <= g->down; dy++) {
    if (dy)
      PUT("; ");
    for (int dx = -g->left; dx <= g->right; dx++) {
      if (dx > -g->left)
        PUT(" ");
      if (dy == 0 && dx < 0)
        PUT("-");
      else if (dy == 0 && dx == 0)
        PUT("*");
      else
        PUT("%ld", (long)g->num[dy][dx + HT_FILTER_MAX_LEFT]);
    }
  }
  PUT(" / %ld", (long)den);
#undef PUT
  return true;
}

ht_status ht_filter_format(const ht_filter *f, char *buf, size_t size)
{
  if (!buf || size == 0)
    return HT_ERR_INVALID_ARGUMENT;
  buf[0] = '\0';
  weight_grid g, back_grid;
  ht_filter back;
  /* The grid comes from the taps themselves, not from the reach fields
   * (a caller's filter may not have them filled in). What the text
   * stands for is checked by parsing it: the parser is the one statement
   * of the syntax's rules, so the two cannot disagree. */
  if (!f || !grid_of(f, &g) || !write_grid(&g, f->den, buf, size) ||
      ht_filter_parse(buf, &back, NULL, 0) != HT_OK || back.den != f->den || !grid_of(&back, &back_grid) ||
      memcmp(back_grid.num, g.num, sizeof g.num) != 0) {
    buf[0] = '\0';
    return HT_ERR_INVALID_ARGUMENT;
  }
  return HT_OK;
}
