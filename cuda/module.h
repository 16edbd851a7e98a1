/* cuda/module.h: the plain C ABI of libhalftone-cuda.so.
 *
 * The core never links the CUDA runtime: core/cuda_loader.c dlopen()s the
 * module and calls its one exported symbol, ht_cuda_module_entry(), which
 * returns this versioned table of functions. Everything crossing the
 * boundary is plain C (no CUDA types), so the loader compiles without the
 * CUDA headers. A filter crosses as the core's own ht_filter
 * (core/halftone.h): its taps' Q12 weights q, reach and delay as
 * ht_filter_derive() fills them. Bump HT_CUDA_ABI when a field changes
 * meaning; add new fields only at the end.
 *
 * ABI 2: run and bench_kernel take the core's ht_filter and the level
 * count; ht_cuda_io carries rows (carry_in, carry_out).
 * ABI 3: search, the search methods LES, PES and DBS (ht_cuda_search).
 * ABI 4: color_pd, plane-dependent colour error diffusion (ht_cuda_color).
 * ABI 5: ht_cuda_color takes 8-bit interleaved pixels in and out (in8,
 * out8), converted on the GPU, and reports the copies' times.
 */
#ifndef HT_CUDA_MODULE_H
#define HT_CUDA_MODULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../core/halftone.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HT_CUDA_ABI 5
#define HT_CUDA_ENTRY "ht_cuda_module_entry"

/* Results of the module's functions. */
enum {
  HT_CUDA_OK = 0,
  HT_CUDA_ERR_NO_GPU,      /* no driver, no device, device busy          */
  HT_CUDA_ERR_GPU,         /* a CUDA call failed during the run          */
  HT_CUDA_ERR_NO_MEMORY,   /* device or pinned host memory exhausted     */
  HT_CUDA_ERR_UNSUPPORTED, /* e.g. a paper variant on a too large image  */
  HT_CUDA_ERR_CANCELLED,
};

/* Variants of run: 0 is ours (gpu-fast), 1 + ht_gpu_paper_variant the
 * paper's (cuda/diffusion/paper.h), each named here; module.cu asserts
 * that the names follow paper.h. The core's rows name these numbers
 * (core/impl_cuda.c), whatever order core/halftone.h's ht_variant has. */
#define HT_CUDA_VARIANT_FAST 0
#define HT_CUDA_VARIANT_PAPER_FIRST 1
#define HT_CUDA_VARIANT_3D_PED 1 /* Kasagi et al. Table V (2) */
#define HT_CUDA_VARIANT_2D_PED_ATOMIC 2
#define HT_CUDA_VARIANT_2D_PED_DOUBLE 3
#define HT_CUDA_VARIANT_2D_PEC 4
#define HT_CUDA_VARIANT_3D_PED_PERM 5 /* (3) */
#define HT_CUDA_VARIANT_2D_PED_ATOMIC_PERM 6
#define HT_CUDA_VARIANT_2D_PED_DOUBLE_PERM 7
#define HT_CUDA_VARIANT_2D_PEC_PERM 8
#define HT_CUDA_VARIANT_PB_PED 9 /* (4) */
#define HT_CUDA_VARIANT_PB_PED_RC 10
#define HT_CUDA_VARIANT_PB_PEC 11
#define HT_CUDA_VARIANT_PB_PEC_RC 12
#define HT_CUDA_VARIANT_COUNT 13

/* How the output of one plane leaves the module. */
enum {
  HT_CUDA_OUT_U8 = 0, /* one byte per pixel: lut[level] into out      */
  HT_CUDA_OUT_BIT1,   /* packed PBM bits into out (levels 2 only)     */
  HT_CUDA_OUT_STORE,  /* level indices row by row through store()     */
};

/* One plane to halftone. */
typedef struct {
  int64_t width, height;
  /* Input: a plane of 8-bit (v means v*257) or 16-bit samples, or, when
   * in == NULL, rows produced by load() as 16-bit HT_FX values. */
  const void *in;
  size_t in_stride;
  int in_bits;
  /* May run on several threads at once (different rows); `scratch` is
   * the calling thread's own, width entries. */
  void (*load)(void *user, int64_t y, uint16_t *dst, int32_t *scratch);
  /* Output. */
  int out_kind;
  void *out;
  size_t out_stride;
  uint8_t lut[256];
  void (*store)(void *user, int64_t y, const uint8_t *levels);
  /* Progress between stripes: false cancels. May be NULL. */
  bool (*tick)(void *user, int64_t done, int64_t total);
  void *user;
  /* Carried rows: the plane is a band of a taller one (the core's
   * ht_run_band, core/job.h). D = the filter's reach_down rows of `width`
   * quantisation errors each (value minus the chosen level's value),
   * nearest row last. carry_in: the errors of the D rows just above the
   * plane, or NULL for zeros (the plane starts the image). carry_out, when
   * not NULL, receives the errors of the last D rows up to the plane's
   * end, rows above the plane (from carry_in, or zeros) where the plane
   * has fewer than D rows; written only when run returns HT_CUDA_OK.
   * Variant gpu-fast only; errors outside 24 bits are refused. */
  const int32_t *carry_in;
  int32_t *carry_out;
} ht_cuda_io;

/* The search methods (core/search/, cuda/search/). */
enum {
  HT_CUDA_SEARCH_LES = 0,
  HT_CUDA_SEARCH_PES,
  HT_CUDA_SEARCH_DBS,
};

/* One plane for a search method, run on the parallel schedule of
 * core/search/schedule.c with the same bits. */
typedef struct ht_cuda_search_s {
  int method;            /* HT_CUDA_SEARCH_*                                */
  int64_t width, height;
  const uint16_t *a;     /* the input as HT_FX values, `width` a row         */
  /* In: the initial image where init_given (0 black, 1 white); out: the
   * result, written only when search returns HT_CUDA_OK. */
  uint8_t *b;
  bool init_given;       /* false: random dither on the GPU from
                            core/shared/rng.h keyed by (seed, plane, x,
                            y0 + y)                                         */
  uint64_t seed;
  int plane;
  int64_t y0;
  int window;            /* m of LES and PES (clipped to the image)         */
  int radius;            /* the eye: (2 radius + 1)^2 Q15 weights            */
  const int32_t *eye;
  int max_rounds;        /* 0: until a round changes nothing                */
  /* Progress between groups: false cancels. May be NULL. */
  bool (*tick)(void *user, int64_t done, int64_t total);
  void *user;
  /* Out: what the run did, as core/search/search.h counts it. */
  int64_t rounds, searched, changed;
} ht_cuda_search;

/* Plane-dependent colour error diffusion (core/color/, docs/color.md):
 * every plane of an image at once, bit for bit core/color/pd.c. The
 * planes come separated (CMYK already made from RGB) and leave as level
 * indices; weights and amount are the Q12 integers of core/shared/pd_arith.h. */
typedef struct {
  int64_t width, height;
  int planes;                 /* 1..4                                  */
  const uint16_t *in;         /* [plane][y][x] HT_FX values            */
  uint8_t *out;               /* [plane][y][x] level indices           */
  int levels[4];
  int32_t forward[4], backward[4]; /* Q12; forward of the last plane and
                                 backward of the first are 0           */
  int32_t amount;             /* Q12 randomisation of the filter       */
  uint64_t seed;
  double kernel_ms;           /* out: the kernel's time alone          */
  /* ABI 5. in8, when not NULL, replaces `in`: 8-bit pixels of
   * in8_channels interleaved samples, rows in8_stride bytes apart, plane
   * p from channel p, or with cmyk the four inks separated from channels
   * 0..2 (R, G, B) by pd_arith.h's ht_pd_cmyk with Q16 `black`. out8,
   * when not NULL, replaces `out`: out8_channels interleaved bytes a
   * pixel, rows out8_stride bytes apart, channel p = out8_lut[p][level
   * index of plane p], channels past the planes 0 (the caller's alpha). */
  const uint8_t *in8;
  int in8_channels;
  size_t in8_stride;
  int cmyk;
  int32_t black;
  uint8_t *out8;
  int out8_channels;
  size_t out8_stride;
  uint8_t out8_lut[4][256];
  double upload_ms, download_ms; /* out: the copies and conversions     */
} ht_cuda_color;

typedef struct {
  char name[128];
  int cc_major, cc_minor;
  int multiprocessors;
  int driver_version, runtime_version; /* e.g. 13000 */
  size_t memory;                       /* bytes */
} ht_cuda_info;

typedef struct ht_cuda_module_api {
  int abi;
  /* Finds a usable device. On failure returns an HT_CUDA_ERR_* code and a
   * one-line reason in msg. */
  int (*open)(void **dev, char *msg, size_t msg_size);
  void (*close)(void *dev);
  int (*info)(void *dev, ht_cuda_info *out);
  /* Halftones one plane with `levels` (2..256) levels; exact (equal to
   * core/diffusion/ed.c). Refuses (HT_CUDA_ERR_UNSUPPORTED) filters whose taps,
   * reach or delay are out of core/halftone.h's range. */
  int (*run)(void *dev, int variant, const ht_filter *f, int levels, const ht_cuda_io *io,
             char *msg, size_t msg_size);
  /* Pinned host memory: transfers from and to it skip the staging copy. */
  void *(*host_alloc)(void *dev, size_t bytes);
  void (*host_free)(void *dev, void *p);
  /* Benchmark hooks (tools/bench/bench-cuda.c). bench_kernel uploads `in`
   * (8-bit, tightly packed) once, times `reps` runs of the kernel(s)
   * alone with device events, writes the median to *ms and the level
   * indices of the last run to `levels_out`. */
  int (*bench_kernel)(void *dev, int variant, const ht_filter *f, int levels, const uint8_t *in,
                      int width, int height, int reps, uint8_t *levels_out, double *ms,
                      char *msg, size_t msg_size);
  /* Pinned host <-> device copies of `bytes`: median times in ms. */
  int (*bench_transfer)(void *dev, size_t bytes, int reps, double *h2d_ms, double *d2h_ms,
                        char *msg, size_t msg_size);
  /* One warp runs `steps` dependent pixel steps of the FS kernel's inner
   * loop: nanoseconds per step, the floor of any exact ED schedule. */
  int (*bench_probe)(void *dev, int steps, double *ns_per_step, char *msg, size_t msg_size);
  /* ABI 3: runs a search method over one plane (ht_cuda_search), bit
   * for bit core/search/'s parallel schedule. */
  int (*search)(void *dev, ht_cuda_search *s, char *msg, size_t msg_size);
  /* ABI 4: plane-dependent colour error diffusion of a whole image
   * (ht_cuda_color) with filter f, exact. */
  int (*color_pd)(void *dev, const ht_filter *f, ht_cuda_color *c, char *msg, size_t msg_size);
} ht_cuda_module_api;

typedef const ht_cuda_module_api *(*ht_cuda_entry_fn)(int abi);

#ifdef __cplusplus
}
#endif
#endif
