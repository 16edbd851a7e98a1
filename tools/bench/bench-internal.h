/* INTERNAL: what the benchmark programs read from inside libhalftone
 * beyond its public header (core/halftone.h). Not an API: it names the
 * library's private headers, changes with them without notice, and is
 * for the programs of tools/bench/ only; nothing else may include it.
 *
 *   core/search/search.h  ht_sx_last_rounds, _searched, _changed: what
 *                         the last search run of the process did (set by
 *                         core/search/run.c and core/impl_cuda.c), which
 *                         ht-bench-search-gpu prints beside its times.
 *
 * The CUDA module's table (cuda/module.h), which ht-bench-cuda calls
 * straight, is not here: it is the ABI between core/cuda_loader.c and
 * the module, versioned by HT_CUDA_ABI, and bench-cuda.c includes it as
 * that. */
#ifndef HT_BENCH_INTERNAL_H
#define HT_BENCH_INTERNAL_H

#include "search/search.h"

#endif
