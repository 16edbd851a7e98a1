/* cuda/color/io.cu: gpu-pd's data between the caller and the device.
 *
 * The scan (color/pd.cu) reads every plane as 16-bit HT_FX values and
 * writes level indices, plane after plane. Where the caller gives 8-bit
 * interleaved pixels (ht_cuda_color.in8, the common case: RGB from a
 * PNG, PPM or GIMP layer), the pixels go up as they are, 3 or 4 bytes a
 * pixel instead of 2 bytes a plane made by the host, and a small kernel
 * turns each stripe into the planes (cmyk: separated by pd_arith.h's
 * ht_pd_cmyk, the CPU's integers, so the bits are the CPU's). On the way
 * back a kernel turns a stripe of level indices into the output's 8-bit
 * values (the caller's per-plane tables) and the stripe comes down
 * straight into the caller's rows. Stripes alternate between two
 * streams so that one stripe's copy overlaps the other's kernel. Other
 * inputs come as planes made by the host (ht_cuda_color.in). */
#include "../module_private.h"
#include "../../core/shared/pd_arith.h"

#include <cstdint>
#include <cstring>

namespace htcuda {

namespace {

constexpr size_t STRIPE_BYTES = size_t(32) << 20; /* of interleaved pixels a stripe */

/* Rows of interleaved 8-bit pixels (rows x w x ch, packed) into the
 * planes' HT_FX values. */
__global__ void unpack_rows(const uint8_t *px, int w, int rows, int ch, int planes, bool cmyk, int32_t black,
                            uint16_t *dst, size_t pitch, size_t plane)
{
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x >= w || y >= rows)
    return;
  const uint8_t *p = px + ((size_t)y * (size_t)w + (size_t)x) * (size_t)ch;
  uint16_t *d = dst + (size_t)y * pitch + (size_t)x;
  if (cmyk) {
    int32_t o[4];
    ht_pd_cmyk(ht_fx_from_u8(p[0]), ht_fx_from_u8(p[1]), ht_fx_from_u8(p[2]), black, o);
    for (int j = 0; j < 4; j++)
      d[(size_t)j * plane] = (uint16_t)o[j];
    return;
  }
  for (int j = 0; j < planes; j++)
    d[(size_t)j * plane] = (uint16_t)ht_fx_from_u8(p[j]);
}

struct luts {
  uint8_t v[4][256];
};

/* Rows of level indices (plane after plane) into interleaved 8-bit
 * output values, ch a pixel; channels past the planes (alpha, which the
 * caller copies afterwards) are 0. */
__global__ void pack_rows(const uint8_t *lv, size_t pitch, size_t plane, int w, int rows, int planes, int ch,
                          luts t, uint8_t *px)
{
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x >= w || y >= rows)
    return;
  const uint8_t *s = lv + (size_t)y * pitch + (size_t)x;
  uint8_t *o = px + ((size_t)y * (size_t)w + (size_t)x) * (size_t)ch;
  for (int j = 0; j < ch; j++)
    o[j] = j < planes ? t.v[j][s[(size_t)j * plane]] : 0;
}

/* What both directions share: two streams, two device stripe buffers and
 * the stripe height. */
struct stripes {
  cudaStream_t st[2] = {};
  uint8_t *buf[2] = {};
  int rows = 0;
  ctx_err ce;
  cudaEvent_t e0 = nullptr, e1 = nullptr;
  stripes(char *msg, size_t n) { ce.msg = msg, ce.n = n; }
  bool open(size_t row_bytes, int64_t h)
  {
    int64_t r = (int64_t)(STRIPE_BYTES / (row_bytes ? row_bytes : 1));
    r = r > h ? h : r;
    rows = (int)(r < 1 ? 1 : r > 65535 ? 65535 : r); /* a grid's y extent */
    /* The streams do not wait for the default stream by themselves, and
     * the caller's work there (clearing the planes, the scan) must come
     * first: both wait for an event recorded behind it. */
    if (!ce.check(cudaEventCreate(&e0), "cudaEventCreate") || !ce.check(cudaEventCreate(&e1), "cudaEventCreate") ||
        !ce.check(cudaEventRecord(e0, cudaStreamLegacy), "cudaEventRecord"))
      return false;
    for (int k = 0; k < 2; k++)
      if (!ce.check(cudaStreamCreateWithFlags(&st[k], cudaStreamNonBlocking), "cudaStreamCreate") ||
          !ce.check(cudaStreamWaitEvent(st[k], e0, 0), "cudaStreamWaitEvent") ||
          !ce.check(cudaMalloc(&buf[k], row_bytes * (size_t)rows), "cudaMalloc (stripe)"))
        return false;
    return true;
  }
  /* Waits for both streams; the time since open() in ms. */
  bool finish(double *ms)
  {
    if (!ce.check(cudaStreamSynchronize(st[1]), "cudaStreamSynchronize") ||
        !ce.check(cudaEventRecord(e1, st[0]), "cudaEventRecord") ||
        !ce.check(cudaEventSynchronize(e1), "cudaEventSynchronize"))
      return false;
    float t = 0;
    cudaEventElapsedTime(&t, e0, e1);
    *ms = t;
    return true;
  }
  ~stripes()
  {
    for (int k = 0; k < 2; k++) {
      if (st[k])
        cudaStreamSynchronize(st[k]), cudaStreamDestroy(st[k]);
      cudaFree(buf[k]);
    }
    if (e0)
      cudaEventDestroy(e0);
    if (e1)
      cudaEventDestroy(e1);
  }
};

int fail(const ctx_err &ce)
{
  return ce.err == cudaErrorMemoryAllocation ? HT_CUDA_ERR_NO_MEMORY : HT_CUDA_ERR_GPU;
}

} // namespace

int pd_upload(ht_cuda_color *c, uint16_t *din, size_t pitch, size_t plane, char *msg, size_t n)
{
  const size_t W = (size_t)c->width, H = (size_t)c->height;
  stripes s(msg, n);
  if (!c->in8) { /* planes made by the host */
    for (int j = 0; j < c->planes; j++)
      if (!s.ce.check(cudaMemcpy2D(din + plane * (size_t)j, pitch * 2, c->in + W * H * (size_t)j, W * 2, W * 2, H,
                                   cudaMemcpyHostToDevice),
                      "the copy to the GPU"))
        return fail(s.ce);
    return HT_CUDA_OK;
  }
  const size_t rb = W * (size_t)c->in8_channels;
  if (!s.open(rb, c->height))
    return fail(s.ce);
  for (int64_t y0 = 0, k = 0; y0 < c->height; y0 += s.rows, k ^= 1) {
    const int rows = (int)(c->height - y0 < s.rows ? c->height - y0 : s.rows);
    cudaStream_t st = s.st[k];
    if (!s.ce.check(cudaMemcpy2DAsync(s.buf[k], rb, c->in8 + (size_t)y0 * c->in8_stride, c->in8_stride, rb,
                                      (size_t)rows, cudaMemcpyHostToDevice, st),
                    "the copy to the GPU"))
      return fail(s.ce);
    unpack_rows<<<dim3((unsigned)((W + 255) / 256), (unsigned)rows), 256, 0, st>>>(
        s.buf[k], (int)W, rows, c->in8_channels, c->planes, c->cmyk != 0, c->black, din + (size_t)y0 * pitch,
        pitch, plane);
    if (!s.ce.check(cudaGetLastError(), "the unpacking kernel"))
      return fail(s.ce);
  }
  return s.finish(&c->upload_ms) ? HT_CUDA_OK : fail(s.ce);
}

int pd_download(ht_cuda_color *c, const uint8_t *dout, size_t pitch, size_t plane, char *msg, size_t n)
{
  const size_t W = (size_t)c->width, H = (size_t)c->height;
  stripes s(msg, n);
  if (!c->out8) { /* level indices for the host */
    for (int j = 0; j < c->planes; j++)
      if (!s.ce.check(cudaMemcpy2D(c->out + W * H * (size_t)j, W, dout + plane * (size_t)j, pitch, W, H,
                                   cudaMemcpyDeviceToHost),
                      "the copy from the GPU"))
        return fail(s.ce);
    return HT_CUDA_OK;
  }
  luts t;
  memcpy(t.v, c->out8_lut, sizeof t.v);
  const size_t rb = W * (size_t)c->out8_channels;
  if (!s.open(rb, c->height))
    return fail(s.ce);
  for (int64_t y0 = 0, k = 0; y0 < c->height; y0 += s.rows, k ^= 1) {
    const int rows = (int)(c->height - y0 < s.rows ? c->height - y0 : s.rows);
    cudaStream_t st = s.st[k];
    pack_rows<<<dim3((unsigned)((W + 255) / 256), (unsigned)rows), 256, 0, st>>>(
        dout + (size_t)y0 * pitch, pitch, plane, (int)W, rows, c->planes, c->out8_channels, t, s.buf[k]);
    if (!s.ce.check(cudaGetLastError(), "the packing kernel") ||
        !s.ce.check(cudaMemcpy2DAsync(c->out8 + (size_t)y0 * c->out8_stride, c->out8_stride, s.buf[k], rb, rb,
                                      (size_t)rows, cudaMemcpyDeviceToHost, st),
                    "the copy from the GPU"))
      return fail(s.ce);
  }
  return s.finish(&c->download_ms) ? HT_CUDA_OK : fail(s.ce);
}

} // namespace htcuda
