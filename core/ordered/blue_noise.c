/* Ordered dithering with a blue-noise mask (void_and_cluster.c): each
 * pixel against the threshold of its rank in the mask, as bayer.c does
 * with Bayer's matrix; any levels, rows on the job's threads.
 *
 * A mask is made once for each (size, seed) and kept: in this process
 * (so that a GIMP preview, which runs the op again for every change,
 * never makes one twice) and in the user's cache folder, one file a mask,
 * written to a temporary file and renamed into place, so that a reader
 * sees a whole file or none. A file that does not hold what its name
 * says (short, another version, a bad checksum, not a permutation) is
 * ignored and written anew. The cache is only ever a shortcut: the
 * ranks are the same made or read, and a folder that cannot be written
 * costs a remake, never a failed run.
 *
 * Plane p reads the mask shifted by half its side in x, y or both, so that
 * the planes of a colour image do not put their dots on the same pixels
 * (a blue-noise mask is nearly uncorrelated with itself so far away). */
#include "ordered.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Part of the cache file's name and header: a change of the generator
 * that changes any rank bumps it, so that old files are never read. */
#define MASK_VERSION 1
#define MAGIC "HTBN"
#define HEADER_BYTES 32

/* ------------------------------------------------------------ the cache */

/* Masks made or read in this process, the newest first. */
#define KEPT 4
typedef struct {
  int n;
  uint64_t seed;
  uint32_t *rank;
} kept_mask;
static kept_mask kept[KEPT];
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t checksum(const uint32_t *rank, size_t cells)
{
  uint64_t h = 0xcbf29ce484222325u; /* FNV-1a over the ranks' values */
  for (size_t i = 0; i < cells; i++) {
    h = (h ^ rank[i]) * 0x100000001b3u;
  }
  return h;
}

static void put_u32(unsigned char *b, uint32_t v)
{
  for (int i = 0; i < 4; i++)
    b[i] = (unsigned char)(v >> (8 * i));
}

static void put_u64(unsigned char *b, uint64_t v)
{
  for (int i = 0; i < 8; i++)
    b[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get_u32(const unsigned char *b)
{
  return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static uint64_t get_u64(const unsigned char *b) { return (uint64_t)get_u32(b) | (uint64_t)get_u32(b + 4) << 32; }

/* The cache folder, created where missing: $XDG_CACHE_HOME/gegl-halftone
 * where that is an absolute path, else ~/.cache/gegl-halftone. False
 * where there is none. */
static bool cache_dir(char *dir, size_t size)
{
  const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  int w;
  if (xdg && xdg[0] == '/')
    w = snprintf(dir, size, "%s", xdg);
  else if (home && home[0] == '/')
    w = snprintf(dir, size, "%s/.cache", home);
  else
    return false;
  if (w < 0 || (size_t)w >= size)
    return false;
  if (mkdir(dir, 0700) != 0 && errno != EEXIST)
    return false;
  const size_t len = strlen(dir);
  w = snprintf(dir + len, size - len, "/gegl-halftone");
  if (w < 0 || (size_t)w >= size - len)
    return false;
  return mkdir(dir, 0700) == 0 || errno == EEXIST;
}

static bool cache_path(int n, uint64_t seed, char *path, size_t size)
{
  char dir[4096];
  if (!cache_dir(dir, sizeof dir))
    return false;
  const int w = snprintf(path, size, "%s/blue-noise-v%d-%d-%016llx.bin", dir, MASK_VERSION, n,
                         (unsigned long long)seed);
  return w > 0 && (size_t)w < size;
}

/* The file's ranks where it holds the mask of (n, seed) whole. */
static bool read_cached(const char *path, int n, uint64_t seed, uint32_t *rank)
{
  const size_t cells = (size_t)n * (size_t)n;
  FILE *f = fopen(path, "rb");
  if (!f)
    return false;
  unsigned char h[HEADER_BYTES];
  bool ok = fread(h, 1, sizeof h, f) == sizeof h && memcmp(h, MAGIC, 4) == 0 && get_u32(h + 4) == MASK_VERSION &&
            get_u32(h + 8) == (uint32_t)n && get_u64(h + 16) == seed;
  unsigned char *b = ok ? malloc(cells * 4) : NULL;
  ok = ok && b && fread(b, 4, cells, f) == cells && fgetc(f) == EOF;
  fclose(f);
  uint8_t *seen = ok ? calloc(cells, 1) : NULL;
  ok = ok && seen;
  for (size_t i = 0; ok && i < cells; i++) {
    rank[i] = get_u32(b + 4 * i);
    ok = rank[i] < cells && !seen[rank[i]];
    if (ok)
      seen[rank[i]] = 1;
  }
  ok = ok && checksum(rank, cells) == get_u64(h + 24);
  free(b);
  free(seen);
  return ok;
}

/* Writes the mask to a temporary file beside `path` and renames it
 * into place; nothing is left behind where that fails. */
static void write_cached(const char *path, int n, uint64_t seed, const uint32_t *rank)
{
  const size_t cells = (size_t)n * (size_t)n;
  char tmp[4200];
  if (snprintf(tmp, sizeof tmp, "%s.XXXXXX", path) >= (int)sizeof tmp)
    return;
  const int fd = mkstemp(tmp);
  if (fd < 0)
    return;
  FILE *f = fdopen(fd, "wb");
  unsigned char *b = malloc(HEADER_BYTES + cells * 4);
  bool ok = f && b;
  if (ok) {
    memset(b, 0, HEADER_BYTES);
    memcpy(b, MAGIC, 4);
    put_u32(b + 4, MASK_VERSION);
    put_u32(b + 8, (uint32_t)n);
    put_u64(b + 16, seed);
    put_u64(b + 24, checksum(rank, cells));
    for (size_t i = 0; i < cells; i++)
      put_u32(b + HEADER_BYTES + 4 * i, rank[i]);
    ok = fwrite(b, 1, HEADER_BYTES + cells * 4, f) == HEADER_BYTES + cells * 4 && fflush(f) == 0 &&
         fsync(fd) == 0;
  }
  free(b);
  if (f)
    ok = fclose(f) == 0 && ok;
  else
    close(fd);
  if (!ok || rename(tmp, path) != 0)
    unlink(tmp);
}

static ht_status refuse(char *why, size_t n, ht_status s, const char *fmt, ...)
{
  if (why && n) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, n, fmt, ap);
    va_end(ap);
  }
  return s;
}

ht_status ht_blue_noise_mask(int size, uint64_t seed, bool cached, uint32_t *rank, char *why, size_t why_size)
{
  if (!rank)
    return refuse(why, why_size, HT_ERR_INVALID_ARGUMENT, "no place for the mask");
  if (size < 2 || size > HT_NOISE_SIZE_MAX || (size & (size - 1)) != 0)
    return refuse(why, why_size, HT_ERR_INVALID_ARGUMENT, "a blue-noise mask's size must be a power of two 2..%d, "
                  "got %d", HT_NOISE_SIZE_MAX, size);
  const size_t cells = (size_t)size * (size_t)size;
  if (!cached) {
    const ht_status s = ht_void_and_cluster(size, seed, rank);
    return s == HT_OK ? HT_OK : refuse(why, why_size, s, "out of memory making a %dx%d blue-noise mask", size, size);
  }
  /* one mask made at a time: a second caller of the same mask waits for
   * the first instead of making it again */
  pthread_mutex_lock(&cache_lock);
  for (int i = 0; i < KEPT; i++)
    if (kept[i].rank && kept[i].n == size && kept[i].seed == seed) {
      memcpy(rank, kept[i].rank, cells * sizeof *rank);
      pthread_mutex_unlock(&cache_lock);
      return HT_OK;
    }
  char path[4200];
  const bool have_path = cache_path(size, seed, path, sizeof path);
  if (!have_path || !read_cached(path, size, seed, rank)) {
    const ht_status s = ht_void_and_cluster(size, seed, rank);
    if (s != HT_OK) {
      pthread_mutex_unlock(&cache_lock);
      return refuse(why, why_size, s, "out of memory making a %dx%d blue-noise mask", size, size);
    }
    if (have_path)
      write_cached(path, size, seed, rank);
  }
  uint32_t *copy = malloc(cells * sizeof *copy);
  if (copy) { /* kept for the next run; without memory, only not kept */
    memcpy(copy, rank, cells * sizeof *copy);
    free(kept[KEPT - 1].rank);
    memmove(kept + 1, kept, (KEPT - 1) * sizeof kept[0]);
    kept[0] = (kept_mask){ size, seed, copy };
  }
  pthread_mutex_unlock(&cache_lock);
  return HT_OK;
}

/* ------------------------------------------------------------ the method */

typedef struct {
  int n, ox, oy;
  const int32_t *t; /* n x n thresholds in 0 .. ONE - 1 */
} noise_mask;

static void dither_row(const void *ctx, const ht_job *job, int64_t y, const int32_t *in, uint8_t *lv, int64_t w)
{
  const noise_mask *M = ctx;
  const int64_t L1 = job->levels - 1, m = M->n - 1;
  const int32_t *t = M->t + (size_t)((job->y0 + y + M->oy) & m) * (size_t)M->n;
  for (int64_t x = 0; x < w; x++)
    lv[x] = ht_ordered_level(in[x], L1, t[(x + M->ox) & m]);
}

ht_status ht_blue_noise_run(ht_job *job, const ht_rows *rows)
{
  const int n = job->params->noise_size; /* a power of two: ht_check */
  const size_t cells = (size_t)n * (size_t)n;
  uint32_t *rank = ht_alloc_raw(job, cells, sizeof *rank);
  int32_t *t = rank ? ht_alloc_raw(job, cells, sizeof *t) : NULL;
  if (!t) {
    free(rank);
    return HT_ERR_NO_MEMORY;
  }
  const ht_status s = ht_blue_noise_mask(n, job->seed, true, rank, job->msg, HT_MSG_MAX);
  if (s != HT_OK) {
    free(rank);
    free(t);
    return s;
  }
  /* the threshold of rank r: the middle of its 1/n^2 of a level step */
  for (size_t i = 0; i < cells; i++)
    t[i] = (int32_t)(((2 * (int64_t)rank[i] + 1) * HT_FX_ONE) / (2 * (int64_t)cells));
  free(rank);
  const int p = job->plane & 3;
  const noise_mask M = { n, (p == 1 || p == 2) ? n / 2 : 0, (p == 1 || p == 3) ? n / 2 : 0, t };
  const ht_status st = ht_ordered_run(job, rows, dither_row, &M);
  free(t);
  return st;
}
