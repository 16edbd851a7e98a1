/* cuda/module_private.h: what the module's files share, inside the
 * module only (nothing here crosses the ABI of module.h).
 *
 *   device.cu              the open device, its cached buffers and how
 *                          they grow
 *   pipeline.cu            a plane's rows between the caller and the device
 *   diffusion/run_fast.cu  gpu-fast: one persistent kernel over stripes
 *                          and chunks (kernel: diffusion/fast.cu)
 *   diffusion/run_paper.cu the paper's variants: the whole plane, then
 *                          converted (kernels: diffusion/paper_*.cu)
 *   diffusion/bench.cu     the benchmark hooks of tools/bench/bench-cuda.c
 *   search/run.cu          the search methods LES, PES, DBS over a plane
 *                          (kernels: search/les.cu, search/pes.cu,
 *                          search/dbs.cu, search/field.cu, search/common.cuh)
 *   color/pd.cu            gpu-pd: plane-dependent colour, the scan
 *   color/io.cu            gpu-pd's pixels up and down, converted on the GPU
 *   module.cu              argument checks, the ABI table and its entry
 *                          point
 */
#ifndef HT_CUDA_MODULE_PRIVATE_H
#define HT_CUDA_MODULE_PRIVATE_H

#include "module.h"
#include "diffusion/fast.h"
#include "diffusion/paper.h"

#include <cuda_runtime.h>
#include <cstddef>
#include <cstdint>

#ifndef HT_HAVE_PAPER
#define HT_HAVE_PAPER 1
#endif

namespace htcuda {

constexpr int NSLOT = 3; /* staging slots / downloads in flight */

/* The open device: streams, events and buffers kept between runs. */
struct dev {
  int device = 0;
  cudaDeviceProp prop;
  cudaStream_t comp = nullptr, h2d = nullptr, d2h = nullptr;
  cudaEvent_t ev_reset = nullptr, ev_in[NSLOT] = {}, ev_out[NSLOT] = {};
  unsigned tag = 0;  /* launch tag of the done flags */
  unsigned wtag = 0; /* launch tag of the boundary words, 1..255 (fast.h) */
  /* cached buffers, grown on demand */
  void *d_in = nullptr;
  size_t d_in_size = 0;
  unsigned char *d_out = nullptr;
  size_t d_out_size = 0;
  unsigned char *d_lv = nullptr;
  size_t d_lv_size = 0;
  unsigned *d_bound = nullptr;
  size_t d_bound_size = 0;
  int *d_ticket = nullptr, *d_ready = nullptr;
  unsigned *h_done = nullptr;
  size_t h_done_n = 0;
  int *h_fault = nullptr; /* host-mapped: a band's wait timed out */
  size_t h_fault_n = 0;
  int *h_vals = nullptr;
  size_t h_vals_n = 0;
  unsigned char *h_stage_in[NSLOT] = {}, *h_stage_out[NSLOT] = {};
  size_t stage_in_size = 0, stage_out_size = 0;
};

/* ------------------------------------------------------ device.cu */

void say(char *msg, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Every CUDA call goes through this: the first failure names the call. */
struct ctx_err {
  char *msg;
  size_t n;
  cudaError_t err = cudaSuccess;
  bool check(cudaError_t e, const char *what);
};

bool env_set(const char *name);
long env_long(const char *name, long def);
inline size_t roundup(size_t v, size_t m) { return (v + m - 1) / m * m; }

/* Grow a cached buffer to `need` bytes (device memory zeroed when
 * `zero`; host memory always zeroed). HT_CUDA_FAIL_ALLOC makes them fail. */
bool grow_dev(ctx_err &ce, void **p, size_t *have, size_t need, bool zero, const char *what);
bool grow_host(ctx_err &ce, void **p, size_t *have, size_t need, unsigned flags, const char *what);
/* The next boundary-word tag (fast.h); before the tags wrap, clears the
 * boundary slots but their first `keep` words. */
bool next_wtag(dev *d, ctx_err &ce, size_t keep);
/* HT_CUDA_ERR_NO_MEMORY or HT_CUDA_ERR_GPU, after the first failure. */
int status_of(const ctx_err &ce);
void drain(dev *d);

int m_open(void **out, char *msg, size_t n);
void m_close(void *p);
int m_info(void *p, ht_cuda_info *out);
void *m_host_alloc(void *p, size_t bytes);
void m_host_free(void *p, void *h);

/* ---------------------------------------------------- pipeline.cu */

/* One plane's shape on both sides of the bus. */
struct plane {
  const ht_cuda_io *io;
  int W, H;
  int in_bits, in_sz;
  bool bit1, store;
  size_t in_pitch, out_pitch;   /* device */
  size_t host_out_row;          /* bytes per output row on the host side */
  bool in_direct, out_direct;   /* pinned caller memory */
};

bool is_pinned(const void *p);
void plane_init(plane &pl, const ht_cuda_io *io);
/* Pinned staging slots for stripes of S rows, where the caller's memory
 * is not pinned. */
bool ensure_staging(dev *d, ctx_err &ce, const plane &pl, int S);
/* Rows [y, y + n) of the plane up to device rows from dst, on stream h2d,
 * through staging slot `slot` unless the caller's memory is pinned. */
bool upload_rows(dev *d, ctx_err &ce, const plane &pl, int64_t y, int n, unsigned char *dst, int slot);
/* Device rows from src down to rows [y, y + n), on stream d2h; the
 * slot's event ev_out[slot] marks the end. store_rows then hands staged
 * rows to the caller. */
bool download_rows(dev *d, ctx_err &ce, const plane &pl, int64_t y, int n, const unsigned char *src, int slot);
void store_rows(dev *d, const plane &pl, int64_t y, int n, int slot);
/* Lets a kernel that waits for stripes run to its end, then drains. */
void release_kernel(dev *d);

/* --------------------------- diffusion/run_fast.cu, diffusion/run_paper.cu */

int run_fast(dev *d, const ht_filter *f, int levels, const ht_cuda_io *io, char *msg, size_t msg_size);
int run_paper(dev *d, int variant, const ht_filter *f, int levels, const ht_cuda_io *io, char *msg,
              size_t msg_size);
/* gpu-fast's fault flag (host-mapped), cleared, its device address in
 * *fault_dev; and whether a launch's band gave up waiting. */
bool arm_fault(dev *d, ctx_err &ce, int **fault_dev);
bool faulted(dev *d, ctx_err &ce);

/* --------------------------------------------------- search/run.cu */

int m_search(void *p, ht_cuda_search *s, char *msg, size_t n);
/* color/pd.cu: plane-dependent colour error diffusion */
int color_pd(dev *d, const ht_filter *f, ht_cuda_color *c, char *msg, size_t n);
int m_color_pd(void *p, const ht_filter *f, ht_cuda_color *c, char *msg, size_t n);
/* color/io.cu: gpu-pd's planes up (din: `plane` values apart, rows `pitch`
 * apart) and level indices down, from and to the caller's buffers */
int pd_upload(ht_cuda_color *c, uint16_t *din, size_t pitch, size_t plane, char *msg, size_t n);
int pd_download(ht_cuda_color *c, const uint8_t *dout, size_t pitch, size_t plane, char *msg, size_t n);

/* --------------------------------------------- diffusion/bench.cu */

int m_bench_kernel(void *p, int variant, const ht_filter *f, int levels, const uint8_t *in, int W, int H,
                   int reps, uint8_t *levels_out, double *ms, char *msg, size_t n);
int m_bench_transfer(void *p, size_t bytes, int reps, double *h2d_ms, double *d2h_ms, char *msg, size_t n);
int m_bench_probe(void *p, int steps, double *ns, char *msg, size_t n);

} // namespace htcuda

#endif
