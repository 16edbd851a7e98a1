/* Names: status strings, variant names and the lists of choices that the
 * tools, the GEGL operation and the GIMP dialog show (halftone.h,
 * "names for UIs"). The filter and variant lists are made from the
 * filter table (filters.c) and the implementation tables (impl_*.c), so a
 * new filter or implementation appears everywhere by its row alone. */
#include "ht-config.h"
#include "methods.h"
#include "filter.h"
#include "impl.h"

#include <pthread.h>
#include <string.h>

#define N_(text) text

const char *ht_version(void) { return HT_VERSION; }

const char *ht_notice_no_gpu(void) { return N_("no NVIDIA GPU found; computed on the CPU, same result"); }

const char *ht_status_string(ht_status s)
{
  switch (s) {
  case HT_OK: return "success";
  case HT_ERR_INVALID_ARGUMENT: return "invalid argument";
  case HT_ERR_BAD_SIZE: return "bad image size";
  case HT_ERR_BAD_PIXEL: return "bad pixel value";
  case HT_ERR_BAD_COEFFICIENTS: return "bad filter coefficients";
  case HT_ERR_NO_MEMORY: return "out of memory";
  case HT_ERR_UNSUPPORTED: return "unsupported combination";
  case HT_ERR_NO_GPU: return "no usable GPU";
  case HT_ERR_GPU: return "GPU failure";
  case HT_ERR_CANCELLED: return "cancelled";
  case HT_ERR_IO: return "input/output error";
  }
  return "unknown status";
}

/* ------------------------------------------------------------ variants */

const char *ht_variant_name(ht_variant v)
{
  if (v == HT_VARIANT_AUTO)
    return "auto";
  const ht_impl *impl = ht_impl_of(v);
  return impl ? impl->name : "unknown";
}

int ht_variant_from_name(const char *name)
{
  const ht_choice *c = ht_choice_by_name(HT_LIST_VARIANTS, name);
  return c ? c->value : -1;
}

ht_backend ht_variant_backend(ht_variant v)
{
  const ht_impl *impl = ht_impl_of(v);
  return impl ? impl->backend : HT_BACKEND_AUTO;
}

int ht_variant_method(ht_variant v)
{
  const ht_impl *impl = ht_impl_of(v);
  return impl ? (int)impl->method : -1;
}

/* --------------------------------------------------------------- lists */

static const ht_choice backends[] = {
  { HT_BACKEND_AUTO, "auto", N_("Automatic (GPU where faster)"),
    "the GPU where it is expected to be faster, counting the time to start it, and usable; else the CPU" },
  { HT_BACKEND_CPU, "cpu", N_("CPU"), "every core the process may run on" },
  { HT_BACKEND_CUDA, "cuda", N_("NVIDIA GPU (CUDA)"), "an NVIDIA GPU; fails where none is usable" },
};

static const ht_choice color_modes[] = {
  { HT_COLOR_LUMA, "luma", N_("Luminance (black and white)"),
    "colour input reduced to its Rec. 709 luma (of the stored values): one gray plane out" },
  { HT_COLOR_PER_CHANNEL, "per-channel", N_("Each channel separately"),
    "every colour channel a plane of its own: RGB (or CMYK) out" },
  { HT_COLOR_PLANE_DEPENDENT, "plane-dependent", N_("Plane-dependent colour"),
    "every colour channel a plane, errors passed between the planes (inter-plane weights) so that colorants "
    "overlap less: less grain" },
  { HT_COLOR_CMYK, "cmyk", N_("CMYK separations"),
    "RGB separated into cyan, magenta, yellow and black ink planes (black generation), run plane-dependent" },
};


static const ht_choice inits[] = {
  { HT_INIT_RANDOM, "random", N_("Random dither"),
    "white with the probability of the pixel's value, from the seed (the paper's start)" },
  { HT_INIT_FLOYD_STEINBERG, "floyd-steinberg", N_("Floyd-Steinberg"),
    "error diffusion first: fewer rounds to a lower error" },
};

static const ht_choice schedules[] = {
  { HT_SCHEDULE_PARALLEL, "parallel", N_("Parallel blocks"),
    "blocks of windows in four interleaved groups, every thread at once; the same result for any number of threads" },
  { HT_SCHEDULE_RASTER, "raster", N_("Raster order (one thread)"),
    "windows slid in raster order over the whole image, the paper's sequential reference" },
};

static const ht_choice dots[] = {
  { HT_DOT_ROUND, "round", N_("Round"), "a circle that grows until it meets its neighbours, then square holes" },
  { HT_DOT_ELLIPSE, "ellipse", N_("Ellipse"),
    "an ellipse that joins its neighbours along one axis first: chains, smoother midtones" },
  { HT_DOT_SQUARE, "square", N_("Square"), "a square, the corners last: a checkerboard at 50 %" },
  { HT_DOT_LINE, "line", N_("Line"), "lines along the screen's angle, thicker for darker tones" },
  { HT_DOT_DIAMOND, "diamond", N_("Diamond"), "a square turned 45 degrees" },
  { HT_DOT_EUCLIDEAN, "euclidean", N_("Euclidean"),
    "round in the highlights, a checkerboard at 50 %, round holes in the shadows (PostScript's default)" },
};

static const ht_choice objectives[] = {
  { HT_OBJECTIVE_FILTERED, "filtered", N_("Filtered error (DBS)"),
    "the squared difference of input and halftone as the eye sees both (the DBS literature's, and its measure)" },
  { HT_OBJECTIVE_LES, "les", N_("Input against the seen halftone (LES paper)"),
    "the input against the eye's view of the halftone, |a - V*b|, as LES and PES minimise it" },
};

static const ht_choice spaces[] = {
  { HT_SPACE_STORED, "stored", N_("Stored (gamma-encoded values)"),
    "the values as image files store them, levels evenly spaced in those values" },
  { HT_SPACE_LINEAR, "linear", N_("Linear light"),
    "the values decoded to light (sRGB), levels evenly spaced in light: the tone the eye averages is kept" },
};

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* auto, then every implementation in the order of the tables */
static ht_choice variants[1 + 64];
static int nvariants;
static pthread_once_t variants_once = PTHREAD_ONCE_INIT;

static void make_variants(void)
{
  variants[0] = (ht_choice){ HT_VARIANT_AUTO, "auto", N_("Automatic (the fastest)"),
                             "the fastest implementation of the backend that takes the job" };
  nvariants = 1;
  for (int i = 0; i < ht_impls_cpu_count && nvariants < COUNT(variants); i++, nvariants++)
    variants[nvariants] = (ht_choice){ ht_impls_cpu[i].variant, ht_impls_cpu[i].name, ht_impls_cpu[i].label, "" };
  for (int i = 0; i < ht_impls_cuda_count && nvariants < COUNT(variants); i++, nvariants++)
    variants[nvariants] = (ht_choice){ ht_impls_cuda[i].variant, ht_impls_cuda[i].name, ht_impls_cuda[i].label, "" };
}

const ht_choice *ht_choices(ht_list list, int *count)
{
  int n = 0;
  const ht_choice *c = NULL;
  switch (list) {
  case HT_LIST_FILTERS: c = ht_filter_choices(&n); break;
  case HT_LIST_VARIANTS:
    pthread_once(&variants_once, make_variants);
    c = variants;
    n = nvariants;
    break;
  case HT_LIST_BACKENDS: c = backends; n = COUNT(backends); break;
  case HT_LIST_COLOR_MODES: c = color_modes; n = COUNT(color_modes); break;
  case HT_LIST_METHODS:
    c = ht_method_choices(&n);
    break;
  case HT_LIST_INITS: c = inits; n = COUNT(inits); break;
  case HT_LIST_SCHEDULES: c = schedules; n = COUNT(schedules); break;
  case HT_LIST_OBJECTIVES: c = objectives; n = COUNT(objectives); break;
  case HT_LIST_ALGORITHMS:
    c = ht_algorithm_choices(&n);
    break;
  case HT_LIST_DOTS: c = dots; n = COUNT(dots); break;
  case HT_LIST_SPACES: c = spaces; n = COUNT(spaces); break;
  case HT_LIST_COUNT: break;
  }
  if (count)
    *count = c ? n : 0;
  return c;
}

const ht_choice *ht_choice_by_name(ht_list list, const char *name)
{
  int n;
  const ht_choice *c = ht_choices(list, &n);
  for (int i = 0; name && i < n; i++)
    if (strcmp(c[i].name, name) == 0)
      return &c[i];
  return NULL;
}

const ht_choice *ht_choice_by_value(ht_list list, int value)
{
  int n;
  const ht_choice *c = ht_choices(list, &n);
  for (int i = 0; i < n; i++)
    if (c[i].value == value)
      return &c[i];
  return NULL;
}
