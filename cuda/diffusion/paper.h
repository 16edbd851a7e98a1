/* cuda/diffusion/paper.h: the paper's GPU variants (Kasagi et al. Table
 * V (2)-(4); paper_global.cu, paper_parallelogram.cu), called by
 * run_paper.cu, bench.cu and tests/cuda/paper_selftest.cu. */
#ifndef HT_CUDA_PAPER_H
#define HT_CUDA_PAPER_H

#include <stddef.h>
#include <cuda_runtime.h>
#include "../module.h"

typedef enum {
  /* Table V (2): global memory, as designed for the PRAM */
  HT_GPU_PAPER_3D_PED,
  HT_GPU_PAPER_2D_PED_ATOMIC,
  HT_GPU_PAPER_2D_PED_DOUBLE,
  HT_GPU_PAPER_2D_PEC,
  /* (3): the same with data permutation */
  HT_GPU_PAPER_3D_PED_PERM,
  HT_GPU_PAPER_2D_PED_ATOMIC_PERM,
  HT_GPU_PAPER_2D_PED_DOUBLE_PERM,
  HT_GPU_PAPER_2D_PEC_PERM,
  /* (4): parallelogram blocks in shared memory */
  HT_GPU_PAPER_PB_PED,
  HT_GPU_PAPER_PB_PED_RC,
  HT_GPU_PAPER_PB_PEC,
  HT_GPU_PAPER_PB_PEC_RC,
  HT_GPU_PAPER_COUNT
} ht_gpu_paper_variant;

/* Halftones a whole plane with `levels` levels and filter f (its taps'
 * Q12 weights q; reach and delay are derived again from the taps, a
 * larger f->delay is honoured). d_in: device image, 8-bit (in_bits 8,
 * value v means v * 257) or 16-bit samples, pitch in bytes; d_out: device
 * level indices 0..levels-1, pitch in bytes. Synchronous on `stream`;
 * allocates and frees its own scratch; returns the first CUDA error
 * (cudaErrorInvalidValue for arguments it cannot run). Exactly equal to
 * core/diffusion/ed.c. */
cudaError_t ht_gpu_paper_run(ht_gpu_paper_variant v, const void *d_in, int in_bits, size_t in_pitch,
                             unsigned char *d_out, size_t out_pitch, int width, int height,
                             const ht_filter *f, int levels, cudaStream_t stream);

#endif
