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
  int64_t v;
  if (!cli_parse_int64(s, lo, hi, &v))
    return false;
  *out = (int)v;
  return true;
}

/* The value of `list` named `name`, or -1; the usage error's text says
 * which names there are. */
static int choice_value(ht_list list, const char *name)
{
  const ht_choice *c = ht_choice_by_name(list, name);
  return c ? c->value : -1;
}

/* The option of parameter `id`: its CLI spelling. */
static const char *option_of(int id)
{
  const ht_param *d = ht_param_info((ht_param_id)id);
  return d->option ? d->option : d->name;
}

/* The library's refusal of a value ("levels must be ...") as the CLI
 * says it ("--levels must be ..."). */
static int value_error(int id, const char *why)
{
  const char *name = ht_param_info((ht_param_id)id)->name;
  const size_t n = strlen(name);
  return usage_error("--%s%s", option_of(id), strncmp(why, name, n) == 0 ? why + n : why);
}

/* getopt_long's codes: a parameter of the description is OPT_PARAM + its
 * id; the CLI's own options come after. */
enum {
  OPT_PARAM = CLI_OPT_OWN,
  OPT_VARIANT = OPT_PARAM + HT_PARAM_COUNT, OPT_BENCH, OPT_QUIET, OPT_VERBOSE, OPT_MAX_MEMORY, OPT_FORMAT,
  OPT_COMPRESSION, OPT_INTERPLANE, OPT_SEPARATIONS, OPT_WRITE_MASK,
};

/* Returns -1 to go on, else the exit status. */
int parse_args(int argc, char **argv, options *o)
{
  static const struct option own[] = {
    { "variant", required_argument, NULL, OPT_VARIANT },
    { "bench", required_argument, NULL, OPT_BENCH },
    { "quiet", no_argument, NULL, OPT_QUIET },
    { "verbose", no_argument, NULL, OPT_VERBOSE },
    { "max-memory", required_argument, NULL, OPT_MAX_MEMORY },
    { "format", required_argument, NULL, OPT_FORMAT },
    { "compression", required_argument, NULL, OPT_COMPRESSION },
    { "interplane", required_argument, NULL, OPT_INTERPLANE },
    { "separations", required_argument, NULL, OPT_SEPARATIONS },
    { "write-mask", required_argument, NULL, OPT_WRITE_MASK },
    { "metrics", no_argument, NULL, CLI_OPT_METRICS },
    { "force", no_argument, NULL, CLI_OPT_FORCE },
    { "version", no_argument, NULL, CLI_OPT_VERSION },
    { "help", no_argument, NULL, CLI_OPT_HELP },
  };
  /* the description's parameters, then the CLI's own options */
  struct option longopts[HT_PARAM_COUNT + sizeof own / sizeof own[0] + 1];
  int nopts = 0;
  for (int id = 0; id < HT_PARAM_COUNT; id++) {
    const ht_param *d = ht_param_info((ht_param_id)id);
    longopts[nopts++] = (struct option){ option_of(id), d->type == HT_TYPE_BOOL ? no_argument : required_argument,
                                         NULL, OPT_PARAM + id };
  }
  for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
    longopts[nopts++] = own[i];
  longopts[nopts] = (struct option){ NULL, 0, NULL, 0 };

  memset(o, 0, sizeof *o);
  ht_params_init(&o->params);
  o->backend = (ht_backend)ht_param_info(HT_PARAM_BACKEND)->def;
  o->threads = (int)ht_param_info(HT_PARAM_THREADS)->def;
  o->variant = HT_VARIANT_AUTO;
  o->format = -1;
  o->compression = -1;
  opterr = 0; /* our own messages */
  int c, v;
  char why[640];
  /* ":" first: a missing value comes back as ":" instead of "?". */
  while ((c = getopt_long(argc, argv, ":hV", longopts, NULL)) != -1) {
    const char *arg = optarg;
    if (c >= OPT_PARAM && c < OPT_PARAM + HT_PARAM_COUNT) {
      const int id = c - OPT_PARAM;
      o->given |= GIVEN(id);
      switch (id) {
      case HT_PARAM_ALGORITHM: o->algorithm = arg; continue; /* applied first in setup() */
      case HT_PARAM_COEFFICIENTS: o->coefficients = arg; continue; /* parsed in setup(), after the algorithm */
      case HT_PARAM_BACKEND:
        if ((v = choice_value(HT_LIST_BACKENDS, arg)) < 0)
          return usage_error("--backend must be %s, not '%s'", names_or(HT_LIST_BACKENDS), arg);
        o->backend = (ht_backend)v;
        continue;
      case HT_PARAM_THREADS: {
        const ht_param *d = ht_param_info(HT_PARAM_THREADS);
        if (!parse_int(arg, (long)d->min, (long)d->max, &o->threads))
          return usage_error("--threads must be a whole number %g..%g (0 = all cores), not '%s'", d->min, d->max,
                             arg);
        continue;
      }
      case HT_PARAM_DPI: { /* the resolution written, and the screen's */
        int dpi;
        if (!parse_int(arg, 1, 100000, &dpi))
          return usage_error("--dpi must be a whole number of dots per inch 1..100000, not '%s'", arg);
        o->dpi = dpi;
        break;
      }
      default: break;
      }
      if (ht_params_set_text(&o->params, (ht_param_id)id, arg ? arg : "1", why, sizeof why) != HT_OK)
        return value_error(id, why);
      continue;
    }
    switch (c) {
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
    case OPT_VERBOSE: o->verbose = true; break;
    case OPT_MAX_MEMORY:
      if (!hti_parse_size(arg, &o->max_memory))
        return usage_error("--max-memory must be a size in bytes, or with K, M, G or T (e.g. 512M, 4G), not '%s'",
                           arg);
      break;
    case OPT_FORMAT:
      if ((o->format = hti_kind_from_name(arg)) < 0)
        return usage_error("--format must be %s, not '%s'", format_names_or(), arg);
      break;
    case OPT_COMPRESSION:
      if ((o->compression = hti_compression_from_name(arg)) < 0)
        return usage_error("--compression must be %s, not '%s'", compressions_or(), arg);
      break;
    case OPT_INTERPLANE: { /* F[,B]: both inter-plane weights, B = F when left out */
      char buf[64];
      const char *comma = strchr(arg, ',');
      if (strlen(arg) >= sizeof buf || (comma && strchr(comma + 1, ',')))
        return usage_error("--interplane must be F or F,B (numbers 0..1), not '%s'", arg);
      strcpy(buf, arg);
      char *b = strchr(buf, ',');
      if (b)
        *b++ = '\0';
      if (ht_params_set_text(&o->params, HT_PARAM_INTERPLANE_FORWARD, buf, why, sizeof why) != HT_OK ||
          ht_params_set_text(&o->params, HT_PARAM_INTERPLANE_BACKWARD, b ? b : buf, why, sizeof why) != HT_OK)
        return usage_error("--interplane must be F or F,B (numbers 0..1), not '%s'", arg);
      o->given |= GIVEN(HT_PARAM_INTERPLANE_FORWARD) | GIVEN(HT_PARAM_INTERPLANE_BACKWARD);
      break;
    }
    case OPT_SEPARATIONS:
      if (!*arg) /* the plates would be "-r.pbm" ... in the current folder */
        return usage_error("--separations needs a PREFIX for the plates' names (PREFIX-r.pbm, PREFIX-c.pbm ...), "
                           "not ''");
      o->separations = arg;
      break;
    case OPT_WRITE_MASK:
      if (!*arg)
        return usage_error("--write-mask needs a FILE (.png, .pgm or .tif), not ''");
      o->write_mask = arg;
      break;
    case 'V':
    case CLI_OPT_VERSION: printf("halftone %s\n", ht_version()); return 0;
    case 'h':
    case CLI_OPT_HELP: print_help(stdout); return 0;
    default: return usage_error("%s", cli_option_message(c, argv));
    }
  }
  if (o->write_mask) { /* the mask is the whole output: nothing is read */
    if (optind < argc)
      return usage_error("--write-mask writes the mask alone and takes no INPUT or OUTPUT, got '%s'", argv[optind]);
    return -1;
  }
  const char *err = cli_two_files(argc, argv, &o->input, &o->output);
  return err ? usage_error("%s", err) : -1;
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

/* Every parameter given on the command line that the run does not use
 * is refused (as --coefficients without custom), except that --sigma and
 * --eye-radius also set the eye model of --metrics. Returns -1 to go on,
 * else the exit status. */
static int misplaced(const options *o, const ht_params *params, const ht_choice *alg)
{
  const char *name = alg->name;
  for (int id = 0; id < HT_PARAM_COUNT; id++) {
    if (!(o->given & GIVEN(id)) || ht_param_used((ht_param_id)id, alg->value, params->color))
      continue;
    if (o->metrics && (id == HT_PARAM_SIGMA || id == HT_PARAM_EYE_RADIUS))
      continue;
    if (id == HT_PARAM_DPI) /* also the resolution written */
      continue;
    if (id == HT_PARAM_LEVELS || id == HT_PARAM_SERPENTINE || id == HT_PARAM_COEFFICIENTS)
      continue; /* the library's check (cli_coefficients) says what the method takes instead */
    char where[512], other[96];
    where_used(id, where, sizeof where);
    snprintf(other, sizeof other, "%s", name);
    for (int c = 0; c <= HT_COLOR_CMYK; c++)
      if (ht_param_used((ht_param_id)id, alg->value, (ht_color_mode)c))
        snprintf(other, sizeof other, "%s in --color %s", name,
                 ht_choice_by_value(HT_LIST_COLOR_MODES, (int)params->color)->name);
    return usage_error("--%s goes with %s%s, not with %s", option_of(id), where,
                       id == HT_PARAM_SIGMA || id == HT_PARAM_EYE_RADIUS ? " (or --metrics)" : "", other);
  }
  /* the seed of a search keys its random start only */
  if ((o->given & GIVEN(HT_PARAM_SEED)) &&
      (ht_method_describe(params->method)->caps & HT_MCAP_SEARCH) && params->init != HT_INIT_RANDOM)
    return usage_error("--seed keys the random initial image; it goes with --init random");
  return -1;
}

/* The parameters and the context for the options, checked against each
 * other and, by the library (ht_check), against the backend: what ht_run
 * would refuse is a usage error before any file is touched. Returns -1
 * to go on, else the exit status. */
int setup(options *o, ht_params *params, ht_context **ctx_out, notices *notes)
{
  *params = o->params;
  const ht_choice *alg = o->algorithm ? ht_choice_by_name(HT_LIST_ALGORITHMS, o->algorithm)
                                      : ht_choice_by_value(HT_LIST_ALGORITHMS, ht_params_algorithm(params));
  if (!alg)
    return usage_error("--algorithm: unknown filter '%s' (the filters and methods: %s)", o->algorithm,
                       names_or(HT_LIST_ALGORITHMS));
  ht_params_set_algorithm(params, alg->value); /* a value of the list: always HT_OK */
  params->variant = (ht_variant)o->variant;
  int rc = misplaced(o, params, alg);
  if (rc >= 0)
    return rc;
  char msg[320];
  if (!cli_coefficients(alg, (o->given & GIVEN(HT_PARAM_COEFFICIENTS)) ? o->coefficients : NULL, &params->filter,
                        msg, sizeof msg))
    return usage_error("%s", msg);
  /* read back what halftone.c looks at */
  o->levels = params->levels;
  o->color = params->color;
  o->nplane_levels = 0;
  for (int i = 0; i < HT_MAX_PLANES; i++)
    o->nplane_levels += params->plane_levels[i] != 0;
  if (o->nplane_levels > 0 && o->color == HT_COLOR_LUMA)
    return usage_error("--levels with one value per colour plane needs --color per-channel, plane-dependent or "
                       "cmyk");
  if (o->separations && o->color == HT_COLOR_LUMA)
    return usage_error("--separations goes with a colour mode (per-channel, plane-dependent or cmyk)");

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
