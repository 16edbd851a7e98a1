/* ht-throughput: the machine's ceiling for the threaded wavefront, for
 * the benchmark (tools/bench/bench.py --cpu-scaling).
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
 *
 *   ht-throughput --spin THREADS SECONDS
 *
 * The same window, but each thread runs integer arithmetic that touches
 * no memory. What T such threads reach of T times one tells how much
 * busy cores slow each other by themselves (a clock that drops as more
 * cores work, cores that share a physical core, a host's other tenants),
 * apart from caches and memory.
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
  const ht_image *in; /* NULL: --spin */
  ht_image out;
  uint64_t sink;      /* --spin: the arithmetic's result, kept */
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

/* steps of --spin's arithmetic per unit of work: a few milliseconds */
#define SPIN_STEPS (1u << 22)

/* Four independent chains of multiply, add and shift, in registers: the
 * loop is bound by how fast the core issues them, which a core's clock
 * and a sibling sharing its physical core both change. */
static uint64_t spin(uint64_t seed)
{
  uint64_t a = seed | 1, b = a + 2, c = a + 4, d = a + 6;
  for (uint32_t i = 0; i < SPIN_STEPS; i++) {
    a = a * 6364136223846793005u + 1442695040888963407u;
    b = b * 3935559000370003845u + 2691343689449507681u;
    c = (c ^ (c >> 29)) * 0xbf58476d1ce4e5b9u;
    d = (d ^ (d >> 31)) * 0x94d049bb133111ebu;
  }
  return a ^ b ^ c ^ d;
}

/* one unit of work: a halftoning, or SPIN_STEPS steps of --spin */
static ht_status unit(job *j, ht_context *ctx, const ht_params *p)
{
  if (!j->in) {
    j->sink = spin(j->sink);
    return HT_OK;
  }
  ht_status st = ht_run(ctx, j->in, &j->out, p);
  if (st != HT_OK)
    snprintf(j->msg, sizeof j->msg, "%s", ht_context_message(ctx));
  return st;
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
    j->status = unit(j, ctx, &p); /* warm-up: caches, pages */
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
    j->status = unit(j, ctx, &p);
    const double t = now_s();
    if (j->status != HT_OK)
      break;
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
         "       ht-throughput --spin THREADS SECONDS\n"
         "THREADS independent single-thread halftonings of IMAGE at once, for SECONDS:\n"
         "images per second of all of them together (the machine's ceiling for the\n"
         "threaded wavefront; see tools/bench/bench.py --cpu-scaling). With --spin, each\n"
         "thread runs arithmetic that touches no memory instead: millions of steps\n"
         "per second of all of them together.");
    return 0;
  }
  if (argc != 4) {
    fprintf(stderr, "ht-throughput: usage: ht-throughput IMAGE|--spin THREADS SECONDS\n");
    return 2;
  }
  const bool spinning = strcmp(argv[1], "--spin") == 0;
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
  hti_image im = { 0 };
  if (!spinning && !hti_read(argv[1], &im, err, sizeof err)) {
    fprintf(stderr, "ht-throughput: %s: %s\n", argv[1], err);
    return 1;
  }
  /* the input as the CLI hands it to the library (see the top) */
  const bool as_is = spinning || (im.depth == 8 && im.channels == 1 && !getenv("HT_THROUGHPUT_COPY"));
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
    jobs[t] = (job){ .in = spinning ? NULL : &in, .seconds = seconds, .start = &sl, .sink = (uint64_t)t };
    if (spinning)
      continue;
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
  if (spinning) {
    uint64_t sink = 0;
    for (long t = 0; t < threads; t++)
      sink ^= jobs[t].sink;
    const double m = SPIN_STEPS / 1e6;
    printf("spin: %ld threads, %g s: %.1f M steps/s (one thread's rate %.1f .. %.1f; result %016llx)\n", threads,
           seconds, rate * m, lo * m, hi * m, (unsigned long long)sink);
  } else {
    printf("throughput: %ld threads, %lldx%lld, %g s: %.3f images/s (one thread's rate %.3f .. %.3f)\n", threads,
           (long long)im.width, (long long)im.height, seconds, rate, lo, hi);
  }
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
