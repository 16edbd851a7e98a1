/* halftone-mpi's netpbm rows (halftone-mpi.h). */
#include "halftone-mpi.h"
#include "halftone.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static bool fail(char *err, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool fail(char *err, size_t n, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, n, fmt, ap);
  va_end(ap);
  return false;
}

void hmpi_error_string(int code, char *buf, size_t n)
{
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, text, &len) != MPI_SUCCESS)
    snprintf(text, sizeof text, "MPI error %d", code);
  snprintf(buf, n, "%s", text);
}

/* The header's numbers: white space and '#' comments between them. */
static bool number(const uint8_t *p, size_t len, size_t *pos, uint64_t max, uint64_t *out)
{
  size_t i = *pos;
  for (;;) {
    while (i < len && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r' || p[i] == '\n' || p[i] == '\v' || p[i] == '\f'))
      i++;
    if (i < len && p[i] == '#') {
      while (i < len && p[i] != '\n')
        i++;
      continue;
    }
    break;
  }
  if (i >= len || p[i] < '0' || p[i] > '9')
    return false;
  uint64_t v = 0;
  while (i < len && p[i] >= '0' && p[i] <= '9') {
    v = v * 10 + (uint64_t)(p[i++] - '0');
    if (v > max)
      return false;
  }
  *out = v;
  *pos = i;
  return true;
}

bool hmpi_read_header(const char *path, hmpi_header *h, char *err, size_t n)
{
  FILE *f = fopen(path, "rb");
  if (!f)
    return fail(err, n, "cannot open: %s", strerror(errno));
  struct stat st;
  if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
    fclose(f);
    return fail(err, n, "not a regular file (halftone-mpi's ranks read their rows at offsets in the file)");
  }
  uint8_t p[4096];
  size_t len = fread(p, 1, sizeof p, f);
  fclose(f);
  if (len == 0)
    return fail(err, n, "empty file");
  static const uint8_t png[4] = { 0x89, 'P', 'N', 'G' };
  if (len >= 4 && memcmp(p, png, 4) == 0)
    return fail(err, n, "PNG input is not supported by halftone-mpi (its rows are compressed, not at fixed "
                        "offsets); convert it to a binary PGM first, e.g. pngtopnm");
  if (len < 2 || p[0] != 'P' || p[1] < '1' || p[1] > '7')
    return fail(err, n, "not a PGM, PPM or PBM file (unknown signature)");
  if (p[1] == '1' || p[1] == '2' || p[1] == '3' || p[1] == '7')
    return fail(err, n, "%s input is not supported by halftone-mpi; convert it to a binary PGM, PPM or PBM "
                        "first (netpbm: pamtopnm, pnmtopnm)", p[1] == '7' ? "PAM (P7)" : "plain (ASCII) netpbm");
  memset(h, 0, sizeof *h);
  h->kind = (char)p[1];
  size_t pos = 2;
  uint64_t w, hh, maxval = 1;
  if (!number(p, len, &pos, (uint64_t)HT_MAX_SIDE, &w) || w == 0)
    return fail(err, n, "bad header: width must be 1..%lld", (long long)HT_MAX_SIDE);
  if (!number(p, len, &pos, (uint64_t)HT_MAX_SIDE, &hh) || hh == 0)
    return fail(err, n, "bad header: height must be 1..%lld", (long long)HT_MAX_SIDE);
  if (h->kind != '4' && (!number(p, len, &pos, 65535, &maxval) || maxval == 0))
    return fail(err, n, "bad header: maxval must be 1..65535");
  if (pos >= len || !(p[pos] == ' ' || p[pos] == '\t' || p[pos] == '\r' || p[pos] == '\n'))
    return fail(err, n, "bad header: no white space after the %s", h->kind == '4' ? "height" : "maxval");
  if ((int64_t)w * (int64_t)hh > HT_MAX_PIXELS)
    return fail(err, n, "%llux%llu is too large (at most %lld pixels)", (unsigned long long)w,
                (unsigned long long)hh, (long long)HT_MAX_PIXELS);
  h->width = (int64_t)w;
  h->height = (int64_t)hh;
  h->maxval = (int)maxval;
  h->channels = h->kind == '6' ? 3 : 1;
  h->data = (int64_t)pos + 1;
  h->row_bytes = h->kind == '4' ? (h->width + 7) / 8 : h->width * h->channels * (maxval > 255 ? 2 : 1);
  const int64_t need = h->row_bytes * h->height;
  if ((int64_t)st.st_size - h->data < need)
    return fail(err, n, "truncated: %lldx%lld %s needs %lld bytes of pixel data, the file has %lld",
                (long long)h->width, (long long)h->height, h->kind == '4' ? "PBM" : h->kind == '5' ? "PGM" : "PPM",
                (long long)need, (long long)((int64_t)st.st_size - h->data));
  return true;
}

int hmpi_sample_bytes(const hmpi_header *h) { return h->kind == '4' || h->maxval == 255 ? 1 : 2; }

int64_t hmpi_native_row_bytes(const hmpi_header *h)
{
  return h->width * h->channels * hmpi_sample_bytes(h);
}

static bool read_at(MPI_File f, int64_t offset, uint8_t *dst, int64_t len, char *err, size_t n)
{
  while (len > 0) {
    const int piece = len > (1 << 30) ? (1 << 30) : (int)len;
    MPI_Status st;
    int rc = MPI_File_read_at(f, (MPI_Offset)offset, dst, piece, MPI_BYTE, &st);
    int got = 0;
    if (rc == MPI_SUCCESS)
      MPI_Get_count(&st, MPI_BYTE, &got);
    if (rc != MPI_SUCCESS || got != piece) {
      char text[256] = "the file ended early";
      if (rc != MPI_SUCCESS)
        hmpi_error_string(rc, text, sizeof text);
      return fail(err, n, "read failed at byte %lld: %s", (long long)offset, text);
    }
    offset += piece;
    dst += piece;
    len -= piece;
  }
  return true;
}

bool hmpi_write_at(MPI_File f, int64_t offset, const uint8_t *data, int64_t len, char *err, size_t n)
{
  while (len > 0) {
    const int piece = len > (1 << 30) ? (1 << 30) : (int)len;
    MPI_Status st;
    int rc = MPI_File_write_at(f, (MPI_Offset)offset, data, piece, MPI_BYTE, &st);
    int put = 0;
    if (rc == MPI_SUCCESS)
      MPI_Get_count(&st, MPI_BYTE, &put);
    if (rc != MPI_SUCCESS || put != piece) {
      char text[256] = "short write (disk full?)";
      if (rc != MPI_SUCCESS)
        hmpi_error_string(rc, text, sizeof text);
      return fail(err, n, "write failed at byte %lld: %s", (long long)offset, text);
    }
    offset += piece;
    data += piece;
    len -= piece;
  }
  return true;
}

bool hmpi_read_rows(MPI_File f, const hmpi_header *h, int64_t y0, int64_t nrows, uint8_t *dst, uint8_t *scratch,
                    char *err, size_t n)
{
  const int64_t native = hmpi_native_row_bytes(h);
  const int64_t samples = h->width * h->channels;
  if (h->kind != '4' && h->maxval == 255) /* the file's bytes are the samples */
    return read_at(f, h->data + y0 * h->row_bytes, dst, nrows * h->row_bytes, err, n);
  for (int64_t y = y0; y < y0 + nrows; y++) {
    uint8_t *out = dst + (y - y0) * native;
    if (!read_at(f, h->data + y * h->row_bytes, scratch, h->row_bytes, err, n))
      return false;
    if (h->kind == '4') { /* bit set = black */
      for (int64_t x = 0; x < h->width; x++)
        out[x] = (scratch[x >> 3] >> (7 - (x & 7))) & 1 ? 0 : 255;
      continue;
    }
    const uint32_t m = (uint32_t)h->maxval;
    uint16_t *o16 = (uint16_t *)(void *)out;
    for (int64_t i = 0; i < samples; i++) {
      const uint32_t s = m > 255 ? (uint32_t)scratch[2 * i] << 8 | scratch[2 * i + 1] : scratch[i];
      if (s > m)
        return fail(err, n, "sample %u at pixel (%lld, %lld) exceeds maxval %u", s, (long long)(i / h->channels),
                    (long long)y, m);
      /* evenly spread 0..maxval over 0..65535, rounded to nearest */
      o16[i] = (uint16_t)(m == 65535 ? s : ((uint64_t)s * 65535u + m / 2) / m);
    }
  }
  return true;
}

int hmpi_out_header(char *buf, size_t size, bool pbm, int64_t width, int64_t height)
{
  return pbm ? snprintf(buf, size, "P4\n%lld %lld\n", (long long)width, (long long)height)
             : snprintf(buf, size, "P5\n%lld %lld\n255\n", (long long)width, (long long)height);
}
