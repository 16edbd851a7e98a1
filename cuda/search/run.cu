/* cuda/search/run.cu: the search methods over one plane (module.h's
 * search): the plane up, its initial image and error field made on the
 * GPU (search/field.cu), the rounds of core/search/schedule.c's parallel
 * schedule (Kouge, Ito, Nakano, Sec. IV-B: four groups a round, a launch
 * per group or per part of one), the result down.
 *
 * The window geometry, the block side q = 2r + side - 1, the groups and
 * the stopping rule (a round that changes nothing, or max_rounds) are
 * core/search/run.c's and schedule.c's, so the counts of rounds, windows
 * searched and windows changed are the CPU's too. Progress and cancel
 * between launches. */
#include "../module_private.h"
#include "common.cuh"
#include "../../core/shared/fixed.h"
#include "../../core/shared/search_progress.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace htcuda {

namespace {

struct bufs {
  uint16_t *a = nullptr;
  uint8_t *b = nullptr, *dirty = nullptr;
  int32_t *e = nullptr;
  unsigned long long *count = nullptr;
  int *changed = nullptr;
  ~bufs()
  {
    cudaFree(a);
    cudaFree(b);
    cudaFree(dirty);
    cudaFree(e);
    cudaFree(count);
    cudaFree(changed);
  }
};

bool alloc(ctx_err &ce, void **p, size_t bytes, const char *what)
{
  if (env_set("HT_CUDA_FAIL_ALLOC")) {
    say(ce.msg, ce.n, "cannot allocate %zu bytes of device memory for %s (HT_CUDA_FAIL_ALLOC)", bytes, what);
    ce.err = cudaErrorMemoryAllocation;
    return false;
  }
  char what_line[96];
  snprintf(what_line, sizeof what_line, "cudaMalloc (%s, %zu MB)", what, bytes >> 20);
  return ce.check(cudaMalloc(p, bytes ? bytes : 1), what_line);
}

/* The fraction of the run done after round `round` and the fraction f of
 * it, as schedule.c's tick reports it. */
int64_t progress(int max_rounds, int round, double f, int64_t total)
{
  return ht_search_progress(max_rounds, round, f, total);
}

} // namespace

int m_search(void *p, ht_cuda_search *s, char *msg, size_t n)
{
  dev *d = (dev *)p;
  if (!d || !s || !s->a || !s->b || !s->eye || s->width <= 0 || s->height <= 0 || s->width > INT_MAX / 4 ||
      s->height > INT_MAX / 4 || (double)s->width * (double)s->height > (double)INT_MAX ||
      s->method < HT_CUDA_SEARCH_LES || s->method > HT_CUDA_SEARCH_DBS || s->radius < 1 ||
      s->radius > HT_EYE_MAX_RADIUS || s->window < 1 || s->window > HT_SEARCH_WINDOW_MAX || s->max_rounds < 0) {
    say(msg, n, "invalid arguments to the CUDA module's search");
    return HT_CUDA_ERR_UNSUPPORTED;
  }
  if (cudaSetDevice(d->device) != cudaSuccess) {
    cudaGetLastError();
    say(msg, n, "cannot select CUDA device %d", d->device);
    return HT_CUDA_ERR_GPU;
  }
  ctx_err ce{ msg, n };
  const int W = (int)s->width, H = (int)s->height, r = s->radius;
  sx::plane P;
  memset(&P, 0, sizeof P);
  P.W = W;
  P.H = H;
  P.r = r;
  P.S = 2 * r + 1;
  int side;
  if (s->method == HT_CUDA_SEARCH_DBS) { /* the 3 x 3 around every pixel (run.c) */
    P.wh = P.ww = side = 3;
    P.off = -1;
    P.ph = H;
    P.pw = W;
  } else { /* every m x m window inside the image, clipped to it */
    side = s->window;
    P.wh = std::min(H, side);
    P.ww = std::min(W, side);
    P.off = 0;
    P.ph = H - P.wh + 1;
    P.pw = W - P.ww + 1;
  }
  P.n = P.wh * P.ww;
  P.q = 2 * r + side - 1; /* core/search/search.h, ht_sx_block_side */
  P.rh = P.wh + 2 * r;
  P.rw = P.ww + 2 * r;
  for (int i = 0; i < P.S * P.S; i++)
    P.mag[i] = HT_FX_ONE * s->eye[i];
  int nt = 0;
  size_t bytes = 0;
  if (s->method != HT_CUDA_SEARCH_DBS) {
    nt = sx::threads_for(P.rh * P.rw, P.n, P.S, d->prop.sharedMemPerBlockOptin);
    if (!nt) {
      say(msg, n, "the GPU's shared memory is too small for windows of %d x %d under an eye of radius %d", P.wh, P.ww,
          r);
      return HT_CUDA_ERR_UNSUPPORTED;
    }
    bytes = sx::layout(P.rh * P.rw, P.n, P.S, nt).bytes;
  }
  const size_t px = (size_t)W * (size_t)H, pos = (size_t)P.ph * (size_t)P.pw;
  bufs B;
  if (!alloc(ce, (void **)&B.a, px * 2, "the input") || !alloc(ce, (void **)&B.b, px, "the halftone") ||
      !alloc(ce, (void **)&B.e, px * 4, "the error field") || !alloc(ce, (void **)&B.dirty, pos, "the skip map") ||
      !alloc(ce, (void **)&B.count, 2 * sizeof(unsigned long long), "counters") ||
      !alloc(ce, (void **)&B.changed, sizeof(int), "a flag"))
    return status_of(ce);
  cudaStream_t st = d->comp;
  if (!ce.check(cudaMemcpyAsync(B.a, s->a, px * 2, cudaMemcpyHostToDevice, st), "upload of the input") ||
      (s->init_given && !ce.check(cudaMemcpyAsync(B.b, s->b, px, cudaMemcpyHostToDevice, st), "upload of the start")) ||
      (!s->init_given &&
       !ce.check(sx_launch_random(B.a, B.b, W, H, s->seed, s->plane, s->y0, st), "the random initial image")) ||
      !ce.check(sx_launch_field(B.a, B.b, B.e, W, H, r, s->eye, st), "the error field") ||
      !ce.check(cudaMemsetAsync(B.dirty, 1, pos, st), "the skip map") || /* every window is due first */
      !ce.check(cudaMemsetAsync(B.count, 0, 2 * sizeof(unsigned long long), st), "counters"))
    return status_of(ce);
  P.e = B.e;
  P.b = B.b;
  P.dirty = B.dirty;
  P.count = B.count;
  P.changed = B.changed;

  /* Blocks per launch: a group at once, but for the largest windows
   * (seconds a block) a few waves at a time, so progress and cancel come
   * every few seconds. */
  const int nbr = (P.ph + P.q - 1) / P.q, nbc = (P.pw + P.q - 1) / P.q;
  int chunk = INT_MAX;
  if (s->method != HT_CUDA_SEARCH_DBS && P.n >= 20) {
    const int per_sm = (int)(d->prop.sharedMemPerMultiprocessor / (bytes + 1024)); /* shared memory bounds them */
    chunk = std::max(1, d->prop.multiProcessorCount * std::max(1, per_sm));
  }
  const int64_t total = (int64_t)1 << 30;
  int round = 0;
  int status = HT_CUDA_OK;
  for (; !s->max_rounds || round < s->max_rounds; round++) {
    if (!ce.check(cudaMemsetAsync(B.changed, 0, sizeof(int), st), "a flag"))
      return status_of(ce);
    int64_t before = 0;
    for (int g = 0; g < 4; g++) {
      const int pr = g >> 1, pc = g & 1;
      const int gbr = nbr > pr ? (nbr - pr + 1) / 2 : 0;
      P.gbc = nbc > pc ? (nbc - pc + 1) / 2 : 0;
      P.group = g;
      const int nb = gbr * P.gbc;
      for (int first = 0; first < nb; first += std::min(chunk, nb - first)) {
        P.first = first;
        P.last = first + std::min(chunk, nb - first);
        cudaError_t e = s->method == HT_CUDA_SEARCH_LES   ? sx_launch_les(P, nt, bytes, st)
                        : s->method == HT_CUDA_SEARCH_PES ? sx_launch_pes(P, nt, bytes, st)
                                                          : sx_launch_dbs(P, st);
        if (!ce.check(e, "a search launch") || !ce.check(cudaStreamSynchronize(st), "a search group"))
          return status_of(ce);
        const double f = (double)(before + P.last) / (double)std::max(1, nbr * nbc);
        if (s->tick && !s->tick(s->user, progress(s->max_rounds, round, f, total), total))
          status = HT_CUDA_ERR_CANCELLED;
        if (status != HT_CUDA_OK)
          break;
      }
      before += nb;
      if (status != HT_CUDA_OK)
        break;
    }
    if (status != HT_CUDA_OK)
      break;
    int changed = 0;
    if (!ce.check(cudaMemcpy(&changed, B.changed, sizeof changed, cudaMemcpyDeviceToHost), "the round's flag"))
      return status_of(ce);
    if (!changed) {
      round++;
      break;
    }
  }
  unsigned long long cnt[2] = { 0, 0 };
  if (!ce.check(cudaMemcpy(cnt, B.count, sizeof cnt, cudaMemcpyDeviceToHost), "the counters"))
    return status_of(ce);
  s->rounds = round;
  s->searched = (int64_t)cnt[0];
  s->changed = (int64_t)cnt[1];
  if (status != HT_CUDA_OK) {
    say(msg, n, "cancelled");
    return status;
  }
  if (!ce.check(cudaMemcpy(s->b, B.b, px, cudaMemcpyDeviceToHost), "download of the halftone"))
    return status_of(ce);
  return HT_CUDA_OK;
}

} // namespace htcuda
