/* The description of methods and parameters (halftone.h, "the
 * description of methods and their parameters"): one row a parameter,
 * one row a method. The front ends make their options, properties,
 * dialogs and help from these rows, ht_params_init takes its defaults
 * from them and ht_check its ranges, so that each range and default is
 * written here and nowhere else. */
#include "describe.h"
#include "filter.h"
#include "methods.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_(text) text
#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

_Static_assert(sizeof(ht_color_mode) == sizeof(int) && sizeof(ht_scan) == sizeof(int) &&
                 sizeof(ht_search_init) == sizeof(int) && sizeof(ht_search_schedule) == sizeof(int) &&
                 sizeof(ht_search_objective) == sizeof(int) && sizeof(ht_space) == sizeof(int),
               "enum fields of ht_params are set as int");

/* How a parameter is kept in ht_params. */
typedef enum {
  FIELD_NONE = 0,  /* a context parameter                         */
  FIELD_INT,       /* an int or an enum                           */
  FIELD_DOUBLE,
  FIELD_U64,
  FIELD_PLANES,    /* a double for every plane (the same value)   */
  FIELD_ALGORITHM, /* ht_params_set_algorithm                     */
  FIELD_FILTER,    /* ht_filter_parse                             */
  FIELD_ANGLES,    /* text "a,b,c[,d]": a double for every plane   */
} field_kind;

typedef struct {
  ht_param pub;
  field_kind kind;
  size_t offset;
} param_row;

#define FIELD(kind, member) kind, offsetof(ht_params, member)
/* The seed's range, for every front end: GEGL's int property and GIMP 3's
 * int argument are gint, GIMP 2.10's PDB argument INT32, so a seed past
 * 2^31 - 1 could not be given back to the op or a plug-in. The field stays
 * 64 bits (the API's); Philox takes it whole. */
#define SEED_MAX 2147483647.0

/* In ht_param_id order. */
static const param_row params[HT_PARAM_COUNT] = {
  [HT_PARAM_ALGORITHM] = {
    { "algorithm", NULL, N_("Algorithm"),
      "the error-diffusion filter, the search method or the ordered dither", "NAME",
      HT_TYPE_CHOICE, HT_LIST_ALGORITHMS, 0, 0, 0, 0, HT_FILTER_FLOYD_STEINBERG, NULL, 0, HT_GROUP_ALGORITHM, false,
      false },
    FIELD_ALGORITHM, 0 },
  [HT_PARAM_COEFFICIENTS] = {
    { "coefficients", NULL, N_("Coefficients"),
      "the custom error filter: rows separated by ';', '*' marks the current pixel, '-' a pixel already done, an "
      "optional '/ DIVISOR' at the end (Floyd-Steinberg is \"- * 7; 3 5 1 / 16\")", "STR",
      HT_TYPE_TEXT, 0, 0, 0, 0, 0, 0, "- * 7; 3 5 1 / 16", 0, HT_GROUP_ALGORITHM, false, false },
    FIELD_FILTER, 0 },
  [HT_PARAM_LEVELS] = {
    { "levels", NULL, N_("Levels"),
      "output levels per channel (2: black and white)",
      "N", HT_TYPE_INT, 0, 2, HT_LEVELS_MAX, 2, 16, 2, NULL, 0, HT_GROUP_OUTPUT, true, false },
    FIELD(FIELD_INT, levels) },
  [HT_PARAM_SERPENTINE] = {
    { "serpentine", NULL, N_("Serpentine scan"),
      "odd rows right to left, which breaks up directional artifacts; runs sequentially on the CPU", NULL,
      HT_TYPE_BOOL, 0, 0, 1, 0, 1, 0, NULL, 0, HT_GROUP_OUTPUT, false, false },
    FIELD(FIELD_INT, scan) },
  [HT_PARAM_COLOR] = {
    { "color-mode", "color", N_("Color mode"),
      "what becomes of colour input: its luminance, every channel on its own, the channels together, or CMYK inks",
      "MODE", HT_TYPE_CHOICE, HT_LIST_COLOR_MODES, 0, 0, 0, 0, HT_COLOR_LUMA, NULL, 0, HT_GROUP_COLOR, false,
      false },
    FIELD(FIELD_INT, color) },
  [HT_PARAM_INTERPLANE_FORWARD] = {
    { "interplane-forward", NULL, N_("Inter-plane weight, forward"),
      "the share of each colour plane's error passed to the next plane of the same pixel, so that dots of "
      "different colours stop piling up on the same pixels; more cuts overlap more and moves saturated colours "
      "more (0.05 keeps a photo's colour within about 2 %, docs/color.md)", "F",
      HT_TYPE_NUMBER, 0, 0, 1, 0, 1, 0.05, NULL, 3, HT_GROUP_COLOR, false, false },
    FIELD(FIELD_PLANES, plane_weights.forward) },
  [HT_PARAM_INTERPLANE_BACKWARD] = {
    { "interplane-backward", NULL, N_("Inter-plane weight, backward"),
      "the share of each colour plane's error passed back to the previous plane of the next pixel; forward plus "
      "backward may not exceed 1", "B",
      HT_TYPE_NUMBER, 0, 0, 1, 0, 1, 0, NULL, 3, HT_GROUP_COLOR, false, false },
    FIELD(FIELD_PLANES, plane_weights.backward) },
  [HT_PARAM_RANDOMIZE] = {
    { "randomize", NULL, N_("Randomize filter"),
      "perturb the error filter's weights per pixel by up to this much (their sum kept), from the seed: breaks "
      "periodic textures", "A",
      HT_TYPE_NUMBER, 0, 0, 1, 0, 1, 0, NULL, 3, HT_GROUP_COLOR, false, false },
    FIELD(FIELD_DOUBLE, randomize) },
  [HT_PARAM_BLACK] = {
    { "black", NULL, N_("Black generation"),
      "the share of the gray common to cyan, magenta and yellow that is printed with black ink", "A",
      HT_TYPE_NUMBER, 0, 0, 1, 0, 1, 1, NULL, 3, HT_GROUP_COLOR, false, false },
    FIELD(FIELD_DOUBLE, black) },
  [HT_PARAM_WINDOW] = {
    { "window", NULL, N_("Window size"),
      "the side M of the M x M windows whose black-and-white patterns are searched; each step up multiplies the "
      "time by 20 to 60 on photos, far more on noise (the time is estimated before the search starts)", "M",
      HT_TYPE_INT, 0, 1, HT_SEARCH_WINDOW_MAX, 1, HT_SEARCH_WINDOW_MAX, 4, NULL, 0, HT_GROUP_ALGORITHM, false,
      false },
    FIELD(FIELD_INT, window) },
  [HT_PARAM_SIGMA] = {
    { "sigma", NULL, N_("Eye model sigma"),
      "the standard deviation in pixels of the Gaussian that models the eye: larger values look from farther "
      "away", "S",
      HT_TYPE_NUMBER, 0, HT_EYE_SIGMA_MIN, HT_EYE_SIGMA_MAX, HT_EYE_SIGMA_MIN, HT_EYE_SIGMA_MAX, 1, NULL, 2,
      HT_GROUP_ALGORITHM, false, false },
    FIELD(FIELD_DOUBLE, eye.sigma) },
  [HT_PARAM_EYE_RADIUS] = {
    { "eye-radius", NULL, N_("Eye model radius"),
      "the eye model covers (2R+1) x (2R+1) pixels", "R",
      HT_TYPE_INT, 0, 1, HT_EYE_MAX_RADIUS, 1, HT_EYE_MAX_RADIUS, 3, NULL, 0, HT_GROUP_ALGORITHM, false, false },
    FIELD(FIELD_INT, eye.radius) },
  [HT_PARAM_INIT] = {
    { "init", NULL, N_("Start from"),
      "the initial image the search starts from", "NAME",
      HT_TYPE_CHOICE, HT_LIST_INITS, 0, 0, 0, 0, HT_INIT_FLOYD_STEINBERG, NULL, 0, HT_GROUP_ALGORITHM, false,
      false },
    FIELD(FIELD_INT, init) },
  [HT_PARAM_SCHEDULE] = {
    { "schedule", NULL, N_("Schedule"),
      "the order of the windows", "NAME",
      HT_TYPE_CHOICE, HT_LIST_SCHEDULES, 0, 0, 0, 0, HT_SCHEDULE_PARALLEL, NULL, 0, HT_GROUP_ALGORITHM, false,
      false },
    FIELD(FIELD_INT, schedule) },
  [HT_PARAM_MAX_ROUNDS] = {
    { "max-rounds", NULL, N_("Maximum rounds"),
      "stop the search after this many rounds; 0: when a round changes nothing", "N",
      HT_TYPE_INT, 0, 0, 1000000000, 0, 50, 0, NULL, 0, HT_GROUP_ALGORITHM, false, false },
    FIELD(FIELD_INT, max_rounds) },
  [HT_PARAM_SEED] = {
    { "seed", NULL, N_("Random seed"),
      "the key of the random numbers (a search's random start, the randomized filter weights, the blue-noise mask); the "
      "same seed gives the same image", "N",
      HT_TYPE_SEED, 0, 0, SEED_MAX, 0, 1000, 0, NULL, 0, HT_GROUP_ALGORITHM, false, false },
    FIELD(FIELD_U64, seed) },
  [HT_PARAM_MASK_SIZE] = {
    { "mask-size", NULL, N_("Matrix size"),
      "the side of the Bayer matrix, a power of two: 2 gives 5 tones per level step, 16 gives 257", "N",
      HT_TYPE_INT, 0, 2, 256, 2, 64, 8, NULL, 0, HT_GROUP_ALGORITHM, false, false },
    FIELD(FIELD_INT, mask_size) },
  [HT_PARAM_NOISE_SIZE] = {
    { "noise-size", NULL, N_("Mask size"),
      "the side of the blue-noise mask, a power of two; made once for each size and seed, then kept in the "
      "user's cache folder", "N",
      HT_TYPE_INT, 0, 2, HT_NOISE_SIZE_MAX, 16, 512, 128, NULL, 0, HT_GROUP_ALGORITHM, false, false },
    FIELD(FIELD_INT, noise_size) },
  [HT_PARAM_LPI] = {
    { "lpi", NULL, N_("Lines per inch"),
      "the screen's frequency: rows of dots per inch at the output's resolution (dpi)", "N",
      HT_TYPE_NUMBER, 0, 1, 1000, 10, 300, 60, NULL, 1, HT_GROUP_ALGORITHM, false, false },
    FIELD(FIELD_DOUBLE, lpi) },
  [HT_PARAM_DPI] = {
    { "dpi", NULL, N_("Resolution (dpi)"),
      "the output's pixels per inch, which with the lines per inch gives the dots' size (the CLI: also the "
      "resolution written; default the input's)", "N",
      HT_TYPE_NUMBER, 0, 1, 100000, 72, 2400, 600, NULL, 0, HT_GROUP_ALGORITHM, false, false },
    FIELD(FIELD_DOUBLE, dpi) },
  [HT_PARAM_ANGLE] = {
    { "angle", NULL, N_("Screen angle"),
      "the angle of the rows of dots in degrees, counterclockwise (45: the least visible)", "DEG",
      HT_TYPE_NUMBER, 0, 0, 360, 0, 180, 45, NULL, 1, HT_GROUP_ALGORITHM, false, false },
    FIELD(FIELD_DOUBLE, angle) },
  [HT_PARAM_ANGLES] = {
    { "angles", NULL, N_("Screen angles"),
      "the angle of each colour plane in degrees, C,M,Y[,K] (R, G, B print as their complements C, M, Y); the "
      "classic set keeps the planes' moire small", "C,M,Y,K",
      HT_TYPE_TEXT, 0, 0, 360, 0, 0, 0, "15,75,0,45", 0, HT_GROUP_ALGORITHM, false, false },
    FIELD(FIELD_ANGLES, angles) },
  [HT_PARAM_DOT] = {
    { "dot", NULL, N_("Dot shape"),
      "the shape of the screen's dots", "SHAPE",
      HT_TYPE_CHOICE, HT_LIST_DOTS, 0, 0, 0, 0, HT_DOT_ROUND, NULL, 0, HT_GROUP_ALGORITHM, false, false },
    FIELD(FIELD_INT, dot) },
  [HT_PARAM_RUN_LONG] = {
    { "run-long", NULL, N_("Run however long"),
      "run a search even when its estimated time, shown before it starts, is over an hour; without this such a "
      "search is refused", NULL,
      HT_TYPE_BOOL, 0, 0, 1, 0, 1, 0, NULL, 0, HT_GROUP_ALGORITHM, false, false },
    FIELD(FIELD_INT, run_long) },
  [HT_PARAM_OBJECTIVE] = {
    { "objective", NULL, N_("Objective"),
      "what DBS minimises (docs/search.md); the GPU minimises 'les' only, so 'filtered' runs on the CPU", "NAME",
      HT_TYPE_CHOICE, HT_LIST_OBJECTIVES, 0, 0, 0, 0, HT_OBJECTIVE_FILTERED, NULL, 0, HT_GROUP_ALGORITHM, false,
      false },
    FIELD(FIELD_INT, objective) },
  [HT_PARAM_STRENGTH] = {
    { "strength", NULL, N_("Error strength"),
      "the share of each pixel's error passed on to its neighbours: 1 is full error diffusion, less gives less "
      "noise and flatter tones, 0 plain thresholding", "F",
      HT_TYPE_NUMBER, 0, 0, 1, 0, 1, 1, NULL, 3, HT_GROUP_ALGORITHM, false, false },
    FIELD(FIELD_DOUBLE, strength) },
  [HT_PARAM_SPACE] = {
    { "space", NULL, N_("Space"),
      "halftone the values as stored in image files, or linear light (sRGB decoded), which keeps the tone the eye "
      "sees", "NAME",
      HT_TYPE_CHOICE, HT_LIST_SPACES, 0, 0, 0, 0, HT_SPACE_STORED, NULL, 0, HT_GROUP_OUTPUT, false, false },
    FIELD(FIELD_INT, space) },
  [HT_PARAM_BACKEND] = {
    { "backend", NULL, N_("Backend"),
      "where it runs; every backend gives the same result, bit for bit", "WHICH",
      HT_TYPE_CHOICE, HT_LIST_BACKENDS, 0, 0, 0, 0, HT_BACKEND_AUTO, NULL, 0, HT_GROUP_ADVANCED, false, true },
    FIELD_NONE, 0 },
  [HT_PARAM_THREADS] = {
    { "threads", NULL, N_("Threads"),
      "CPU threads, 0 = every core the process may run on; with other programs busy, fewer can be faster", "N",
      HT_TYPE_INT, 0, 0, 4096, 0, 64, 0, NULL, 0, HT_GROUP_ADVANCED, false, true },
    FIELD_NONE, 0 },
};

/* ---------------------------------------------------- who uses what */

/* Every parameter's conditions, gathered from the method rows. */
#define MAX_METHODS 32
static ht_param_use uses[HT_PARAM_COUNT][MAX_METHODS * 2];
static int nuses[HT_PARAM_COUNT];
static pthread_once_t uses_once = PTHREAD_ONCE_INIT;

static void make_uses(void)
{
  int n;
  const method_row *methods = ht_method_rows(&n);
  for (int i = 0; i < n; i++)
    for (int k = 0; k < HT_METHOD_MAX_USES && methods[i].uses[k].id != HT_PARAM_ALGORITHM; k++) {
      const method_use *u = &methods[i].uses[k];
      if (nuses[u->id] < COUNT(uses[0]))
        uses[u->id][nuses[u->id]++] =
          (ht_param_use){ (ht_method)methods[i].choice.value, u->algorithm, u->colors, u->when, u->when_values };
    }
}

const ht_param_use *ht_param_uses(ht_param_id id, int *count)
{
  pthread_once(&uses_once, make_uses);
  const bool valid = (int)id >= 0 && id < HT_PARAM_COUNT;
  if (count)
    *count = valid ? nuses[id] : 0;
  return valid && nuses[id] ? uses[id] : NULL;
}

/* Whether `u` holds for a run of `algorithm` of `row` in colour mode
 * `color` whose parameter `when` (if any) has the value in `when_value`
 * (-1: any value). */
static bool use_holds(const method_use *u, int algorithm, ht_color_mode color, int when_value)
{
  if (u->algorithm != HT_ANY_ALGORITHM && u->algorithm != algorithm)
    return false;
  if (!(u->colors & (1u << color)))
    return false;
  return !u->when_values || when_value < 0 || (u->when_values & (1u << when_value));
}

/* The method row that runs `algorithm` in `color`: error diffusion's
 * algorithms in the coupled colour modes are plane-dependent. */
static const method_row *row_for(int algorithm, ht_color_mode color)
{
  int m = ht_algorithm_method(algorithm);
  if (m == HT_METHOD_ERROR_DIFFUSION && (color == HT_COLOR_PLANE_DEPENDENT || color == HT_COLOR_CMYK))
    m = HT_METHOD_PLANE_DEPENDENT;
  return m >= 0 ? ht_method_row((ht_method)m) : NULL;
}

static bool always_used(ht_param_id id)
{
  /* space is every method's: the rows' loaders and storers apply it */
  return id == HT_PARAM_ALGORITHM || id == HT_PARAM_COLOR || id == HT_PARAM_SPACE || id == HT_PARAM_BACKEND ||
         id == HT_PARAM_THREADS;
}

bool ht_param_used(ht_param_id id, int algorithm, ht_color_mode color)
{
  if ((int)id < 0 || id >= HT_PARAM_COUNT || (int)color < 0 || color > HT_COLOR_CMYK)
    return false;
  if (always_used(id))
    return true;
  const method_row *r = row_for(algorithm, color);
  for (int k = 0; r && k < HT_METHOD_MAX_USES && r->uses[k].id != HT_PARAM_ALGORITHM; k++)
    if (r->uses[k].id == id && use_holds(&r->uses[k], algorithm, color, -1))
      return true;
  return false;
}

bool ht_params_use(const ht_params *p, ht_param_id id)
{
  if (always_used(id))
    return true;
  const int algorithm = ht_params_algorithm(p);
  const method_row *r = row_for(algorithm, p->color);
  for (int k = 0; r && k < HT_METHOD_MAX_USES && r->uses[k].id != HT_PARAM_ALGORITHM; k++) {
    const method_use *u = &r->uses[k];
    if (u->id != id)
      continue;
    const int when = u->when_values ? (int)ht_params_get_number(p, u->when) : -1;
    if (use_holds(u, algorithm, p->color, when))
      return true;
  }
  return false;
}

/* ------------------------------------------------------- the rows */

const ht_param *ht_param_info(ht_param_id id)
{
  return (int)id >= 0 && id < HT_PARAM_COUNT ? &params[id].pub : NULL;
}

int ht_param_find(const char *name)
{
  for (int i = 0; name && i < HT_PARAM_COUNT; i++)
    if (strcmp(params[i].pub.name, name) == 0 || (params[i].pub.option && strcmp(params[i].pub.option, name) == 0))
      return i;
  return -1;
}

static bool parse_decimal(const char *s, double *out);

/* "15,75,0[,45]": 3 or 4 numbers in d's range into v (the fourth kept
 * where 3 are given); false, v untouched, for anything else. */
static bool parse_angles(const char *text, const ht_param *d, double *v)
{
  char buf[128];
  double a[HT_MAX_PLANES];
  int count = 0;
  if (!text || strlen(text) >= sizeof buf)
    return false;
  strcpy(buf, text);
  for (char *tok = buf, *next; tok; tok = next) {
    next = strchr(tok, ',');
    if (next)
      *next++ = '\0';
    if (count == HT_MAX_PLANES || !parse_decimal(tok, &a[count]) || a[count] < d->min || a[count] > d->max)
      return false;
    count++;
  }
  if (count < 3)
    return false;
  for (int i = 0; i < count; i++)
    v[i] = a[i];
  return true;
}

void ht_params_defaults(ht_params *p)
{
  for (int i = 0; i < HT_PARAM_COUNT; i++) {
    const param_row *r = &params[i];
    char *field = (char *)p + r->offset;
    switch (r->kind) {
    case FIELD_INT: *(int *)field = (int)r->pub.def; break;
    case FIELD_DOUBLE: *(double *)field = r->pub.def; break;
    case FIELD_U64: *(uint64_t *)field = (uint64_t)r->pub.def; break;
    case FIELD_PLANES:
      for (int j = 0; j < HT_MAX_PLANES; j++)
        ((double *)field)[j] = r->pub.def;
      break;
    case FIELD_ALGORITHM: ht_params_set_algorithm(p, (int)r->pub.def); break;
    case FIELD_ANGLES: parse_angles(r->pub.def_text, &r->pub, (double *)field); break;
    case FIELD_FILTER: /* the filter comes with the algorithm */
    case FIELD_NONE: break;
    }
  }
}

/* "2..256", "0.25..4", as messages write a range. */
static void range_text(const ht_param *d, char *buf, size_t size)
{
  snprintf(buf, size, "%.15g..%.15g", d->min, d->max);
}

static bool is_power_of_two(int v) { return v > 0 && (v & (v - 1)) == 0; }

static void expect_text(ht_param_id id, const ht_param *d, char *buf, size_t n);

/* Whether `v` is a value of parameter `d`; else the reason. */
static bool value_ok(ht_param_id id, const ht_param *d, double v, char *why, size_t n)
{
  char range[64];
  range_text(d, range, sizeof range);
  switch (d->type) {
  case HT_TYPE_INT:
  case HT_TYPE_SEED:
    if (!(v >= d->min && v <= d->max) || v != floor(v)) {
      snprintf(why, n, "%s must be %s%s, got %.15g", d->name, v != floor(v) ? "a whole number " : "", range, v);
      return false;
    }
    if ((id == HT_PARAM_MASK_SIZE || id == HT_PARAM_NOISE_SIZE) && !is_power_of_two((int)v)) {
      snprintf(why, n, "%s must be a power of two %s, got %.15g", d->name, range, v);
      return false;
    }
    return true;
  case HT_TYPE_NUMBER:
    if (!(v >= d->min && v <= d->max)) { /* false for NaN too */
      snprintf(why, n, "%s must be %s, got %g", d->name, range, v);
      return false;
    }
    return true;
  case HT_TYPE_BOOL:
    if (v != 0.0 && v != 1.0) {
      snprintf(why, n, "%s must be 0 or 1, got %g", d->name, v);
      return false;
    }
    return true;
  case HT_TYPE_CHOICE:
    if (v != floor(v) || !ht_choice_by_value(d->list, (int)v)) {
      char expect[512];
      expect_text(id, d, expect, sizeof expect);
      snprintf(why, n, "unknown %s %.15g (%s: it %s)", d->name, v, d->help, expect);
      return false;
    }
    return true;
  case HT_TYPE_TEXT: break;
  }
  snprintf(why, n, "%s takes text, not a number", d->name);
  return false;
}

static ht_status refuse(char *why, size_t n, ht_status s, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static ht_status refuse(char *why, size_t n, ht_status s, const char *fmt, ...)
{
  if (why && n) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, n, fmt, ap);
    va_end(ap);
  }
  return s;
}

ht_status ht_params_set_number(ht_params *p, ht_param_id id, double v, char *why, size_t n)
{
  char buf[256];
  if (!p || (int)id < 0 || id >= HT_PARAM_COUNT)
    return refuse(why, n, HT_ERR_INVALID_ARGUMENT, "no parameters or no parameter %d", (int)id);
  const param_row *r = &params[id];
  if (r->kind == FIELD_NONE)
    return refuse(why, n, HT_ERR_INVALID_ARGUMENT, "%s is a setting of the context", r->pub.name);
  if (!value_ok(id, &r->pub, v, buf, sizeof buf))
    return refuse(why, n, HT_ERR_INVALID_ARGUMENT, "%s", buf);
  char *field = (char *)p + r->offset;
  switch (r->kind) {
  case FIELD_INT: *(int *)field = (int)v; break;
  case FIELD_DOUBLE: *(double *)field = v; break;
  case FIELD_U64: *(uint64_t *)field = (uint64_t)v; break; /* in 0..SEED_MAX: value_ok */
  case FIELD_PLANES:
    for (int j = 0; j < HT_MAX_PLANES; j++)
      ((double *)field)[j] = v;
    break;
  case FIELD_ALGORITHM: return ht_params_set_algorithm(p, (int)v);
  case FIELD_FILTER:
  case FIELD_ANGLES:
  case FIELD_NONE: return refuse(why, n, HT_ERR_INVALID_ARGUMENT, "%s takes text", r->pub.name);
  }
  if (id == HT_PARAM_LEVELS)
    memset(p->plane_levels, 0, sizeof p->plane_levels);
  return HT_OK;
}

double ht_params_get_number(const ht_params *p, ht_param_id id)
{
  if (!p || (int)id < 0 || id >= HT_PARAM_COUNT)
    return NAN;
  const param_row *r = &params[id];
  const char *field = (const char *)p + r->offset;
  switch (r->kind) {
  case FIELD_INT: return *(const int *)field;
  case FIELD_DOUBLE: return *(const double *)field;
  case FIELD_U64: return (double)*(const uint64_t *)field;
  case FIELD_PLANES: return ((const double *)field)[0];
  case FIELD_ALGORITHM: return ht_params_algorithm(p);
  case FIELD_FILTER:
  case FIELD_ANGLES:
  case FIELD_NONE: break;
  }
  return NAN;
}

/* A whole number written as digits only (strtoull alone would also take
 * " 4", "+3" and "-1"). */
static bool parse_whole(const char *s, uint64_t *out)
{
  if (!*s || strspn(s, "0123456789") != strlen(s))
    return false;
  errno = 0;
  char *end;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || *end)
    return false;
  *out = (uint64_t)v;
  return true;
}

/* A plain decimal number ("1", "0.8", ".5"): no sign, exponent, space,
 * hexadecimal, inf or nan, which strtod alone would take. */
static bool parse_decimal(const char *s, double *out)
{
  if (!*s || strspn(s, "0123456789.") != strlen(s) || strchr(s, '.') != strrchr(s, '.') || strspn(s, ".") == strlen(s))
    return false;
  errno = 0;
  char *end;
  double v = strtod(s, &end);
  if (errno || *end || !isfinite(v))
    return false;
  *out = v;
  return true;
}

/* "must be a whole number 2..256", as a refusal of text says it. */
static void expect_text(ht_param_id id, const ht_param *d, char *buf, size_t n)
{
  char range[64], names[512] = "";
  range_text(d, range, sizeof range);
  switch (d->type) {
  case HT_TYPE_INT:
  case HT_TYPE_SEED:
    snprintf(buf, n, "must be a whole number %s%s%s", range, id == HT_PARAM_MASK_SIZE || id == HT_PARAM_NOISE_SIZE ? ", a power of two" : "",
             d->per_plane ? ", or one per colour plane as N,N,N[,N]" : "");
    return;
  case HT_TYPE_NUMBER: snprintf(buf, n, "must be a number %s", range); return;
  case HT_TYPE_BOOL: snprintf(buf, n, "must be 0 or 1"); return;
  case HT_TYPE_CHOICE: {
    int count = 0;
    const ht_choice *c = ht_choices(d->list, &count);
    size_t len = 0;
    for (int i = 0; i < count && len < sizeof names; i++) {
      int w = snprintf(names + len, sizeof names - len, "%s%s", i == 0 ? "" : i == count - 1 ? " or " : ", ",
                       c[i].name);
      if (w < 0)
        break;
      len += (size_t)w;
    }
    snprintf(buf, n, "must be %s", names);
    return;
  }
  case HT_TYPE_TEXT: snprintf(buf, n, "must be text"); return;
  }
}

/* "4,4,2": the levels of each plane. */
static ht_status set_per_plane(ht_params *p, ht_param_id id, const char *text, char *why, size_t n)
{
  const ht_param *d = &params[id].pub;
  char buf[64], expect[256];
  expect_text(id, d, expect, sizeof expect);
  if (strlen(text) >= sizeof buf)
    return refuse(why, n, HT_ERR_INVALID_ARGUMENT, "%s %s, not '%s'", d->name, expect, text);
  strcpy(buf, text);
  int v[HT_MAX_PLANES], count = 0;
  for (char *tok = buf, *next; tok; tok = next) {
    next = strchr(tok, ',');
    if (next)
      *next++ = '\0';
    uint64_t u;
    if (count == HT_MAX_PLANES || !parse_whole(tok, &u) || (double)u < d->min || (double)u > d->max)
      return refuse(why, n, HT_ERR_INVALID_ARGUMENT, "%s %s, not '%s'", d->name, expect, text);
    v[count++] = (int)u;
  }
  if (count == 2) /* no image has two colour planes */
    return refuse(why, n, HT_ERR_INVALID_ARGUMENT, "%s %s, not '%s'", d->name, expect, text);
  p->levels = v[0];
  memset(p->plane_levels, 0, sizeof p->plane_levels);
  for (int i = 0; i < count; i++)
    p->plane_levels[i] = v[i];
  return HT_OK;
}

ht_status ht_params_set_text(ht_params *p, ht_param_id id, const char *text, char *why, size_t n)
{
  if (!p || !text || (int)id < 0 || id >= HT_PARAM_COUNT)
    return refuse(why, n, HT_ERR_INVALID_ARGUMENT, "no parameters, no text or no parameter %d", (int)id);
  const param_row *r = &params[id];
  const ht_param *d = &r->pub;
  char expect[600];
  if (r->kind == FIELD_NONE)
    return refuse(why, n, HT_ERR_INVALID_ARGUMENT, "%s is a setting of the context", d->name);
  if (r->kind == FIELD_FILTER) {
    char err[256];
    if (ht_filter_parse(text, &p->filter, err, sizeof err) != HT_OK)
      return refuse(why, n, HT_ERR_BAD_COEFFICIENTS, "%s: %s", d->name, err);
    return HT_OK;
  }
  if (r->kind == FIELD_ANGLES) {
    if (!parse_angles(text, d, (double *)((char *)p + r->offset)))
      return refuse(why, n, HT_ERR_INVALID_ARGUMENT, "%s must be 3 or 4 numbers %g..%g separated by commas "
                    "(C,M,Y[,K]), not '%s'", d->name, d->min, d->max, text);
    return HT_OK;
  }
  if (d->per_plane && strchr(text, ','))
    return set_per_plane(p, id, text, why, n);
  expect_text(id, d, expect, sizeof expect);
  double v;
  uint64_t u;
  switch (d->type) {
  case HT_TYPE_INT:
  case HT_TYPE_SEED:
    if (!parse_whole(text, &u) || (double)u > d->max || (double)u < d->min ||
        ((id == HT_PARAM_MASK_SIZE || id == HT_PARAM_NOISE_SIZE) && (u > INT32_MAX || !is_power_of_two((int)u))))
      return refuse(why, n, HT_ERR_INVALID_ARGUMENT, "%s %s, not '%s'", d->name, expect, text);
    if (r->kind == FIELD_U64) {
      *(uint64_t *)((char *)p + r->offset) = u; /* exact where a double is not */
      return HT_OK;
    }
    return ht_params_set_number(p, id, (double)u, why, n);
  case HT_TYPE_NUMBER:
    if (!parse_decimal(text, &v) || v < d->min || v > d->max)
      return refuse(why, n, HT_ERR_INVALID_ARGUMENT, "%s %s, not '%s'", d->name, expect, text);
    return ht_params_set_number(p, id, v, why, n);
  case HT_TYPE_BOOL:
    if (strcmp(text, "0") != 0 && strcmp(text, "1") != 0)
      return refuse(why, n, HT_ERR_INVALID_ARGUMENT, "%s %s, not '%s'", d->name, expect, text);
    return ht_params_set_number(p, id, text[0] == '1', why, n);
  case HT_TYPE_CHOICE: {
    const ht_choice *c = ht_choice_by_name(d->list, text);
    if (!c)
      return refuse(why, n, HT_ERR_INVALID_ARGUMENT, "%s %s, not '%s'", d->name, expect, text);
    return ht_params_set_number(p, id, c->value, why, n);
  }
  case HT_TYPE_TEXT: break;
  }
  return refuse(why, n, HT_ERR_INVALID_ARGUMENT, "%s cannot be set from text", d->name);
}

ht_status ht_params_check_ranges(const ht_params *p, char *why, size_t n)
{
  for (int i = 0; i < HT_PARAM_COUNT; i++) {
    const param_row *r = &params[i];
    if (r->kind != FIELD_INT && r->kind != FIELD_DOUBLE && r->kind != FIELD_U64 && r->kind != FIELD_PLANES &&
        r->kind != FIELD_ANGLES)
      continue;
    const char *field = (const char *)p + r->offset;
    if (r->kind == FIELD_ANGLES) {
      for (int j = 0; j < HT_MAX_PLANES; j++) {
        const double a = ((const double *)field)[j];
        if (!(a >= r->pub.min && a <= r->pub.max)) { /* false for NaN too */
          snprintf(why, n, "%s: plane %d's angle must be %g..%g, got %g", r->pub.name, j + 1, r->pub.min,
                   r->pub.max, a);
          return HT_ERR_INVALID_ARGUMENT;
        }
      }
      continue;
    }
    const int planes = r->kind == FIELD_PLANES ? HT_MAX_PLANES : 1;
    for (int j = 0; j < planes; j++) {
      double v = r->kind == FIELD_PLANES ? ((const double *)field)[j] : ht_params_get_number(p, (ht_param_id)i);
      if (!value_ok((ht_param_id)i, &r->pub, v, why, n))
        return HT_ERR_INVALID_ARGUMENT;
    }
  }
  return HT_OK;
}
