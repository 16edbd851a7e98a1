/* The eye model's table (eye.h), built the same on every machine. */
#include "shared/eye.h"

#include <string.h>

/* exp(-x) for x >= 0 from +, *, / alone: halve x until it is small,
 * sum its Taylor series, square back. Every step is a correctly rounded
 * IEEE operation, so the result does not depend on the machine's libm
 * (the eye's table and the blue-noise masks' kernel, eye.h). */
double ht_exp_neg(double x)
{
  int halvings = 0;
  while (x > 0.0625) {
    x *= 0.5; /* exact */
    halvings++;
  }
  double term = 1.0, sum = 1.0;
  for (int n = 1; n <= 12; n++) {
    term = term * -x / n;
    sum += term;
  }
  while (halvings-- > 0)
    sum *= sum;
  return sum;
}

/* The taps come in orbits under the filter's symmetries: the centre,
 * the 4 taps (±k, 0) and (0, ±k), the 4 taps (±k, ±k), and the 8 of
 * (±k, ±j), 0 < j < k. */
typedef struct {
  int dx, dy, size;
  double exact; /* the Gaussian's share in units of 1/HT_EYE_ONE */
  int32_t w;
} orbit;

static void set_orbit(ht_eye *eye, const orbit *o)
{
  const int a[8][2] = { { 1, 1 }, { -1, 1 }, { 1, -1 }, { -1, -1 } };
  for (int s = 0; s < 4; s++)
    for (int swap = 0; swap < 2; swap++) {
      const int x = a[s][0] * (swap ? o->dy : o->dx), y = a[s][1] * (swap ? o->dx : o->dy);
      eye->w[(y + eye->radius) * eye->side + x + eye->radius] = o->w;
    }
}

bool ht_eye_init(ht_eye *eye, const ht_eye_params *p)
{
  if (!(p->sigma >= HT_EYE_SIGMA_MIN && p->sigma <= HT_EYE_SIGMA_MAX) || p->radius < 1 || p->radius > HT_EYE_MAX_RADIUS)
    return false;
  memset(eye, 0, sizeof *eye);
  const int r = p->radius;
  eye->radius = r;
  eye->side = 2 * r + 1;
  orbit o[(HT_EYE_MAX_RADIUS + 1) * (HT_EYE_MAX_RADIUS + 2) / 2] = { { 0, 0, 0, 0.0, 0 } };
  int n = 0;
  double total = 0.0;
  for (int dx = 0; dx <= r; dx++)
    for (int dy = 0; dy <= dx; dy++, n++) {
      o[n].dx = dx;
      o[n].dy = dy;
      o[n].size = dx == 0 ? 1 : dy == 0 || dy == dx ? 4 : 8;
      o[n].exact = ht_exp_neg((double)(dx * dx + dy * dy) / (2.0 * p->sigma * p->sigma));
      const double all = o[n].exact * o[n].size; /* one operation a statement: no FMA */
      total += all;
    }
  /* Every orbit but the centre's rounded half up; then the largest
   * remainders move by one unit (a whole orbit at a time, so the filter
   * stays symmetric) until the centre's share of the remainder is under
   * 4 units, and the centre takes that: the sum is exactly HT_EYE_ONE
   * and the centre stays within 4 units of its exact share. */
  int64_t sum = 0;
  for (int i = 0; i < n; i++) {
    double share = o[i].exact / total;
    share = share * HT_EYE_ONE;
    o[i].exact = share;
    o[i].w = i == 0 ? 0 : (int32_t)(share + 0.5);
    sum += (int64_t)o[i].w * o[i].size;
  }
  int64_t rest = HT_EYE_ONE - sum; /* what the centre would take */
  while (rest - (int64_t)(o[0].exact + 0.5) >= 4 || rest - (int64_t)(o[0].exact + 0.5) <= -4) {
    const int step = rest > (int64_t)(o[0].exact + 0.5) ? 1 : -1;
    int best = -1;
    double best_gap = 0;
    for (int i = 1; i < n; i++) {
      const double gap = (o[i].exact - o[i].w) * step; /* how much it was rounded away from `step` */
      if (o[i].size <= (rest - (int64_t)(o[0].exact + 0.5)) * step && (best < 0 || gap > best_gap)) {
        best = i;
        best_gap = gap;
      }
    }
    if (best < 0)
      break;
    o[best].w += step;
    rest -= step * o[best].size;
  }
  o[0].w = (int32_t)rest;
  for (int i = 0; i < n; i++)
    set_orbit(eye, &o[i]);
  return true;
}

int64_t ht_eye_total_error(const ht_eye *eye, const int32_t *a, const int32_t *b, int64_t stride, int64_t w,
                           int64_t h)
{
  int64_t total = 0;
  for (int64_t y = 0; y < h; y++)
    for (int64_t x = 0; x < w; x++) {
      const int32_t e = ht_eye_error_at(eye, a, b, stride, w, h, x, y);
      total += e < 0 ? -(int64_t)e : e;
    }
  return total;
}
