/* netpbm files (PBM P4, PGM P2/P5, PPM P3/P6, PAM P7) for the halftone
 * tools; see imageio.h. */
#include "imageio_priv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const uint8_t *p;
  size_t len, pos;
} cursor;

static bool is_space(uint8_t c)
{
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* Skips white space and '#' comments (netpbm allows them between any two
 * header tokens). */
static void skip_space(cursor *c)
{
  while (c->pos < c->len) {
    if (c->p[c->pos] == '#') {
      while (c->pos < c->len && c->p[c->pos] != '\n' && c->p[c->pos] != '\r')
        c->pos++;
    } else if (is_space(c->p[c->pos])) {
      c->pos++;
    } else {
      break;
    }
  }
}

/* An unsigned decimal number, at most `max`. */
static bool read_number(cursor *c, uint64_t max, uint64_t *v)
{
  skip_space(c);
  size_t start = c->pos;
  uint64_t x = 0;
  while (c->pos < c->len && c->p[c->pos] >= '0' && c->p[c->pos] <= '9') {
    x = x * 10 + (uint64_t)(c->p[c->pos] - '0');
    if (x > max)
      return false;
    c->pos++;
  }
  if (c->pos == start)
    return false;
  *v = x;
  return true;
}

static bool read_header_number(cursor *c, const char *what, uint64_t min, uint64_t max,
                               uint64_t *v, char *err, size_t n)
{
  skip_space(c);
  size_t at = c->pos;
  if (at >= c->len)
    return hti_fail(err, n, "truncated header: the file ends before the %s", what);
  if (c->p[at] < '0' || c->p[at] > '9')
    return hti_fail(err, n, "bad header: expected the %s at byte %zu", what, at + 1);
  if (!read_number(c, max, v) || *v < min)
    return hti_fail(err, n, "bad header: the %s at byte %zu must be %llu..%llu", what, at + 1,
                (unsigned long long)min, (unsigned long long)max);
  return true;
}

static uint16_t scale16(uint32_t s, uint32_t maxval)
{
  /* Evenly spread 0..maxval over 0..65535, rounded to nearest. */
  return (uint16_t)(((uint64_t)s * 65535u + maxval / 2) / maxval);
}

/* PAM (P7) header: "KEY value" lines up to ENDHDR. Fills the size,
 * depth (channels), maxval and whether the last channel is alpha. */
static bool pam_header(cursor *c, uint64_t *w, uint64_t *h, uint64_t *maxval, int *channels, bool *alpha,
                       char *err, size_t n)
{
  uint64_t depth = 0;
  bool have_w = false, have_h = false, have_m = false;
  char tupltype[64] = "";
  for (;;) {
    skip_space(c);
    size_t at = c->pos;
    if (at >= c->len)
      return hti_fail(err, n, "truncated header: the PAM header has no ENDHDR");
    size_t k = at;
    while (k < c->len && !is_space(c->p[k]))
      k++;
    size_t kl = k - at;
    const char *key = (const char *)c->p + at;
    c->pos = k;
    if (kl == 6 && memcmp(key, "ENDHDR", 6) == 0) {
      if (c->pos >= c->len || c->p[c->pos] != '\n')
        return hti_fail(err, n, "bad header: no newline after ENDHDR at byte %zu", at + 1);
      c->pos++;
      break;
    }
    if (kl == 8 && memcmp(key, "TUPLTYPE", 8) == 0) {
      while (c->pos < c->len && (c->p[c->pos] == ' ' || c->p[c->pos] == '\t'))
        c->pos++;
      size_t v = c->pos;
      while (c->pos < c->len && c->p[c->pos] != '\n')
        c->pos++;
      snprintf(tupltype, sizeof tupltype, "%.*s", (int)(c->pos - v), (const char *)c->p + v);
      continue;
    }
    bool ok;
    if (kl == 5 && memcmp(key, "WIDTH", 5) == 0)
      ok = have_w = read_header_number(c, "width", 1, (uint64_t)HTI_MAX_SIDE, w, err, n);
    else if (kl == 6 && memcmp(key, "HEIGHT", 6) == 0)
      ok = have_h = read_header_number(c, "height", 1, (uint64_t)HTI_MAX_SIDE, h, err, n);
    else if (kl == 5 && memcmp(key, "DEPTH", 5) == 0)
      ok = read_header_number(c, "depth", 1, 4, &depth, err, n);
    else if (kl == 6 && memcmp(key, "MAXVAL", 6) == 0)
      ok = have_m = read_header_number(c, "maxval", 1, 65535, maxval, err, n);
    else
      return hti_fail(err, n, "bad header: unknown PAM header line at byte %zu", at + 1);
    if (!ok)
      return false;
  }
  if (!have_w || !have_h || !have_m || depth == 0)
    return hti_fail(err, n, "bad header: the PAM header lacks WIDTH, HEIGHT, DEPTH or MAXVAL");
  size_t tl = strlen(tupltype);
  *alpha = tl > 6 && strcmp(tupltype + tl - 6, "_ALPHA") == 0;
  *channels = (int)depth;
  if ((depth == 2 || depth == 4) != *alpha)
    return hti_fail(err, n, "PAM with depth %d and tuple type '%s' is not gray, gray+alpha, RGB or RGBA",
                (int)depth, tupltype);
  return true;
}

bool hti_pnm_parse_header(const uint8_t *data, size_t len, pnm_header *hd, char *err, size_t n)
{
  memset(hd, 0, sizeof *hd);
  cursor c = { data, len, 2 };
  char kind = (char)data[1];
  hd->kind = kind;
  hd->ascii = kind == '1' || kind == '2' || kind == '3';
  hd->bits = kind == '1' || kind == '4';
  hd->channels = (kind == '3' || kind == '6') ? 3 : 1;
  hd->maxval = 1;
  if (kind == '1')
    return hti_fail(err, n, "plain (ASCII) PBM, P1, is not supported; it is already black and white");
  if (kind == '7') {
    if (!pam_header(&c, &hd->w, &hd->h, &hd->maxval, &hd->channels, &hd->alpha, err, n))
      return false;
  } else if (!read_header_number(&c, "width", 1, (uint64_t)HTI_MAX_SIDE, &hd->w, err, n) ||
             !read_header_number(&c, "height", 1, (uint64_t)HTI_MAX_SIDE, &hd->h, err, n))
    return false;
  if (kind != '7' && !hd->bits && !read_header_number(&c, "maxval", 1, 65535, &hd->maxval, err, n))
    return false;
  if (!hd->ascii && kind != '7') {
    /* exactly one white-space byte separates the header from the data */
    if (c.pos >= len || !is_space(data[c.pos]))
      return hti_fail(err, n, "bad header: no white space after the %s at byte %zu", hd->bits ? "height" : "maxval",
                  c.pos + 1);
    c.pos++;
  }
  hd->data = c.pos;
  /* at most 2^24 * 2^24 * 4 samples: no overflow in 64 bits */
  uint64_t samples = hd->w * hd->h * (uint64_t)hd->channels;
  if (samples > SIZE_MAX / 2)
    return hti_fail(err, n, "too large: %llux%llu does not fit this machine's address space",
                (unsigned long long)hd->w, (unsigned long long)hd->h);
  hd->samples = (size_t)samples;
  return true;
}

/* Every allocation below is checked first against what the file holds
 * ("truncated", from its size alone) and the memory the process may use
 * ("too large"), so a few bytes of header cannot reserve gigabytes. */
bool hti_decode_pnm(const uint8_t *data, size_t len, hti_image *img, char *err, size_t n)
{
  pnm_header hd;
  if (!hti_pnm_parse_header(data, len, &hd, err, n))
    return false;
  uint64_t w = hd.w, h = hd.h, maxval = hd.maxval;
  int channels = hd.channels;
  size_t samples = hd.samples, row_samples = (size_t)w * (size_t)channels;
  cursor c = { data, len, hd.data };
  img->width = (int64_t)w;
  img->height = (int64_t)h;
  img->channels = channels;
  img->has_alpha = hd.alpha;

  if (hd.bits) { /* P4: expand to 8-bit gray, bit set = black */
    size_t rb = ((size_t)w + 7) / 8, need = rb * (size_t)h;
    if (len - c.pos < need)
      return hti_fail(err, n, "truncated: %llux%llu PBM needs %zu bytes of pixel data, the file has %zu",
                  (unsigned long long)w, (unsigned long long)h, need, len - c.pos);
    if (!hti_fits_memory(samples, len, w, h, err, n))
      return false;
    uint8_t *out = malloc(samples);
    if (!out)
      return hti_fail(err, n, "out of memory (%zu bytes)", samples);
    for (uint64_t y = 0; y < h; y++) {
      const uint8_t *src = data + c.pos + (size_t)y * rb;
      for (uint64_t x = 0; x < w; x++)
        out[(size_t)y * (size_t)w + x] = (src[x >> 3] >> (7 - (x & 7))) & 1 ? 0 : 255;
    }
    free(img->buf);
    img->buf = out;
    img->pixels = out;
    img->depth = 8;
    img->stride = (size_t)w;
    img->format = "PBM (P4)";
    return true;
  }

  if (hd.ascii) { /* P2/P3: parse every sample */
    /* each sample takes a digit and a separator (the last one no
     * separator): a file shorter than that is cut off */
    size_t room = len - c.pos;
    if ((uint64_t)room + 1 < 2 * (uint64_t)samples)
      return hti_fail(err, n, "truncated: %zu samples expected, the file's %zu bytes of samples hold at most %zu",
                  samples, room, (room + 1) / 2);
    bool wide = maxval != 255;
    size_t bytes = samples * (wide ? 2 : 1);
    if (!hti_fits_memory(bytes, len, w, h, err, n))
      return false;
    uint8_t *out = malloc(bytes);
    if (!out)
      return hti_fail(err, n, "out of memory (%zu samples)", samples);
    for (size_t i = 0; i < samples; i++) {
      uint64_t s;
      skip_space(&c);
      size_t at = c.pos;
      if (at >= len) {
        free(out);
        return hti_fail(err, n, "truncated: %zu samples expected, the file ends after %zu", samples, i);
      }
      bool digit = c.p[at] >= '0' && c.p[at] <= '9';
      if (!read_number(&c, 65535, &s) || s > maxval) {
        free(out);
        size_t px = (i / (size_t)channels) % (size_t)w, py = i / row_samples;
        if (!digit)
          return hti_fail(err, n, "bad sample at byte %zu (pixel %zu, %zu): not a number 0..%llu", at + 1, px, py,
                      (unsigned long long)maxval);
        size_t e = at;
        while (e < len && c.p[e] >= '0' && c.p[e] <= '9' && e - at < 20)
          e++;
        return hti_fail(err, n, "sample %.*s at byte %zu (pixel %zu, %zu) exceeds maxval %llu", (int)(e - at),
                    (const char *)c.p + at, at + 1, px, py, (unsigned long long)maxval);
      }
      if (wide)
        ((uint16_t *)(void *)out)[i] = scale16((uint32_t)s, (uint32_t)maxval);
      else
        out[i] = (uint8_t)s;
    }
    free(img->buf);
    img->buf = out;
    img->pixels = out;
    img->depth = wide ? 16 : 8;
    img->stride = row_samples * (wide ? 2 : 1);
    img->format = channels == 3 ? "PPM (P3, plain)" : "PGM (P2, plain)";
    return true;
  }

  /* P5/P6/P7 */
  const char *name = hd.kind == '7' ? "PAM" : channels == 3 ? "PPM" : "PGM";
  bool two = maxval > 255;
  size_t need = samples * (two ? 2 : 1);
  if (len - c.pos < need)
    return hti_fail(err, n, "truncated: %llux%llu %s needs %zu bytes of pixel data, the file has %zu",
                (unsigned long long)w, (unsigned long long)h, name, need,
                len - c.pos);
  const uint8_t *src = data + c.pos;
  if (maxval == 255) { /* the fast path: use the file's bytes in place */
    img->pixels = src;
    img->depth = 8;
    img->stride = row_samples;
    img->format = hd.kind == '7' ? "PAM (P7, 8-bit)" : channels == 3 ? "PPM (P6, 8-bit)" : "PGM (P5, 8-bit)";
    return true;
  }
  if (!hti_fits_memory((uint64_t)samples * 2, len, w, h, err, n))
    return false;
  uint16_t *out = malloc(samples * 2);
  if (!out)
    return hti_fail(err, n, "out of memory (%zu bytes)", samples * 2);
  uint32_t m = (uint32_t)maxval;
  for (size_t i = 0; i < samples; i++) {
    uint32_t s = two ? ((uint32_t)src[2 * i] << 8 | src[2 * i + 1]) : src[i];
    if (s > m) {
      free(out);
      return hti_fail(err, n, "sample %u at pixel (%zu, %zu) exceeds maxval %u", s,
                  (i / (size_t)channels) % (size_t)w, i / row_samples, m);
    }
    out[i] = m == 65535 ? (uint16_t)s : scale16(s, m); /* big-endian to native */
  }
  free(img->buf);
  img->buf = out;
  img->pixels = (const uint8_t *)out;
  img->depth = 16;
  img->stride = row_samples * 2;
  img->format = hd.kind == '7' ? (two ? "PAM (P7, 16-bit)" : "PAM (P7, maxval < 255)")
                : two ? (channels == 3 ? "PPM (P6, 16-bit)" : "PGM (P5, 16-bit)")
                      : (channels == 3 ? "PPM (P6, maxval < 255)" : "PGM (P5, maxval < 255)");
  return true;
}


bool hti_write_pnm(const hti_out *o, int fd, char *err, size_t n)
{
  /* 16-bit samples are rendered native-endian (hti_out) and netpbm's are
   * big-endian: swapped in a copy, in blocks, so that o stays const */
  const uint16_t probe = 1;
  uint8_t first;
  memcpy(&first, &probe, 1);
  if (o->depth != 16 || first == 0)
    return hti_write_all(fd, o->file, o->file_len, err, n);
  const size_t head = (size_t)(o->pixels - o->file), data = o->file_len - head;
  if (!hti_write_all(fd, o->file, head, err, n))
    return false;
  uint8_t block[65536];
  for (size_t at = 0; at < data; at += sizeof block) {
    const size_t len = data - at < sizeof block ? data - at : sizeof block; /* even: data and block are */
    for (size_t i = 0; i < len; i += 2) {
      block[i] = o->pixels[at + i + 1];
      block[i + 1] = o->pixels[at + i];
    }
    if (!hti_write_all(fd, block, len, err, n))
      return false;
  }
  return true;
}
