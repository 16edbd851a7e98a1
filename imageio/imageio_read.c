/* Image files for the halftone tools: reading (loading a file or a
 * stream, dispatch by signature through the format table) and output
 * buffers; see imageio.h. One file a format: imageio_pnm.c, _png.c,
 * _tiff.c, _jpeg.c; the table of them: imageio_formats.c; the
 * destination and signals: imageio_dest.c; what all of them use:
 * imageio_util.c. */
#include "imageio_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

void hti_release(hti_image *img)
{
  if (!img)
    return;
  if (img->map)
    munmap(img->map, img->map_len);
  free(img->buf);
  free(img->icc);
  memset(img, 0, sizeof *img);
}

/* ------------------------------------------------------------ file in */


/* A stream (pipe, device, or a file that cannot be mapped), buffered.
 * What it holds counts against the memory budget (hti_memory_limit)
 * together with the image its header declares: `room` is what the
 * buffer may grow to beside that image. */
typedef struct {
  int fd;
  uint8_t *buf;
  size_t used, cap;
  bool eof;
  uint64_t budget;     /* hti_memory_limit(0) when the stream starts     */
  uint64_t image;      /* the bytes the declared image takes decoded     */
  uint64_t room;       /* budget - image                                 */
  uint64_t w, h;       /* its size, 0 before the header                  */
  const char *format;  /* "PNG": what the header said it is, for messages */
} stream;

/* The image a stream's header declares: `image` bytes once decoded (an
 * estimate from the header alone), w x h. False with "too large" when
 * they alone pass the budget. */
static bool stream_declares(stream *s, uint64_t image, uint64_t w, uint64_t h, char *err, size_t n)
{
  if (!hti_fits_memory(image, 0, w, h, err, n))
    return false;
  s->image = image;
  s->room = s->budget - image;
  s->w = w;
  s->h = h;
  return true;
}

/* The stream went past its room: "too large", with what it needs. */
static bool stream_too_large(const stream *s, char *err, size_t n)
{
  char what[96];
  if (s->w)
    snprintf(what, sizeof what, "a %llux%llu %s read from a stream", (unsigned long long)s->w,
             (unsigned long long)s->h, s->format);
  else
    snprintf(what, sizeof what, "a %s read from a stream", s->format);
  uint64_t total = s->image + s->used;
  if (!hti_fits_memory_text(total, 0, true, s->image, what, err, n))
    return false;
  return hti_fail(err, n, "too large: %s needs more than %llu bytes", what, (unsigned long long)total);
}

/* Reads until `want` bytes are buffered or the input ends, never more
 * than `limit` bytes in all; refuses ("too large") a stream that goes on
 * past its room in the memory budget. */
static bool stream_fill(stream *s, size_t want, size_t limit, char *err, size_t n)
{
  if (want > limit)
    want = limit;
  /* one byte past the room tells whether the stream goes on */
  size_t most = s->room >= SIZE_MAX ? SIZE_MAX : (size_t)s->room + 1;
  if (want > most)
    want = most;
  while (s->used < want && !s->eof) {
    if (s->used == s->cap) {
      size_t cap = s->cap < (1 << 16) ? (1 << 16) : s->cap > SIZE_MAX / 2 ? SIZE_MAX : s->cap * 2;
      if (cap < want)
        cap = want;
      if (cap > limit)
        cap = limit;
      if (cap > most)
        cap = most;
      uint8_t *b = realloc(s->buf, cap);
      if (!b)
        return hti_fail(err, n, "out of memory reading the file (%zu bytes)", cap);
      s->buf = b;
      s->cap = cap;
    }
    ssize_t r = read(s->fd, s->buf + s->used, s->cap - s->used);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0)
      return hti_fail(err, n, "cannot read: %s", strerror(errno));
    if (r == 0)
      s->eof = true;
    s->used += (size_t)r;
  }
  if (s->used > s->room)
    return stream_too_large(s, err, n);
  return true;
}

static const char unknown_signature[] = "not a PGM, PPM, PBM, PAM, PNG, TIFF or JPEG file (unknown signature)";

/* Bytes of a stream's TIFF or JPEG beyond the raw size of the image
 * (ICC profiles, Exif, previews) */
#define EXTRA_BYTES ((uint64_t)16 << 20)

/* A TIFF has no end marker, and its directory may come after the data,
 * so it is read to its end; the first directory's image size bounds how
 * far: the raw samples, a quarter more (codecs that expand noise a
 * little), and EXTRA_BYTES. */
static uint64_t tiff_uint(const uint8_t *p, int bytes, bool le)
{
  uint64_t v = 0;
  for (int i = 0; i < bytes; i++)
    v |= (uint64_t)p[le ? i : bytes - 1 - i] << (8 * i);
  return v;
}

static bool stream_tiff(stream *s, size_t limit, char *err, size_t n)
{
  s->format = "TIFF";
  bool ok = stream_fill(s, 16, limit, err, n);
  if (!ok || s->used < 16)
    return ok; /* truncated: the decoder says so */
  bool le = s->buf[0] == 'I', big = s->buf[le ? 2 : 3] == 43;
  /* classic: 2-byte entry count, 12-byte entries, 4-byte values;
   * BigTIFF: 8, 20, 8 */
  int cbytes = big ? 8 : 2, ebytes = big ? 20 : 12, vbytes = big ? 8 : 4;
  uint64_t bound = EXTRA_BYTES, raw = 0;
  uint64_t ifd = big ? tiff_uint(s->buf + 8, 8, le) : tiff_uint(s->buf + 4, 4, le);
  if (ifd < EXTRA_BYTES && (ok = stream_fill(s, (size_t)ifd + 8, limit, err, n)) && s->used >= ifd + (uint64_t)cbytes) {
    uint64_t count = tiff_uint(s->buf + ifd, cbytes, le);
    if (count > 4096)
      count = 4096;
    ok = stream_fill(s, (size_t)(ifd + (uint64_t)cbytes + (uint64_t)ebytes * count), limit, err, n);
    uint64_t w = 0, h = 0, spp = 1, bps = 1;
    for (uint64_t i = 0; ok && i < count && ifd + (uint64_t)cbytes + (uint64_t)ebytes * (i + 1) <= s->used; i++) {
      const uint8_t *b = s->buf + ifd + (uint64_t)cbytes + (uint64_t)ebytes * i;
      uint64_t tag = tiff_uint(b, 2, le), type = tiff_uint(b + 2, 2, le), cnt = tiff_uint(b + 4, vbytes, le);
      const uint8_t *val = b + 4 + vbytes;
      uint64_t v = type == 3 ? tiff_uint(val, 2, le) : type == 4 ? tiff_uint(val, 4, le) : tiff_uint(val, 8, le);
      if (tag == 256)
        w = v;
      else if (tag == 257)
        h = v;
      else if (tag == 277)
        spp = v;
      else if (tag == 258 && type == 3)
        bps = cnt * 2 <= (uint64_t)vbytes ? v : 16; /* stored elsewhere: at most 16 */
    }
    if (w && h && w <= (uint64_t)HTI_MAX_SIDE && h <= (uint64_t)HTI_MAX_SIDE && spp <= 16 && bps <= 64) {
      raw = h * ((w * spp * bps + 7) / 8);
      /* decoded: up to 4 samples a pixel, 16 bits where the file's
       * have more than 8 */
      ok = stream_declares(s, w * h * (spp < 4 ? spp : 4) * (bps > 8 ? 2 : 1), w, h, err, n);
    }
  }
  bound += raw + raw / 4;
  if (ok)
    ok = stream_fill(s, bound < limit ? (size_t)bound + 1 : limit, limit, err, n);
  if (ok && !s->eof && s->used > bound)
    ok = hti_fail(err, n, "a TIFF read from a stream goes on for more than %llu bytes (its image's size "
                          "and 16 MiB)", (unsigned long long)bound);
  return ok;
}

/* A JPEG, marker by marker to its end (EOI), within a bound of the raw
 * size its frame header declares and EXTRA_BYTES. */
static bool stream_jpeg(stream *s, size_t limit, char *err, size_t n)
{
  s->format = "JPEG";
  uint64_t bound = EXTRA_BYTES;
  size_t pos = 2;
  bool ok = true;
  for (;;) {
    if (!(ok = stream_fill(s, pos + 4, limit, err, n)) || s->used < pos + 2)
      return ok; /* truncated: the decoder says so */
    if (pos > bound)
      return hti_fail(err, n, "a JPEG read from a stream goes on for more than %llu bytes without its end",
                      (unsigned long long)bound);
    if (s->buf[pos] != 0xFF)
      return ok; /* not a marker: the decoder says what is wrong */
    uint8_t m = s->buf[pos + 1];
    if (m == 0xFF) { /* fill byte */
      pos++;
      continue;
    }
    if (m == 0xD9) /* EOI */
      return stream_fill(s, pos + 2, limit, err, n);
    if (m == 0x01 || (m >= 0xD0 && m <= 0xD7)) { /* no length */
      pos += 2;
      continue;
    }
    if (s->used < pos + 4)
      return ok;
    size_t seg = (size_t)s->buf[pos + 2] << 8 | s->buf[pos + 3];
    if (m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC) { /* a frame header */
      if (!(ok = stream_fill(s, pos + 10, limit, err, n)) || s->used < pos + 10)
        return ok;
      uint64_t h = (uint64_t)s->buf[pos + 5] << 8 | s->buf[pos + 6], w = (uint64_t)s->buf[pos + 7] << 8 | s->buf[pos + 8];
      uint64_t raw = w * h * s->buf[pos + 9];
      bound = EXTRA_BYTES + 2 * raw; /* quality 100 on noise stays well below twice the raw size */
      /* decoded: the samples, and a progressive file's coefficients (2
       * bytes a sample) */
      bool progressive = m == 0xC2 || m == 0xC6 || m == 0xCA || m == 0xCE;
      if (s->image == 0 && !stream_declares(s, raw * (progressive ? 3 : 1), w, h, err, n))
        return false;
    }
    pos += 2 + seg;
    if (m == 0xDA) { /* start of scan: entropy-coded data up to the next marker */
      for (;;) {
        if (!(ok = stream_fill(s, pos + 2, limit, err, n)) || s->used < pos + 2)
          return ok;
        if (pos > bound)
          break; /* said above */
        if (s->buf[pos] == 0xFF && s->buf[pos + 1] != 0x00 && !(s->buf[pos + 1] >= 0xD0 && s->buf[pos + 1] <= 0xD7))
          break;
        if (s->used > pos + 2) { /* scan what is buffered without a call a byte */
          const uint8_t *f = memchr(s->buf + pos + 1, 0xFF, s->used - pos - 2);
          pos = f ? (size_t)(f - s->buf) : s->used - 1;
        } else {
          pos++;
        }
      }
    }
  }
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
  uint64_t budget = hti_memory_limit(0);
  stream s = { fd, NULL, 0, 0, false, budget, 0, budget, 0, 0, "file" };
  bool ok = stream_fill(&s, 8, limit, err, n);
  if (ok && s.used == 0)
    ok = hti_fail(err, n, "empty file");
  else if (ok && hti_pnm_signature(s.buf, s.used)) {
    /* the header, read in growing pieces until it parses or 1 MiB of it
     * does not */
    pnm_header hd;
    char scratch[8];
    size_t want = 4096;
    bool parsed;
    while (!(parsed = hti_pnm_parse_header(s.buf, s.used, &hd, scratch, sizeof scratch)) && ok && !s.eof &&
           s.used < (1 << 20)) {
      ok = stream_fill(&s, want, limit, err, n);
      want *= 2;
    }
    if (ok && parsed) {
      s.format = hd.kind == '7' ? "PAM" : hd.bits || hd.kind == '1' ? "PBM" : hd.channels == 3 ? "PPM" : "PGM";
      uint64_t end, image; /* where the data ends, at the latest; the decoded image beside the buffer */
      if (hd.bits) {
        end = hd.data + (hd.w + 7) / 8 * hd.h;
        image = hd.samples; /* 8-bit gray */
      } else if (!hd.ascii) {
        end = hd.data + (uint64_t)hd.samples * (hd.maxval > 255 ? 2 : 1);
        image = hd.maxval == 255 ? 0 : (uint64_t)hd.samples * 2; /* 8-bit: the buffer itself */
      } else {
        end = hd.data + (uint64_t)hd.samples * 16 + (1 << 20);
        image = (uint64_t)hd.samples * (hd.maxval == 255 ? 1 : 2);
      }
      /* binary: exactly `end` bytes come, checked with the image at once */
      ok = (hd.ascii || hti_fits_memory(image + end, 0, hd.w, hd.h, err, n)) &&
           stream_declares(&s, image, hd.w, hd.h, err, n) &&
           stream_fill(&s, end < limit ? (size_t)end : limit, end < limit ? (size_t)end : limit, err, n);
    }
  } else if (ok && hti_png_signature(s.buf, s.used)) {
    /* IHDR first: its size bounds the rest; then chunk by chunk to IEND */
    s.format = "PNG";
    ok = stream_fill(&s, 8 + 8 + 13, limit, err, n);
    uint64_t raw = 0;
    if (ok && s.used >= 8 + 8 + 13 && memcmp(s.buf + 12, "IHDR", 4) == 0)
      raw = hti_png_raw_bytes(hti_be32(s.buf + 16), hti_be32(s.buf + 20), s.buf[24], s.buf[25]);
    if (raw) { /* decoded: 8 or 16 bits a sample, a palette as RGB, and the row pointers */
      static const uint64_t channels[7] = { 1, 0, 3, 3, 2, 0, 4 };
      uint64_t w = hti_be32(s.buf + 16), h = hti_be32(s.buf + 20);
      ok = stream_declares(&s, w * h * channels[s.buf[25]] * (s.buf[24] == 16 ? 2 : 1) + h * sizeof(void *), w, h,
                           err, n);
    }
    /* compressed data can be larger than the raw by a little (stored
     * blocks, small IDAT chunks); ancillary chunks (ICC profile, Exif,
     * text) get 16 MiB */
    uint64_t bound = raw + raw / 4 + (16 << 20);
    for (size_t pos = 8; ok && raw;) {
      ok = stream_fill(&s, pos + 8, limit, err, n);
      if (!ok || s.used < pos + 8)
        break; /* truncated: the decoder says so */
      uint64_t next = (uint64_t)pos + 12 + hti_be32(s.buf + pos);
      if (next > bound || next > limit) {
        ok = hti_fail(err, n, "a %llux%llu PNG goes on for more than %llu bytes without its end (IEND)",
                  (unsigned long long)hti_be32(s.buf + 16), (unsigned long long)hti_be32(s.buf + 20),
                  (unsigned long long)(bound < limit ? bound : limit));
        break;
      }
      if (memcmp(s.buf + pos + 4, "IEND", 4) == 0) {
        ok = stream_fill(&s, (size_t)next, (size_t)next, err, n);
        break;
      }
      pos = (size_t)next;
    }
  } else if (ok && hti_tiff_signature(s.buf, s.used)) {
    ok = stream_tiff(&s, limit, err, n);
  } else if (ok && hti_jpeg_signature(s.buf, s.used)) {
    ok = stream_jpeg(&s, limit, err, n);
  } else if (ok) {
    ok = hti_fail(err, n, "%s", unknown_signature);
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
  /* "-": standard input, on a descriptor of our own (closed below) */
  bool std_in = strcmp(path, "-") == 0;
  int fd = std_in ? fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3) : open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return hti_fail(err, n, "cannot open: %s", strerror(errno));
  if (std_in && isatty(fd)) { /* it would wait for an image typed in */
    close(fd);
    return hti_fail(err, n, "is a terminal; pipe or redirect an image into standard input");
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int e = errno;
    close(fd);
    return hti_fail(err, n, "cannot read: %s", strerror(e));
  }
  if (S_ISDIR(st.st_mode)) {
    close(fd);
    return hti_fail(err, n, "is a folder, not an image file");
  }
  size_t limit = SIZE_MAX;
  /* standard input from a file that is read already part way: a stream
   * from where it stands */
  if (S_ISREG(st.st_mode) && (!std_in || lseek(fd, 0, SEEK_CUR) == 0)) {
    if (st.st_size == 0) {
      close(fd);
      return hti_fail(err, n, "empty file");
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

bool hti_read(const char *path, hti_image *img, char *err, size_t n)
{
  memset(img, 0, sizeof *img);
  const uint8_t *data = NULL;
  size_t len = 0;
  if (!load_file(path, img, &data, &len, err, n))
    return false;
  bool ok;
  const hti_format *f = hti_format_by_signature(data, len);
  if (!f) {
    ok = hti_fail(err, n, "%s", unknown_signature);
  } else if (!f->read) {
    char why[128];
    hti_format_missing(f, why, sizeof why);
    ok = hti_fail(err, n, "is a %s file, and %s", f->label, why);
  } else {
    ok = f->read(data, len, img, err, n);
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
  else if (img->pages == 0)
    img->pages = 1;
  return ok;
}

bool hti_cmyk_to_rgb(hti_image *img, char *err, size_t n)
{
  if (!img->cmyk)
    return true;
  size_t w = (size_t)img->width, bps = img->depth == 16 ? 2 : 1, stride = w * 3 * bps;
  uint8_t *out = malloc(stride * (size_t)img->height);
  if (!out)
    return hti_fail(err, n, "out of memory converting CMYK to RGB");
  uint64_t max = img->depth == 16 ? 65535 : 255;
  for (int64_t y = 0; y < img->height; y++) {
    const uint8_t *row = img->pixels + (size_t)y * img->stride;
    uint8_t *d = out + (size_t)y * stride;
    for (size_t x = 0; x < w; x++) {
      uint64_t v[4];
      for (int c = 0; c < 4; c++) {
        if (bps == 2) {
          uint16_t u;
          memcpy(&u, row + 2 * (4 * x + (size_t)c), 2);
          v[c] = u;
        } else {
          v[c] = row[4 * x + (size_t)c];
        }
      }
      for (int c = 0; c < 3; c++) { /* (max - C)(max - K) / max, rounded */
        uint64_t r = ((max - v[c]) * (max - v[3]) + max / 2) / max;
        if (bps == 2) {
          uint16_t u = (uint16_t)r;
          memcpy(d + 2 * (3 * x + (size_t)c), &u, 2);
        } else {
          d[3 * x + (size_t)c] = (uint8_t)r;
        }
      }
    }
  }
  if (img->map) {
    munmap(img->map, img->map_len);
    img->map = NULL;
    img->map_len = 0;
  }
  free(img->buf);
  img->buf = out;
  img->pixels = out;
  img->stride = stride;
  img->channels = 3;
  img->cmyk = false;
  return true;
}

bool hti_icc_info(const uint8_t *icc, size_t len, char *space, size_t space_size, char *desc, size_t desc_size)
{
  if (desc_size)
    desc[0] = '\0';
  if (!icc || len < 132 || memcmp(icc + 36, "acsp", 4) != 0)
    return false;
  /* the colour space signature: four characters, trailing blanks cut */
  int k = 4;
  while (k > 0 && icc[16 + k - 1] == ' ')
    k--;
  snprintf(space, space_size, "%.*s", k, (const char *)icc + 16);
  for (char *p = space; *p; p++)
    if (*p < 32 || *p > 126)
      *p = '?';
  /* the 'desc' tag: ASCII in version 2 ('desc' type), UTF-16 in
   * version 4 ('mluc' type, its first record; non-ASCII as '?') */
  uint32_t tags = hti_be32(icc + 128);
  for (uint64_t i = 0; i < tags && 132 + 12 * (i + 1) <= len; i++) {
    const uint8_t *t = icc + 132 + 12 * i;
    if (memcmp(t, "desc", 4) != 0)
      continue;
    uint64_t off = hti_be32(t + 4), size = hti_be32(t + 8);
    if (off > len || size > len - off || size < 12)
      break;
    const uint8_t *d = icc + off;
    size_t o = 0;
    if (memcmp(d, "desc", 4) == 0) {
      uint64_t count = hti_be32(d + 8);
      for (uint64_t j = 0; j < count && 12 + j < size && d[12 + j] && o + 1 < desc_size; j++)
        desc[o++] = d[12 + j] >= 32 && d[12 + j] < 127 ? (char)d[12 + j] : '?';
    } else if (memcmp(d, "mluc", 4) == 0 && size >= 28) {
      uint64_t rl = hti_be32(d + 20), ro = hti_be32(d + 24);
      for (uint64_t j = 0; j + 1 < rl && ro + j + 1 < size && o + 1 < desc_size; j += 2) {
        uint32_t c = (uint32_t)d[ro + j] << 8 | d[ro + j + 1];
        if (!c)
          break;
        desc[o++] = c >= 32 && c < 127 ? (char)c : '?';
      }
    }
    if (desc_size)
      desc[o] = '\0';
    break;
  }
  return true;
}

/* The tag `sig` of a profile: its data and size, NULL when it has none
 * that lies inside. */
static const uint8_t *icc_tag(const uint8_t *icc, size_t len, const char *sig, size_t *size)
{
  uint32_t tags = hti_be32(icc + 128);
  for (uint64_t i = 0; i < tags && 132 + 12 * (i + 1) <= len; i++) {
    const uint8_t *t = icc + 132 + 12 * i;
    uint64_t off = hti_be32(t + 4), n = hti_be32(t + 8);
    if (memcmp(t, sig, 4) == 0)
      return off <= len && n <= len - off ? (*size = (size_t)n, icc + off) : NULL;
  }
  return NULL;
}

/* An s15Fixed16 number. */
static double icc_fixed(const uint8_t *p) { return (double)(int32_t)hti_be32(p) / 65536.0; }

bool hti_icc_is_srgb(const uint8_t *icc, size_t len)
{
  char space[16];
  if (!hti_icc_info(icc, len, space, sizeof space, NULL, 0) || strcmp(space, "RGB") != 0)
    return false;
  /* sRGB's primaries adapted to D50, as profiles hold them */
  static const char *const sigs[3] = { "rXYZ", "gXYZ", "bXYZ" };
  static const double xyz[3][3] = { { 0.4361, 0.2225, 0.0139 }, { 0.3851, 0.7169, 0.0971 },
                                    { 0.1431, 0.0606, 0.7141 } };
  for (int c = 0; c < 3; c++) {
    size_t n = 0;
    const uint8_t *t = icc_tag(icc, len, sigs[c], &n);
    if (!t || n < 20 || memcmp(t, "XYZ ", 4) != 0)
      return false;
    for (int k = 0; k < 3; k++)
      if (fabs(icc_fixed(t + 8 + 4 * k) - xyz[c][k]) > 0.005)
        return false;
  }
  /* the tone curve: sRGB's (a table through its middle), or a gamma of
   * about 2.2 or 2.4 (parametric, or one number) */
  size_t n = 0;
  const uint8_t *t = icc_tag(icc, len, "rTRC", &n);
  if (!t || n < 12)
    return false;
  if (memcmp(t, "para", 4) == 0) {
    double g = n >= 16 ? icc_fixed(t + 12) : 0;
    return g >= 2.1 && g <= 2.5;
  }
  if (memcmp(t, "curv", 4) != 0)
    return false;
  uint64_t count = hti_be32(t + 8);
  if (count == 1)
    return n >= 14 && (t[12] << 8 | t[13]) >= 2.1 * 256 && (t[12] << 8 | t[13]) <= 2.3 * 256;
  if (count < 2 || 12 + 2 * count > n)
    return false;
  uint64_t mid = (count - 1) / 2;
  double x = (double)mid / (double)(count - 1), want = x <= 0.04045 ? x / 12.92 : pow((x + 0.055) / 1.055, 2.4);
  return fabs((t[12 + 2 * mid] << 8 | t[13 + 2 * mid]) / 65535.0 - want) < 0.02;
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
      if (im->cmyk) { /* as hti_cmyk_to_rgb, then luma or the channel */
        int32_t k = 65535 - sample16(im, row, x, 3), rgb[3];
        for (int j = 0; j < 3; j++)
          rgb[j] = (int32_t)(((int64_t)(65535 - sample16(im, row, x, j)) * k + 32767) / 65535);
        v = luma || channel < 0 ? (int32_t)((13933 * (int64_t)rgb[0] + 46871 * (int64_t)rgb[1] + 4732 * (int64_t)rgb[2] +
                                             32768) >> 16)
                                : c < 3 ? rgb[c] : k;
      } else if (luma) /* weights of core/context.c luma_fx (1/65536 units) */
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


bool hti_out_init(hti_out *o, hti_kind kind, int64_t width, int64_t height, int channels,
                  int depth, char *err, size_t n)
{
  memset(o, 0, sizeof *o);
  if (width <= 0 || height <= 0 || width > HTI_MAX_SIDE || height > HTI_MAX_SIDE)
    return hti_fail(err, n, "bad output size %lldx%lld", (long long)width, (long long)height);
  const hti_format *f = hti_format_of(kind);
  if (!f || !f->depths)
    return hti_fail(err, n, "unknown output kind");
  if (!f->built) {
    char why[128];
    hti_format_missing(f, why, sizeof why);
    return hti_fail(err, n, "%s", why);
  }
  if (!hti_format_writes(f, channels, depth)) {
    if (f->holds)
      return hti_fail(err, n, "%s holds %s", f->label, f->holds);
    /* the null device takes the layouts PNG would */
    return hti_fail(err, n, "unsupported %s layout (%d channels, %d-bit)",
                    kind == HTI_NULL ? hti_kind_name(HTI_PNG) : f->label, channels, depth);
  }
  if (f->max_side && (width > f->max_side || height > f->max_side))
    return hti_fail(err, n, "%s holds at most %lld pixels a side (%s's limit), and the image is %lldx%lld; write "
                    "TIFF or netpbm", f->label, (long long)f->max_side, f->library ? f->library : f->label,
                    (long long)width, (long long)height);
  o->kind = kind;
  o->width = width;
  o->height = height;
  o->channels = channels;
  o->depth = depth;
  size_t row_bits = (size_t)width * (size_t)channels * (size_t)depth;
  o->stride = (row_bits + 7) / 8;
  size_t data_len;
  if (!hti_mul_size(o->stride, (size_t)height, &data_len))
    return hti_fail(err, n, "output is too large");
  char header[64] = "";
  int hl = 0;
  if (kind == HTI_PBM)
    hl = snprintf(header, sizeof header, "P4\n%lld %lld\n", (long long)width, (long long)height);
  else if (kind == HTI_PGM || kind == HTI_PPM)
    hl = snprintf(header, sizeof header, "P%c\n%lld %lld\n%d\n", kind == HTI_PGM ? '5' : '6',
                  (long long)width, (long long)height, depth == 16 ? 65535 : 255);
  if (data_len > SIZE_MAX - (size_t)hl)
    return hti_fail(err, n, "output is too large");
  o->file_len = (size_t)hl + data_len;
  /* No calloc: every byte is overwritten by the header and the render. */
  o->file = malloc(o->file_len ? o->file_len : 1);
  if (!o->file)
    return hti_fail(err, n, "out of memory for the %zu-byte output", o->file_len);
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


