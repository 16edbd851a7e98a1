/* Error diffusion (Kasagi, Nakano, Ito): the implementations, one file
 * each, named after it. They take a job and its rows (job.h, rows.h) and
 * call nothing above them; the CPU table (impl_cpu.c) lists them. gpu.c
 * is the GPU's host side: it hands a plane to the CUDA module
 * (cuda/diffusion/) through the loader (cuda_loader.h), for the GPU
 * table (impl_cuda.c). */
#ifndef HT_DIFFUSION_H
#define HT_DIFFUSION_H

#include "job.h"
#include "rows.h"

ht_status ht_ed_run(ht_job *job, const ht_rows *rows);        /* ed.c        */
ht_status ht_ec_run(ht_job *job, const ht_rows *rows);        /* ec.c        */
ht_status ht_ed_rc_run(ht_job *job, const ht_rows *rows);     /* ed_rc.c     */
ht_status ht_ec_rc_run(ht_job *job, const ht_rows *rows);     /* ec_rc.c     */
ht_status ht_wavefront_run(ht_job *job, const ht_rows *rows); /* wavefront.c */
ht_status ht_stream_run(ht_job *job, const ht_rows *rows);    /* stream.c    */

/* gpu.c: a plane on the GPU (cuda/diffusion/) in the open module, as
 * the module's variant `module_variant` (HT_CUDA_VARIANT_*, the row's,
 * impl.h). */
ht_status ht_diffusion_gpu_run(ht_cuda *cuda, ht_job *job, const ht_rows *rows, int module_variant);

#endif
