/* ht-throughput: the machine's ceiling for the threaded wavefront, for
 * the benchmark (tools/bench.py --cpu-scaling).
 *
 *   ht-throughput IMAGE THREADS SECONDS
 *
 * THREADS threads of one process halftone IMAGE at the same time, each
 * on its own (Floyd-Steinberg, one thread per run, 1-bit output into its
 * own buffer): work that needs no communication at all. After one
 * warm-up run each, they start together and run for SECONDS; a thread's
 * rate is the runs it finished in the window over the time it took for
 * them, and the sum of the rates is printed as images per second. Every
 * thread is busy for the whole window, so the figure is what the
 * machine gives T busy cores at once: on a virtual machine whose cores
 * share physical cores, or a host with other tenants, that is less than
 * T times one core alone. (Counting each of T separate processes at its
 * best run overstates it: the last processes to finish run with the
 * machine half idle.)
 *
 * The threads read the input as `halftone` does: an 8-bit gray PGM as
 * the mapped file itself, so that the ceiling and the CLI's wavefront
 * compare like for like. (HT_THROUGHPUT_COPY=1 gives them a private
 * copy instead; in two rounds on one instance of the 16-vCPU GPU host,
 * 16 threads did 31.8 and 37.5 images/s on the copy against 29.0 and
 * 31.8 on the mapped file.)
 */
#include "halftone.h"
#include "imageio.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* the start line: workers check in after their warm-up, main starts the
 * window once all did (or calls the run off) */
typedef struct {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  long ready;
  int go; /* 1: start, -1: called off */
  double t0;
} start_line;

typedef struct {
  const ht_image *in;
  ht_image out;
  double seconds;
  start_line *start;
  int runs;     /* runs finished inside the window                   */
  double used;  /* seconds from the window start to the last of them */
  ht_status status;
  char msg[256];
} job;

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *worker(void *arg)
{
  job *j = arg;
  ht_context *ctx = ht_context_new();
  ht_params p;
  ht_params_init(&p);
  p.variant = HT_VARIANT_WAVEFRONT;
  j->status = HT_ERR_NO_MEMORY;
  snprintf(j->msg, sizeof j->msg, "out of memory for a halftone context");
  if (ctx) {
    ht_context_set_backend(ctx, HT_BACKEND_CPU);
    ht_context_set_threads(ctx, 1);
    j->status = ht_run(ctx, j->in, &j->out, &p); /* warm-up: caches, pages */
    if (j->status != HT_OK)
      snprintf(j->msg, sizeof j->msg, "%s", ht_context_message(ctx));
  }
  /* check in, failed or not, and wait for the window */
  start_line *sl = j->start;
  pthread_mutex_lock(&sl->lock);
  sl->ready++;
  pthread_cond_broadcast(&sl->cond);
  while (sl->go == 0)
    pthread_cond_wait(&sl->cond, &sl->lock);
  const int go = sl->go;
  const double t0 = sl->t0;
  pthread_mutex_unlock(&sl->lock);
  while (go > 0 && j->status == HT_OK) {
    j->status = ht_run(ctx, j->in, &j->out, &p);
    const double t = now_s();
    if (j->status != HT_OK) {
      snprintf(j->msg, sizeof j->msg, "%s", ht_context_message(ctx));
      break;
    }
    if (t - t0 > j->seconds)
      break; /* this run ended after the window */
    j->runs++;
    j->used = t - t0;
  }
  ht_context_free(ctx);
  return NULL;
}

int main(int argc, char **argv)
{
  if (argc == 2 && strcmp(argv[1], "--help") == 0) {
    puts("Usage: ht-throughput IMAGE THREADS SECONDS\n"
         "THREADS independent single-thread halftonings of IMAGE at once, for SECONDS:\n"
         "images per second of all of them together (the machine's ceiling for the\n"
         "threaded wavefront; see tools/bench.py --cpu-scaling).");
    return 0;
  }
  if (argc != 4) {
    fprintf(stderr, "ht-throughput: usage: ht-throughput IMAGE THREADS SECONDS\n");
    return 2;
  }
  char *end;
  errno = 0;
  long threads = strtol(argv[2], &end, 10);
  if (errno || *end || threads < 1 || threads > 1024) {
    fprintf(stderr, "ht-throughput: THREADS must be 1..1024, not '%s'\n", argv[2]);
    return 2;
  }
  errno = 0;
  double seconds = strtod(argv[3], &end);
  if (errno || *end || !(seconds > 0 && seconds <= 3600)) {
    fprintf(stderr, "ht-throughput: SECONDS must be a number in (0, 3600], not '%s'\n", argv[3]);
    return 2;
  }
  char err[512];
  hti_image im;
  if (!hti_read(argv[1], &im, err, sizeof err)) {
    fprintf(stderr, "ht-throughput: %s: %s\n", argv[1], err);
    return 1;
  }
  /* the input as the CLI hands it to the library (see the top) */
  const bool as_is = im.depth == 8 && im.channels == 1 && !getenv("HT_THROUGHPUT_COPY");
  uint8_t *gray = as_is ? NULL : hti_gray8(&im, -1);
  if (!as_is && !gray) {
    fprintf(stderr, "ht-throughput: out of memory\n");
    hti_release(&im);
    return 1;
  }
  const ht_image in = { im.width, im.height, as_is ? im.stride : (size_t)im.width, 1, HT_FORMAT_U8,
                        as_is ? (void *)(uintptr_t)im.pixels : gray };
  const size_t out_stride = ht_format_row_bytes(HT_FORMAT_BIT1, im.width, 1);
  int rc = 1;
  job *jobs = calloc((size_t)threads, sizeof *jobs);
  pthread_t *tid = calloc((size_t)threads, sizeof *tid);
  start_line sl = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0 };
  long made = 0;
  if (!jobs || !tid) {
    fprintf(stderr, "ht-throughput: out of memory\n");
    goto out;
  }
  for (long t = 0; t < threads; t++) {
    jobs[t] = (job){ .in = &in, .seconds = seconds, .start = &sl };
    jobs[t].out = (ht_image){ im.width, im.height, out_stride, 1, HT_FORMAT_BIT1,
                              malloc(out_stride * (size_t)im.height) };
    if (!jobs[t].out.data) {
      fprintf(stderr, "ht-throughput: out of memory for %ld output images\n", threads);
      goto out;
    }
  }
  for (; made < threads; made++)
    if (pthread_create(&tid[made], NULL, worker, &jobs[made]) != 0) {
      fprintf(stderr, "ht-throughput: could not start thread %ld of %ld\n", made + 1, threads);
      break;
    }
  pthread_mutex_lock(&sl.lock);
  while (sl.ready < made)
    pthread_cond_wait(&sl.cond, &sl.lock);
  sl.t0 = now_s();
  sl.go = made == threads ? 1 : -1;
  pthread_cond_broadcast(&sl.cond);
  pthread_mutex_unlock(&sl.lock);
  for (long t = 0; t < made; t++)
    pthread_join(tid[t], NULL);
  if (made < threads)
    goto out;
  double rate = 0, lo = 0, hi = 0;
  for (long t = 0; t < threads; t++) {
    if (jobs[t].status != HT_OK) {
      fprintf(stderr, "ht-throughput: %s\n", jobs[t].msg);
      goto out;
    }
    if (jobs[t].runs == 0) {
      fprintf(stderr, "ht-throughput: thread %ld finished no run in %g s; give more SECONDS\n", t + 1, seconds);
      goto out;
    }
    const double r = jobs[t].runs / jobs[t].used;
    rate += r;
    lo = t == 0 || r < lo ? r : lo;
    hi = t == 0 || r > hi ? r : hi;
  }
  printf("throughput: %ld threads, %lldx%lld, %g s: %.3f images/s (one thread's rate %.3f .. %.3f)\n", threads,
         (long long)im.width, (long long)im.height, seconds, rate, lo, hi);
  rc = 0;
out:
  if (jobs)
    for (long t = 0; t < threads; t++)
      free(jobs[t].out.data);
  free(jobs);
  free(tid);
  free(gray);
  hti_release(&im);
  return rc;
}
