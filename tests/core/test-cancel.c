/* Cancelling through the progress callback: HT_ERR_CANCELLED, promptly,
 * no hang (an alarm turns a hang into a failure), for every CPU variant of
 * error diffusion the library lists (HT_LIST_VARIANTS), each with 1, 2, 4
 * and 64 threads (helpers that wait on a cancelled band must give up too).
 * Also: an accepting callback sees fractions that never go back and end
 * at 1. Leaks: run once under valgrind. */
#include "ht-test.h"

#include <signal.h>
#include <unistd.h>

static void on_alarm(int sig)
{
  (void)sig;
  static const char msg[] = "test-cancel: a run did not return within the time limit (hang)\n";
  if (write(2, msg, sizeof msg - 1) < 0) {
    /* nothing more to do */
  }
  _exit(1);
}

int main(void)
{
  signal(SIGALRM, on_alarm);
  alarm(50);
  const int64_t w = 1500, h = 1100;
  uint16_t *in = random_plane(w, h, 5);
  uint8_t *out = xmalloc((size_t)(w * h));
  ht_context *ctx = ht_context_new();
  if (!ctx)
    return 99;
  ht_context_set_backend(ctx, HT_BACKEND_CPU);
  ht_variant variants[TEST_MAX_VARIANTS];
  const int nv = test_variants(HT_METHOD_ERROR_DIFFUSION, HT_BACKEND_CPU, variants, TEST_MAX_VARIANTS);
  CHECK(nv > 0 && nv <= TEST_MAX_VARIANTS, "%d CPU variants of error diffusion", nv);
  static const int thread_counts[] = { 1, 2, 4, 64 };
  struct {
    ht_variant v;
    int threads;
  } runs[TEST_MAX_VARIANTS * 4];
  size_t nruns = 0;
  for (int v = 0; v < nv && v < TEST_MAX_VARIANTS; v++)
    for (int t = 0; t < 4; t++) {
      runs[nruns].v = variants[v];
      runs[nruns++].threads = thread_counts[t];
    }
  for (size_t i = 0; i < nruns; i++) {
    ht_params p;
    ht_params_init(&p);
    p.variant = runs[i].v;
    ht_context_set_threads(ctx, runs[i].threads);
    for (int at = 1; at <= 2; at++) {
      watch wt = { 0, at, 0, false };
      ht_context_set_progress(ctx, on_progress, &wt);
      ht_status s = ht_run_plane(ctx, in, (size_t)w * 2, out, (size_t)w, w, h, &p);
      if (at == 1) /* the first report comes at once: this run must stop */
        CHECK(s == HT_ERR_CANCELLED, "%s, %d threads, cancel at call %d: status \"%s\"",
              ht_variant_name(p.variant), runs[i].threads, at, ht_status_string(s));
      else /* a fast machine may finish before a second report is due */
        CHECK(s == HT_ERR_CANCELLED || (s == HT_OK && wt.calls < at), "%s, %d threads: status \"%s\"",
              ht_variant_name(p.variant), runs[i].threads, ht_status_string(s));
      if (s == HT_ERR_CANCELLED) {
        CHECK(wt.calls == at, "%s: the callback was called %d times after cancelling at %d",
              ht_variant_name(p.variant), wt.calls, at);
        CHECK(strstr(ht_context_message(ctx), "cancel") != NULL, "message \"%s\"", ht_context_message(ctx));
      }
    }
    /* an accepting callback: completes, fractions monotonic, ends at 1 */
    watch ok = { 0, 0, 0, false };
    ht_context_set_progress(ctx, on_progress, &ok);
    ht_image I = { w, h, (size_t)w * 2, 1, HT_FORMAT_U16, in }, O = { w, h, (size_t)w, 1, HT_FORMAT_U8, out };
    ht_status s = ht_run(ctx, &I, &O, &p);
    CHECK(s == HT_OK, "%s: %s", ht_variant_name(p.variant), ht_context_message(ctx));
    CHECK(ok.calls >= 1 && ok.last == 1.0, "%s: %d calls, last fraction %g", ht_variant_name(p.variant), ok.calls,
          ok.last);
    CHECK(!ok.backwards, "%s: progress went backwards or out of 0..1", ht_variant_name(p.variant));
  }
  /* the context stays usable after a cancelled run */
  ht_context_set_progress(ctx, NULL, NULL);
  ht_params p;
  ht_params_init(&p);
  ht_context_set_threads(ctx, 2);
  CHECK(ht_run_plane(ctx, in, (size_t)w * 2, out, (size_t)w, w, h, &p) == HT_OK, "run after cancel: %s",
        ht_context_message(ctx));
  ht_context_free(ctx);
  free(in);
  free(out);
  return test_finish("test-cancel");
}
