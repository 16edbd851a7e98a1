/* Image files for the halftone tools; see imageio.h. */
#include "imageio.h"

#include "ht-config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#if HT_HAVE_PNG
#include <png.h>
#include <setjmp.h>
#endif

/* Same bounds as libhalftone (HT_MAX_SIDE): larger images are refused
 * here already, before any allocation is sized from the header. */
#define HTI_MAX_SIDE ((int64_t)1 << 24)

static bool fail(char *err, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool fail(char *err, size_t n, const char *fmt, ...)
{
  if (err && n) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, n, fmt, ap);
    va_end(ap);
  }
  return false;
}

/* a * b (+ c) in size_t, false on overflow. */
static bool mul_size(size_t a, size_t b, size_t *r)
{
  if (a && b > SIZE_MAX / a)
    return false;
  *r = a * b;
  return true;
}

void hti_release(hti_image *img)
{
  if (!img)
    return;
  if (img->map)
    munmap(img->map, img->map_len);
  free(img->buf);
  memset(img, 0, sizeof *img);
}

/* ------------------------------------------------------------ file in */

/* The bytes of memory a decoded image may take: the machine's memory,
 * or the process's address-space or data limit where that is lower. A
 * header that declares more is refused with that reason rather than with
 * an allocation's "out of memory" (or worse, after swapping for minutes). */
static uint64_t memory_limit(void)
{
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  uint64_t m = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : UINT64_MAX;
  static const int limits[] = { RLIMIT_AS, RLIMIT_DATA };
  for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++) {
    struct rlimit rl;
    if (getrlimit(limits[i], &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && (uint64_t)rl.rlim_cur < m)
      m = (uint64_t)rl.rlim_cur;
  }
  return m;
}

/* "123 MiB" or "4.5 GiB" */
static const char *bytes_text(char *buf, size_t size, uint64_t bytes)
{
  if (bytes < ((uint64_t)1 << 30))
    snprintf(buf, size, "%.0f MiB", (double)bytes / 1048576.0);
  else
    snprintf(buf, size, "%.1f GiB", (double)bytes / 1073741824.0);
  return buf;
}

static bool fits_memory(uint64_t bytes, uint64_t w, uint64_t h, char *err, size_t n)
{
  uint64_t limit = memory_limit();
  if (bytes <= limit)
    return true;
  char a[32], b[32];
  return fail(err, n, "too large: %llux%llu needs %s, more than the %s of memory this process may use",
              (unsigned long long)w, (unsigned long long)h, bytes_text(a, sizeof a, bytes),
              bytes_text(b, sizeof b, limit));
}

/* A stream (pipe, device, or a file that cannot be mapped), buffered. */
typedef struct {
  int fd;
  uint8_t *buf;
  size_t used, cap;
  bool eof;
} stream;

/* Reads until `want` bytes are buffered or the input ends, never more
 * than `limit` bytes in all. */
static bool stream_fill(stream *s, size_t want, size_t limit, char *err, size_t n)
{
  if (want > limit)
    want = limit;
  while (s->used < want && !s->eof) {
    if (s->used == s->cap) {
      size_t cap = s->cap < (1 << 16) ? (1 << 16) : s->cap > SIZE_MAX / 2 ? SIZE_MAX : s->cap * 2;
      if (cap < want)
        cap = want;
      if (cap > limit)
        cap = limit;
      uint8_t *b = realloc(s->buf, cap);
      if (!b)
        return fail(err, n, "out of memory reading the file (%zu bytes)", cap);
      s->buf = b;
      s->cap = cap;
    }
    ssize_t r = read(s->fd, s->buf + s->used, s->cap - s->used);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0)
      return fail(err, n, "cannot read: %s", strerror(errno));
    if (r == 0)
      s->eof = true;
    s->used += (size_t)r;
  }
  return true;
}

static bool pnm_signature(const uint8_t *p, size_t len) { return len >= 2 && p[0] == 'P' && p[1] >= '1' && p[1] <= '7'; }

static const uint8_t png_sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
static bool png_signature(const uint8_t *p, size_t len) { return len >= 8 && memcmp(p, png_sig, 8) == 0; }

static const char unknown_signature[] = "not a PGM, PPM, PBM, PAM or PNG file (unknown signature)";

/* A netpbm header, as far as the bytes go. */
typedef struct {
  char kind;                 /* '1'..'7'                                     */
  bool ascii, bits;          /* P2/P3 plain; P4 packed bits                  */
  uint64_t w, h, maxval;
  int channels;
  bool alpha;
  size_t data;               /* where the samples start                      */
  size_t samples;            /* w * h * channels                             */
} pnm_header;

static bool pnm_parse_header(const uint8_t *data, size_t len, pnm_header *hd, char *err, size_t n);

static uint32_t be32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }

/* The bytes a PNG's pixels take in the file before compression (rows of
 * one filter byte and the packed samples, as without interlacing); 0 when
 * the header is not one to trust (libpng then says why). */
static uint64_t png_raw_bytes(uint64_t w, uint64_t h, int bit_depth, int color_type)
{
  static const int channels[7] = { 1, 0, 3, 1, 2, 0, 4 };
  if (w == 0 || h == 0 || w > (uint64_t)HTI_MAX_SIDE || h > (uint64_t)HTI_MAX_SIDE || color_type < 0 ||
      color_type > 6 || channels[color_type] == 0 || bit_depth < 1 || bit_depth > 16)
    return 0;
  return h * ((w * (uint64_t)channels[color_type] * (uint64_t)bit_depth + 7) / 8 + 1);
}

/* Reads a stream as far as its format says it goes, so that an endless
 * one (/dev/zero, `yes |`, a stuck producer) is refused or cut off rather
 * than read until the memory runs out: the first bytes must be a known
 * signature; a binary netpbm file ends where its header says; a plain one
 * has at most 16 bytes a sample (plus 1 MiB); a PNG ends at its IEND
 * chunk, within a bound of its raw pixel size. */
static bool load_stream(int fd, hti_image *img, const uint8_t **data, size_t *len, size_t limit, char *err,
                        size_t n)
{
  stream s = { fd, NULL, 0, 0, false };
  bool ok = stream_fill(&s, 8, limit, err, n);
  if (ok && s.used == 0)
    ok = fail(err, n, "empty file");
  else if (ok && pnm_signature(s.buf, s.used)) {
    /* the header, read in growing pieces until it parses or 1 MiB of it
     * does not */
    pnm_header hd;
    char scratch[8];
    size_t want = 4096;
    bool parsed;
    while (!(parsed = pnm_parse_header(s.buf, s.used, &hd, scratch, sizeof scratch)) && ok && !s.eof &&
           s.used < (1 << 20)) {
      ok = stream_fill(&s, want, limit, err, n);
      want *= 2;
    }
    if (ok && parsed) {
      uint64_t end; /* where the data ends, at the latest */
      if (hd.bits)
        end = hd.data + (hd.w + 7) / 8 * hd.h;
      else if (!hd.ascii)
        end = hd.data + (uint64_t)hd.samples * (hd.maxval > 255 ? 2 : 1);
      else
        end = hd.data + (uint64_t)hd.samples * 16 + (1 << 20);
      /* the buffer holds the samples, binary or plain */
      if (!fits_memory(hd.ascii ? (uint64_t)hd.samples * 2 : end, hd.w, hd.h, err, n))
        ok = false;
      else
        ok = stream_fill(&s, end < limit ? (size_t)end : limit, end < limit ? (size_t)end : limit, err, n);
    }
  } else if (ok && png_signature(s.buf, s.used)) {
    /* IHDR first: its size bounds the rest; then chunk by chunk to IEND */
    ok = stream_fill(&s, 8 + 8 + 13, limit, err, n);
    uint64_t raw = 0;
    if (ok && s.used >= 8 + 8 + 13 && memcmp(s.buf + 12, "IHDR", 4) == 0)
      raw = png_raw_bytes(be32(s.buf + 16), be32(s.buf + 20), s.buf[24], s.buf[25]);
    /* compressed data can be larger than the raw by a little (stored
     * blocks, small IDAT chunks); ancillary chunks (ICC profile, Exif,
     * text) get 16 MiB */
    uint64_t bound = raw + raw / 4 + (16 << 20);
    for (size_t pos = 8; ok && raw;) {
      ok = stream_fill(&s, pos + 8, limit, err, n);
      if (!ok || s.used < pos + 8)
        break; /* truncated: the decoder says so */
      uint64_t next = (uint64_t)pos + 12 + be32(s.buf + pos);
      if (next > bound || next > limit) {
        ok = fail(err, n, "a %llux%llu PNG goes on for more than %llu bytes without its end (IEND)",
                  (unsigned long long)be32(s.buf + 16), (unsigned long long)be32(s.buf + 20),
                  (unsigned long long)(bound < limit ? bound : limit));
        break;
      }
      if (memcmp(s.buf + pos + 4, "IEND", 4) == 0) {
        ok = stream_fill(&s, (size_t)next, (size_t)next, err, n);
        break;
      }
      pos = (size_t)next;
    }
  } else if (ok) {
    ok = fail(err, n, "%s", unknown_signature);
  }
  close(fd);
  if (!ok) {
    free(s.buf);
    return false;
  }
  img->buf = s.buf; /* the decoder may replace it; freed by hti_release */
  *data = s.buf;
  *len = s.used;
  return true;
}

/* Maps a regular file; reads anything else (a pipe, a device) as a
 * bounded stream. */
static bool load_file(const char *path, hti_image *img, const uint8_t **data, size_t *len,
                      char *err, size_t n)
{
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return fail(err, n, "cannot open: %s", strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int e = errno;
    close(fd);
    return fail(err, n, "cannot read: %s", strerror(e));
  }
  if (S_ISDIR(st.st_mode)) {
    close(fd);
    return fail(err, n, "is a folder, not an image file");
  }
  size_t limit = SIZE_MAX;
  if (S_ISREG(st.st_mode)) {
    if (st.st_size == 0) {
      close(fd);
      return fail(err, n, "empty file");
    }
    /* MAP_POPULATE: one pass of read-ahead instead of a page fault per
     * 4 KiB; the file is normally in the page cache. */
    void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    if (m != MAP_FAILED) {
      close(fd);
      img->map = m;
      img->map_len = (size_t)st.st_size;
      *data = m;
      *len = (size_t)st.st_size;
      return true;
    }
    limit = (size_t)st.st_size; /* a file system without mmap: read what the file has */
  }
  return load_stream(fd, img, data, len, limit, err, n);
}

/* ---------------------------------------------------------------- PNM */

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
    return fail(err, n, "truncated header: the file ends before the %s", what);
  if (c->p[at] < '0' || c->p[at] > '9')
    return fail(err, n, "bad header: expected the %s at byte %zu", what, at + 1);
  if (!read_number(c, max, v) || *v < min)
    return fail(err, n, "bad header: the %s at byte %zu must be %llu..%llu", what, at + 1,
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
      return fail(err, n, "truncated header: the PAM header has no ENDHDR");
    size_t k = at;
    while (k < c->len && !is_space(c->p[k]))
      k++;
    size_t kl = k - at;
    const char *key = (const char *)c->p + at;
    c->pos = k;
    if (kl == 6 && memcmp(key, "ENDHDR", 6) == 0) {
      if (c->pos >= c->len || c->p[c->pos] != '\n')
        return fail(err, n, "bad header: no newline after ENDHDR at byte %zu", at + 1);
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
      return fail(err, n, "bad header: unknown PAM header line at byte %zu", at + 1);
    if (!ok)
      return false;
  }
  if (!have_w || !have_h || !have_m || depth == 0)
    return fail(err, n, "bad header: the PAM header lacks WIDTH, HEIGHT, DEPTH or MAXVAL");
  size_t tl = strlen(tupltype);
  *alpha = tl > 6 && strcmp(tupltype + tl - 6, "_ALPHA") == 0;
  *channels = (int)depth;
  if ((depth == 2 || depth == 4) != *alpha)
    return fail(err, n, "PAM with depth %d and tuple type '%s' is not gray, gray+alpha, RGB or RGBA",
                (int)depth, tupltype);
  return true;
}

static bool pnm_parse_header(const uint8_t *data, size_t len, pnm_header *hd, char *err, size_t n)
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
    return fail(err, n, "plain (ASCII) PBM, P1, is not supported; it is already black and white");
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
      return fail(err, n, "bad header: no white space after the %s at byte %zu", hd->bits ? "height" : "maxval",
                  c.pos + 1);
    c.pos++;
  }
  hd->data = c.pos;
  /* at most 2^24 * 2^24 * 4 samples: no overflow in 64 bits */
  uint64_t samples = hd->w * hd->h * (uint64_t)hd->channels;
  if (samples > SIZE_MAX / 2)
    return fail(err, n, "too large: %llux%llu does not fit this machine's address space",
                (unsigned long long)hd->w, (unsigned long long)hd->h);
  hd->samples = (size_t)samples;
  return true;
}

/* Every allocation below is checked first against what the file holds
 * ("truncated", from its size alone) and the memory the process may use
 * ("too large"), so a few bytes of header cannot reserve gigabytes. */
static bool decode_pnm(const uint8_t *data, size_t len, hti_image *img, char *err, size_t n)
{
  pnm_header hd;
  if (!pnm_parse_header(data, len, &hd, err, n))
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
      return fail(err, n, "truncated: %llux%llu PBM needs %zu bytes of pixel data, the file has %zu",
                  (unsigned long long)w, (unsigned long long)h, need, len - c.pos);
    if (!fits_memory(samples, w, h, err, n))
      return false;
    uint8_t *out = malloc(samples);
    if (!out)
      return fail(err, n, "out of memory (%zu bytes)", samples);
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
      return fail(err, n, "truncated: %zu samples expected, the file's %zu bytes of samples hold at most %zu",
                  samples, room, (room + 1) / 2);
    bool wide = maxval != 255;
    size_t bytes = samples * (wide ? 2 : 1);
    if (!fits_memory(bytes, w, h, err, n))
      return false;
    uint8_t *out = malloc(bytes);
    if (!out)
      return fail(err, n, "out of memory (%zu samples)", samples);
    for (size_t i = 0; i < samples; i++) {
      uint64_t s;
      skip_space(&c);
      size_t at = c.pos;
      if (at >= len) {
        free(out);
        return fail(err, n, "truncated: %zu samples expected, the file ends after %zu", samples, i);
      }
      bool digit = c.p[at] >= '0' && c.p[at] <= '9';
      if (!read_number(&c, 65535, &s) || s > maxval) {
        free(out);
        size_t px = (i / (size_t)channels) % (size_t)w, py = i / row_samples;
        if (!digit)
          return fail(err, n, "bad sample at byte %zu (pixel %zu, %zu): not a number 0..%llu", at + 1, px, py,
                      (unsigned long long)maxval);
        size_t e = at;
        while (e < len && c.p[e] >= '0' && c.p[e] <= '9' && e - at < 20)
          e++;
        return fail(err, n, "sample %.*s at byte %zu (pixel %zu, %zu) exceeds maxval %llu", (int)(e - at),
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
    return fail(err, n, "truncated: %llux%llu %s needs %zu bytes of pixel data, the file has %zu",
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
  if (!fits_memory((uint64_t)samples * 2, w, h, err, n))
    return false;
  uint16_t *out = malloc(samples * 2);
  if (!out)
    return fail(err, n, "out of memory (%zu bytes)", samples * 2);
  uint32_t m = (uint32_t)maxval;
  for (size_t i = 0; i < samples; i++) {
    uint32_t s = two ? ((uint32_t)src[2 * i] << 8 | src[2 * i + 1]) : src[i];
    if (s > m) {
      free(out);
      return fail(err, n, "sample %u at pixel (%zu, %zu) exceeds maxval %u", s,
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

/* ---------------------------------------------------------------- PNG */

bool hti_have_png(void) { return HT_HAVE_PNG; }

#if HT_HAVE_PNG
static bool host_is_little_endian(void)
{
  const uint16_t one = 1;
  uint8_t first;
  memcpy(&first, &one, 1);
  return first == 1;
}

typedef struct {
  jmp_buf jmp;
  char *err;
  size_t err_size;
  const uint8_t *data;
  size_t len, pos;
  uint8_t *out;      /* decoded pixels  */
  png_bytep *rows;   /* row pointers into out */
} png_io;

static void png_fail(png_structp png, png_const_charp msg)
{
  png_io *io = png_get_error_ptr(png);
  fail(io->err, io->err_size, "PNG: %s", msg);
  longjmp(io->jmp, 1);
}

static void png_warn(png_structp png, png_const_charp msg) { (void)png; (void)msg; }

static void png_read_mem(png_structp png, png_bytep out, size_t count)
{
  png_io *io = png_get_io_ptr(png);
  if (io->len - io->pos < count)
    png_error(png, "truncated file");
  memcpy(out, io->data + io->pos, count);
  io->pos += count;
}

static bool decode_png(const uint8_t *data, size_t len, hti_image *img, char *err, size_t n)
{
  /* On the heap: what changes between setjmp and a longjmp must not live
   * in this function's automatic variables. */
  png_io *io = calloc(1, sizeof *io);
  if (!io)
    return fail(err, n, "out of memory");
  io->err = err;
  io->err_size = n;
  io->data = data;
  io->len = len;
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, io, png_fail, png_warn);
  png_infop info = png ? png_create_info_struct(png) : NULL;
  if (!info) {
    png_destroy_read_struct(&png, NULL, NULL);
    free(io);
    return fail(err, n, "out of memory");
  }
  if (setjmp(io->jmp)) {
    free(io->rows);
    free(io->out);
    png_destroy_read_struct(&png, &info, NULL);
    free(io);
    return false;
  }
  png_set_read_fn(png, io, png_read_mem);
  /* libpng's own bounds: the sides the library takes (its default stops
   * at 10^6), and what one ancillary chunk may allocate */
  png_set_user_limits(png, (png_uint_32)HTI_MAX_SIDE, (png_uint_32)HTI_MAX_SIDE);
  png_set_chunk_malloc_max(png, 8 << 20);
  png_read_info(png, info);
  png_uint_32 w = png_get_image_width(png, info), h = png_get_image_height(png, info);
  if ((int64_t)w > HTI_MAX_SIDE || (int64_t)h > HTI_MAX_SIDE)
    png_error(png, "image is too large");
  int ct = png_get_color_type(png, info), bd = png_get_bit_depth(png, info);
  /* Deflate packs at most 1032 bytes into one (runs of 258 bytes in two
   * bits), so what is left of the file bounds the pixels it can hold: a
   * header that declares more is cut off, said before any allocation. */
  uint64_t raw = png_raw_bytes(w, h, bd, ct), left = len - io->pos;
  if (raw / 1032 > left + 64) {
    fail(err, n, "truncated: a %lux%lu PNG needs at least %llu bytes of compressed pixel data, the file has %llu",
         (unsigned long)w, (unsigned long)h, (unsigned long long)(raw / 1032), (unsigned long long)left);
    longjmp(io->jmp, 1);
  }
  /* Stored values as they are (no gamma conversion): the halftone
   * reproduces the file's tones, as for netpbm input. */
  if (ct == PNG_COLOR_TYPE_PALETTE)
    png_set_palette_to_rgb(png);
  if (ct == PNG_COLOR_TYPE_GRAY && bd < 8)
    png_set_expand_gray_1_2_4_to_8(png);
  if (png_get_valid(png, info, PNG_INFO_tRNS))
    png_set_tRNS_to_alpha(png);
  if (bd == 16 && host_is_little_endian())
    png_set_swap(png);
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  int channels = png_get_channels(png, info), depth = png_get_bit_depth(png, info);
  ct = png_get_color_type(png, info);
  size_t rb = png_get_rowbytes(png, info), total;
  if (!mul_size(rb, h, &total))
    png_error(png, "image is too large");
  if (!fits_memory((uint64_t)total + (uint64_t)h * sizeof *io->rows, w, h, err, n))
    longjmp(io->jmp, 1);
  io->out = malloc(total ? total : 1);
  io->rows = malloc((size_t)h * sizeof *io->rows);
  if (!io->out || !io->rows)
    png_error(png, "out of memory");
  for (png_uint_32 y = 0; y < h; y++)
    io->rows[y] = io->out + (size_t)y * rb;
  png_read_image(png, io->rows);
  png_read_end(png, NULL);
  png_destroy_read_struct(&png, &info, NULL);

  free(img->buf);
  img->buf = io->out;
  img->pixels = io->out;
  img->width = w;
  img->height = h;
  img->channels = channels;
  img->has_alpha = (ct & PNG_COLOR_MASK_ALPHA) != 0;
  img->depth = depth;
  img->stride = rb;
  static const char *const names[2][4] = {
    { "PNG (gray, 8-bit)", "PNG (gray+alpha, 8-bit)", "PNG (RGB, 8-bit)", "PNG (RGBA, 8-bit)" },
    { "PNG (gray, 16-bit)", "PNG (gray+alpha, 16-bit)", "PNG (RGB, 16-bit)", "PNG (RGBA, 16-bit)" },
  };
  img->format = names[depth == 16][channels - 1];
  free(io->rows);
  free(io);
  return true;
}
#endif

bool hti_read(const char *path, hti_image *img, char *err, size_t n)
{
  memset(img, 0, sizeof *img);
  const uint8_t *data = NULL;
  size_t len = 0;
  if (!load_file(path, img, &data, &len, err, n))
    return false;
  bool ok;
  if (pnm_signature(data, len)) {
    ok = decode_pnm(data, len, img, err, n);
  } else if (png_signature(data, len)) {
#if HT_HAVE_PNG
    ok = decode_png(data, len, img, err, n);
#else
    ok = fail(err, n, "is a PNG file, and this build has no PNG support (libpng was not found)");
#endif
  } else {
    ok = fail(err, n, "%s", unknown_signature);
  }
  if (ok && img->map && img->pixels != NULL &&
      !(img->pixels >= (const uint8_t *)img->map && img->pixels < (const uint8_t *)img->map + img->map_len)) {
    /* decoded into a buffer: the mapping is no longer needed */
    munmap(img->map, img->map_len);
    img->map = NULL;
    img->map_len = 0;
  }
  if (!ok)
    hti_release(img);
  return ok;
}

/* ------------------------------------------------------------ helpers */

static int32_t sample16(const hti_image *im, const uint8_t *row, int64_t x, int c)
{
  size_t i = (size_t)x * (size_t)im->channels + (size_t)c;
  if (im->depth == 16) {
    uint16_t v;
    memcpy(&v, row + 2 * i, 2);
    return v;
  }
  return (int32_t)row[i] * 257;
}

uint8_t *hti_gray8(const hti_image *im, int channel)
{
  size_t w = (size_t)im->width;
  uint8_t *p = malloc(w * (size_t)im->height);
  if (!p)
    return NULL;
  int colors = im->channels - (im->has_alpha ? 1 : 0);
  bool luma = channel < 0 && colors >= 3;
  int c = channel < 0 ? 0 : channel;
  for (int64_t y = 0; y < im->height; y++) {
    const uint8_t *row = im->pixels + (size_t)y * im->stride;
    uint8_t *d = p + (size_t)y * w;
    for (int64_t x = 0; x < im->width; x++) {
      int32_t v;
      if (luma) /* weights of core/context.c luma_fx (1/65536 units) */
        v = (int32_t)((13933 * (int64_t)sample16(im, row, x, 0) + 46871 * (int64_t)sample16(im, row, x, 1) +
                       4732 * (int64_t)sample16(im, row, x, 2) + 32768) >> 16);
      else
        v = sample16(im, row, x, c);
      d[x] = (uint8_t)((v + 128) / 257);
    }
  }
  return p;
}

/* --------------------------------------------------------------- output */

/* Whether `path` is the null device (where output goes to be discarded). */
static bool is_null_device(const char *path)
{
  struct stat a, b;
  return stat(path, &a) == 0 && S_ISCHR(a.st_mode) && stat("/dev/null", &b) == 0 && S_ISCHR(b.st_mode) &&
         a.st_rdev == b.st_rdev;
}

int hti_kind_from_path(const char *path)
{
  if (is_null_device(path))
    return HTI_NULL;
  const char *slash = strrchr(path, '/');
  const char *dot = strrchr(slash ? slash + 1 : path, '.');
  if (!dot)
    return -1;
  static const char *const ext[] = { ".pbm", ".pgm", ".ppm", ".png" };
  for (int i = 0; i < 4; i++)
    if (strcasecmp(dot, ext[i]) == 0)
      return i;
  return -1;
}

const char *hti_kind_name(hti_kind kind)
{
  static const char *const names[] = { "PBM", "PGM", "PPM", "PNG", "the null device" };
  return (int)kind >= 0 && kind <= HTI_NULL ? names[kind] : "?";
}

bool hti_out_init(hti_out *o, hti_kind kind, int64_t width, int64_t height, int channels,
                  int depth, char *err, size_t n)
{
  memset(o, 0, sizeof *o);
  if (width <= 0 || height <= 0 || width > HTI_MAX_SIDE || height > HTI_MAX_SIDE)
    return fail(err, n, "bad output size %lldx%lld", (long long)width, (long long)height);
  switch (kind) {
  case HTI_PBM:
    if (depth != 1 || channels != 1)
      return fail(err, n, "PBM holds black and white only (one plane, 2 levels)");
    break;
  case HTI_PGM:
  case HTI_PPM:
    if (depth != 8 || channels != (kind == HTI_PGM ? 1 : 3))
      return fail(err, n, "%s holds %s 8-bit samples", hti_kind_name(kind),
                  kind == HTI_PGM ? "one plane of" : "three planes (RGB) of");
    break;
  case HTI_PNG:
  case HTI_NULL:
    if (kind == HTI_PNG && !HT_HAVE_PNG)
      return fail(err, n, "this build has no PNG support (libpng was not found)");
    if (channels < 1 || channels > 4 || (depth != 1 && depth != 8 && depth != 16) ||
        (depth == 1 && channels != 1))
      return fail(err, n, "unsupported PNG layout (%d channels, %d-bit)", channels, depth);
    break;
  default:
    return fail(err, n, "unknown output kind");
  }
  o->kind = kind;
  o->width = width;
  o->height = height;
  o->channels = channels;
  o->depth = depth;
  size_t row_bits = (size_t)width * (size_t)channels * (size_t)depth;
  o->stride = (row_bits + 7) / 8;
  size_t data_len;
  if (!mul_size(o->stride, (size_t)height, &data_len))
    return fail(err, n, "output is too large");
  char header[64] = "";
  int hl = 0;
  if (kind == HTI_PBM)
    hl = snprintf(header, sizeof header, "P4\n%lld %lld\n", (long long)width, (long long)height);
  else if (kind == HTI_PGM || kind == HTI_PPM)
    hl = snprintf(header, sizeof header, "P%c\n%lld %lld\n255\n", kind == HTI_PGM ? '5' : '6',
                  (long long)width, (long long)height);
  if (data_len > SIZE_MAX - (size_t)hl)
    return fail(err, n, "output is too large");
  o->file_len = (size_t)hl + data_len;
  /* No calloc: every byte is overwritten by the header and the render. */
  o->file = malloc(o->file_len ? o->file_len : 1);
  if (!o->file)
    return fail(err, n, "out of memory for the %zu-byte output", o->file_len);
  memcpy(o->file, header, (size_t)hl);
  o->pixels = o->file + hl;
  return true;
}

void hti_out_free(hti_out *o)
{
  if (o) {
    free(o->file);
    memset(o, 0, sizeof *o);
  }
}

static bool write_all(int fd, const uint8_t *p, size_t len, char *err, size_t n)
{
  while (len) {
    ssize_t w = write(fd, p, len);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return fail(err, n, "cannot write: %s", w < 0 ? strerror(errno) : "no progress");
    p += w;
    len -= (size_t)w;
  }
  return true;
}

#if HT_HAVE_PNG
/* libpng writes through write_all into the temporary file's descriptor,
 * so that a failing write reports the system's reason ("No space left on
 * device") instead of libpng's "Write Error". */
typedef struct {
  png_io io; /* first: png_fail finds the error buffer and jmp_buf there */
  int fd;
  size_t used;
  uint8_t buf[1 << 18]; /* fewer, larger write() calls than libpng's 8 KiB */
} png_sink;

static void png_sink_write(png_structp png, png_bytep data, size_t len)
{
  png_sink *s = png_get_io_ptr(png);
  if (len > sizeof s->buf - s->used) {
    if (!write_all(s->fd, s->buf, s->used, s->io.err, s->io.err_size))
      longjmp(s->io.jmp, 1);
    s->used = 0;
  }
  if (len > sizeof s->buf) {
    if (!write_all(s->fd, data, len, s->io.err, s->io.err_size))
      longjmp(s->io.jmp, 1);
    return;
  }
  memcpy(s->buf + s->used, data, len);
  s->used += len;
}

static void png_sink_flush(png_structp png) { (void)png; }

static bool write_png(const hti_out *o, int fd, char *err, size_t n)
{
  /* On the heap: the buffer is large, and what changes between setjmp
   * and a longjmp must not live in this function's automatic variables. */
  png_sink *s = malloc(sizeof *s);
  if (!s)
    return fail(err, n, "out of memory");
  memset(&s->io, 0, sizeof s->io);
  s->io.err = err;
  s->io.err_size = n;
  s->fd = fd;
  s->used = 0;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &s->io, png_fail, png_warn);
  png_infop info = png ? png_create_info_struct(png) : NULL;
  if (!info) {
    png_destroy_write_struct(&png, NULL);
    free(s);
    return fail(err, n, "out of memory");
  }
  if (setjmp(s->io.jmp)) {
    png_destroy_write_struct(&png, &info);
    free(s);
    return false;
  }
  png_set_write_fn(png, s, png_sink_write, png_sink_flush);
  static const int types[] = { PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA, PNG_COLOR_TYPE_RGB,
                               PNG_COLOR_TYPE_RGB_ALPHA };
  png_set_IHDR(png, info, (png_uint_32)o->width, (png_uint_32)o->height, o->depth,
               types[o->channels - 1], PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  /* Dithered pixels are noise to zlib: row filters and harder effort
   * cost time and gain a few per cent of size at most. */
  if (o->depth == 1)
    png_set_filter(png, 0, PNG_FILTER_NONE);
  png_set_compression_level(png, 1);
  png_write_info(png, info);
  if (o->depth == 1)
    png_set_invert_mono(png); /* our bit set = black; PNG's 1 = white */
  if (o->depth == 16 && host_is_little_endian())
    png_set_swap(png);
  for (int64_t y = 0; y < o->height; y++)
    png_write_row(png, o->pixels + (size_t)y * o->stride);
  png_write_end(png, NULL);
  png_destroy_write_struct(&png, &info);
  bool ok = write_all(fd, s->buf, s->used, err, n);
  free(s);
  return ok;
}
#endif

/* ------------------------------------------------------------ signals
 *
 * The handler may run in any thread at any moment, so it uses only what
 * is async-signal-safe: atomics, unlink(), write(), raise(). The open
 * destination's state says what it may do:
 *   IDLE        no temporary file: say so and end;
 *   CREATING,   the temporary file is being made or renamed: whether it
 *   COMMITTING  exists is not known, so the signal is kept in `pending`
 *               and acted on by the code that finishes the step;
 *   TEMP        remove the temporary file, say so and end;
 *   DONE        the output is in place and the run has succeeded: the
 *               signal is dropped (the process ends at once anyway). */
enum { SIG_IDLE, SIG_CREATING, SIG_TEMP, SIG_COMMITTING, SIG_DONE };
static _Atomic int sig_state = SIG_IDLE;
static _Atomic int sig_pending = 0;
static char sig_prog[64] = "halftone";
static char sig_tmp[PATH_MAX + 64]; /* the temporary file's name   */
static char sig_out[PATH_MAX];      /* OUTPUT as the user gave it  */

static size_t append(char *buf, size_t len, size_t size, const char *s)
{
  while (*s && len + 1 < size)
    buf[len++] = *s++;
  buf[len] = '\0';
  return len;
}

static _Noreturn void sig_die(int sig, bool temp)
{
  if (temp)
    unlink(sig_tmp);
  const char *name = sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : "a signal";
  char line[PATH_MAX + 256];
  size_t len = 0;
  len = append(line, len, sizeof line, sig_prog);
  len = append(line, len, sizeof line, ": interrupted by ");
  len = append(line, len, sizeof line, name);
  if (sig_out[0]) {
    len = append(line, len, sizeof line, ": ");
    len = append(line, len, sizeof line, sig_out);
    len = append(line, len, sizeof line, temp ? " not written (its temporary file removed)" : " not written");
  } else {
    len = append(line, len, sizeof line, ": no output written");
  }
  len = append(line, len, sizeof line, "\n");
  ssize_t w = write(STDERR_FILENO, line, len);
  (void)w;
  /* end by the signal itself, so the parent sees what happened */
  signal(sig, SIG_DFL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  pthread_sigmask(SIG_UNBLOCK, &set, NULL);
  raise(sig);
  _exit(128 + sig);
}

static void on_signal(int sig)
{
  int state = atomic_load(&sig_state);
  if (state == SIG_CREATING || state == SIG_COMMITTING) {
    atomic_store(&sig_pending, sig);
    return;
  }
  if (state == SIG_DONE)
    return;
  sig_die(sig, state == SIG_TEMP);
}

/* Moves to `state` and acts on a signal that waited for the step. */
static void sig_enter(int state)
{
  atomic_store(&sig_state, state);
  int sig = atomic_exchange(&sig_pending, 0);
  if (sig && state != SIG_DONE)
    sig_die(sig, state == SIG_TEMP);
}

void hti_signals(const char *prog)
{
  snprintf(sig_prog, sizeof sig_prog, "%s", prog);
  static const int ends[] = { SIGINT, SIGTERM, SIGHUP };
  for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++) {
    struct sigaction old, sa;
    /* a signal ignored by whoever started us (nohup, a background job)
     * stays ignored */
    if (sigaction(ends[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
      continue;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(ends[i], &sa, NULL);
  }
  signal(SIGPIPE, SIG_IGN);
  signal(SIGXFSZ, SIG_IGN);
}

void hti_std_fds(void)
{
  for (int fd = 0; fd <= 2; fd++)
    if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
      int nul = open("/dev/null", O_RDWR);
      if (nul >= 0 && nul != fd) /* lowest free: fd itself, unless /dev/null is missing */
        close(nul);
    }
}

/* The file a symbolic link finally points to (chains followed, the
 * target need not exist yet), malloc'ed; a copy of `path` when it is no
 * link. NULL with errno set on failure (ELOOP for a cycle). */
static char *link_target(const char *path)
{
  char *p = strdup(path);
  for (int hops = 0; p; hops++) {
    struct stat st;
    if (lstat(p, &st) != 0 || !S_ISLNK(st.st_mode))
      return p;
    if (hops == 40) {
      free(p);
      errno = ELOOP;
      return NULL;
    }
    char target[PATH_MAX];
    ssize_t len = readlink(p, target, sizeof target - 1);
    if (len < 0) {
      free(p);
      return NULL;
    }
    target[len] = '\0';
    const char *slash = strrchr(p, '/');
    size_t dirlen = target[0] == '/' || !slash ? 0 : (size_t)(slash - p) + 1;
    char *next = malloc(dirlen + (size_t)len + 1);
    if (next) {
      memcpy(next, p, dirlen);
      memcpy(next + dirlen, target, (size_t)len + 1);
    }
    free(p);
    p = next;
  }
  return NULL;
}

bool hti_dest_open(hti_dest *d, const char *output, const char *input, bool force, char *err, size_t n)
{
  memset(d, 0, sizeof *d);
  d->fd = -1;
  if (is_null_device(output)) {
    d->discard = true;
    return true;
  }
  size_t olen = strlen(output);
  if (olen == 0)
    return fail(err, n, "empty file name");
  if (output[olen - 1] == '/')
    return fail(err, n, "names a folder, not a file");
  char *path = link_target(output);
  if (!path)
    return fail(err, n, "cannot follow the symbolic link: %s", strerror(errno));
  struct stat st, in;
  bool exists = stat(path, &st) == 0;
  const char *why = NULL;
  if (exists && S_ISDIR(st.st_mode))
    why = "is a folder";
  /* The file is replaced by rename(): that would swap a device or a pipe
   * (e.g. /dev/stdout) for a plain file, so refuse those. */
  else if (exists && !S_ISREG(st.st_mode))
    why = "exists and is not a regular file; halftone writes regular files only";
  /* The same file under any name (another path, a hard or symbolic link):
   * device and inode, not names, tell. */
  else if (exists && input && stat(input, &in) == 0 && in.st_dev == st.st_dev && in.st_ino == st.st_ino)
    why = "is the input file; writing it would destroy the input (choose another output name)";
  /* Read-only: no write permission bit, or none for us (a file of another
   * user); root's access() ignores the bits, so they are looked at too. A
   * read-only file system is the folder's problem, said by mkstemp below. */
  else if (exists && !force && ((st.st_mode & 0222) == 0 || (access(path, W_OK) != 0 && errno != EROFS)))
    why = "is read-only (no write permission); use --force to replace it";
  if (why) {
    free(path);
    return fail(err, n, "%s", why);
  }

  /* The temporary file lives beside the destination so that rename() is
   * atomic (same file system). Its name is ".NAME.tmp-XXXXXX", with NAME
   * shortened where the folder's name limit needs it, so a name close to
   * that limit still works; the destination's own name is checked here,
   * before the work, not by the rename after it. */
  const char *slash = strrchr(path, '/');
  size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
  const char *base = slash ? slash + 1 : path;
  char *dir = dirlen ? strndup(path, dirlen) : strdup(".");
  if (!dir) {
    free(path);
    return fail(err, n, "out of memory");
  }
  errno = 0;
  long name_max = pathconf(dir, _PC_NAME_MAX);
  if (name_max < 0 && errno != 0) {
    int e = errno;
    bool r = fail(err, n, "cannot create a file in %s: %s", dir, strerror(e));
    free(dir);
    free(path);
    return r;
  }
  size_t blen = strlen(base), keep = blen;
  if (name_max > 0 && blen > (size_t)name_max) {
    bool r = fail(err, n, "cannot create a file in %s: %s (the name has %zu bytes, at most %ld fit)", dir,
                  strerror(ENAMETOOLONG), blen, name_max);
    free(dir);
    free(path);
    return r;
  }
  static const char suffix[] = ".tmp-XXXXXX";
  if (name_max > 0 && 1 + keep + sizeof suffix - 1 > (size_t)name_max)
    keep = (size_t)name_max - sizeof suffix;
  size_t tl = dirlen + 1 + keep + sizeof suffix;
  char *tmp = malloc(tl);
  if (!tmp) {
    free(dir);
    free(path);
    return fail(err, n, "out of memory");
  }
  snprintf(tmp, tl, "%.*s.%.*s%s", (int)dirlen, path, (int)keep, base, suffix);
  if (tl > sizeof sig_tmp) { /* a name longer than PATH_MAX: no file can be made there */
    free(tmp);
    free(dir);
    free(path);
    return fail(err, n, "cannot create a file there: %s", strerror(ENAMETOOLONG));
  }
  snprintf(sig_out, sizeof sig_out, "%s", output);
  atomic_store(&sig_state, SIG_CREATING);
  int fd = mkostemp(tmp, O_CLOEXEC);
  if (fd >= 0)
    memcpy(sig_tmp, tmp, tl);
  sig_enter(fd >= 0 ? SIG_TEMP : SIG_IDLE);
  if (fd < 0) {
    int e = errno;
    bool r = fail(err, n, "cannot create a file in %s: %s", dir, strerror(e));
    free(tmp);
    free(dir);
    free(path);
    return r;
  }
  free(dir);
  /* mkstemp makes the file 0600: give it the mode of the file it replaces
   * (and its owner and group where we may), else what a plain creat()
   * would; a private 0600 file stays private. */
  mode_t mode;
  if (exists) {
    if ((st.st_uid != geteuid() || st.st_gid != getegid()) && fchown(fd, st.st_uid, st.st_gid) != 0 &&
        fchown(fd, (uid_t)-1, st.st_gid) != 0) {
      /* not permitted: the file becomes ours, with its mode */
    }
    mode = st.st_mode & 07777;
  } else {
    mode_t mask = umask(0);
    umask(mask);
    mode = 0666 & ~mask;
  }
  if (fchmod(fd, mode) != 0) {
    int e = errno;
    close(fd);
    unlink(tmp);
    atomic_store(&sig_state, SIG_IDLE);
    free(tmp);
    free(path);
    return fail(err, n, "cannot set the mode of the new file: %s", strerror(e));
  }
  d->path = path;
  d->tmp = tmp;
  d->fd = fd;
  return true;
}

bool hti_out_write(const hti_out *o, hti_dest *d, char *err, size_t n)
{
  if (d->discard || o->kind == HTI_NULL)
    return true;
  if (d->fd < 0 || !d->tmp)
    return fail(err, n, "the output file was not opened");
  bool ok;
#if HT_HAVE_PNG
  if (o->kind == HTI_PNG)
    ok = write_png(o, d->fd, err, n);
  else
#endif
    ok = write_all(d->fd, o->file, o->file_len, err, n);
  /* On the disk before the rename: a crash then leaves the old file or
   * the new one, never an empty or partial one under the name. */
  if (ok && fsync(d->fd) != 0)
    ok = fail(err, n, "cannot write: %s", strerror(errno));
  int fd = d->fd;
  d->fd = -1;
  if (close(fd) != 0 && ok)
    ok = fail(err, n, "cannot write: %s", strerror(errno));
  if (!ok)
    return false;
  atomic_store(&sig_state, SIG_COMMITTING);
  if (rename(d->tmp, d->path) != 0) {
    int e = errno;
    sig_enter(SIG_TEMP);
    return fail(err, n, "cannot replace the file: %s", strerror(e));
  }
  sig_enter(SIG_DONE);
  free(d->tmp);
  d->tmp = NULL;
  return true;
}

void hti_dest_close(hti_dest *d)
{
  if (!d)
    return;
  if (d->fd >= 0)
    close(d->fd);
  if (d->tmp) {
    /* removed first: a signal in between removes it once more, harmlessly */
    unlink(d->tmp);
    atomic_store(&sig_state, SIG_IDLE);
  }
  free(d->tmp);
  free(d->path);
  memset(d, 0, sizeof *d);
  d->fd = -1;
}
