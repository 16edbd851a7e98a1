/* search-ref: the library's own result for a search method, straight
 * through ht_run, for test_search.py to hold the command line against
 * (the CLI maps its options to ht_params; this maps nothing but the
 * arguments below, one to one).
 *
 *   search-ref IN.pgm OUT.pgm ALGORITHM WINDOW SIGMA RADIUS INIT SEED SCHEDULE MAX_ROUNDS THREADS
 *
 * IN is a binary 8-bit PGM (P5, maxval 255); OUT gets the halftone as a
 * P5 PGM of 0 and 255. ALGORITHM, INIT and SCHEDULE are names of the
 * library's lists. Prints "eye error (sigma S, NxN): E" and "rounds: R"
 * as `halftone --metrics` does. Exit 0, or 1 with a message. */
#include "halftone.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what)
{
  fprintf(stderr, "search-ref: %s\n", what);
  return 1;
}

static int value(ht_list list, const char *name)
{
  const ht_choice *c = ht_choice_by_name(list, name);
  return c ? c->value : -1;
}

int main(int argc, char **argv)
{
  if (argc != 12)
    return fail("usage: IN.pgm OUT.pgm ALGORITHM WINDOW SIGMA RADIUS INIT SEED SCHEDULE MAX_ROUNDS THREADS");
  FILE *f = fopen(argv[1], "rb");
  if (!f)
    return fail("cannot open the input");
  int w = 0, h = 0, maxval = 0;
  if (fscanf(f, "P5 %d %d %d", &w, &h, &maxval) != 3 || maxval != 255 || w < 1 || h < 1 || fgetc(f) == EOF) {
    fclose(f);
    return fail("the input is not an 8-bit binary PGM");
  }
  const size_t n = (size_t)w * (size_t)h;
  uint8_t *in = malloc(n), *out = malloc(n);
  if (!in || !out || fread(in, 1, n, f) != n) {
    fclose(f);
    return fail("short input");
  }
  fclose(f);

  ht_params p;
  ht_params_init(&p);
  const int algorithm = value(HT_LIST_ALGORITHMS, argv[3]);
  if (algorithm < 0 || ht_params_set_algorithm(&p, algorithm) != HT_OK)
    return fail("unknown algorithm");
  p.window = atoi(argv[4]);
  p.eye.sigma = strtod(argv[5], NULL);
  p.eye.radius = atoi(argv[6]);
  p.init = (ht_search_init)value(HT_LIST_INITS, argv[7]);
  p.seed = strtoull(argv[8], NULL, 10);
  p.schedule = (ht_search_schedule)value(HT_LIST_SCHEDULES, argv[9]);
  p.max_rounds = atoi(argv[10]);

  ht_context *ctx = ht_context_new();
  if (!ctx)
    return fail("out of memory");
  ht_context_set_backend(ctx, HT_BACKEND_CPU);
  ht_context_set_threads(ctx, atoi(argv[11]));
  ht_image iin = { w, h, (size_t)w, 1, HT_FORMAT_U8, in };
  ht_image iout = { w, h, (size_t)w, 1, HT_FORMAT_U8, out };
  if (ht_run(ctx, &iin, &iout, &p) != HT_OK) {
    fprintf(stderr, "search-ref: %s\n", ht_context_message(ctx));
    return 1;
  }
  double e = 0;
  if (ht_compute_eye_error(in, (size_t)w, out, (size_t)w, w, h, &p.eye, &e) != HT_OK)
    return fail("eye error");
  printf("eye error (sigma %g, %dx%d): %.4f\nrounds: %" PRId64 "\n", p.eye.sigma, 2 * p.eye.radius + 1,
         2 * p.eye.radius + 1, e, ht_context_last_rounds(ctx));
  FILE *o = fopen(argv[2], "wb");
  if (!o || fprintf(o, "P5\n%d %d\n255\n", w, h) < 0 || fwrite(out, 1, n, o) != n || fclose(o) != 0)
    return fail("cannot write the output");
  ht_context_free(ctx);
  free(in);
  free(out);
  return 0;
}
