/* libFuzzer target: the image readers of the tools (imageio/imageio.h):
 * PBM/PGM/PPM/PAM in every variant, PNG, TIFF and JPEG. The input is given to
 * hti_read twice: as a regular file (a memfd, mapped as a file on disk
 * is) and, when it fits in a pipe's buffer, through a pipe (read as far
 * as its format goes, within a memory budget of 1 KiB to 32 MiB that the
 * last byte picks, so that the stream readers' bounds are met anywhere).
 * A decoded image must describe itself sanely, every sample it claims
 * must be readable (AddressSanitizer sees any read past the buffer), the
 * gray plane of the tools must come out, and a refusal must give a
 * one-line message. The same bytes are also taken as 1-bit
 * rows (the first two bytes give the width) for the TIFF writer's G4
 * coder, whose strip libtiff's decoder must turn back into those rows.
 * Any breach aborts, which libFuzzer reports as a crash.
 */
#include "imageio_priv.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static __attribute__((noreturn)) void fail(const char *how, const char *what, const char *detail)
{
  fprintf(stderr, "fuzz-imageio (%s): %s: %s\n", how, what, detail);
  abort();
}

static volatile uint32_t sink; /* keeps the reads of every sample */

static void read_path(const char *path, const char *how)
{
  hti_image img;
  char err[512];
  memset(err, 'x', sizeof err);
  if (!hti_read(path, &img, err, sizeof err)) {
    if (!memchr(err, '\0', sizeof err) || err[0] == '\0' || strchr(err, '\n'))
      fail(how, "a refusal without a one-line message", "");
    return;
  }
  char what[160];
  snprintf(what, sizeof what, "%lldx%lld, %d channel(s), depth %d, stride %zu", (long long)img.width,
           (long long)img.height, img.channels, img.depth, img.stride);
  if (img.width < 1 || img.height < 1 || img.channels < 1 || img.channels > 4 ||
      (img.depth != 8 && img.depth != 16) || !img.pixels || !img.format ||
      img.stride < (size_t)img.width * (size_t)img.channels * (size_t)img.depth / 8 ||
      (img.has_alpha && img.channels != 2 && img.channels != 4) ||
      (img.cmyk && (img.channels != 4 || img.has_alpha)) || (img.icc != NULL) != (img.icc_len > 0) ||
      img.pages < 1 || !(img.xdpi >= 0) || !(img.ydpi >= 0))
    fail(how, "an image that does not describe itself", what);
  if (img.icc) { /* every byte of the profile readable, its header parsed */
    char space[16], desc[64];
    uint32_t s = 0;
    for (size_t i = 0; i < img.icc_len; i++)
      s += img.icc[i];
    sink = s;
    hti_icc_info(img.icc, img.icc_len, space, sizeof space, desc, sizeof desc);
  }
  const size_t row = (size_t)img.width * (size_t)img.channels * (size_t)img.depth / 8;
  uint32_t sum = 0;
  for (int64_t y = 0; y < img.height; y++) {
    const uint8_t *p = img.pixels + (size_t)y * img.stride;
    for (size_t i = 0; i < row; i++)
      sum += p[i];
  }
  sink = sum;
  uint8_t *gray = hti_gray8(&img, -1);
  if (gray) {
    sink += gray[(size_t)img.width * (size_t)img.height - 1];
    free(gray);
  }
  if (img.cmyk && hti_cmyk_to_rgb(&img, err, sizeof err) && (img.channels != 3 || img.cmyk))
    fail(how, "CMYK to RGB gave no RGB image", what);
  hti_release(&img);
}

#if HT_HAVE_TIFF
#include "ht-g4.h"

/* The input as rows of 1..4096 pixels (at most 256 of them), coded by
 * hti_g4_encode and decoded by libtiff through the file fd. */
static void g4_round_trip(const uint8_t *data, size_t size, int fd)
{
  if (size < 3)
    return;
  uint32_t w = 1 + (((uint32_t)data[0] | (uint32_t)data[1] << 8) % 4096);
  size_t rb = ((size_t)w + 7) / 8, h = (size - 2) / rb;
  if (h == 0)
    return;
  if (h > 256)
    h = 256;
  uint8_t *coded = malloc(hti_g4_bound(w, (uint32_t)h));
  size_t len = coded ? hti_g4_encode(data + 2, rb, w, (uint32_t)h, coded) : 0;
  if (!len)
    abort();
  int64_t bad = ht_g4_decode_compare(fd, coded, len, data + 2, w, (uint32_t)h);
  free(coded);
  if (bad != -1) {
    char what[64];
    snprintf(what, sizeof what, "%u x %zu, row %lld", w, h, (long long)bad);
    fail("G4", "the coded rows decode to other pixels", what);
  }
}
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static int file = -1;
  char path[64];

  /* a regular file */
  if (file < 0 && (file = memfd_create("fuzz-imageio", 0)) < 0)
    abort();
  if (ftruncate(file, 0) != 0 || (size && pwrite(file, data, size, 0) != (ssize_t)size))
    abort();
  snprintf(path, sizeof path, "/proc/self/fd/%d", file);
  read_path(path, "file");
#if HT_HAVE_TIFF
  static int g4_file = -1;
  if (g4_file < 0 && (g4_file = memfd_create("fuzz-imageio-g4", 0)) < 0)
    abort();
  g4_round_trip(data, size, g4_file);
#endif

  /* a pipe, written whole and closed before it is read, under a memory
   * budget of 1 KiB .. 32 MiB that the last byte picks: the stream
   * readers' bounds (the image a header declares, then the bytes beside
   * it) meet it at every point of a stream */
  int fds[2];
  if (size <= 60000 && pipe(fds) == 0) {
    if (fcntl(fds[1], F_SETPIPE_SZ, 65536) >= 0 && write(fds[1], data, size) == (ssize_t)size) {
      close(fds[1]);
      snprintf(path, sizeof path, "/proc/self/fd/%d", fds[0]);
      hti_set_memory_limit(size ? (uint64_t)1 << (10 + data[size - 1] % 16) : 0);
      read_path(path, "pipe");
      hti_set_memory_limit(0);
    } else {
      close(fds[1]);
    }
    close(fds[0]);
  }
  return 0;
}
