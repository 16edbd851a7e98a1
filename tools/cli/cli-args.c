/* Command-line pieces shared by halftone and halftone-mpi (cli-args.h). */
#include "cli-args.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cli_vsay(const char *tool, const char *tail, const char *fmt, va_list ap)
{
  char line[1024];
  vsnprintf(line, sizeof line, fmt, ap);
  fprintf(stderr, "%s: %s%s\n", tool, line, tail);
}

bool cli_parse_int64(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
  /* 18 digits and fewer always fit an int64_t */
  if (!s || !*s || strspn(s, "0123456789") != strlen(s) || strlen(s) > 18)
    return false;
  long long v = strtoll(s, NULL, 10);
  if (v < lo || v > hi)
    return false;
  *out = v;
  return true;
}

/* the tools are single-threaded where they parse their options */
static char refusal[256];

const char *cli_option_message(int c, char **argv)
{
  char *msg = refusal;
  const size_t n = sizeof refusal;
  if (c == ':')
    snprintf(msg, n, "option '%s' needs a value", argv[optind - 1]);
  else if (optopt)
    snprintf(msg, n, "unknown option '-%c'", optopt);
  else
    snprintf(msg, n, "unknown option '%s'", argv[optind - 1]);
  return refusal;
}

const char *cli_two_files(int argc, char **argv, const char **input, const char **output)
{
  const int rest = argc - optind;
  if (rest != 2) {
    snprintf(refusal, sizeof refusal,
             rest < 2 ? "expected INPUT and OUTPUT file names, got %d name(s)"
                      : "expected INPUT and OUTPUT file names only, got %d names",
             rest);
    return refusal;
  }
  *input = argv[optind];
  *output = argv[optind + 1];
  return NULL;
}

bool cli_coefficients(const ht_choice *alg, const char *coefficients, ht_filter *filter, char *msg, size_t n)
{
  if (alg->value != HT_FILTER_CUSTOM) {
    if (!coefficients)
      return true;
    snprintf(msg, n, "--coefficients goes with --algorithm custom only, not with %s", alg->name);
    return false;
  }
  if (!coefficients) {
    snprintf(msg, n, "--algorithm custom needs --coefficients, e.g. \"- * 7; 3 5 1 / 16\"");
    return false;
  }
  char why[256];
  if (ht_filter_parse(coefficients, filter, why, sizeof why) != HT_OK) {
    snprintf(msg, n, "--coefficients: %s", why);
    return false;
  }
  return true;
}
