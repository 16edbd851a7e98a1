#!/usr/bin/env python3
"""All or nothing: what `halftone` writes (suite cli).

    test_outputs.py HALFTONE DATA_DIR CASE

Each case runs in a fresh temporary folder; a failing run must leave one
line on stderr, a non-zero exit, no new file, no temporary file, and every
existing file byte-identical. Python stdlib only; the full disk is a tiny
tmpfs (root, or a user namespace where unshare allows one; skips else).

  separations-full    --separations on a disk that fills up part way: no
                      plate and no output appears, an earlier set of plates
                      stays whole (before: the first plates were renamed
                      into place one by one, a mixed set remained)
  separations-signal  SIGTERM during the work of a run with --separations:
                      no temporary file exists (each is made only to be
                      written, after the work) and none is left
  png-wide            a PNG wider or higher than libpng writes (10^6) is
                      refused before the work, not after it
  messages            --separations "" refused; --levels and gray formats
                      name what the colour mode makes; a default run on an
                      sRGB photo prints nothing
  stdout              OUTPUT - refused when standard output is the input
                      file or closed; /dev/stdout on a pipe is -
"""
import os
import re
import signal
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from cases import Skip, check, default_signals, run_case  # noqa: E402
from test_safety import Tmpfs, fill, in_namespace  # noqa: E402  (a tiny tmpfs, as root or in a user namespace)


class Env:
    def __init__(self, halftone, data):
        self.halftone, self.data = os.path.abspath(halftone), os.path.abspath(data)
        self.dir = tempfile.mkdtemp(prefix="ht-outputs-")

    def path(self, name):
        return os.path.join(self.dir, name)

    def run(self, *args, timeout=300, **kw):
        p = subprocess.run([self.halftone] + [str(a) for a in args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=timeout, **kw)
        return p.returncode, p.stdout.decode(), p.stderr.decode()

    def ok(self, *args):
        rc, out, err = self.run("--quiet", *args)
        check(rc == 0, "halftone %s: exit %d, stderr %r" % (" ".join(map(str, args)), rc, err))
        return out

    def has(self, label, name):
        """Whether this build writes `label` (as file `name`)."""
        out = self.path(name)
        rc, _, err = self.run("--quiet", os.path.join(self.data, "fixtures", "tiny.ppm"), out)
        if os.path.exists(out):
            os.unlink(out)
        return not (rc != 0 and ("no %s support" % label) in err)


def snapshot(folder):
    """{name: bytes} of every file in `folder`."""
    out = {}
    for name in sorted(os.listdir(folder)):
        with open(os.path.join(folder, name), "rb") as f:
            out[name] = f.read()
    return out


def one_line(err, pattern, what):
    lines = err.splitlines()
    check(len(lines) == 1 and re.search(pattern, lines[0]), "%s: stderr %r does not match %r" % (what, err, pattern))


def noise_ppm(path, w, h, seed=1):
    x = seed
    data = bytearray(w * h * 3)
    for i in range(len(data)):
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF
        data[i] = x >> 23
    with open(path, "wb") as f:
        f.write(b"P6\n%d %d\n255\n" % (w, h) + bytes(data))


# ------------------------------------------------------------ cases

def case_separations_full(env):
    """Three plates of 38 KB and a PNG: with room for two plates, the run
    fails at the third, and neither a plate nor the output appears; with
    an earlier set in place, that set stays as it was, whole."""
    if in_namespace(env):
        return
    src = env.path("noise.ppm")
    noise_ppm(src, 640, 480)
    out_name = "out.png" if env.has("PNG", "probe.png") else "out.ppm"
    args = ["--quiet", "--color", "per-channel"]
    plate = 640 * 480 // 8 + 20  # a PBM plate
    mnt = env.path("mnt")
    with Tmpfs(mnt, "size=4m,mode=0777"):
        out, prefix = os.path.join(mnt, out_name), os.path.join(mnt, "sep")
        for earlier in (False, True):
            if earlier:  # a complete set from another image
                noise_ppm(env.path("other.ppm"), 640, 480, seed=7)
                env.ok("--color", "per-channel", "--separations", prefix, env.path("other.ppm"), out)
                check(sorted(os.listdir(mnt)) == sorted([out_name, "sep-r.pbm", "sep-g.pbm", "sep-b.pbm"]),
                      "the earlier run: %s" % os.listdir(mnt))
            fill(mnt, 2 * plate + 8192)
            before = snapshot(mnt)
            rc, _, err = env.run(*args, "--separations", prefix, src, out)
            check(rc == 1, "--separations on a full disk: exit %d (%r)" % (rc, err))
            one_line(err, r"sep-b\.pbm: cannot write: No space left on device|%s: cannot write: No space left"
                     % re.escape(out_name), "--separations on a full disk")
            after = snapshot(mnt)
            check(after == before, "--separations on a full disk changed the folder: %s" %
                  sorted(n for n in set(after) | set(before) if after.get(n) != before.get(n)))
            os.unlink(os.path.join(mnt, "filler"))
        # with room, the same run replaces the whole set
        env.ok("--color", "per-channel", "--separations", prefix, src, out)
        env.ok("--color", "per-channel", "--separations", env.path("ref"), src, env.path(out_name))
        for name in ("sep-r.pbm", "sep-g.pbm", "sep-b.pbm"):
            check(open(os.path.join(mnt, name), "rb").read() == open(env.path("ref-" + name[4:]), "rb").read(),
                  "%s differs from the same run's elsewhere" % name)
        check(not [n for n in os.listdir(mnt) if ".tmp-" in n], "temporary files left: %s" % os.listdir(mnt))


def case_separations_signal(env):
    """SIGTERM while a run with --separations works: the plates are claimed
    before the work, like the output (checked, nothing made), and no
    temporary file is there during the work or after it."""
    src = env.path("noise.ppm")
    noise_ppm(src, 200, 150)
    out = env.path("out.ppm")
    p = subprocess.Popen([env.halftone, "--bench", "1000000", "--color", "per-channel", "--separations",
                          env.path("sep"), src, out], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         preexec_fn=default_signals)
    time.sleep(0.5)  # into the endless --bench (when does not matter: nothing is made before the write)
    check(p.poll() is None, "--bench 1000000 ended early")
    temps = [n for n in os.listdir(env.dir) if ".tmp-" in n]
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=60)
    err = err.decode()
    check(p.returncode == -signal.SIGTERM, "exit %r, wanted death by SIGTERM (%r)" % (p.returncode, err))
    check(temps == [], "temporary files during the work: %s" % temps)
    one_line(err, r"^halftone: interrupted by SIGTERM: .*out\.ppm not written$", "SIGTERM")
    check(sorted(os.listdir(env.dir)) == ["noise.ppm"], "left: %s" % os.listdir(env.dir))


def case_png_wide(env):
    """PNG holds at most 10^6 pixels a side in libpng (its writer's user
    limits): a wider or higher image is refused before the work (an
    endless --bench ends at once), not by libpng after it."""
    if not env.has("PNG", "probe.png"):
        raise Skip("this build has no PNG support")
    for w, h in ((1000001, 1), (1, 1000001)):
        src = env.path("in.pgm")
        with open(src, "wb") as f:
            f.write(b"P5\n%d %d\n255\n" % (w, h) + b"\x80" * (w * h))
        out = env.path("out.png")
        t0 = time.monotonic()
        rc, _, err = env.run("--bench", "1000000", src, out, timeout=120)
        check(rc == 1, "%dx%d PNG: exit %d (%r)" % (w, h, rc, err))
        one_line(err, r"out\.png: PNG holds at most 1000000 pixels a side \(libpng's limit\), and the image is "
                 r"%dx%d; write TIFF or netpbm$" % (w, h), "%dx%d PNG" % (w, h))
        check(time.monotonic() - t0 < 30, "%dx%d PNG: refused only after the work" % (w, h))
        check(sorted(os.listdir(env.dir)) == ["in.pgm"], "left: %s" % os.listdir(env.dir))
    # 10^6 itself is written; and the null device takes any width
    with open(src, "wb") as f:
        f.write(b"P5\n1000000 2\n255\n" + b"\x80" * 2000000)
    env.ok(src, env.path("out.png"))
    with open(src, "wb") as f:
        f.write(b"P5\n1000001 1\n255\n" + b"\x80" * 1000001)
    env.ok(src, "/dev/null")


def icc_rgb(desc, primaries, trc):
    """An RGB display profile: 'desc', rXYZ/gXYZ/bXYZ = `primaries` (D50),
    and one tone curve for r, g and b, `trc` ('curv' or 'para' data)."""
    def xyz(v):
        return b"XYZ \0\0\0\0" + b"".join(struct.pack(">i", round(c * 65536)) for c in v)
    text = desc.encode() + b"\0"
    tags = [(b"desc", b"desc\0\0\0\0" + struct.pack(">I", len(text)) + text + b"\0" * 79)]
    tags += [(k, xyz(v)) for k, v in zip((b"rXYZ", b"gXYZ", b"bXYZ"), primaries)]
    tags += [(k, trc) for k in (b"rTRC", b"gTRC", b"bTRC")]
    off = 128 + 4 + 12 * len(tags)
    table, body = b"", b""
    for sig, data in tags:
        data += b"\0" * (-len(data) % 4)
        table += sig + struct.pack(">II", off + len(body), len(data))
        body += data
    head = struct.pack(">I4sI4s4s4s", off + len(body), b"none", 0x02100000, b"mntr", b"RGB ", b"XYZ ")
    head = (head + b"\0" * 12 + b"acsp").ljust(68, b"\0") + struct.pack(">iii", 63190, 65536, 54061)
    return head.ljust(128, b"\0") + struct.pack(">I", len(tags)) + table + body


SRGB = ((0.4361, 0.2225, 0.0139), (0.3851, 0.7169, 0.0971), (0.1431, 0.0606, 0.7141))
ADOBE = ((0.6097, 0.3111, 0.0195), (0.2053, 0.6257, 0.0609), (0.1492, 0.0632, 0.7446))


def srgb_table(n):
    def f(x):
        return x / 12.92 if x <= 0.04045 else ((x + 0.055) / 1.055) ** 2.4
    return b"curv\0\0\0\0" + struct.pack(">I", n) + b"".join(struct.pack(">H", round(f(i / (n - 1)) * 65535))
                                                             for i in range(n))


def png_rgb_icc(path, w, h, icc):
    """A colour PNG (a smooth picture) with the profile in iCCP."""
    import zlib

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    raw = b"".join(b"\0" + bytes(v for x in range(w) for v in ((x * 5) & 255, (y * 5) & 255, (x + y) & 255))
                   for y in range(h))
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
                + chunk(b"iCCP", b"a profile\0\0" + zlib.compress(icc)) + chunk(b"IDAT", zlib.compress(raw))
                + chunk(b"IEND", b""))


def case_messages(env):
    """What the messages say: --separations "" is refused; --levels with
    the wrong count names what the planes are (the inks for cmyk, the
    input's channels else); a gray format for colour output names the
    colour mode asked for; and a default run on an sRGB photo prints
    nothing, while a profile gray output cannot stand for (another RGB
    space, linear sRGB) still gets its notice."""
    tiny, crop = (os.path.join(env.data, "fixtures", n) for n in ("tiny.ppm", "photo-crop.pgm"))
    usage = [(["--color", "per-channel", "--separations", "", tiny, "out.ppm"],
              r"^halftone: --separations needs a PREFIX for the plates' names \(PREFIX-r\.pbm, PREFIX-c\.pbm \.\.\.\), "
              r"not '' \(see halftone --help\)$"),
             (["--levels", "4,4,4", "--color", "cmyk", tiny, "out.ppm"],
              r"^halftone: --levels gives 3 values, one per colour plane, but --color cmyk has 4 ink planes "
              r"\(C, M, Y, K\) \(see halftone --help\)$"),
             (["--levels", "4,4,4", "--color", "per-channel", crop, "out.ppm"],
              r"^halftone: --levels gives 3 values, one per colour plane, but .*photo-crop\.pgm has 1 colour channel "),
             (["--color", "cmyk", tiny, "x.pbm"],
              r"^halftone: x\.pbm: --color cmyk gives four ink planes; write \.tif \(a CMYK TIFF\) or \.ppm or \.png "
              r"\(their RGB rendering\) \(see halftone --help\)$"),
             (["--color", "plane-dependent", tiny, "x.pgm"],
              r"^halftone: x\.pgm: --color plane-dependent on colour input gives RGB; write \.ppm or \.png ")]
    for args, pattern in usage:
        rc, _, err = env.run(*args, cwd=env.dir)
        check(rc == 2, "%s: exit %d (%r)" % (args, rc, err))
        one_line(err, pattern, " ".join(args))
    check(os.listdir(env.dir) == [], "left: %s" % os.listdir(env.dir))
    if not env.has("PNG", "probe.png"):
        raise Skip("this build has no PNG support")
    outs = ["out.png"] + (["out.tif"] if env.has("TIFF", "probe.tif") else [])
    # the project's own sRGB photo (HP's sRGB IEC61966-2.1), and sRGB
    # profiles written here: a table, a parametric curve, a gamma of 2.2
    photos = [os.path.join(env.data, "coffee.png")]
    for name, trc in (("table", srgb_table(1024)), ("para", b"para\0\0\0\0" + struct.pack(">HHi", 0, 0, round(2.4 * 65536))),
                      ("gamma", b"curv\0\0\0\0" + struct.pack(">IH", 1, round(2.2 * 256)) + b"\0\0")):
        photos.append(env.path("srgb-%s.png" % name))
        png_rgb_icc(photos[-1], 64, 48, icc_rgb("sRGB (%s)" % name, SRGB, trc))
    for photo in photos:
        for out in outs:
            rc, _, err = env.run(photo, env.path(out))
            check(rc == 0 and err == "", "%s -> %s: exit %d, stderr %r (wanted nothing)" % (photo, out, rc, err))
    for name, prim, trc in (("Adobe RGB", ADOBE, b"curv\0\0\0\0" + struct.pack(">IH", 1, 563) + b"\0\0"),
                            ("linear sRGB", SRGB, b"curv\0\0\0\0" + struct.pack(">I", 0))):
        photo = env.path("other.png")
        png_rgb_icc(photo, 64, 48, icc_rgb(name, prim, trc))
        for out in outs:
            rc, _, err = env.run(photo, env.path(out))
            check(rc == 0, "%s -> %s: exit %d (%r)" % (name, out, rc, err))
            one_line(err, r"^halftone: .*%s: the input's ICC profile \(%s, RGB\) is not kept: it describes RGB and the "
                     r"output is gray$" % (re.escape(out), name), "%s -> %s" % (name, out))


def case_stdout(env):
    """OUTPUT - (standard output) is refused when standard output is the
    input file (1<>in.pgm: it would be written while it is read), under
    any name, also when the input comes from standard input, and when it
    is closed (the image would go to /dev/null, with exit 0); /dev/stdout
    is standard output where that is a pipe (the bytes of -), and a file
    it points to is replaced as any named file."""
    src = env.path("in.pgm")
    with open(os.path.join(env.data, "fixtures", "photo-crop.pgm"), "rb") as f:
        original = f.read()
    with open(src, "wb") as f:
        f.write(original)
    os.link(src, env.path("hard.pgm"))
    ref = env.path("ref.pbm")
    env.ok(src, ref)
    reference = open(ref, "rb").read()
    for inp, stdin in ((src, None), (env.path("hard.pgm"), None), ("-", src)):
        with open(src, "r+b") as same:  # 1<>in.pgm: read-write, not truncated
            fin = open(stdin, "rb") if stdin else subprocess.DEVNULL
            p = subprocess.run([env.halftone, "--format", "pgm", "--levels", "256", inp, "-"], stdin=fin, stdout=same,
                               stderr=subprocess.PIPE, timeout=60)
            if stdin:
                fin.close()
        err = p.stderr.decode()
        check(p.returncode == 1, "%s, standard output the input: exit %d (%r)" % (inp, p.returncode, err))
        one_line(err, r"^halftone: -: standard output is the input file; writing it would destroy the input",
                 "%s, standard output the input" % inp)
        check(open(src, "rb").read() == original, "%s: the input changed" % inp)
    # standard output closed
    p = subprocess.run([env.halftone, "--format", "pbm", src, "-"], stderr=subprocess.PIPE, timeout=60,
                       preexec_fn=lambda: os.close(1))
    err = p.stderr.decode()
    check(p.returncode == 1, "standard output closed: exit %d (%r)" % (p.returncode, err))
    one_line(err, r"^halftone: -: standard output is closed; redirect it", "standard output closed")
    for name in ("/dev/stdout", "/proc/self/fd/1"):
        if not os.path.exists(name):
            continue
        p = subprocess.run([env.halftone, "--format", "pbm", src, name], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=60, preexec_fn=lambda: os.close(1))
        check(p.returncode == 1 and b"standard output is closed" in p.stderr, "%s closed: exit %d (%r)" %
              (name, p.returncode, p.stderr))
        # a pipe: written as - is
        p = subprocess.run([env.halftone, "--format", "pbm", src, name], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=60)
        check(p.returncode == 0 and p.stdout == reference,
              "%s on a pipe: exit %d, %d bytes (%r)" % (name, p.returncode, len(p.stdout), p.stderr))
        rc, _, err = env.run(src, name, stdin=subprocess.DEVNULL)
        check(rc == 2 and re.search(r"OUTPUT %s \(standard output\) needs --format" % re.escape(name), err),
              "%s without --format: exit %d (%r)" % (name, rc, err))
        # a regular file: replaced as a named file is
        out = env.path("via-stdout.pbm")
        with open(out, "wb") as f:
            p = subprocess.run([env.halftone, "--format", "pbm", src, name], stdout=f, stderr=subprocess.PIPE,
                               timeout=60)
        check(p.returncode == 0 and open(out, "rb").read() == reference,
              "%s to a file: exit %d (%r)" % (name, p.returncode, p.stderr))
    check(not [n for n in os.listdir(env.dir) if ".tmp-" in n], "temporary files left: %s" % os.listdir(env.dir))


CASES = {
    "separations-full": case_separations_full,
    "separations-signal": case_separations_signal,
    "png-wide": case_png_wide,
    "messages": case_messages,
    "stdout": case_stdout,
}


def main(argv):
    if len(argv) != 4 or argv[3] not in CASES:
        print("usage: test_outputs.py HALFTONE DATA_DIR CASE (cases: %s)" % ", ".join(CASES), file=sys.stderr)
        return 2
    env = Env(argv[1], argv[2])
    try:
        return run_case(argv[3], CASES[argv[3]], env)
    finally:
        import shutil
        shutil.rmtree(env.dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
