/* The methods (methods.h): one row each with its name, label, help,
 * algorithm value, capabilities, colour modes and the parameters it uses,
 * the lists HT_LIST_METHODS and HT_LIST_ALGORITHMS made from the rows,
 * and a method set on parameters by its algorithm value. A new method is
 * one row here; describe.c tells the front ends what its row says. */
#include "methods.h"
#include "filter.h"
#include "impl.h"

#include <pthread.h>

#define N_(text) text
#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define ANY HT_ANY_ALGORITHM

#define PD_COLORS ((1u << HT_COLOR_PLANE_DEPENDENT) | (1u << HT_COLOR_CMYK))
#define PLANE_COLORS ((1u << HT_COLOR_LUMA) | (1u << HT_COLOR_PER_CHANNEL))

/* What error diffusion uses, alone or with its planes coupled. */
#define DIFFUSION_USES                                                                                          \
  { HT_PARAM_COEFFICIENTS, HT_FILTER_CUSTOM, HT_COLORS_ALL, 0, 0 }, { HT_PARAM_LEVELS, ANY, HT_COLORS_ALL, 0, 0 }, \
    { HT_PARAM_SERPENTINE, ANY, HT_COLORS_ALL, 0, 0 },                                                          \
    { HT_PARAM_INTERPLANE_FORWARD, ANY, PD_COLORS, 0, 0 }, { HT_PARAM_INTERPLANE_BACKWARD, ANY, PD_COLORS, 0, 0 }, \
    { HT_PARAM_RANDOMIZE, ANY, PD_COLORS, 0, 0 }, { HT_PARAM_SEED, ANY, PD_COLORS, 0, 0 },                     \
    { HT_PARAM_BLACK, ANY, 1u << HT_COLOR_CMYK, 0, 0 }, { HT_PARAM_STRENGTH, ANY, HT_COLORS_ALL, 0, 0 }

/* What the search methods use; the seed only for the random start. */
#define SEARCH_USES                                                                                             \
  { HT_PARAM_SIGMA, ANY, PLANE_COLORS, 0, 0 }, { HT_PARAM_EYE_RADIUS, ANY, PLANE_COLORS, 0, 0 },                \
    { HT_PARAM_INIT, ANY, PLANE_COLORS, 0, 0 }, { HT_PARAM_SCHEDULE, ANY, PLANE_COLORS, 0, 0 },                 \
    { HT_PARAM_MAX_ROUNDS, ANY, PLANE_COLORS, 0, 0 }, { HT_PARAM_RUN_LONG, ANY, PLANE_COLORS, 0, 0 },          \
    { HT_PARAM_SEED, ANY, PLANE_COLORS, HT_PARAM_INIT, 1u << HT_INIT_RANDOM }

/* In ht_method order. */
static const method_row methods[] = {
  { { HT_METHOD_ERROR_DIFFUSION, "error-diffusion", N_("Error diffusion"),
      "an error filter spreads each pixel's rounding error to its unprocessed neighbours" },
    -1, HT_MCAP_LEVELS | HT_MCAP_SERPENTINE | HT_MCAP_BANDS, HT_COLORS_ALL, { DIFFUSION_USES } },
  { { HT_METHOD_LES, "les", N_("Local exhaustive search (LES)"),
      "every black-and-white pattern of each m x m window, the best kept, until nothing improves; the slowest" },
    HT_ALGORITHM_LES, HT_MCAP_SEARCH, PLANE_COLORS, { { HT_PARAM_WINDOW, ANY, PLANE_COLORS, 0, 0 }, SEARCH_USES } },
  { { HT_METHOD_PES, "pes", N_("Partial exhaustive search (PES)"),
      "like LES, but only the patterns with about as many white pixels as the window has; about 1.5 to 2 times LES's time" },
    HT_ALGORITHM_PES, HT_MCAP_SEARCH, PLANE_COLORS, { { HT_PARAM_WINDOW, ANY, PLANE_COLORS, 0, 0 }, SEARCH_USES } },
  { { HT_METHOD_DBS, "dbs", N_("Direct binary search (DBS)"),
      "toggles a pixel or swaps it with a neighbour wherever that brings the result nearer the original; fast" },
    HT_ALGORITHM_DBS, HT_MCAP_SEARCH, PLANE_COLORS,
    { SEARCH_USES, { HT_PARAM_OBJECTIVE, ANY, PLANE_COLORS, 0, 0 } } },
  { { HT_METHOD_PLANE_DEPENDENT, "plane-dependent", N_("Plane-dependent colour error diffusion"),
      "error diffusion of all colour planes of a pixel together, with errors fed between the planes" },
    -1, HT_MCAP_LEVELS | HT_MCAP_SERPENTINE | HT_MCAP_COUPLED, PD_COLORS, { DIFFUSION_USES } },
  { { HT_METHOD_BAYER, "bayer", N_("Ordered dither (Bayer matrix)"),
      "each pixel against its own threshold from a Bayer matrix: a regular cross-hatch, no error carried, every "
      "pixel on its own" },
    HT_ALGORITHM_BAYER, HT_MCAP_LEVELS, PLANE_COLORS,
    { { HT_PARAM_LEVELS, ANY, PLANE_COLORS, 0, 0 }, { HT_PARAM_MASK_SIZE, ANY, PLANE_COLORS, 0, 0 } } },
  { { HT_METHOD_THRESHOLD, "threshold", N_("Threshold (no dither)"),
      "each pixel to its nearest level, no pattern and no error carried: flat areas stay flat, for line art" },
    HT_ALGORITHM_THRESHOLD, HT_MCAP_LEVELS, PLANE_COLORS, { { HT_PARAM_LEVELS, ANY, PLANE_COLORS, 0, 0 } } },
  { { HT_METHOD_BLUE_NOISE, "blue-noise", N_("Ordered dither (blue noise)"),
      "each pixel against its own threshold from a blue-noise mask made from the seed: fine, even grain without "
      "patterns or worms, every pixel on its own" },
    HT_ALGORITHM_BLUE_NOISE, HT_MCAP_LEVELS, PLANE_COLORS,
    { { HT_PARAM_LEVELS, ANY, PLANE_COLORS, 0, 0 }, { HT_PARAM_NOISE_SIZE, ANY, PLANE_COLORS, 0, 0 },
      { HT_PARAM_SEED, ANY, PLANE_COLORS, 0, 0 } } },
  { { HT_METHOD_SCREEN, "screen", N_("AM screen (print)"),
      "dots of a chosen shape on a grid of lines per inch at a screen angle, as print makes them" },
    HT_ALGORITHM_SCREEN, HT_MCAP_LEVELS, PLANE_COLORS,
    { { HT_PARAM_LEVELS, ANY, PLANE_COLORS, 0, 0 }, { HT_PARAM_LPI, ANY, PLANE_COLORS, 0, 0 },
      { HT_PARAM_DPI, ANY, PLANE_COLORS, 0, 0 }, { HT_PARAM_ANGLE, ANY, 1u << HT_COLOR_LUMA, 0, 0 },
      { HT_PARAM_ANGLES, ANY, 1u << HT_COLOR_PER_CHANNEL, 0, 0 }, { HT_PARAM_DOT, ANY, PLANE_COLORS, 0, 0 } } },
};

const method_row *ht_method_rows(int *count)
{
  *count = COUNT(methods);
  return methods;
}

const method_row *ht_method_row(ht_method m)
{
  for (int i = 0; i < COUNT(methods); i++)
    if (methods[i].choice.value == (int)m)
      return &methods[i];
  return NULL;
}

/* The public view of the rows, with the backends found in the
 * implementation tables. */
static ht_method_info infos[COUNT(methods)];
static pthread_once_t infos_once = PTHREAD_ONCE_INIT;

static void make_infos(void)
{
  for (int i = 0; i < COUNT(methods); i++) {
    const method_row *r = &methods[i];
    unsigned backends = 0;
    for (int k = 0; k < ht_impls_cpu_count; k++)
      if ((int)ht_impls_cpu[k].method == r->choice.value)
        backends |= 1u << HT_BACKEND_CPU;
    for (int k = 0; k < ht_impls_cuda_count; k++)
      if ((int)ht_impls_cuda[k].method == r->choice.value)
        backends |= 1u << HT_BACKEND_CUDA;
    infos[i] = (ht_method_info){ (ht_method)r->choice.value, r->algorithm, r->choice.name, r->caps, r->colors,
                                 backends };
  }
}

const ht_method_info *ht_method_describe(ht_method m)
{
  pthread_once(&infos_once, make_infos);
  for (int i = 0; i < COUNT(methods); i++)
    if (infos[i].method == m)
      return &infos[i];
  return NULL;
}

int ht_algorithm_method(int algorithm)
{
  for (int i = 0; i < COUNT(methods); i++)
    if (methods[i].algorithm >= 0 && methods[i].algorithm == algorithm)
      return methods[i].choice.value;
  return algorithm >= 0 && (algorithm == HT_FILTER_CUSTOM || ht_filter_builtin((ht_filter_id)algorithm))
           ? HT_METHOD_ERROR_DIFFUSION
           : -1;
}

/* HT_LIST_METHODS: the method rows' choices. */
static ht_choice method_choices[16];
static int nmethods;
static pthread_once_t methods_once = PTHREAD_ONCE_INIT;

static void make_methods(void)
{
  for (int i = 0; i < COUNT(methods) && nmethods < COUNT(method_choices); i++)
    method_choices[nmethods++] = methods[i].choice;
}

/* The filters under their ids, then the methods that have an algorithm
 * value of their own (HT_ALGORITHM_*), in the order of their rows. */
static ht_choice algorithms[64 + 16]; /* every filter id is below HT_ALGORITHM_LES (64) */
static int nalgorithms;
static pthread_once_t algorithms_once = PTHREAD_ONCE_INIT;

static void make_algorithms(void)
{
  int n;
  const ht_choice *f = ht_filter_choices(&n);
  for (int i = 0; i < n && nalgorithms < 64; i++)
    algorithms[nalgorithms++] = f[i];
  for (int i = 0; i < COUNT(methods) && nalgorithms < COUNT(algorithms); i++)
    if (methods[i].algorithm >= 0) {
      algorithms[nalgorithms] = methods[i].choice;
      algorithms[nalgorithms++].value = methods[i].algorithm;
    }
}

const ht_choice *ht_method_choices(int *count)
{
  pthread_once(&methods_once, make_methods);
  *count = nmethods;
  return method_choices;
}

const ht_choice *ht_algorithm_choices(int *count)
{
  pthread_once(&algorithms_once, make_algorithms);
  *count = nalgorithms;
  return algorithms;
}

ht_status ht_params_set_algorithm(ht_params *p, int algorithm)
{
  if (!p)
    return HT_ERR_INVALID_ARGUMENT;
  const int method = ht_algorithm_method(algorithm);
  if (method < 0)
    return HT_ERR_INVALID_ARGUMENT;
  p->method = (ht_method)method;
  if (method == HT_METHOD_ERROR_DIFFUSION && algorithm != HT_FILTER_CUSTOM)
    p->filter = *ht_filter_builtin((ht_filter_id)algorithm);
  return HT_OK;
}

int ht_params_algorithm(const ht_params *p)
{
  if (!p)
    return -1;
  const method_row *r = ht_method_row(p->method);
  return r && r->algorithm >= 0 ? r->algorithm : (int)p->filter.id;
}

