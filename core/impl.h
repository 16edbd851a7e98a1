/* Implementations: one row per way of computing a method on a backend.
 *
 * Every backend keeps a table of rows {name, method, backend,
 * capabilities, run, module variant} (impl_cpu.c, impl_cuda.c). The
 * dispatcher (context.c) picks a row and checks its capabilities against
 * the job in one place (ht_impl_refuses); the name lists that the tools,
 * the GEGL operation and the GIMP dialog show are made from the same
 * rows (names.c). A new method or kernel is new files plus one row. */
#ifndef HT_IMPL_H
#define HT_IMPL_H

#include "job.h"
#include "rows.h"

/* What an implementation can do beyond the plain case (raster scan, one
 * plane at a time, any filter, 2..256 levels). */
enum {
  HT_CAP_SERPENTINE = 1u << 0, /* odd rows right to left                  */
  HT_CAP_CARRY = 1u << 1,      /* carried rows in and out (ht_run_band)   */
  HT_CAP_THREADS = 1u << 2,    /* runs on job->threads threads            */
  HT_CAP_STREAM = 1u << 3,     /* streamed carried rows (ht_run_band_stream) */
};

/* module_variant of the rows that run no module code (the CPU's). */
#define HT_IMPL_NO_MODULE (-1)

typedef struct ht_impl ht_impl;
struct ht_impl {
  ht_variant variant;
  const char *name;   /* the variant's API name, e.g. "wavefront"       */
  const char *label;  /* English, for menus and --help                  */
  ht_method method;
  ht_backend backend; /* HT_BACKEND_CPU or HT_BACKEND_CUDA              */
  unsigned caps;
  ht_status (*run)(ht_job *job, const ht_rows *rows); /* job->variant is this row's */
  /* The number the CUDA module knows the row by (cuda/module.h), passed
   * to it as it is, never computed from `variant`: run's variant
   * (HT_CUDA_VARIANT_*) for error diffusion, the search method
   * (HT_CUDA_SEARCH_*) for LES, PES and DBS, 0 for gpu-pd (color_pd has
   * one form). HT_IMPL_NO_MODULE on the CPU. tests/core/test-impls.c
   * checks that no two rows share a number and that each is the
   * module's. */
  int module_variant;
};

/* The backends' tables, fastest first: a backend's default for a job is
 * its first row that takes it. */
extern const ht_impl ht_impls_cpu[];
extern const int ht_impls_cpu_count;
extern const ht_impl ht_impls_cuda[];
extern const int ht_impls_cuda_count;

/* The row of variant v, or NULL. */
const ht_impl *ht_impl_of(ht_variant v);
/* Whether `impl` can run `job`: the one place where capabilities are
 * checked. When not, a one-line reason goes to `why` (HT_MSG_MAX bytes,
 * may be NULL). */
bool ht_impl_takes(const ht_impl *impl, const ht_job *job, char *why);
/* The first row of `backend` (CPU or CUDA) that takes `job`; NULL (and
 * the reason in `why`) when none does. */
const ht_impl *ht_impl_default(ht_backend backend, const ht_job *job, char *why);

#endif
