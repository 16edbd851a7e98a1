/* The CUDA backend's run-time loader (cuda_loader.c): the core never
 * links the CUDA runtime; it opens libhalftone-cuda.so (cuda/module.h) on
 * the first GPU run. */
#ifndef HT_CUDA_LOADER_H
#define HT_CUDA_LOADER_H

#include "job.h"
#include "rows.h"

/* Returns NULL with a message in `msg` (HT_MSG_MAX bytes) when no GPU
 * can be used. */
ht_cuda *ht_cuda_open(char *msg);
void ht_cuda_close(ht_cuda *cuda);
/* Runs the job's plane on the GPU with GPU variant `variant`. */
ht_status ht_cuda_run(ht_cuda *cuda, ht_job *job, const ht_rows *rows, ht_variant variant);

/* Runs plane-dependent colour error diffusion (job->color, all planes)
 * on the GPU: the planes are loaded (and separated) here, halftoned in
 * the module (cuda/color/pd.cu) and stored here. */
ht_status ht_cuda_color_run(ht_cuda *cuda, ht_job *job);

/* Runs a search method over one plane in the module (cuda/module.h's
 * ht_cuda_search, filled by the caller but for tick and user, which go
 * to the job's progress); the module's failures as statuses with the
 * job's message. */
struct ht_cuda_search_s;
ht_status ht_cuda_search_run(ht_cuda *cuda, ht_job *job, struct ht_cuda_search_s *s);

/* Whether a GPU may be there to try: HT_CUDA_MODULE is set or an NVIDIA
 * driver shows itself (its device nodes). Cheap; backend auto asks it
 * before it counts on the GPU for the search methods. */
bool ht_cuda_maybe_present(void);

#endif
