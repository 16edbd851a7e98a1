/* The cost model of backend auto (cost.c). */
#ifndef HT_COST_H
#define HT_COST_H

#include <stdbool.h>

/* Whether a plane of `pixels` is expected to be done sooner on the GPU
 * than on `threads` CPU threads, counting the time to open the GPU
 * unless `gpu_open` (it is already open, or was tried). */
bool ht_cost_prefers_gpu(double pixels, int threads, bool gpu_open);

/* The same for a search method (ht_method LES, PES or DBS; window m). */
bool ht_cost_prefers_gpu_search(int method, int window, double pixels, int threads, bool gpu_open);

#endif
