/* The wavefront's scheduling (wavefront_sched.c): tickets, waiting for
 * the band above, band heights, and the rows a finished band carries
 * out. Kernels and the entry point include this; the scheduler itself
 * calls no kernel. */
#ifndef HT_WAVEFRONT_SCHED_H
#define HT_WAVEFRONT_SCHED_H

#include "wavefront_common.h"

void ht_wf_wait_1ms(pthread_cond_t *c, pthread_mutex_t *m);
/* Once band B is done: its rows that the job's carry_out takes
 * (wavefront_sched.c). */
void ht_wf_carry_out(const wf *W, const band *B);
bool ht_wf_wait_band(wf *W, int me, int64_t b, uint64_t need, uint64_t all, uint64_t *seen, int64_t *waited);
/* The same, with the usual case inline: the kernel's loop asks at every
 * step, and `seen` mostly shows the steps done already. */
static inline bool wait_band(wf *W, int me, int64_t b, uint64_t need, uint64_t all, uint64_t *seen,
                             int64_t *waited)
{
  if (*seen >= ((uint64_t)b << 32) + need)
    return true;
  return ht_wf_wait_band(W, me, b, need, all, seen, waited);
}
bool ht_wf_ticket_take(wf *W, int want, bool (*may)(const wf *W, int64_t b, int g), band *B);
int ht_wf_band_rows(const wf *W, int me);

#endif
