/* CCITT Group 4 (ITU-T T.6) coding of 1-bit rows, for the TIFF writer.
 *
 * T.6 codes every row against the row above it, its reference line (an
 * imaginary white line above the first row), with the two-dimensional
 * modes of T.4's "modified READ" coding (T.4 §4.2): pass, horizontal
 * (two runs in T.4's modified Huffman codes, §4.1) and the seven
 * vertical modes; no EOLs, and an EOFB (two EOLs) after the last row.
 * Which mode codes a changing element is fixed by the standard's coding
 * procedure (T.4 §4.2), so any correct coder gives these bits.
 *
 * Speed: a row's changing elements are found a 64-bit word at a time
 * (the word XOR itself shifted by one pixel has a bit set at every
 * change; counting trailing zeros walks them), kept as a list for the
 * coding line and as bitmaps for the reference line, where b1 is then
 * one unaligned load and a count of trailing zeros (past a long run, an
 * index of the words that hold a change: the coding stays linear in the
 * width); the codes go from
 * small tables into a 64-bit bit buffer stored without a branch. The
 * modes step from changing element to changing element, never through
 * pixels; Floyd–Steinberg noise has about 0.8 codes a pixel, nearly all
 * vertical, so the step per code is what costs (BENCHMARKS.md, "What
 * bounds the G4 TIFF").
 */
#include "imageio_priv.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

/* --------------------------------------------------------------- tables */

/* The codes as T.4 prints them (Tables 2, 3 and 4), turned into numbers
 * once. */
static const char *const white_term_bits[64] = {
  "00110101", "000111", "0111", "1000", "1011", "1100", "1110", "1111",
  "10011", "10100", "00111", "01000", "001000", "000011", "110100", "110101",
  "101010", "101011", "0100111", "0001100", "0001000", "0010111", "0000011", "0000100",
  "0101000", "0101011", "0010011", "0100100", "0011000", "00000010", "00000011", "00011010",
  "00011011", "00010010", "00010011", "00010100", "00010101", "00010110", "00010111", "00101000",
  "00101001", "00101010", "00101011", "00101100", "00101101", "00000100", "00000101", "00001010",
  "00001011", "01010010", "01010011", "01010100", "01010101", "00100100", "00100101", "01011000",
  "01011001", "01011010", "01011011", "01001010", "01001011", "00110010", "00110011", "00110100",
};
static const char *const black_term_bits[64] = {
  "0000110111", "010", "11", "10", "011", "0011", "0010", "00011",
  "000101", "000100", "0000100", "0000101", "0000111", "00000100", "00000111", "000011000",
  "0000010111", "0000011000", "0000001000", "00001100111", "00001101000", "00001101100", "00000110111", "00000101000",
  "00000010111", "00000011000", "000011001010", "000011001011", "000011001100", "000011001101", "000001101000", "000001101001",
  "000001101010", "000001101011", "000011010010", "000011010011", "000011010100", "000011010101", "000011010110", "000011010111",
  "000001101100", "000001101101", "000011011010", "000011011011", "000001010100", "000001010101", "000001010110", "000001010111",
  "000001100100", "000001100101", "000001010010", "000001010011", "000000100100", "000000110111", "000000111000", "000000100111",
  "000000101000", "000001011000", "000001011001", "000000101011", "000000101100", "000001011010", "000001100110", "000001100111",
};
/* make-up codes for 64, 128, ... 1728 */
static const char *const white_makeup_bits[27] = {
  "11011", "10010", "010111", "0110111", "00110110", "00110111", "01100100", "01100101", "01101000",
  "01100111", "011001100", "011001101", "011010010", "011010011", "011010100", "011010101", "011010110",
  "011010111", "011011000", "011011001", "011011010", "011011011", "010011000", "010011001", "010011010",
  "011000", "010011011",
};
static const char *const black_makeup_bits[27] = {
  "0000001111", "000011001000", "000011001001", "000001011011", "000000110011", "000000110100",
  "000000110101", "0000001101100", "0000001101101", "0000001001010", "0000001001011", "0000001001100",
  "0000001001101", "0000001110010", "0000001110011", "0000001110100", "0000001110101", "0000001110110",
  "0000001110111", "0000001010010", "0000001010011", "0000001010100", "0000001010101", "0000001011010",
  "0000001011011", "0000001100100", "0000001100101",
};
/* make-up codes for 1792, 1856, ... 2560, the same for both colours */
static const char *const shared_makeup_bits[13] = {
  "00000001000", "00000001100", "00000001101", "000000010010", "000000010011", "000000010100", "000000010101",
  "000000010110", "000000010111", "000000011100", "000000011101", "000000011110", "000000011111",
};
/* vertical modes by a1 - b1 + 3: VL3 VL2 VL1 V0 VR1 VR2 VR3 */
static const char *const vertical_bits[7] = { "0000010", "000010", "010", "1", "011", "000011", "0000011" };

typedef struct {
  uint16_t code; /* the bits, the last one lowest */
  uint16_t len;
} g4_code;

/* [colour][run]: terminating codes 0..63; [colour][64 + k]: make-up code
 * for 64 * k, k = 1..40 */
static g4_code run_codes[2][64 + 41];
static g4_code vertical[7];
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static g4_code from_bits(const char *s)
{
  g4_code c = { 0, 0 };
  for (; *s; s++, c.len++)
    c.code = (uint16_t)(c.code << 1 | (*s == '1'));
  return c;
}

static void make_tables(void)
{
  for (int r = 0; r < 64; r++) {
    run_codes[0][r] = from_bits(white_term_bits[r]);
    run_codes[1][r] = from_bits(black_term_bits[r]);
  }
  for (int k = 1; k <= 27; k++) {
    run_codes[0][64 + k] = from_bits(white_makeup_bits[k - 1]);
    run_codes[1][64 + k] = from_bits(black_makeup_bits[k - 1]);
  }
  for (int k = 28; k <= 40; k++)
    run_codes[0][64 + k] = run_codes[1][64 + k] = from_bits(shared_makeup_bits[k - 28]);
  for (int d = 0; d < 7; d++)
    vertical[d] = from_bits(vertical_bits[d]);
}

/* ------------------------------------------------------------ bit output */

/* The bits written so far: `pos` of them, all final but for the last
 * pos % 8, which acc also holds (the last bit lowest). Two words, so
 * that the state lives in registers and passes in and out of a function
 * in them. */
typedef struct {
  uint64_t acc;
  uint64_t pos;
} bits;

static inline void store_be64(uint8_t *p, uint64_t v)
{
  if (hti_little_endian())
    v = __builtin_bswap64(v);
  memcpy(p, &v, 8);
}

/* 1 <= len <= 32. The bytes from the first unfinished one go out at
 * every call, 8 of them, without a branch (which noise's codes would
 * mispredict); the ones not yet final are written again later. The
 * only state carried from code to code is pos + len and acc. */
static inline bits put(bits b, uint8_t *out, uint32_t code, unsigned len)
{
  unsigned n = (unsigned)(b.pos & 7) + len;
  b.acc = b.acc << len | code;
  store_be64(out + (b.pos >> 3), b.acc << (64 - n));
  b.pos += len;
  return b;
}

/* Horizontal mode: the mode's code, then a run of r1 pixels of colour c
 * and one of r2 of the other colour (T.4 §4.1), either 64 or longer:
 * make-up codes of 2560 while at least 2560 are left, one make-up code
 * for the multiple of 64 below what is left, then the terminating code
 * of the rest. Out of line: rare, and it would take registers from the
 * loop of the common modes. */
__attribute__((noinline)) static bits put_long_runs(bits b, uint8_t *out, unsigned c, uint32_t r1, uint32_t r2)
{
  b = put(b, out, 1, 3);
  for (int k = 0; k < 2; k++, c ^= 1) {
    uint32_t run = k ? r2 : r1;
    for (; run >= 2560; run -= 2560)
      b = put(b, out, run_codes[c][64 + 40].code, run_codes[c][64 + 40].len);
    if (run >= 64) {
      g4_code m = run_codes[c][64 + (run >> 6)];
      b = put(b, out, m.code, m.len);
      run &= 63;
    }
    b = put(b, out, run_codes[c][run].code, run_codes[c][run].len);
  }
  return b;
}

/* ----------------------------------------------------- changing elements */

static inline uint64_t load64_le(const uint8_t *p)
{
  uint64_t v;
  memcpy(&v, p, 8);
  return hti_little_endian() ? v : __builtin_bswap64(v);
}

/* Pixel i of the 8 bytes at bit i: bytes hold their first pixel in the
 * highest bit, so the bits of each byte are reversed. */
static inline uint64_t reverse_in_bytes(uint64_t x)
{
  x = (x >> 1 & 0x5555555555555555u) | (x & 0x5555555555555555u) << 1;
  x = (x >> 2 & 0x3333333333333333u) | (x & 0x3333333333333333u) << 2;
  return (x >> 4 & 0x0f0f0f0f0f0f0f0fu) | (x & 0x0f0f0f0f0f0f0f0fu) << 4;
}

/* Bits set in x (not __builtin_popcountll: without a popcount
 * instruction in the target that is a call). */
static inline unsigned ones(uint64_t x)
{
  x -= x >> 1 & 0x5555555555555555u;
  x = (x & 0x3333333333333333u) + (x >> 2 & 0x3333333333333333u);
  x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fu;
  return (unsigned)((x * 0x0101010101010101u) >> 56);
}

/* Appends base + the position of every bit set in d; may write up to 3
 * entries past the last (garbage, overwritten later). */
static inline uint32_t *emit_positions(uint32_t *o, uint64_t d, uint32_t base)
{
  uint32_t *stop = o + ones(d);
  while (o < stop) {
    /* the top bit keeps ctz defined once d is spent */
    o[0] = base + (uint32_t)__builtin_ctzll(d | 1ull << 63);
    d &= d - 1;
    o[1] = base + (uint32_t)__builtin_ctzll(d | 1ull << 63);
    d &= d - 1;
    o[2] = base + (uint32_t)__builtin_ctzll(d | 1ull << 63);
    d &= d - 1;
    o[3] = base + (uint32_t)__builtin_ctzll(d | 1ull << 63);
    d &= d - 1;
    o += 4;
  }
  return stop;
}

static inline void store64_le(uint8_t *p, uint64_t v)
{
  if (!hti_little_endian())
    v = __builtin_bswap64(v);
  memcpy(p, &v, 8);
}

/* Words a row's bitmap of one colour takes (map_words(width) * 8 bytes
 * apart the two colours). */
static inline size_t map_words(uint32_t width) { return (size_t)width / 64 + 3; }

/* The reference line's two bitmaps (find_changes), and for each the
 * index of its words that have a bit set, `next[k]`: the first such word
 * at or after word k. The index is built the first time a search on the
 * row finds a word without a bit (a long run), once per row and map, so
 * that every search takes the same few steps however far its bit lies:
 * searching word by word from a0, as the codes below a long white run
 * did, made a row's coding quadratic in the width (2 rows of gray 128
 * at 1M pixels: 5.4 s). Noise never needs it. */
typedef struct {
  const uint8_t *map;
  size_t words;      /* map_words(width)                              */
  uint32_t *next[2]; /* the index of each map, `words` entries        */
  bool built[2];
} reference;

/* Words read by searches beyond their first load (the index built, one
 * a search): linear in the width; for tests (test-g4.c). */
static _Atomic uint64_t far_words;

uint64_t hti_g4_far_words(void) { return atomic_load_explicit(&far_words, memory_order_relaxed); }

/* The first bit set after the first load of next_set: at word p / 64 or
 * later, p = the first bit that load did not see (bits s.. p - 1 were
 * clear, and word p / 64 holds none below s). */
__attribute__((noinline)) static int32_t next_set_far(reference *r, int map, uint32_t s)
{
  const uint8_t *m = r->map + (size_t)map * 8 * r->words;
  uint32_t *next = r->next[map];
  if (!r->built[map]) { /* the last word is all sentinels: never clear */
    uint32_t k = (uint32_t)r->words - 1;
    next[k] = k;
    while (k-- > 0)
      next[k] = load64_le(m + 8 * (size_t)k) ? k : next[k + 1];
    r->built[map] = true;
    atomic_fetch_add_explicit(&far_words, r->words, memory_order_relaxed);
  }
  atomic_fetch_add_explicit(&far_words, 1, memory_order_relaxed);
  uint32_t p = ((s >> 3) + 8) * 8, k = next[p / 64];
  return (int32_t)(64 * k + (uint32_t)__builtin_ctzll(load64_le(m + 8 * (size_t)k)));
}

/* The first bit set after position s - 1 of bitmap `map` (0: changes to
 * black, 1: to white; bit i in byte i / 8, at bit i % 8): one unaligned
 * load sees 57 bits or more, nearly always enough for noise; line art's
 * long runs go through the index, up to the sentinels. */
static inline int32_t next_set(reference *r, int map, uint32_t s)
{
  uint64_t w = load64_le(r->map + (size_t)map * 8 * r->words + (s >> 3)) >> (s & 7);
  if (__builtin_expect(w == 0, 0))
    return next_set_far(r, map, s);
  return (int32_t)(s + (uint32_t)__builtin_ctzll(w));
}

/* The changing elements of a row (T.4 §4.2: pixels whose colour
 * differs from the pixel before; before the first is white) two ways:
 *   list: positions ascending, then `width` four times; entry k changes
 *         to black when k is even; width + 8 entries. The coding line's:
 *         a1, a2 are the next entries.
 *   map:  two bitmaps, the changes to black, then map_words(width) words
 *         on, those to white; bit i at pixel i; every bit from `width` on
 *         set, so that a search ends at width or just after. The
 *         reference line's: b1 is the first bit right of a0 in the
 *         colour opposite to a0's, found without walking a list. */
static void find_changes(const uint8_t *row, uint32_t width, uint32_t *list, uint8_t *map)
{
  uint32_t *o = list;
  uint8_t *white = map + 8 * map_words(width);
  uint64_t carry = 0; /* the previous word's last pixel, in bit 0 */
  uint32_t full = width / 64, w = 0;
  for (; w < full; w++) {
    uint64_t x = reverse_in_bytes(load64_le(row + (size_t)w * 8)), d = x ^ (x << 1 | carry);
    store64_le(map + 8 * (size_t)w, d & x);
    store64_le(white + 8 * (size_t)w, d & ~x);
    o = emit_positions(o, d, w * 64);
    carry = x >> 63;
  }
  uint32_t rest = width % 64;
  if (rest) { /* the last bytes, without reading past the row */
    uint8_t tail[8] = { 0 };
    memcpy(tail, row + (size_t)full * 8, (rest + 7) / 8);
    uint64_t mask = ~0ull >> (64 - rest), x = reverse_in_bytes(load64_le(tail)) & mask;
    uint64_t d = (x ^ (x << 1 | carry)) & mask;
    store64_le(map + 8 * (size_t)w, (d & x) | ~mask);
    store64_le(white + 8 * (size_t)w, (d & ~x) | ~mask);
    o = emit_positions(o, d, full * 64);
    w++;
  }
  for (; w < map_words(width); w++) {
    store64_le(map + 8 * (size_t)w, ~0ull);
    store64_le(white + 8 * (size_t)w, ~0ull);
  }
  for (int i = 0; i < 4; i++)
    o[i] = width;
}

/* -------------------------------------------------------------- coding */

/* One row, its changing elements `a` (list) against the reference line's
 * (maps), by the coding procedure of T.4 §4.2. a0 starts on the
 * imaginary white pixel before the first; its colour is white while
 * `opp`, the bitmap of the opposite colour's changes, is 0, black while
 * it is 1. */
__attribute__((noinline)) /* registers of its own, none spent on the rows' loop */
static bits code_row(bits b, uint8_t *out, const uint32_t *a, reference *ref, int32_t width)
{
  int32_t a0 = -1;
  int opp = 0;
  while (a0 < width) {
    int32_t a1 = (int32_t)a[0], b1 = next_set(ref, opp, (uint32_t)(a0 + 1)), d = a1 - b1;
    /* a1 <= b1 + 1 <= b2: no pass, and b2 need not be found (nearly
     * every code of noise: VL3..VR1) */
    if (d > 1 || d < -3) {
      int32_t b2 = next_set(ref, opp ^ 1, (uint32_t)(b1 + 1));
      if (b2 < a1) { /* pass: a0 moves below b2, its colour stays */
        b = put(b, out, 1, 4);
        a0 = b2;
        continue;
      }
      if (d > 3 || d < -3) { /* horizontal: the runs a0..a1 and a1..a2 */
        unsigned c = (unsigned)opp;
        uint32_t r1 = (uint32_t)(a1 - (a0 < 0 ? 0 : a0)), r2 = a[1] - (uint32_t)a1;
        if (r1 < 64 && r2 < 64) {
          g4_code x = run_codes[c][r1], y = run_codes[c ^ 1][r2];
          b = put(b, out, (1u << x.len | x.code) << y.len | y.code, 3u + x.len + y.len);
        } else {
          b = put_long_runs(b, out, c, r1, r2);
        }
        a0 = (int32_t)a[1];
        a += 2;
        continue;
      }
    }
    g4_code v = vertical[d + 3]; /* vertical: a0 moves to a1, its colour flips */
    b = put(b, out, v.code, v.len);
    a0 = a1;
    opp ^= 1;
    a++;
  }
  return b;
}

size_t hti_g4_bound(uint32_t width, uint32_t rows)
{
  /* a code moves a0 on by at least one pixel, at most 7 bits a pixel
   * (VL3, VR3), but for the first of a row (14 bits: horizontal, white 0,
   * black 1); then the EOFB and the 8 bytes put stores at a time */
  return (size_t)rows * ((size_t)width + 4) + 16;
}

size_t hti_g4_encode(const uint8_t *pixels, size_t stride, uint32_t width, uint32_t rows, uint8_t *out)
{
  pthread_once(&tables_once, make_tables);
  size_t words = map_words(width), map_bytes = 2 * 8 * words;
  uint32_t *list = malloc(((size_t)width + 8) * sizeof *list), *index = malloc(2 * words * sizeof *index);
  uint8_t *maps = malloc(2 * map_bytes), *white = calloc(((size_t)width + 7) / 8, 1);
  if (!list || !index || !maps || !white) {
    free(list);
    free(index);
    free(maps);
    free(white);
    return 0;
  }
  uint8_t *ref = maps, *next = maps + map_bytes;
  find_changes(white, width, list, ref); /* the imaginary white line above */
  free(white);
  bits b = { 0, 0 };
  for (uint32_t y = 0; y < rows; y++) {
    find_changes(pixels + (size_t)y * stride, width, list, next);
    reference r = { ref, words, { index, index + words }, { false, false } };
    b = code_row(b, out, list, &r, (int32_t)width);
    uint8_t *t = ref;
    ref = next;
    next = t;
  }
  free(list);
  free(index);
  free(maps);
  b = put(b, out, 1, 12); /* EOFB */
  b = put(b, out, 1, 12);
  /* put stored the last bits already, zeros after them */
  return (size_t)((b.pos + 7) >> 3);
}
