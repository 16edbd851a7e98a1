/* The search methods on the GPU (les-gpu, pes-gpu, dbs-gpu), the host
 * side (cuda/search/ is the device side): a plane of LES, PES or DBS in
 * the module's search (cuda/module.h's ht_cuda_search). The input and,
 * for the Floyd-Steinberg start, the initial image are made here; the
 * random start, the error field and the rounds run on the GPU; the
 * result is stored as run.c stores it. */
#include "search.h"
#include "../cuda_loader.h"
#include "../../cuda/module.h"

#include <stdlib.h>
#include <string.h>

/* The module's progress between groups, as the job's. */
static bool job_tick(void *user, int64_t done, int64_t total) { return ht_job_tick(user, done, total); }

ht_status ht_search_gpu_run(ht_cuda *c, ht_job *job, const ht_rows *rows, int module_method)
{
  const int method = module_method;
  if (method < HT_CUDA_SEARCH_LES || method > HT_CUDA_SEARCH_DBS) {
    ht_set_msg(job->msg, "unknown GPU search method %d (variant %d)", method, (int)job->variant);
    return HT_ERR_INVALID_ARGUMENT;
  }
  const char *name = method == HT_CUDA_SEARCH_LES ? "les" : method == HT_CUDA_SEARCH_PES ? "pes" : "dbs";
  const ht_status refused = ht_search_check_job(job, name);
  if (refused != HT_OK)
    return refused;
  const int64_t w = rows->width, h = rows->height;
  const size_t px = (size_t)w * (size_t)h;
  uint16_t *a = ht_alloc_raw(job, px, sizeof *a);
  uint8_t *b = ht_alloc_raw(job, px, 1);
  int32_t *row = ht_alloc_raw(job, (size_t)w, sizeof *row);
  ht_status st = HT_OK;
  if (!a || !b || !row) {
    st = HT_ERR_NO_MEMORY;
    goto out;
  }
  for (int64_t y = 0; y < h; y++) {
    rows->load(rows, y, 0, w, row);
    for (int64_t x = 0; x < w; x++)
      a[(size_t)y * (size_t)w + (size_t)x] = (uint16_t)row[x]; /* HT_FX values are 0..65535 */
  }
  if (job->init == HT_INIT_FLOYD_STEINBERG && (st = ht_search_fs_start(job, rows, b)) != HT_OK)
    goto out;
  ht_cuda_search s;
  memset(&s, 0, sizeof s);
  s.method = method;
  s.width = w;
  s.height = h;
  s.a = a;
  s.b = b;
  s.init_given = job->init == HT_INIT_FLOYD_STEINBERG;
  s.seed = job->seed;
  s.plane = job->plane;
  s.y0 = job->y0;
  s.window = job->window;
  s.radius = job->eye.radius;
  s.eye = job->eye.w;
  s.max_rounds = job->max_rounds;
  s.tick = job_tick;
  s.user = job;
  char why[HT_MSG_MAX] = "";
  st = ht_cuda_status(job, c->api->search(c->dev, &s, why, sizeof why), why);
  ht_job_note_rounds(job, s.rounds); /* --metrics' rounds, as run.c */
  /* for the benchmark, as the CPU's run.c counts them */
  atomic_store(&ht_sx_last_rounds, s.rounds);
  atomic_store(&ht_sx_last_searched, s.searched);
  atomic_store(&ht_sx_last_changed, s.changed);
  if (st == HT_OK)
    for (int64_t y = 0; y < h; y++)
      rows->store(rows, y, 0, w, b + (size_t)y * (size_t)w);
  else if (st == HT_ERR_CANCELLED)
    ht_set_msg(job->msg, "cancelled");
out:
  free(a);
  free(b);
  free(row);
  return st;
}
