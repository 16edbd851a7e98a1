/* The entry points of the search methods (search.h): a plane's books
 * (field.c), its method's step for the CPU's instruction set, the
 * schedule (schedule.c), the result stored. */
#include "search.h"

#include <stdio.h>

/* the instruction sets core/meson.build compiled the steps for */
#ifndef HT_SX_HAVE_AVX2
#define HT_SX_HAVE_AVX2 0
#endif
#ifndef HT_SX_HAVE_AVX512
#define HT_SX_HAVE_AVX512 0
#endif

atomic_llong ht_sx_last_rounds, ht_sx_last_searched, ht_sx_last_changed;

static atomic_int isa_wanted; /* ht_sx_set_isa; 0: the best */

void ht_sx_set_isa(int isa) { atomic_store(&isa_wanted, isa); }

int ht_sx_isa(void)
{
  int best = 1;
#if (HT_SX_HAVE_AVX2 || HT_SX_HAVE_AVX512) && defined(__x86_64__)
  __builtin_cpu_init();
  if (HT_SX_HAVE_AVX2 && __builtin_cpu_supports("avx2"))
    best = 2;
  if (HT_SX_HAVE_AVX512 && __builtin_cpu_supports("avx512f"))
    best = 3;
#endif
  const int want = atomic_load(&isa_wanted);
  return want >= 1 && want < best ? want : best;
}

/* Instances the build has not compiled are never picked (ht_sx_isa);
 * these stand in for them so that every name links. */
#if !HT_SX_HAVE_AVX2
bool ht_les_step_avx2(const ht_sx *s, ht_sx_scratch *w, int64_t i, int64_t j) { return ht_les_step_generic(s, w, i, j); }
bool ht_pes_step_avx2(const ht_sx *s, ht_sx_scratch *w, int64_t i, int64_t j) { return ht_pes_step_generic(s, w, i, j); }
bool ht_dbs_step_avx2(const ht_sx *s, ht_sx_scratch *w, int64_t i, int64_t j) { return ht_dbs_step_generic(s, w, i, j); }
#endif
#if !HT_SX_HAVE_AVX512
bool ht_les_step_avx512(const ht_sx *s, ht_sx_scratch *w, int64_t i, int64_t j) { return ht_les_step_avx2(s, w, i, j); }
bool ht_pes_step_avx512(const ht_sx *s, ht_sx_scratch *w, int64_t i, int64_t j) { return ht_pes_step_avx2(s, w, i, j); }
bool ht_dbs_step_avx512(const ht_sx *s, ht_sx_scratch *w, int64_t i, int64_t j) { return ht_dbs_step_avx2(s, w, i, j); }
#endif

static const ht_sx_step steps[3][3] = {
  /* [method][isa - 1] */
  { ht_les_step_generic, ht_les_step_avx2, ht_les_step_avx512 },
  { ht_pes_step_generic, ht_pes_step_avx2, ht_pes_step_avx512 },
  { ht_dbs_step_generic, ht_dbs_step_avx2, ht_dbs_step_avx512 },
};

ht_status ht_search_check_job(ht_job *job, const char *name)
{
  if (job->levels != 2) {
    ht_set_msg(job->msg, "%s gives binary output only (levels 2), got levels %d", name, job->levels);
    return HT_ERR_UNSUPPORTED;
  }
  if (job->scan != HT_SCAN_RASTER) {
    ht_set_msg(job->msg, "%s visits its windows in raster order or in blocks; the serpentine scan does not apply",
               name);
    return HT_ERR_UNSUPPORTED;
  }
  return HT_OK;
}

static ht_status run(ht_job *job, const ht_rows *rows, int method, const char *name)
{
  const ht_status refused = ht_search_check_job(job, name);
  if (refused != HT_OK)
    return refused;
  const int64_t w = rows->width, h = rows->height;
  ht_sx s;
  ht_status st;
  if (method == 2) /* DBS: the 3 x 3 around every pixel */
    st = ht_sx_init(&s, job, rows, 3, 3, -1, h, w, 3);
  else { /* LES, PES: every m x m window inside the image, clipped to it */
    const int m = job->window, wh = h < m ? (int)h : m, ww = w < m ? (int)w : m;
    st = ht_sx_init(&s, job, rows, wh, ww, 0, h - wh + 1, w - ww + 1, m);
  }
  if (st == HT_OK) {
    s.step = steps[method][ht_sx_isa() - 1];
    s.work = method == 0 ? ht_les_work(&s) : method == 2 ? ht_dbs_work(&s) : ht_pes_work(&s);
    st = ht_sx_schedule_run(&s);
    ht_job_note_rounds(job, s.rounds);
    atomic_store(&ht_sx_last_rounds, s.rounds);
    atomic_store(&ht_sx_last_searched, s.searched);
    atomic_store(&ht_sx_last_changed, s.changed);
  }
  if (st == HT_OK)
    ht_sx_store(&s, rows);
  else if (st == HT_ERR_CANCELLED)
    ht_set_msg(job->msg, "cancelled");
  ht_sx_free(&s);
  return st;
}

ht_status ht_les_run(ht_job *job, const ht_rows *rows) { return run(job, rows, 0, "les"); }
ht_status ht_pes_run(ht_job *job, const ht_rows *rows) { return run(job, rows, 1, "pes"); }
ht_status ht_dbs_run(ht_job *job, const ht_rows *rows)
{
  return job->objective == HT_OBJECTIVE_FILTERED ? ht_dbs_filtered_run(job, rows) : run(job, rows, 2, "dbs");
}
