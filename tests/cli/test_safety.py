#!/usr/bin/env python3
"""Data safety of the command-line tools (suite cli): "nothing lost".

    test_safety.py HALFTONE HT_METRICS DATA_DIR GOLDEN CASE

The list: one Meson test per CASE below (tests/cli/meson.build), each in a
fresh temporary folder, exiting 0 (pass), 1 (fail) or 77 (skip: what the
case needs is not available, e.g. mounting a tmpfs without root or a user
namespace). Every failure must leave one line on stderr, a non-zero exit,
no new file, no temporary file, and an existing output byte-identical.

  same-file      OUTPUT is INPUT (same name, ./ vs ../, symbolic and hard
                 link), for halftone and ht-mkimage: refused before any work
  replace        replacing an output keeps its mode (0600 stays private)
                 and owner, refuses a read-only one unless --force, writes
                 through a symbolic link (dangling too) to its target
  stdout         a failing stdout (--metrics >/dev/full) writes no output; a
                 closed stdout or stderr never sends text into the output
  long-name      a name at the file system's limit works; one past it
                 fails before the work (an endless --bench), not after
  null-output    /dev/null as OUTPUT: --bench and --metrics without a file
  disk-full      a tiny tmpfs: PBM, PGM and PNG outputs fail with the
                 system's reason (never libpng's "Write Error"), nothing left
  read-only-dir  a folder we cannot write to: refused before the work
  signals        SIGINT/SIGTERM/SIGHUP (and SIGKILL: no temporary file made
                 yet) while the input is read, during the
                 work and during the write: one line, the temporary file
                 removed, ended by that signal
  unbounded      /dev/zero, endless pipes: refused from the first bytes, or
                 read only as far as the format goes, never until the
                 memory runs out
  declared-size  headers that declare more than the file holds or the
                 memory allows: "truncated" / "too large", before allocating
"""
import errno
import os
import re
import resource
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from cases import ENDING_SIGNALS, SKIP, Fail, Skip, check, default_signals, run_case  # noqa: E402
from test_cli import Env, digest, expect_error  # noqa: E402
from test_cli import write_pnm, FormatError  # noqa: E402,F401


def mkimage(env):
    return os.path.join(os.path.dirname(env.metrics), "ht-mkimage")  # beside ht-metrics, the other helper


def one_line(err, pattern, what):
    lines = err.splitlines()
    check(len(lines) == 1, "%s: stderr should be one line, got %r" % (what, err))
    check(re.search(pattern, lines[0]), "%s: message %r does not match %r" % (what, lines[0], pattern))


def snapshot(folder):
    """{name: (mode, bytes)} of every file in `folder` (links as links)."""
    out = {}
    for name in sorted(os.listdir(folder)):
        p = os.path.join(folder, name)
        st = os.lstat(p)
        if stat.S_ISLNK(st.st_mode):
            out[name] = ("link", os.readlink(p))
        elif stat.S_ISREG(st.st_mode):
            out[name] = (oct(st.st_mode & 0o7777), open(p, "rb").read())
        else:
            out[name] = (oct(st.st_mode), None)
    return out


def case_same_file(env):
    """The output is the input under another name: refused, the input
    byte-identical, for every tool that writes files."""
    src = env.path("in.pgm")
    with open(env.crop, "rb") as f:
        original = f.read()
    with open(src, "wb") as f:
        f.write(original)
    os.mkdir(env.path("sub"))
    os.symlink("in.pgm", env.path("link.pgm"))
    os.link(src, env.path("hard.pgm"))
    os.symlink(env.dir, env.path("dirlink"))
    names = [src, os.path.join(env.dir, ".", "in.pgm"), os.path.join(env.dir, "sub", "..", "in.pgm"),
             env.path("link.pgm"), env.path("hard.pgm"), os.path.join(env.dir, "dirlink", "in.pgm")]
    # the same file as INPUT named differently, too (a link as INPUT)
    pairs = [(src, out) for out in names] + [(env.path("link.pgm"), src), (env.path("hard.pgm"), src)]
    # relative names: ./ against ../, from the folder and from sub/
    rel = [(env.dir, "./in.pgm", "sub/../in.pgm"), (env.dir, "in.pgm", "./in.pgm"),
           (env.path("sub"), "../in.pgm", "../sub/../in.pgm"),
           (env.path("sub"), "../in.pgm", os.path.join("..", "..", os.path.basename(env.dir), "in.pgm"))]
    before = snapshot(env.dir)
    for tool, extra in ((env.halftone, ["--levels", "256"]), (mkimage(env), None)):
        if not os.access(tool, os.X_OK):
            continue
        for inp, out in pairs:
            args = (extra + [inp, out]) if extra is not None else [inp, "50", out]
            rc, _, err = env.run(*args, tool=tool)
            check(rc == 1, "%s %s -> %s: exit %d (%r)" % (os.path.basename(tool), inp, out, rc, err))
            one_line(err, r"is the input file", "%s -> %s" % (inp, out))
            check(snapshot(env.dir) == before, "%s -> %s: the folder changed" % (inp, out))
        for cwd, inp, out in rel:
            args = (extra + [inp, out]) if extra is not None else [inp, "50", out]
            p = subprocess.run([os.path.abspath(tool)] + args, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
            err = p.stderr.decode()
            check(p.returncode == 1, "in %s: %s -> %s: exit %d (%r)" % (cwd, inp, out, p.returncode, err))
            one_line(err, r"is the input file", "in %s: %s -> %s" % (cwd, inp, out))
            check(snapshot(env.dir) == before, "in %s: %s -> %s: the folder changed" % (cwd, inp, out))
    check(open(src, "rb").read() == original, "the input changed")
    # a different file with the same content is a different file
    env.ok(src, env.path("copy.pgm"))
    env.ok("--levels", "256", env.path("copy.pgm"), env.path("copy2.pgm"))


def case_replace(env):
    """An existing output keeps what the user set on it."""
    c = env.crop
    os.umask(0o022)
    out = env.path("private.pbm")
    with open(out, "wb") as f:
        f.write(b"old")
    os.chmod(out, 0o600)
    env.ok(c, out)
    check(stat.S_IMODE(os.stat(out).st_mode) == 0o600, "0600 output became %o" % stat.S_IMODE(os.stat(out).st_mode))
    check(open(out, "rb").read()[:2] == b"P4", "the output was not replaced")
    os.chmod(out, 0o640)
    env.ok(c, out)
    check(stat.S_IMODE(os.stat(out).st_mode) == 0o640, "0640 output became %o" % stat.S_IMODE(os.stat(out).st_mode))
    # a new file: 0666 & ~umask
    os.umask(0o027)
    env.ok(c, env.path("new.pbm"))
    check(stat.S_IMODE(os.stat(env.path("new.pbm")).st_mode) == 0o640, "a new file ignores the umask")
    os.umask(0o022)
    # read-only: refused (and left as it was) unless --force
    ro = env.path("ro.pbm")
    with open(ro, "wb") as f:
        f.write(b"precious")
    os.chmod(ro, 0o444)
    before = snapshot(env.dir)
    rc, _, err = env.run(c, ro)
    check(rc == 1, "read-only output: exit %d (%r)" % (rc, err))
    one_line(err, r"ro\.pbm: is read-only.*--force", "read-only output")
    check(snapshot(env.dir) == before, "read-only output: the folder changed")
    env.ok("--force", c, ro)
    check(open(ro, "rb").read()[:2] == b"P4" and stat.S_IMODE(os.stat(ro).st_mode) == 0o444,
          "--force: not replaced, or the mode changed to %o" % stat.S_IMODE(os.stat(ro).st_mode))
    # the owner is kept where we may set it (root)
    if os.geteuid() == 0:
        owned = env.path("owned.pbm")
        with open(owned, "wb") as f:
            f.write(b"old")
        os.chown(owned, 4321, 4322)
        env.ok(c, owned)
        st = os.stat(owned)
        check((st.st_uid, st.st_gid) == (4321, 4322), "owner became %d:%d" % (st.st_uid, st.st_gid))
    # a symbolic link stays a link; its target (in another folder) is
    # replaced there, with no temporary file left in either folder
    os.mkdir(env.path("elsewhere"))
    target = env.path("elsewhere/target.pbm")
    with open(target, "wb") as f:
        f.write(b"old")
    os.chmod(target, 0o600)
    os.symlink("elsewhere/target.pbm", env.path("link.pbm"))
    env.ok(c, env.path("link.pbm"))
    check(os.path.islink(env.path("link.pbm")), "the symbolic link was replaced by a file")
    check(open(target, "rb").read()[:2] == b"P4", "the link's target was not written")
    check(stat.S_IMODE(os.stat(target).st_mode) == 0o600, "the link's target lost its mode")
    check(os.listdir(env.path("elsewhere")) == ["target.pbm"], "left %s" % os.listdir(env.path("elsewhere")))
    # a chain of links, the last one dangling: the file appears where it points
    os.symlink("link2.pbm", env.path("link1.pbm"))
    os.symlink("elsewhere/new.pbm", env.path("link2.pbm"))
    env.ok(c, env.path("link1.pbm"))
    check(os.path.islink(env.path("link1.pbm")) and os.path.islink(env.path("link2.pbm")), "a link was replaced")
    check(open(env.path("elsewhere/new.pbm"), "rb").read()[:2] == b"P4", "the dangling link's target not written")
    # a loop of links: one line, nothing written
    os.symlink("loop-b.pbm", env.path("loop-a.pbm"))
    os.symlink("loop-a.pbm", env.path("loop-b.pbm"))
    expect_error(env, [c, "{out}"], 1, r"loop-a\.pbm: .*(symbolic link|Too many levels)", out_name="loop-a.pbm",
                 pre=False)
    check(not [n for n in os.listdir(env.dir) if ".tmp-" in n], "temporary files left: %s" % os.listdir(env.dir))


def case_stdout(env):
    """A run whose stdout fails (the metrics or the benchmark go nowhere)
    exits 1 and writes no output; an existing one stays as it was."""
    if not os.path.exists("/dev/full"):
        raise Skip("no /dev/full")
    for args in (["--metrics"], ["--bench", "2"]):
        for existing in (False, True):
            out = env.path("out.pbm")
            if existing:
                with open(out, "wb") as f:
                    f.write(b"precious")
            before = snapshot(env.dir)
            with open("/dev/full", "w") as full:
                p = subprocess.run([env.halftone] + args + [env.crop, out], stdout=full, stderr=subprocess.PIPE,
                                   timeout=60)
            err = p.stderr.decode()
            check(p.returncode == 1, "%s >/dev/full: exit %d (%r)" % (args, p.returncode, err))
            one_line(err, r"cannot write to stdout: No space left on device", "%s >/dev/full" % args)
            check(snapshot(env.dir) == before, "%s >/dev/full: the folder changed" % args)
            if os.path.exists(out):
                os.unlink(out)
    # stdout or stderr closed: what would go there must not go into the
    # output file (which would otherwise get descriptor 1 or 2)
    env.ok(env.crop, env.path("ref.pbm"))
    for fd, args in ((1, ["--metrics"]), (1, ["--bench", "1"]), (2, ["--levels", "2"])):
        out = env.path("closed.pbm")
        p = subprocess.run([env.halftone] + args + [env.crop, out], preexec_fn=lambda fd=fd: os.close(fd),
                           stdout=subprocess.PIPE if fd != 1 else None, stderr=subprocess.PIPE if fd != 2 else None,
                           timeout=60)
        check(p.returncode == 0, "fd %d closed, %s: exit %d" % (fd, args, p.returncode))
        check(digest(out) == digest(env.path("ref.pbm")), "fd %d closed, %s: the output differs" % (fd, args))
    if env.run("--quiet", env.fixture("tiny-rgba.png"), env.path("probe.pgm"))[0] == 0:
        # a notice (alpha dropped) with stderr closed
        out = env.path("notice.pgm")
        p = subprocess.run([env.halftone, env.fixture("tiny-rgba.png"), out], preexec_fn=lambda: os.close(2),
                           stdout=subprocess.PIPE, timeout=60)
        check(p.returncode == 0 and digest(out) == digest(env.path("probe.pgm")),
              "stderr closed: a notice went into the output")


def name_max(folder):
    try:
        return os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError):
        return 255


def case_long_name(env):
    """Names at the limit work (the temporary name is shortened to fit);
    a name past it fails at once, before an endless --bench starts."""
    limit = name_max(env.dir)
    for ext in (".pbm", ".png"):
        if ext == ".png" and not env.has_png():
            continue
        for length in (limit, limit - 5, limit - 12):
            name = env.path("a" * (length - len(ext)) + ext)
            env.ok(env.crop, name)
            check(os.path.isfile(name), "%d-byte name: no output" % length)
            os.unlink(name)
            check(env.listing() == [], "%d-byte name left %s" % (length, env.listing()))
    name = env.path("b" * (limit + 1 - 4) + ".pbm")
    t0 = time.monotonic()
    rc, _, err = env.run("--bench", "1000000", env.crop, name, timeout=120)
    check(rc == 1, "a name past the limit: exit %d (%r)" % (rc, err))
    one_line(err, r"File name too long", "a name past the limit")
    check(time.monotonic() - t0 < 30, "a name past the limit failed only after the work")
    check(env.listing() == [], "a name past the limit left %s" % env.listing())


def case_null_output(env):
    """/dev/null takes any output (nothing is written), so that --bench and
    --metrics need no file; it stays the device."""
    out = env.ok("--bench", "2", env.crop, "/dev/null")
    check(re.match(r"bench: 257x193, 2 run\(s\)", out), "--bench to /dev/null: %r" % out)
    out = env.ok("--metrics", "--levels", "4", env.crop, "/dev/null")
    check("HVS error: " in out, "--metrics to /dev/null: %r" % out)
    check(out == env.ok("--metrics", "--levels", "4", env.crop, env.path("m.pgm")), "metrics differ from a file's")
    env.ok("--color", "per-channel", "--levels", "3,3,2", env.fixture("tiny.ppm"), "/dev/null")
    check(stat.S_ISCHR(os.stat("/dev/null").st_mode), "/dev/null is no longer a device")
    check(env.listing() == ["m.pgm"], "files left: %s" % env.listing())


# ------------------------------------------------------------ a tmpfs

def in_namespace(env):
    """Runs this case again as root of a new user and mount namespace
    (unshare -rm) when we are not root; returns True when it did (the
    result is raised), False when we are root already. Skips when neither
    is possible."""
    if os.geteuid() == 0:
        return False
    if os.environ.get("HT_TEST_IN_USERNS"):
        raise Skip("no root in the user namespace")
    try:
        p = subprocess.run(["unshare", "-rm", "true"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
    except (OSError, subprocess.SubprocessError):
        raise Skip("not root, and no unshare") from None
    if p.returncode != 0:
        raise Skip("not root, and no user namespace (unshare -rm: %s)" % p.stderr.decode().strip())
    e = dict(os.environ, HT_TEST_IN_USERNS="1")
    p = subprocess.run(["unshare", "-rm", sys.executable] + sys.argv, env=e, timeout=600)
    if p.returncode == SKIP:
        raise Skip("skipped in the user namespace")
    check(p.returncode == 0, "the case failed in a user namespace (exit %d)" % p.returncode)
    return True


class Tmpfs:
    def __init__(self, path, options):
        self.path = path
        os.makedirs(path, exist_ok=True)
        p = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", path], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
        if p.returncode != 0:
            raise Skip("cannot mount a tmpfs: %s" % p.stderr.decode().strip())

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        subprocess.run(["umount", "-l", self.path])


def fill(folder, leave):
    """Fills the file system of `folder` up to `leave` bytes free."""
    st = os.statvfs(folder)
    free = st.f_bavail * st.f_frsize
    with open(os.path.join(folder, "filler"), "wb") as f:
        f.write(b"\0" * max(0, free - leave))


def noise(n, seed=1):
    """n bytes that zlib cannot squeeze (a linear congruential sequence)."""
    out = bytearray(n)
    x = seed
    for i in range(n):
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF
        out[i] = x >> 23
    return list(out)


def case_disk_full(env):
    """No space left: the output is not written, its temporary file goes,
    an existing output stays byte-identical, and the message gives the
    system's reason for every format."""
    if in_namespace(env):
        return
    big = env.path("big.pgm")
    write_pnm(big, "P5", 640, 480, 255, noise(640 * 480))
    mnt = env.path("mnt")
    with Tmpfs(mnt, "size=2m,mode=0777"):
        outs = [("out.pbm", []), ("out.pgm", ["--levels", "4"])]
        if env.has_png():
            outs += [("out.png", ["--levels", "256"]), ("bw.png", [])]
        for name, args in outs:
            out = os.path.join(mnt, name)
            with open(out, "wb") as f:
                f.write(b"precious")
            fill(mnt, 4096)
            before = snapshot(mnt)
            rc, _, err = env.run("--quiet", *args, big, out)
            check(rc == 1, "%s on a full disk: exit %d (%r)" % (name, rc, err))
            one_line(err, r"%s: cannot write: No space left on device" % re.escape(name), name)
            check("Write Error" not in err, "%s: libpng's message instead of the system's: %r" % (name, err))
            check(snapshot(mnt) == before, "%s on a full disk: the file system changed" % name)
            os.unlink(os.path.join(mnt, "filler"))
            os.unlink(out)
        # the same runs succeed with room
        for name, args in outs:
            env.ok(*args, big, os.path.join(mnt, name))
            check(os.listdir(mnt) == [name], "with room: %s" % os.listdir(mnt))
            os.unlink(os.path.join(mnt, name))


def case_read_only_dir(env):
    """A folder we cannot write to: one line before the work, nothing
    changed; a read-only file system too."""
    d = env.path("locked")
    os.mkdir(d)
    with open(os.path.join(d, "out.pbm"), "wb") as f:
        f.write(b"precious")
    os.chmod(d, 0o555)
    try:
        if os.geteuid() != 0:
            before = snapshot(d)
            rc, _, err = env.run("--bench", "1000000", env.crop, os.path.join(d, "out.pbm"), timeout=60)
            check(rc == 1, "read-only folder: exit %d (%r)" % (rc, err))
            one_line(err, r"cannot create a file in .*locked/: Permission denied", "read-only folder")
            check(snapshot(d) == before, "read-only folder changed")
    finally:
        os.chmod(d, 0o755)
    if in_namespace(env):
        return
    mnt = env.path("ro")
    with Tmpfs(mnt, "size=64k,mode=0777"):
        with open(os.path.join(mnt, "out.pbm"), "wb") as f:
            f.write(b"precious")
        # read-only for this mount point (a per-mount flag, which a user
        # namespace may set too)
        p = subprocess.run(["mount", "-o", "remount,bind,ro", mnt], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if p.returncode != 0:
            raise Skip("cannot remount read-only: %s" % p.stderr.decode().strip())
        before = snapshot(mnt)
        for name in ("out.pbm", "new.pbm"):
            rc, _, err = env.run("--bench", "1000000", env.crop, os.path.join(mnt, name), timeout=60)
            check(rc == 1, "read-only file system: exit %d (%r)" % (rc, err))
            one_line(err, r"Read-only file system", "read-only file system")
            check(snapshot(mnt) == before, "read-only file system changed")


def wait_for(pred, seconds, what):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if pred():
            return
        time.sleep(0.0005)
    raise Fail("timed out waiting for %s" % what)


def proc_state(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "?"


def temps(folder):
    return [n for n in os.listdir(folder) if ".tmp-" in n]


def check_interrupted(p, sig, err, out_name, before, folder, what):
    check(p.returncode == -sig, "%s: exit %r, wanted death by signal %d (%r)" % (what, p.returncode, sig, err))
    name = signal.Signals(sig).name
    one_line(err, r"^halftone: interrupted by %s: .*%s not written" % (name, re.escape(out_name)), what)
    check(not temps(folder), "%s: temporary file left: %s" % (what, temps(folder)))
    check(snapshot(folder) == before, "%s: the folder changed" % what)


def fifo_reader_open(fifo, p):
    """The write end of `fifo`, once `p` has opened it to read (opening it
    without a reader fails with ENXIO): from then on `p` is reading its
    input, no guess at how long that takes."""
    end = time.monotonic() + 30
    while True:
        try:
            return os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as e:
            if e.errno != errno.ENXIO:
                raise
        if p.poll() is not None or time.monotonic() > end:
            raise Fail("halftone never opened its FIFO input (exit %r)" % p.poll())
        time.sleep(0.0005)


def case_signals(env):
    """SIGINT, SIGTERM and SIGHUP while the input is read, during the work
    and during the write: one line, killed by that signal, the temporary
    file removed, an existing output byte-identical. SIGKILL (the OOM
    killer) while the input is read: no handler runs, so no temporary
    file may exist yet (issue 37: it was made before the input was
    read, and stayed)."""
    out = env.path("out.pbm")
    # while the input is read: a FIFO that gives a header's start, then
    # nothing more and never ends
    fifo = env.path("in.fifo")
    os.mkfifo(fifo)
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGKILL):
        with open(out, "wb") as f:
            f.write(b"precious")
        before = snapshot(env.dir)
        p = subprocess.Popen([env.halftone, fifo, out], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             preexec_fn=default_signals)
        w = fifo_reader_open(fifo, p)
        try:
            os.write(w, b"P5\n")
            p.send_signal(sig)
            _, err = p.communicate(timeout=60)
        finally:
            os.close(w)
        if sig == signal.SIGKILL:
            check(p.returncode == -sig, "SIGKILL while reading: exit %r" % p.returncode)
            check(not temps(env.dir), "SIGKILL while reading: temporary file left: %s" % temps(env.dir))
            check(snapshot(env.dir) == before, "SIGKILL while reading: the folder changed")
        else:
            check_interrupted(p, sig, err.decode(), "out.pbm", before, env.dir, "%s while reading" % sig.name)
    os.unlink(fifo)
    # during the work: an endless --bench
    for sig, existing in ((signal.SIGINT, True), (signal.SIGTERM, False), (signal.SIGHUP, True)):
        if existing:
            with open(out, "wb") as f:
                f.write(b"precious")
        elif os.path.exists(out):
            os.unlink(out)
        before = snapshot(env.dir)
        p = subprocess.Popen([env.halftone, "--bench", "1000000", env.crop, out], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE,
                             preexec_fn=default_signals)
        time.sleep(0.5)
        check(p.poll() is None, "--bench 1000000 ended early")
        p.send_signal(sig)
        _, err = p.communicate(timeout=60)
        check_interrupted(p, sig, err.decode(), "out.pbm", before, env.dir, "%s during the work" % sig.name)
    # every other signal that ends a process by default, during the work
    for sig in ENDING_SIGNALS:
        if sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            continue
        with open(out, "wb") as f:
            f.write(b"precious")
        before = snapshot(env.dir)
        p = subprocess.Popen([env.halftone, "--bench", "1000000", env.crop, out], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, preexec_fn=default_signals)
        time.sleep(0.3)
        check(p.poll() is None, "--bench 1000000 ended early")
        p.send_signal(sig)
        _, err = p.communicate(timeout=60)
        check_interrupted(p, sig, err.decode(), "out.pbm", before, env.dir, "%s during the work" % sig.name)
    # an 8-bit PGM is used in place (mapped): truncated while in use, the
    # next read of its lost pages is a SIGBUS, which says so and cleans up
    mapped = env.path("mapped.pgm")
    side = 1024
    with open(mapped, "wb") as f:
        f.write(b"P5\n%d %d\n255\n" % (side, side) + bytes(range(256)) * (side * side // 256))
    with open(out, "wb") as f:
        f.write(b"precious")
    before = snapshot(env.dir)
    p = subprocess.Popen([env.halftone, "--bench", "1000000", mapped, out], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, preexec_fn=default_signals)
    time.sleep(0.5)
    check(p.poll() is None, "--bench 1000000 on the mapped input ended early")
    os.truncate(mapped, 100)
    try:
        _, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    err = err.decode()
    check(p.returncode == -signal.SIGBUS, "truncated input: exit %r, wanted SIGBUS (%r)" % (p.returncode, err))
    one_line(err, r"^halftone: interrupted by SIGBUS \(a file in use was truncated\): .*out.pbm not written",
             "truncated input")
    check(not temps(env.dir), "truncated input: temporary file left: %s" % temps(env.dir))
    os.unlink(mapped)
    after = snapshot(env.dir)
    check({k: v for k, v in before.items() if "mapped" not in k} == {k: v for k, v in after.items() if "mapped" not in k},
          "truncated input: the folder changed")
    # during the write: a large PNG (written in pieces), stopped while its
    # temporary file grows and before it is renamed, then interrupted
    if not env.has_png():
        return
    side = 3000
    big = env.path("noise.pgm")
    with open(big, "wb") as f:
        f.write(b"P5\n%d %d\n255\n" % (side, side) + os.urandom(side * side))
    out = env.path("out.png")
    caught = 0
    for attempt in range(20):
        with open(out, "wb") as f:
            f.write(b"precious")
        before = snapshot(env.dir)
        p = subprocess.Popen([env.halftone, "--levels", "256", big, out], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE,
                             preexec_fn=default_signals)

        def growing():
            t = temps(env.dir)
            try:
                return t and os.stat(os.path.join(env.dir, t[0])).st_size > 0
            except OSError:
                return False
        try:
            wait_for(lambda: growing() or p.poll() is not None, 60, "the write")
        finally:
            p.send_signal(signal.SIGSTOP)
        wait_for(lambda: proc_state(p.pid) in ("T", "t", "Z", "?"), 10, "the stop")
        mid_write = p.poll() is None and bool(temps(env.dir)) and not open(out, "rb").read().startswith(b"\x89PNG")
        p.send_signal(signal.SIGINT)
        p.send_signal(signal.SIGCONT)
        _, err = p.communicate(timeout=60)
        if not mid_write:
            continue  # finished before the stop: try again
        caught += 1
        check_interrupted(p, signal.SIGINT, err.decode(), "out.png", before, env.dir, "SIGINT during the write")
        if caught == 2:
            break
    check(caught >= 1, "never caught the write in progress")


_shadow = {}


def shadow_memory(tool):
    """Whether `tool` is built with a sanitizer that reserves terabytes of
    address space for its shadow memory (ASan, MSan, TSan): such a tool
    cannot start under an address-space limit."""
    if tool not in _shadow:
        # tools/run-tests.sh says so for its sanitizer build; the binary
        # tells for any other
        told = os.environ.get("HT_TEST_SANITIZER", "")
        with open(tool, "rb") as f:
            data = f.read()
        _shadow[tool] = any(s in told for s in ("address", "memory", "thread")) or \
            any(s in data for s in (b"__asan_init", b"__msan_init", b"__tsan_init"))
    return _shadow[tool]


def limited_memory(mib, tool):
    """A preexec_fn limiting the address space to `mib` MiB, so that a
    regression shows as a failed allocation instead of eating the
    machine; none for a tool with sanitizer shadow memory."""
    if shadow_memory(tool):
        return None

    def pre():
        resource.setrlimit(resource.RLIMIT_AS, (mib << 20, mib << 20))
    return pre


def feed(env, head, tail, args, out_name="out.pbm", mib=1024, timeout=60):
    """Runs halftone on /dev/stdin fed `head` and then `tail` repeated
    forever (until halftone closes the pipe), with the address space
    limited to `mib` MiB; returns (rc, stderr)."""
    errf = tempfile.TemporaryFile()
    p = subprocess.Popen([env.halftone] + args + ["/dev/stdin", env.path(out_name)], stdin=subprocess.PIPE,
                         stdout=subprocess.DEVNULL, stderr=errf, preexec_fn=limited_memory(mib, env.halftone))

    def writer():
        try:
            p.stdin.write(head)
            while tail:
                p.stdin.write(tail)
        except (BrokenPipeError, ValueError, OSError):
            pass
        finally:
            try:
                p.stdin.close()
            except OSError:
                pass
    t = threading.Thread(target=writer, daemon=True)
    t.start()
    try:
        p.wait(timeout=timeout)  # not communicate(): it would close stdin under the writer
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        raise Fail("%r...: still reading after %d s" % (head[:20], timeout)) from None
    finally:
        t.join(timeout=10)
        errf.seek(0)
        err = errf.read().decode()
        errf.close()
    return p.returncode, err


def png_chunk(kind, body):
    import struct
    import zlib
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def png_header(w, h, depth=8, ctype=0):
    import struct
    return b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, depth, ctype, 0, 0, 0))


def case_unbounded(env):
    """Input that is not a regular file is read only as far as its format
    goes: /dev/zero and endless garbage are refused from their first
    bytes; an endless stream behind a good header is cut where the image
    ends (netpbm) or refused at a bound (PNG without IEND); memory stays
    small throughout (the address space is limited to 1 GiB)."""
    if os.path.exists("/dev/zero"):
        rc, _, err = env.run("/dev/zero", env.path("out.pbm"), preexec=limited_memory(1024, env.halftone), timeout=60)
        check(rc == 1, "/dev/zero: exit %d (%r)" % (rc, err))
        one_line(err, r"/dev/zero: not a PGM, PPM, PBM, PAM, PNG, TIFF or JPEG file \(unknown signature\)", "/dev/zero")
    rc, err = feed(env, b"", b"y\n" * 4096, [])
    check(rc == 1, "yes |: exit %d (%r)" % (rc, err))
    one_line(err, r"unknown signature", "yes |")
    rc, err = feed(env, b"", b"P5\n" * 4096, [])
    check(rc == 1, "endless P5 lines: exit %d (%r)" % (rc, err))
    one_line(err, r"bad header", "endless P5 lines")
    # a good header, then endless data: the image is what the header says
    w, h = 64, 48
    px = bytes((x * 5 + y * 3) & 255 for y in range(h) for x in range(w))
    write_pnm(env.path("ref.pgm"), "P5", w, h, 255, list(px))
    env.ok(env.path("ref.pgm"), env.path("ref.pbm"))
    for what, head, tail in (("binary PGM", b"P5\n%d %d\n255\n" % (w, h) + px, b"\0" * 65536),
                             ("plain PGM", b"P2\n%d %d\n255\n" % (w, h) + b" ".join(b"%d" % v for v in px) + b"\n",
                              b"7 " * 32768),
                             ("PBM", b"P4\n%d %d\n" % (w, h), b"\x55" * 65536)):
        rc, err = feed(env, head, tail, ["--quiet"])
        check(rc == 0, "%s, then endless data: exit %d (%r)" % (what, rc, err))
        if what != "PBM":
            check(digest(env.path("out.pbm")) == digest(env.path("ref.pbm")),
                  "%s from an endless pipe differs from the file's halftone" % what)
    # a header declaring more than the memory: refused before reading on
    rc, err = feed(env, b"P5\n16777216 16777216\n255\n", b"\0" * 65536, [])
    check(rc == 1, "a 2^48-sample header on a pipe: exit %d (%r)" % (rc, err))
    # (the address-space limit, or, where a sanitizer allows none, the
    # default budget, which --max-memory would lift)
    one_line(err, r"too large: 16777216x16777216 needs .* (of memory this process may use|an image may take by default)",
             "2^48 samples on a pipe")
    # a PNG that never ends: refused at a bound of its size
    if not env.has_png():
        return
    rc, err = feed(env, png_header(16, 16), png_chunk(b"tEXt", b"k\0" + b"x" * 60000), [])
    check(rc == 1, "a PNG without end: exit %d (%r)" % (rc, err))
    one_line(err, r"a 16x16 PNG goes on for more than \d+ bytes without its end \(IEND\)", "a PNG without end")
    # and a whole PNG, then endless bytes: the image ends at IEND
    with open(env.fixture("tiny-rgba.png"), "rb") as f:
        png = f.read()
    env.ok(env.fixture("tiny-rgba.png"), env.path("ref.png"))
    rc, err = feed(env, png, b"\0" * 65536, ["--quiet"], out_name="out.png")
    check(rc == 0, "a PNG, then endless bytes: exit %d (%r)" % (rc, err))
    check(digest(env.path("out.png")) == digest(env.path("ref.png")), "a PNG from a pipe differs from the file's")
    check(sorted(os.listdir(env.dir)) == ["out.pbm", "out.png", "ref.pbm", "ref.pgm", "ref.png"],
          "files left: %s" % os.listdir(env.dir))


def case_declared_size(env):
    """A few bytes of header declaring a huge image: refused as truncated
    (the file cannot hold it) or too large (the memory cannot), before
    any allocation of that size: under a 1 GiB address space the old
    allocations said "out of memory" instead."""
    import zlib
    cases = {
        # 29 bytes declaring 2^48 samples
        "huge.pgm": (b"P5\n16777216 16777216\n255\n\0\0\0\0", r"truncated: 16777216x16777216 PGM needs"),
        "huge16.pgm": (b"P5\n16777216 1024\n65535\n\0\0", r"truncated: 16777216x1024 PGM needs"),
        "huge.pbm": (b"P4\n16777216 16777216\n\0", r"truncated: 16777216x16777216 PBM needs"),
        # plain: 2^24 x 1024 samples need at least 2 bytes each
        "huge-plain.pgm": (b"P2\n16777216 1024\n255\n1 2 3\n",
                           r"truncated: 17179869184 samples expected, .* hold at most 4"),
        "huge.pam": (b"P7\nWIDTH 16777216\nHEIGHT 16777216\nDEPTH 4\nMAXVAL 65535\nTUPLTYPE RGB_ALPHA\nENDHDR\n\0",
                     r"truncated: 16777216x16777216 PAM needs"),
    }
    have_png = env.run("--quiet", env.fixture("tiny-rgba.png"), env.path("probe.pgm"))[0] == 0
    if have_png:
        os.unlink(env.path("probe.pgm"))
        # 69 bytes declaring 10^6 x 10^6
        cases["huge.png"] = (png_header(1000000, 1000000) + png_chunk(b"IDAT", zlib.compress(b"\0" * 10)) +
                             png_chunk(b"IEND", b""), r"truncated: a 1000000x1000000 PNG needs at least \d+ bytes")
        cases["wide.png"] = (png_header(16777216, 16777216) + png_chunk(b"IEND", b""), r"PNG: |truncated")
    if have_png and not shadow_memory(env.halftone):
        # a real PNG of 16000 x 16000 zeros (about 250 KB): compressed
        # that well it is whole, and too large for 192 MiB (a limit a
        # sanitized build cannot start under)
        w = h = 16000
        c = zlib.compressobj(9)
        row = b"\0" * (w + 1)
        body = b"".join(c.compress(row) for _ in range(h)) + c.flush()
        cases["zeros.png"] = (png_header(w, h) + png_chunk(b"IDAT", body) + png_chunk(b"IEND", b""),
                              r"too large: 16000x16000 needs 244 MiB, more than the 192 MiB of memory")
    for name, (content, pattern) in cases.items():
        p = env.path(name)
        with open(p, "wb") as f:
            f.write(content)
        for existing in (False, True):
            out = env.path("out.pbm")
            if existing:
                with open(out, "wb") as f:
                    f.write(b"precious")
            before = snapshot(env.dir)
            t0 = time.monotonic()
            rc, _, err = env.run(p, out, preexec=limited_memory(192 if name == "zeros.png" else 1024, env.halftone))
            check(rc == 1, "%s: exit %d (%r)" % (name, rc, err))
            one_line(err, re.escape(p) + ": " + pattern, name)
            check(time.monotonic() - t0 < 10, "%s: took %.1f s" % (name, time.monotonic() - t0))
            check(snapshot(env.dir) == before, "%s: the folder changed" % name)
            if existing:
                os.unlink(out)
        os.unlink(p)


CASES = {
    "same-file": case_same_file,
    "replace": case_replace,
    "stdout": case_stdout,
    "long-name": case_long_name,
    "null-output": case_null_output,
    "disk-full": case_disk_full,
    "read-only-dir": case_read_only_dir,
    "signals": case_signals,
    "unbounded": case_unbounded,
    "declared-size": case_declared_size,
}


def main(argv):
    if len(argv) != 6 or argv[5] not in CASES:
        print("usage: test_safety.py HALFTONE HT_METRICS DATA_DIR GOLDEN CASE (cases: %s)" % ", ".join(CASES),
              file=sys.stderr)
        return 2
    env = Env(*argv[1:5])
    try:
        return run_case(argv[5], CASES[argv[5]], env, fails=(FormatError,))
    finally:
        for root, dirs, _ in os.walk(env.dir):
            for d in dirs:
                try:
                    os.chmod(os.path.join(root, d), 0o755)
                except OSError:
                    pass
        import shutil
        shutil.rmtree(env.dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
