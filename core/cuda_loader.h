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

#endif
