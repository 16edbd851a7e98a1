/* libhalftone: exact halftoning.
 *
 * One umbrella header. C11, no GLib. Every public symbol has the `ht_`
 * prefix. Inputs are const, outputs are caller-owned; the library never
 * keeps a pointer to caller memory after a call returns.
 *
 * The shape of a run:
 *  - a *method* says how levels are chosen: error diffusion, or one of
 *    the search methods (LES, PES, DBS: docs/search.md), which look for
 *    the binary image whose blur by a model of the eye is nearest the
 *    input;
 *  - *planes*: an image's colour channels are reduced to luma, run one
 *    by one, or (for a coupling method) run together with inter-plane
 *    error weights; every plane may have its own number of levels;
 *  - an *implementation* (ht_variant) computes a method on a backend;
 *    every implementation of a method gives the same bits;
 *  - a *seed* keys the counter-based generator (core/shared/rng.h) for methods
 *    that draw random numbers, an *eye model* (core/shared/eye.h) scores the
 *    search methods, and *carried rows* (ht_run_band) let a tall plane
 *    be run as bands, on one machine or many, with the same result.
 *
 * The arithmetic every backend shares (fixed point, threshold, edges,
 * random numbers, the eye) is defined in core/shared/fixed.h, core/shared/rng.h and
 * core/shared/eye.h and documented in docs/arithmetic.md.
 */
#ifndef HALFTONE_H
#define HALFTONE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(HT_BUILDING_LIBRARY) && defined(__GNUC__)
#define HT_API __attribute__((visibility("default")))
#else
#define HT_API
#endif

/* ---------------------------------------------------------------- status */

typedef enum {
  HT_OK = 0,
  HT_ERR_INVALID_ARGUMENT, /* a NULL pointer, an out-of-range parameter    */
  HT_ERR_BAD_SIZE,         /* zero, negative or too large dimensions        */
  HT_ERR_BAD_PIXEL,        /* NaN or infinite float pixel                   */
  HT_ERR_BAD_COEFFICIENTS, /* malformed custom filter string                */
  HT_ERR_NO_MEMORY,        /* an allocation failed                          */
  HT_ERR_UNSUPPORTED,      /* combination not available (e.g. serpentine on
                              a parallel variant)                           */
  HT_ERR_NO_GPU,           /* backend "cuda" asked for, none usable         */
  HT_ERR_GPU,              /* the GPU failed during the run                 */
  HT_ERR_CANCELLED,        /* the progress callback returned false          */
  HT_ERR_IO,               /* file input/output (tools only)                */
} ht_status;

/* Static English name of a status, e.g. "invalid argument". */
HT_API const char *ht_status_string(ht_status status);

/* ---------------------------------------------------------------- images */

typedef enum {
  HT_FORMAT_U8 = 0,   /* 0..255                                       */
  HT_FORMAT_U16,      /* 0..65535, native endianness                  */
  HT_FORMAT_F32,      /* 0.0..1.0 (clamped); NaN/Inf rejected          */
  HT_FORMAT_BIT1,     /* output only: packed 1 bit per pixel, MSB
                         first, rows padded to whole bytes; bit set =
                         black (level 0), as in PBM. Binary output only */
} ht_format;

/* A caller-owned image. `stride` is in bytes between row starts and may
 * be larger than width * channels * sample size. Channels are
 * interleaved. For U16 and F32 images, `data` must be aligned to the
 * sample size (2 or 4 bytes) and `stride` a multiple of it, so that
 * every sample is aligned; other images are refused with
 * HT_ERR_INVALID_ARGUMENT. U8 and BIT1 images may start and stride at
 * any byte. */
typedef struct {
  int64_t width;
  int64_t height;
  size_t stride;
  int channels;       /* 1..4; an output 1..5 (cmyk's inks + alpha)    */
  ht_format format;
  void *data;         /* input images are only read                    */
} ht_image;

/* Largest accepted side and pixel count: beyond these the run is refused
 * with HT_ERR_BAD_SIZE instead of overflowing anything. */
#define HT_MAX_SIDE ((int64_t)1 << 24)           /* 16 777 216          */
#define HT_MAX_PIXELS ((int64_t)1 << 36)         /* 64 Gi pixels         */

/* Bytes per row needed for `width` pixels of `channels` in `format`. */
HT_API size_t ht_format_row_bytes(ht_format format, int64_t width, int channels);

/* --------------------------------------------------------------- filters */

#define HT_FILTER_MAX_TAPS 32
#define HT_FILTER_MAX_LEFT 4  /* columns left of the current pixel        */
#define HT_FILTER_MAX_RIGHT 4 /* columns right of the current pixel       */
#define HT_FILTER_MAX_DOWN 3  /* rows below the current row               */
#define HT_FILTER_NAME_MAX 32
/* The custom syntax's numbers: a weight is 0..HT_FILTER_MAX_WEIGHT, a
 * divisor 1..HT_FILTER_MAX_DIVISOR, what HT_FILTER_MAX_TAPS of the
 * largest weights add up to, so that the divisor a string leaves
 * implicit (the sum of its weights) can always be written out. */
#define HT_FILTER_MAX_WEIGHT 1000000
#define HT_FILTER_MAX_DIVISOR (HT_FILTER_MAX_TAPS * HT_FILTER_MAX_WEIGHT)

typedef enum {
  HT_FILTER_FLOYD_STEINBERG = 0,
  HT_FILTER_JARVIS_JUDICE_NINKE,
  HT_FILTER_STUCKI,
  HT_FILTER_BURKES,
  HT_FILTER_SIERRA_3,
  HT_FILTER_SIERRA_2,
  HT_FILTER_SIERRA_LITE,
  HT_FILTER_ATKINSON,
  HT_FILTER_CUSTOM = 8, /* only from ht_filter_parse; its value stays 8
                           (scripts pass it), built-in filters added later
                           take 9 on. ht_choices(HT_LIST_FILTERS) lists
                           them all, custom last                          */
  HT_FILTER_COUNT_BUILTIN = 8 /* the built-in filters of version 0.1 (0..7); not a count to loop to */
} ht_filter_id;

/* One weight: the error of pixel (x, y) goes to (x + dx, y + dy) with
 * weight num / den. `q` is the weight in the library's fixed point (see
 * core/shared/fixed.h); every backend uses `q`, never num/den. */
typedef struct {
  int8_t dx, dy;
  int32_t num;
  int32_t q;
} ht_tap;

typedef struct {
  ht_filter_id id;
  char name[HT_FILTER_NAME_MAX]; /* kebab-case, e.g. "floyd-steinberg"   */
  int32_t den;
  int ntaps;
  ht_tap taps[HT_FILTER_MAX_TAPS]; /* ordered by (dy, dx)                */
  /* Derived reach: how far the filter pushes error. */
  int reach_left, reach_right, reach_down;
  /* Row delay of the k-delay parallel scan (Kasagi et al. Sec. III): row
   * y+1 may process column x once row y has finished column x + k - 1.
   * 2 for Floyd-Steinberg, 3 for Jarvis-Judice-Ninke. */
  int delay;
} ht_filter;

/* The built-in filter `id` (not HT_FILTER_CUSTOM); NULL when out of range.
 * The returned table is static and read-only. */
HT_API const ht_filter *ht_filter_builtin(ht_filter_id id);

/* Built-in filter by kebab-case name ("floyd-steinberg", "stucki", ...). */
HT_API const ht_filter *ht_filter_by_name(const char *name);

/* Parses a custom filter. Syntax (docs/coefficients.md):
 *   rows separated by ';', an optional "/ DEN" at the very end.
 *   The first row holds '*' (the current pixel) preceded by '-' place
 *   holders for the pixels already processed; the other rows are centred
 *   on the '*' column. Without "/ DEN" the divisor is the sum of weights.
 *   Example (Floyd-Steinberg): "- * 7; 3 5 1 / 16"
 * On failure returns HT_ERR_BAD_COEFFICIENTS and writes a one-line
 * message naming the 1-based character position into `err` (may be NULL).
 */
HT_API ht_status ht_filter_parse(const char *text, ht_filter *out,
                                 char *err, size_t err_size);

/* Writes the filter in the custom syntax, with its divisor explicit:
 * text that ht_filter_parse turns back into the same divisor and the
 * same non-zero weights at the same places (every parsed and built-in
 * filter formats). HT_ERR_INVALID_ARGUMENT, and "" in `buf` where size
 * allows, when `size` is too small or the filter is one the syntax
 * cannot hold (a weight or divisor out of range, two weights at one
 * place, a weight on a pixel already processed or out of reach, weights
 * that sum to more than the divisor or to 0). */
HT_API ht_status ht_filter_format(const ht_filter *filter, char *buf, size_t size);

/* -------------------------------------------------------------- run-time */

typedef enum {
  HT_BACKEND_AUTO = 0, /* the GPU where it is expected to be faster,
                        * counting the cost of opening it (about 0.3 s,
                        * once per context), and usable; else the CPU
                        * (with a notice when the GPU was tried)       */
  HT_BACKEND_CPU,
  HT_BACKEND_CUDA,
} ht_backend;

/* Which implementation computes the error diffusion. All give identical
 * bits; they exist as benchmark rows and as readable references. */
typedef enum {
  HT_VARIANT_AUTO = 0,   /* the fastest for the backend                 */
  HT_VARIANT_ED,         /* error diffusion (reference), Sec. II        */
  HT_VARIANT_EC,         /* error collection, Sec. II                   */
  HT_VARIANT_ED_RC,      /* ED with register caching, Sec. II           */
  HT_VARIANT_EC_RC,      /* EC with register caching, Sec. II           */
  HT_VARIANT_WAVEFRONT,  /* threaded k-delay parallel scan, Sec. III    */
  HT_VARIANT_STREAM,     /* error collection in skewed column chunks, the
                            carried rows streamed (ht_run_band_stream)  */
  HT_VARIANT_COUNT_CPU,  /* one past the error-diffusion CPU variants;
                            7 stays free for one more                   */
  /* The search methods' CPU implementations (core/search/, Kouge, Ito,
   * Nakano): the parallel block schedule on the context's threads, or
   * the raster schedule on one (ht_params.schedule) */
  HT_VARIANT_LES_CPU = 8, /* local exhaustive search                    */
  HT_VARIANT_PES_CPU,     /* partial exhaustive search                  */
  HT_VARIANT_DBS_CPU,     /* direct binary search                       */
  /* Plane-dependent colour error diffusion (core/color/, docs/color.md) */
  HT_VARIANT_PD_CPU = 11, /* the sequential reference; serpentine too   */
  HT_VARIANT_PD_THREADS,  /* threaded k-delay scan of the rows          */
  /* Ordered dithering (core/ordered/) */
  HT_VARIANT_BAYER_CPU,   /* Bayer's matrix, rows on the context's threads */
  HT_VARIANT_THRESHOLD_CPU, /* the nearest level, rows on the threads   */
  HT_VARIANT_BLUE_NOISE_CPU, /* a blue-noise mask, rows on the threads  */
  /* GPU variants (cuda module, Kasagi et al. Sec. III-V) */
  HT_VARIANT_GPU_FIRST = 16,
  HT_VARIANT_GPU_FAST = HT_VARIANT_GPU_FIRST, /* ours: a warp per band of
                            32 rows, persistent kernel (cuda/diffusion/fast.cu)   */
  /* the paper's, Table V (2): global memory, as designed for the PRAM */
  HT_VARIANT_GPU_3D_PED,
  HT_VARIANT_GPU_2D_PED_ATOMIC,
  HT_VARIANT_GPU_2D_PED_DOUBLE,
  HT_VARIANT_GPU_2D_PEC,
  /* Table V (3): the same with data permutation */
  HT_VARIANT_GPU_3D_PED_PERM,
  HT_VARIANT_GPU_2D_PED_ATOMIC_PERM,
  HT_VARIANT_GPU_2D_PED_DOUBLE_PERM,
  HT_VARIANT_GPU_2D_PEC_PERM,
  /* Table V (4): parallelogram blocks in shared memory (Sec. V) */
  HT_VARIANT_GPU_PB_PED,
  HT_VARIANT_GPU_PB_PED_RC,
  HT_VARIANT_GPU_PB_PEC,
  HT_VARIANT_GPU_PB_PEC_RC,
  HT_VARIANT_GPU_END,
  /* The search methods on the GPU (cuda/search/, Kouge et al. Sec.
   * IV): the parallel schedule, bit for bit the CPU's */
  HT_VARIANT_LES_GPU = 32,
  HT_VARIANT_PES_GPU,
  HT_VARIANT_DBS_GPU,
  /* GPU plane-dependent colour error diffusion (cuda/color/pd.cu): apart
   * from the error-diffusion range above, as it computes another method */
  HT_VARIANT_GPU_PD = 48,
  /* More ordered dithering (core/ordered/), past the GPU's ranges */
  HT_VARIANT_SCREEN_CPU = 56, /* an AM screen, rows on the threads       */
} ht_variant;

HT_API const char *ht_variant_name(ht_variant v);
/* Returns the variant named `name` (e.g. "ec-rc"), or -1. */
HT_API int ht_variant_from_name(const char *name);
/* The backend a variant runs on (HT_BACKEND_AUTO for HT_VARIANT_AUTO). */
HT_API ht_backend ht_variant_backend(ht_variant v);
/* The ht_method a variant computes, or -1 (HT_VARIANT_AUTO, unknown). */
HT_API int ht_variant_method(ht_variant v);

typedef enum {
  HT_COLOR_LUMA = 0,    /* colour input reduced to luminance (Rec. 709
                           weights on the stored values), one plane out */
  HT_COLOR_PER_CHANNEL, /* every colour channel a plane of its own (RGB,
                           CMYK: 3 or 4 planes), each with its levels,
                           run independently                            */
  HT_COLOR_PLANE_DEPENDENT, /* every colour channel a plane, the planes
                           coupled by ht_params.plane_weights (Zhang et
                           al., Sec. 2.1; docs/color.md): fewer dots of
                           different colorants on one pixel. Error
                           diffusion only; weights 0 give per-channel's
                           bits                                         */
  HT_COLOR_CMYK,        /* RGB input separated into four ink planes C, M,
                           Y, K (black generation ht_params.black,
                           docs/color.md), coupled as plane-dependent;
                           the output's 4 channels are ink amounts
                           (level L-1 = full ink)                        */
} ht_color_mode;

/* How output levels are chosen. */
typedef enum {
  HT_METHOD_ERROR_DIFFUSION = 0, /* an error filter (ht_filter), Kasagi
                                    et al.; planes run independently    */
  /* The search methods (docs/search.md): binary output only; each plane
   * is searched on its own. They minimise the total of |a - V*b| with
   * the eye model V (ht_params.eye) from an initial image (init),
   * window by window, in rounds until a round changes nothing. */
  HT_METHOD_LES,  /* local exhaustive search: every pattern of an m x m
                     window (Kouge, Ito, Nakano, Sec. II-B)            */
  HT_METHOD_PES,  /* partial exhaustive search: the patterns with a
                     number of white pixels near the window's (Sec. II-C) */
  HT_METHOD_DBS,  /* direct binary search (Analoui, Allebach): toggle a
                     pixel or swap it with a neighbour                 */
  HT_METHOD_PLANE_DEPENDENT, /* error diffusion of all planes of a pixel
                     together, with inter-plane error feeds (Zhang et
                     al., Sec. 2.1; docs/color.md). What error diffusion
                     becomes under the colour modes plane-dependent and
                     cmyk; it may also be set here, with one of them   */
  HT_METHOD_BAYER, /* ordered dithering with a Bayer matrix of side
                     ht_params.mask_size (Bayer 1973): each pixel against
                     its own threshold, no error carried; any levels,
                     every plane on its own (core/ordered/)            */
  HT_METHOD_THRESHOLD, /* each pixel to its nearest level, nothing
                     carried, no pattern (core/ordered/)               */
  HT_METHOD_BLUE_NOISE, /* ordered dithering with a blue-noise mask of
                     side ht_params.noise_size made by void and cluster
                     from the seed (ht_blue_noise_mask; core/ordered/) */
  HT_METHOD_SCREEN, /* an AM screen as print makes it: dots of a shape
                     (ht_params.dot) on a grid of lpi lines per inch at
                     dpi, turned by the plane's angle (docs/screens.md) */
} ht_method;

#define HT_MAX_PLANES 4
#define HT_LEVELS_MAX 256      /* output levels 2..HT_LEVELS_MAX             */
#define HT_EYE_MAX_RADIUS 7
#define HT_EYE_SIGMA_MIN 0.25  /* the eye model's sigma, in pixels           */
#define HT_EYE_SIGMA_MAX 4.0

/* The inter-plane error weights of plane-dependent colour error
 * diffusion (Zhang et al., Sec. 2.1), as a 2 x planes matrix: the share
 * of plane j's error fed forward to plane j + 1 of the same pixel, and
 * back to plane j - 1 of the next pixel in scan order (on the same row;
 * docs/color.md). All zero: the planes are independent. Non-zero
 * weights need the colour mode plane-dependent or cmyk, and forward[j] +
 * backward[j] <= 1 (the filter takes the rest). Converted once to Q12
 * as the filter weights are (docs/arithmetic.md). */
typedef struct {
  double forward[HT_MAX_PLANES];  /* mu_j, 0..1; the last plane's is unused   */
  double backward[HT_MAX_PLANES]; /* mu'_j, 0..1; the first plane's is unused */
} ht_plane_weights;

/* The eye model of the search methods and of the HVS metric: a Gaussian
 * of standard deviation `sigma` pixels over (2 radius + 1)^2 pixels, in
 * fixed point (core/shared/eye.h). Kouge et al. use sigma 1, radius 3. */
typedef struct {
  double sigma;  /* HT_EYE_SIGMA_MIN .. HT_EYE_SIGMA_MAX */
  int radius;    /* 1 .. HT_EYE_MAX_RADIUS (core/shared/eye.h: 7) */
} ht_eye_params;

/* What the numbers of an image stand for while it is halftoned. */
typedef enum {
  HT_SPACE_STORED = 0,  /* the values as stored (gamma-encoded): levels
                           evenly spaced in stored values              */
  HT_SPACE_LINEAR,      /* linear light: every sample decoded by the sRGB
                           transfer function (core/shared/srgb.h) before
                           the method sees it, levels evenly spaced in
                           light and written as the stored values whose
                           light is nearest (docs/arithmetic.md)       */
} ht_space;

typedef enum {
  HT_SCAN_RASTER = 0,   /* left to right on every row                   */
  HT_SCAN_SERPENTINE,   /* odd rows right to left, filter mirrored;
                           sequential only                              */
} ht_scan;

/* The search methods' initial image (docs/search.md). */
typedef enum {
  HT_INIT_RANDOM = 0,       /* random dither: white with probability
                               a / 65536, from the generator of
                               core/shared/rng.h keyed by (seed, plane, x, y)
                               (Kouge et al., Sec. III, Step 1)          */
  HT_INIT_FLOYD_STEINBERG,  /* this library's Floyd-Steinberg error
                               diffusion (the default: it converges in
                               fewer rounds to a lower error)           */
} ht_search_init;

/* The order in which the search methods visit their windows. */
typedef enum {
  HT_SCHEDULE_PARALLEL = 0, /* Kouge et al., Sec. IV-B: blocks of q x q
                               window positions in four interleaved
                               groups; the blocks of a group run at once
                               on the context's threads (and the GPU), the
                               same bits for every thread count          */
  HT_SCHEDULE_RASTER,       /* windows slid in raster order over the
                               whole image (the paper's CPU reference,
                               Fig. 2): one thread by definition         */
} ht_search_schedule;

#define HT_NOISE_SIZE_MAX 1024 /* the largest blue-noise mask's side      */

/* The dot shapes of the screen method (HT_LIST_DOTS). */
typedef enum {
  HT_DOT_ROUND = 0,  /* a circle, then square holes                      */
  HT_DOT_ELLIPSE,    /* an ellipse (axes 1 : 1.4) that joins its
                        neighbours along one axis first: chains         */
  HT_DOT_SQUARE,     /* a square, its corners last                       */
  HT_DOT_LINE,       /* lines along the screen's angle                   */
  HT_DOT_DIAMOND,    /* a square turned 45 degrees                       */
  HT_DOT_EUCLIDEAN,  /* round to 50 %, a checkerboard at 50 %, round
                        holes above                                      */
} ht_dot;

#define HT_SEARCH_WINDOW_MAX 5 /* LES and PES windows are 1x1 .. 5x5     */

/* What a search method minimises (docs/search.md). */
typedef enum {
  HT_OBJECTIVE_FILTERED = 0, /* sum of (V*(b - a))^2: the error the eye
                               sees of the difference, squared (DBS as
                               Analoui and Allebach define it; efficient
                               updates of Lieberman and Allebach;
                               core/shared/filtered.h)                   */
  HT_OBJECTIVE_LES,          /* sum of |a - V*b'|: the input against the
                               eye's view of the halftone (Kouge et al.,
                               formulas 1-4; core/shared/eye.h)          */
} ht_search_objective;

/* Parameters of one run. Initialise with ht_params_init() so that fields
 * added later get their defaults. */
typedef struct {
  ht_filter filter;       /* default Floyd-Steinberg                     */
  int levels;             /* 2..256, default 2                           */
  ht_scan scan;
  ht_color_mode color;
  bool alpha;             /* last input channel is alpha: copied through
                             (to 8/16-bit outputs with an alpha channel) */
  ht_variant variant;
  /* Fields below were added after 0.1.0; ht_params_init sets them. */
  ht_method method;       /* default HT_METHOD_ERROR_DIFFUSION           */
  int plane_levels[HT_MAX_PLANES]; /* levels of each plane in
                             per-channel mode, 2..256; 0 = `levels`      */
  ht_plane_weights plane_weights; /* default all zero                   */
  uint64_t seed;          /* keys the random numbers of methods that
                             draw them (core/shared/rng.h); default 0;
                             0..2^31 - 1, the range every front end (the
                             op's and GIMP's gint) can carry            */
  ht_eye_params eye;      /* default sigma 1, radius 3                   */
  /* Fields below were added with the search methods; ht_params_init
   * sets them. Every value is checked whatever the method. */
  int window;             /* m of the LES and PES m x m windows,
                             1..HT_SEARCH_WINDOW_MAX, default 4 (DBS's
                             window is always the 3 x 3 around a pixel)  */
  ht_search_init init;    /* default HT_INIT_FLOYD_STEINBERG            */
  ht_search_schedule schedule; /* default HT_SCHEDULE_PARALLEL          */
  int max_rounds;         /* rounds at most; 0 (default): until a round
                             changes nothing                            */
  /* Fields below were added with plane-dependent colour error diffusion;
   * ht_params_init sets them. */
  double randomize;       /* 0..1, default 0: how far the error filter's
                             weights are perturbed per pixel and plane,
                             their sum kept (Ulichney; docs/color.md),
                             from the generator keyed by (seed, plane, x,
                             y); plane-dependent and cmyk only           */
  double black;           /* 0..1, default 1: the share of the common
                             part of C, M, Y that the cmyk mode moves to
                             K (black generation, docs/color.md)          */
  /* Fields below are added with the methods that use them; the
   * description (ht_param_info) gives each its range and default, which
   * ht_params_init sets. */
  int mask_size;          /* the side of the bayer method's matrix, a
                             power of two 2..256, default 8              */
  int noise_size;         /* the side of the blue-noise method's mask, a
                             power of two 2..HT_NOISE_SIZE_MAX, default
                             128 (its seed: `seed`)                      */
  double lpi;             /* the screen's lines per inch, default 60     */
  double dpi;             /* the output's pixels per inch, for the screen
                             (the CLI: --dpi or the input's), default 600 */
  double angle;           /* the screen's angle in degrees for one plane
                             (gray), default 45                          */
  double angles[HT_MAX_PLANES]; /* the angles of colour planes (R, G, B
                             as C, M, Y; the fourth K), default 15, 75,
                             0, 45                                       */
  int dot;                /* ht_dot, default HT_DOT_ROUND                */
  int run_long;           /* 0 or 1, default 0: run a search whose
                             estimate (ht_estimate_seconds) is over
                             HT_ESTIMATE_LIMIT_S instead of refusing it  */
  ht_search_objective objective; /* DBS's, default HT_OBJECTIVE_FILTERED */
  double strength;        /* 0..1, default 1: the share of each pixel's
                             error that error diffusion passes on (the
                             filter's and the inter-plane weights scaled
                             in Q12, docs/arithmetic.md); 0 thresholds   */
  ht_space space;         /* default HT_SPACE_STORED: how input values are
                             read and output levels written            */
} ht_params;

HT_API void ht_params_init(ht_params *p);

/* Sets the method (and, for error diffusion, the built-in filter) of
 * `p` from a value of HT_LIST_ALGORITHMS: the filter ids 0..7, 8
 * (custom: the method becomes error diffusion and p->filter stays as it
 * is, to be set by ht_filter_parse), or HT_ALGORITHM_LES, _PES, _DBS.
 * The other fields stay. HT_ERR_INVALID_ARGUMENT for another value. */
HT_API ht_status ht_params_set_algorithm(ht_params *p, int algorithm);
/* The HT_LIST_ALGORITHMS value of p's method and filter. */
HT_API int ht_params_algorithm(const ht_params *p);

/* Progress callback: `fraction` in 0..1. Return false to cancel; the run
 * then returns HT_ERR_CANCELLED and the output contents are unspecified
 * (callers that must not lose data render into a scratch buffer). */
typedef bool (*ht_progress_fn)(double fraction, void *user);

typedef struct ht_context ht_context;

/* NULL only when out of memory. A context runs one job at a time (use
 * one per thread). It keeps the worker threads of its first threaded run
 * for the next ones (asleep in between); ht_context_free ends them. */
HT_API ht_context *ht_context_new(void);
HT_API void ht_context_free(ht_context *ctx);

HT_API void ht_context_set_backend(ht_context *ctx, ht_backend backend);
/* 0 = every core the process may run on (its affinity mask). */
HT_API void ht_context_set_threads(ht_context *ctx, int threads);
HT_API void ht_context_set_progress(ht_context *ctx, ht_progress_fn fn, void *user);
/* Notices that are not errors (e.g. "no GPU, using the CPU") go here;
 * default: none. */
typedef void (*ht_notice_fn)(const char *message, void *user);
HT_API void ht_context_set_notice(ht_context *ctx, ht_notice_fn fn, void *user);

/* The notice, the same in every front end, that backend auto gives where
 * it would have used the GPU and none could be opened: "no NVIDIA GPU
 * found; computed on the CPU, same result" (English, a message id of the
 * gegl-halftone translation domain). The details (which module, which
 * driver node) are ht_context_gpu_detail's, for a verbose mode. */
HT_API const char *ht_notice_no_gpu(void);
/* Why this context's GPU could not be opened, e.g. "the CUDA module
 * libhalftone-cuda.so was not found (...)"; "" where it opened or was
 * not tried. */
HT_API const char *ht_context_gpu_detail(const ht_context *ctx);

/* One line describing the last failure on this context, including what
 * was wrong (e.g. "custom coefficients, position 5: ..."). Never NULL. */
HT_API const char *ht_context_message(const ht_context *ctx);

/* Which backend and variant the last successful run used. */
HT_API ht_backend ht_context_last_backend(const ht_context *ctx);
HT_API ht_variant ht_context_last_variant(const ht_context *ctx);
/* The rounds the last successful run of a search method took (for
 * several planes, the most any plane took); 0 for error diffusion. */
HT_API int64_t ht_context_last_rounds(const ht_context *ctx);

/* Whether these parameters can run on this context's backend, checked
 * before any image is read: HT_OK, or the status and message
 * (ht_context_message) that ht_run would give for them. Opens no GPU. */
HT_API ht_status ht_check(ht_context *ctx, const ht_params *params);

/* Seconds that a run of `params` is expected to take on the CPU, for a
 * front end to show before a search starts (and to ask before a long
 * one): a `width` x `height` image of `planes` planes (1 for gray or
 * luma, 3 per channel, 4 for cmyk's inks: ht_output_layout's planes) on
 * `threads` threads (0: every core; more threads than cores run no
 * faster). A search costs its pixels times the method's and window's
 * measured cost a pixel in the first round, times the rounds a photo
 * takes (about 3.3 first rounds' worth, fewer with max_rounds); the
 * figures, measured on the project's 2-core machine, and how far images
 * stray from them (noise costs 5 to several hundred times a photo) are in
 * docs/search.md, "What a search costs". Other methods: about 1 ns a
 * pixel and plane. -1 where an argument is invalid. Reads no pixel,
 * opens no GPU; the GPU, where one runs, is far faster. */
HT_API double ht_estimate_seconds(const ht_params *params, int64_t width, int64_t height, int planes, int threads);

/* A search whose estimate on the context's threads is over this many
 * seconds is refused by ht_run and ht_run_plane (HT_ERR_UNSUPPORTED, the
 * estimate in the message) unless params->run_long is set; backend cuda is
 * not judged by the CPU's figures. */
#define HT_ESTIMATE_LIMIT_S 3600.0

/* `seconds` in words a person reads at a glance ("40 s", "12 min",
 * "3.5 h", "290 days") into `buf`; the length written, as snprintf. */
HT_API int ht_format_duration(double seconds, char *buf, size_t size);

/* Halftones `in` into `out`. Both have the same width and height.
 *  - luma mode: `out` has 1 channel (2 with alpha kept);
 *  - per-channel and plane-dependent modes: `out` has the input's
 *    channel count;
 *  - cmyk mode: 3 colour channels in (RGB), 4 out (C, M, Y, K ink
 *    amounts; 5 with alpha kept).
 * Output formats: U8/U16 write each level as an evenly spaced value
 * (level q of L -> round(q * MAX / (L - 1))); BIT1 needs levels == 2 and a
 * single channel. `out` may not overlap `in`.
 * On any error the contents of `out` are unspecified: a cancel, or a GPU
 * that fails part way under backend cuda, can leave it partly written
 * (under backend auto the CPU then redoes the whole image). Keep the
 * result only on HT_OK, as this project's tools do: the halftone CLI
 * writes a temporary file and renames it only on success, and the GEGL
 * op (so the GIMP plug-in too) passes its input through on failure.
 */
HT_API ht_status ht_run(ht_context *ctx, const ht_image *in, ht_image *out,
                        const ht_params *params);

/* Lower-level entry: one plane of 16-bit values (0..65535) in, level
 * indices (0..levels-1) out. This is what the backends compute. */
HT_API ht_status ht_run_plane(ht_context *ctx, const uint16_t *in, size_t in_stride,
                              uint8_t *out, size_t out_stride, int64_t width,
                              int64_t height, const ht_params *params);

/* ------------------------------------------------------------ carried rows */

/* A band of rows of a taller image, run on its own (ht_run_band): a
 * whole image run as bands, each given the error rows the band above
 * returned, is bit-identical to the image run at once, whichever
 * implementation runs each band. This is what spreads one image over
 * the processes of an MPI job.
 *
 * Errors are the quantisation errors of a plane's pixels (value minus
 * the chosen level's value, in the units of docs/arithmetic.md), rows of
 * `width` int32 values; for P output planes, plane p's rows come after
 * plane p - 1's. */
typedef struct {
  int64_t y0;            /* the band's first row in the whole image     */
  const int32_t *above;  /* the errors of the ht_carry_rows() rows just
                            above the band (the last `below` of the band
                            above), or NULL for the top band; only
                            values a band run wrote are valid input     */
  int32_t *below;        /* NULL, or receives the errors of the last
                            ht_carry_rows() rows up to the band's end   */
} ht_band;

/* Rows an error-diffusion band carries for `p`: its filter's reach down
 * (1 for Floyd-Steinberg, 2 for Jarvis-Judice-Ninke), 0 when the filter
 * stays on the current row; -1 for parameters that do not validate. */
HT_API int ht_carry_rows(const ht_params *p);

/* Halftones the rows `in` holds as rows band->y0 .. band->y0 +
 * in->height - 1 of a taller image, as ht_run does; `out` has the band's
 * rows. Needs the raster scan and an implementation that carries rows
 * (every CPU variant; HT_ERR_UNSUPPORTED names what does not). */
HT_API ht_status ht_run_band(ht_context *ctx, const ht_image *in, ht_image *out,
                             const ht_params *params, const ht_band *band);

/* A streamed band: ht_run_band whose carried rows arrive and leave in
 * pieces of columns while the band runs, so that the processes of an MPI
 * job work as one wavefront (docs/mpi.md) instead of each waiting for
 * the whole band above. The band's rows run in skewed column chunks
 * (chunk c of a row after chunk c + delay of the row above): the first
 * row reads the carried-in errors of a chunk's columns only when
 * `need` says they are there, and the last rows' errors leave through
 * `ready` as soon as they are final. The bits are ht_run_band's. */
typedef struct {
  int64_t y0;            /* as ht_band                                  */
  int64_t chunk;         /* columns per chunk, >= 1                     */
  /* As ht_band: ht_carry_rows() rows of `width` errors each, above NULL
   * for the top band, below NULL when nothing is passed on. Columns < x
   * of `above` are read only after need(x, user) returned; columns < x
   * of `below` are final when ready(x, user) is called. x grows with
   * every call and the last call of each has x = width. */
  const int32_t *above;
  int32_t *below;
  bool (*need)(int64_t x, void *user);  /* NULL: all of `above` is there */
  bool (*ready)(int64_t x, void *user); /* may be NULL                  */
  void *user;            /* a callback that returns false stops the run:
                            HT_ERR_CANCELLED                             */
} ht_stream;

/* Runs `in` as a band whose carried rows stream as `stream` says; the
 * callbacks come from the calling thread. One output plane (a gray
 * input, or the luma of a colour one), error diffusion, raster scan;
 * variant auto or stream (HT_ERR_UNSUPPORTED otherwise). */
HT_API ht_status ht_run_band_stream(ht_context *ctx, const ht_image *in, ht_image *out,
                                    const ht_params *params, const ht_stream *stream);

/* ------------------------------------------------------------ names for UIs */

/* The library's lists of choices, so that the command-line tool, the
 * GEGL operation and the GIMP dialog never keep their own copies. */
typedef enum {
  HT_LIST_FILTERS = 0, /* ht_filter_id: the built-in filters, then custom */
  HT_LIST_VARIANTS,    /* ht_variant: auto, then every implementation     */
  HT_LIST_BACKENDS,    /* ht_backend                                       */
  HT_LIST_COLOR_MODES, /* ht_color_mode                                    */
  HT_LIST_METHODS,     /* ht_method                                        */
  HT_LIST_INITS,       /* ht_search_init                                   */
  HT_LIST_SCHEDULES,   /* ht_search_schedule                               */
  HT_LIST_ALGORITHMS,  /* one choice for menus: the filters of
                          HT_LIST_FILTERS under their ids (custom is 8),
                          then the search methods as HT_ALGORITHM_*; the
                          values stay as they are (GIMP scripts pass them);
                          ht_params_set_algorithm applies one             */
  HT_LIST_DOTS,        /* ht_dot: the screen's dot shapes                 */
  HT_LIST_OBJECTIVES,  /* ht_search_objective                              */
  HT_LIST_SPACES,      /* ht_space                                         */
  HT_LIST_COUNT
} ht_list;

/* The search methods' values in HT_LIST_ALGORITHMS, above every filter
 * id to come. */
#define HT_ALGORITHM_LES 64
#define HT_ALGORITHM_PES 65
#define HT_ALGORITHM_DBS 66
#define HT_ALGORITHM_BAYER 67
#define HT_ALGORITHM_THRESHOLD 68
#define HT_ALGORITHM_BLUE_NOISE 69
#define HT_ALGORITHM_SCREEN 70

typedef struct {
  int value;          /* the enum value                                    */
  const char *name;   /* the API name, kebab-case: CLI option values, GEGL
                         enum nicks, PDB names                             */
  const char *label;  /* an English label for menus; also a message id of
                         the gegl-halftone translation domain             */
  const char *help;   /* one English sentence, or ""                       */
} ht_choice;

/* The entries of `list` in the order menus show them; *count (may be
 * NULL) gets how many. NULL and 0 for an unknown list. */
HT_API const ht_choice *ht_choices(ht_list list, int *count);
/* The entry named `name`, or the one of value `value`; NULL if none. */
HT_API const ht_choice *ht_choice_by_name(ht_list list, const char *name);
HT_API const ht_choice *ht_choice_by_value(ht_list list, int value);

/* ------------------------------------------- the description of methods
 *                                                and their parameters
 *
 * Every parameter a front end shows is described here once: its name
 * (the CLI's long option and the GEGL op's property), type, range,
 * default, label and help, and which methods and colour modes use it;
 * every method with its capabilities. The CLI's options and --help, the
 * op's properties and their visibility, the GIMP 2.10 dialog and its PDB
 * arguments are made from this description, and ht_check validates
 * against it, so that a new method or parameter is a row here and
 * nothing in the front ends. */

typedef enum {
  HT_PARAM_ALGORITHM = 0, /* HT_LIST_ALGORITHMS: a filter or a method    */
  HT_PARAM_COEFFICIENTS,  /* the custom filter, docs/coefficients.md     */
  HT_PARAM_LEVELS,
  HT_PARAM_SERPENTINE,
  HT_PARAM_COLOR,
  HT_PARAM_INTERPLANE_FORWARD,
  HT_PARAM_INTERPLANE_BACKWARD,
  HT_PARAM_RANDOMIZE,
  HT_PARAM_BLACK,
  HT_PARAM_WINDOW,
  HT_PARAM_SIGMA,
  HT_PARAM_EYE_RADIUS,
  HT_PARAM_INIT,
  HT_PARAM_SCHEDULE,
  HT_PARAM_MAX_ROUNDS,
  HT_PARAM_SEED,
  HT_PARAM_MASK_SIZE,
  HT_PARAM_NOISE_SIZE,
  HT_PARAM_LPI,
  HT_PARAM_DPI,
  HT_PARAM_ANGLE,
  HT_PARAM_ANGLES,
  HT_PARAM_DOT,
  HT_PARAM_RUN_LONG,
  HT_PARAM_OBJECTIVE,     /* HT_LIST_OBJECTIVES: what DBS minimises        */
  HT_PARAM_STRENGTH,      /* error diffusion: the share of error passed on */
  HT_PARAM_SPACE,         /* every method: stored values or linear light */
  HT_PARAM_BACKEND,       /* the context's (ht_context_set_backend)      */
  HT_PARAM_THREADS,       /* the context's (ht_context_set_threads)      */
  HT_PARAM_COUNT
} ht_param_id;

typedef enum {
  HT_TYPE_INT = 0, /* a whole number in min..max                          */
  HT_TYPE_NUMBER,  /* a real number in min..max, `digits` decimals shown  */
  HT_TYPE_BOOL,    /* a switch, default 0 or 1                            */
  HT_TYPE_CHOICE,  /* a value of `list`                                   */
  HT_TYPE_TEXT,    /* a string                                            */
  HT_TYPE_SEED,    /* a whole number 0..2^31 - 1 (what gint ops take)     */
} ht_param_type;

/* Where a dialog puts a parameter, in this order. */
typedef enum {
  HT_GROUP_ALGORITHM = 0, /* the algorithm and what only it uses        */
  HT_GROUP_OUTPUT,        /* levels and the scan                        */
  HT_GROUP_COLOR,         /* the colour mode and its settings           */
  HT_GROUP_ADVANCED,      /* where it runs                              */
} ht_param_group;

typedef struct {
  const char *name;    /* kebab-case: the op's property, the GIMP PDB
                          argument, the CLI's long option              */
  const char *option;  /* the CLI's long option where it differs from
                          name ("color" for color-mode), else NULL     */
  const char *label;   /* English, for dialogs; a message id of the
                          gegl-halftone translation domain             */
  const char *help;    /* one English sentence: tooltips and --help    */
  const char *metavar; /* the CLI's placeholder for the value: "N"     */
  ht_param_type type;
  ht_list list;        /* HT_TYPE_CHOICE: its values                   */
  double min, max;     /* INT, NUMBER, SEED                            */
  double ui_min, ui_max; /* the part of min..max a slider shows        */
  double def;          /* the default: number, choice value, 0 or 1    */
  const char *def_text; /* HT_TYPE_TEXT: the default string            */
  int digits;          /* NUMBER: decimals a dialog shows              */
  ht_param_group group;
  bool per_plane;      /* the CLI also takes one value per colour plane,
                          "N,N,N[,N]"                                  */
  bool context;        /* a setting of the context, not of ht_params   */
} ht_param;

/* The description of parameter `id`; NULL when out of range. */
HT_API const ht_param *ht_param_info(ht_param_id id);
/* The parameter named `name` (or whose CLI option is `name`), or -1. */
HT_API int ht_param_find(const char *name);

/* The capabilities of a method (ht_method_info.caps). */
enum {
  HT_MCAP_LEVELS = 1u << 0,     /* more than 2 output levels             */
  HT_MCAP_SERPENTINE = 1u << 1, /* the serpentine scan                    */
  HT_MCAP_BANDS = 1u << 2,      /* runs as bands with carried rows
                                   (ht_run_band), so in pieces of rows  */
  HT_MCAP_SEARCH = 1u << 3,     /* searches the whole plane against the
                                   eye model (LES, PES, DBS): long runs  */
  HT_MCAP_COUPLED = 1u << 4,    /* runs the colour planes together       */
};

typedef struct {
  ht_method method;
  int algorithm;       /* its value in HT_LIST_ALGORITHMS, or -1 where
                          the method's algorithms are the filters      */
  const char *name;    /* as in HT_LIST_METHODS                        */
  unsigned caps;       /* HT_MCAP_*                                    */
  unsigned colors;     /* the colour modes it takes, bit 1 << mode     */
  unsigned backends;   /* the backends with an implementation of it,
                          bit 1 << ht_backend                          */
} ht_method_info;

/* The method `m`, or NULL. */
HT_API const ht_method_info *ht_method_describe(ht_method m);
/* The method that a value of HT_LIST_ALGORITHMS runs, or -1. */
HT_API int ht_algorithm_method(int algorithm);

/* One condition under which a parameter is used: a run of `method`
 * (only algorithm `algorithm` of it unless that is -1) in one of the
 * colour modes `colors` (bit 1 << mode), and where `when_values` is not
 * 0 only while parameter `when` has one of those values (bit 1 << value:
 * the seed of a search only with init random). A parameter is used when
 * any of its conditions holds; HT_PARAM_ALGORITHM, _COLOR, _SPACE, _BACKEND and
 * _THREADS are always used and have none. ht_param_used leaves `when`
 * out (whether any value of it uses the parameter). */
typedef struct {
  ht_method method;
  int algorithm;
  unsigned colors;
  ht_param_id when;
  unsigned when_values;
} ht_param_use;

#define HT_COLORS_ALL ((1u << HT_COLOR_LUMA) | (1u << HT_COLOR_PER_CHANNEL) | \
                       (1u << HT_COLOR_PLANE_DEPENDENT) | (1u << HT_COLOR_CMYK))

/* The conditions of parameter `id`, *count of them; NULL and 0 for a
 * parameter that is always used. The array is static. */
HT_API const ht_param_use *ht_param_uses(ht_param_id id, int *count);
/* Whether a run of `algorithm` (HT_LIST_ALGORITHMS) in colour mode
 * `color` uses parameter `id`: what a dialog shows. */
HT_API bool ht_param_used(ht_param_id id, int algorithm, ht_color_mode color);

/* Sets parameter `id` of `p` from text as the CLI takes it ("4", "0.2",
 * "floyd-steinberg", "4,4,2" for a per-plane parameter, "- * 7; 3 5 1 /
 * 16"). HT_ERR_INVALID_ARGUMENT (HT_ERR_BAD_COEFFICIENTS for a custom
 * filter) with a one-line reason in `why` (may be NULL) when the text is
 * not a value of the parameter; ranges are checked, combinations are
 * ht_check's. Context parameters are refused: set them on the context. */
HT_API ht_status ht_params_set_text(ht_params *p, ht_param_id id, const char *text, char *why, size_t why_size);
/* Sets a number, a switch (0 or 1) or a choice's value; the same checks.
 * Every value in range (the seed's 0..2^31 - 1 too) is exact as a double. */
HT_API ht_status ht_params_set_number(ht_params *p, ht_param_id id, double value, char *why, size_t why_size);
/* The value of a number, switch or choice parameter of `p` (for
 * HT_PARAM_ALGORITHM, ht_params_algorithm(p); for a per-plane one, the
 * common value); NAN for text and context parameters. */
HT_API double ht_params_get_number(const ht_params *p, ht_param_id id);

/* What ht_run makes of an image of `in_channels` channels with `p`:
 * the planes it computes and the output image's channels. */
typedef struct {
  int planes;        /* output planes: 1 (gray), 3 or 4                  */
  int channels;      /* the output image's channels: planes, plus alpha
                        where p->alpha is set (not in 1-bit output)     */
  bool inks;         /* the planes are ink amounts (cmyk): level L-1 is
                        full ink                                         */
  char names[HT_MAX_PLANES + 1]; /* a letter a plane: "k" for gray, "rgb",
                        "rgba"'s first planes, "cmyk"                   */
  char why[160];     /* the reason when the input cannot be run        */
} ht_layout;

/* The layout for `in_channels` input channels (alpha included where
 * p->alpha is set) and 1-bit output or not. HT_ERR_INVALID_ARGUMENT with
 * layout->why set when the input does not fit the colour mode. */
HT_API ht_status ht_output_layout(const ht_params *p, int in_channels, bool bit1, ht_layout *layout);

/* Renders the cmyk mode's ink planes (an image of 4 channels, 5 with
 * alpha, U8 or U16, as ht_run writes them) as the RGB light they leave on
 * white paper: a channel is what its ink and the black ink leave, R =
 * max - min(max, C + K); alpha is copied. `rgb` has the same size and
 * format and 3 channels (4 with alpha). */
HT_API ht_status ht_inks_to_rgb(const ht_image *inks, ht_image *rgb);

/* Whether a run of `p` on `backend` can go as bands of rows
 * (ht_run_band): what a front end that reads images in pieces asks
 * before it does. */
HT_API bool ht_params_run_in_bands(const ht_params *p, ht_backend backend);

/* ht_check for a front end that prefers a result to a refusal: HT_OK
 * and *backend the context's backend where the parameters run there;
 * where backend cuda refuses them but the CPU takes them, HT_OK, *backend
 * HT_BACKEND_CPU and the refusal kept in ht_context_message (a note to
 * show); otherwise ht_check's status. The context's backend stays. */
HT_API ht_status ht_check_or_cpu(ht_context *ctx, const ht_params *params, ht_backend *backend);

/* ---------------------------------------------------------------- metrics */

/* The field's measure of a halftone (core/metrics.c): the original and
 * the halftone both blurred by a Gaussian of `sigma` pixels (radius
 * ceil(3 sigma), borders clamped), compared by PSNR and by SSIM (Wang et
 * al. 2004: C1 = (0.01 * 255)^2, C2 = (0.03 * 255)^2, an 11 x 11
 * Gaussian window of sigma 1.5, averaged over the positions where the
 * window fits). 0..255 units. */
typedef struct {
  double sigma;           /* the blur, in pixels                          */
  double mse;             /* mean squared difference of the blurred images */
  double psnr;            /* 10 log10(255^2 / mse) dB; INFINITY at mse 0  */
  double ssim;            /* mean SSIM; NAN for an image under 11 x 11    */
} ht_blurred_quality;

#define HT_METRICS_SIGMAS 2 /* ht_metrics.blurred: sigma 1.5 and 2      */

typedef struct {
  double mean_tone_error; /* |mean(output) - mean(input)|, 0..255 units   */
  double hvs_error;       /* mean |G*a - G*r|, 7x7 Gaussian sigma 1,
                             0..255 units (Kasagi LES paper, formula 4)   */
  ht_blurred_quality blurred[HT_METRICS_SIGMAS]; /* at sigma 1.5 and 2   */
} ht_metrics;

/* The field's measure at any sigma (HT_EYE_SIGMA_MIN .. _MAX), e.g. the
 * search's eye; the same planes as ht_compute_metrics. */
HT_API ht_status ht_compute_blurred_quality(const uint8_t *gray, size_t gray_stride, const uint8_t *result,
                                            size_t result_stride, int64_t width, int64_t height, double sigma,
                                            ht_blurred_quality *q);

/* `gray` and `result` are 8-bit single-channel planes of the same size. */
HT_API ht_status ht_compute_metrics(const uint8_t *gray, size_t gray_stride,
                                    const uint8_t *result, size_t result_stride,
                                    int64_t width, int64_t height, ht_metrics *m);

/* The search methods' error (Kouge et al., formulas 2-4; core/shared/eye.h,
 * docs/search.md): the mean over the pixels of |a - V*b'| for the eye
 * model `eye` (NULL: sigma 1, radius 3), in 0..255 units. `gray` is the
 * input and `result` the halftone (0 and 255, or any 8-bit values),
 * 8-bit single-channel planes of the same size; outside the image, b'
 * is the input of the nearest pixel inside. Distinct from
 * ht_metrics.hvs_error, which blurs both images with a floating-point
 * Gaussian: this is the integer error that LES, PES and DBS minimise,
 * computed as they compute it (for an 8-bit input, bit for bit). */
HT_API ht_status ht_compute_eye_error(const uint8_t *gray, size_t gray_stride, const uint8_t *result,
                                      size_t result_stride, int64_t width, int64_t height,
                                      const ht_eye_params *eye, double *mean_error);

/* Colour halftone quality for any number of planes (Zhang et al., Sec.
 * 2.2; definitions in docs/color.md). All fractions of the pixel count
 * (x 100: percent). A plane's colorant is present where its output level
 * is above 0 (RGB: light; cmyk: ink). */
typedef struct {
  int planes;
  double bias;  /* sum over planes of |sum of output levels - sum of the
                   input|, both in full-scale units, over the pixels     */
  double grain; /* pixels with two or more colorants present            */
  double overlap_independent; /* expected grain of planes placed
                   independently at the input's tones                   */
  double overlap_least; /* the least grain the input's tones allow      */
  double overlap; /* (grain - least) / (independent - least): 0 = only
                     the overlap the tones need, 1 = as independent
                     planes; NAN where independent == least             */
} ht_color_metrics;

/* `in` and `out` as given to and written by ht_run with `params` (its
 * color, alpha, black and levels say what the planes are: cmyk compares
 * the C, M, Y, K inks with `in` separated as ht_run separates it). */
HT_API ht_status ht_compute_color_metrics(const ht_image *in, const ht_image *out, const ht_params *params,
                                          ht_color_metrics *m);

/* ------------------------------------------------------- blue-noise masks */

/* The blue-noise method's mask of side `size` (a power of two
 * 2..HT_NOISE_SIZE_MAX) for `seed`: rank[y * size + x], a permutation of
 * 0 .. size^2 - 1 whose first k entries are a well-spread set for every
 * k (void and cluster; docs/screens.md). With `cached`, from the memory
 * of this process or the user's cache folder ($XDG_CACHE_HOME or
 * ~/.cache, gegl-halftone/), made and written there (atomically) where
 * it is not; without, always made anew and nothing written. The same
 * size and seed give the same ranks either way. `why` (may be NULL)
 * gets a one-line reason on failure. */
HT_API ht_status ht_blue_noise_mask(int size, uint64_t seed, bool cached, uint32_t *rank, char *why,
                                    size_t why_size);

/* Library version string, e.g. "0.1.0". */
HT_API const char *ht_version(void);

#ifdef __cplusplus
}
#endif
#endif
