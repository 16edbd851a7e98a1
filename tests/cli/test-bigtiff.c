/* test-bigtiff: the TIFF writer writes BigTIFF where classic TIFF cannot
 * hold the file, and classic TIFF, byte for byte as before, where it
 * can. The limit of classic TIFF (4 GiB of offsets) is lowered here
 * (hti_tiff_set_classic_limit) so that files of a few hundred KB stand
 * for files of 4 GiB; every kind of strip writing meets it: uncompressed
 * (its size known before a strip goes out), Deflate on one thread (known
 * only once libtiff coded it) and on several (coded strips written raw),
 * CCITT G4, a CMYK image of four planes, and a pipe (the file built in
 * memory). Each file is read back by libtiff: BigTIFF or not as expected,
 * the same pixels. Exits 77 without TIFF.
 */
#include "imageio_priv.h"

#include "ht-check.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if HT_HAVE_TIFF
#include <tiffio.h>

static char dir[] = "/tmp/ht-bigtiff-XXXXXX";

static void silent(const char *module, const char *fmt, va_list ap) { (void)module, (void)fmt, (void)ap; }

static uint64_t rng(uint64_t *s)
{
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 0x2545F4914F6CDD1DULL;
}

/* `noise`: incompressible samples, else a gentle ramp that Deflate packs */
static void fill(uint8_t *p, size_t n, bool noise, uint64_t seed)
{
  uint64_t s = seed * 0x9E3779B97F4A7C15ULL + 1;
  for (size_t i = 0; i < n; i++)
    p[i] = noise ? (uint8_t)rng(&s) : (uint8_t)(i / 4096);
}

static uint8_t *slurp(const char *path, size_t *len)
{
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *d = malloc(size > 0 ? (size_t)size : 1);
  *len = d && fread(d, 1, (size_t)size, f) == (size_t)size ? (size_t)size : 0;
  fclose(f);
  return d;
}

/* Reads `path` with libtiff: BigTIFF as `big`, planes * height rows of
 * `row` bytes (contiguous, or one plane after the other) as in `px`. */
static void check_file(const char *path, bool big, const uint8_t *const *px, int planes, size_t row, uint32_t height,
                       const char *what)
{
  TIFF *tif = TIFFOpen(path, "r");
  CHECK(tif != NULL, "%s: libtiff cannot open the file", what);
  if (!tif)
    return;
  CHECK(!TIFFIsBigTIFF(tif) == !big, "%s: %s, wanted %s", what, TIFFIsBigTIFF(tif) ? "BigTIFF" : "classic TIFF",
        big ? "BigTIFF" : "classic TIFF");
  tmsize_t strip = TIFFStripSize(tif);
  uint8_t *buf = malloc((size_t)strip);
  uint32_t strips = TIFFNumberOfStrips(tif), per_plane = strips / (uint32_t)planes;
  size_t rows_per_strip = (size_t)strip / row, bad = 0;
  for (uint32_t i = 0; buf && i < strips; i++) {
    tmsize_t got = TIFFReadEncodedStrip(tif, i, buf, strip);
    uint32_t p = i / per_plane, y0 = (uint32_t)((i % per_plane) * rows_per_strip);
    size_t want = (size_t)(height - y0 < rows_per_strip ? height - y0 : rows_per_strip) * row;
    if (got != (tmsize_t)want || memcmp(buf, px[p] + (size_t)y0 * row, want) != 0)
      bad++;
  }
  CHECK(buf && bad == 0, "%s: %zu of %u strips read back differ", what, bad, (unsigned)strips);
  free(buf);
  TIFFClose(tif);
}

/* An 8-bit gray (or 1-bit, depth 1) image to `name` through the tools'
 * path: hti_out_init, hti_dest_open, hti_out_write. */
static bool write_gray(const char *name, const hti_out *src, hti_compression comp, int threads, char *path, size_t size)
{
  snprintf(path, size, "%s/%s", dir, name);
  hti_dest d;
  char err[256];
  hti_out o = *src;
  o.compression = comp;
  o.threads = threads;
  bool ok = hti_dest_open(&d, path, NULL, false, err, sizeof err) && hti_out_write(&o, &d, err, sizeof err);
  CHECK(ok, "%s: %s", name, err);
  hti_dest_close(&d);
  return ok;
}

typedef struct {
  int fd;
  uint8_t *data;
  size_t len;
} drain;

static void *drain_pipe(void *arg)
{
  drain *dr = arg;
  size_t cap = 1 << 20;
  dr->data = malloc(cap);
  for (ssize_t r; dr->data && (r = read(dr->fd, dr->data + dr->len, cap - dr->len)) > 0;) {
    dr->len += (size_t)r;
    if (dr->len == cap)
      dr->data = realloc(dr->data, cap *= 2);
  }
  return NULL;
}

int main(void)
{
  TIFFSetErrorHandler(silent);
  TIFFSetWarningHandler(silent);
  if (!mkdtemp(dir)) {
    perror("test-bigtiff: mkdtemp");
    return 99;
  }
  const uint64_t limit = 300000;
  char err[256], path[512], ref[512];

  /* 8-bit gray: 640 x 480 = 307 200 bytes of pixels, just past the
   * limit when stored as they are or as incompressible noise */
  struct { const char *name; hti_compression comp; int threads; bool noise, big; } gray[] = {
    { "none.tif", HTI_COMPRESS_NONE, 1, false, true },
    { "deflate-1.tif", HTI_COMPRESS_DEFLATE, 1, true, true },
    { "deflate-4.tif", HTI_COMPRESS_DEFLATE, 4, true, true },
    { "lzw-4.tif", HTI_COMPRESS_LZW, 4, true, true },
    { "ramp-deflate-1.tif", HTI_COMPRESS_DEFLATE, 1, false, false },
    { "ramp-deflate-4.tif", HTI_COMPRESS_DEFLATE, 4, false, false },
  };
  for (size_t i = 0; i < sizeof gray / sizeof gray[0]; i++) {
    hti_out o;
    CHECK(hti_out_init(&o, HTI_TIFF, 640, 480, 1, 8, err, sizeof err), "%s", err);
    fill(o.pixels, o.stride * 480, gray[i].noise, i);
    /* the file under the default limit: what halftone always wrote */
    hti_tiff_set_classic_limit(0);
    write_gray("reference.tif", &o, gray[i].comp, gray[i].threads, ref, sizeof ref);
    hti_tiff_set_classic_limit(limit);
    if (write_gray(gray[i].name, &o, gray[i].comp, gray[i].threads, path, sizeof path)) {
      const uint8_t *planes[1] = { o.pixels };
      check_file(path, gray[i].big, planes, 1, o.stride, 480, gray[i].name);
      size_t a = 0, b = 0;
      uint8_t *x = slurp(path, &a), *y = slurp(ref, &b);
      if (!gray[i].big)
        CHECK(a && a == b && memcmp(x, y, a) == 0, "%s: under the limit, not the file of the default limit",
              gray[i].name);
      else
        CHECK(a > limit && b > limit && b < a + 100, "%s: %zu bytes, the classic file %zu", gray[i].name, a, b);
      free(x), free(y);
    }
    hti_out_free(&o);
  }

  /* 1-bit noise in CCITT G4: about 0.4 MB for 1600 x 1200 */
  {
    hti_out o;
    CHECK(hti_out_init(&o, HTI_TIFF, 1600, 1200, 1, 1, err, sizeof err), "%s", err);
    fill(o.pixels, o.stride * 1200, true, 99);
    hti_tiff_set_classic_limit(limit);
    if (write_gray("g4.tif", &o, HTI_COMPRESS_AUTO, 4, path, sizeof path)) {
      const uint8_t *planes[1] = { o.pixels };
      check_file(path, true, planes, 1, o.stride, 1200, "g4.tif");
    }
    /* through a pipe: the file built in memory, then written out */
    int fds[2];
    CHECK(pipe(fds) == 0, "pipe");
    drain dr = { fds[0], NULL, 0 };
    pthread_t t;
    pthread_create(&t, NULL, drain_pipe, &dr);
    hti_out p = o;
    p.threads = 2;
    CHECK(hti_write_tiff(&p, fds[1], err, sizeof err), "g4 to a pipe: %s", err);
    close(fds[1]);
    pthread_join(t, NULL);
    close(fds[0]);
    snprintf(path, sizeof path, "%s/piped.tif", dir);
    FILE *f = fopen(path, "wb");
    CHECK(f && dr.data && fwrite(dr.data, 1, dr.len, f) == dr.len, "cannot keep what the pipe gave");
    if (f)
      fclose(f);
    const uint8_t *planes[1] = { o.pixels };
    check_file(path, true, planes, 1, o.stride, 1200, "g4 through a pipe");
    free(dr.data);
    hti_out_free(&o);
  }

  /* CMYK, 8-bit planes, uncompressed: 4 x 200 x 400 = 320 000 bytes */
  {
    hti_cmyk c;
    memset(&c, 0, sizeof c);
    c.width = 200;
    c.height = 400;
    c.depth = 8;
    c.compression = HTI_COMPRESS_NONE;
    uint8_t *mem = malloc(4 * 200 * 400);
    fill(mem, 4 * 200 * 400, true, 7);
    const uint8_t *planes[4];
    for (int p = 0; p < 4; p++) {
      c.plane[p] = planes[p] = mem + (size_t)p * 200 * 400;
      c.stride[p] = 200;
      c.levels[p] = 256;
    }
    for (int big = 0; big < 2; big++) {
      hti_tiff_set_classic_limit(big ? limit : 0);
      snprintf(path, sizeof path, "%s/cmyk-%d.tif", dir, big);
      hti_dest d;
      bool ok = hti_dest_open(&d, path, NULL, false, err, sizeof err) && hti_write_cmyk_tiff(&c, &d, err, sizeof err);
      CHECK(ok, "cmyk: %s", err);
      hti_dest_close(&d);
      if (ok)
        check_file(path, big, planes, 4, 200, 400, big ? "cmyk past the limit" : "cmyk");
    }
    free(mem);
  }
  hti_tiff_set_classic_limit(0);
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0)
    fprintf(stderr, "test-bigtiff: could not remove %s\n", dir);
  return test_finish("test-bigtiff");
}
#else
int main(void)
{
  puts("test-bigtiff: this build has no TIFF support (libtiff was not found)");
  return 77;
}
#endif
