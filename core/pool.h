/* Worker threads kept from one run to the next (pool.c); one run at a
 * time. Below the algorithms: the threaded ones borrow the context's
 * pool through their job. */
#ifndef HT_POOL_H
#define HT_POOL_H

typedef struct ht_pool ht_pool;

#define HT_POOL_MAX 1023 /* helpers at most, besides the calling thread */

/* NULL when out of memory; no thread is started yet. */
ht_pool *ht_pool_new(int max_helpers);
/* Runs fn(arg, k) for k = 1 .. helpers on pool threads (started as
 * needed) and returns how many it runs, fewer where threads could not
 * be created. */
int ht_pool_start(ht_pool *p, int helpers, void (*fn)(void *arg, int k), void *arg);
/* Until every fn of the last start has returned. */
void ht_pool_wait(ht_pool *p);
/* Ends the threads. */
void ht_pool_free(ht_pool *p);

#endif
