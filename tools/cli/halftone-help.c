/* halftone --help: fixed text, and the lists of names, which come from
 * the library (ht_choices) and from imageio's format table. */
#include "halftone-cli.h"
#include "imageio.h"

#include <string.h>

/* The help: fixed text, and the lists of names, which come from the
 * library (ht_choices), so that a filter, implementation or backend
 * added there appears here by itself. */
static const char help_head[] =
  "Usage: halftone [OPTIONS] INPUT OUTPUT\n"
  "       halftone --write-mask FILE [--noise-size N] [--seed S]\n"
  "\n"
  "Turns a continuous-tone image into a halftone (black and white, or a few\n"
  "levels) by error diffusion or by ordered dither (bayer), or into black and\n"
  "white by a search for the binary image that, seen through a model of the\n"
  "eye, is nearest the input (les, pes, dbs). Every backend, variant and\n"
  "thread count gives exactly the same pixels; they differ only in speed.\n"
  "\n"
  "INPUT   PGM or PPM (P5/P6 8- or 16-bit, P2/P3 plain, any maxval), PBM (P4),\n"
  "        PAM (P7: gray, RGB, with or without alpha),\n"
  "        PNG (gray, gray+alpha, RGB, RGBA, palette; 8 or 16 bit),\n"
  "        TIFF (1/2/4/8/16-bit gray, RGB(A), CMYK(A), any compression, strips\n"
  "        or tiles; the first page of several), or JPEG (gray, colour, CMYK).\n"
  "        CMYK becomes RGB by R = (1-C)(1-K) etc., without colour management.\n"
  "        - reads standard input (the format told by its first bytes).\n"
  "OUTPUT  the extension (or --format) picks the format:\n";
/* then the formats (help_formats), */
static const char help_output[] =
  "        - writes standard output (needs --format; refused on a terminal,\n"
  "        when closed or when it is the input file), as /dev/stdout does on a\n"
  "        pipe; what --metrics and --bench print then goes to stderr.\n"
  "        /dev/null: nothing is written (e.g. with --bench or --metrics)\n";
/* which of them keep the resolution and ICC profile (help_metadata), */
static const char help_output_tail[] =
  "        An existing output keeps its mode; a symbolic link keeps pointing\n"
  "        to the file it names, which is replaced. The output cannot be the\n"
  "        input file (under any name).\n"
  "\n"
  "Options:\n";

/* after --format, --dpi and --compression (help_format_options) */
static const char help_tail[] =
  "  --metrics           print the mean tone error and the HVS error (mean\n"
  "                      |G*input - G*output|, 7x7 Gaussian, sigma 1), both in\n"
  "                      0..255 units, to stdout; the PSNR and SSIM of input\n"
  "                      and output both blurred by a Gaussian of sigma 1.5\n"
  "                      and 2 (the field's measure; for les, pes and dbs at\n"
  "                      the eye's sigma too); for les, pes and dbs (and for\n"
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
  "  --verbose           also say what a terminal is told: a search's\n"
  "                      estimated time before it starts, and details of\n"
  "                      notices (where the GPU module was looked for)\n"
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
  "  halftone --write-mask mask.png --noise-size 256 --seed 3   (for other tools)\n"
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
  char text[1200];
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

/* OUTPUT's formats, from imageio's table: a line for each one this build
 * writes, then one for each it lacks. */
static void help_formats(FILE *f)
{
  size_t count;
  const hti_format *fmt = hti_formats(&count);
  char why[128];
  for (size_t i = 0; i < count; i++)
    if (fmt[i].write && fmt[i].extensions[0])
      help_wrap(f, fprintf(f, "%10s%-4s  ", "", fmt[i].extensions[0]), 16, fmt[i].summary);
  for (size_t i = 0; i < count; i++)
    if (!fmt[i].built) {
      hti_format_missing(&fmt[i], why, sizeof why);
      help_wrap(f, fprintf(f, "%8s", ""), 8, why);
    }
}

/* Which formats keep the input's resolution and ICC profile. */
static void help_metadata(FILE *f)
{
  char text[256], labels[128];
  int n = format_list(labels, sizeof labels, FORMATS_METADATA, FORMAT_LABEL, " and ");
  snprintf(text, sizeof text, "%s %s the input's resolution (dpi) and its ICC profile where the profile fits "
           "the output (gray or RGB).", labels, n == 1 ? "keeps" : "keep");
  help_wrap(f, fprintf(f, "%8s", ""), 8, text);
}

/* --format, --dpi and --compression, their lists from imageio's. */
static void help_format_options(FILE *f)
{
  char text[512], labels[128];
  snprintf(text, sizeof text, "%s: the output's format, for OUTPUT - or a name without its extension",
           format_names_or());
  help_option(f, "--format NAME", text);
  format_list(labels, sizeof labels, FORMATS_METADATA, FORMAT_LABEL, " and ");
  snprintf(text, sizeof text, "the resolution written into %s output, in dots per inch (1..100000); default: "
           "the input's", labels);
  help_option(f, "--dpi N", text);
  compression_help(text, sizeof text);
  help_option(f, "--compression NAME", text);
  help_option(f, "--max-memory SIZE", "the memory a decoded input image may take (e.g. 512M, 4G, 1.5G; K, M, G "
                                      "and T are powers of 1024); an input that declares more is refused before "
                                      "it is read. Default: 4G, or the machine's memory where less, and for a "
                                      "file 1024 times its size but at least 1G (a small file that claims a huge "
                                      "image is refused)");
}

static bool cpu_variant(const ht_choice *c)
{
  return c->value != HT_VARIANT_AUTO && ht_variant_backend((ht_variant)c->value) == HT_BACKEND_CPU;
}

static bool gpu_variant(const ht_choice *c)
{
  return c->value != HT_VARIANT_AUTO && ht_variant_backend((ht_variant)c->value) == HT_BACKEND_CUDA;
}

/* "a|b|c" as "a, b or c" */
static void or_list(const char *algs, char *list, size_t size)
{
  list[0] = '\0';
  for (int i = 0, k = 0; algs[i] && k < (int)size - 4; i++) {
    if (algs[i] != '|') {
      list[k++] = algs[i];
      list[k] = '\0';
      continue;
    }
    const bool last = !strchr(algs + i + 1, '|');
    const char *sep = last ? " or " : ", ";
    for (const char *q = sep; *q && k < (int)size - 1; q++)
      list[k++] = *q;
    list[k] = '\0';
  }
}

/* "--algorithm les, pes or dbs with --init random; or --color
 * plane-dependent or cmyk": where parameter `id` is used, from the
 * library's description, into buf. */
void where_used(int id, char *buf, size_t size)
{
  int n = 0;
  const ht_param_use *u = ht_param_uses((ht_param_id)id, &n);
  char algs[256] = "", walgs[256] = "", colors[128] = "";
  int nalgs = 0, nwalgs = 0;
  unsigned any_filter_colors = 0;
  for (int i = 0; i < n; i++) {
    const ht_method_info *m = ht_method_describe(u[i].method);
    int alg = u[i].algorithm >= 0 ? u[i].algorithm : m->algorithm;
    if (alg < 0) { /* every filter, in these colour modes */
      any_filter_colors |= u[i].colors;
      continue;
    }
    const ht_choice *c = ht_choice_by_value(HT_LIST_ALGORITHMS, alg);
    if (c && u[i].when_values && !strstr(walgs, c->name)) { /* said apart, with its condition */
      size_t len = strlen(walgs);
      snprintf(walgs + len, sizeof walgs - len, "%s%s", nwalgs ? "|" : "", c->name);
      nwalgs++;
    } else if (c && !u[i].when_values && !strstr(algs, c->name)) {
      size_t len = strlen(algs);
      snprintf(algs + len, sizeof algs - len, "%s%s", nalgs ? "|" : "", c->name);
      nalgs++;
    }
  }
  char list[256] = "", wlist[256] = "";
  or_list(algs, list, sizeof list);
  or_list(walgs, wlist, sizeof wlist);
  if (any_filter_colors && any_filter_colors != HT_COLORS_ALL) {
    int count = 0, total = 0;
    const ht_choice *c = ht_choices(HT_LIST_COLOR_MODES, &count);
    for (int i = 0; i < count; i++)
      total += (any_filter_colors >> c[i].value) & 1u;
    size_t len = 0;
    for (int i = 0, k = 0; i < count; i++)
      if ((any_filter_colors >> c[i].value) & 1u) {
        len += (size_t)snprintf(colors + len, sizeof colors - len, "%s%s", k == 0 ? "" : k == total - 1 ? " or " : ", ",
                                c[i].name);
        k++;
      }
  }
  /* a use that holds only for some values of another parameter (a
   * search's seed: --init random), as the description says it */
  char when[128] = "";
  for (int i = 0; i < n && wlist[0] && !when[0]; i++)
    if (u[i].when_values) {
      const ht_param *w = ht_param_info(u[i].when);
      size_t len = (size_t)snprintf(when, sizeof when, " (with --%s", w->option ? w->option : w->name);
      int nv = 0;
      const ht_choice *v = w->type == HT_TYPE_CHOICE ? ht_choices(w->list, &nv) : NULL;
      for (int k = 0, first = 1; k < nv && len < sizeof when; k++)
        if (u[i].when_values & (1u << v[k].value)) {
          len += (size_t)snprintf(when + len, sizeof when - len, "%s%s", first ? " " : " or ", v[k].name);
          first = 0;
        }
      if (len < sizeof when)
        snprintf(when + len, sizeof when - len, ")");
    }
  if (wlist[0]) { /* the conditional algorithms last, their condition after them */
    const size_t len = strlen(list);
    snprintf(list + len, sizeof list - len, "%s%s%s", list[0] ? ", or " : "", wlist, when);
    when[0] = '\0';
  }
  if (any_filter_colors == HT_COLORS_ALL && list[0])
    snprintf(buf, size, "an error-diffusion filter or --algorithm %s", list);
  else if (list[0] && colors[0])
    snprintf(buf, size, "--algorithm %s%s, or --color %s", list, when, colors);
  else if (list[0])
    snprintf(buf, size, "--algorithm %s%s", list, when);
  else if (colors[0])
    snprintf(buf, size, "--color %s", colors);
  else
    snprintf(buf, size, "an error-diffusion filter");
}

/* A parameter of the library's description as an option: its help, its
 * range and default, and where it is used. CHOICE parameters list their
 * values under it. */
static void help_param(FILE *f, int id)
{
  const ht_param *d = ht_param_info((ht_param_id)id);
  char option[64], text[1024], where[512] = "", range[96] = "";
  const char *name = d->option ? d->option : d->name;
  if (d->type == HT_TYPE_BOOL)
    snprintf(option, sizeof option, "--%s", name);
  else
    snprintf(option, sizeof option, "--%s %s", name, d->metavar);
  int n = 0;
  if (ht_param_uses((ht_param_id)id, &n) && n > 0) {
    char w[480];
    where_used(id, w, sizeof w);
    snprintf(where, sizeof where, "with %s: ", w);
  }
  switch (d->type) {
  case HT_TYPE_INT: snprintf(range, sizeof range, "; %.15g..%.15g, default %.15g", d->min, d->max, d->def); break;
  case HT_TYPE_NUMBER: snprintf(range, sizeof range, "; %g..%g, default %g", d->min, d->max, d->def); break;
  case HT_TYPE_SEED: snprintf(range, sizeof range, "; %.15g..%.15g, default %g", d->min, d->max, d->def); break;
  case HT_TYPE_BOOL:
  case HT_TYPE_CHOICE:
  case HT_TYPE_TEXT: break;
  }
  if (d->type == HT_TYPE_CHOICE) {
    snprintf(text, sizeof text, "%s%s", where, d->help);
    help_list(f, option, text, d->list, (int)d->def);
    return;
  }
  snprintf(text, sizeof text, "%s%s%s", where, d->help, range);
  help_option(f, option, text);
  if (d->per_plane) {
    snprintf(option, sizeof option, "--%s %s,%s,%s[,%s]", name, d->metavar, d->metavar, d->metavar, d->metavar);
    help_option(f, option, "with --color per-channel, plane-dependent or cmyk: one value for each colour plane of "
                           "the output (R,G,B or C,M,Y,K)");
  }
}

/* The parameters of `group` but the algorithm, in the description's order. */
static void help_group(FILE *f, ht_param_group group)
{
  for (int id = 0; id < HT_PARAM_COUNT; id++)
    if (id != HT_PARAM_ALGORITHM && ht_param_info((ht_param_id)id)->group == group)
      help_param(f, id);
}

void print_help(FILE *f)
{
  ht_params defaults;
  ht_params_init(&defaults);
  char names[2048];

  fputs(help_head, f);
  help_formats(f);
  fputs(help_output, f);
  help_metadata(f);
  fputs(help_output_tail, f);
  help_param(f, HT_PARAM_ALGORITHM);
  fputs("\nWhat the algorithm uses (each option goes only with what it says):\n", f);
  help_group(f, HT_GROUP_ALGORITHM);
  fputs("\nOutput levels:\n", f);
  help_group(f, HT_GROUP_OUTPUT);
  fputs("\nColour:\n", f);
  help_group(f, HT_GROUP_COLOR);
  help_option(f, "--interplane F[,B]", "both inter-plane weights at once: --interplane-forward F and "
                                       "--interplane-backward B (default F)");
  help_option(f, "--separations PREFIX", "with a colour mode: also write each plane to PREFIX-NAME.pbm (2 levels) "
                                         "or .pgm, NAME r, g, b (a) or c, m, y, k; dark = ink (cmyk) or 0");
  fputs("\nWhere it runs:\n", f);
  help_group(f, HT_GROUP_ADVANCED);
  help_option(f, "--variant NAME", "the implementation; auto (the default) takes the first of the "
                                   "backend's that can do the job, in this order:");
  list_names(names, sizeof names, HT_LIST_VARIANTS, cpu_variant, NULL);
  help_wrap(f, fprintf(f, "%*sCPU: ", HELP_TEXT + 2, ""), HELP_TEXT + 7, names);
  list_names(names, sizeof names, HT_LIST_VARIANTS, gpu_variant, NULL);
  if (names[0])
    help_wrap(f, fprintf(f, "%*sGPU: ", HELP_TEXT + 2, ""), HELP_TEXT + 7, names);
  fputs("\nFiles and reports:\n", f);
  help_format_options(f);
  help_option(f, "--write-mask FILE", "write the blue-noise mask of --noise-size and --seed (the one "
                                      "--algorithm blue-noise uses) to FILE (.png, .pgm or .tif) as 16-bit "
                                      "gray, rank r of N as r * 65535 / (N - 1): the pixels below a value are "
                                      "one level's dots; no INPUT or OUTPUT");
  fputs(help_tail, f);
}

const char *names_or(ht_list list)
{
  static char buf[1024];
  list_names(buf, sizeof buf, list, NULL, " or ");
  return buf;
}
