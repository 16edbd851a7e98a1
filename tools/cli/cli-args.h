/* Command-line pieces that halftone and halftone-mpi share, so that the
 * two tools take and refuse the same things in the same words. Each
 * function writes its refusal into msg; the tool prints it its own way
 * (halftone-mpi only on rank 0). */
#ifndef HT_CLI_ARGS_H
#define HT_CLI_ARGS_H

#include "halftone.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The options both tools take, as getopt_long's codes; a tool numbers
 * its own from CLI_OPT_OWN. --bench is each tool's own (a count of runs
 * in halftone, a switch in halftone-mpi). */
enum {
  CLI_OPT_ALGORITHM = 256, CLI_OPT_COEFFICIENTS, CLI_OPT_LEVELS, CLI_OPT_THREADS, CLI_OPT_METRICS,
  CLI_OPT_FORCE, CLI_OPT_VERSION, CLI_OPT_HELP, CLI_OPT_OWN
};

/* Their entries of a struct option table. */
#define CLI_COMMON_LONGOPTS                                          \
  { "algorithm", required_argument, NULL, CLI_OPT_ALGORITHM },       \
  { "coefficients", required_argument, NULL, CLI_OPT_COEFFICIENTS }, \
  { "levels", required_argument, NULL, CLI_OPT_LEVELS },             \
  { "threads", required_argument, NULL, CLI_OPT_THREADS },           \
  { "metrics", no_argument, NULL, CLI_OPT_METRICS },                 \
  { "force", no_argument, NULL, CLI_OPT_FORCE },                     \
  { "version", no_argument, NULL, CLI_OPT_VERSION },                 \
  { "help", no_argument, NULL, CLI_OPT_HELP }

/* One line "tool: MESSAGE TAIL" on stderr, built first and written at
 * once, so that lines of concurrent processes on one terminal do not
 * interleave; tail may be "". */
void cli_vsay(const char *tool, const char *tail, const char *fmt, va_list ap);

/* A whole number written as digits only (strtol alone would also take
 * " 4" and "+3"), lo..hi. */
bool cli_parse_int64(const char *s, int64_t lo, int64_t hi, int64_t *out);

/* The refusal for what getopt_long returned as ':' (a value missing) or
 * '?' (an unknown option); reads optind and optopt. The text lives in a
 * static buffer until the next call. */
const char *cli_option_message(int c, char **argv);

/* INPUT and OUTPUT: exactly two names after the options (optind on).
 * NULL when there are, else the refusal (a static buffer). */
const char *cli_two_files(int argc, char **argv, const char **input, const char **output);

/* --coefficients against the chosen filter `alg` (of HT_LIST_FILTERS or
 * HT_LIST_ALGORITHMS): parsed into *filter for "custom", which needs
 * them; refused with any other. */
bool cli_coefficients(const ht_choice *alg, const char *coefficients, ht_filter *filter, char *msg, size_t n);

#endif
