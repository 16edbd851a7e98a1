#!/usr/bin/env python3
"""Tests of the `halftone` command line (suite cli). Python stdlib only.

    test_cli.py HALFTONE HT_METRICS DATA_DIR GOLDEN CASE

Each CASE is one Meson test; it runs in a fresh temporary folder and exits
0 (pass), 1 (fail) or 77 (skip: e.g. PNG cases in a build without libpng).
"""
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile



# ------------------------------------------------------------ image files

# cases.py one folder up; pnm.py in imageio/, shared with tools/bench/
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "imageio"))
from cases import Skip, check, run_case  # noqa: E402
from pnm import FormatError, read_png, read_pnm, write_png, write_pnm  # noqa: E402


# ------------------------------------------------------------ running

class Env:
    def __init__(self, halftone, metrics, data, golden):
        self.halftone, self.metrics, self.data, self.golden = halftone, metrics, data, golden
        self.dir = tempfile.mkdtemp(prefix="ht-cli-")
        self.crop = os.path.join(data, "fixtures", "photo-crop.pgm")

    def path(self, name):
        return os.path.join(self.dir, name)

    def fixture(self, name):
        return os.path.join(self.data, "fixtures", name)

    def run(self, *args, tool=None, preexec=None, timeout=300):
        p = subprocess.run([tool or self.halftone] + [str(a) for a in args],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout, preexec_fn=preexec)
        return p.returncode, p.stdout.decode(), p.stderr.decode()

    def ok(self, *args):
        rc, out, err = self.run("--quiet", *args)
        check(rc == 0, "halftone %s: exit %d, stderr %r" % (" ".join(map(str, args)), rc, err))
        return out

    def need_png(self):
        if not self.has_png():
            raise Skip("this build has no PNG support")

    def has_png(self):
        """Whether the tool reads PNG; leaves no file behind (cases that
        count the folder's files call it too)."""
        probe = self.path("probe.pgm")
        rc, _, err = self.run("--quiet", self.fixture("tiny-rgba.png"), probe)
        if os.path.exists(probe):
            os.unlink(probe)
        return not (rc != 0 and "no PNG support" in err)

    def listing(self):
        return sorted(os.listdir(self.dir))


def digest(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def library_choices(data):
    """The names of the library's lists (ht_choices), read from the core's
    sources (DATA_DIR/../core) rather than from the tool under test:
    {"filters": [...], "variants": [...], "backends": [...], "colors": [...]}."""
    core = os.path.join(os.path.dirname(os.path.abspath(data)), "core")
    text = ""
    for name in ("filters.c", "names.c", "impl_cpu.c", "impl_cuda.c"):
        text += open(os.path.join(core, name), encoding="utf-8").read()
    lists = {}
    for key, prefix in (("filters", "FILTER"), ("variants", "VARIANT"), ("backends", "BACKEND"),
                        ("colors", "COLOR")):
        names = re.findall(r'\{\s*HT_%s_[A-Z0-9_]+,\s*"([a-z0-9-]+)"' % prefix, text)
        lists[key] = list(dict.fromkeys(names))
    # the regular expression still finds what it should
    for key, known in (("filters", ["floyd-steinberg", "atkinson", "custom"]), ("variants", ["auto", "ed", "wavefront"]),
                       ("backends", ["auto", "cpu", "cuda"]), ("colors", ["luma", "per-channel"])):
        check(all(k in lists[key] for k in known), "core sources: found %s %r" % (key, lists[key]))
    return lists


def refused(variant, rc, err):
    """Whether a run was refused because `variant` cannot take the job: the
    library's word (ht_check), a usage error (exit 2) of one line naming
    the variant, given before the input is read."""
    return rc == 2 and err.count("\n") == 1 and re.search(r"variant %s\b" % re.escape(variant), err) is not None


# ------------------------------------------------------------ cases

def expect_error(env, args, rc_want, pattern, out_name="out.pbm", pre=True):
    """The run fails with rc_want and one line naming the problem; the
    output does not appear, an existing output is untouched, and no
    temporary file is left behind."""
    for existing in ((False, True) if pre else (False,)):
        out = env.path(out_name)
        if existing:
            with open(out, "wb") as f:
                f.write(b"precious")
        elif os.path.isfile(out):
            os.unlink(out)
        before = env.listing()
        full = [a.replace("{out}", out) if isinstance(a, str) else a for a in args]
        if "{out}" not in " ".join(map(str, args)):
            full = full + [out]
        rc, stdout, err = env.run(*full)
        lines = err.splitlines()
        check(rc == rc_want, "%s: exit %d, wanted %d (stderr %r)" % (args, rc, rc_want, err))
        check(len(lines) == 1, "%s: stderr should be one line, got %r" % (args, err))
        check(lines[0].startswith("halftone: "), "%s: message %r lacks the 'halftone: ' prefix" % (args, lines[0]))
        check(re.search(pattern, lines[0]), "%s: message %r does not match %r" % (args, lines[0], pattern))
        check(env.listing() == before, "%s: files changed: %s -> %s" % (args, before, env.listing()))
        if existing:
            check(open(out, "rb").read() == b"precious", "%s: existing output was modified" % (args,))


def case_errors_usage(env):
    c = env.crop
    expect_error(env, ["--bogus", c], 2, r"unknown option '--bogus'")
    expect_error(env, ["--levels", "1", c], 2, r"--levels .*2\.\.256.*'1'")
    expect_error(env, ["--levels", "300", c], 2, r"--levels .*'300'")
    expect_error(env, ["--levels", "4x", c], 2, r"--levels .*'4x'")
    # digits only: strtol alone takes leading blanks and a sign
    expect_error(env, ["--levels", " 4", c], 2, r"--levels .*' 4'", out_name="out.pgm")
    expect_error(env, ["--levels", "+3", c], 2, r"--levels .*'\+3'", out_name="out.pgm")
    expect_error(env, ["--levels", "4, 4,2", "--color", "per-channel", env.fixture("tiny.ppm")], 2,
                 r"--levels .*'4, 4,2'", out_name="out.ppm")
    expect_error(env, ["--threads", "+1", c], 2, r"--threads .*'\+1'")
    expect_error(env, ["--bench", " 2", c], 2, r"--bench .*' 2'")
    expect_error(env, ["--levels", "4", c], 2, r"PBM holds 2 levels")
    expect_error(env, ["--algorithm", "nope", c], 2, r"unknown filter 'nope'")
    expect_error(env, ["--algorithm", "custom", c], 2, r"needs --coefficients")
    expect_error(env, ["--coefficients", "- * 7; 3 5 1 / 16", c], 2, r"--coefficients goes with --algorithm custom")
    expect_error(env, ["--algorithm", "custom", "--coefficients", "- * 7; 3 x 1", c], 2, r"position 10")
    expect_error(env, ["--algorithm", "custom", "--coefficients", "- * 7; 3 5 1 / 0", c], 2, r"--coefficients: .*position")
    # what the library refuses (ht_check) is a usage error with its message,
    # given before the input is read
    expect_error(env, ["--serpentine", "--variant", "wavefront", c], 2, r"serpentine.*variant wavefront")
    missing = env.path("missing.pgm")
    serpentine_refusals = 0
    for v in [n for n in library_choices(env.data)["variants"] if n not in ("auto", "ed")]:
        # which variants take the job is the library's word: one that refuses
        # the plain job on the CPU (a GPU variant, one of another method) says
        # so again with --serpentine, first; one that takes it (and then
        # fails on the missing input) refuses the serpentine scan, naming it,
        # or takes that too
        rc, _, err = env.run("--backend", "cpu", "--variant", v, missing, env.path("out.pbm"))
        if refused(v, rc, err):
            expect_error(env, ["--serpentine", "--backend", "cpu", "--variant", v, missing], 2,
                         re.escape(err.strip()))
            continue
        check(rc == 1 and "missing.pgm" in err, "--variant %s: exit %d, %r" % (v, rc, err))
        rc, _, err = env.run("--serpentine", "--backend", "cpu", "--variant", v, missing, env.path("out.pbm"))
        if rc == 2:
            expect_error(env, ["--serpentine", "--backend", "cpu", "--variant", v, missing], 2,
                         r"serpentine.*variant %s\b" % re.escape(v))
            serpentine_refusals += 1
        else:
            check(rc == 1 and "missing.pgm" in err, "--serpentine --variant %s: exit %d, %r" % (v, rc, err))
    check(serpentine_refusals > 0, "no variant refuses the serpentine scan")
    expect_error(env, ["--serpentine", "--backend", "cuda", missing], 2, r"backend cuda: .*serpentine")
    expect_error(env, ["--variant", "gpu-fast", "--backend", "cpu", missing], 2,
                 r"variant gpu-fast runs on the GPU; backend cpu")
    expect_error(env, ["--variant", "ed", "--backend", "cuda", missing], 2, r"variant ed is a CPU variant")
    expect_error(env, ["--levels", "4,4,2", c], 2, r"--levels .*needs --color per-channel")
    expect_error(env, ["--levels", "4,4", "--color", "per-channel", c], 2, r"--levels .*'4,4'")
    expect_error(env, ["--levels", "4,4,4,4,4", "--color", "per-channel", c], 2, r"--levels .*'4,4,4,4,4'")
    expect_error(env, ["--levels", "4,1,4", "--color", "per-channel", c], 2, r"--levels .*2\.\.256.*'4,1,4'")
    expect_error(env, ["--levels", "2,2,2", "--color", "per-channel", c], 2, r"PBM holds one plane")
    expect_error(env, ["--levels", "4,4,4,4", "--color", "per-channel", env.fixture("tiny.ppm")], 2,
                 r"--levels gives 4 values.*has 3", out_name="out.ppm")
    expect_error(env, ["--levels", "4,4,4", "--color", "per-channel", c], 2, r"--levels gives 3 values.*has 1",
                 out_name="out.pgm")
    expect_error(env, ["--variant", "fastest", c], 2, r"unknown variant 'fastest'")
    expect_error(env, ["--backend", "gpu", c], 2, r"--backend .*'gpu'")
    expect_error(env, ["--color", "cmy", c], 2, r"--color .*'cmy'")
    expect_error(env, ["--color", "cmyk", c], 2, r"cmyk separates RGB input; the input has 1 colour")
    expect_error(env, ["--threads", "-1", c], 2, r"--threads .*'-1'")
    expect_error(env, ["--bench", "0", c], 2, r"--bench .*'0'")
    expect_error(env, [c, "{out}", "--levels"], 2, r"'--levels' needs a value")
    expect_error(env, [c, "{out}", "extra"], 2, r"INPUT and OUTPUT")
    expect_error(env, [c, "{out}"], 2, r"unknown output type", out_name="out.jpg")
    expect_error(env, [c, "{out}"], 2, r"unknown output type", out_name="out")
    expect_error(env, ["--color", "per-channel", env.fixture("tiny.ppm")], 2, r"per-channel.*\.ppm or \.png",
                 out_name="out.pgm")
    expect_error(env, [c], 2, r"PPM output", out_name="out.ppm")
    rc, out, err = env.run()
    check(rc == 2 and len(err.splitlines()) == 1 and "INPUT and OUTPUT" in err, "no arguments: %d %r" % (rc, err))


def case_errors_input(env):
    crop = open(env.crop, "rb").read()
    bad = {
        "empty.pgm": (b"", r"empty file"),
        "garbage.pgm": (b"this is not an image\n" * 10, r"not a PGM, PPM, PBM, PAM, PNG, TIFF or JPEG"),
        "trunc.pgm": (crop[:1000], r"truncated: 257x193 PGM needs 49601 bytes.*has 985"),
        "trunc-header.pgm": (b"P5\n257 ", r"truncated header.*height"),
        "zero-width.pgm": (b"P5\n0 10\n255\n", r"bad header: the width at byte 4 must be 1\.\."),
        "maxval0.pgm": (b"P5\n2 2\n0\n\0\0\0\0", r"bad header: the maxval at byte \d+ must be 1\.\.65535"),
        "maxval-big.pgm": (b"P5\n2 2\n70000\n", r"bad header: the maxval at byte \d+ must be 1\.\.65535"),
        "letters.pgm": (b"P5\nwide 2\n255\n", r"bad header: expected the width at byte 4"),
        "over-maxval.pgm": (b"P5\n2 1\n1000\n\x00\x01\x07\xd0", r"sample 2000 at pixel \(1, 0\) exceeds maxval 1000"),
        "plain-bad.pgm": (b"P2\n2 2\n255\n1 2 3 x\n", r"bad sample at byte 18 \(pixel 1, 1\)"),
        "plain-over.pgm": (b"P2\n2 1\n255\n300 1\n", r"sample 300 at byte 12 \(pixel 0, 0\) exceeds maxval 255"),
        "plain-over16.ppm": (b"P3\n1 1\n1000\n1 2 70000\n", r"sample 70000 at byte \d+ \(pixel 0, 0\) exceeds maxval 1000"),
        "plain-short.pgm": (b"P2\n2 2\n255\n1 2 3\n", r"truncated: 4 samples expected.*after 3"),
        "huge.pgm": (b"P5\n99999999 2\n255\n", r"bad header: the width at byte 4 must be 1\.\.16777216"),
        "pam.pgm": (b"P7\nWIDTH 2\n", r"truncated header: the PAM header has no ENDHDR"),
        "pam-depth.pam": (b"P7\nWIDTH 2\nHEIGHT 1\nDEPTH 2\nMAXVAL 255\nTUPLTYPE GRAYSCALE\nENDHDR\n\0\0\0\0",
                          r"PAM with depth 2 and tuple type 'GRAYSCALE'"),
    }
    for name, (content, pattern) in bad.items():
        p = env.path(name)
        with open(p, "wb") as f:
            f.write(content)
        expect_error(env, [p], 1, re.escape(p) + ": " + pattern)
        os.unlink(p)
    expect_error(env, [env.path("missing.pgm")], 1, r"missing\.pgm: cannot open: No such file")
    if os.geteuid() != 0:  # root reads anything
        shutil.copy(env.crop, env.path("locked.pgm"))
        os.chmod(env.path("locked.pgm"), 0)
        expect_error(env, [env.path("locked.pgm")], 1, r"locked\.pgm: cannot open: Permission denied")
        os.unlink(env.path("locked.pgm"))
    expect_error(env, [env.dir], 1, r"is a folder")
    # output side: a folder that does not exist, an output that is a folder
    expect_error(env, [env.crop], 1, r"no-such-dir/: No such file or directory",
                 out_name="no-such-dir/out.pbm", pre=False)
    # a write that fails half-way (file size limit, like a full disk):
    # the partial temporary file is removed, nothing appears
    def small_files():
        import resource
        import signal
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # get EFBIG instead of a signal
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
    for name in ("big.pbm", "big.png"):
        if name.endswith(".png") and "no PNG support" in env.run("--quiet", env.crop, env.path("p.png"))[2]:
            continue
        for f in os.listdir(env.dir):
            os.unlink(env.path(f))
        rc, _, err = env.run("--quiet", env.crop, env.path(name), preexec=small_files)
        check(rc == 1 and len(err.splitlines()) == 1 and re.search(r"File too large", err),
              "%s: failing write: exit %d, %r" % (name, rc, err))
        check(env.listing() == [], "%s: failing write left %s" % (name, env.listing()))
    os.mkfifo(env.path("fifo.pbm"))
    expect_error(env, [env.crop], 1, r"fifo\.pbm: exists and is not a regular file", out_name="fifo.pbm", pre=False)
    os.unlink(env.path("fifo.pbm"))
    os.mkdir(env.path("dir.pbm"))
    expect_error(env, [env.crop], 1, r"dir\.pbm: is a folder", out_name="dir.pbm", pre=False)
    os.rmdir(env.path("dir.pbm"))


def case_errors_png(env):
    env.need_png()
    png = open(env.fixture("tiny-rgba.png"), "rb").read()
    cases = {
        "trunc.png": png[:len(png) // 2],
        "crc.png": png[:40] + bytes([png[40] ^ 0xFF]) + png[41:],
        "sig-only.png": png[:8],
    }
    for name, content in cases.items():
        p = env.path(name)
        with open(p, "wb") as f:
            f.write(content)
        expect_error(env, [p], 1, re.escape(p) + r": PNG: ")
        os.unlink(p)


def auto_notice(env, detail):
    """Where backend auto would use the GPU (opening it free, one thread,
    0.96 M pixels) and none opens: one line, the words every front end
    shares (ht_notice_no_gpu); the details (`detail`) only with --verbose."""
    big = env.path("big.pgm")
    write_pnm(big, "P5", 1200, 800, 255, [(i * 7) & 255 for i in range(1200 * 800)])
    os.environ["HT_AUTO_GPU_OPEN_MS"] = "0"
    try:
        rc, _, err = env.run("--backend", "auto", "--threads", "1", big, env.path("auto.pbm"))
        check(rc == 0 and err.strip().splitlines() == ["halftone: no NVIDIA GPU found; computed on the CPU, same result"],
              "backend auto without a GPU: exit %d, %r" % (rc, err))
        rc, _, err = env.run("--verbose", "--backend", "auto", "--threads", "1", big, env.path("auto.pbm"))
        check(rc == 0 and "no NVIDIA GPU found" in err and detail in err,
              "--verbose, backend auto without a GPU: exit %d, %r" % (rc, err))
    finally:
        del os.environ["HT_AUTO_GPU_OPEN_MS"]


def case_threads_notice(env):
    """Far more threads than cores (--threads 4096) run, with the same bits,
    and say once that they are slower; a count near the cores says nothing."""
    env.ok("--threads", "1", env.crop, env.path("one.pbm"))
    rc, _, err = env.run("--threads", "4096", env.crop, env.path("many.pbm"))
    check(rc == 0, "--threads 4096: exit %d, %r" % (rc, err))
    lines = err.strip().splitlines()
    check(len(lines) == 1 and re.fullmatch(r"halftone: 4096 threads on \d+ core\(s\) run slower than one a core, "
                                           r"with the same result \(0 takes every core\)", lines[0]),
          "--threads 4096: %r" % err)
    check(digest(env.path("many.pbm")) == digest(env.path("one.pbm")), "--threads 4096 changed the bits")
    rc, _, err = env.run("--threads", "2", env.crop, env.path("two.pbm"))
    check(rc == 0 and err == "", "--threads 2: exit %d, %r" % (rc, err))


def case_backend_cuda(env):
    """Without a usable GPU, --backend cuda is a clear one-line error; with
    one, its output equals the CPU's bit for bit."""
    out = env.path("cuda.pbm")
    rc, _, err = env.run("--backend", "cuda", env.crop, out)
    if rc == 0:
        env.ok("--backend", "cpu", env.crop, env.path("cpu.pbm"))
        check(digest(out) == digest(env.path("cpu.pbm")), "cuda output differs from cpu output")
        return
    expect_error(env, ["--backend", "cuda", env.crop], 1, r"backend cuda: ")
    check("Traceback" not in err and "Segmentation" not in err, "crash: %r" % err)
    # a GPU variant with --backend left at auto: the variant asked for the
    # GPU, and the message says so rather than blaming "backend cuda"
    expect_error(env, ["--variant", "gpu-fast", env.crop], 1, r"halftone: variant gpu-fast runs on the GPU, and "
                 r"there is none usable: (?!backend cuda)")
    nodes = ("/dev/nvidiactl", "/dev/nvidia0", "/dev/dxg", "/proc/driver/nvidia/version")
    if os.environ.get("HT_TEST_CUDA_MODULE_BUILT") == "0":
        # a build without the CUDA module (-Dcuda=disabled): the loader finds none
        check("module" in err and "not found" in err, "backend cuda in a build without CUDA: %r" % err)
        auto_notice(env, "GPU: the CUDA module")
        return
    if not any(os.path.exists(n) for n in nodes) and not os.environ.get("HT_CUDA_MODULE"):
        # no driver at all: the module is not even loaded (it costs ~4 ms
        # of every run), and both messages say why
        check("no NVIDIA driver" in err, "backend cuda without a driver: %r" % err)
        # auto keeps an image this small on the CPU without trying the GPU
        rc, _, err = env.run("--backend", "auto", env.crop, env.path("auto.pbm"))
        check(rc == 0 and err == "", "backend auto, small image: exit %d, %r" % (rc, err))
        auto_notice(env, "GPU: no NVIDIA driver")


def case_formats_roundtrip(env):
    """PBM, PGM and (1-bit and 8-bit) PNG outputs hold the same pixels."""
    with open(env.path("o.pbm"), "wb") as f:  # an existing output is replaced whole
        f.write(b"old content, longer than nothing" * 10000)
    os.umask(0o022)
    env.ok(env.crop, env.path("o.pbm"))
    check(os.stat(env.path("o.pbm")).st_mode & 0o777 == 0o644, "output mode is not 0666 & ~umask")
    check(env.listing() == ["o.pbm"], "stray files next to the output: %s" % env.listing())
    env.ok(env.crop, env.path("o.pgm"))
    k, w, h, _, bits = read_pnm(env.path("o.pbm"))
    check((k, w, h) == ("P4", 257, 193), "PBM header %r" % ((k, w, h),))
    k, w2, h2, mv, gray = read_pnm(env.path("o.pgm"))
    check((k, w2, h2, mv) == ("P5", 257, 193, 255), "PGM header")
    check(set(gray) <= {0, 255}, "PGM of a 2-level halftone holds values other than 0 and 255")
    check([v // 255 for v in gray] == bits, "PBM and PGM outputs differ")
    mean = sum(gray) / len(gray)
    mean_in = sum(read_pnm(env.crop)[4]) / len(gray)
    check(abs(mean - mean_in) < 2.0, "tone not kept: %.2f vs %.2f" % (mean, mean_in))
    try:
        env.need_png()
    except Skip:
        return
    env.ok(env.crop, env.path("o.png"))
    w3, h3, ch, depth, px = read_png(env.path("o.png"))
    check((w3, h3, ch, depth) == (257, 193, 1, 1), "1-bit PNG layout %r" % ((w3, h3, ch, depth),))
    check(px == bits, "PNG and PBM outputs differ")
    env.ok("--levels", "3", env.crop, env.path("o3.png"))
    env.ok("--levels", "3", env.crop, env.path("o3.pgm"))
    _, _, ch, depth, px3 = read_png(env.path("o3.png"))
    check((ch, depth) == (1, 8), "3-level PNG layout")
    check(set(px3) <= {0, 128, 255} and len(set(px3)) == 3, "3 levels should be 0/128/255, got %s" % sorted(set(px3)))
    check(px3 == read_pnm(env.path("o3.pgm"))[4], "PNG and PGM 3-level outputs differ")
    # our output read back as input (PBM and PNG input paths)
    env.ok(env.path("o.pbm"), env.path("again.pbm"))
    check(digest(env.path("again.pbm")) == digest(env.path("o.pbm")), "a halftone is not a fixed point")


def case_twins(env):
    """The same picture stored in different ways gives the same halftone:
    8-bit and 16-bit PGM (v * 257), maxval 15 (v = s * 17), plain P2,
    gray PNG 8/16-bit, and gray written as RGB (luma of R=G=B is gray)."""
    _, w, h, _, px = read_pnm(env.crop)
    ref = env.path("ref.pgm")
    env.ok("--levels", "5", env.crop, ref)
    twins = {}
    write_pnm(env.path("t16.pgm"), "P5", w, h, 65535, [v * 257 for v in px])
    twins["16-bit PGM"] = env.path("t16.pgm")
    write_pnm(env.path("plain.pgm"), "P2", w, h, 255, px)
    twins["plain PGM"] = env.path("plain.pgm")
    write_pnm(env.path("rgb.ppm"), "P6", w, h, 255, [v for v in px for _ in range(3)])
    twins["gray as PPM"] = env.path("rgb.ppm")
    write_pnm(env.path("rgb16.ppm"), "P3", w, h, 65535, [v * 257 for v in px for _ in range(3)])
    twins["gray as plain 16-bit PPM"] = env.path("rgb16.ppm")
    try:
        env.need_png()
        write_png(env.path("g8.png"), w, h, 1, 8, px)
        write_png(env.path("g16.png"), w, h, 1, 16, [v * 257 for v in px])
        twins["8-bit PNG"] = env.path("g8.png")
        twins["16-bit PNG"] = env.path("g16.png")
    except Skip:
        pass
    for what, path in twins.items():
        out = env.path("twin.pgm")
        env.ok("--levels", "5", path, out)
        check(digest(out) == digest(ref), "%s gives a different halftone than the 8-bit PGM" % what)
    # maxval 15 (4-bit values in an 8-bit container) vs the same values * 17
    q = [v // 17 for v in px]
    write_pnm(env.path("m15.pgm"), "P5", w, h, 15, q)
    write_pnm(env.path("m15x17.pgm"), "P5", w, h, 255, [s * 17 for s in q])
    env.ok("--levels", "5", env.path("m15.pgm"), env.path("a.pgm"))
    env.ok("--levels", "5", env.path("m15x17.pgm"), env.path("b.pgm"))
    check(digest(env.path("a.pgm")) == digest(env.path("b.pgm")), "maxval 15 not scaled to full range")
    # maxval 257 in a 16-bit container vs the same values * 255
    q = [v * 257 // 255 for v in px]
    write_pnm(env.path("m257.pgm"), "P5", w, h, 257, q)
    write_pnm(env.path("m257x255.pgm"), "P5", w, h, 65535, [s * 255 for s in q])
    env.ok(env.path("m257.pgm"), env.path("a.pbm"))
    env.ok(env.path("m257x255.pgm"), env.path("b.pbm"))
    check(digest(env.path("a.pbm")) == digest(env.path("b.pbm")), "maxval 257 not scaled to full range")


def case_color(env):
    """per-channel: each channel is dithered on its own, so channel c of the
    RGB result equals the halftone of channel c alone; luma: one plane."""
    _, w, h, _, px = read_pnm(env.fixture("tiny.ppm"))
    env.ok("--color", "per-channel", "--levels", "3", env.fixture("tiny.ppm"), env.path("rgb.ppm"))
    k, w2, h2, _, out = read_pnm(env.path("rgb.ppm"))
    check((k, w2, h2) == ("P6", w, h), "per-channel output is not a %dx%d PPM" % (w, h))
    for c in range(3):
        write_pnm(env.path("c.pgm"), "P5", w, h, 255, px[c::3])
        env.ok("--levels", "3", env.path("c.pgm"), env.path("c-out.pgm"))
        check(read_pnm(env.path("c-out.pgm"))[4] == out[c::3], "channel %d differs from dithering it alone" % c)
    # levels per plane: each plane as with its own --levels; one value for
    # all the same as --levels N
    env.ok("--color", "per-channel", "--levels", "3,3,3", env.fixture("tiny.ppm"), env.path("rgb3.ppm"))
    check(read_pnm(env.path("rgb3.ppm"))[4] == out, "--levels 3,3,3 differs from --levels 3")
    env.ok("--color", "per-channel", "--levels", "4,3,2", env.fixture("tiny.ppm"), env.path("rgb432.ppm"))
    planes = read_pnm(env.path("rgb432.ppm"))[4]
    for c, levels in enumerate([4, 3, 2]):
        write_pnm(env.path("c.pgm"), "P5", w, h, 255, px[c::3])
        env.ok("--levels", str(levels), env.path("c.pgm"), env.path("c-out.pgm"))
        check(read_pnm(env.path("c-out.pgm"))[4] == planes[c::3], "--levels 4,3,2: channel %d differs" % c)
        check(len(set(planes[c::3])) <= levels, "--levels 4,3,2: channel %d has %d values" % (c, len(set(planes[c::3]))))
    env.ok(env.fixture("tiny.ppm"), env.path("luma.pgm"))
    env.ok("--color", "luma", env.fixture("tiny.ppm"), env.path("luma2.pgm"))
    check(digest(env.path("luma.pgm")) == digest(env.path("luma2.pgm")), "luma is not the default")
    check(read_pnm(env.path("luma.pgm"))[0] == "P5", "luma output is not gray")
    try:
        env.need_png()
    except Skip:
        return
    env.ok("--color", "per-channel", env.fixture("tiny.ppm"), env.path("rgb.png"))
    env.ok("--color", "per-channel", env.fixture("tiny.ppm"), env.path("rgb2.ppm"))
    _, _, ch, depth, pp = read_png(env.path("rgb.png"))
    check((ch, depth) == (3, 8), "per-channel PNG layout %r" % ((ch, depth),))
    check(pp == read_pnm(env.path("rgb2.ppm"))[4], "per-channel PNG and PPM differ")
    # a palette PNG is expanded to RGB
    env.ok(env.fixture("tiny-palette.png"), env.path("pal.pbm"))


def case_ordered(env):
    """--algorithm bayer: a threshold per pixel from Bayer's matrix (the
    library's test-ordered checks the bits against a reference); from the
    CLI: the same image on 1 and 3 threads, --mask-size changes it, only
    powers of two are taken, and options of other methods are refused."""
    img = env.fixture("photo-crop.pgm")
    env.ok("--algorithm", "bayer", "--threads", "1", img, env.path("b1.pgm"))
    env.ok("--algorithm", "bayer", "--threads", "3", img, env.path("b3.pgm"))
    check(digest(env.path("b1.pgm")) == digest(env.path("b3.pgm")), "bayer: 1 and 3 threads differ")
    env.ok("--algorithm", "bayer", "--mask-size", "2", img, env.path("b2.pgm"))
    check(digest(env.path("b1.pgm")) != digest(env.path("b2.pgm")), "bayer: --mask-size 2 changes nothing")
    expect_error(env, ["--algorithm", "bayer", "--mask-size", "6", img], 2, r"--mask-size must be a whole number "
                 r"2\.\.256, a power of two, not '6'")
    expect_error(env, ["--algorithm", "bayer", "--window", "3", img], 2, r"--window goes with --algorithm les or "
                 r"pes, not with bayer")
    expect_error(env, ["--mask-size", "4", img], 2, r"--mask-size goes with --algorithm bayer, not with "
                 r"floyd-steinberg")
    env.ok("--algorithm", "bayer", "--levels", "3", "--color", "per-channel", env.fixture("tiny.ppm"),
           env.path("b.ppm"))
    check(len(set(read_pnm(env.path("b.ppm"))[4])) <= 3, "bayer --levels 3 gives more than 3 values")


def case_alpha(env):
    """PNG keeps the alpha channel exactly; the colour plane is what the
    image gives without alpha; PGM drops alpha with a notice."""
    env.need_png()
    rgba = env.fixture("tiny-rgba.png")
    env.ok(rgba, env.path("ga.png"))
    w, h, ch, depth, px = read_png(env.path("ga.png"))
    check((ch, depth) == (2, 8), "RGBA in, luma out: expected gray+alpha 8-bit, got %r" % ((ch, depth),))
    _, _, ich, _, ipx = read_png(rgba)
    check(ich == 4, "fixture is not RGBA")
    check(px[1::2] == ipx[3::4], "alpha channel not kept exactly")
    env.ok(env.fixture("tiny.ppm"), env.path("noalpha.pgm"))  # same crop without alpha
    check(px[0::2] == read_pnm(env.path("noalpha.pgm"))[4], "alpha changed the dithered plane")
    rc, _, err = env.run(rgba, env.path("drop.pgm"))
    check(rc == 0 and "alpha is dropped" in err, "dropping alpha should be said: %d %r" % (rc, err))
    env.ok("--color", "per-channel", rgba, env.path("rgba.png"))
    _, _, ch, _, px4 = read_png(env.path("rgba.png"))
    check(ch == 4 and px4[3::4] == ipx[3::4], "per-channel RGBA: alpha not kept")
    # 16-bit gray+alpha: alpha kept at 16 bits
    ga16 = env.fixture("tiny-ga16.png")
    env.ok(ga16, env.path("ga16.png"))
    _, _, ch, depth, p16 = read_png(env.path("ga16.png"))
    _, _, _, _, i16 = read_png(ga16)
    check((ch, depth) == (2, 16), "16-bit gray+alpha layout %r" % ((ch, depth),))
    check(p16[1::2] == i16[1::2], "16-bit alpha not kept exactly")
    check(set(p16[0::2]) <= {0, 65535}, "16-bit output levels are not 0/65535")


BLURRED = r"blurred PSNR, SSIM \(sigma 1\.5\): (?:\d+\.\d{4}|inf) dB, (?:-?\d\.\d{4}|nan)\n" \
          r"blurred PSNR, SSIM \(sigma 2\): (?:\d+\.\d{4}|inf) dB, (?:-?\d\.\d{4}|nan)\n"


def parse_metrics(text):
    m = re.fullmatch(r"mean tone error: (\d+\.\d{4})\nHVS error: (\d+\.\d{4})\n" + BLURRED, text)
    check(m, "metrics output %r is not in the documented format" % text)
    return float(m.group(1)), float(m.group(2))


def case_metrics(env):
    out = env.ok("--metrics", env.crop, env.path("m.pbm"))
    tone, hvs = parse_metrics(out)
    check(0 <= tone < 2 and 0 < hvs < 40, "implausible metrics %r" % out)
    # the CLI and ht-metrics (another code path to the same function) agree
    rc, out2, err = env.run(env.crop, env.path("m.pbm"), tool=env.metrics)
    check(rc == 0, "ht-metrics failed: %r" % err)
    check(parse_metrics(out2) == (tone, hvs), "ht-metrics %r vs halftone --metrics %r" % (out2, out))
    # cases with known answers: identical images; black vs white; one
    # white pixel well inside black (the normalised kernel spreads 255
    # over the image: 255 / pixels)
    w = h = 15
    write_pnm(env.path("black.pgm"), "P5", w, h, 255, [0] * (w * h))
    write_pnm(env.path("white.pgm"), "P5", w, h, 255, [255] * (w * h))
    dot = [0] * (w * h)
    dot[7 * w + 7] = 255
    write_pnm(env.path("dot.pgm"), "P5", w, h, 255, dot)
    known = [
        (env.crop, env.crop, 0.0, 0.0),
        (env.path("black.pgm"), env.path("white.pgm"), 255.0, 255.0),
        (env.path("black.pgm"), env.path("dot.pgm"), 255 / 225, 255 / 225),
    ]
    for a, b, t, v in known:
        rc, o, err = env.run(a, b, tool=env.metrics)
        check(rc == 0, "ht-metrics %s %s: %r" % (a, b, err))
        got = parse_metrics(o)
        check(abs(got[0] - t) < 1e-4 and abs(got[1] - v) < 1e-4,
              "ht-metrics %s %s = %r, expected (%.4f, %.4f)" % (a, b, got, t, v))
    # levels 256 on an 8-bit image reproduces it: no error at all
    out = env.ok("--metrics", "--levels", "256", env.crop, env.path("same.pgm"))
    check(parse_metrics(out) == (0.0, 0.0), "256 levels should reproduce the input: %r" % out)
    check(read_pnm(env.path("same.pgm"))[4] == read_pnm(env.crop)[4], "256 levels changed pixels")


def case_bench(env):
    out = env.ok("--bench", "3", env.crop, env.path("b.pbm"))
    m = re.fullmatch(r"bench: 257x193, 3 run\(s\): min (\d+\.\d+) ms, median (\d+\.\d+) ms, "
                     r"(\d+\.\d+) ns/pixel \(min\); backend (cpu|cuda), variant (\S+)\n", out)
    check(m, "bench output %r" % out)
    check(float(m.group(1)) <= float(m.group(2)), "min > median")
    env.ok(env.crop, env.path("plain.pbm"))
    check(digest(env.path("b.pbm")) == digest(env.path("plain.pbm")), "--bench changed the output")
    out = env.ok("--bench", "2", "--metrics", "--variant", "ed", "--threads", "1", env.crop, env.path("b2.pbm"))
    check(re.search(r"variant ed\n", out) and "HVS error: " in out, "bench+metrics output %r" % out)


def case_help(env):
    rc, out, err = env.run("--help")
    check(rc == 0 and err == "", "--help: exit %d, stderr %r" % (rc, err))
    for word in ["Usage: halftone [OPTIONS] INPUT OUTPUT", "Examples:", "--algorithm", "--coefficients",
                 "--levels", "--serpentine", "--color", "--backend", "--threads", "--variant", "--metrics",
                 "--bench", "--quiet", "--version", "floyd-steinberg", "jarvis-judice-ninke", "atkinson",
                 "sequential", ".pbm", ".png"]:
        check(word in out, "--help does not mention %r" % word)
    check(max(len(line) for line in out.splitlines()) <= 100, "--help has over-long lines")
    # every name of the library's lists, from the library
    for key, names in library_choices(env.data).items():
        for name in names:
            check(re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(name), out), "--help does not name %s %r" % (key, name))
    check("--levels N,N,N[,N]" in out, "--help does not describe levels per plane")
    rc, out, _ = env.run("--version")
    check(rc == 0 and re.fullmatch(r"halftone \d+\.\d+\.\d+\n", out), "--version: %r" % out)


def case_description(env):
    """The CLI is made from the library's description of its parameters
    (describe-dump prints it): every parameter is an option that --help
    shows with its range and default; a value out of range is refused
    naming the range; a parameter the algorithm and colour mode do not use
    is refused, one they use is taken."""
    dump = os.environ.get("HT_TEST_DESCRIBE")
    if not dump:
        raise Skip("HT_TEST_DESCRIBE not set")
    params = [json.loads(line) for line in subprocess.run([dump], capture_output=True, text=True,
                                                          check=True).stdout.splitlines()]
    check(len(params) >= 19, "describe-dump printed %d parameters" % len(params))
    rc, helptext, _ = env.run("--help")
    flat = " ".join(helptext.split())
    img = env.fixture("photo-crop.pgm")
    for p in params:
        opt = "--" + p["option"]
        check(re.search(r"(?m)^  %s(?![\w-])" % re.escape(opt), helptext), "--help has no line for %s" % opt)
        # the seed too: its range is the one the op and GIMP can carry (issue 37)
        if p["type"] in ("int", "number", "seed"):
            rng = "%s..%s, default %s" % tuple("%.15g" % p[k] for k in ("min", "max", "default"))
            check(rng in flat, "--help does not give %s's range and default %r" % (opt, rng))
            if not p["context"]:
                big = "%.15g" % (p["max"] + 1)
                rc2, _, err = env.run(opt, big, img, env.path("x.pgm"))
                check(rc2 == 2 and ("%.15g..%.15g" % (p["min"], p["max"])) in err,
                      "%s %s: exit %d, %r" % (opt, big, rc2, err))
        if p["type"] == "choice":
            for name in p["choices"]:
                check(re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(name), helptext),
                      "--help does not name %s's value %s" % (opt, name))
        if p["context"] or p["name"] in ("algorithm", "color-mode", "coefficients", "levels", "serpentine"):
            continue  # always used, or refused by the library's own checks (binary only, no scan)
        if p["name"] == "dpi":
            continue  # also the resolution written, so taken with every algorithm
        used = {(a, c) for a, c in p["used"]}
        value = {"int": "%.15g" % p["default"], "number": "%.15g" % p["default"], "seed": "0",
                 "bool": None, "choice": p["choices"][0] if p["choices"] else None}.get(p["type"])
        if p["name"] == "mask-size":
            value = "4"
        if p["name"] == "angles":
            value = "15,75,0,45"
        if p["name"] == "window":
            value = "1"  # les's default window takes minutes under the sanitizers
        for alg, color in (("floyd-steinberg", "luma"), ("les", "luma"), ("dbs", "per-channel"),
                           ("floyd-steinberg", "cmyk"), ("bayer", "luma")):
            args = ["--algorithm", alg, "--color", color, opt] + ([value] if value is not None else [])
            if alg in ("les", "dbs") and p["name"] == "seed":
                args += ["--init", "random"]
            if alg == "les":
                args += ["--max-rounds", "1", "--window", "1"] if p["name"] not in ("max-rounds", "window") else \
                        ["--max-rounds", "1"] if p["name"] == "window" else ["--window", "1"]
            src = env.fixture("tiny.ppm") if color != "luma" else img
            rc3, _, err = env.run(*(args + [src, env.path("y.ppm" if color != "luma" else "y.pgm")]))
            if (alg, color) in used:
                check(rc3 == 0, "%s with %s in %s is used but refused: %r" % (opt, alg, color, err))
            else:
                check(rc3 == 2 and "goes with" in err, "%s with %s in %s is not used but %s: %r"
                      % (opt, alg, color, "taken" if rc3 == 0 else "exit %d" % rc3, err))


def golden_runs(env):
    """(name, args, output) of the runs recorded in golden.txt."""
    c = env.crop
    runs = []
    for alg in ["floyd-steinberg", "jarvis-judice-ninke", "stucki", "burkes", "sierra-3", "sierra-2",
                "sierra-lite", "atkinson"]:
        runs.append((alg, ["--algorithm", alg, c], "out.pbm"))
    runs.append(("fs-levels-4", ["--levels", "4", c], "out.pgm"))
    runs.append(("fs-levels-256", ["--levels", "256", "--algorithm", "stucki", c], "out.pgm"))
    runs.append(("fs-serpentine", ["--serpentine", c], "out.pbm"))
    runs.append(("custom-as-burkes", ["--algorithm", "custom", "--coefficients", "- - * 8 4; 2 4 8 4 2 / 32", c], "out.pbm"))
    runs.append(("per-channel-ppm", ["--color", "per-channel", "--levels", "3", env.fixture("tiny.ppm")], "out.ppm"))
    runs.append(("luma-ppm", [env.fixture("tiny.ppm")], "out.pgm"))
    return runs


def compute_golden(env):
    lines = []
    for name, args, out in golden_runs(env):
        o = env.path(out)
        env.ok("--backend", "cpu", "--variant", "ed", *args, o)
        lines.append("%s %s" % (name, digest(o)))
    return lines


def case_golden(env):
    """The output of fixed runs equals the recorded hashes (written by
    make-golden.py from the reference variant), and every variant of the
    library's list that takes the run on the CPU, on 1, 2 and 3 threads,
    gives the same files; so it does for a filter of the library's list
    that golden.txt does not record, against variant ed."""
    want = {}
    for line in open(env.golden):
        line = line.strip()
        if line and not line.startswith("#"):
            name, h = line.split()
            want[name] = h
    got = dict(line.split() for line in compute_golden(env))
    check(set(got) == set(want), "golden.txt lists %s, the test runs %s" % (sorted(want), sorted(got)))
    bad = [n for n in got if got[n] != want[n]]
    check(not bad, "outputs differ from golden.txt: %s" % bad)
    runs = golden_runs(env)
    # a filter of the library's list that golden.txt does not record yet:
    # its run by ed is what the variants must give
    recorded = set(name for name, _, _ in runs)
    for alg in library_choices(env.data)["filters"]:
        if alg != "custom" and alg not in recorded:
            runs.append((alg, ["--algorithm", alg, env.crop], "out.pbm"))
            env.ok("--backend", "cpu", "--variant", "ed", "--algorithm", alg, env.crop, env.path("out.pbm"))
            want[alg] = digest(env.path("out.pbm"))
    variants = [v for v in library_choices(env.data)["variants"] if v != "ed"]
    for name, args, out in runs:
        ran = []
        for variant in variants:
            for threads in ("1", "2", "3"):
                o = env.path(out)
                if os.path.exists(o):
                    os.unlink(o)
                rc, _, err = env.run("--quiet", "--backend", "cpu", "--variant", variant, "--threads", threads, *args, o)
                if refused(variant, rc, err):
                    break  # a GPU variant, one of another method, or one without the serpentine scan
                check(rc == 0, "%s: variant %s, %s threads: exit %d, %r" % (name, variant, threads, rc, err))
                check(rc != 0 or digest(o) == want[name],
                      "%s: variant %s, %s threads differs from ed" % (name, variant, threads))
                ran.append(variant)
        check(len(ran) > 0, "%s: no variant but ed takes it" % name)


def case_mkimage(env):
    """ht-mkimage (the benchmark's image maker): right size, a flat image
    stays flat, and the photo's tone survives the resize."""
    mk = os.path.join(os.path.dirname(env.metrics), "ht-mkimage")  # the benchmark helpers share a folder
    if not os.access(mk, os.X_OK):
        raise Skip("ht-mkimage not built")
    write_pnm(env.path("flat.pgm"), "P5", 30, 20, 255, [77] * 600)
    rc, _, err = env.run(env.path("flat.pgm"), 45, env.path("flat45.pgm"), tool=mk)
    check(rc == 0, "ht-mkimage failed: %r" % err)
    k, w, h, mv, px = read_pnm(env.path("flat45.pgm"))
    check((k, w, h, mv) == ("P5", 45, 45, 255) and set(px) == {77}, "flat image not kept flat at 45x45")
    rc, _, err = env.run(env.crop, 100, env.path("small.pgm"), tool=mk)
    check(rc == 0, "ht-mkimage failed: %r" % err)
    _, w, h, _, px = read_pnm(env.path("small.pgm"))
    src = read_pnm(env.crop)
    side = min(src[1], src[2])
    x0, y0 = (src[1] - side) // 2, (src[2] - side) // 2
    centre = [src[4][(y0 + y) * src[1] + x0 + x] for y in range(side) for x in range(side)]
    check((w, h) == (100, 100), "size %dx%d" % (w, h))
    check(abs(sum(px) / len(px) - sum(centre) / len(centre)) < 1.5, "resize changed the mean tone")
    rc, _, err = env.run(env.crop, "0", env.path("zero.pgm"), tool=mk)
    check(rc == 2 and "SIZE" in err and not os.path.exists(env.path("zero.pgm")), "size 0: %d %r" % (rc, err))


def case_throughput(env):
    """ht-throughput (the benchmark's ceiling): threads that share nothing
    report their images per second, or with --spin their steps of
    arithmetic per second; bad arguments and a bad image get a one-line
    error and exit code 2 / 1."""
    tp = os.path.join(os.path.dirname(env.metrics), "ht-throughput")
    if not os.access(tp, os.X_OK):
        raise Skip("ht-throughput not built")
    rc, out, err = env.run(env.crop, 2, "0.2", tool=tp)
    check(rc == 0, "ht-throughput failed: %r" % err)
    m = re.search(r"throughput: 2 threads, (\d+)x(\d+), 0.2 s: ([0-9.]+) images/s "
                  r"\(one thread's rate ([0-9.]+) \.\. ([0-9.]+)\)", out)
    check(m is not None, "unexpected output %r" % out)
    rate, lo, hi = (float(m.group(i)) for i in (3, 4, 5))
    check(0 < lo <= hi and abs(rate - (lo + hi)) <= 0.002 * rate + 0.002,
          "the total %.3f is not the sum of the two threads' rates %.3f, %.3f" % (rate, lo, hi))
    for args, what in (((env.crop, 0, 1), "THREADS"), ((env.crop, 2, "nan"), "SECONDS"),
                       ((env.crop, 2, "-1"), "SECONDS"), ((env.crop, 2), "usage")):
        rc, _, err = env.run(*args, tool=tp)
        check(rc == 2 and what in err and err.count("\n") == 1, "%r: %d %r" % (args, rc, err))
    # --spin: arithmetic alone, no image; the same window and the same sum
    rc, out, err = env.run("--spin", 2, "0.2", tool=tp)
    check(rc == 0, "ht-throughput --spin failed: %r" % err)
    m = re.search(r"spin: 2 threads, 0.2 s: ([0-9.]+) M steps/s \(one thread's rate ([0-9.]+) \.\. ([0-9.]+);", out)
    check(m is not None, "unexpected --spin output %r" % out)
    rate, lo, hi = (float(m.group(i)) for i in (1, 2, 3))
    check(0 < lo <= hi and abs(rate - (lo + hi)) <= 0.002 * rate + 0.2,
          "--spin: the total %.1f is not the sum of the two threads' rates %.1f, %.1f" % (rate, lo, hi))
    rc, _, err = env.run("--spin", 0, 1, tool=tp)
    check(rc == 2 and "THREADS" in err and err.count("\n") == 1, "--spin 0 threads: %d %r" % (rc, err))
    write_pnm(env.path("bad.pgm"), "P5", 4, 4, 255, [1] * 5)
    rc, _, err = env.run(env.path("bad.pgm"), 1, 1, tool=tp)
    check(rc == 1 and "bad.pgm" in err and err.count("\n") == 1, "truncated image: %d %r" % (rc, err))


CASES = {
    "errors-usage": case_errors_usage,
    "errors-input": case_errors_input,
    "errors-png": case_errors_png,
    "backend-cuda": case_backend_cuda,
    "threads-notice": case_threads_notice,
    "formats": case_formats_roundtrip,
    "twins": case_twins,
    "color": case_color,
    "alpha": case_alpha,
    "ordered": case_ordered,
    "metrics": case_metrics,
    "bench": case_bench,
    "help": case_help,
    "description": case_description,
    "golden": case_golden,
    "mkimage": case_mkimage,
    "throughput": case_throughput,
}


def main(argv):
    if len(argv) != 6 or argv[5] not in CASES and argv[5] != "--write-golden":
        print("usage: test_cli.py HALFTONE HT_METRICS DATA_DIR GOLDEN CASE|--write-golden (cases: %s)"
              % ", ".join(CASES), file=sys.stderr)
        return 2
    env = Env(*argv[1:5])
    try:
        if argv[5] == "--write-golden":
            lines = compute_golden(env)
            with open(env.golden, "w") as f:
                f.write("# sha256 of `halftone --backend cpu --variant ed ...` outputs; written by\n"
                        "# tests/cli/make-golden.sh from the code, never by hand\n")
                f.write("\n".join(lines) + "\n")
            print("wrote %s (%d entries)" % (env.golden, len(lines)))
            return 0
        # an unreadable output fails the case too
        return run_case(argv[5], CASES[argv[5]], env, fails=(FormatError,))
    finally:
        shutil.rmtree(env.dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
