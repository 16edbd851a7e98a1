/* halftone: the command-line front end of libhalftone.
 *
 *   halftone [OPTIONS] INPUT OUTPUT
 *
 * Exit status: 0 success, 1 failure (file, image, GPU), 2 usage error.
 * Every failure prints one line "halftone: ..." on stderr and leaves no
 * output file behind: the output is claimed before the input is read
 * (imageio's hti_dest_open: not the input itself, not read-only, a
 * temporary file can be made beside it), written to that temporary file
 * and renamed over the destination only as the very last step, after
 * everything that can still fail (stdout included). SIGINT, SIGTERM and
 * SIGHUP remove that temporary file and say so (hti_signals).
 *
 * The common case, an 8-bit PGM to a PBM, is kept copy-free: the input is
 * mapped and handed to ht_run in place, the 1-bit result is rendered
 * straight into the output file's buffer, which goes out in one write.
 */
#include "halftone.h"
#include "cli-args.h"
#include "imageio.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <math.h>
#include <unistd.h>

#define EXIT_USAGE 2

/* The help: fixed text, and the lists of names, which come from the
 * library (ht_choices), so that a filter, implementation or backend
 * added there appears here by itself. */
static const char help_head[] =
  "Usage: halftone [OPTIONS] INPUT OUTPUT\n"
  "\n"
  "Turns a continuous-tone image into a halftone (black and white, or a few\n"
  "levels) by error diffusion, or into black and white by a search for the\n"
  "binary image that, seen through a model of the eye, is nearest the input\n"
  "(les, pes, dbs). Every backend, variant and thread count gives exactly\n"
  "the same pixels; they differ only in speed.\n"
  "\n"
  "INPUT   PGM or PPM (P5/P6 8- or 16-bit, P2/P3 plain, any maxval), PBM (P4),\n"
  "        PAM (P7: gray, RGB, with or without alpha),\n"
  "        PNG (gray, gray+alpha, RGB, RGBA, palette; 8 or 16 bit),\n"
  "        TIFF (1/2/4/8/16-bit gray, RGB(A), CMYK(A), any compression, strips\n"
  "        or tiles; the first page of several), or JPEG (gray, colour, CMYK).\n"
  "        CMYK becomes RGB by R = (1-C)(1-K) etc., without colour management.\n"
  "        - reads standard input (the format told by its first bytes).\n"
  "OUTPUT  the extension (or --format) picks the format:\n"
  "          .pbm  packed 1-bit (2 levels, one plane)\n"
  "          .pgm  8-bit gray      .ppm  8-bit RGB (with --color per-channel)\n"
  "          .png  gray/RGB, alpha kept; 1-bit when black and white\n"
  "          .tif  as .png; 1-bit with CCITT Group 4 compression, else Deflate\n"
  "        - writes standard output (needs --format; refused on a terminal);\n"
  "        what --metrics and --bench print then goes to stderr.\n"
  "        /dev/null: nothing is written (e.g. with --bench or --metrics)\n"
  "        PNG and TIFF keep the input's resolution (dpi) and its ICC profile\n"
  "        where the profile fits the output (gray or RGB).\n"
  "        An existing output keeps its mode; a symbolic link keeps pointing\n"
  "        to the file it names, which is replaced. The output cannot be the\n"
  "        input file (under any name).\n"
  "\n"
  "Options:\n";

static const char help_tail[] =
  "  --format NAME       pbm, pgm, ppm, png or tiff: the output's format, for\n"
  "                      OUTPUT - or a name without its extension\n"
  "  --dpi N             the resolution written into PNG and TIFF output, in\n"
  "                      dots per inch (1..100000); default: the input's\n"
  "  --compression NAME  TIFF output: g4 (CCITT Group 4, 1-bit only), deflate,\n"
  "                      lzw or none; default g4 for black and white, else\n"
  "                      deflate\n"
  "  --metrics           print the mean tone error and the HVS error (mean\n"
  "                      |G*input - G*output|, 7x7 Gaussian, sigma 1), both in\n"
  "                      0..255 units, to stdout; for les, pes and dbs (and for\n"
  "                      error diffusion given --sigma or --eye-radius) also the\n"
  "                      eye error, mean |input - V*output| with the run's eye\n"
  "                      model V (what the search minimises; the input stands\n"
  "                      in for pixels beyond the edge), and the rounds taken;\n"
  "                      for colour output (per-channel, plane-dependent,\n"
  "                      cmyk) also bias and grain in percent (Zhang et al.:\n"
  "                      dots missing or in excess per colorant, pixels with\n"
  "                      two or more colorants) and overlap (0: only the\n"
  "                      overlap the tones need, 1: as independent planes)\n"
  "  --bench N           run the halftoning alone N times and print the\n"
  "                      minimum and median time and ns per pixel\n"
  "  --force             replace an existing output file that is read-only\n"
  "  --quiet             no notices on stderr (errors are still printed)\n"
  "  --version           print the version and exit\n"
  "  --help              print this help and exit\n"
  "\n"
  "Examples:\n"
  "  halftone photo.png out.pbm\n"
  "  halftone --algorithm jarvis-judice-ninke photo.pgm out.png\n"
  "  halftone --levels 4 --color per-channel photo.png out.png\n"
  "  halftone --levels 4,4,2 --color per-channel photo.png out.png\n"
  "  halftone --algorithm custom --coefficients \"- * 7; 3 5 1 / 16\" in.pgm out.pbm\n"
  "  halftone --metrics --bench 5 big.pgm out.pbm\n"
  "  halftone --dpi 1200 photo.jpg plate.tif     (1-bit G4 TIFF at 1200 dpi)\n"
  "  convert photo.jpg pgm:- | halftone - --format png - > out.png\n"
  "  halftone --algorithm dbs --metrics photo.png out.png\n"
  "  halftone --algorithm les --window 3 --init random --seed 7 photo.pgm out.pbm\n"
  "\n"
  "Search methods: les and pes try the black-and-white patterns of every\n"
  "M x M window (pes only those with about as many white pixels as it has),\n"
  "dbs toggles single pixels and swaps neighbours, each keeping what brings\n"
  "the image seen through the eye model nearer the input, in rounds until a\n"
  "round changes nothing. They give 2 levels only; a colour image's luma, or\n"
  "with --color per-channel every channel, is searched. dbs takes about a\n"
  "second per megapixel and core, les with the default window minutes; on a\n"
  "terminal a progress line shows how far a run is, and Ctrl-C stops it\n"
  "without writing anything.\n"
  "\n"
  "Alpha: PNG output keeps the input's alpha channel; PBM/PGM/PPM have none\n"
  "and drop it. Exit status: 0 done, 1 failed, 2 bad command line. On any\n"
  "failure no output file is written and an existing one is left as it was.\n";

#define HELP_WIDTH 79 /* columns of the help                              */
#define HELP_TEXT 22  /* where an option's description starts            */

/* Writes `text` from column `col`, where the cursor is, wrapping at
 * HELP_WIDTH onto lines indented by `indent`; ends the line. A "quoted
 * example" is kept on one line. */
static void help_wrap(FILE *f, int col, int indent, const char *text)
{
  bool line_start = true;
  for (const char *p = text; *p;) {
    while (*p == ' ')
      p++;
    if (!*p)
      break;
    int len = 0;
    for (bool quoted = false; p[len] && (quoted || p[len] != ' '); len++)
      quoted ^= p[len] == '"';
    if (!line_start && col + 1 + len > HELP_WIDTH) {
      fprintf(f, "\n%*s", indent, "");
      col = indent;
      line_start = true;
    }
    if (!line_start) {
      fputc(' ', f);
      col++;
    }
    fwrite(p, 1, (size_t)len, f);
    col += len;
    p += len;
    line_start = false;
  }
  fputc('\n', f);
}

/* "  --option ARG        text", the text wrapped. */
static void help_option(FILE *f, const char *option, const char *text)
{
  int col = fprintf(f, "  %-*s", HELP_TEXT - 4, option);
  if (col > HELP_TEXT - 2) { /* a long option: its text on the next line */
    fprintf(f, "\n%*s", HELP_TEXT, "");
    col = HELP_TEXT;
  } else {
    fprintf(f, "  ");
    col += 2;
  }
  help_wrap(f, col, HELP_TEXT, text);
}

/* "  --option ARG        what, default NAME:" and the entries
 * of `list` under it, one a line: name, then its sentence. */
static void help_list(FILE *f, const char *option, const char *what, ht_list list, int value_default)
{
  char text[256];
  const ht_choice *d = ht_choice_by_value(list, value_default);
  snprintf(text, sizeof text, "%s, default %s:", what, d ? d->name : "none");
  help_option(f, option, text);
  int n = 0, width = 0;
  const ht_choice *c = ht_choices(list, &n);
  for (int i = 0; i < n; i++)
    if ((int)strlen(c[i].name) > width)
      width = (int)strlen(c[i].name);
  for (int i = 0; i < n; i++) {
    int col = fprintf(f, "%*s%-*s  ", HELP_TEXT + 2, "", width, c[i].name);
    help_wrap(f, col, col, c[i].help[0] ? c[i].help : c[i].label);
  }
}

/* The names of `list` whose entries pass `keep` (all for NULL), joined
 * with ", " (the last with `last_sep` where not NULL: "a, b or c") into
 * buf. */
static void list_names(char *buf, size_t size, ht_list list, bool (*keep)(const ht_choice *), const char *last_sep)
{
  int n = 0, kept = 0, total = 0;
  const ht_choice *c = ht_choices(list, &n);
  for (int i = 0; i < n; i++)
    total += !keep || keep(&c[i]);
  size_t len = 0;
  buf[0] = '\0';
  for (int i = 0; i < n && len < size; i++) {
    if (keep && !keep(&c[i]))
      continue;
    const char *sep = kept == 0 ? "" : kept == total - 1 && last_sep ? last_sep : ", ";
    int w = snprintf(buf + len, size - len, "%s%s", sep, c[i].name);
    if (w < 0)
      break;
    len += (size_t)w;
    kept++;
  }
}

static bool cpu_variant(const ht_choice *c)
{
  return c->value != HT_VARIANT_AUTO && ht_variant_backend((ht_variant)c->value) == HT_BACKEND_CPU;
}

static bool gpu_variant(const ht_choice *c)
{
  return c->value != HT_VARIANT_AUTO && ht_variant_backend((ht_variant)c->value) == HT_BACKEND_CUDA;
}

static void print_help(FILE *f)
{
  ht_params defaults;
  ht_params_init(&defaults);
  char names[2048], text[256];

  fputs(help_head, f);
  help_list(f, "--algorithm NAME", "the error-diffusion filter or the search method", HT_LIST_ALGORITHMS,
            ht_params_algorithm(&defaults));
  help_option(f, "--coefficients STR",
              "the filter for --algorithm custom: rows separated by ';', '*' marks the current pixel, "
              "'-' a pixel already done, optional '/ DIVISOR' at the end (Floyd-Steinberg is "
              "\"- * 7; 3 5 1 / 16\")");
  snprintf(text, sizeof text, "output levels per channel, 2..256 (default %d: black and white)", defaults.levels);
  help_option(f, "--levels N", text);
  help_option(f, "--levels N,N,N[,N]", "with --color per-channel: the levels of each colour plane "
                                       "(R,G,B), one value per plane of the input");
  help_option(f, "--serpentine", "odd rows right to left; runs sequentially (one thread, variant ed), "
                                 "never in parallel");
  help_list(f, "--color MODE", "colour input", HT_LIST_COLOR_MODES, (int)defaults.color);
  help_option(f, "--interplane F[,B]", "with --color plane-dependent or cmyk: the share of each plane's error "
                                       "fed forward to the next plane of the same pixel (F) and back to the "
                                       "previous plane of the next pixel (B, default F), 0..1 each, F + B <= 1 "
                                       "(default 0: the planes are independent; 0.2 cuts colorant overlap most, "
                                       "docs/color.md)");
  help_option(f, "--randomize A", "with --color plane-dependent or cmyk: perturb the error filter's weights per "
                                  "pixel by up to A (0..1, default 0), their sum kept, from --seed; breaks "
                                  "periodic textures");
  snprintf(text, sizeof text, "with --color cmyk: the share of the common part of cyan, magenta and yellow "
           "printed as black, 0..1 (default %g)", defaults.black);
  help_option(f, "--black A", text);
  help_option(f, "--separations PREFIX", "with a colour mode: also write each plane to PREFIX-NAME.pbm (2 levels) "
                                         "or .pgm, NAME r, g, b (a) or c, m, y, k; dark = ink (cmyk) or 0");
  help_list(f, "--backend WHICH", "where it runs", HT_LIST_BACKENDS, (int)HT_BACKEND_AUTO);
  help_option(f, "--threads N", "CPU threads (halftoning and TIFF coding), 0 = every core it may run on (default 0); with other "
                                "programs busy, fewer can be faster");
  help_option(f, "--variant NAME", "the implementation; auto (the default) takes the first of the "
                                   "backend's that can do the job, in this order:");
  list_names(names, sizeof names, HT_LIST_VARIANTS, cpu_variant, NULL);
  help_wrap(f, fprintf(f, "%*sCPU: ", HELP_TEXT + 2, ""), HELP_TEXT + 7, names);
  list_names(names, sizeof names, HT_LIST_VARIANTS, gpu_variant, NULL);
  if (names[0])
    help_wrap(f, fprintf(f, "%*sGPU: ", HELP_TEXT + 2, ""), HELP_TEXT + 7, names);
  fputs("\nSearch methods (--algorithm les, pes or dbs; docs/search.md):\n", f);
  snprintf(text, sizeof text, "les and pes: the side of the M x M windows searched, 1..%d (default %d); "
           "each step up multiplies les's time by about 2^(2M+1)", HT_SEARCH_WINDOW_MAX, defaults.window);
  help_option(f, "--window M", text);
  snprintf(text, sizeof text, "the eye model: standard deviation of its Gaussian in pixels, 0.25..4 "
           "(default %g)", defaults.eye.sigma);
  help_option(f, "--sigma S", text);
  snprintf(text, sizeof text, "the eye model covers (2R+1) x (2R+1) pixels, 1..%d (default %d)", HT_EYE_MAX_RADIUS,
           defaults.eye.radius);
  help_option(f, "--eye-radius R", text);
  help_list(f, "--init NAME", "the image the search starts from", HT_LIST_INITS, (int)defaults.init);
  help_option(f, "--seed N", "with --init random: the key of its random numbers, 0..18446744073709551615 "
                             "(default 0); the same seed gives the same image");
  help_list(f, "--schedule NAME", "the order of the windows", HT_LIST_SCHEDULES, (int)defaults.schedule);
  help_option(f, "--max-rounds N", "stop after N rounds; 0 (the default): when a round changes nothing");
  fputs(help_tail, f);
}

typedef struct {
  const char *input, *output;
  const char *algorithm, *coefficients;
  int levels;
  int plane_levels[HT_MAX_PLANES]; /* --levels N,N,N[,N]              */
  int nplane_levels;                /* how many; 0 for --levels N      */
  bool serpentine;
  ht_color_mode color;
  ht_backend backend;
  int threads;
  int variant;
  bool metrics;
  int bench;
  bool force;
  bool quiet;
  double dpi;        /* --dpi, 0: the input's                           */
  int format;        /* --format: an hti_kind, or -1                     */
  int compression;   /* --compression: an hti_compression, or -1         */
  /* the search methods' options; `given` has a bit for each one on the
   * command line (GIVEN_*), so that one given with a method that does
   * not use it is refused */
  int window, eye_radius, max_rounds, init, schedule;
  double sigma;
  uint64_t seed;
  unsigned given;
  /* plane-dependent colour (docs/color.md) */
  double forward, backward; /* --interplane F[,B]                  */
  double randomize;         /* --randomize A                       */
  double black;             /* --black A                           */
  const char *separations;  /* --separations PREFIX                */
} options;

enum { GIVEN_WINDOW = 1, GIVEN_SIGMA = 2, GIVEN_EYE_RADIUS = 4, GIVEN_INIT = 8, GIVEN_SEED = 16,
       GIVEN_SCHEDULE = 32, GIVEN_MAX_ROUNDS = 64, GIVEN_COLOR_OPTS = 128 };

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
  /* One line, built first and written at once, so that lines of
   * concurrent processes on one terminal do not interleave. */
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  fprintf(stderr, "halftone: %s\n", line);
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  fprintf(stderr, "halftone: %s (see halftone --help)\n", line);
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

static const char *names_or(ht_list list)
{
  static char buf[1024];
  list_names(buf, sizeof buf, list, NULL, " or ");
  return buf;
}

enum {
  OPT_ALGORITHM = 256, OPT_COEFFICIENTS, OPT_LEVELS, OPT_SERPENTINE, OPT_COLOR, OPT_BACKEND,
  OPT_THREADS, OPT_VARIANT, OPT_METRICS, OPT_BENCH, OPT_FORCE, OPT_QUIET, OPT_VERSION, OPT_HELP,
  OPT_DPI, OPT_FORMAT, OPT_COMPRESSION,
  OPT_WINDOW, OPT_SIGMA, OPT_EYE_RADIUS, OPT_INIT, OPT_SEED, OPT_SCHEDULE, OPT_MAX_ROUNDS,
  OPT_INTERPLANE, OPT_RANDOMIZE, OPT_BLACK, OPT_SEPARATIONS,
};

/* Returns -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, options *o)
{
  static const struct option longopts[] = {
    { "algorithm", required_argument, NULL, OPT_ALGORITHM },
    { "coefficients", required_argument, NULL, OPT_COEFFICIENTS },
    { "levels", required_argument, NULL, OPT_LEVELS },
    { "serpentine", no_argument, NULL, OPT_SERPENTINE },
    { "color", required_argument, NULL, OPT_COLOR },
    { "backend", required_argument, NULL, OPT_BACKEND },
    { "threads", required_argument, NULL, OPT_THREADS },
    { "variant", required_argument, NULL, OPT_VARIANT },
    { "metrics", no_argument, NULL, OPT_METRICS },
    { "bench", required_argument, NULL, OPT_BENCH },
    { "force", no_argument, NULL, OPT_FORCE },
    { "quiet", no_argument, NULL, OPT_QUIET },
    { "version", no_argument, NULL, OPT_VERSION },
    { "help", no_argument, NULL, OPT_HELP },
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
    case OPT_ALGORITHM: o->algorithm = arg; break;
    case OPT_COEFFICIENTS: o->coefficients = arg; break;
    case OPT_LEVELS:
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
    case OPT_THREADS:
      if (!parse_int(arg, 0, 4096, &o->threads))
        return usage_error("--threads must be a whole number 0..4096 (0 = all cores), not '%s'", arg);
      break;
    case OPT_VARIANT:
      if ((o->variant = choice_value(HT_LIST_VARIANTS, arg)) < 0)
        return usage_error("--variant: unknown variant '%s'", arg);
      break;
    case OPT_METRICS: o->metrics = true; break;
    case OPT_BENCH:
      if (!parse_int(arg, 1, 1000000, &o->bench))
        return usage_error("--bench must be a whole number of runs 1..1000000, not '%s'", arg);
      break;
    case OPT_FORCE: o->force = true; break;
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
        return usage_error("--format must be pbm, pgm, ppm, png or tiff, not '%s'", arg);
      break;
    case OPT_COMPRESSION:
      if ((o->compression = hti_compression_from_name(arg)) < 0)
        return usage_error("--compression must be g4, deflate, lzw or none, not '%s'", arg);
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
    case OPT_VERSION: printf("halftone %s\n", ht_version()); return 0;
    case 'h':
    case OPT_HELP: print_help(stdout); return 0;
    default: {
      char msg[128];
      cli_option_message(c, argv, msg, sizeof msg);
      return usage_error("%s", msg);
    }
    }
  }
  char msg[128];
  if (!cli_two_files(argc, argv, &o->input, &o->output, msg, sizeof msg))
    return usage_error("%s", msg);
  return -1;
}

/* The 8-bit plane the library dithered: the luma plane (plane -1) or
 * one channel. Points into the input when it already is that, else fills
 * *owned. */
static const uint8_t *input_plane(const hti_image *im, int plane, uint8_t **owned, size_t *stride)
{
  if (plane >= 0 && im->depth == 8 && im->channels == 1) {
    *stride = im->stride;
    return im->pixels;
  }
  *owned = hti_gray8(im, plane);
  *stride = (size_t)im->width;
  return *owned;
}

/* Plane `plane` of the rendered result as 8-bit gray. */
static uint8_t *result_plane(const ht_image *out, int plane)
{
  size_t w = (size_t)out->width;
  uint8_t *p = malloc(w * (size_t)out->height);
  if (!p)
    return NULL;
  for (int64_t y = 0; y < out->height; y++) {
    const uint8_t *row = (const uint8_t *)out->data + (size_t)y * out->stride;
    uint8_t *d = p + (size_t)y * w;
    for (size_t x = 0; x < w; x++) {
      size_t i = x * (size_t)out->channels + (size_t)plane;
      if (out->format == HT_FORMAT_BIT1) {
        d[x] = (row[x >> 3] >> (7 - (x & 7))) & 1 ? 0 : 255;
      } else if (out->format == HT_FORMAT_U16) {
        uint16_t v;
        memcpy(&v, row + 2 * i, 2);
        d[x] = (uint8_t)((v + 128) / 257);
      } else {
        d[x] = row[i];
      }
    }
  }
  return p;
}

/* Notices wait until the end: a run that then fails prints its error
 * line alone. */
typedef struct {
  char text[6][512];
  int count;
} notices;

static void notice_add(notices *n, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void notice_add(notices *n, const char *fmt, ...)
{
  if (n->count >= 6)
    return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(n->text[n->count++], sizeof n->text[0], fmt, ap);
  va_end(ap);
}

static void notice_cb(const char *message, void *user) { notice_add(user, "%s", message); }

static double now_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The progress line on a terminal: shown once a run has taken half a
 * second (a quick one stays silent), redrawn when the percentage
 * changes, ended with a carriage return so that whatever is printed next
 * (an error, the signal handler's line) starts at the left edge. */
typedef struct {
  const char *what; /* the algorithm's name */
  double start_ms;
  int shown;        /* the percentage on screen, -1 for none */
} progress_line;

static bool progress_cb(double fraction, void *user)
{
  progress_line *p = user;
  int pct = (int)(fraction * 100.0);
  pct = pct < 0 ? 0 : pct > 100 ? 100 : pct;
  if (pct != p->shown && now_ms() - p->start_ms >= 500.0) {
    char line[128];
    int n = snprintf(line, sizeof line, "halftone: %s: %3d%%\r", p->what, pct);
    if (n > 0 && write(STDERR_FILENO, line, (size_t)n) == n)
      p->shown = pct;
  }
  return true;
}

static void progress_clear(progress_line *p)
{
  static const char clear[] = "\r\033[K";
  if (p->shown >= 0 && write(STDERR_FILENO, clear, sizeof clear - 1) < 0)
    p->shown = -1; /* nothing else to do: the terminal is gone */
  p->shown = -1;
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static int quit(ht_context *ctx, int rc)
{
  ht_context_free(ctx);
  return rc;
}

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
static int setup(const options *o, ht_params *params, ht_context **ctx_out, notices *notes)
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

/* --separations PREFIX: each plane of the result as PREFIX-NAME.pbm (2
 * levels) or .pgm, dark where the plane is 0 (RGB) or has ink (cmyk). */
static bool write_separations(const options *o, const ht_image *res, int planes, bool cmyk, char *err, size_t n)
{
  static const char *const rgb[4] = { "r", "g", "b", "a" }, *const inks[4] = { "c", "m", "y", "k" };
  for (int p = 0; p < planes; p++) {
    const int L = o->plane_levels[p] ? o->plane_levels[p] : o->levels;
    const bool bits = L == 2;
    char path[4096];
    if (snprintf(path, sizeof path, "%s-%s.%s", o->separations, cmyk ? inks[p] : rgb[p], bits ? "pbm" : "pgm") >=
        (int)sizeof path) {
      snprintf(err, n, "--separations: the name is too long");
      return false;
    }
    hti_out so;
    hti_dest d;
    char why[512];
    if (!hti_out_init(&so, bits ? HTI_PBM : HTI_PGM, res->width, res->height, 1, bits ? 1 : 8, why, sizeof why)) {
      snprintf(err, n, "%.300s: %.200s", path, why);
      return false;
    }
    if (!hti_dest_open(&d, path, o->input, o->force, why, sizeof why)) {
      hti_out_free(&so);
      snprintf(err, n, "%.300s: %.200s", path, why);
      return false;
    }
    for (int64_t y = 0; y < res->height; y++) {
      const uint8_t *src = (const uint8_t *)res->data + (size_t)y * res->stride;
      uint8_t *dst = so.pixels + (size_t)y * so.stride;
      if (bits)
        memset(dst, 0, ((size_t)res->width + 7) / 8);
      for (int64_t x = 0; x < res->width; x++) {
        const uint8_t v = src[(size_t)x * (size_t)res->channels + (size_t)p];
        const uint8_t gray = cmyk ? (uint8_t)(255 - v) : v; /* ink is dark */
        if (bits)
          dst[x >> 3] |= (uint8_t)(gray < 128 ? 0x80 >> (x & 7) : 0); /* PBM: set = black */
        else
          dst[x] = gray;
      }
    }
    const bool ok = hti_out_write(&so, &d, why, sizeof why);
    hti_dest_close(&d);
    hti_out_free(&so);
    if (!ok) {
      snprintf(err, n, "%.300s: %.200s", path, why);
      return false;
    }
  }
  return true;
}

int main(int argc, char **argv)
{
  hti_std_fds();
  hti_signals("halftone");
  options o;
  int rc = parse_args(argc, argv, &o);
  if (rc >= 0)
    return rc;

  /* --- everything that can be checked before touching any file */
  notices notes = { .count = 0 };
  ht_params params;
  ht_context *ctx = NULL;
  rc = setup(&o, &params, &ctx, &notes);
  if (rc >= 0)
    return rc;
  bool to_stdout = strcmp(o.output, "-") == 0;
  int kind = hti_kind_from_path(o.output);
  if (kind != HTI_NULL && o.format >= 0)
    kind = o.format;
  if (kind < 0 && to_stdout)
    return quit(ctx, usage_error("OUTPUT - (standard output) needs --format pbm, pgm, ppm, png or tiff"));
  if (kind < 0)
    return quit(ctx, usage_error("%s: unknown output type; the name must end in .pbm, .pgm, .ppm, .png, .tif "
                                 "or .tiff (or be /dev/null), or give --format",
                                 o.output));
  /* the null device takes whatever PNG would (nothing is written) */
  bool png_like = kind == HTI_PNG || kind == HTI_TIFF || kind == HTI_NULL;
  if (o.compression >= 0 && kind != HTI_TIFF && kind != HTI_NULL)
    return quit(ctx, usage_error("--compression is for TIFF output, and %s is %s", o.output,
                                 hti_kind_name((hti_kind)kind)));
  if (kind == HTI_TIFF && !hti_have_tiff())
    return quit(ctx, usage_error("%s: this build has no TIFF support (libtiff was not found)", o.output));
  if (kind == HTI_PBM && o.nplane_levels > 0)
    return quit(ctx, usage_error("%s: PBM holds one plane; per-plane --levels need .ppm or .png", o.output));
  if (kind == HTI_PBM && o.levels != 2)
    return quit(ctx, usage_error("%s: PBM holds 2 levels only; use .pgm or .png for --levels %d", o.output,
                                 o.levels));
  if (kind == HTI_PNG && !hti_have_png())
    return quit(ctx, usage_error("%s: this build has no PNG support (libpng was not found)", o.output));

  char err[512];
  hti_dest dest;
  if (!hti_dest_open(&dest, o.output, o.input, o.force, err, sizeof err)) {
    say("%s: %s", o.output, err);
    return quit(ctx, 1);
  }
  /* the image goes to standard output on a descriptor of its own; what
   * the run prints goes to stderr, not into the image */
  if (dest.to_stdout && dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
    say("cannot redirect the printed output to stderr: %s", strerror(errno));
    hti_dest_close(&dest);
    return quit(ctx, 1);
  }

  /* --- input */
  hti_image im;
  if (!hti_read(o.input, &im, err, sizeof err)) {
    say("%s: %s", strcmp(o.input, "-") == 0 ? "standard input" : o.input, err);
    hti_dest_close(&dest);
    return quit(ctx, 1);
  }
  const char *in_name = strcmp(o.input, "-") == 0 ? "standard input" : o.input;
  if (im.pages > 1)
    notice_add(&notes, "%s: a TIFF of %d pages; the first is halftoned", in_name, im.pages);
  if (im.note)
    notice_add(&notes, "%s: %s", in_name, im.note);
  if (im.cmyk) {
    if (!hti_cmyk_to_rgb(&im, err, sizeof err)) {
      say("%s: %s", in_name, err);
      hti_release(&im);
      hti_dest_close(&dest);
      return quit(ctx, 1);
    }
    notice_add(&notes, "%s: CMYK converted to RGB by R = (1-C)(1-K) etc. (no colour management)", in_name);
  }
  int colors = im.channels - (im.has_alpha ? 1 : 0);
  /* plane-dependent colour writes what per-channel does; cmyk halftones
   * four ink planes (`inks`) and writes them as a CMYK TIFF, or an RGB
   * rendering of them to other files (docs/color.md) */
  const bool cmyk = o.color == HT_COLOR_CMYK;
  bool per_channel = (o.color == HT_COLOR_PER_CHANNEL || o.color == HT_COLOR_PLANE_DEPENDENT || cmyk) && colors >= 3;
  int planes = cmyk ? 4 : per_channel ? colors : 1;
  uint8_t *inks = NULL;
  rc = 1;
  if (cmyk && colors != 3) {
    hti_release(&im);
    hti_dest_close(&dest);
    return quit(ctx, usage_error("%s: --color cmyk separates RGB input; it has %d colour channel(s)", in_name,
                                 colors));
  }

  /* --- output layout */
  if (o.nplane_levels > 0 && o.nplane_levels != planes) {
    hti_release(&im);
    hti_dest_close(&dest);
    return quit(ctx, usage_error("--levels gives %d values, one per colour plane, but %s has %d", o.nplane_levels,
                                 o.input, planes));
  }
  if (per_channel && (kind == HTI_PBM || kind == HTI_PGM)) {
    hti_release(&im);
    hti_dest_close(&dest);
    return quit(ctx, usage_error("%s: --color per-channel on colour input gives RGB; write .ppm or .png", o.output));
  }
  if (kind == HTI_PPM && !cmyk && planes != 3) {
    hti_release(&im);
    hti_dest_close(&dest);
    return quit(ctx, usage_error("%s: PPM output is for --color per-channel on colour input; write .pgm, .pbm or .png",
                                 o.output));
  }
  bool keep_alpha = im.has_alpha && png_like && !cmyk;
  int file_channels = (cmyk ? 3 : planes) + (keep_alpha ? 1 : 0);
  int depth;
  if (cmyk)
    depth = 8; /* the RGB rendering of the inks */
  else if (kind == HTI_PBM || (png_like && planes == 1 && !keep_alpha && o.levels == 2))
    depth = 1;
  else if (png_like && keep_alpha && im.depth == 16)
    depth = 16; /* a 16-bit alpha channel keeps its precision */
  else
    depth = 8;
  if (im.has_alpha && !keep_alpha)
    notice_add(&notes, "%s: %s has no alpha channel; the input's alpha is dropped", o.output,
               hti_kind_name((hti_kind)kind));

  if (kind == HTI_TIFF && o.compression == HTI_COMPRESS_G4 && !(depth == 1 && file_channels == 1)) {
    hti_release(&im);
    hti_dest_close(&dest);
    return quit(ctx, usage_error("%s: --compression g4 holds 1-bit gray only (2 levels, one plane, no alpha)",
                                 o.output));
  }

  hti_out out;
  if (!hti_out_init(&out, (hti_kind)kind, im.width, im.height, file_channels, depth, err, sizeof err)) {
    say("%s: %s", o.output, err);
    hti_release(&im);
    hti_dest_close(&dest);
    return quit(ctx, 1);
  }
  /* resolution and ICC profile, where the output holds them */
  bool holds_meta = kind == HTI_PNG || kind == HTI_TIFF;
  out.xdpi = o.dpi > 0 ? o.dpi : im.xdpi;
  out.ydpi = o.dpi > 0 ? o.dpi : im.ydpi;
  out.compression = o.compression >= 0 ? (hti_compression)o.compression : HTI_COMPRESS_AUTO;
  out.threads = o.threads; /* --threads bounds the TIFF coders too */
  if (o.dpi > 0 && !holds_meta && kind != HTI_NULL)
    notice_add(&notes, "%s: %s has no place for a resolution; --dpi is not kept (write .png or .tif)", o.output,
               hti_kind_name((hti_kind)kind));
  char icc_space[16] = "", icc_desc[128] = "", icc_fate[160] = "";
  if (im.icc && hti_icc_info(im.icc, im.icc_len, icc_space, sizeof icc_space, icc_desc, sizeof icc_desc)) {
    const char *want = planes == 1 ? "GRAY" : "RGB";
    if (holds_meta && strcmp(icc_space, want) == 0) {
      out.icc = im.icc;
      out.icc_len = im.icc_len;
      snprintf(icc_fate, sizeof icc_fate, "kept");
    } else if (holds_meta) {
      snprintf(icc_fate, sizeof icc_fate, "not kept: it describes %s and the output is %s", icc_space,
               planes == 1 ? "gray" : "RGB");
      notice_add(&notes, "%s: the input's ICC profile (%s%s%s) is %s", o.output, icc_desc[0] ? icc_desc : icc_space,
                 icc_desc[0] ? ", " : "", icc_desc[0] ? icc_space : "", icc_fate);
    } else {
      snprintf(icc_fate, sizeof icc_fate, "not kept: %s has no place for it", hti_kind_name((hti_kind)kind));
    }
  }

  /* The library copies alpha through when params.alpha is set and the
   * output has room for it; when the file has no alpha but the input
   * does, render with alpha into scratch memory and drop it below
   * (1-bit output drops it by itself). */
  ht_image in_img = { im.width, im.height, im.stride, im.channels,
                      im.depth == 16 ? HT_FORMAT_U16 : HT_FORMAT_U8, (void *)(uintptr_t)im.pixels };
  params.alpha = im.has_alpha;
  ht_format out_fmt = depth == 1 ? HT_FORMAT_BIT1 : depth == 16 ? HT_FORMAT_U16 : HT_FORMAT_U8;
  int render_channels = planes + (im.has_alpha && depth != 1 ? 1 : 0);
  ht_image out_img = { im.width, im.height, out.stride, render_channels, out_fmt, out.pixels };
  uint8_t *scratch = NULL;
  if (cmyk) { /* four ink planes, no alpha; rendered below */
    params.alpha = false;
    inks = malloc((size_t)im.width * (size_t)im.height * 4);
    if (!inks) {
      say("out of memory");
      goto done;
    }
    out_img = (ht_image){ im.width, im.height, (size_t)im.width * 4, 4, HT_FORMAT_U8, inks };
    if (im.has_alpha)
      notice_add(&notes, "%s: --color cmyk drops the input's alpha", o.output);
  } else if (render_channels != file_channels) {
    size_t rs = ht_format_row_bytes(out_fmt, im.width, render_channels);
    scratch = malloc(rs * (size_t)im.height);
    if (!scratch) {
      say("out of memory");
      goto done;
    }
    out_img.stride = rs;
    out_img.data = scratch;
  }

  /* --- halftone (N times for --bench) */
  int runs = o.bench > 0 ? o.bench : 1;
  double *times = malloc((size_t)runs * sizeof *times);
  if (!times) {
    say("out of memory");
    goto done;
  }
  ht_status s = HT_OK;
  progress_line progress = { o.algorithm ? o.algorithm : "halftoning", now_ms(), -1 };
  if (!o.quiet && o.bench == 0 && isatty(STDERR_FILENO))
    ht_context_set_progress(ctx, progress_cb, &progress);
  for (int i = 0; i < runs && s == HT_OK; i++) {
    double t0 = now_ms();
    s = ht_run(ctx, &in_img, &out_img, &params);
    times[i] = now_ms() - t0;
  }
  progress_clear(&progress);
  if (s != HT_OK) {
    /* The library says "backend cuda: <why>" when a GPU variant finds no
     * GPU; with --backend left at auto it was the variant that asked for
     * the GPU, so name it. */
    const char *msg = ht_context_message(ctx), *prefix = "backend cuda: ";
    if (s == HT_ERR_NO_GPU && o.backend == HT_BACKEND_AUTO && o.variant != HT_VARIANT_AUTO &&
        ht_variant_backend((ht_variant)o.variant) == HT_BACKEND_CUDA) {
      if (strncmp(msg, prefix, strlen(prefix)) == 0)
        msg += strlen(prefix);
      say("variant %s runs on the GPU, and there is none usable: %s", ht_variant_name((ht_variant)o.variant), msg);
    } else {
      say("%s", msg);
    }
    free(times);
    goto done;
  }
  if (o.bench > 0) {
    qsort(times, (size_t)runs, sizeof *times, cmp_double);
    double med = runs % 2 ? times[runs / 2] : (times[runs / 2 - 1] + times[runs / 2]) / 2;
    double px = (double)im.width * (double)im.height;
    ht_variant v = ht_context_last_variant(ctx);
    printf("bench: %lldx%lld, %d run(s): min %.3f ms, median %.3f ms, %.3f ns/pixel (min); backend %s, variant %s\n",
           (long long)im.width, (long long)im.height, runs, times[0], med, times[0] * 1e6 / px,
           ht_choice_by_value(HT_LIST_BACKENDS, (int)ht_context_last_backend(ctx))->name, ht_variant_name(v));
  }
  free(times);

  if (inks) { /* the RGB rendering: red light is what cyan and black leave */
    for (int64_t y = 0; y < im.height; y++) {
      const uint8_t *src = inks + (size_t)y * (size_t)im.width * 4;
      uint8_t *dst = out.pixels + (size_t)y * out.stride;
      for (int64_t x = 0; x < im.width; x++)
        for (int c = 0; c < 3; c++) {
          const int ink = src[4 * x + c] + src[4 * x + 3];
          dst[3 * x + c] = (uint8_t)(ink >= 255 ? 0 : 255 - ink);
        }
    }
  }
  if (o.separations && !write_separations(&o, &out_img, planes, cmyk, err, sizeof err)) {
    say("%s", err);
    goto done;
  }
  if (scratch) { /* drop the alpha channel the file cannot hold */
    size_t bps = depth == 16 ? 2 : 1, rc_ = (size_t)render_channels, fc = (size_t)file_channels;
    for (int64_t y = 0; y < im.height; y++) {
      const uint8_t *src = scratch + (size_t)y * out_img.stride;
      uint8_t *dst = out.pixels + (size_t)y * out.stride;
      for (int64_t x = 0; x < im.width; x++)
        memcpy(dst + (size_t)x * fc * bps, src + (size_t)x * rc_ * bps, fc * bps);
    }
  }

  /* --- metrics, averaged over the dithered planes (the cmyk inks have
   * no input plane to compare with) */
  if (o.metrics && cmyk)
    notice_add(&notes, "--metrics: no tone or HVS error for --color cmyk (its ink planes have no input plane of "
               "their own); bias, grain and overlap compare the inks with the separated input");
  if (o.metrics && !cmyk) {
    /* the eye error: for the search methods, which minimise it, and for
     * error diffusion when an eye model is asked for */
    const bool eye = params.method != HT_METHOD_ERROR_DIFFUSION || (o.given & (GIVEN_SIGMA | GIVEN_EYE_RADIUS));
    double tone = 0, hvs = 0, eye_error = 0;
    for (int p = 0; p < planes; p++) {
      uint8_t *owned = NULL, *res = result_plane(&out_img, p);
      size_t gs = 0;
      const uint8_t *g = input_plane(&im, per_channel || colors == 1 ? p : -1, &owned, &gs);
      ht_metrics m;
      ht_status ms = g && res ? ht_compute_metrics(g, gs, res, (size_t)im.width, im.width, im.height, &m)
                              : HT_ERR_NO_MEMORY;
      double e = 0;
      if (ms == HT_OK && eye)
        ms = ht_compute_eye_error(g, gs, res, (size_t)im.width, im.width, im.height, &params.eye, &e);
      eye_error += e;
      free(owned);
      free(res);
      if (ms != HT_OK) {
        say("metrics: %s", ht_status_string(ms));
        goto done;
      }
      tone += m.mean_tone_error;
      hvs += m.hvs_error;
    }
    printf("mean tone error: %.4f\nHVS error: %.4f\n", tone / planes, hvs / planes);
    if (icc_fate[0])
      printf("input ICC profile: %s (%s, %zu bytes), %s\n", icc_desc[0] ? icc_desc : "no description", icc_space,
             im.icc_len, icc_fate);
    if (im.xdpi > 0)
      printf("input resolution: %g x %g dpi\n", im.xdpi, im.ydpi);
    if (eye)
      printf("eye error (sigma %g, %dx%d): %.4f\n", params.eye.sigma, 2 * params.eye.radius + 1,
             2 * params.eye.radius + 1, eye_error / planes);
    if (params.method != HT_METHOD_ERROR_DIFFUSION)
      printf("rounds: %lld\n", (long long)ht_context_last_rounds(ctx));
  }
  if (o.metrics && planes >= 2) { /* colour: Bias, Grain, overlap (docs/color.md) */
    ht_color_metrics cm;
    ht_status ms = ht_compute_color_metrics(&in_img, &out_img, &params, &cm);
    if (ms != HT_OK) {
      say("metrics: %s", ht_status_string(ms));
      goto done;
    }
    printf("bias: %.4f %%\ngrain: %.4f %%\n", 100 * cm.bias, 100 * cm.grain);
    if (isnan(cm.overlap))
      printf("overlap: n/a");
    else
      printf("overlap: %.4f", cm.overlap);
    printf(" (grain %.4f %% between %.4f %% the tones need and %.4f %% of independent planes)\n", 100 * cm.grain,
           100 * cm.overlap_least, 100 * cm.overlap_independent);
  }

  /* --- output: stdout first, since a run that fails writes no file */
  if (fflush(stdout) != 0 || ferror(stdout)) {
    say("cannot write to stdout: %s; %s not written", strerror(errno), o.output);
    goto done;
  }
  if (inks && kind == HTI_TIFF) { /* the inks themselves, a plane each, 1 bit where 2 levels */
    hti_cmyk ci;
    memset(&ci, 0, sizeof ci);
    ci.width = im.width;
    ci.height = im.height;
    ci.depth = 8;
    ci.xdpi = out.xdpi;
    ci.ydpi = out.ydpi;
    ci.compression = out.compression;
    const size_t plane = (size_t)im.width * (size_t)im.height;
    uint8_t *sep = malloc(plane * 4);
    if (!sep) {
      say("out of memory");
      goto done;
    }
    for (int p = 0; p < 4; p++) {
      for (size_t i = 0; i < plane; i++)
        sep[(size_t)p * plane + i] = inks[4 * i + (size_t)p];
      ci.plane[p] = sep + (size_t)p * plane;
      ci.stride[p] = (size_t)im.width;
      ci.levels[p] = params.plane_levels[p] ? params.plane_levels[p] : params.levels;
    }
    const bool ok = hti_write_cmyk_tiff(&ci, &dest, err, sizeof err);
    free(sep);
    if (!ok) {
      say("%s: %s", o.output, err);
      goto done;
    }
  } else if (!hti_out_write(&out, &dest, err, sizeof err)) {
    say("%s: %s", o.output, err);
    goto done;
  }
  rc = 0;
  for (int i = 0; i < notes.count && !o.quiet; i++)
    say("%s", notes.text[i]);
done:
  hti_dest_close(&dest);
  ht_context_free(ctx);
  free(scratch);
  free(inks);
  hti_out_free(&out);
  hti_release(&im);
  return rc;
}
