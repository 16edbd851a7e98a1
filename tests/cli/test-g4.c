/* test-g4: the TIFF writer's own CCITT G4 coder (imageio/imageio_g4.c)
 * against libtiff. Every image is coded by hti_g4_encode, put into a
 * TIFF as its one strip (TIFFWriteRawStrip) and decoded by libtiff's
 * G4 decoder (TIFFReadEncodedStrip): the rows must come back bit for
 * bit. The same rows are also coded by libtiff's own G4 coder, whose
 * strip must hold the same bytes (T.6 fixes the mode of every changing
 * element, so two correct coders agree; libtiff's also pads the EOFB to
 * a byte with zeros). Images: widths 1..70 and around the 64-bit words
 * and fax widths, up to 16385; all white, all black, alternating bits,
 * noise of several densities, single black pixels at word and byte
 * edges, every run length from 0 to 2700 of both colours and runs of
 * many 2560s, rows shifted against the row above (vertical and pass
 * modes) and the core's Floyd–Steinberg output; rows of 2^20 pixels
 * whose coding must read a number of words linear in the width
 * (hti_g4_far_words). Exits 77 without TIFF.
 */
#include "imageio_priv.h"

#include "ht-test.h"

#if HT_HAVE_TIFF
#include "ht-g4.h"

static FILE *scratch; /* the temporary file every TIFF goes through */
static int images;

static void silent(const char *module, const char *fmt, va_list ap) { (void)module, (void)fmt, (void)ap; }

static size_t first_difference(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
  size_t i = 0;
  while (i < an && i < bn && a[i] == b[i])
    i++;
  return i;
}

/* Codes the rows (`stride` apart, bits past w and bytes past the row
 * filled with garbage) with ours and with libtiff's coder, decodes ours
 * with libtiff's decoder and compares. */
static void check(const uint8_t *px, size_t stride, uint32_t w, uint32_t h, const char *what)
{
  images++;
  size_t rb = ((size_t)w + 7) / 8, bound = hti_g4_bound(w, h);
  uint8_t *ours = xmalloc(bound + 64);
  memset(ours, 0xEE, bound + 64);
  size_t len = hti_g4_encode(px, stride, w, h, ours);
  CHECK(len > 0 && len <= bound, "%s %ux%u: coded %zu bytes, bound %zu", what, w, h, len, bound);
  for (size_t i = bound; i < bound + 64; i++)
    if (ours[i] != 0xEE) {
      CHECK(0, "%s %ux%u: wrote past the bound", what, w, h);
      break;
    }
  /* libtiff's own coder, on the rows packed without gaps */
  uint8_t *packed = xmalloc(rb * h);
  for (uint32_t y = 0; y < h; y++)
    memcpy(packed + y * rb, px + y * stride, rb);
  TIFF *tif = ht_g4_open(fileno(scratch), "w");
  CHECK(tif != NULL, "cannot open a TIFF on the scratch file");
  if (!tif)
    exit(99);
  ht_g4_tags(tif, w, h);
  CHECK(TIFFWriteEncodedStrip(tif, 0, packed, (tmsize_t)(rb * h)) >= 0, "%s: libtiff cannot code", what);
  TIFFClose(tif);
  tif = ht_g4_open(fileno(scratch), "r");
  uint64_t *counts = NULL;
  TIFFGetField(tif, TIFFTAG_STRIPBYTECOUNTS, &counts);
  size_t theirs_len = counts ? (size_t)counts[0] : 0;
  uint8_t *theirs = xmalloc(theirs_len);
  CHECK(TIFFReadRawStrip(tif, 0, theirs, (tmsize_t)theirs_len) == (tmsize_t)theirs_len, "%s: raw strip", what);
  TIFFClose(tif);
  CHECK(theirs_len == len && memcmp(theirs, ours, len) == 0,
        "%s %ux%u: %zu bytes, libtiff's coder %zu, first difference at byte %zu", what, w, h, len, theirs_len,
        first_difference(ours, len, theirs, theirs_len));
  /* ours, decoded by libtiff */
  int64_t bad = ht_g4_decode_compare(fileno(scratch), ours, len, packed, w, h);
  CHECK(bad == -1, "%s %ux%u: %s %lld", what, w, h, bad == -2 ? "libtiff cannot decode it" : "other pixels from row",
        (long long)bad);
  free(ours), free(packed), free(theirs);
}

static inline void set_px(uint8_t *row, uint32_t x, int black)
{
  if (black)
    row[x >> 3] |= (uint8_t)(0x80u >> (x & 7));
  else
    row[x >> 3] &= (uint8_t)~(0x80u >> (x & 7));
}

enum { WHITE, BLACK, ALTERNATE, CHECKER, SPARSE, HALF, DENSE, EDGES, SHIFTED, RAMP, KINDS };
static const char *const kind_name[KINDS] = { "white", "black", "alternating", "checker", "noise 0.01",
                                             "noise 0.5", "noise 0.99", "word edges", "shifted rows", "run ramp" };

/* An image of `kind` into rows `stride` apart: bits past w and the
 * bytes after each row get garbage, which the coder must not read. */
static void make(uint8_t *px, size_t stride, uint32_t w, uint32_t h, int kind, uint64_t seed)
{
  uint64_t s = seed * 0x9E3779B97F4A7C15u + 1;
  for (size_t i = 0; i < stride * h; i++)
    px[i] = (uint8_t)rng_next(&s);
  uint32_t run = 1, left = 1, colour = 0; /* RAMP: runs 1, 2, ... of alternating colours */
  for (uint32_t y = 0; y < h; y++) {
    uint8_t *row = px + (size_t)y * stride;
    for (uint32_t x = 0; x < w; x++) {
      int b = 0;
      uint64_t r = rng_next(&s) % 1000;
      switch (kind) {
      case BLACK: b = 1; break;
      case ALTERNATE: b = (int)(x & 1); break;
      case CHECKER: b = (int)((x ^ y) & 1); break;
      case SPARSE: b = r < 10; break;
      case HALF: b = r < 500; break;
      case DENSE: b = r < 990; break;
      case EDGES: { /* lone pixels at both ends of words and bytes, moving row by row */
        uint32_t m = (x + y) % 64;
        b = m == 0 || m == 63 || (x + 2 * y) % 8 == 7 * (y & 1);
        break;
      }
      case SHIFTED: /* the row above moved by -4..4, with a little noise */
        if (y == 0)
          b = r < 300;
        else {
          int d = (int)(y * 7 % 9) - 4;
          int64_t sx = (int64_t)x + d;
          const uint8_t *up = row - stride;
          b = sx >= 0 && sx < w ? (up[sx >> 3] >> (7 - (sx & 7))) & 1 : 0;
          b ^= r < 20;
        }
        break;
      case RAMP: /* every other row white, so the runs go out in horizontal mode */
        if (y & 1)
          break;
        b = (int)colour;
        if (--left == 0) {
          colour ^= 1;
          if (colour == 0) /* both colours had this length */
            run = run >= 2700 ? 1 : run + 1;
          left = run;
        }
        break;
      default: break;
      }
      set_px(row, x, b);
    }
  }
}

static void check_kind(uint32_t w, uint32_t h, int kind, uint64_t seed)
{
  size_t stride = ((size_t)w + 7) / 8 + 3;
  uint8_t *px = xmalloc(stride * h);
  make(px, stride, w, h, kind, seed);
  check(px, stride, w, h, kind_name[kind]);
  free(px);
}

/* The core's Floyd–Steinberg on a smooth gradient with noise: the coder's
 * real input. */
static void check_fs(uint32_t w, uint32_t h, uint64_t seed)
{
  uint8_t *in = xmalloc((size_t)w * h);
  fill_random(in, w, w, h, 1, seed);
  for (uint32_t y = 0; y < h; y++)
    for (uint32_t x = 0; x < w; x++) /* half the image a ramp, for every density */
      if (x < w / 2)
        in[(size_t)y * w + x] = (uint8_t)(x * 255u / (w / 2 ? w / 2 : 1));
  size_t stride = ((size_t)w + 7) / 8 + 1;
  uint8_t *out = xmalloc(stride * h);
  ht_context *ctx = ht_context_new();
  ht_params p;
  ht_params_init(&p);
  ht_image I = { w, h, w, 1, HT_FORMAT_U8, in };
  ht_image O = { w, h, stride, 1, HT_FORMAT_BIT1, out };
  CHECK(ctx && ht_run(ctx, &I, &O, &p) == HT_OK, "Floyd–Steinberg %ux%u did not run", w, h);
  check(out, stride, w, h, "Floyd-Steinberg");
  ht_context_free(ctx);
  free(in), free(out);
}

/* Rows of 2^20 pixels: the coding must stay linear in the width. The
 * searches for b1 and b2 read each reference bitmap's words at most once
 * a row (the index) and one word a search; searching word by word from
 * a0, as the coder once did below long white runs, read the rest of the
 * row for every code: gray 128's alternating pixels under the white line
 * above the first row, 2^20 codes times 2^14 words. Compared with the
 * decoder of libtiff (its coder is as slow as the old one here). */
static void check_wide(void)
{
  const uint32_t w = 1u << 20, h = 4;
  const size_t rb = (w + 7) / 8, words = w / 64 + 3;
  uint8_t *px = xmalloc(rb * h);
  for (int pattern = 0; pattern < 3; pattern++) {
    for (uint32_t y = 0; y < h; y++) {
      uint8_t *row = px + y * rb;
      for (size_t i = 0; i < rb; i++) {
        switch (pattern) {
        case 0: row[i] = y & 1 ? 0x55 : 0xAA; break;                  /* Floyd-Steinberg's gray 128 */
        case 1: row[i] = i < rb / 2 ? 0 : (uint8_t)(0xAA >> (y & 1)); break; /* white, then gray */
        default: row[i] = (i * 7919 + y) % 4099 == 0 ? 0x10 : 0; break; /* lone dots on white */
        }
      }
    }
    size_t bound = hti_g4_bound(w, h);
    uint8_t *coded = xmalloc(bound);
    uint64_t before = hti_g4_far_words();
    size_t len = hti_g4_encode(px, rb, w, h, coded);
    uint64_t read = hti_g4_far_words() - before;
    /* each row: both bitmaps' words once, and a word for each search (at
     * most two a changing element, plus the row's end) */
    uint64_t most = (uint64_t)h * (2 * words + 2 * ((uint64_t)w + 2));
    CHECK(read <= most, "%u wide, pattern %d: the searches read %llu words, more than %llu (linear in the width)",
          (unsigned)w, pattern, (unsigned long long)read, (unsigned long long)most);
    CHECK(len > 0 && len <= bound, "%u wide, pattern %d: coded %zu bytes", (unsigned)w, pattern, len);
    int64_t bad = ht_g4_decode_compare(fileno(scratch), coded, len, px, w, h);
    CHECK(bad == -1, "%u wide, pattern %d: libtiff decodes %s %lld", (unsigned)w, pattern,
          bad == -2 ? "nothing" : "other pixels from row", (long long)bad);
    images++;
    free(coded);
  }
  free(px);
}

int main(void)
{
  TIFFSetErrorHandler(silent); /* a failure shows as a failed check */
  TIFFSetWarningHandler(silent);
  scratch = tmpfile();
  if (!scratch) {
    perror("test-g4: tmpfile");
    return 99;
  }
  for (uint32_t w = 1; w <= 70; w++)
    for (int kind = 0; kind < KINDS; kind++)
      for (uint32_t h = 1; h <= 9; h += 4)
        check_kind(w, h, kind, w * 131u + h);
  static const uint32_t wide[] = { 127, 128, 129, 191, 192, 193, 1727, 1728, 1729, 2561, 16385 };
  for (size_t i = 0; i < sizeof wide / sizeof *wide; i++)
    for (int kind = 0; kind < KINDS; kind++)
      if (kind != RAMP)
        check_kind(wide[i], wide[i] > 2000 ? 24 : 40, kind, i);
  /* every run length 1..2700 of both colours (about 450 rows of 16385);
   * the all-black and white rows above give runs of 6 x 2560 + 1025 */
  check_kind(16385, 452, RAMP, 1);
  check_kind(1729, 20, RAMP, 2);
  check_fs(16385, 32, 7);
  check_fs(1728, 200, 8);
  for (uint32_t w = 1; w <= 70; w += 3)
    check_fs(w, 30, w);
  check_wide();
  fclose(scratch);
  printf("test-g4: %d images\n", images);
  return test_finish("test-g4");
}
#else
int main(void)
{
  puts("test-g4: this build has no TIFF support (libtiff was not found)");
  return 77;
}
#endif
