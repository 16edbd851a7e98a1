/* cuda/paper.h: shared between the module (C1) and the paper's variants (C2) */
#ifndef HT_CUDA_PAPER_H
#define HT_CUDA_PAPER_H
#include <stddef.h>
#include <cuda_runtime.h>

typedef struct { int ntaps; int dx[32], dy[32], q[32];          /* Q12 weights, core/fixed.h */
                 int reach_left, reach_right, reach_down, delay; int levels; } ht_gpu_filter;
typedef enum { HT_GPU_PAPER_3D_PED, HT_GPU_PAPER_2D_PED_ATOMIC, HT_GPU_PAPER_2D_PED_DOUBLE, HT_GPU_PAPER_2D_PEC,   /* Table V (2): global memory, as is */
               HT_GPU_PAPER_3D_PED_PERM, HT_GPU_PAPER_2D_PED_ATOMIC_PERM, HT_GPU_PAPER_2D_PED_DOUBLE_PERM, HT_GPU_PAPER_2D_PEC_PERM, /* (3): with data permutation */
               HT_GPU_PAPER_PB_PED, HT_GPU_PAPER_PB_PED_RC, HT_GPU_PAPER_PB_PEC, HT_GPU_PAPER_PB_PEC_RC, /* (4): parallelogram blocks, shared memory */
               HT_GPU_PAPER_COUNT } ht_gpu_paper_variant;
/* d_in: device image, 8-bit (in_bits 8, value v means v*257) or 16-bit samples, pitch in bytes; d_out: device level indices 0..levels-1, pitch in bytes.
 * Synchronous on `stream`; allocates and frees its own scratch; returns the first CUDA error. Exactly equal to core/ed.c. */
cudaError_t ht_gpu_paper_run(ht_gpu_paper_variant v, const void *d_in, int in_bits, size_t in_pitch,
                             unsigned char *d_out, size_t out_pitch, int width, int height,
                             const ht_gpu_filter *f, cudaStream_t stream);

#endif
