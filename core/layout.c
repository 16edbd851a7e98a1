/* What a run makes of an image, for the front ends to ask instead of
 * working it out themselves (halftone.h): the output's planes and
 * channels, the cmyk inks seen as RGB, whether a run can go in bands. */
#include "methods.h"
#include "image.h"
#include "impl.h"

#include <stdio.h>
#include <string.h>

ht_status ht_output_layout(const ht_params *p, int in_channels, bool bit1, ht_layout *l)
{
  if (!l)
    return HT_ERR_INVALID_ARGUMENT;
  memset(l, 0, sizeof *l);
  if (!p) {
    snprintf(l->why, sizeof l->why, "no parameters");
    return HT_ERR_INVALID_ARGUMENT;
  }
  const int alpha = p->alpha ? 1 : 0;
  const int colors = in_channels - alpha;
  if (colors < 1) {
    snprintf(l->why, sizeof l->why, "input has an alpha channel only");
    return HT_ERR_INVALID_ARGUMENT;
  }
  const bool cmyk = p->color == HT_COLOR_CMYK;
  if (cmyk && colors != 3) {
    snprintf(l->why, sizeof l->why, "colour mode cmyk separates RGB input; the input has %d colour channel(s)",
             colors);
    return HT_ERR_INVALID_ARGUMENT;
  }
  if (p->color == HT_COLOR_LUMA && colors == 2) {
    snprintf(l->why, sizeof l->why, "input has 2 channels: set alpha for gray+alpha");
    return HT_ERR_INVALID_ARGUMENT;
  }
  if (colors > HT_MAX_PLANES) {
    snprintf(l->why, sizeof l->why, "input has %d colour channels (1 to %d supported)", colors, HT_MAX_PLANES);
    return HT_ERR_INVALID_ARGUMENT;
  }
  const bool luma = p->color == HT_COLOR_LUMA && colors >= 3;
  l->planes = luma ? 1 : cmyk ? 4 : colors;
  l->channels = l->planes + (alpha && !bit1 ? 1 : 0);
  l->inks = cmyk;
  memcpy(l->names, l->planes == 1 ? "k" : cmyk ? "cmyk" : "rgba", (size_t)l->planes);
  return HT_OK;
}

/* Sample i of row y of `im` (U8 or U16). */
static unsigned sample(const ht_image *im, int64_t y, size_t i)
{
  const unsigned char *row = (const unsigned char *)im->data + (size_t)y * im->stride;
  return im->format == HT_FORMAT_U16 ? ((const uint16_t *)(const void *)row)[i] : row[i];
}

static void put(ht_image *im, int64_t y, size_t i, unsigned v)
{
  unsigned char *row = (unsigned char *)im->data + (size_t)y * im->stride;
  if (im->format == HT_FORMAT_U16)
    ((uint16_t *)(void *)row)[i] = (uint16_t)v;
  else
    row[i] = (unsigned char)v;
}

ht_status ht_inks_to_rgb(const ht_image *inks, ht_image *rgb)
{
  if (!inks || !rgb || (inks->format != HT_FORMAT_U8 && inks->format != HT_FORMAT_U16) ||
      rgb->format != inks->format || rgb->width != inks->width || rgb->height != inks->height ||
      (inks->channels != 4 && inks->channels != 5) || rgb->channels != inks->channels - 1)
    return HT_ERR_INVALID_ARGUMENT;
  char msg[HT_MSG_MAX];
  /* the inks are a run's output, whose channels may be 5 (with alpha) */
  if (ht_image_check(inks, "input", true, msg) != HT_OK || ht_image_check(rgb, "output", true, msg) != HT_OK ||
      ht_images_overlap(inks, rgb))
    return HT_ERR_INVALID_ARGUMENT;
  const unsigned max = inks->format == HT_FORMAT_U16 ? 65535u : 255u;
  const size_t ic = (size_t)inks->channels, oc = (size_t)rgb->channels;
  for (int64_t y = 0; y < inks->height; y++)
    for (size_t x = 0; x < (size_t)inks->width; x++) {
      const unsigned k = sample(inks, y, x * ic + 3);
      for (size_t c = 0; c < 3; c++) { /* the light the ink and the black ink leave */
        const unsigned ink = sample(inks, y, x * ic + c) + k;
        put(rgb, y, x * oc + c, ink >= max ? 0 : max - ink);
      }
      if (oc == 4)
        put(rgb, y, x * oc + 3, sample(inks, y, x * ic + 4));
    }
  return HT_OK;
}

bool ht_params_run_in_bands(const ht_params *p, ht_backend backend)
{
  if (!p || (backend != HT_BACKEND_CPU && backend != HT_BACKEND_AUTO) || p->scan != HT_SCAN_RASTER)
    return false;
  if (p->color == HT_COLOR_PLANE_DEPENDENT || p->color == HT_COLOR_CMYK)
    return false;
  const method_row *r = ht_method_row(p->method);
  if (!r || !(r->caps & HT_MCAP_BANDS))
    return false;
  if (p->variant == HT_VARIANT_AUTO)
    return true;
  const ht_impl *impl = ht_impl_of(p->variant);
  return impl && impl->backend == HT_BACKEND_CPU && (impl->caps & HT_CAP_CARRY);
}
