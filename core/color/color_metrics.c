/* Quality of a colour halftone: Bias and Grain (Zhang, Recker, Ulichney,
 * Tastl, Owens, "Plane-dependent error diffusion on a GPU", Sec. 2.2) for
 * any number of planes, and a colorant-overlap figure that also holds
 * for light tones and for any image (the paper's future work 2). The
 * definitions, and why the overlap figure is normalised as it is, are in
 * docs/color.md ("Measuring it").
 *
 * One pass over the rows; the input planes come through the same row
 * loaders as ht_run (cmyk: separated by the same integer formula), so a
 * plane's input is exactly what its error diffusion was given. */
#include "color.h"
#include "../image.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Level index of output sample x of channel c of a row (1-bit: the bit
 * set is black, level 0). */
static int32_t out_level(const ht_image *out, const uint8_t *row, int64_t x, int c, int32_t levels)
{
  const size_t i = (size_t)x * (size_t)out->channels + (size_t)c;
  const int64_t l1 = levels - 1;
  switch (out->format) {
  case HT_FORMAT_U8: return (int32_t)((2 * (int64_t)row[i] * l1 + 255) / 510);
  case HT_FORMAT_U16: return (int32_t)((2 * (int64_t)((const uint16_t *)(const void *)row)[i] * l1 + 65535) / 131070);
  case HT_FORMAT_BIT1: return (row[(size_t)x >> 3] >> (7 - (x & 7)) & 1) ? 0 : 1;
  case HT_FORMAT_F32: break; /* no output format (ht_image_check) */
  }
  return 0;
}

/* The chance that two or more of `n` colorants are present where each is
 * present on its own with chance pr[i], independently of the others. */
static double independent_overlap(const double *pr, int n)
{
  double none = 1.0, one = 0.0;
  for (int i = 0; i < n; i++) {
    one = one * (1.0 - pr[i]) + none * pr[i];
    none *= 1.0 - pr[i];
  }
  return 1.0 - none - one;
}

/* The least chance of two or more colorants at a pixel whose colorants
 * are present with chances pr[0 .. n) (docs/color.md): the smallest t with
 * sum_i min(pr_i, t) - t >= sum_i pr_i - 1, found on the piecewise-linear
 * left side between the sorted chances. 0 when the chances add up to 1
 * or less (every dot can have a pixel of its own). The left side is flat
 * where one chance is 1 and meets the right side there exactly: EPS keeps
 * the rounding of the sums from missing that. */
#define EPS 1e-12
static double least_overlap(const double *pr, int n)
{
  double p[HT_MAX_PLANES], s = 0.0;
  for (int i = 0; i < n; i++) { /* insertion sort, largest first */
    int j = i;
    for (; j > 0 && p[j - 1] < pr[i]; j--)
      p[j] = p[j - 1];
    p[j] = pr[i];
    s += pr[i];
  }
  if (s <= 1.0 + EPS)
    return 0.0;
  /* On t in [p[k], p[k-1]] exactly k chances exceed t: the left side is
   * (k - 1) t + rest_k, rest_k the sum of the n - k smaller chances. */
  double rest = 0.0;
  for (int k = n; k >= 1; k--) {
    const double lo = k < n ? p[k] : 0.0, hi = p[k - 1];
    if (k < n)
      rest += p[k];
    if ((double)(k - 1) * hi + rest >= s - 1.0 - EPS) {
      if (k == 1)
        return lo;
      const double t = (s - 1.0 - rest) / (double)(k - 1);
      return t > lo ? t : lo;
    }
  }
  return p[0]; /* not reached: at t = p[0] the left side is s - p[0] >= s - 1 */
}

ht_status ht_compute_color_metrics(const ht_image *in, const ht_image *out, const ht_params *params,
                                   ht_color_metrics *m)
{
  char msg[HT_MSG_MAX];
  if (!in || !out || !params || !m)
    return HT_ERR_INVALID_ARGUMENT;
  ht_status s;
  if ((s = ht_image_check(in, "input", false, msg)) != HT_OK ||
      (s = ht_image_check(out, "output", true, msg)) != HT_OK ||
      (in->format == HT_FORMAT_F32 && (s = ht_image_check_floats(in, msg)) != HT_OK))
    return s;
  if (in->width != out->width || in->height != out->height)
    return HT_ERR_BAD_SIZE;
  const int alpha = params->alpha ? 1 : 0, colors = in->channels - alpha;
  const bool cmyk = params->color == HT_COLOR_CMYK;
  const bool luma = params->color == HT_COLOR_LUMA && colors >= 3;
  if (colors < 1 || (int)params->color < 0 || params->color > HT_COLOR_CMYK || (cmyk && colors != 3) ||
      (params->color == HT_COLOR_LUMA && colors == 2))
    return HT_ERR_INVALID_ARGUMENT;
  const int planes = luma ? 1 : cmyk ? 4 : colors;
  if (out->channels != planes + (alpha && out->format != HT_FORMAT_BIT1 ? 1 : 0) ||
      (out->format == HT_FORMAT_BIT1 && planes != 1))
    return HT_ERR_INVALID_ARGUMENT;
  int32_t levels[HT_MAX_PLANES];
  for (int p = 0; p < planes; p++) {
    levels[p] = params->plane_levels[p] ? params->plane_levels[p] : params->levels;
    if (levels[p] < 2 || levels[p] > 256)
      return HT_ERR_INVALID_ARGUMENT;
  }
  if (params->black < 0.0 || params->black > 1.0 || params->black != params->black)
    return HT_ERR_INVALID_ARGUMENT;

  const int64_t w = in->width;
  ht_color_job cj;
  memset(&cj, 0, sizeof cj);
  cj.planes = planes;
  cj.cmyk = cmyk;
  cj.black = (int32_t)(params->black * 65536.0 + 0.5); /* as ht_run rounds it */
  for (int p = 0; p < planes; p++)
    ht_rows_init(&cj.rows[p], in, luma ? -1 : p < colors ? p : 0, out, p, levels[p], false);
  int32_t *buf = malloc((size_t)w * (size_t)(planes + 3) * sizeof *buf);
  if (!buf)
    return HT_ERR_NO_MEMORY;
  int32_t *dst[HT_MAX_PLANES], *tmp = buf + (size_t)planes * (size_t)w;
  for (int p = 0; p < planes; p++)
    dst[p] = buf + (size_t)p * (size_t)w;

  int64_t sum_in[HT_MAX_PLANES] = { 0 }, sum_out[HT_MAX_PLANES] = { 0 }, grain = 0;
  double independent = 0.0, least = 0.0;
  for (int64_t y = 0; y < in->height; y++) {
    ht_color_load(&cj, y, 0, w, dst, tmp);
    const uint8_t *orow = (const uint8_t *)out->data + (size_t)y * out->stride;
    double row_ind = 0.0, row_least = 0.0;
    for (int64_t x = 0; x < w; x++) {
      int present = 0;
      double pr[HT_MAX_PLANES];
      for (int p = 0; p < planes; p++) {
        const int32_t a = dst[p][x], q = out_level(out, orow, x, p, levels[p]);
        sum_in[p] += a;
        sum_out[p] += q;
        present += q > 0;
        /* error diffusion at tone a mixes the two levels around it, so a
         * colorant is present with chance a (L - 1), at most 1 */
        const double c = (double)a * (double)(levels[p] - 1) / HT_FX_ONE;
        pr[p] = c > 1.0 ? 1.0 : c;
      }
      grain += present >= 2;
      row_ind += independent_overlap(pr, planes);
      row_least += least_overlap(pr, planes);
    }
    independent += row_ind;
    least += row_least;
  }
  free(buf);

  const double n = (double)w * (double)in->height;
  double bias = 0.0;
  for (int p = 0; p < planes; p++)
    bias += fabs((double)sum_out[p] / (double)(levels[p] - 1) - (double)sum_in[p] / HT_FX_ONE);
  m->planes = planes;
  m->bias = bias / n;
  m->grain = (double)grain / n;
  m->overlap_independent = independent / n;
  m->overlap_least = least / n;
  const double span = m->overlap_independent - m->overlap_least;
  m->overlap = span > 1e-9 ? (m->grain - m->overlap_least) / span : NAN;
  return HT_OK;
}
