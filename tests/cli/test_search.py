#!/usr/bin/env python3
"""Tests of the search methods (les, pes, dbs) on the `halftone` command
line (suite cli). Python stdlib only.

    test_search.py HALFTONE SEARCH_REF DATA_DIR CASE

SEARCH_REF (search-ref.c) runs the library straight through ht_run with
the parameters given one to one, so `library` holds the CLI's mapping of
its options against the library's own result. The methods themselves
(optimality, monotone error, thread independence) are tested in the core
suite (tests/core/test-search.c). Images are small crops of the bundled
photograph, so that each case takes seconds of CPU time.
"""
import os
import pty
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

# cases.py one folder up; pnm.py in imageio/, shared with tools/bench/
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "imageio"))
from cases import Skip, check, default_signals, run_case  # noqa: E402
from pnm import FormatError, read_pnm, write_pnm  # noqa: E402


class Env:
    def __init__(self, halftone, ref, data):
        self.halftone, self.ref, self.data = halftone, ref, data
        self.dir = tempfile.mkdtemp(prefix="ht-search-")
        photo = read_pnm(os.path.join(data, "fixtures", "photo-crop.pgm"))
        self.photo = photo

    def path(self, name):
        return os.path.join(self.dir, name)

    def crop(self, name, x0, y0, w, h):
        """A w x h crop of the photograph as an 8-bit PGM; its path."""
        p = self.photo
        px = [p.samples[(y0 + y) * p.width + x0 + x] for y in range(h) for x in range(w)]
        path = self.path(name)
        write_pnm(path, "P5", w, h, 255, px, comment=None)  # search-ref reads no comments
        return path

    def run(self, *args, tool=None, timeout=300):
        p = subprocess.run([tool or self.halftone] + [str(a) for a in args], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=timeout)
        return p.returncode, p.stdout.decode(), p.stderr.decode()

    def ok(self, *args):
        rc, out, err = self.run(*args)
        check(rc == 0, "halftone %s: exit %d, stderr %r" % (" ".join(map(str, args)), rc, err))
        return out, err

    def listing(self):
        return sorted(os.listdir(self.dir))


def pixels(path):
    return read_pnm(path).samples


def search_args(alg, window=4, sigma="1", radius=3, init="floyd-steinberg", seed=0, schedule="parallel",
                max_rounds=0):
    """The CLI's options for these parameters, leaving out the defaults
    and what the method does not take (the CLI refuses those)."""
    a = ["--algorithm", alg]
    if alg != "dbs" and window != 4:
        a += ["--window", window]
    if sigma != "1":
        a += ["--sigma", sigma]
    if radius != 3:
        a += ["--eye-radius", radius]
    if init != "floyd-steinberg":
        a += ["--init", init]
    if seed:
        a += ["--seed", seed]
    if schedule != "parallel":
        a += ["--schedule", schedule]
    if max_rounds:
        a += ["--max-rounds", max_rounds]
    return a


BLURRED = r"blurred PSNR, SSIM \(sigma 1\.5\): (?:\d+\.\d{4}|inf) dB, (?:-?\d\.\d{4}|nan)\n" \
          r"blurred PSNR, SSIM \(sigma 2\): (?:\d+\.\d{4}|inf) dB, (?:-?\d\.\d{4}|nan)\n"
EYE_BLURRED = r"(?:blurred PSNR, SSIM \(sigma [0-9.]+, the eye's\): (?:\d+\.\d{4}|inf) dB, (?:-?\d\.\d{4}|nan)\n)?"
METRIC_LINES = r"mean tone error: \d+\.\d{4}\nHVS error: \d+\.\d{4}\n" + BLURRED + EYE_BLURRED + r"(eye error \(sigma [0-9.]+, \d+x\d+\): " \
               r"\d+\.\d{4}\nrounds: \d+\n)"


def case_library(env):
    """The CLI gives the library's bits, and the library's eye error and
    rounds, for each method and the options that change them."""
    img = env.crop("in.pgm", 60, 50, 37, 29)
    runs = [
        dict(alg="les", window=2),
        dict(alg="les", window=3, init="random", seed=5),
        dict(alg="les", window=2, sigma="0.8", radius=2, schedule="raster"),
        dict(alg="pes", window=3),
        dict(alg="pes", window=2, init="random", seed=11, max_rounds=2),
        dict(alg="dbs"),
        dict(alg="dbs", init="random", seed=3, sigma="1.5", radius=4),
        dict(alg="dbs", schedule="raster", max_rounds=1),
    ]
    for r in runs:
        full = dict(window=4, sigma="1", radius=3, init="floyd-steinberg", seed=0, schedule="parallel", max_rounds=0)
        full.update(r)
        threads = 1 if full["schedule"] == "raster" else 2
        ref_out = env.path("ref.pgm")
        rc, ref_text, err = env.run(img, ref_out, full["alg"], full["window"], full["sigma"], full["radius"],
                                    full["init"], full["seed"], full["schedule"], full["max_rounds"], threads,
                                    tool=env.ref)
        check(rc == 0, "search-ref %r: %r" % (r, err))
        out = env.path("cli.pgm")
        text, _ = env.ok("--quiet", "--metrics", "--threads", threads, *search_args(**r), img, out)
        m = re.fullmatch(METRIC_LINES, text)
        check(m, "%r: --metrics printed %r" % (r, text))
        check(m.group(1) == ref_text, "%r: eye error and rounds %r, the library's %r" % (r, m.group(1), ref_text))
        got, want = pixels(out), pixels(ref_out)
        check(got == want, "%r: the CLI's pixels differ from the library's in %d places"
              % (r, sum(a != b for a, b in zip(got, want))))
        check(set(got) <= {0, 255}, "%r: not black and white" % (r,))
        if full["max_rounds"]:
            check(m.group(1).endswith("rounds: %d\n" % full["max_rounds"]) or
                  int(m.group(1).split("rounds: ")[1]) < full["max_rounds"],
                  "%r: more rounds than --max-rounds: %r" % (r, text))
    # PBM and PNG outputs carry the same bits
    env.ok("--quiet", "--algorithm", "dbs", img, env.path("a.pgm"))
    env.ok("--quiet", "--algorithm", "dbs", img, env.path("a.pbm"))
    check([v // 255 for v in pixels(env.path("a.pgm"))] == pixels(env.path("a.pbm")), "dbs: PBM and PGM differ")


def case_threads(env):
    """The parallel schedule gives the same bits for every thread count,
    on shapes that are not multiples of the block side; the raster
    schedule is one thread by definition and refuses more."""
    for name, (w, h) in (("odd", (31, 23)), ("thin", (57, 5)), ("one", (1, 1)), ("col", (3, 40))):
        img = env.crop(name + ".pgm", 70, 40, w, h)
        for r in (dict(alg="les", window=3), dict(alg="pes", window=3, init="random", seed=2), dict(alg="dbs")):
            outs = []
            for t in (1, 2, 3, 0):
                out = env.path("t%d.pgm" % t)
                env.ok("--quiet", "--threads", t, *search_args(**r), img, out)
                outs.append(pixels(out))
            check(all(o == outs[0] for o in outs), "%s %dx%d %r: threads 1, 2, 3, all differ" % (name, w, h, r))
    img = env.path("odd.pgm")
    rc, _, err = env.run("--threads", "2", "--algorithm", "dbs", "--schedule", "raster", img, env.path("r.pgm"))
    check(rc == 2 and "raster schedule" in err and "sequential" in err, "raster with 2 threads: %d %r" % (rc, err))


def case_seed(env):
    """The same seed gives the same bits, another seed other bits; the
    seed keys the random start only."""
    img = env.crop("in.pgm", 20, 20, 40, 30)
    res = {}
    for alg in ("dbs", "pes"):
        for seed in (1, 1, 2, 2147483647):
            out = env.path("s.pgm")
            env.ok("--quiet", *search_args(alg, window=2, init="random", seed=seed), img, out)
            px = pixels(out)
            if (alg, seed) in res:
                check(res[(alg, seed)] == px, "%s seed %d: two runs differ" % (alg, seed))
            res[(alg, seed)] = px
        check(res[(alg, 1)] != res[(alg, 2)], "%s: seeds 1 and 2 give the same bits" % alg)
        check(res[(alg, 2)] != res[(alg, 2147483647)], "%s: seeds 2 and 2^31-1 give the same bits" % alg)


def case_color(env):
    """--color per-channel searches every channel: with the Floyd-Steinberg
    start (no random numbers) each plane is the search of that channel
    alone; a colour image's luma is one plane."""
    src = env.photo
    w, h = 24, 18
    rgb = []
    for y in range(h):
        for x in range(w):
            rgb += [src.samples[(30 + y) * src.width + 40 + x], src.samples[(90 + y) * src.width + 120 + x],
                    src.samples[(150 + y) * src.width + 10 + x]]
    img = env.path("rgb.ppm")
    write_pnm(img, "P6", w, h, 255, rgb)
    for alg in ("dbs", "les"):
        out = env.path("out.ppm")
        env.ok("--quiet", "--color", "per-channel", *search_args(alg, window=2), img, out)
        got = read_pnm(out)
        check(got.kind == "P6" and got.width == w and got.height == h, "%s: per-channel output %r" % (alg, got[:4]))
        for c in range(3):
            plane = env.path("p%d.pgm" % c)
            write_pnm(plane, "P5", w, h, 255, rgb[c::3])
            env.ok("--quiet", *search_args(alg, window=2), plane, env.path("q.pgm"))
            check(got.samples[c::3] == pixels(env.path("q.pgm")), "%s: plane %d differs from its channel alone"
                  % (alg, c))
    env.ok("--quiet", "--algorithm", "dbs", img, env.path("luma.pbm"))
    check(read_pnm(env.path("luma.pbm")).kind == "P4", "luma of colour input is not one plane")


def case_metrics(env):
    """--metrics: the eye error for the search methods (with the run's eye
    model) and the rounds; for error diffusion only when an eye model is
    asked for, so that its output stays as documented."""
    img = env.crop("in.pgm", 60, 50, 40, 32)
    text, _ = env.ok("--quiet", "--metrics", img, env.path("fs.pbm"))
    check(re.fullmatch(r"mean tone error: \d+\.\d{4}\nHVS error: \d+\.\d{4}\n" + BLURRED, text), "fs --metrics: %r" % text)
    text, _ = env.ok("--quiet", "--metrics", "--sigma", "1", img, env.path("fs.pbm"))
    m = re.fullmatch(r"mean tone error: \d+\.\d{4}\nHVS error: \d+\.\d{4}\n" + BLURRED +
                     r"eye error \(sigma 1, 7x7\): (\d+\.\d{4})\n", text)
    check(m, "fs --metrics --sigma 1: %r" % text)
    fs = float(m.group(1))
    # DBS starts from Floyd-Steinberg and never makes its objective worse:
    # the LES paper's eye error with --objective les, the blurred squared
    # error (PSNR up) by default
    text, _ = env.ok("--quiet", "--metrics", "--algorithm", "dbs", "--objective", "les", img, env.path("dbs.pbm"))
    m = re.fullmatch(r"mean tone error: \d+\.\d{4}\nHVS error: \d+\.\d{4}\n" + BLURRED + EYE_BLURRED +
                     r"eye error \(sigma 1, 7x7\): (\d+\.\d{4})\nrounds: (\d+)\n", text)
    check(m, "dbs --metrics: %r" % text)
    check(float(m.group(1)) < fs, "dbs's eye error %s is not below Floyd-Steinberg's %.4f" % (m.group(1), fs))
    check(int(m.group(2)) >= 1, "dbs took %s rounds" % m.group(2))
    psnr = r"blurred PSNR, SSIM \(sigma 1\.5\): (\d+\.\d{4}) dB"
    fs_text, _ = env.ok("--quiet", "--metrics", img, env.path("fs.pbm"))
    text, _ = env.ok("--quiet", "--metrics", "--algorithm", "dbs", "--sigma", "1.5", "--eye-radius", "5", img,
                     env.path("dbsf.pbm"))
    check(float(re.search(psnr, text).group(1)) > float(re.search(psnr, fs_text).group(1)),
          "filtered dbs's PSNR at sigma 1.5 is not above Floyd-Steinberg's: %r, %r" % (text, fs_text))
    text, _ = env.ok("--quiet", "--metrics", "--algorithm", "dbs", "--max-rounds", "1", img, env.path("d1.pbm"))
    check(text.endswith("rounds: 1\n"), "dbs --max-rounds 1: %r" % text)
    text, _ = env.ok("--quiet", "--metrics", "--algorithm", "pes", "--window", "2", "--sigma", "0.75",
                     "--eye-radius", "2", img, env.path("p.pbm"))
    check("eye error (sigma 0.75, 5x5): " in text, "pes with its own eye: %r" % text)


def expect_usage(env, args, pattern, out_name="out.pbm"):
    """Exit 2, one line naming the problem, no file made or changed."""
    out = env.path(out_name)
    with open(out, "wb") as f:
        f.write(b"precious")
    before = env.listing()
    rc, stdout, err = env.run(*(list(args) + [out]))
    lines = err.splitlines()
    check(rc == 2, "%s: exit %d, wanted 2 (%r)" % (args, rc, err))
    check(len(lines) == 1 and lines[0].startswith("halftone: "), "%s: stderr %r is not one line" % (args, err))
    check(re.search(pattern, lines[0]), "%s: %r does not match %r" % (args, lines[0], pattern))
    check(env.listing() == before and open(out, "rb").read() == b"precious", "%s: files changed" % (args,))


def case_estimate(env):
    """A search says what it will cost before it starts (--verbose, or a
    terminal), and one estimated at over an hour is refused at once with
    the estimate and the way to force it, writing nothing; --run-long
    runs it."""
    img = env.crop("in.pgm", 0, 0, 16, 16)
    out = env.path("out.pbm")
    _, err = env.ok("--verbose", "--algorithm", "les", "--window", "2", img, out)
    check(re.search(r"les: estimated to take .* on the CPU", err), "--verbose: no estimate: %r" % err)
    _, err = env.ok("--algorithm", "les", "--window", "2", img, out)
    check("estimated" not in err, "no terminal, no --verbose: an estimate anyway: %r" % err)
    os.unlink(out)
    # 2048 x 2048 flat gray: about 8 CPU-hours with a 5 x 5 window (days
    # on noise); refused before any round, so well inside the timeout
    big = env.path("big.pgm")
    with open(big, "wb") as f:
        f.write(b"P5\n2048 2048\n255\n" + bytes([100]) * (2048 * 2048))
    for alg in ("les", "pes"):
        rc, _, err = env.run("--algorithm", alg, "--window", "5", "--threads", "1", big, out, timeout=60)
        check(rc != 0, "%s --window 5 on 2048x2048: exit 0" % alg)
        check(re.search(r"%s with a 5 x 5 window on 2048x2048 pixels is estimated to take [0-9.]+ (h|days) on the "
                        r"CPU.*--run-long" % alg, err), "%s: the refusal says %r" % (alg, err))
        check(len(err.strip().splitlines()) == 1, "%s: more than one line: %r" % (alg, err))
        check(not os.path.exists(out), "%s: refused, yet %s exists" % (alg, out))
    env.ok("--run-long", "--algorithm", "les", "--window", "3", "--max-rounds", "1", img, out)


def case_errors(env):
    img = env.crop("in.pgm", 0, 0, 16, 16)
    for alg in ("les", "pes", "dbs"):
        expect_usage(env, ["--algorithm", alg, "--levels", "4", img], r"%s gives binary output only \(levels 2\), "
                     r"got levels 4" % alg, out_name="out.pgm")
        expect_usage(env, ["--algorithm", alg, "--serpentine", img], r"%s .*serpentine" % alg)
        expect_usage(env, ["--algorithm", alg, "--coefficients", "- * 1", img], r"--coefficients goes with "
                     r"--algorithm custom only, not with %s" % alg)
        expect_usage(env, ["--algorithm", alg, "--seed", "3", img], r"--seed .* --init random")
    expect_usage(env, ["--algorithm", "les", "--color", "per-channel", "--levels", "2,2,3", img],
                 r"binary output only|needs|plane", out_name="out.ppm")
    for bad in ("0", "6", "x", "-1", " 3", "+2"):
        expect_usage(env, ["--algorithm", "les", "--window", bad, img], r"--window must be a whole number 1\.\.5")
    for bad in ("0.1", "5", "-1", "nan", "inf", "1e0", "0x1", "", ".", "1.2.3"):
        expect_usage(env, ["--algorithm", "dbs", "--sigma", bad, img], r"--sigma must be a number 0\.25\.\.4")
    for bad in ("0", "8", "two"):
        expect_usage(env, ["--algorithm", "dbs", "--eye-radius", bad, img], r"--eye-radius must be .*1\.\.7")
    expect_usage(env, ["--algorithm", "dbs", "--init", "ordered", img], r"--init must be random or floyd-steinberg")
    for bad in ("-1", "18446744073709551616", "1x"):
        expect_usage(env, ["--algorithm", "dbs", "--init", "random", "--seed", bad, img], r"--seed must be")
    # the op's and GIMP's seed is a gint: the CLI takes no seed they cannot
    # reproduce, and its message gives the range (issue 37)
    for bad in ("2147483648", "4294967296"):
        expect_usage(env, ["--algorithm", "dbs", "--init", "random", "--seed", bad, img],
                     r"--seed must be a whole number 0\.\.2147483647")
    expect_usage(env, ["--algorithm", "dbs", "--schedule", "diagonal", img], r"--schedule must be parallel or raster")
    expect_usage(env, ["--algorithm", "dbs", "--max-rounds", "-1", img], r"--max-rounds must be")
    expect_usage(env, ["--algorithm", "dbs", "--window", "3", img], r"--window goes with --algorithm les or pes, not with dbs")
    expect_usage(env, ["--window", "3", img], r"--window goes with --algorithm les or pes, not with floyd-steinberg")
    for opt, val in (("--init", "random"), ("--seed", "1"), ("--schedule", "raster"),
                     ("--max-rounds", "2"), ("--sigma", "1")):
        expect_usage(env, [opt, val, img], r"%s goes with --algorithm .*les, pes or dbs.*not with floyd-steinberg" % opt)
    expect_usage(env, ["--algorithm", "lse", img], r"unknown filter 'lse' \(the filters and methods: .*les, pes, dbs")


def case_progress(env):
    """A progress line on a terminal's stderr, cleared at the end; nothing
    on stderr that is not a terminal."""
    img = env.crop("in.pgm", 40, 40, 64, 48)
    args = ["--algorithm", "les", "--window", "4", "--init", "random", img, env.path("p.pbm")]
    rc, out, err = env.run(*args)
    check(rc == 0 and out == "" and err == "", "not a terminal: exit %d, stdout %r, stderr %r" % (rc, out, err))
    try:
        master, slave = pty.openpty()
    except OSError as e:  # a container without /dev/pts
        raise Skip("no pseudo-terminal: %s" % e)
    try:
        t0 = time.monotonic()
        p = subprocess.Popen([env.halftone] + [str(a) for a in args], stdout=subprocess.PIPE, stderr=slave)
        os.close(slave)
        slave = -1
        seen = b""
        while True:
            r, _, _ = select.select([master], [], [], 60)
            if not r:
                break
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            seen += chunk
        p.wait(timeout=120)
        took = time.monotonic() - t0  # this run's own time: a loaded machine slows one run, not the other
    finally:
        os.close(master)
        if slave >= 0:
            os.close(slave)
    text = seen.decode(errors="replace")
    check(p.returncode == 0, "on a terminal: exit %d, %r" % (p.returncode, text))
    if took < 0.45:
        print("the run took %.2f s: too quick for the progress line, which waits half a second" % took)
        check(text in ("", "\r\x1b[K"), "a quick run printed %r" % text)
        return
    if took < 0.7 and text in ("", "\r\x1b[K"):
        print("the run took %.2f s: about the progress line's half second, and none came" % took)
        return
    check(re.search(r"halftone: les: +\d+%\r", text), "no progress line on the terminal after %.2f s: %r" % (took, text))
    check(text.endswith("\r\x1b[K"), "the progress line is not cleared at the end: %r" % text[-40:])


def case_cancel(env):
    """SIGINT during a long search: death by that signal, one line,
    nothing written, an existing output untouched."""
    img = env.crop("in.pgm", 0, 0, 200, 150)
    out = env.path("out.pbm")
    with open(out, "wb") as f:
        f.write(b"precious")
    before = env.listing()
    p = subprocess.Popen([env.halftone, "--algorithm", "les", "--window", "5", img, out], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE,
                         preexec_fn=default_signals)
    time.sleep(0.7)
    check(p.poll() is None, "the search ended before the signal")
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    err = err.decode()
    check(p.returncode == -signal.SIGINT, "exit %r, wanted death by SIGINT (%r)" % (p.returncode, err))
    check(len(err.splitlines()) == 1 and re.match(r"halftone: interrupted by SIGINT: .*out\.pbm not written", err),
          "stderr %r" % err)
    check(env.listing() == before, "files changed: %s -> %s" % (before, env.listing()))
    check(open(out, "rb").read() == b"precious", "the existing output was modified")


def case_help(env):
    rc, out, err = env.run("--help")
    check(rc == 0 and err == "", "--help: %d %r" % (rc, err))
    for word in ("les", "pes", "dbs", "--window M", "--sigma S", "--eye-radius R", "--init NAME", "--seed N",
                 "--schedule NAME", "--max-rounds N", "random", "floyd-steinberg", "parallel", "raster",
                 "eye error", "Ctrl-C", "halftone --algorithm dbs"):
        check(word in out, "--help does not mention %r" % word)
    check(max(len(line) for line in out.splitlines()) <= 79, "--help has lines over 79 columns")


CASES = {name[5:]: f for name, f in globals().items() if name.startswith("case_")}


def main(argv):
    if len(argv) != 5 or argv[4] not in CASES:
        print("usage: test_search.py HALFTONE SEARCH_REF DATA_DIR CASE (cases: %s)" % ", ".join(CASES),
              file=sys.stderr)
        return 2
    env = Env(*argv[1:4])
    try:
        return run_case(argv[4], CASES[argv[4]], env, fails=(FormatError,))
    finally:
        shutil.rmtree(env.dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
