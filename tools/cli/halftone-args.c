/* The halftone CLI's command line: options parsed, checked against each
 * other, and turned into parameters and a context (setup). */
#include "halftone-cli.h"
#include "cli-args.h"
#include "imageio.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void say(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  cli_vsay("halftone", "", fmt, ap);
  va_end(ap);
}

int usage_error(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  cli_vsay("halftone", " (see halftone --help)", fmt, ap);
  va_end(ap);
  return EXIT_USAGE;
}

/* A whole number written as digits only: strtol alone would also take
 * " 4" and "+3". */
static bool parse_int(const char *s, long lo, long hi, int *out)
{
  if (!s || !*s || strspn(s, "0123456789") != strlen(s))
    return false;
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || *end || v < lo || v > hi)
    return false;
  *out = (int)v;
  return true;
}

/* A seed: digits only, 0 .. 2^64 - 1. */
static bool parse_u64(const char *s, uint64_t *out)
{
  if (!s || !*s || strspn(s, "0123456789") != strlen(s))
    return false;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || *end)
    return false;
  *out = (uint64_t)v;
  return true;
}

/* A plain decimal number ("1", "0.8", ".5"): no sign, exponent, space,
 * hexadecimal, inf or nan, which strtod alone would take. */
static bool parse_number(const char *s, double *out)
{
  if (!s || !*s || strspn(s, "0123456789.") != strlen(s) || strchr(s, '.') != strrchr(s, '.') ||
      strspn(s, ".") == strlen(s))
    return false;
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || *end || !isfinite(v))
    return false;
  *out = v;
  return true;
}

/* --levels N, or N,N,N[,N]: one value per colour plane. */
static bool parse_levels(const char *s, options *o)
{
  char buf[64];
  if (!s || strlen(s) >= sizeof buf)
    return false;
  strcpy(buf, s);
  int v[HT_MAX_PLANES], n = 0;
  for (char *tok = buf, *next; tok; tok = next) {
    next = strchr(tok, ',');
    if (next)
      *next++ = '\0';
    if (n == HT_MAX_PLANES || !parse_int(tok, 2, 256, &v[n]))
      return false;
    n++;
  }
  if (n == 2) /* no image has two colour planes */
    return false;
  memset(o->plane_levels, 0, sizeof o->plane_levels);
  o->levels = v[0];
  o->nplane_levels = n > 1 ? n : 0;
  for (int i = 0; n > 1 && i < n; i++)
    o->plane_levels[i] = v[i];
  return true;
}

/* The value of `list` named `name`, or -1; the usage error's text says
 * which names there are. */
static int choice_value(ht_list list, const char *name)
{
  const ht_choice *c = ht_choice_by_name(list, name);
  return c ? c->value : -1;
}


enum {
  OPT_SERPENTINE = CLI_OPT_OWN, OPT_COLOR, OPT_BACKEND, OPT_VARIANT, OPT_BENCH, OPT_QUIET, OPT_DPI, OPT_FORMAT, OPT_COMPRESSION,
  OPT_WINDOW, OPT_SIGMA, OPT_EYE_RADIUS, OPT_INIT, OPT_SEED, OPT_SCHEDULE, OPT_MAX_ROUNDS,
  OPT_INTERPLANE, OPT_RANDOMIZE, OPT_BLACK, OPT_SEPARATIONS,
};

/* Returns -1 to go on, else the exit status. */
int parse_args(int argc, char **argv, options *o)
{
  static const struct option longopts[] = {
    CLI_COMMON_LONGOPTS,
    { "serpentine", no_argument, NULL, OPT_SERPENTINE },
    { "color", required_argument, NULL, OPT_COLOR },
    { "backend", required_argument, NULL, OPT_BACKEND },
    { "variant", required_argument, NULL, OPT_VARIANT },
    { "bench", required_argument, NULL, OPT_BENCH },
    { "quiet", no_argument, NULL, OPT_QUIET },
    { "dpi", required_argument, NULL, OPT_DPI },
    { "format", required_argument, NULL, OPT_FORMAT },
    { "compression", required_argument, NULL, OPT_COMPRESSION },
    { "window", required_argument, NULL, OPT_WINDOW },
    { "sigma", required_argument, NULL, OPT_SIGMA },
    { "eye-radius", required_argument, NULL, OPT_EYE_RADIUS },
    { "init", required_argument, NULL, OPT_INIT },
    { "seed", required_argument, NULL, OPT_SEED },
    { "schedule", required_argument, NULL, OPT_SCHEDULE },
    { "max-rounds", required_argument, NULL, OPT_MAX_ROUNDS },
    { "interplane", required_argument, NULL, OPT_INTERPLANE },
    { "randomize", required_argument, NULL, OPT_RANDOMIZE },
    { "black", required_argument, NULL, OPT_BLACK },
    { "separations", required_argument, NULL, OPT_SEPARATIONS },
    { NULL, 0, NULL, 0 },
  };
  memset(o, 0, sizeof *o);
  o->algorithm = NULL; /* the library's default filter */
  o->levels = 2;
  o->color = HT_COLOR_LUMA;
  o->backend = HT_BACKEND_AUTO;
  o->variant = HT_VARIANT_AUTO;
  o->format = -1;
  o->compression = -1;
  ht_params defaults;
  ht_params_init(&defaults);
  o->window = defaults.window;
  o->sigma = defaults.eye.sigma;
  o->eye_radius = defaults.eye.radius;
  o->init = (int)defaults.init;
  o->seed = defaults.seed;
  o->schedule = (int)defaults.schedule;
  o->max_rounds = defaults.max_rounds;
  o->black = defaults.black;
  opterr = 0; /* our own messages */
  int c, v;
  /* ":" first: a missing value comes back as ":" instead of "?". */
  while ((c = getopt_long(argc, argv, ":hV", longopts, NULL)) != -1) {
    const char *arg = optarg;
    switch (c) {
    case CLI_OPT_ALGORITHM: o->algorithm = arg; break;
    case CLI_OPT_COEFFICIENTS: o->coefficients = arg; break;
    case CLI_OPT_LEVELS:
      if (!parse_levels(arg, o))
        return usage_error("--levels must be a whole number 2..256, or one per colour plane as N,N,N[,N], "
                           "not '%s'", arg);
      break;
    case OPT_SERPENTINE: o->serpentine = true; break;
    case OPT_COLOR:
      if ((v = choice_value(HT_LIST_COLOR_MODES, arg)) < 0)
        return usage_error("--color must be %s, not '%s'", names_or(HT_LIST_COLOR_MODES), arg);
      o->color = (ht_color_mode)v;
      break;
    case OPT_BACKEND:
      if ((v = choice_value(HT_LIST_BACKENDS, arg)) < 0)
        return usage_error("--backend must be %s, not '%s'", names_or(HT_LIST_BACKENDS), arg);
      o->backend = (ht_backend)v;
      break;
    case CLI_OPT_THREADS:
      if (!parse_int(arg, 0, 4096, &o->threads))
        return usage_error("--threads must be a whole number 0..4096 (0 = all cores), not '%s'", arg);
      break;
    case OPT_VARIANT:
      if ((o->variant = choice_value(HT_LIST_VARIANTS, arg)) < 0)
        return usage_error("--variant: unknown variant '%s'", arg);
      break;
    case CLI_OPT_METRICS: o->metrics = true; break;
    case OPT_BENCH:
      if (!parse_int(arg, 1, 1000000, &o->bench))
        return usage_error("--bench must be a whole number of runs 1..1000000, not '%s'", arg);
      break;
    case CLI_OPT_FORCE: o->force = true; break;
    case OPT_QUIET: o->quiet = true; break;
    case OPT_DPI: {
      int dpi;
      if (!parse_int(arg, 1, 100000, &dpi))
        return usage_error("--dpi must be a whole number of dots per inch 1..100000, not '%s'", arg);
      o->dpi = dpi;
      break;
    }
    case OPT_FORMAT:
      if ((o->format = hti_kind_from_name(arg)) < 0)
        return usage_error("--format must be %s, not '%s'", format_names_or(), arg);
      break;
    case OPT_COMPRESSION:
      if ((o->compression = hti_compression_from_name(arg)) < 0)
        return usage_error("--compression must be %s, not '%s'", compressions_or(), arg);
      break;
    case OPT_WINDOW:
      if (!parse_int(arg, 1, HT_SEARCH_WINDOW_MAX, &o->window))
        return usage_error("--window must be a whole number 1..%d (the side of the windows), not '%s'",
                           HT_SEARCH_WINDOW_MAX, arg);
      o->given |= GIVEN_WINDOW;
      break;
    case OPT_SIGMA:
      if (!parse_number(arg, &o->sigma) || !(o->sigma >= 0.25 && o->sigma <= 4.0))
        return usage_error("--sigma must be a number 0.25..4 (pixels), not '%s'", arg);
      o->given |= GIVEN_SIGMA;
      break;
    case OPT_EYE_RADIUS:
      if (!parse_int(arg, 1, HT_EYE_MAX_RADIUS, &o->eye_radius))
        return usage_error("--eye-radius must be a whole number 1..%d, not '%s'", HT_EYE_MAX_RADIUS, arg);
      o->given |= GIVEN_EYE_RADIUS;
      break;
    case OPT_INIT:
      if ((o->init = choice_value(HT_LIST_INITS, arg)) < 0)
        return usage_error("--init must be %s, not '%s'", names_or(HT_LIST_INITS), arg);
      o->given |= GIVEN_INIT;
      break;
    case OPT_SEED:
      if (!parse_u64(arg, &o->seed))
        return usage_error("--seed must be a whole number 0..18446744073709551615, not '%s'", arg);
      o->given |= GIVEN_SEED;
      break;
    case OPT_SCHEDULE:
      if ((o->schedule = choice_value(HT_LIST_SCHEDULES, arg)) < 0)
        return usage_error("--schedule must be %s, not '%s'", names_or(HT_LIST_SCHEDULES), arg);
      o->given |= GIVEN_SCHEDULE;
      break;
    case OPT_MAX_ROUNDS:
      if (!parse_int(arg, 0, 1000000000, &o->max_rounds))
        return usage_error("--max-rounds must be a whole number of rounds, 0 = until a round changes "
                           "nothing, not '%s'", arg);
      o->given |= GIVEN_MAX_ROUNDS;
      break;
    case OPT_INTERPLANE: {
      char buf[64];
      const char *comma = strchr(arg, ',');
      if (strlen(arg) >= sizeof buf || (comma && strchr(comma + 1, ',')))
        return usage_error("--interplane must be F or F,B (numbers 0..1), not '%s'", arg);
      strcpy(buf, arg);
      char *b = strchr(buf, ',');
      if (b)
        *b++ = '\0';
      if (!parse_number(buf, &o->forward) || o->forward > 1.0 || (b && (!parse_number(b, &o->backward) ||
                                                                     o->backward > 1.0)))
        return usage_error("--interplane must be F or F,B (numbers 0..1), not '%s'", arg);
      if (!b)
        o->backward = o->forward;
      o->given |= GIVEN_COLOR_OPTS;
      break;
    }
    case OPT_RANDOMIZE:
      if (!parse_number(arg, &o->randomize) || o->randomize > 1.0)
        return usage_error("--randomize must be a number 0..1, not '%s'", arg);
      o->given |= GIVEN_COLOR_OPTS;
      break;
    case OPT_BLACK:
      if (!parse_number(arg, &o->black) || o->black > 1.0)
        return usage_error("--black must be a number 0..1, not '%s'", arg);
      o->given |= GIVEN_COLOR_OPTS;
      break;
    case OPT_SEPARATIONS: o->separations = arg; break;
    case 'V':
    case CLI_OPT_VERSION: printf("halftone %s\n", ht_version()); return 0;
    case 'h':
    case CLI_OPT_HELP: print_help(stdout); return 0;
    default: return usage_error("%s", cli_option_message(c, argv));
    }
  }
  const char *why = cli_two_files(argc, argv, &o->input, &o->output);
  return why ? usage_error("%s", why) : -1;
}

void notice_add(notices *n, const char *fmt, ...)
{
  if (n->count >= 6)
    return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(n->text[n->count++], sizeof n->text[0], fmt, ap);
  va_end(ap);
}

static void notice_cb(const char *message, void *user) { notice_add(user, "%s", message); }

/* The search methods' options into `params`; one that the method does
 * not use is a usage error (as --coefficients without custom), except
 * that --sigma and --eye-radius also set the eye model of --metrics.
 * Returns -1 to go on, else the exit status. */
static int search_options(const options *o, ht_params *params, const char *name)
{
  static const struct {
    unsigned bit;
    const char *option;
  } opts[] = {
    { GIVEN_WINDOW, "--window" }, { GIVEN_SIGMA, "--sigma" },   { GIVEN_EYE_RADIUS, "--eye-radius" },
    { GIVEN_INIT, "--init" },     { GIVEN_SEED, "--seed" },     { GIVEN_SCHEDULE, "--schedule" },
    { GIVEN_MAX_ROUNDS, "--max-rounds" },
  };
  const bool search = params->method != HT_METHOD_ERROR_DIFFUSION;
  unsigned misplaced = 0;
  const bool coupled = o->color == HT_COLOR_PLANE_DEPENDENT || o->color == HT_COLOR_CMYK;
  if (!search)
    misplaced = o->given & ~(o->metrics ? (unsigned)(GIVEN_SIGMA | GIVEN_EYE_RADIUS) : 0u) &
                ~(coupled ? (unsigned)GIVEN_SEED : 0u) & ~(unsigned)GIVEN_COLOR_OPTS;
  else if (params->method == HT_METHOD_DBS)
    misplaced = o->given & GIVEN_WINDOW;
  for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
    if (misplaced & opts[i].bit) {
      if (!search)
        return usage_error("%s goes with --algorithm les, pes or dbs%s, not with %s", opts[i].option,
                           opts[i].bit & (GIVEN_SIGMA | GIVEN_EYE_RADIUS) ? " (or --metrics)" : "", name);
      return usage_error("%s goes with les and pes; dbs always searches the 3 x 3 pixels around each pixel",
                         opts[i].option);
    }
  if (search && (o->given & GIVEN_SEED) && o->init != HT_INIT_RANDOM)
    return usage_error("--seed keys the random initial image; it goes with --init random");
  params->window = o->window;
  params->eye.sigma = o->sigma;
  params->eye.radius = o->eye_radius;
  params->init = (ht_search_init)o->init;
  params->seed = o->seed;
  params->schedule = (ht_search_schedule)o->schedule;
  params->max_rounds = o->max_rounds;
  return -1;
}

/* The parameters and the context for the options, checked against each
 * other and, by the library (ht_check), against the backend: what ht_run
 * would refuse is a usage error before any file is touched. Returns -1
 * to go on, else the exit status. */
int setup(const options *o, ht_params *params, ht_context **ctx_out, notices *notes)
{
  ht_params_init(params);
  params->levels = o->levels;
  for (int i = 0; i < o->nplane_levels; i++)
    params->plane_levels[i] = o->plane_levels[i];
  params->color = o->color;
  params->scan = o->serpentine ? HT_SCAN_SERPENTINE : HT_SCAN_RASTER;
  params->variant = (ht_variant)o->variant;
  const ht_choice *alg = o->algorithm ? ht_choice_by_name(HT_LIST_ALGORITHMS, o->algorithm)
                                      : ht_choice_by_value(HT_LIST_ALGORITHMS, ht_params_algorithm(params));
  if (!alg)
    return usage_error("--algorithm: unknown filter '%s' (the filters and methods: %s)", o->algorithm,
                       names_or(HT_LIST_ALGORITHMS));
  ht_params_set_algorithm(params, alg->value); /* a value of the list: always HT_OK */
  int rc = search_options(o, params, alg->name);
  if (rc >= 0)
    return rc;
  char msg[320];
  if (!cli_coefficients(alg, o->coefficients, &params->filter, msg, sizeof msg))
    return usage_error("%s", msg);
  if (o->nplane_levels > 0 && o->color == HT_COLOR_LUMA)
    return usage_error("--levels with one value per colour plane needs --color per-channel, plane-dependent or "
                       "cmyk");
  if ((o->given & GIVEN_COLOR_OPTS) && o->color != HT_COLOR_PLANE_DEPENDENT && o->color != HT_COLOR_CMYK)
    return usage_error("--interplane, --randomize and --black go with --color plane-dependent or cmyk");
  if (o->separations && o->color == HT_COLOR_LUMA)
    return usage_error("--separations goes with a colour mode (per-channel, plane-dependent or cmyk)");
  for (int i = 0; i < HT_MAX_PLANES; i++) {
    params->plane_weights.forward[i] = o->forward;
    params->plane_weights.backward[i] = o->backward;
  }
  params->randomize = o->randomize;
  params->black = o->black;

  ht_context *ctx = ht_context_new();
  if (!ctx) {
    say("out of memory");
    return 1;
  }
  ht_context_set_backend(ctx, o->backend);
  ht_context_set_threads(ctx, o->threads);
  ht_context_set_notice(ctx, notice_cb, notes);
  if (ht_check(ctx, params) != HT_OK)
    return quit(ctx, usage_error("%s", ht_context_message(ctx)));
  *ctx_out = ctx;
  return -1;
}
