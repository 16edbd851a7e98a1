/* libFuzzer target: the custom filter syntax. Text input (the first byte
 * is not 0xFF): ht_filter_parse must not crash; what it accepts must be a
 * filter the library runs (ht_carry_rows >= 0: the run's own check), and
 * ht_filter_format's text of it must parse back to the very same filter
 * and format to the same text again; what it refuses gets a one-line
 * message naming a position inside the text. Binary input (first byte
 * 0xFF): the rest is an ht_filter as a caller might fill it in, and a
 * buffer size; ht_filter_format either refuses it, leaving "", or writes
 * text that parses to the same divisor and non-zero weights.
 * Any breach aborts, which libFuzzer reports as a crash.
 */
#include "halftone.h"
#include "ht-filter-compare.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TEXT 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static __attribute__((noreturn)) void fail(const char *what, const char *text, const char *detail)
{
  fprintf(stderr, "fuzz-filter: %s: \"%s\": %s\n", what, text, detail);
  abort();
}

static void fuzz_text(const uint8_t *data, size_t size)
{
  char text[MAX_TEXT + 1], err[256], t1[1024], t2[1024];
  if (size > MAX_TEXT)
    size = MAX_TEXT;
  memcpy(text, data, size);
  text[size] = '\0';
  ht_filter f, g;
  memset(err, 'x', sizeof err);
  ht_status s = ht_filter_parse(text, &f, err, sizeof err);
  if (s != HT_OK) {
    if (s != HT_ERR_BAD_COEFFICIENTS)
      fail("parse: not HT_ERR_BAD_COEFFICIENTS", text, ht_status_string(s));
    int pos = 0;
    const char *at = strstr(err, "position ");
    if (!at || sscanf(at, "position %d", &pos) != 1 || pos < 1 || (size_t)pos > strlen(text) + 1 ||
        strchr(err, '\n') || !memchr(err, '\0', sizeof err))
      fail("parse: the message names no position in the text, or is not one line", text, err);
    return;
  }
  if (f.id != HT_FILTER_CUSTOM || f.den < 1 || f.den > HT_FILTER_MAX_DIVISOR || ht_carry_rows(&(ht_params){ .filter = f }) < 0)
    fail("parse: accepted a filter the library does not run", text, "");
  long long sum = 0;
  for (int i = 0; i < f.ntaps; i++) {
    if (f.taps[i].num < 1 || f.taps[i].num > HT_FILTER_MAX_WEIGHT)
      fail("parse: a weight out of range", text, "");
    sum += f.taps[i].num;
  }
  if (sum > f.den)
    fail("parse: weights sum to more than the divisor", text, "");
  if (ht_filter_format(&f, t1, sizeof t1) != HT_OK)
    fail("format refused a parsed filter", text, "");
  if (ht_filter_parse(t1, &g, err, sizeof err) != HT_OK)
    fail("the formatted text does not parse", t1, err);
  if (memcmp(&f, &g, sizeof f) != 0)
    fail("the formatted text stands for another filter", text, t1);
  if (ht_filter_format(&g, t2, sizeof t2) != HT_OK || strcmp(t1, t2) != 0)
    fail("formatting is not stable", t1, t2);
}

static void fuzz_struct(const uint8_t *data, size_t size)
{
  ht_filter f;
  char buf[1024], err[256];
  memset(&f, 0, sizeof f);
  if (size < 6)
    return;
  const size_t bufsize = 1 + (size_t)(data[0] | data[1] << 8) % sizeof buf;
  int32_t den;
  memcpy(&den, data + 2, 4);
  f.den = den;
  data += 6;
  size -= 6;
  /* taps of 6 bytes: dx, dy (small, mostly in reach), num (mostly small) */
  for (; size >= 6 && f.ntaps < HT_FILTER_MAX_TAPS + 2; data += 6, size -= 6) {
    ht_tap *t = &f.taps[f.ntaps < HT_FILTER_MAX_TAPS ? f.ntaps : HT_FILTER_MAX_TAPS - 1];
    t->dx = (int8_t)((int8_t)data[0] % 7);
    t->dy = (int8_t)((int8_t)data[1] % 5);
    int32_t num;
    memcpy(&num, data + 2, 4);
    t->num = data[2] & 0x80 ? num : num % 64;
    f.ntaps++;
  }
  memset(buf, 'x', sizeof buf);
  ht_status s = ht_filter_format(&f, buf, bufsize);
  if (s != HT_OK) {
    if (s != HT_ERR_INVALID_ARGUMENT || buf[0] != '\0')
      fail("format: a refusal that is not HT_ERR_INVALID_ARGUMENT with \"\"", "", ht_status_string(s));
    return;
  }
  if (!memchr(buf, '\0', bufsize))
    fail("format: text not terminated within the buffer", "", "");
  ht_filter g;
  if (ht_filter_parse(buf, &g, err, sizeof err) != HT_OK)
    fail("format wrote text that does not parse", buf, err);
  if (!ht_test_same_filter(&f, &g))
    fail("format wrote text that stands for another filter", buf, "");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  if (size && data[0] == 0xFF)
    fuzz_struct(data + 1, size - 1);
  else
    fuzz_text(data, size);
  return 0;
}
