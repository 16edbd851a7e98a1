/* The search methods (docs/search.md): local exhaustive search (LES),
 * partial exhaustive search (PES) — Kouge, Ito, Nakano, "GPU-accelerated
 * Digital Halftoning by the Local Exhaustive Search" — and direct binary
 * search (DBS, Analoui and Allebach), on the CPU; gpu.c hands a plane
 * to the CUDA module's (cuda/search/) instead.
 *
 * A plane being searched is an ht_sx: its output b (0 black, 1 white),
 * its error field e = a * HT_EYE_ONE - V*b' (core/shared/eye.h) kept up
 * to date as pixels change, and the skip map. Each method is a *step*: what it
 * does at one window position (les.c, pes.c, dbs.c, compiled once for
 * each instruction set, kernel.h). The schedule (schedule.c) says in
 * which order the positions are visited and on which threads; field.c
 * keeps the books (the initial image, the error field, a window's
 * region and its flip tables, the skip map); run.c ties them together.
 *
 * The files include job.h, rows.h, eye.h, rng.h, pool.h and the error
 * diffusion beside them (for the Floyd-Steinberg initial image), gpu.c
 * the loader (cuda_loader.h) and the module ABI (cuda/module.h), and
 * call nothing above them (docs/architecture.md). */
#ifndef HT_SEARCH_H
#define HT_SEARCH_H

#include "job.h"
#include "rows.h"

#include <stdatomic.h>

/* The entry points of the CPU table (impl_cpu.c). */
ht_status ht_les_run(ht_job *job, const ht_rows *rows); /* run.c */
ht_status ht_pes_run(ht_job *job, const ht_rows *rows);
ht_status ht_dbs_run(ht_job *job, const ht_rows *rows);
/* DBS on the filtered objective (dbs_filtered.c; ht_dbs_run calls it). */
ht_status ht_dbs_filtered_run(ht_job *job, const ht_rows *rows);
/* The GPU table's (impl_cuda.c): a plane on the GPU (cuda/search/) in
 * the open module (gpu.c), as the module's method `module_method`
 * (HT_CUDA_SEARCH_*, the row's, impl.h). */
ht_status ht_search_gpu_run(ht_cuda *cuda, ht_job *job, const ht_rows *rows, int module_method);

/* What every implementation of a search method (this CPU's and the
 * CUDA module's, gpu.c) shares: the refusal of what no search
 * method does (levels other than 2, the serpentine scan), with `name`
 * in the message (run.c); and the Floyd-Steinberg initial image of a
 * plane, 0 or 1 a pixel into b, made by the wavefront on the job's
 * threads (field.c). */
ht_status ht_search_check_job(ht_job *job, const char *name);
ht_status ht_search_fs_start(ht_job *job, const ht_rows *rows, uint8_t *b);
/* The random initial image of a w x h plane of input values a into b
 * (field.c). */
void ht_search_random_start(const ht_job *job, const int32_t *a, uint8_t *b, int64_t w, int64_t h);

/* The block side q of the parallel schedule for windows of `side`
 * pixels (m for LES and PES, 3 for DBS) under an eye of radius r: the
 * smallest for which two windows of one group never reach each other's
 * affected regions, q = 2 r + side - 1 (docs/search.md derives it). */
static inline int ht_sx_block_side(int r, int side) { return 2 * r + side - 1; }

#define HT_SX_LANES 16
#define HT_SX_MAX_BITS (HT_SEARCH_WINDOW_MAX * HT_SEARCH_WINDOW_MAX)
/* A region row is at most HT_SEARCH_WINDOW_MAX + 2 HT_EYE_MAX_RADIUS
 * pixels wide: two vectors. */
#define HT_SX_MAX_NV 2

/* Sixteen int32 lanes: one row of a window's region for the default
 * eye (up to 16 pixels wide), which the instruction sets take as one
 * AVX-512 register, two AVX2 or four SSE2 registers. */
typedef int32_t ht_sxv __attribute__((vector_size(64)));

typedef struct ht_sx ht_sx;
typedef struct ht_sx_scratch ht_sx_scratch;

/* What a method does at window position (i, j): searches, changes b and
 * e where it finds better (ht_sx_commit) and says whether it did. */
typedef bool (*ht_sx_step)(const ht_sx *s, ht_sx_scratch *w, int64_t i, int64_t j);

struct ht_sx {
  ht_job *job;
  int64_t width, height;
  int r;               /* the eye's radius                              */
  int32_t *e;          /* the error field, width values a row           */
  uint8_t *b;          /* the output: 0 black, 1 white                  */
  /* The skip map: one flag per window position, set when something
   * within 2r of its window changed since its last search (schedule.c).
   * Atomic because the blocks of a group set flags of other groups'
   * windows at the same time (the same value: no order matters). */
  atomic_uchar *dirty;
  /* Window positions: top-left (i, j), 0 <= i < ph, 0 <= j < pw; the
   * window's pixels are rows i + off .. i + off + wh - 1, columns
   * j + off .. j + off + ww - 1 (clipped to the image for DBS). */
  int64_t ph, pw;
  int wh, ww;
  int off;             /* 0 for LES and PES, -1 for DBS (the 3 x 3 around
                          the pixel)                                    */
  int q;               /* the parallel schedule's block side            */
  int reach;           /* a changed pixel makes the windows within this
                          distance due (ht_sx_mark): 2r for the LES
                          paper's error, whose window reads e over r
                          around it; for the filtered objective
                          (dbs_filtered.c), the reach of c_pp, as r is  */
  /* A window's region: its pixels and the r around them, rh rows of nv
   * vectors. A flip table has 2r + 3 rows of nv vectors: the 2r + 1
   * rows of the eye and a zero row above and below. */
  int rh, rw, nv, trows;
  /* Tables of windows whose region lies inside the image, by window
   * column kx and direction: [(kx * 2 + dir) * trows * nv]; dir 0: the
   * pixel turns black (e rises by 65535 w), 1: it turns white. */
  ht_sxv *itab;
  void *itab_mem;
  void *e_mem;
  ht_sx_step step;
  /* Checked builds of the schedule (schedule.c) see every flag that
   * ht_sx_mark sets; NULL otherwise. */
  void (*mark_check)(const ht_sx *s, int64_t i, int64_t j);
  size_t work;         /* vectors of the step's own working memory      */
  /* What the last run did (the schedule adds up its threads' counts):
   * rounds, windows searched, windows changed. */
  int64_t rounds, searched, changed;
};

/* Per-thread working memory: the region of the window at hand and its
 * flip tables. */
struct ht_sx_scratch {
  ht_sxv *e;           /* the region: rh x nv vectors                   */
  ht_sxv *etab;        /* tables of windows that reach the image's edge */
  ht_sxv *work;        /* the methods' own: bounds (LES), rows (DBS)    */
  void *mem;
  /* tab[k][dir]: the flip table of window pixel k (raster order in the
   * window), pointing at its first eye row (the zero row is at -nv);
   * NULL for a pixel outside the image (DBS at an edge) */
  const ht_sxv *tab[HT_SX_MAX_BITS][2];
  int64_t y0, x0;      /* the window's top-left pixel                   */
  int64_t ry0, rx0;    /* the region's top-left pixel                   */
  uint32_t inside;     /* window pixels inside the image                */
  uint32_t cur;        /* the window's pattern: bit k = pixel k white   */
  int64_t searched, changed;
};

/* field.c: the books. */
/* Allocates the plane (b, e, skip map, interior tables) for windows of
 * wh x ww pixels at offset `off` over ph x pw positions, and makes the
 * initial image (job->init) and its error field. */
ht_status ht_sx_init(ht_sx *s, ht_job *job, const ht_rows *rows, int wh, int ww, int off, int64_t ph, int64_t pw,
                     int side);
void ht_sx_free(ht_sx *s);
bool ht_sx_scratch_init(const ht_sx *s, ht_sx_scratch *w, size_t work_vectors);
void ht_sx_scratch_free(ht_sx_scratch *w);
/* Loads the region and tables of the window at position (i, j) into w
 * and reads its pattern (w->cur). */
void ht_sx_begin(const ht_sx *s, ht_sx_scratch *w, int64_t i, int64_t j);
/* Writes back the region (whose e w->e now holds for `pattern`), sets
 * the window's pixels to `pattern` and marks the windows within 2r of
 * the changed pixels for the next search (ht_sx_mark). */
void ht_sx_commit(const ht_sx *s, ht_sx_scratch *w, uint32_t pattern);
/* Sets the skip-map flags of the positions whose window lies within 2r
 * of the pixels y0..y1 x x0..x1; the schedule takes them (ht_sx_take). */
void ht_sx_mark(const ht_sx *s, int64_t y0, int64_t y1, int64_t x0, int64_t x1);
/* Stores b through rows. */
void ht_sx_store(const ht_sx *s, const ht_rows *rows);
/* The total error of the plane, sum of |e| (a check for tests). */
int64_t ht_sx_total(const ht_sx *s);

/* schedule.c: the rounds, on job->threads threads (parallel schedule)
 * or one (raster); HT_ERR_CANCELLED when the user cancelled. */
ht_status ht_sx_schedule_run(ht_sx *s);
/* Whether the position is due for a search; clears its flag. */
bool ht_sx_take(const ht_sx *s, int64_t i, int64_t j);

/* The steps, one instance for each instruction set (kernel.h). */
#define HT_SX_STEPS(isa)                                                                   \
  bool ht_les_step_##isa(const ht_sx *s, ht_sx_scratch *w, int64_t i, int64_t j);          \
  bool ht_pes_step_##isa(const ht_sx *s, ht_sx_scratch *w, int64_t i, int64_t j);          \
  bool ht_dbs_step_##isa(const ht_sx *s, ht_sx_scratch *w, int64_t i, int64_t j);
HT_SX_STEPS(generic)
HT_SX_STEPS(avx2)
HT_SX_STEPS(avx512)

/* LES's bounds (les.c) cover blocks of 2^d Gray-code steps for d =
 * HT_SX_BOUND_BITS, 2 HT_SX_BOUND_BITS, ... below the window's bits. */
#define HT_SX_BOUND_BITS 4
static inline int ht_les_levels(int bits) { return (bits - 1) / HT_SX_BOUND_BITS; }

/* The methods' working memory in vectors (w->work): LES's bounds, Z and
 * O for each level and parity; DBS's toggled region and its |e|; PES's
 * below. */
static inline size_t ht_les_work(const ht_sx *s)
{
  const int rows = s->rh * s->nv > 11 ? s->rh * s->nv : 11; /* kernel.h: HT_SX_REG_ROWS */
  return (size_t)(ht_les_levels(s->wh * s->ww) * 2 * 2 * rows);
}
static inline size_t ht_dbs_work(const ht_sx *s) { return (size_t)(2 * s->rh * s->nv); }
/* PES's: the reach of window pixels 0 .. i - 1 for i = 0 .. n (pes.c). */
static inline size_t ht_pes_work(const ht_sx *s)
{
  const int rows = s->rh * s->nv > 11 ? s->rh * s->nv : 11; /* kernel.h: HT_SX_REG_ROWS */
  return (size_t)((s->wh * s->ww + 1) * rows);
}

/* What the last run of the process did, for the benchmark
 * (tools/bench/bench-search-gpu.c): rounds, windows searched, windows changed. */
extern atomic_llong ht_sx_last_rounds, ht_sx_last_searched, ht_sx_last_changed;

/* For tests: the instruction set the steps use, 0 = the best the CPU
 * has (default), 1 = generic, 2 = AVX2, 3 = AVX-512; a set the CPU
 * lacks falls back to the best it has. */
void ht_sx_set_isa(int isa);
/* The instruction set the next run uses (1..3 as above). */
int ht_sx_isa(void);

#endif
