/* What every part of the tools' image I/O uses (imageio.h): one-line
 * errors, the memory a decoded image may take (the budget), writing a whole buffer,
 * telling /dev/null. Below the readers, the writers and the dispatch. */
#include "imageio_priv.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

bool hti_fail(char *err, size_t n, const char *fmt, ...)
{
  if (err && n) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, n, fmt, ap);
    va_end(ap);
  }
  return false;
}

/* ------------------------------------------------------------ memory
 *
 * The memory a decoded image may take (imageio.h, hti_set_memory_limit):
 * what the user gave (--max-memory), else the least of
 *   DEFAULT_LIMIT,
 *   the machine's memory,
 *   SMALL_RATIO times the input's size, but at least SMALL_FLOOR: a small
 *   file that declares a huge image (an arithmetic-coded JPEG, a G4 or
 *   ZSTD TIFF, strips that share their bytes) is a decompression bomb
 *   whatever the codec's own ratio, and no codec is trusted for it;
 * and never more than the process's address-space or data limit, which
 * an allocation cannot pass anyway. A header that declares more is
 * refused with that reason before anything of its size is allocated,
 * rather than with "out of memory" (or after swapping for minutes). */

#define DEFAULT_LIMIT ((uint64_t)4 << 30)
#define SMALL_FLOOR ((uint64_t)1 << 30)
#define SMALL_RATIO 1024

static uint64_t user_limit; /* 0: none given */

void hti_set_memory_limit(uint64_t bytes) { user_limit = bytes; }

/* Which bound a budget is. */
typedef enum { BY_PROCESS, BY_USER, BY_DEFAULT, BY_RATIO } bound_kind;

static uint64_t budget(uint64_t input_len, bound_kind *kind)
{
  uint64_t m = UINT64_MAX;
  *kind = BY_PROCESS;
  static const int limits[] = { RLIMIT_AS, RLIMIT_DATA };
  for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++) {
    struct rlimit rl;
    if (getrlimit(limits[i], &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && (uint64_t)rl.rlim_cur < m)
      m = (uint64_t)rl.rlim_cur;
  }
  if (user_limit) {
    if (user_limit < m) {
      m = user_limit;
      *kind = BY_USER;
    }
    return m;
  }
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0 && (uint64_t)pages * (uint64_t)page < m)
    m = (uint64_t)pages * (uint64_t)page;
  if (DEFAULT_LIMIT < m) {
    m = DEFAULT_LIMIT;
    *kind = BY_DEFAULT;
  }
  if (input_len) {
    uint64_t small = input_len > UINT64_MAX / SMALL_RATIO ? UINT64_MAX : input_len * SMALL_RATIO;
    if (small < SMALL_FLOOR)
      small = SMALL_FLOOR;
    if (small < m) {
      m = small;
      *kind = BY_RATIO;
    }
  }
  return m;
}

uint64_t hti_memory_limit(uint64_t input_len)
{
  bound_kind kind;
  return budget(input_len, &kind);
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

/* A --max-memory that holds `bytes`: whole GiB ("5G"), or MiB below one
 * GiB ("300M"). */
static const char *size_option(char *buf, size_t size, uint64_t bytes)
{
  if (bytes < ((uint64_t)1 << 30))
    snprintf(buf, size, "%lluM", (unsigned long long)((bytes + ((1u << 20) - 1)) >> 20));
  else
    snprintf(buf, size, "%lluG", (unsigned long long)((bytes + ((1ull << 30) - 1)) >> 30));
  return buf;
}

/* "the 4.0 GiB an image may take by default; --max-memory 5G allows
 * it": the bound `limit` of kind `kind`, and, but for the process's own
 * limit, how to lift it (to hold `bytes`; 0: "SIZE ... more"). */
static void bound_text(char *buf, size_t size, bound_kind kind, uint64_t limit, uint64_t bytes)
{
  char b[32], opt[32] = "SIZE";
  bytes_text(b, sizeof b, limit);
  if (bytes)
    size_option(opt, sizeof opt, bytes);
  const char *allows = bytes ? "allows it" : "allows more";
  switch (kind) {
  case BY_USER: snprintf(buf, size, "the %s that --max-memory allows", b); break;
  case BY_DEFAULT:
  case BY_RATIO: snprintf(buf, size, "the %s an image may take by default; --max-memory %s %s", b, opt, allows); break;
  default: snprintf(buf, size, "the %s of memory this process may use", b); break;
  }
}

bool hti_fits_memory_text(uint64_t bytes, uint64_t input_len, bool stream, uint64_t image, const char *what, char *err,
                          size_t n)
{
  bound_kind kind;
  uint64_t limit = budget(input_len, &kind);
  if (bytes <= limit)
    return true;
  char a[32], tail[160];
  bytes_text(a, sizeof a, bytes);
  if (stream) {
    char d[48] = "", im[32];
    if (image)
      snprintf(d, sizeof d, " (%s decoded)", bytes_text(im, sizeof im, image));
    bound_text(tail, sizeof tail, kind, limit, 0);
    return hti_fail(err, n, "too large: %s%s goes on past %s", what, d, tail);
  }
  if (kind == BY_RATIO) {
    char b[32], f[32], opt[32];
    return hti_fail(err, n, "too large: %s needs %s, and by default a file of %llu bytes may claim at most %s (%d "
                    "times its size, at least %s); --max-memory %s allows it", what, a, (unsigned long long)input_len,
                    bytes_text(b, sizeof b, limit), SMALL_RATIO, bytes_text(f, sizeof f, SMALL_FLOOR),
                    size_option(opt, sizeof opt, bytes));
  }
  bound_text(tail, sizeof tail, kind, limit, bytes);
  return hti_fail(err, n, "too large: %s needs %s, more than %s", what, a, tail);
}

bool hti_fits_memory(uint64_t bytes, uint64_t input_len, uint64_t w, uint64_t h, char *err, size_t n)
{
  char what[64];
  snprintf(what, sizeof what, "%llux%llu", (unsigned long long)w, (unsigned long long)h);
  return hti_fits_memory_text(bytes, input_len, false, 0, what, err, n);
}

bool hti_parse_size(const char *text, uint64_t *bytes)
{
  /* digits with at most one '.', then the unit */
  size_t i = 0, digits = 0, dots = 0;
  for (; (text[i] >= '0' && text[i] <= '9') || text[i] == '.'; i++)
    text[i] == '.' ? dots++ : digits++;
  if (digits == 0 || dots > 1 || i > 30)
    return false;
  char number[32];
  memcpy(number, text, i);
  number[i] = '\0';
  double v = strtod(number, NULL);
  static const char units[] = "KMGT";
  const char *u = text[i] ? strchr(units, text[i] & ~0x20) : NULL;
  if (text[i] && (!u || !*u))
    return false;
  if (u) {
    for (const char *k = units; k <= u; k++)
      v *= 1024;
    i++;
    if ((text[i] & ~0x20) == 'I' && (text[i + 1] & ~0x20) == 'B')
      i += 2;
    else if ((text[i] & ~0x20) == 'B')
      i++;
  }
  if (text[i] || !(v >= 1) || v >= 18446744073709551616.0)
    return false;
  *bytes = (uint64_t)v;
  return true;
}

bool hti_is_null_device(const char *path)
{
  struct stat a, b;
  return stat(path, &a) == 0 && S_ISCHR(a.st_mode) && stat("/dev/null", &b) == 0 && S_ISCHR(b.st_mode) &&
         a.st_rdev == b.st_rdev;
}

bool hti_write_all(int fd, const uint8_t *p, size_t len, char *err, size_t n)
{
  while (len) {
    ssize_t w = write(fd, p, len);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return hti_fail(err, n, "cannot write: %s", w < 0 ? strerror(errno) : "no progress");
    p += w;
    len -= (size_t)w;
  }
  return true;
}
