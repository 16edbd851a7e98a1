/* Error diffusion (Kasagi, Nakano, Ito): the implementations, one file
 * each, named after it. They take a job and its rows (job.h, rows.h) and
 * call nothing above them; the CPU table (impl_cpu.c) lists them. */
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

#endif
