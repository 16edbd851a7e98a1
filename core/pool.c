/* Worker threads that a context keeps from one run to the next.
 *
 * The wavefront starts up to 15 helper threads per run. Creating them
 * each time costs 0.3-2 ms on the 16-vCPU GPU host, 1-6% of a 16K run
 * and more of a small one (BENCHMARKS.md, "What bounds us on 16
 * vCPUs"); a context that runs many images (a preview, a batch) pays
 * that once. Idle workers
 * sleep on a condition variable: they take no CPU between runs. */
#include "pool.h"

#include <stdbool.h>
#include <stdint.h>

#include <pthread.h>
#include <stdlib.h>

typedef struct {
  ht_pool *pool;
  int k;          /* the index fn gets: 1 .. threads */
  uint64_t seen;  /* the last generation looked at */
  pthread_t tid;
} pool_worker;

struct ht_pool {
  pthread_mutex_t lock;
  pthread_cond_t work, done;
  pool_worker *w; /* cap slots, n of them running threads */
  int n, cap;
  uint64_t gen;   /* one per ht_pool_start */
  int want;       /* workers 1 .. want - 1 take part in generation gen */
  int busy;       /* of those, still in fn */
  void (*fn)(void *arg, int k);
  void *arg;
  bool quit;
};

static void *pool_main(void *arg)
{
  pool_worker *me = arg;
  ht_pool *p = me->pool;
  pthread_mutex_lock(&p->lock);
  for (;;) {
    while (!p->quit && p->gen == me->seen)
      pthread_cond_wait(&p->work, &p->lock);
    if (p->quit)
      break;
    me->seen = p->gen;
    if (me->k < p->want) {
      void (*fn)(void *, int) = p->fn;
      void *fa = p->arg;
      pthread_mutex_unlock(&p->lock);
      fn(fa, me->k);
      pthread_mutex_lock(&p->lock);
      if (--p->busy == 0)
        pthread_cond_broadcast(&p->done);
    }
  }
  pthread_mutex_unlock(&p->lock);
  return NULL;
}

ht_pool *ht_pool_new(int cap)
{
  ht_pool *p = calloc(1, sizeof *p);
  if (!p)
    return NULL;
  p->cap = cap > 0 ? cap : 1;
  p->w = calloc((size_t)p->cap, sizeof *p->w);
  const bool lock = p->w && pthread_mutex_init(&p->lock, NULL) == 0;
  const bool work = lock && pthread_cond_init(&p->work, NULL) == 0;
  if (work && pthread_cond_init(&p->done, NULL) == 0)
    return p;
  if (work)
    pthread_cond_destroy(&p->work);
  if (lock)
    pthread_mutex_destroy(&p->lock);
  free(p->w);
  free(p);
  return NULL;
}

int ht_pool_start(ht_pool *p, int helpers, void (*fn)(void *arg, int k), void *arg)
{
  if (helpers > p->cap)
    helpers = p->cap;
  pthread_mutex_lock(&p->lock);
  /* more threads where this run wants more than ran before; where one
   * cannot be created, the run goes on with those there are */
  while (p->n < helpers) {
    pool_worker *w = &p->w[p->n];
    w->pool = p;
    w->k = p->n + 1;
    w->seen = p->gen;
    if (pthread_create(&w->tid, NULL, pool_main, w) != 0)
      break;
    p->n++;
  }
  if (helpers > p->n)
    helpers = p->n;
  p->want = helpers + 1;
  p->busy = helpers;
  p->fn = fn;
  p->arg = arg;
  p->gen++;
  pthread_cond_broadcast(&p->work);
  pthread_mutex_unlock(&p->lock);
  return helpers;
}

void ht_pool_wait(ht_pool *p)
{
  pthread_mutex_lock(&p->lock);
  while (p->busy > 0)
    pthread_cond_wait(&p->done, &p->lock);
  pthread_mutex_unlock(&p->lock);
}

void ht_pool_free(ht_pool *p)
{
  if (!p)
    return;
  pthread_mutex_lock(&p->lock);
  p->quit = true;
  pthread_cond_broadcast(&p->work);
  pthread_mutex_unlock(&p->lock);
  for (int t = 0; t < p->n; t++)
    pthread_join(p->w[t].tid, NULL);
  pthread_cond_destroy(&p->done);
  pthread_cond_destroy(&p->work);
  pthread_mutex_destroy(&p->lock);
  free(p->w);
  free(p);
}
