/* Needs no GPU (runs in CI): a CUDA module that cannot be loaded.
 *  - backend auto runs small images on the CPU without trying the GPU,
 *    and where it does try, falls back to the CPU with one notice and
 *    the CPU's exact output;
 *  - backend cuda fails with HT_ERR_NO_GPU and a message naming the path,
 *    and leaves the output untouched;
 *  - a GPU variant with backend cpu is refused;
 *  - the GPU variant names parse and round-trip.
 * argv[1]: a file that exists but is not a shared library. */
#include "ht-test.h"

static int notices;
static char last_notice[512];

static void on_notice(const char *msg, void *user)
{
  (void)user;
  notices++;
  snprintf(last_notice, sizeof last_notice, "%s", msg);
}

static void check_module(const char *module, const char *expect_in_msg)
{
  setenv("HT_CUDA_MODULE", module, 1);
  /* large enough (0.96 M pixels) that one CPU thread is expected to be slower than
   * a GPU that costs nothing to open */
  const int64_t w = 1200, h = 800;
  uint8_t *in = xmalloc((size_t)(w * h)), *ref = xmalloc((size_t)(w * h)), *out = xmalloc((size_t)(w * h));
  fill_random(in, (size_t)w, w, h, 1, 5);
  ht_params p;
  ht_params_init(&p);
  ht_image iin = { w, h, (size_t)w, 1, HT_FORMAT_U8, in };
  ht_image iref = { w, h, (size_t)w, 1, HT_FORMAT_U8, ref };
  ht_image iout = { w, h, (size_t)w, 1, HT_FORMAT_U8, out };

  ht_context *cpu = ht_context_new();
  ht_context_set_backend(cpu, HT_BACKEND_CPU);
  p.variant = HT_VARIANT_ED;
  CHECK(ht_run(cpu, &iin, &iref, &p) == HT_OK, "cpu run: %s", ht_context_message(cpu));
  p.variant = HT_VARIANT_AUTO;

  /* auto, where the GPU is not expected to pay (opening it is counted as
   * 300 ms, more than one thread takes): the CPU, quietly, without trying
   * the module */
  unsetenv("HT_AUTO_GPU_OPEN_MS");
  ht_context *ctx = ht_context_new();
  ht_context_set_notice(ctx, on_notice, NULL);
  ht_context_set_threads(ctx, 1);
  notices = 0;
  memset(out, 0x77, (size_t)(w * h));
  ht_status s = ht_run(ctx, &iin, &iout, &p);
  CHECK(s == HT_OK && notices == 0, "auto, opening counted: status %d, %d notices (%s)", (int)s, notices, last_notice);
  CHECK(ht_context_last_backend(ctx) == HT_BACKEND_CPU, "auto, opening counted: last backend is not the CPU");
  CHECK(memcmp(out, ref, (size_t)(w * h)) == 0, "auto, opening counted: output differs from the CPU's");
  ht_context_free(ctx);
  /* nor with 16 threads, even when opening costs nothing (the model: 16
   * threads beat the GPU at any size) */
  setenv("HT_AUTO_GPU_OPEN_MS", "0", 1);
  ctx = ht_context_new();
  ht_context_set_notice(ctx, on_notice, NULL);
  ht_context_set_threads(ctx, 16);
  s = ht_run(ctx, &iin, &iout, &p);
  CHECK(s == HT_OK && notices == 0, "auto, 16 threads: status %d, %d notices (%s)", (int)s, notices, last_notice);
  ht_context_free(ctx);

  /* auto where the GPU would pay (free to open, one thread): tries it,
   * falls back, says so once per context */
  ctx = ht_context_new();
  ht_context_set_notice(ctx, on_notice, NULL);
  ht_context_set_threads(ctx, 1);
  notices = 0;
  memset(out, 0x77, (size_t)(w * h));
  s = ht_run(ctx, &iin, &iout, &p);
  CHECK(s == HT_OK, "auto with %s: %s", module, ht_context_message(ctx));
  CHECK(notices == 1, "expected one notice, got %d", notices);
  /* the notice is in the user's words; the module's path is the detail
   * a verbose mode prints */
  CHECK(strcmp(last_notice, ht_notice_no_gpu()) == 0, "notice \"%s\" is not \"%s\"", last_notice,
        ht_notice_no_gpu());
  CHECK(strstr(ht_context_gpu_detail(ctx), expect_in_msg) != NULL, "detail \"%s\" does not name \"%s\"",
        ht_context_gpu_detail(ctx), expect_in_msg);
  CHECK(ht_context_last_backend(ctx) == HT_BACKEND_CPU, "last backend is not the CPU");
  CHECK(memcmp(out, ref, (size_t)(w * h)) == 0, "fallback output differs from the CPU's");
  s = ht_run(ctx, &iin, &iout, &p);
  CHECK(s == HT_OK && notices == 1, "second run: status %d, %d notices", (int)s, notices);
  ht_context_free(ctx);

  /* cuda: a clear error, nothing written */
  ctx = ht_context_new();
  ht_context_set_backend(ctx, HT_BACKEND_CUDA);
  memset(out, 0x77, (size_t)(w * h));
  s = ht_run(ctx, &iin, &iout, &p);
  CHECK(s == HT_ERR_NO_GPU, "backend cuda with %s: status %d (%s)", module, (int)s, ht_context_message(ctx));
  CHECK(strstr(ht_context_message(ctx), expect_in_msg) != NULL, "message \"%s\" does not name \"%s\"",
        ht_context_message(ctx), expect_in_msg);
  CHECK(strchr(ht_context_message(ctx), '\n') == NULL, "message is not one line");
  bool untouched = true;
  for (int64_t i = 0; i < w * h; i++)
    untouched = untouched && out[i] == 0x77;
  CHECK(untouched, "backend cuda wrote output although it failed");
  /* a GPU variant needs the GPU too */
  p.variant = HT_VARIANT_GPU_FAST;
  s = ht_run(ctx, &iin, &iout, &p);
  CHECK(s == HT_ERR_NO_GPU, "variant gpu-fast: status %d", (int)s);
  ht_context_free(ctx);
  ctx = ht_context_new();
  s = ht_run(ctx, &iin, &iout, &p);
  CHECK(s == HT_ERR_NO_GPU, "variant gpu-fast with backend auto: status %d (%s)", (int)s, ht_context_message(ctx));
  ht_context_free(ctx);

  ht_context_free(cpu);
  free(in);
  free(ref);
  free(out);
}

int main(int argc, char **argv)
{
  check_module("/nonexistent/libhalftone-cuda.so", "/nonexistent/libhalftone-cuda.so");
  if (argc > 1)
    check_module(argv[1], argv[1]);

  /* backend cpu refuses GPU variants */
  {
    ht_context *ctx = ht_context_new();
    ht_context_set_backend(ctx, HT_BACKEND_CPU);
    uint8_t a[4] = { 1, 2, 3, 4 }, b[4];
    ht_image i = { 2, 2, 2, 1, HT_FORMAT_U8, a }, o = { 2, 2, 2, 1, HT_FORMAT_U8, b };
    ht_params p;
    ht_params_init(&p);
    p.variant = HT_VARIANT_GPU_PB_PEC_RC;
    CHECK(ht_run(ctx, &i, &o, &p) == HT_ERR_UNSUPPORTED, "gpu variant with backend cpu accepted");
    p.variant = (ht_variant)HT_VARIANT_GPU_END;
    CHECK(ht_run(ctx, &i, &o, &p) == HT_ERR_INVALID_ARGUMENT, "variant past the end accepted");
    ht_context_free(ctx);
  }

  /* names */
  static const char *const names[] = {
    "gpu-fast", "gpu-3d-ped", "gpu-2d-ped-atomic", "gpu-2d-ped-double", "gpu-2d-pec",
    "gpu-3d-ped-perm", "gpu-2d-ped-atomic-perm", "gpu-2d-ped-double-perm", "gpu-2d-pec-perm",
    "gpu-pb-ped", "gpu-pb-ped-rc", "gpu-pb-pec", "gpu-pb-pec-rc",
  };
  for (int i = 0; i < (int)(sizeof names / sizeof names[0]); i++) {
    int v = ht_variant_from_name(names[i]);
    CHECK(v == HT_VARIANT_GPU_FIRST + i, "%s parses as %d", names[i], v);
    CHECK(v >= 0 && strcmp(ht_variant_name((ht_variant)v), names[i]) == 0, "%s does not round-trip", names[i]);
  }
  CHECK(ht_variant_from_name("gpu-nonsense") == -1, "a wrong name parsed");

  if (test_failures) {
    fprintf(stderr, "test-fallback: %d check(s) failed\n", test_failures);
    return 1;
  }
  printf("test-fallback: all checks passed\n");
  return 0;
}
