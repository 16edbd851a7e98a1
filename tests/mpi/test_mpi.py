#!/usr/bin/env python3
"""halftone-mpi (suite mpi): the same bytes as `halftone` on one machine.

    test_mpi.py HALFTONE HALFTONE_MPI MPIRUN DATA_DIR CASE

Each CASE runs in a fresh temporary folder and exits 0 (pass), 1 (fail)
or 77 (skip: no mpirun). Every mpirun runs under a timeout, so a job that
hangs fails the test instead of stalling it. Ranks are processes on this
machine (--oversubscribe; --allow-run-as-root where the tests run as
root, as in CI). The CI runs a representative subset; HT_TEST_MPI_FULL=1
runs the larger sweep (more shapes, rank counts 1..16, every filter with
every level count).

  shapes    random images of awkward shapes (1x1, fewer rows than ranks,
            narrower than a chunk, odd sizes), rank counts 1..16 with odd
            ones, PBM and PGM output
  filters   every filter (custom ones reaching 3 rows down and 4 columns
            back too), levels 2..256
  blocks    rows per block and chunk widths from 1 to more than the image,
            threads in a rank
  real      the photo fixture, the PPM fixture (its luma), data/*.png as
            PGM, 16-bit and odd-maxval PGM, PBM input
  metrics   --metrics prints the CLI's mean tone error
  errors    bad input (missing, garbage, truncated, PNG, a sample above
            maxval), unwritable output (no such folder, a folder, the input
            itself), bad options: on every rank count one line from rank 0,
            a non-zero exit, no output file, no temporary file left
"""
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time

# cases.py one folder up; pnm.py in imageio/, shared with tools/bench/
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "imageio"))
import pnm  # noqa: E402
from cases import SKIP, Fail, check, default_signals, run_case  # noqa: E402

FULL = os.environ.get("HT_TEST_MPI_FULL") == "1"
TIMEOUT = 120


def open_mpi_major(mpirun):
    """Open MPI's major version (4 on Debian 12, 5 on Debian 13); 0 where
    `mpirun --version` says nothing we know."""
    try:
        out = subprocess.run([mpirun, "--version"], capture_output=True, text=True, timeout=TIMEOUT).stdout
    except (OSError, subprocess.TimeoutExpired):
        return 0
    m = re.search(r"Open MPI\)? (\d+)\.", out)
    return int(m.group(1)) if m else 0


def own_lines(stderr):
    """The job's stderr without the notice, framed by lines of dashes,
    that Open MPI 5's launcher adds when a rank exits non-zero."""
    lines, inside = [], False
    for line in stderr.splitlines():
        if re.fullmatch(r"-{20,}", line.strip()):
            inside = not inside
        elif not inside:
            lines.append(line)
    return lines


class Env:
    def __init__(self, halftone, hmpi, mpirun, data):
        self.halftone, self.hmpi, self.mpirun, self.data = halftone, hmpi, mpirun, data
        major = open_mpi_major(mpirun)
        # -q (Open MPI 4) keeps mpirun's own notice about a failed rank
        # out; Open MPI 5 has no -q (own_lines drops its notice instead)
        self.launch = [mpirun] + (["-q"] if major < 5 else []) + ["--oversubscribe"]
        # every rank is on this machine: shared memory only, so that no
        # network interface of a container can add warnings
        os.environ.setdefault("OMPI_MCA_btl", "self,vader" if major < 5 else "self,sm")
        # Open MPI's shared-memory copy between processes (CMA) needs
        # ptrace rights that containers often withhold; without it,
        # messages take the copy-in copy-out path, quietly
        os.environ.setdefault("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
        os.environ.setdefault("OMPI_MCA_btl_sm_single_copy_mechanism", "none")
        if os.geteuid() == 0:
            self.launch.append("--allow-run-as-root")

    def cli(self, args):
        r = subprocess.run([self.halftone, "--threads", "1"] + args, capture_output=True, text=True,
                           timeout=TIMEOUT)
        check(r.returncode == 0, "halftone %s: %s" % (" ".join(args), r.stderr.strip()))
        return r

    def mpi(self, n, args, expect_ok=True):
        cmd = self.launch + ["-n", str(n), self.hmpi] + args
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            raise Fail("hung (no end after %d s): %s" % (TIMEOUT, " ".join(cmd)))
        if expect_ok:
            check(r.returncode == 0, "%s: exit %d: %s" % (" ".join(cmd), r.returncode, r.stderr.strip()))
        return r


def write_gray(path, w, h, seed, maxval=255):
    rnd = random.Random(seed)
    mode = seed % 3
    samples = []
    for y in range(h):
        for x in range(w):
            if mode == 0:
                v = rnd.randrange(maxval + 1)
            elif mode == 1:
                v = (x * maxval // max(w - 1, 1) + rnd.randrange(8) + y * 3) % (maxval + 1)
            else:
                v = rnd.randrange(maxval + 1) if rnd.random() < 0.2 else ((y * 7 + x // 13) * 61) % (maxval + 1)
            samples.append(v)
    pnm.write_pnm(path, "P5", w, h, maxval, samples)


def same(env, n, src, out_ext, args, tag):
    """halftone and halftone-mpi on `n` ranks give the same file."""
    ref, got = "ref-%s.%s" % (tag, out_ext), "got-%s.%s" % (tag, out_ext)
    env.cli(args + [src, ref])
    if os.path.exists(got):
        os.remove(got)
    env.mpi(n, args + [src, got])
    with open(ref, "rb") as a, open(got, "rb") as b:
        check(a.read() == b.read(), "%s on %d ranks (%s) differs from halftone" % (src, n, " ".join(args)))


def filters(env):
    """The filter names, from the tool's --help (the library's list)."""
    r = env.mpi(1, ["--help"])
    names = re.findall(r"^ {24}([a-z0-9-]+) ", r.stdout, re.M)
    check("floyd-steinberg" in names and "jarvis-judice-ninke" in names, "--help lists no filters: %r" % r.stdout)
    return [n for n in names if n != "custom"]


def case_shapes(env):
    shapes = [(1, 1), (3, 2), (5, 40), (61, 47), (1, 9), (200, 3)]
    ranks = [1, 2, 3, 5, 16]
    if FULL:
        shapes += [(2, 1), (8, 8), (9, 17), (33, 100), (300, 61), (127, 129)]
        ranks = list(range(1, 17))
    for i, (w, h) in enumerate(shapes):
        src = "s%d.pgm" % i
        write_gray(src, w, h, i)
        for j, n in enumerate(ranks if FULL else [ranks[i % len(ranks)], ranks[(i + 2) % len(ranks)]]):
            ext = "pbm" if (i + j) % 2 == 0 else "pgm"
            same(env, n, src, ext, [], "s%d-%d" % (i, n))


def case_filters(env):
    write_gray("f.pgm", 37, 29, 5)
    customs = ["- - - - * 5; 0 0 0 0 0 0 0 0 0; 3 0 0 0 0 0 0 0 1 / 16",
               "- - - - * 1 2 3 4; 1 1 1 1 1 1 1 1 1; 1 0 0 0 2 0 0 0 1; 1 1 1 1 1 1 1 1 1 / 64",
               "* 1 / 2"]
    runs = [["--algorithm", f] for f in filters(env)] + [["--algorithm", "custom", "--coefficients", c]
                                                          for c in customs]
    levels = [2, 3, 7, 256] if FULL else [2, 5, 256]
    for i, args in enumerate(runs):
        for j, lv in enumerate(levels if FULL else levels[i % 3:i % 3 + 1]):
            n = [3, 4, 7, 2][(i + j) % 4]
            ext = "pbm" if lv == 2 and j % 2 == 0 else "pgm"
            same(env, n, "f.pgm", ext, args + ["--levels", str(lv)], "f%d-%d" % (i, lv))


def case_blocks(env):
    write_gray("b.pgm", 45, 38, 7)
    runs = [("1", "1"), ("2", "3"), ("5", "45"), ("38", "7"), ("3", "100"), ("7", "16")]
    if FULL:
        runs += [(str(r), str(k)) for r in (1, 4, 9, 40) for k in (1, 2, 8, 44, 45, 46)]
    for i, (r, k) in enumerate(runs):
        for alg in ["floyd-steinberg", "jarvis-judice-ninke"] if FULL or i % 2 == 0 else ["stucki"]:
            n = [2, 3, 6][i % 3]
            env.cli(["--algorithm", alg, "b.pgm", "ref.pbm"])
            env.mpi(n, ["--algorithm", alg, "--rows", r, "--chunk", k, "b.pgm", "got.pbm"])
            with open("ref.pbm", "rb") as a, open("got.pbm", "rb") as b:
                check(a.read() == b.read(), "rows %s chunk %s %s on %d ranks differs" % (r, k, alg, n))
    # threads in a rank: a block's rows on several threads
    for i, (n, t, r, k) in enumerate([(1, 3, "7", "5"), (2, 2, "4", "9"), (3, 5, "15", "4")] +
                                     ([(4, 8, "9", "3"), (5, 3, "2", "1")] if FULL else [])):
        alg = ["floyd-steinberg", "jarvis-judice-ninke", "atkinson"][i % 3]
        env.cli(["--algorithm", alg, "b.pgm", "ref.pbm"])
        env.mpi(n, ["--threads", str(t), "--algorithm", alg, "--rows", r, "--chunk", k, "b.pgm", "got.pbm"])
        with open("ref.pbm", "rb") as a, open("got.pbm", "rb") as b:
            check(a.read() == b.read(), "%d threads a rank, rows %s chunk %s %s on %d ranks differs" % (t, r, k, alg, n))


def case_real(env):
    srcs = [os.path.join(env.data, "fixtures", "photo-crop.pgm"), os.path.join(env.data, "fixtures", "tiny.ppm")]
    for png in ["sample.png"] + (["coffee.png"] if FULL else []):
        img = pnm.read_image(os.path.join(env.data, png))
        ch = img.channels
        kind = "P5" if ch == 1 else "P6"
        if ch in (2, 4):  # drop alpha: the MPI tool reads PGM/PPM
            keep = ch - 1
            s = [img.samples[i] for i in range(len(img.samples)) if i % ch < keep]
            ch, kind = keep, ("P5" if keep == 1 else "P6")
        else:
            s = img.samples
        name = png.replace(".png", ".pnm")
        pnm.write_pnm(name, kind, img.width, img.height, img.maxval, s)
        srcs.append(name)
    write_gray("deep.pgm", 40, 30, 11, maxval=65535)
    write_gray("odd.pgm", 23, 19, 12, maxval=1000)
    write_gray("small.pgm", 23, 19, 13, maxval=3)
    pnm.write_pnm("bits.pbm", "P4", 29, 13, 1, [random.Random(3).randrange(2) for _ in range(29 * 13)])
    srcs += ["deep.pgm", "odd.pgm", "small.pgm", "bits.pbm"]
    for i, src in enumerate(srcs):
        for n in [1, 4, 7] if FULL else [[3], [5], [2]][i % 3]:
            same(env, n, src, "pbm", [], "r%d" % i)
            same(env, n, src, "pgm", ["--algorithm", "sierra-3", "--levels", "4"], "r%dl" % i)


def case_metrics(env):
    src = os.path.join(env.data, "fixtures", "photo-crop.pgm")
    want = env.cli(["--metrics", src, "ref.pbm"]).stdout
    want = [l for l in want.splitlines() if l.startswith("mean tone error")]
    for n in [1, 3]:
        got = env.mpi(n, ["--metrics", src, "got-%d.pbm" % n]).stdout.splitlines()
        check(got == want, "--metrics on %d ranks: %r, halftone: %r" % (n, got, want))


def case_signal_after_rename(env):
    """halftone-mpi puts its output in place through the tools' common
    finish: a SIGTERM to mpirun as soon as the file is there never makes
    rank 0 say it was "not written" (3 tries, each signal sent the moment
    the output appears)."""
    write_gray("sig.pgm", 600, 400, 4)
    for attempt in range(3):
        if os.path.exists("sig.pbm"):
            os.remove("sig.pbm")
        cmd = env.launch + ["-n", "2", env.hmpi, "--threads", "1", "sig.pgm", "sig.pbm"]
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             preexec_fn=default_signals)
        deadline = time.time() + TIMEOUT
        while not os.path.exists("sig.pbm") and p.poll() is None and time.time() < deadline:
            pass  # no sleep: the signal goes the moment the rename is seen
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
        try:
            _, err = p.communicate(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            p.kill()
            raise Fail("hung after SIGTERM")
        if os.path.exists("sig.pbm"):
            check("sig.pbm not written" not in err, "try %d: the output is there, yet: %r" % (attempt, err))
        else:
            check("not written" in err or p.returncode != 0, "try %d: no output, no word: %r" % (attempt, err))


def case_errors(env):
    write_gray("in.pgm", 20, 12, 1)
    with open("in.pgm", "rb") as f:
        good = f.read()
    with open("trunc.pgm", "wb") as f:
        f.write(good[:-7])
    with open("junk.pgm", "wb") as f:
        f.write(b"hello, this is not an image\n")
    with open("fake.pgm", "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + bytes(40))
    pnm.write_pnm("over.pgm", "P5", 4, 3, 1000, [5, 6, 7, 8] * 3)
    with open("over.pgm", "r+b") as f:  # a sample of 4000 > maxval 1000
        f.seek(-2, 2)
        f.write(bytes([0x0F, 0xA0]))
    os.mkdir("folder.pbm")
    cases = [
        (["missing.pgm", "o.pbm"], 1, r"missing\.pgm: cannot open"),
        (["junk.pgm", "o.pbm"], 1, r"junk\.pgm: not a PGM"),
        (["trunc.pgm", "o.pbm"], 1, r"trunc\.pgm: truncated"),
        (["fake.pgm", "o.pbm"], 1, r"fake\.pgm: PNG input is not supported"),
        (["over.pgm", "o.pbm"], 1, r"over\.pgm: sample 4000 at pixel \(3, 2\) exceeds maxval 1000"),
        (["in.pgm", "no/such/dir/o.pbm"], 1, r"no/such/dir/o\.pbm: "),
        (["in.pgm", "folder.pbm"], 1, r"folder\.pbm: "),
        (["in.pgm", "in.pgm"], 1, r"in\.pgm: "),
        (["in.pgm", "o.png"], 2, r"halftone-mpi writes \.pbm or \.pgm"),
        (["--levels", "3", "in.pgm", "o.pbm"], 2, r"PBM holds 2 levels only"),
        (["--algorithm", "nope", "in.pgm", "o.pbm"], 2, r"unknown filter 'nope'"),
        (["--chunk", "0", "in.pgm", "o.pbm"], 2, r"--chunk must be"),
    ]
    before = sorted(os.listdir("."))
    for n in ([1, 2, 3, 5, 16] if FULL else [1, 3]):
        for args, rc, pattern in (cases if FULL or n == 3 else cases[::3]):
            r = env.mpi(n, args, expect_ok=False)
            what = "%d ranks, %s" % (n, " ".join(args))
            check(r.returncode == rc, "%s: exit %d, not %d (%s)" % (what, r.returncode, rc, r.stderr.strip()))
            lines = own_lines(r.stderr)
            check(len(lines) == 1 and lines[0].startswith("halftone-mpi: ") and re.search(pattern, lines[0]),
                  "%s: stderr should be one line matching %r, got %r" % (what, pattern, r.stderr))
            check(sorted(os.listdir(".")) == before, "%s: files left: %r" % (what, sorted(set(os.listdir(".")) -
                                                                                        set(before))))
            check(os.path.isdir("folder.pbm") and open("in.pgm", "rb").read() == good, "%s: input touched" % what)


CASES = {"shapes": case_shapes, "filters": case_filters, "blocks": case_blocks, "real": case_real,
         "metrics": case_metrics, "signal-after-rename": case_signal_after_rename, "errors": case_errors}


def main():
    if len(sys.argv) != 6 or sys.argv[5] not in CASES:
        print(__doc__, file=sys.stderr)
        return 2
    halftone, hmpi, mpirun, data, case = sys.argv[1:]
    if not mpirun or not os.access(mpirun, os.X_OK):
        print("no mpirun: skipped")
        return SKIP
    env = Env(os.path.abspath(halftone), os.path.abspath(hmpi), mpirun, os.path.abspath(data))
    with tempfile.TemporaryDirectory(prefix="ht-mpi-") as tmp:
        os.chdir(tmp)
        return run_case(case, CASES[case], env)


if __name__ == "__main__":
    sys.exit(main())
