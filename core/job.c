/* The utilities every algorithm uses (job.h). */
#include "job.h"

#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void ht_set_msg(char *msg, const char *fmt, ...)
{
  if (!msg)
    return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, HT_MSG_MAX, fmt, ap);
  va_end(ap);
}

static void *alloc(ht_job *job, size_t count, size_t size, bool zero)
{
  if (count && size > SIZE_MAX / count) {
    ht_set_msg(job->msg, "out of memory: %zu x %zu bytes is too large", count, size);
    return NULL;
  }
  void *p = zero ? calloc(count ? count : 1, size ? size : 1) : malloc(count && size ? count * size : 1);
  if (!p)
    ht_set_msg(job->msg, "out of memory: could not allocate %zu bytes of working memory", count * size);
  return p;
}

void *ht_alloc(ht_job *job, size_t count, size_t size) { return alloc(job, count, size, true); }

/* For buffers that are written before they are read: calloc zeroes a
 * block that malloc reuses, megabytes on the calling thread before the
 * wavefront's threads start. */
void *ht_alloc_raw(ht_job *job, size_t count, size_t size) { return alloc(job, count, size, false); }

int64_t ht_now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The cores this process may run on: those of its affinity mask where
 * the system says (so `taskset -c 0,1` means 2), else all online. */
int ht_online_cores(void)
{
#ifdef __linux__
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) >= 1)
    return CPU_COUNT(&set) > 1024 ? 1024 : CPU_COUNT(&set);
#endif
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n < 1 ? 1 : n > 1024 ? 1024 : (int)n;
}

bool ht_job_tick(ht_job *job, int64_t done, int64_t total)
{
  if (ht_job_cancelled(job))
    return false;
  if (!job->progress)
    return true;
  int64_t now = ht_now_ns();
  if (done < total && now - job->last_tick_ns < 50000000)
    return true;
  job->last_tick_ns = now;
  double f = job->base + job->span * (total > 0 ? (double)done / (double)total : 1.0);
  if (!job->progress(f, job->user)) {
    atomic_store(&job->cancelled, 1);
    return false;
  }
  return true;
}

void ht_job_carry_begin(const ht_job *job, int64_t width, int64_t height)
{
  const int D = ht_job_carry_rows(job);
  if (!job->carry_out || height >= D)
    return;
  /* carry_out row r is band row height - D + r: for r < D - height a
   * row above the band, taken from carry_in (zeros at the plane's top) */
  for (int r = 0; r < D - height; r++) {
    int32_t *dst = job->carry_out + (size_t)r * (size_t)width;
    const int32_t *src = ht_job_carry_in_row(job, width, (int)(D - height - r));
    if (src)
      memcpy(dst, src, (size_t)width * sizeof *dst);
    else
      memset(dst, 0, (size_t)width * sizeof *dst);
  }
}
