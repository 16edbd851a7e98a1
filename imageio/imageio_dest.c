/* Where output files go, for the halftone tools: the destination claimed
 * before the work, the temporary file, the rename, and the signals that
 * remove it; see imageio.h. */
#include "imageio_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------ signals
 *
 * The handler may run in any thread at any moment, so it uses only what
 * is async-signal-safe: atomics, unlink(), write(), raise(). The open
 * destinations' state says what it may do:
 *   IDLE        no temporary file: say so and end;
 *   CREATING,   a temporary file is being made or renamed: whether it
 *   COMMITTING  exists is not known, so the signal is kept in `pending`
 *               and acted on by the code that finishes the step;
 *   TEMP        remove the temporary files, say so and end;
 *   DONE        the outputs are in place and the run has succeeded: the
 *               signal is dropped (the process ends at once anyway).
 * Several destinations may be open at once (an output and its
 * separations, renamed together by hti_dest_commit): each temporary file
 * has a slot, whose name the handler removes while it is live. */
enum { SIG_IDLE, SIG_CREATING, SIG_TEMP, SIG_COMMITTING, SIG_DONE };
#define SLOTS 8
static _Atomic int sig_state = SIG_IDLE;
static _Atomic int sig_pending = 0;
static char sig_prog[64] = "halftone";
static char sig_tmp[SLOTS][PATH_MAX + 64]; /* the temporary files' names */
static _Atomic bool sig_live[SLOTS];       /* which of them exist         */
static bool slot_taken[SLOTS];             /* held by an open hti_dest    */
static int open_dests;                     /* hti_dests open              */
static char sig_out[PATH_MAX];             /* the first OUTPUT as the user gave it */

static size_t append(char *buf, size_t len, size_t size, const char *s)
{
  while (*s && len + 1 < size)
    buf[len++] = *s++;
  buf[len] = '\0';
  return len;
}

static int live_temps(void)
{
  int count = 0;
  for (int i = 0; i < SLOTS; i++)
    count += atomic_load(&sig_live[i]);
  return count;
}

/* Every signal that ends the process by default and can be caught: each
 * removes the temporary files and says so. SIGBUS comes from a mapped
 * input (an 8-bit PGM used in place) truncated while it is read. */
static const struct {
  int sig;
  const char *name;
} ends[] = {
  { SIGINT, "SIGINT" },       { SIGTERM, "SIGTERM" },     { SIGHUP, "SIGHUP" },       { SIGQUIT, "SIGQUIT" },
  { SIGUSR1, "SIGUSR1" },     { SIGUSR2, "SIGUSR2" },     { SIGALRM, "SIGALRM" },     { SIGXCPU, "SIGXCPU" },
  { SIGVTALRM, "SIGVTALRM" }, { SIGPROF, "SIGPROF" },     { SIGBUS, "SIGBUS (a file in use was truncated)" },
};

/* Set by the first thread that ends the process: a fault such as SIGBUS
 * reaches every worker thread that reads the truncated input, and the
 * user reads one line, not one per thread. */
static atomic_flag sig_dying = ATOMIC_FLAG_INIT;

static _Noreturn void sig_die(int sig, bool temp)
{
  if (atomic_flag_test_and_set(&sig_dying))
    for (;;) /* another thread is ending the process */
      pause();
  int removed = 0;
  for (int i = 0; temp && i < SLOTS; i++)
    if (atomic_load(&sig_live[i])) {
      unlink(sig_tmp[i]);
      removed++;
    }
  const char *name = "a signal";
  for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++)
    if (ends[i].sig == sig)
      name = ends[i].name;
  char line[PATH_MAX + 256];
  size_t len = 0;
  len = append(line, len, sizeof line, sig_prog);
  len = append(line, len, sizeof line, ": interrupted by ");
  len = append(line, len, sizeof line, name);
  if (sig_out[0]) {
    len = append(line, len, sizeof line, ": ");
    len = append(line, len, sizeof line, sig_out);
    len = append(line, len, sizeof line,
                 removed > 1 ? " not written (its temporary files removed)"
                 : removed ? " not written (its temporary file removed)" : " not written");
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
  if (sig == SIGBUS) /* a fault: returning would fault again */
    sig_die(sig, state == SIG_TEMP || state == SIG_CREATING);
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
  for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++) {
    struct sigaction old, sa;
    /* a signal ignored by whoever started us (nohup, a background job)
     * stays ignored */
    if (sigaction(ends[i].sig, NULL, &old) == 0 && old.sa_handler == SIG_IGN)
      continue;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(ends[i].sig, &sa, NULL);
  }
  signal(SIGPIPE, SIG_IGN);
  signal(SIGXFSZ, SIG_IGN);
}

/* Standard output was closed when the process started (hti_std_fds put
 * /dev/null there): "-" as OUTPUT is then refused, not sent nowhere. */
static bool stdout_closed;

void hti_std_fds(void)
{
  for (int fd = 0; fd <= 2; fd++)
    if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
      if (fd == STDOUT_FILENO)
        stdout_closed = true;
      int nul = open("/dev/null", O_RDWR);
      if (nul >= 0 && nul != fd) /* lowest free: fd itself, unless /dev/null is missing */
        close(nul);
    }
}

bool hti_is_stdout(const char *path)
{
  if (strcmp(path, "-") == 0)
    return true;
  /* closed: /dev/null stands in, so only the names of descriptor 1 tell */
  if (stdout_closed)
    return strcmp(path, "/dev/stdout") == 0 || strcmp(path, "/dev/fd/1") == 0 || strcmp(path, "/proc/self/fd/1") == 0;
  struct stat a, b;
  return stat(path, &a) == 0 && !S_ISREG(a.st_mode) && fstat(STDOUT_FILENO, &b) == 0 && a.st_dev == b.st_dev &&
         a.st_ino == b.st_ino && !hti_is_null_device(path);
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
  d->slot = -1;
  if (strcmp(output, "-") == 0) {
    /* Binary data on a terminal is garbage and can upset it: standard
     * output must be redirected to a file or a pipe. */
    if (stdout_closed)
      return hti_fail(err, n, "standard output is closed; redirect it to a file or a pipe (or name an OUTPUT "
                              "file)");
    if (isatty(STDOUT_FILENO))
      return hti_fail(err, n, "standard output is a terminal; redirect it to a file or a pipe "
                              "(or name an OUTPUT file)");
    /* the input itself (1<>in.pgm): written as it is read */
    struct stat out, in;
    if (input && fstat(STDOUT_FILENO, &out) == 0 && S_ISREG(out.st_mode) &&
        (strcmp(input, "-") == 0 ? fstat(STDIN_FILENO, &in) : stat(input, &in)) == 0 && in.st_dev == out.st_dev &&
        in.st_ino == out.st_ino)
      return hti_fail(err, n, "standard output is the input file; writing it would destroy the input (redirect "
                              "it elsewhere)");
    /* a descriptor of its own: the caller may then point descriptor 1
     * elsewhere (halftone sends what it prints to stderr) */
    int fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
    if (fd < 0)
      return hti_fail(err, n, "standard output: %s", strerror(errno));
    d->to_stdout = true;
    d->fd = fd;
    if (open_dests++ == 0)
      snprintf(sig_out, sizeof sig_out, "standard output");
    return true;
  }
  if (hti_is_null_device(output)) {
    d->discard = true;
    return true;
  }
  size_t olen = strlen(output);
  if (olen == 0)
    return hti_fail(err, n, "empty file name");
  if (output[olen - 1] == '/')
    return hti_fail(err, n, "names a folder, not a file");
  char *path = link_target(output);
  if (!path)
    return hti_fail(err, n, "cannot follow the symbolic link: %s", strerror(errno));
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
  else if (exists && input && (strcmp(input, "-") == 0 ? fstat(STDIN_FILENO, &in) : stat(input, &in)) == 0 &&
           in.st_dev == st.st_dev && in.st_ino == st.st_ino)
    why = "is the input file; writing it would destroy the input (choose another output name)";
  /* Read-only: no write permission bit, or none for us (a file of another
   * user); root's access() ignores the bits, so they are looked at too. A
   * read-only file system is the folder's problem, said by mkstemp below. */
  else if (exists && !force && ((st.st_mode & 0222) == 0 || (access(path, W_OK) != 0 && errno != EROFS)))
    why = "is read-only (no write permission); use --force to replace it";
  if (why) {
    free(path);
    return hti_fail(err, n, "%s", why);
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
    return hti_fail(err, n, "out of memory");
  }
  errno = 0;
  long name_max = pathconf(dir, _PC_NAME_MAX);
  if (name_max < 0 && errno != 0) {
    int e = errno;
    bool r = hti_fail(err, n, "cannot create a file in %s: %s", dir, strerror(e));
    free(dir);
    free(path);
    return r;
  }
  size_t blen = strlen(base), keep = blen;
  if (name_max > 0 && blen > (size_t)name_max) {
    bool r = hti_fail(err, n, "cannot create a file in %s: %s (the name has %zu bytes, at most %ld fit)", dir,
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
    return hti_fail(err, n, "out of memory");
  }
  snprintf(tmp, tl, "%.*s.%.*s%s", (int)dirlen, path, (int)keep, base, suffix);
  if (tl > sizeof sig_tmp[0]) { /* a name longer than PATH_MAX: no file can be made there */
    free(tmp);
    free(dir);
    free(path);
    return hti_fail(err, n, "cannot create a file there: %s", strerror(ENAMETOOLONG));
  }
  /* The folder must take the file: said now, before the work, without
   * making it (a temporary file made before the input is read is left by
   * a SIGKILL or the OOM killer while it is read; issue 37). AT_EACCESS:
   * the effective ids, as mkostemp will meet them; a read-only file
   * system says EROFS. */
  if (faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) != 0) {
    int e = errno;
    bool r = hti_fail(err, n, "cannot create a file in %s: %s", dir, strerror(e));
    free(tmp);
    free(dir);
    free(path);
    return r;
  }
  free(dir);
  int slot = 0;
  while (slot < SLOTS && slot_taken[slot])
    slot++;
  if (slot == SLOTS) {
    free(tmp);
    free(path);
    return hti_fail(err, n, "more than %d outputs open at once", SLOTS);
  }
  if (open_dests == 0)
    snprintf(sig_out, sizeof sig_out, "%s", output);
  slot_taken[slot] = true;
  open_dests++;
  d->path = path;
  d->pattern = tmp;
  d->slot = slot;
  return true;
}

bool hti_dest_create(hti_dest *d, char *err, size_t n)
{
  if (d->discard || d->to_stdout || d->tmp)
    return true; /* nothing to make, or made already */
  if (!d->pattern || d->slot < 0)
    return hti_fail(err, n, "the output was not claimed");
  const size_t tl = strlen(d->pattern) + 1;
  char *tmp = strdup(d->pattern);
  if (!tmp)
    return hti_fail(err, n, "out of memory");
  /* what the file replaces now (it may have appeared since the claim) */
  struct stat st;
  const bool exists = stat(d->path, &st) == 0 && S_ISREG(st.st_mode);
  const int slot = d->slot;
  int before = atomic_load(&sig_state);
  atomic_store(&sig_state, SIG_CREATING);
  int fd = mkostemp(tmp, O_CLOEXEC);
  if (fd >= 0) {
    memcpy(sig_tmp[slot], tmp, tl);
    atomic_store(&sig_live[slot], true);
  }
  sig_enter(fd >= 0 || live_temps() ? SIG_TEMP : before == SIG_DONE ? SIG_DONE : SIG_IDLE);
  if (fd < 0) {
    int e = errno;
    const char *slash = strrchr(d->path, '/');
    bool r = hti_fail(err, n, "cannot create a file in %.*s: %s", slash ? (int)(slash - d->path + 1) : 1,
                      slash ? d->path : ".", strerror(e));
    free(tmp);
    return r;
  }
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
    atomic_store(&sig_live[slot], false);
    if (!live_temps())
      atomic_store(&sig_state, SIG_IDLE);
    free(tmp);
    return hti_fail(err, n, "cannot set the mode of the new file: %s", strerror(e));
  }
  d->tmp = tmp;
  d->fd = fd;
  return true;
}

bool hti_out_write(const hti_out *o, hti_dest *d, char *err, size_t n)
{
  if (d->discard || o->kind == HTI_NULL)
    return true;
  if (!hti_dest_create(d, err, n))
    return false;
  if (d->fd < 0 || (!d->tmp && !d->to_stdout))
    return hti_fail(err, n, "the output file was not opened");
  const hti_format *f = hti_format_of(o->kind);
  bool ok;
  if (!f || !f->write) {
    char why[128] = "unknown output kind";
    if (f && f->depths && !f->built)
      hti_format_missing(f, why, sizeof why);
    ok = hti_fail(err, n, "%s", why);
  } else {
    ok = f->write(o, d->fd, err, n);
  }
  return hti_dest_finish(d, ok, err, n);
}

bool hti_write_cmyk_tiff(const hti_cmyk *c, hti_dest *d, char *err, size_t n)
{
  if (!c || c->width <= 0 || c->height <= 0 || c->width > HTI_MAX_SIDE || c->height > HTI_MAX_SIDE ||
      (c->depth != 1 && c->depth != 8))
    return hti_fail(err, n, "bad CMYK image (size or depth)");
  for (int p = 0; p < 4; p++)
    if (!c->plane[p] || c->levels[p] < 2 || c->levels[p] > 256 ||
        c->stride[p] < (c->depth == 1 ? ((size_t)c->width + 7) / 8 : (size_t)c->width))
      return hti_fail(err, n, "bad CMYK image (plane %d)", p);
  if (d->discard)
    return true;
  if (!hti_dest_create(d, err, n))
    return false;
  if (d->fd < 0 || (!d->tmp && !d->to_stdout))
    return hti_fail(err, n, "the output file was not opened");
  return hti_dest_finish(d, hti_write_cmyk_fd(c, d->fd, err, n), err, n);
}

/* The temporary file of `d` renamed into place: its slot no longer
 * live. */
static void renamed(hti_dest *d)
{
  if (d->slot >= 0)
    atomic_store(&sig_live[d->slot], false);
  free(d->tmp);
  d->tmp = NULL;
}

bool hti_dest_finish(hti_dest *d, bool ok, char *err, size_t n)
{
  if (d->to_stdout) { /* nothing to sync (a pipe cannot be) or rename */
    int fd = d->fd;
    d->fd = -1;
    if (close(fd) != 0 && ok)
      ok = hti_fail(err, n, "cannot write: %s", strerror(errno));
    return ok;
  }
  /* On the disk before the rename: a crash then leaves the old file or
   * the new one, never an empty or partial one under the name. */
  if (ok && fsync(d->fd) != 0)
    ok = hti_fail(err, n, "cannot write: %s", strerror(errno));
  int fd = d->fd;
  d->fd = -1;
  if (close(fd) != 0 && ok)
    ok = hti_fail(err, n, "cannot write: %s", strerror(errno));
  if (!ok || d->defer)
    return ok;
  atomic_store(&sig_state, SIG_COMMITTING);
  if (rename(d->tmp, d->path) != 0) {
    int e = errno;
    sig_enter(SIG_TEMP);
    return hti_fail(err, n, "cannot replace the file: %s", strerror(e));
  }
  renamed(d);
  sig_enter(live_temps() ? SIG_TEMP : SIG_DONE);
  return true;
}

int hti_dest_commit(hti_dest *const *set, int count, char *err, size_t n)
{
  for (int i = 0; i < count; i++)
    if ((set[i]->tmp && set[i]->fd >= 0) || (set[i]->pattern && !set[i]->tmp)) {
      hti_fail(err, n, "not written yet");
      return i;
    }
  atomic_store(&sig_state, SIG_COMMITTING);
  int i = 0;
  for (; i < count; i++) {
    hti_dest *d = set[i];
    if (!d->tmp)
      continue; /* standard output or the null device: written already */
    if (rename(d->tmp, d->path) != 0) {
      hti_fail(err, n, "cannot replace the file: %s", strerror(errno));
      break;
    }
    renamed(d);
  }
  sig_enter(live_temps() ? SIG_TEMP : SIG_DONE);
  return i;
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
    if (d->slot >= 0)
      atomic_store(&sig_live[d->slot], false);
    if (!live_temps())
      atomic_store(&sig_state, SIG_IDLE);
  }
  if (d->slot >= 0) { /* renamed by the caller itself (halftone-mpi), or above */
    atomic_store(&sig_live[d->slot], false);
    slot_taken[d->slot] = false;
  }
  if ((d->slot >= 0 || d->to_stdout) && open_dests > 0)
    open_dests--;
  free(d->tmp);
  free(d->pattern);
  free(d->path);
  memset(d, 0, sizeof *d);
  d->fd = -1;
  d->slot = -1;
}
