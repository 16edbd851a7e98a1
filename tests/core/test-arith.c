/* The shared arithmetic headers that CPU and GPU code compute alike:
 * core/shared/rng.h (Philox4x32-10 keyed by seed, plane, x, y) and core/shared/eye.h
 * (the fixed-point Gaussian eye model). Checked against the published
 * known answers, against independent implementations written here, and
 * against golden values produced by running the code (a change of them
 * changes every search-method result, so it must be deliberate).
 *
 * usage: test-arith [rng|eye] */
#include "ht-test.h"

#include "shared/eye.h"
#include "shared/rng.h"

#include <math.h>

/* ---------------------------------------------------------------- rng */

/* Philox4x32-10 once more, written from the paper's description with the
 * whole key schedule made first and the multiplies split into 16-bit
 * halves, so that it shares no code path with core/shared/rng.h. */
static void philox_independent(const uint32_t in[4], uint32_t k0, uint32_t k1, uint32_t out[4])
{
  uint32_t keys[10][2];
  for (int r = 0; r < 10; r++) {
    keys[r][0] = k0 + (uint32_t)r * 0x9E3779B9u;
    keys[r][1] = k1 + (uint32_t)r * 0xBB67AE85u;
  }
  uint32_t x[4] = { in[0], in[1], in[2], in[3] };
  for (int r = 0; r < 10; r++) {
    /* mulhilo by long multiplication of 16-bit digits */
    uint32_t hi[2], lo[2];
    const uint32_t m[2] = { 0xD2511F53u, 0xCD9E8D57u }, a[2] = { x[0], x[2] };
    for (int i = 0; i < 2; i++) {
      uint64_t al = a[i] & 0xffff, ah = a[i] >> 16, ml = m[i] & 0xffff, mh = m[i] >> 16;
      uint64_t ll = al * ml, lh = al * mh, hl = ah * ml, hh = ah * mh;
      uint64_t mid = (ll >> 16) + (lh & 0xffff) + (hl & 0xffff);
      lo[i] = (uint32_t)((ll & 0xffff) | (mid << 16));
      hi[i] = (uint32_t)(hh + (lh >> 16) + (hl >> 16) + (mid >> 16));
    }
    const uint32_t y[4] = { hi[1] ^ x[1] ^ keys[r][0], lo[1], hi[0] ^ x[3] ^ keys[r][1], lo[0] };
    memcpy(x, y, sizeof x);
  }
  memcpy(out, x, sizeof x);
}

static void part_rng(void)
{
  /* Random123's tests/kat_vectors, the three "philox4x32 10" lines:
   * counter, key, result */
  static const uint32_t kat[3][10] = {
    { 0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8 },
    { 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x408f276d, 0x41c83b0e, 0xa20bc7c6,
      0x6d5451fd },
    { 0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, 0xd16cfe09, 0x94fdcceb, 0x5001e420,
      0x24126ea1 },
  };
  for (int i = 0; i < 3; i++) {
    uint32_t c[4] = { kat[i][0], kat[i][1], kat[i][2], kat[i][3] };
    ht_philox4x32_10(c, kat[i][4], kat[i][5]);
    CHECK(memcmp(c, &kat[i][6], sizeof c) == 0, "known answer %d: %08x %08x %08x %08x", i, c[0], c[1], c[2], c[3]);
    uint32_t ind[4];
    philox_independent(&kat[i][0], kat[i][4], kat[i][5], ind);
    CHECK(memcmp(ind, &kat[i][6], sizeof ind) == 0, "the test's own Philox fails known answer %d", i);
  }

  /* ht_rng4 is Philox of counter (x, y, plane, draw), key = the seed's
   * halves, for counters of every kind */
  uint64_t s = 12345;
  for (int i = 0; i < 100000; i++) {
    const uint64_t seed = rng_next(&s);
    const uint32_t plane = (uint32_t)(rng_next(&s) & 3), x = (uint32_t)(rng_next(&s) >> 40),
                   y = (uint32_t)(rng_next(&s) >> 40), draw = (uint32_t)(rng_next(&s) & 7);
    uint32_t got[4], want[4];
    const uint32_t ctr[4] = { x, y, plane, draw };
    ht_rng4(seed, plane, x, y, draw, got);
    philox_independent(ctr, (uint32_t)seed, (uint32_t)(seed >> 32), want);
    uint32_t first[4];
    ht_rng4(seed, plane, x, y, 0, first);
    if (memcmp(got, want, sizeof got) != 0 || ht_rng(seed, plane, x, y) != first[0]) {
      CHECK(0, "ht_rng4 differs from Philox at seed %llx (%u, %u, %u, %u)", (unsigned long long)seed, plane, x, y, draw);
      break;
    }
  }

  /* every key field matters: neighbours differ */
  const uint32_t base = ht_rng(7, 1, 100, 200);
  CHECK(ht_rng(8, 1, 100, 200) != base && ht_rng(7, 2, 100, 200) != base && ht_rng(7, 1, 101, 200) != base &&
            ht_rng(7, 1, 100, 201) != base && ht_rng(7ull << 32, 1, 100, 200) != ht_rng(0, 1, 100, 200),
        "a key field does not change the number");

  /* ht_rng_below and ht_rng_fx: the exact formulas, their ends, and a
   * fair spread over a plane (chi-square of 64 bins, 2^20 draws: the 1%
   * point of 63 degrees of freedom is 92.0; the draws are fixed, so this
   * either always passes or shows a broken generator) */
  CHECK(ht_rng_below(0, 10) == 0 && ht_rng_below(0xffffffffu, 10) == 9 && ht_rng_below(0x80000000u, 10) == 5,
        "ht_rng_below ends");
  CHECK(ht_rng_fx(0) == 0 && ht_rng_fx(0xffffffffu) == HT_FX_ONE && ht_rng_fx(0x80000000u) == 32768, "ht_rng_fx ends");
  int64_t bins[64] = { 0 };
  for (uint32_t y = 0; y < 1024; y++)
    for (uint32_t x = 0; x < 1024; x++)
      bins[ht_rng_below(ht_rng(2026, 0, x, y), 64)]++;
  double chi = 0, expect = 1048576.0 / 64;
  for (int i = 0; i < 64; i++)
    chi += ((double)bins[i] - expect) * ((double)bins[i] - expect) / expect;
  CHECK(chi < 92.0, "chi-square %.1f over 64 bins", chi);

  /* golden: the first numbers of seed 0, plane 0, produced by running
   * the code; they pin the meaning of seeds for users' saved settings */
  uint32_t fold = 0;
  for (uint32_t x = 0; x < 16; x++)
    fold = fold * 31 + ht_rng(0, 0, x, 0);
  printf("rng golden fold: %08x\n", fold);
  CHECK(fold == 0x770f6213u, "golden fold %08x", fold);
}

/* ---------------------------------------------------------------- eye */

static void part_eye(void)
{
  ht_eye eye;
  ht_eye_params p;
  /* bad parameters are refused */
  p.sigma = 0.2, p.radius = 3;
  CHECK(!ht_eye_init(&eye, &p), "sigma 0.2 accepted");
  p.sigma = NAN;
  CHECK(!ht_eye_init(&eye, &p), "sigma NaN accepted");
  p.sigma = 1, p.radius = 0;
  CHECK(!ht_eye_init(&eye, &p), "radius 0 accepted");
  p.radius = HT_EYE_MAX_RADIUS + 1;
  CHECK(!ht_eye_init(&eye, &p), "radius %d accepted", p.radius);

  /* every table sums to exactly 1, is symmetric in all eight ways, falls
   * from the centre, and is within one unit of the Gaussian computed
   * here with libm (the centre within 4.5: it takes the rounding's rest) */
  for (int r = 1; r <= HT_EYE_MAX_RADIUS; r++)
    for (double sigma = 0.25; sigma <= 4.0; sigma += 0.25) {
      p.sigma = sigma, p.radius = r;
      CHECK(ht_eye_init(&eye, &p), "sigma %g radius %d refused", sigma, r);
      int64_t sum = 0;
      double total = 0;
      for (int dy = -r; dy <= r; dy++)
        for (int dx = -r; dx <= r; dx++)
          total += exp(-(dx * dx + dy * dy) / (2 * sigma * sigma));
      for (int dy = -r; dy <= r; dy++)
        for (int dx = -r; dx <= r; dx++) {
          const int32_t w = ht_eye_weight(&eye, dx, dy);
          sum += w;
          CHECK(w >= 0, "negative weight");
          CHECK(w == ht_eye_weight(&eye, -dx, dy) && w == ht_eye_weight(&eye, dx, -dy) &&
                    w == ht_eye_weight(&eye, dy, dx),
                "sigma %g radius %d: not symmetric at (%d, %d)", sigma, r, dx, dy);
          if (dx > 0 && dy == 0)
            CHECK(w <= ht_eye_weight(&eye, dx - 1, 0), "sigma %g radius %d: rises at %d", sigma, r, dx);
          const double g = exp(-(dx * dx + dy * dy) / (2 * sigma * sigma)) / total * HT_EYE_ONE;
          if (dx || dy)
            CHECK(fabs(w - g) < 1.0, "sigma %g radius %d (%d, %d): %d against %.4f", sigma, r, dx, dy, w, g);
          else
            CHECK(fabs(w - g) < 4.5, "sigma %g radius %d: centre %d against %.4f", sigma, r, w, g);
        }
      CHECK(sum == HT_EYE_ONE, "sigma %g radius %d: sum %lld", sigma, r, (long long)sum);
    }

  /* golden: the paper's eye (sigma 1, radius 3), produced by running the
   * code; it defines every search result */
  p.sigma = 1, p.radius = 3;
  ht_eye_init(&eye, &p);
  uint32_t fold = 0;
  for (int i = 0; i < 49; i++)
    fold = fold * 31 + (uint32_t)eye.w[i];
  printf("eye sigma 1 radius 3: centre %d, axis %d %d %d, corner %d, fold %08x\n", eye.w[24], eye.w[25], eye.w[26],
         eye.w[27], eye.w[0], fold);
  CHECK(fold == 0x3ee5e008u, "golden fold %08x", fold);

  /* the total error against the paper's formulas 2-4 written here in
   * doubles (exact: every product and sum is an integer below 2^53), with
   * the border rule of eye.h: outside the image, the input of the nearest
   * pixel inside */
  uint64_t s = 99;
  for (int t = 0; t < 20; t++) {
    const int64_t w = 1 + (int64_t)(rng_next(&s) % 40), h = 1 + (int64_t)(rng_next(&s) % 40);
    int32_t *a = xmalloc((size_t)(w * h) * sizeof *a), *b = xmalloc((size_t)(w * h) * sizeof *b);
    for (int64_t i = 0; i < w * h; i++) {
      a[i] = (int32_t)(rng_next(&s) % 65536);
      b[i] = (int32_t)((rng_next(&s) & 1) * 65535);
    }
    double want = 0;
    for (int64_t y = 0; y < h; y++)
      for (int64_t x = 0; x < w; x++) {
        double r = 0; /* formula 2: the projected image, in 1/32768 units */
        for (int dy = -3; dy <= 3; dy++)
          for (int dx = -3; dx <= 3; dx++) {
            int64_t qx = x + dx, qy = y + dy;
            double v;
            if (qx >= 0 && qx < w && qy >= 0 && qy < h)
              v = b[qy * w + qx];
            else
              v = a[(qy < 0 ? 0 : qy >= h ? h - 1 : qy) * w + (qx < 0 ? 0 : qx >= w ? w - 1 : qx)];
            r += (double)ht_eye_weight(&eye, dx, dy) * v;
          }
        want += fabs((double)a[y * w + x] * HT_EYE_ONE - r); /* formulas 3 and 4 */
      }
    const int64_t got = ht_eye_total_error(&eye, a, b, w, w, h);
    CHECK((double)got == want, "%lldx%lld: total %lld, doubles say %.1f", (long long)w, (long long)h,
          (long long)got, want);
    free(a);
    free(b);
  }
  /* a flat plane reproduced by its own value has no error, borders
   * included: nothing outside darkens or lightens it */
  int32_t flat[64];
  for (int i = 0; i < 64; i++)
    flat[i] = 40000;
  CHECK(ht_eye_total_error(&eye, flat, flat, 8, 8, 8) == 0, "a flat plane against itself has an error");
  /* white reproduced by white, and one black pixel: the error is the
   * weights it reaches, times full scale */
  int32_t white[64], one[64];
  for (int i = 0; i < 64; i++)
    white[i] = one[i] = HT_FX_ONE;
  one[3 * 8 + 3] = 0;
  CHECK(ht_eye_total_error(&eye, white, one, 8, 8, 8) == (int64_t)HT_FX_ONE * HT_EYE_ONE,
        "one black pixel in white: %lld", (long long)ht_eye_total_error(&eye, white, one, 8, 8, 8));
}

int main(int argc, char **argv)
{
  const char *part = argc > 1 ? argv[1] : "rng";
  if (strcmp(part, "rng") == 0)
    part_rng();
  else if (strcmp(part, "eye") == 0)
    part_eye();
  else {
    fprintf(stderr, "unknown part %s\n", part);
    return 99;
  }
  return test_finish(part);
}
