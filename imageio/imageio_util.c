/* What every part of the tools' image I/O uses (imageio.h): one-line
 * errors, the memory a decoded image may take, writing a whole buffer,
 * telling /dev/null. Below the readers, the writers and the dispatch. */
#include "imageio_priv.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
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

/* The bytes of memory a decoded image may take: the machine's memory,
 * or the process's address-space or data limit where that is lower. A
 * header that declares more is refused with that reason rather than with
 * an allocation's "out of memory" (or worse, after swapping for minutes). */
uint64_t hti_memory_limit(void)
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

bool hti_fits_memory(uint64_t bytes, uint64_t w, uint64_t h, char *err, size_t n)
{
  uint64_t limit = hti_memory_limit();
  if (bytes <= limit)
    return true;
  char a[32], b[32];
  return hti_fail(err, n, "too large: %llux%llu needs %s, more than the %s of memory this process may use",
              (unsigned long long)w, (unsigned long long)h, bytes_text(a, sizeof a, bytes),
              bytes_text(b, sizeof b, limit));
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
