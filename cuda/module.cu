/* cuda/module.cu: libhalftone-cuda.so, the module core/cuda_loader.c
 * loads: the checks of a run's arguments, the ABI table of module.h and
 * its one exported entry point. The work is in the files that
 * module_private.h lists. */
#include "module_private.h"
#include "../core/shared/fixed.h"

#include <climits>
#include <cstdint>
#include <vector>

#define EXPORT extern "C" __attribute__((visibility("default")))

namespace htcuda {

/* The variant numbers of module.h are 1 + paper.h's, as run_paper.cu and
 * bench.cu take them. */
#define HT_SAME_VARIANT(v) \
  static_assert(HT_CUDA_VARIANT_##v == HT_CUDA_VARIANT_PAPER_FIRST + HT_GPU_PAPER_##v, "module.h: " #v)
HT_SAME_VARIANT(3D_PED);
HT_SAME_VARIANT(2D_PED_ATOMIC);
HT_SAME_VARIANT(2D_PED_DOUBLE);
HT_SAME_VARIANT(2D_PEC);
HT_SAME_VARIANT(3D_PED_PERM);
HT_SAME_VARIANT(2D_PED_ATOMIC_PERM);
HT_SAME_VARIANT(2D_PED_DOUBLE_PERM);
HT_SAME_VARIANT(2D_PEC_PERM);
HT_SAME_VARIANT(PB_PED);
HT_SAME_VARIANT(PB_PED_RC);
HT_SAME_VARIANT(PB_PEC);
HT_SAME_VARIANT(PB_PEC_RC);
#undef HT_SAME_VARIANT
static_assert(HT_CUDA_VARIANT_COUNT == HT_CUDA_VARIANT_PAPER_FIRST + HT_GPU_PAPER_COUNT, "module.h: the count");

namespace {

/* What every kernel relies on, checked once here rather than trusted:
 * taps inside core/halftone.h's limits on positions the scan has not
 * reached, weights 0..1 in Q12, and reach and delay covering the taps
 * (the kernels' shapes are picked from them). The core's filters pass
 * (ht_filter_derive fills reach and delay). */
bool filter_ok(const ht_filter *f)
{
  if (f->ntaps < 0 || f->ntaps > HT_FILTER_MAX_TAPS || f->delay < 1 || f->reach_left < 0 || f->reach_right < 0 ||
      f->reach_down < 0 || f->reach_down > HT_FILTER_MAX_DOWN)
    return false;
  for (int i = 0; i < f->ntaps; i++) {
    const ht_tap &t = f->taps[i];
    if (t.dy < 0 || t.dy > f->reach_down || t.dx < -f->reach_left || t.dx > f->reach_right ||
        t.dx < -HT_FILTER_MAX_LEFT || t.dx > HT_FILTER_MAX_RIGHT || (t.dy == 0 && t.dx <= 0) || t.q < 0 ||
        t.q > HT_Q_ONE)
      return false;
    /* row y + dy at column x collects from row y up to x - dx: the
     * k-delay scan needs dy * delay >= 1 - dx (Sec. III) */
    if (t.dy > 0 && t.dy * f->delay < 1 - t.dx)
      return false;
  }
  return true;
}

int m_run(void *p, int variant, const ht_filter *f, int levels, const ht_cuda_io *io, char *msg, size_t n)
{
  dev *d = (dev *)p;
  if (!d || !f || !io || io->width <= 0 || io->height <= 0 || io->width > INT_MAX / 4 || io->height > INT_MAX / 4 ||
      levels < 2 || levels > 256 || (io->out_kind == HT_CUDA_OUT_BIT1 && levels != 2) || (!io->in && !io->load) ||
      (io->in && io->in_bits != 8 && io->in_bits != 16) ||
      (io->out_kind == HT_CUDA_OUT_STORE ? !io->store : !io->out)) {
    say(msg, n, "invalid arguments to the CUDA module");
    return HT_CUDA_ERR_UNSUPPORTED;
  }
  if (!filter_ok(f)) {
    say(msg, n, "the CUDA module cannot run filter %.32s: taps, reach or delay out of range", f->name);
    return HT_CUDA_ERR_UNSUPPORTED;
  }
  if (variant < 0 || variant >= HT_CUDA_VARIANT_COUNT) {
    say(msg, n, "unknown GPU variant %d", variant);
    return HT_CUDA_ERR_UNSUPPORTED;
  }
  if (variant != HT_CUDA_VARIANT_FAST && (io->carry_in || io->carry_out)) {
    say(msg, n, "only gpu-fast carries rows between bands; the paper's variants run whole images");
    return HT_CUDA_ERR_UNSUPPORTED;
  }
  if (cudaSetDevice(d->device) != cudaSuccess) {
    cudaGetLastError();
    say(msg, n, "cannot select CUDA device %d", d->device);
    return HT_CUDA_ERR_GPU;
  }
  /* HT_CUDA_HOST_REGISTER=1 pins the caller's pageable planes for the run
   * (cudaHostRegister) instead of copying them through staging; slower
   * where measured (BENCHMARKS.md, "What bounds gpu-fast"). */
  std::vector<void *> registered;
  if (env_long("HT_CUDA_HOST_REGISTER", 0) == 1) {
    const size_t in_bytes =
        io->in ? (size_t)(io->height - 1) * io->in_stride + (size_t)io->width * (size_t)(io->in_bits / 8) : 0;
    const size_t out_row = io->out_kind == HT_CUDA_OUT_BIT1 ? ((size_t)io->width + 7) / 8 : (size_t)io->width;
    const size_t out_bytes =
        io->out_kind != HT_CUDA_OUT_STORE ? (size_t)(io->height - 1) * io->out_stride + out_row : 0;
    void *ptrs[2] = { (void *)(uintptr_t)io->in, io->out };
    size_t sizes[2] = { in_bytes, out_bytes };
    for (int k = 0; k < 2; k++)
      if (sizes[k] && !is_pinned(ptrs[k])) {
        if (cudaHostRegister(ptrs[k], sizes[k], cudaHostRegisterDefault) == cudaSuccess)
          registered.push_back(ptrs[k]);
        else
          cudaGetLastError();
      }
  }
  int r = variant == HT_CUDA_VARIANT_FAST ? run_fast(d, f, levels, io, msg, n)
                                          : run_paper(d, variant, f, levels, io, msg, n);
  for (void *q : registered)
    cudaHostUnregister(q);
  return r;
}

} // namespace

int m_color_pd(void *p, const ht_filter *f, ht_cuda_color *c, char *msg, size_t n)
{
  return p ? color_pd((dev *)p, f, c, msg, n) : HT_CUDA_ERR_UNSUPPORTED;
}

namespace {

const ht_cuda_module_api api = {
  HT_CUDA_ABI, m_open, m_close, m_info, m_run, m_host_alloc, m_host_free, m_bench_kernel, m_bench_transfer,
  m_bench_probe, m_search, m_color_pd,
};

} // namespace

} // namespace htcuda

EXPORT const ht_cuda_module_api *ht_cuda_module_entry(int abi)
{
  return abi == HT_CUDA_ABI ? &htcuda::api : nullptr;
}
