/* cuda/diffusion/run_paper.cu: the paper's variants over one plane (module.h's
 * run, variants HT_CUDA_VARIANT_PAPER_FIRST on).
 *
 * They keep the paper's shape (Kasagi et al. Table V (2)-(4)): the whole
 * plane is uploaded, halftoned into level indices by one call of
 * ht_gpu_paper_run (paper.h), converted into the io's output bytes or
 * packed bits on the GPU, and downloaded. No pipeline and no chunks, so
 * a plane must fit in device memory; no carried rows. */
#include "../module_private.h"

#include <algorithm>

namespace htcuda {

#if HT_HAVE_PAPER
namespace {

struct lut256 {
  unsigned char v[256];
};

/* Level indices -> the io's output: lut[level] bytes, or packed PBM bits
 * (a set bit is level 0, the first column in the high bit). */
__global__ void convert_kernel(const unsigned char *lv, size_t lv_pitch, unsigned char *out, size_t out_pitch,
                               int width, int height, int bit1, const lut256 lut)
{
  const int y = blockIdx.y;
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (y >= height)
    return;
  const unsigned char *r = lv + (size_t)y * lv_pitch;
  if (bit1) {
    const int x0 = i * 8;
    if (x0 >= width)
      return;
    unsigned b = 0;
    for (int k = 0; k < 8; k++)
      b |= (unsigned)(x0 + k < width && r[x0 + k] == 0) << (7 - k);
    out[(size_t)y * out_pitch + i] = (unsigned char)b;
  } else if (i < width) {
    out[(size_t)y * out_pitch + i] = lut.v[r[i]];
  }
}

} // namespace

int run_paper(dev *d, int variant, const ht_filter *f, int levels, const ht_cuda_io *io, char *msg,
              size_t msg_size)
{
  ctx_err ce{ msg, msg_size };
  plane pl;
  plane_init(pl, io);
  const int W = pl.W, H = pl.H;
  const size_t lv_pitch = roundup((size_t)W, 512);
  const int S = std::max(32, (int)roundup((size_t)std::max(1, (1 << 22) / W), 32));
  size_t free_b = 0, total_b = 0;
  if (!ce.check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo"))
    return status_of(ce);
  size_t need = (pl.in_pitch + lv_pitch + pl.out_pitch) * (size_t)H;
  if (need > (free_b + d->d_in_size + d->d_out_size + d->d_lv_size) / 10 * 7) {
    say(msg, msg_size, "the paper's variants need the whole image on the GPU: %zu MB, %zu MB free", need >> 20,
        free_b >> 20);
    return HT_CUDA_ERR_UNSUPPORTED;
  }
  if (!grow_dev(ce, &d->d_in, &d->d_in_size, pl.in_pitch * (size_t)H, false, "the input") ||
      !grow_dev(ce, (void **)&d->d_lv, &d->d_lv_size, lv_pitch * (size_t)H, false, "the levels") ||
      !grow_dev(ce, (void **)&d->d_out, &d->d_out_size, pl.out_pitch * (size_t)H, false, "the output") ||
      !grow_host(ce, (void **)&d->h_vals, &d->h_vals_n, 2 * sizeof(int), cudaHostAllocDefault, "flags") ||
      !ensure_staging(d, ce, pl, S))
    return status_of(ce);
  for (int y = 0, k = 0; y < H; y += S, k++)
    if (!upload_rows(d, ce, pl, y, std::min(S, H - y), (unsigned char *)d->d_in + (size_t)y * pl.in_pitch, k % NSLOT))
      goto fail;
  if (!ce.check(cudaStreamSynchronize(d->h2d), "upload") ||
      !ce.check(ht_gpu_paper_run((ht_gpu_paper_variant)(variant - HT_CUDA_VARIANT_PAPER_FIRST), d->d_in, pl.in_bits,
                                 pl.in_pitch, d->d_lv, lv_pitch, W, H, f, levels, d->comp),
                "the paper variant"))
    goto fail;
  {
    lut256 lut;
    for (int i = 0; i < 256; i++)
      lut.v[i] = pl.store || pl.bit1 ? (unsigned char)i : io->lut[i];
    dim3 grid((unsigned)((pl.bit1 ? (W + 7) / 8 : W) + 255) / 256, (unsigned)H);
    convert_kernel<<<grid, 256, 0, d->comp>>>(d->d_lv, lv_pitch, d->d_out, pl.out_pitch, W, H, pl.bit1, lut);
    if (!ce.check(cudaGetLastError(), "convert") || !ce.check(cudaStreamSynchronize(d->comp), "convert"))
      goto fail;
  }
  for (int y = 0; y < H; y += S) {
    int n = std::min(S, H - y);
    if (!download_rows(d, ce, pl, y, n, d->d_out + (size_t)y * pl.out_pitch, 0) ||
        !ce.check(cudaEventSynchronize(d->ev_out[0]), "download"))
      goto fail;
    store_rows(d, pl, y, n, 0);
    if (io->tick && !io->tick(io->user, y + n, H)) {
      say(msg, msg_size, "cancelled");
      return HT_CUDA_ERR_CANCELLED;
    }
  }
  return HT_CUDA_OK;
fail:
  drain(d);
  cudaGetLastError();
  return status_of(ce);
}

#else

int run_paper(dev *d, int variant, const ht_filter *f, int levels, const ht_cuda_io *io, char *msg,
              size_t msg_size)
{
  (void)d;
  (void)variant;
  (void)f;
  (void)levels;
  (void)io;
  say(msg, msg_size, "this module was built without the paper's variants");
  return HT_CUDA_ERR_UNSUPPORTED;
}

#endif

} // namespace htcuda
