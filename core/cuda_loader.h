/* The CUDA backend's run-time loader (cuda_loader.c): the core never
 * links the CUDA runtime; it opens libhalftone-cuda.so (cuda/module.h) on
 * the first GPU run. What runs there is each family's host side, which
 * calls the module's table through the open ht_cuda: diffusion/gpu.c,
 * search/gpu.c, color/gpu.c. */
#ifndef HT_CUDA_LOADER_H
#define HT_CUDA_LOADER_H

#include "job.h"

struct ht_cuda_module_api;

/* The open module: its handle, its table of functions (cuda/module.h)
 * and the device it opened. */
struct ht_cuda {
  void *dl;
  const struct ht_cuda_module_api *api;
  void *dev;
};

/* Returns NULL with a message in `msg` (HT_MSG_MAX bytes) when no GPU
 * can be used. */
ht_cuda *ht_cuda_open(char *msg);
void ht_cuda_close(ht_cuda *cuda);

/* Whether a GPU may be there to try: HT_CUDA_MODULE is set or an NVIDIA
 * driver shows itself (its device nodes). Cheap; backend auto asks it
 * before it counts on the GPU for the search methods. */
bool ht_cuda_maybe_present(void);

/* A module function's result (HT_CUDA_OK, HT_CUDA_ERR_*) as the
 * library's status, the module's reason `why` in the job's message. */
ht_status ht_cuda_status(ht_job *job, int r, const char *why);

#endif
