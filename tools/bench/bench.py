#!/usr/bin/env python3
"""CPU benchmark of GEGL Halftone: Table V (1) of Kasagi, Nakano, Ito,
"Parallelization Techniques for Error Diffusion with GPU Implementations"
(../shared/papers/error-collection-parallelogram-gpu.md from the repository
root), plus the tools a user would otherwise pick, timed as whole processes
and judged by the same metrics.

    python3 tools/bench/bench.py                       # full run: 1K..16K, writes BENCHMARKS.md
    python3 tools/bench/bench.py --sizes 1024,2048 --quick
    python3 tools/bench/bench.py --cpu-scaling         # wavefront at 1, 2, 4, 8, 16 threads only, beside
                                                       # the machine: independent threads (ht-throughput),
                                                       # arithmetic alone (--spin), each core pinned alone

Python 3 standard library only. Needs a build (default ./build, or
--build DIR) with tools/cli/halftone, tools/bench/ht-mkimage and
tools/bench/ht-metrics.
Test images are the centre square of data/coffee.png resized bilinearly
by ht-mkimage; Floyd-Steinberg, 8-bit PGM in, 1-bit PBM out.

What is timed:
  * Table V (1) rows: `halftone --bench N` = the halftoning alone, in the
    process, minimum of N runs (the paper's times also exclude file I/O).
  * Other tools: the whole process (start, read, dither, write), minimum
    of N runs, as a user running it from a shell would see it.
"""
import argparse
import datetime
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "imageio"))
import pnm  # noqa: E402  (imageio/pnm.py: the PNG and PGM files, shared with the tests)

# Table V (1), Core i7-3770K (3.5 GHz), one thread, milliseconds.
PAPER_SIZES = [1024, 2048, 3072, 4096, 5120, 6144, 7168, 8192, 10240, 12288, 14336, 16384]
PAPER = {
    "ed": [19.63, 77.63, 174.4, 309.8, 491.5, 696.4, 952.0, 1242, 1938, 2789, 3797, 4967],
    "ec": [19.60, 74.21, 165.8, 293.9, 467.7, 663.6, 902.5, 1177, 1846, 2654, 3671, 4712],
    "ed-rc": [14.72, 55.38, 124.9, 220.2, 357.5, 505.7, 676.6, 878.1, 1384, 1974, 2690, 3521],
    "ec-rc": [8.616, 33.14, 73.43, 128.8, 201.2, 292.4, 393.3, 514.2, 802.8, 1165, 1571, 2052],
}
LABEL = {"ed": "ED", "ec": "EC", "ed-rc": "ED with RC", "ec-rc": "EC with RC"}


def paper_ms(variant, size):
    if variant in PAPER and size in PAPER_SIZES:
        return PAPER[variant][PAPER_SIZES.index(size)]
    return None


def size_label(s):
    return "%dK" % (s // 1024) if s % 1024 == 0 else str(s)


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# ------------------------------------------------------------ machine

def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def git_commit():
    """HEAD, with '+changes' when the tree differs from it; HT_BENCH_COMMIT
    overrides (a copy of the tree on another machine may carry a stale .git)."""
    if os.environ.get("HT_BENCH_COMMIT"):
        return os.environ["HT_BENCH_COMMIT"]
    try:
        out = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, timeout=10)
        head = out.stdout.strip()
        if not head:
            return "unknown"
        dirty = subprocess.run(["git", "-C", ROOT, "diff", "--quiet", "HEAD", "--"], timeout=30).returncode != 0
        return head + ("+changes" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


# ------------------------------------------------------------ running

def run_child(cmd, stdout=None, env=None, timeout=None):
    """Runs cmd; returns (seconds, returncode, stderr)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=stdout or subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    try:
        _, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        return None, -1, "timed out after %s s" % timeout
    return time.perf_counter() - t0, p.returncode, err.decode(errors="replace")


def peak_rss_kib(cmd):
    """Peak resident memory (KiB) of one run of cmd. /usr/bin/time -v is
    preferred: a child forked from this Python process starts with
    Python's pages resident, which wait4's ru_maxrss would count."""
    if os.access("/usr/bin/time", os.X_OK):
        p = subprocess.run(["/usr/bin/time", "-v"] + cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           text=True)
        m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr)
        return int(m.group(1)) if p.returncode == 0 and m else None
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    return ru.ru_maxrss if os.waitstatus_to_exitcode(status) == 0 else None


BENCH_RE = re.compile(r"bench: (\d+)x(\d+), (\d+) run\(s\): min ([\d.]+) ms, median ([\d.]+) ms, "
                      r"([\d.]+) ns/pixel \(min\); backend (\w+), variant (\S+)")


class Bench:
    def __init__(self, args):
        self.args = args
        b = args.build if os.path.isabs(args.build) else os.path.join(ROOT, args.build)
        self.halftone = os.path.join(b, "tools", "cli", "halftone")
        self.mkimage = os.path.join(b, "tools", "bench", "ht-mkimage")
        self.metrics = os.path.join(b, "tools", "bench", "ht-metrics")
        self.throughput = os.path.join(b, "tools", "bench", "ht-throughput")
        for exe in (self.halftone, self.mkimage, self.metrics, self.throughput):
            if not os.access(exe, os.X_OK):
                sys.exit("bench.py: %s is missing; build first: meson setup %s && ninja -C %s"
                         % (exe, args.build, args.build))
        self.work = args.workdir or tempfile.mkdtemp(prefix="ht-bench-")
        os.makedirs(self.work, exist_ok=True)
        self.cores = os.cpu_count() or 1

    def source(self):
        """The photo as ht-mkimage can read it: the PNG itself, or, in a
        build without libpng (the GPU machine may lack it), a PGM of its
        luma decoded here (imageio/pnm.py)."""
        png = os.path.join(ROOT, "data", "coffee.png")
        probe = os.path.join(self.work, "probe.pgm")
        if subprocess.run([self.mkimage, png, "8", probe], capture_output=True).returncode == 0:
            return png
        pgm = os.path.join(self.work, "coffee.pgm")
        if not os.path.exists(pgm):
            img = pnm.read_png(png)
            if (img.channels, img.depth) != (3, 8):
                sys.exit("bench.py: %s is not 8-bit RGB" % png)
            px = img.samples
            pnm.write_pnm(pgm, "P5", img.width, img.height, 255,
                          [luma8(r, g, b) for r, g, b in zip(px[0::3], px[1::3], px[2::3])], comment=None)
        return pgm

    def image(self, size):
        path = os.path.join(self.work, "coffee-%d.pgm" % size)
        if not os.path.exists(path):
            if not hasattr(self, "_source"):
                self._source = self.source()
            log("making %s" % path)
            subprocess.run([self.mkimage, self._source, str(size), path], check=True)
        return path

    def png_image(self, size):
        """The same picture as PNG (for GEGL), made with netpbm or our tools."""
        path = os.path.join(self.work, "coffee-%d.png" % size)
        if not os.path.exists(path):
            pgm = self.image(size)
            if shutil.which("pnmtopng"):
                with open(path + ".tmp", "wb") as f:
                    subprocess.run(["pnmtopng", "-compression", "1", pgm], stdout=f, check=True,
                                   stderr=subprocess.DEVNULL)
                os.rename(path + ".tmp", path)
            else:
                return None
        return path

    def runs_for(self, size):
        if self.args.runs:
            return self.args.runs
        if self.args.quick:
            return 3 if size <= 4096 else 1
        return 7 if size <= 2048 else 5 if size <= 4096 else 3 if size <= 8192 else 2

    def bench_cmd(self, size, variant, threads, reps, out):
        """halftone --bench on the CPU: prints a BENCH_RE line."""
        return [self.halftone, "--quiet", "--backend", "cpu", "--variant", variant, "--threads", str(threads),
                "--bench", str(reps), self.image(size), os.path.join(self.work, out)]

    def core_bench(self, size, variant, threads):
        """min ms of the halftoning alone (halftone --bench)."""
        cmd = self.bench_cmd(size, variant, threads, self.runs_for(size), "core.pbm")
        p = subprocess.run(cmd, capture_output=True, text=True)
        m = BENCH_RE.search(p.stdout)
        if p.returncode != 0 or not m:
            log("  %s failed: %s" % (" ".join(cmd), p.stderr.strip()))
            return None
        ms = float(m.group(4))
        log("  %-9s %2d thread(s) %6s: %9.2f ms  %6.3f ns/pixel" % (variant, threads, size_label(size), ms,
                                                                   float(m.group(6))))
        return ms

    def ceiling_rate(self, size, threads, seconds):
        """Images per second of `threads` independent single-thread
        halftonings at once in one process (ht-throughput): what the machine
        gives to work that needs no communication at all, every thread busy
        for the whole window."""
        p = subprocess.run([self.throughput, self.image(size), str(threads), str(seconds)],
                           capture_output=True, text=True)
        m = re.search(r"([0-9.]+) images/s", p.stdout)
        if p.returncode != 0 or not m:
            log("  ht-throughput %d failed: %s" % (threads, p.stderr.strip()))
            return None
        log("  %2d independent threads %6s, %g s: %s images/s" % (threads, size_label(size), seconds, m.group(1)))
        return float(m.group(1))

    def spin_rate(self, threads, seconds):
        """Millions of steps per second of `threads` threads running
        arithmetic that touches no memory (ht-throughput --spin): how much
        busy cores slow each other by themselves, caches and memory apart."""
        p = subprocess.run([self.throughput, "--spin", str(threads), str(seconds)], capture_output=True, text=True)
        m = re.search(r"([0-9.]+) M steps/s", p.stdout)
        if p.returncode != 0 or not m:
            log("  ht-throughput --spin %d failed: %s" % (threads, p.stderr.strip()))
            return None
        log("  %2d threads of arithmetic alone, %g s: %s M steps/s" % (threads, seconds, m.group(1)))
        return float(m.group(1))

    def pinned_ms(self, size, cpu, reps):
        """min ms of one thread of the wavefront pinned to core `cpu`: cores
        of a virtual machine need not be equally fast."""
        p = subprocess.run(self.bench_cmd(size, "wavefront", 1, reps, "pinned.pbm"), capture_output=True, text=True,
                           preexec_fn=lambda: os.sched_setaffinity(0, {cpu}))
        m = BENCH_RE.search(p.stdout)
        return float(m.group(4)) if p.returncode == 0 and m else None

    def metrics_of(self, original, result):
        p = subprocess.run([self.metrics, original, result], capture_output=True, text=True)
        m = re.search(r"mean tone error: ([\d.]+)\nHVS error: ([\d.]+)", p.stdout)
        if p.returncode != 0 or not m:
            return None
        return float(m.group(1)), float(m.group(2))

    # -------------------------------------------------------- competitors

    def competitors(self):
        """(name, how it was run, function(size) -> (cmd, stdout_file, output, env) or reason)."""
        tools = []
        w = self.work

        def ours(size):
            out = os.path.join(w, "ours-%d.pbm" % size)
            return [self.halftone, "--quiet", self.image(size), out], None, out, None
        tools.append(("**halftone** (ours, whole process)", "`halftone in.pgm out.pbm`", ours))

        for name, args in (("pamditherbw", ["-fs"]), ("pgmtopbm", ["-fs"])):
            exe = shutil.which(name)

            def netpbm(size, exe=exe, name=name, args=args):
                if not exe:
                    return "not installed"
                out = os.path.join(w, "%s-%d.pbm" % (name, size))
                return [exe] + args + [self.image(size)], out, out, None
            tools.append(("netpbm `%s -fs`" % name, "`%s -fs in.pgm > out.pbm`" % name, netpbm))

        convert = "/usr/bin/convert" if os.access("/usr/bin/convert", os.X_OK) else shutil.which("convert")
        policy_dir = os.path.join(w, "magick-policy")
        os.makedirs(policy_dir, exist_ok=True)
        # Debian's policy refuses images wider than 16000 pixels; a private
        # policy for this run only (the system's /etc is left alone).
        with open(os.path.join(policy_dir, "policy.xml"), "w") as f:
            f.write('<policymap>\n'
                    '  <policy domain="resource" name="memory" value="16GiB"/>\n'
                    '  <policy domain="resource" name="map" value="32GiB"/>\n'
                    '  <policy domain="resource" name="width" value="1MP"/>\n'
                    '  <policy domain="resource" name="height" value="1MP"/>\n'
                    '  <policy domain="resource" name="area" value="64GP"/>\n'
                    '  <policy domain="resource" name="disk" value="64GiB"/>\n'
                    '</policymap>\n')

        def magick(size):
            if not convert:
                return "not installed"
            out = os.path.join(w, "magick-%d.pbm" % size)
            env = dict(os.environ, MAGICK_CONFIGURE_PATH=policy_dir)
            return [convert, self.image(size), "-dither", "FloydSteinberg", "-remap", "pattern:gray50",
                    out], None, out, env
        tools.append(("ImageMagick 6 `convert`",
                      "`convert in.pgm -dither FloydSteinberg -remap pattern:gray50 out.pbm`", magick))

        gegl = shutil.which("gegl")

        def gegl_dither(size):
            if not gegl:
                return "not installed"
            png = self.png_image(size)
            if not png:
                return "no PNG input (pnmtopng missing)"
            out = os.path.join(w, "gegl-%d.png" % size)
            return [gegl, png, "-o", out, "--", "gegl:dither", "red-levels=2", "green-levels=2", "blue-levels=2",
                    "alpha-levels=2", "dither-method=floyd-steinberg"], None, out, None
        tools.append(("GEGL `gegl:dither`", "`gegl in.png -o out.png -- gegl:dither red-levels=2 green-levels=2 "
                      "blue-levels=2 alpha-levels=2 dither-method=floyd-steinberg`", gegl_dither))

        # Pillow: Debian's python3-pil belongs to /usr/bin/python3, which
        # may not be the python3 running this script.
        pil_python = None
        for py in ("/usr/bin/python3", sys.executable):
            if py and os.access(py, os.X_OK) and subprocess.run([py, "-c", "import PIL"],
                                                                capture_output=True).returncode == 0:
                pil_python = py
                break

        def pillow(size):
            if not pil_python:
                return "not installed"
            out = os.path.join(w, "pillow-%d.pbm" % size)
            code = ("import sys\nfrom PIL import Image\nImage.MAX_IMAGE_PIXELS = None\n"
                    "Image.open(sys.argv[1]).convert('1').save(sys.argv[2])")
            return [pil_python, "-c", code, self.image(size), out], None, out, None
        tools.append(("Pillow `convert('1')`", "`Image.open(in).convert('1').save(out)` (python3 start included)",
                      pillow))
        return tools

    def run_competitors(self, sizes):
        results = {}  # (tool, size) -> dict
        skipped_after = {}
        tools = self.competitors()
        for size in sizes:
            ref = self.image(size)
            for name, how, make in tools:
                if name in skipped_after:
                    results[(name, size)] = {"skip": "skipped: took %.1f s at %s" % skipped_after[name]}
                    continue
                spec = make(size)
                if isinstance(spec, str):
                    results[(name, size)] = {"skip": spec}
                    continue
                cmd, stdout_path, out, env = spec
                times, failed = [], None
                for _ in range(1 if self.args.quick and size > 4096 else self.args.tool_runs):
                    if os.path.exists(out):
                        os.unlink(out)
                    f = open(stdout_path, "wb") if stdout_path else None
                    try:
                        dt, rc, err = run_child(cmd, stdout=f, env=env, timeout=self.args.tool_timeout)
                    finally:
                        if f:
                            f.close()
                    if rc != 0:
                        failed = (err.strip().splitlines() or ["exit %d" % rc])[-1][:120]
                        break
                    times.append(dt)
                    if dt > self.args.tool_limit:
                        break
                if failed:
                    log("  %s at %s failed: %s" % (name, size_label(size), failed))
                    results[(name, size)] = {"skip": "failed: %s" % failed}
                    continue
                best = min(times)
                q = self.metrics_of(ref, out)
                results[(name, size)] = {"s": best, "tone": q[0] if q else None, "hvs": q[1] if q else None}
                log("  %-36s %6s: %8.3f s  tone %s  HVS %s" % (name, size_label(size), best,
                                                               "%.3f" % q[0] if q else "?",
                                                               "%.3f" % q[1] if q else "?"))
                if best > self.args.tool_limit:
                    skipped_after[name] = (best, size_label(size))
        return tools, results


def luma8(r, g, b):
    """Rec. 709 luma as hti_gray8 (imageio/imageio_read.c) computes it: the
    library's weights in 1/65536 on values scaled to 16 bits."""
    y = (13933 * r * 257 + 46871 * g * 257 + 4732 * b * 257 + 32768) >> 16
    return (y + 128) // 257


# ------------------------------------------------------------ report

def fmt_ms(ms):
    if ms is None:
        return "—"
    return "%.0f" % ms if ms >= 100 else "%.1f" % ms if ms >= 10 else "%.2f" % ms


def header_lines(bench, command):
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return [
        "Machine: %s, %d logical cores (`/proc/cpuinfo`), %s. Date: %s. Commit: `%s`." % (
            cpu_model(), bench.cores, platform.system() + " " + platform.release(), now, git_commit()),
        "",
        "Command: `%s`" % command,
        "",
    ]


def table_v(bench, sizes, rows):
    """rows: list of (label, variant, threads, {size: ms})."""
    px = {s: s * s for s in sizes}
    with_paper = any(r[1] in PAPER and r[2] == 1 for r in rows)
    lines = ["| variant | threads | " + " | ".join("%s² ms (ns/px)%s" % (size_label(s), " · paper ms" if with_paper else "")
                                               for s in sizes) + " |",
             "|---|---|" + "---|" * len(sizes)]
    for label, variant, threads, ms in rows:
        cells = []
        for s in sizes:
            v = ms.get(s)
            p = paper_ms(variant, s) if threads == 1 and variant in PAPER else None
            cell = "%s (%.2f)" % (fmt_ms(v), v * 1e6 / px[s]) if v is not None else "—"
            if p is not None:
                cell += " · %s" % fmt_ms(p)
            cells.append(cell)
        lines.append("| %s | %d | %s |" % (label, threads, " | ".join(cells)))
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build", help="build folder (default: build)")
    ap.add_argument("--sizes", default=None,
                    help="square sizes, comma-separated (default 1024,2048,4096,8192,16384)")
    ap.add_argument("--quick", action="store_true", help="fewer runs per size (for trying it out)")
    ap.add_argument("--runs", type=int, default=0, help="runs per core measurement (default: by size)")
    ap.add_argument("--tool-runs", type=int, default=3, help="whole-process runs per other tool (default 3)")
    ap.add_argument("--tool-limit", type=float, default=30.0,
                    help="skip a tool at larger sizes once one run took longer than this many s (default 30)")
    ap.add_argument("--tool-timeout", type=float, default=900.0, help="kill a tool run after this many s")
    ap.add_argument("--no-tools", action="store_true", help="leave out the other tools")
    ap.add_argument("--cpu-scaling", action="store_true",
                    help="only the wavefront at 1, 2, 4, 8, 16 threads (section cpu-scaling)")
    ap.add_argument("--rounds", type=int, default=1,
                    help="with --cpu-scaling: repeat the sweep, keep each cell's best (default 1)")
    ap.add_argument("--threads", default=None,
                    help="thread counts for the wavefront (default 1..cores; with --cpu-scaling 1,2,4,8,16)")
    ap.add_argument("--workdir", default=None, help="where test images go (default: a new temporary folder)")
    ap.add_argument("--keep", action="store_true", help="keep the work folder")
    ap.add_argument("--output", default=os.path.join(ROOT, "BENCHMARKS.md"), help="file with the markers")
    ap.add_argument("--no-write", action="store_true", help="print the tables only")
    args = ap.parse_args()
    command = "python3 tools/bench/bench.py" + "".join(" " + a for a in sys.argv[1:])

    sizes = [int(s) for s in (args.sizes or "1024,2048,4096,8192,16384").split(",") if s.strip()]
    bench = Bench(args)
    if args.threads:
        threads = [int(t) for t in args.threads.split(",")]
    elif args.cpu_scaling:
        threads = [1, 2, 4, 8, 16]
    else:
        threads = list(range(1, bench.cores + 1))

    try:
        lines = header_lines(bench, command)
        if args.quick:
            lines += ["*Quick run (`--quick`: few repetitions): indicative only.*", ""]
        if args.cpu_scaling:
            section = "cpu-scaling"
            # Rounds: the whole sweep again, keeping each cell's best, so that a
            # slow spell of a shared machine does not land on one thread count.
            # The machine's own ceiling (below) is measured in each round right
            # after the wavefront at the same thread count, so that the two are
            # compared under the same conditions: on the GPU host the ceiling
            # itself drifted by up to 16% within minutes.
            csize = max(sizes)
            creps = 3 if csize >= 8192 else 10
            window = 4 if csize >= 8192 else 2
            best, pairs, spins = {}, {}, {}
            for _ in range(args.rounds):
                for t in threads:
                    for s in sizes:
                        ms = bench.core_bench(s, "wavefront", t)
                        if ms is not None and (best.get((t, s)) is None or ms < best[(t, s)]):
                            best[(t, s)] = ms
                        if s == csize:
                            wf_ms = ms
                    r = bench.ceiling_rate(csize, t, window)
                    if r and wf_ms:
                        pairs.setdefault(t, []).append((r, 1000.0 / wf_ms))
                    r = bench.spin_rate(t, 1)
                    if r:
                        spins.setdefault(t, []).append(r)
            rows = [("wavefront", "wavefront", t, {s: best.get((t, s)) for s in sizes}) for t in threads]
            lines += ["Wavefront (threaded k-delay scan, Sec. III), Floyd–Steinberg, 8-bit in, 1-bit out; "
                      "halftoning alone (`halftone --bench`), minimum over runs%s." %
                      (" and over %d rounds of the whole sweep" % args.rounds if args.rounds > 1 else ""), ""]
            lines += table_v(bench, sizes, rows)
            lines += ["", "Speed-up over 1 thread:", "",
                      "| threads | " + " | ".join("%s²" % size_label(s) for s in sizes) + " |",
                      "|---|" + "---|" * len(sizes)]
            base = rows[0][3]
            for _, _, t, ms in rows:
                lines.append("| %d | %s |" % (t, " | ".join(
                    "%.2f×" % (base[s] / ms[s]) if base.get(s) and ms.get(s) else "—" for s in sizes)))
            if any(t > bench.cores for t in threads):
                lines += ["", "(Thread counts above the %d cores of this machine oversubscribe it.)" % bench.cores]
            # The machine's own ceiling: T independent single-thread
            # halftonings at once, at the largest size, against the
            # wavefront's T threads. Images per second compares them without
            # a 1-thread baseline, which on a VM whose cores differ depends
            # on where it lands.
            lines += ["", "The machine's ceiling at %s²: T threads that share nothing, each halftoning the whole "
                      "image on its own, all busy for the same %d s (`ht-throughput IMAGE T %d`): images per "
                      "second of all of them together. A threaded wavefront cannot go beyond it. In each round "
                      "it was measured right after the wavefront's T threads; the table gives the median of the "
                      "rounds for the ceiling, the wavefront's best, and the median (and range) of the rounds' "
                      "ratios, wavefront over ceiling. The last column is T threads of arithmetic that touches "
                      "no memory, for 1 s (`ht-throughput --spin T 1`), over one such thread, median of the "
                      "rounds: what busy cores take from each other by themselves (clock, shared physical cores, "
                      "other tenants), caches and memory apart." % (size_label(csize), window, window), "",
                      "| T | T independent threads, images/s | over one thread | wavefront, T threads, images/s "
                      "| wavefront / ceiling | arithmetic alone, over one thread |", "|---|---|---|---|---|---|"]
            rate = {t: statistics.median(r for r, _ in pairs[t]) for t in threads if pairs.get(t)}
            spin = {t: statistics.median(spins[t]) for t in threads if spins.get(t)}
            for t in threads:
                r, wf_ms = rate.get(t), best.get((t, csize))
                wf_rate = 1000.0 / wf_ms if wf_ms else None
                ratios = sorted(w / c for c, w in pairs.get(t, []))
                share = "—"
                if ratios:
                    share = "%.0f%%" % (100 * statistics.median(ratios))
                    if len(ratios) > 1:
                        share += " (%.0f–%.0f%%)" % (100 * ratios[0], 100 * ratios[-1])
                lines.append("| %d | %s | %s | %s | %s | %s |" % (
                    t, "%.2f" % r if r else "—", "%.2f×" % (r / rate[1]) if r and rate.get(1) else "—",
                    "%.2f" % wf_rate if wf_rate else "—", share,
                    "%.2f×" % (spin[t] / spin[1]) if spin.get(t) and spin.get(1) else "—"))
            # how fast each core is on its own
            cpus = sorted(os.sched_getaffinity(0))
            pin = {c: bench.pinned_ms(csize, c, creps) for c in cpus}
            got = sorted(v for v in pin.values() if v)
            if got:
                med = got[len(got) // 2]
                slow = [c for c in cpus if pin[c] and pin[c] > 1.2 * got[0]]
                lines += ["", "One thread pinned to each core in turn (`taskset -c N halftone --threads 1 "
                          "--bench %d`, %s²): fastest %.1f ms, median %.1f ms, slowest %.1f ms; %s." % (
                              creps, size_label(csize), got[0], med, got[-1],
                              "cores more than 20%% slower than the fastest: %s" % ", ".join(map(str, slow))
                              if slow else "no core more than 20% slower than the fastest")]
                log("  pinned, ms: " + ", ".join("cpu %d %.1f" % (c, pin[c]) for c in cpus if pin[c]))
                top = max(threads)
                if best.get((top, csize)):
                    lines.append("Against that fastest core alone, %d threads are %.2f× faster; against the "
                                 "median core, %.2f×." % (top, got[0] / best[(top, csize)], med / best[(top, csize)]))
                # Linear scaling on cores that differ: every core as fast as
                # it is alone, all at once. What T independent threads reach
                # of it says how much busy cores slow each other, which no
                # program can win back.
                alone = sum(1000.0 / v for v in got)
                if len(got) == len(cpus) and top == len(cpus) and rate.get(top) and best.get((top, csize)):
                    lines.append("The %d cores' own speeds added up (each pinned alone, as above): %.2f images/s, "
                                 "%.2f× the fastest core: linear scaling on this machine. %d independent threads "
                                 "reached %.0f%% of it%s, the wavefront's %d threads %.0f%%." % (
                                     len(got), alone, alone * got[0] / 1000.0, top, 100 * rate[top] / alone,
                                     " (busy cores slow each other)" if rate[top] < 0.95 * alone else "", top,
                                     100 * 1000.0 / best[(top, csize)] / alone))
        else:
            section = "cpu"
            rows = []
            for v in ("ed", "ec", "ed-rc", "ec-rc"):
                rows.append((LABEL[v], v, 1, {s: bench.core_bench(s, v, 1) for s in sizes}))
            for t in threads:
                rows.append(("wavefront", "wavefront", t, {s: bench.core_bench(s, "wavefront", t) for s in sizes}))
            lines += ["### Table V (1): sequential algorithms, and the threaded wavefront", "",
                      "Floyd–Steinberg, 8-bit PGM in, 1-bit out, the halftoning alone (`halftone --bench N "
                      "--backend cpu --variant V --threads T`), minimum over N runs. Paper: Core i7-3770K "
                      "(3.5 GHz), one thread, Table V (1). All rows give identical bits.", ""]
            lines += table_v(bench, sizes, rows)
            # targets (measured, at the largest size)
            big = max(sizes)
            single = [(r[3].get(big), r[0]) for r in rows if r[2] == 1 and r[3].get(big)]
            lines += ["", "Measured against the targets (largest size, %s²):" % size_label(big), ""]
            if single:
                best, who = min(single)
                lines.append("- best single thread: %.3f ns/pixel (%s); target ≤ 2.0 ns/pixel at 16K²" %
                             (best * 1e6 / (big * big), who))
            wf = {r[2]: r[3].get(big) for r in rows if r[1] == "wavefront"}
            if wf.get(1) and wf.get(2):
                lines.append("- wavefront, 2 threads against 1: speed-up %.2f×; target ≥ 1.7×" % (wf[1] / wf[2]))

            if not args.no_tools:
                log("other tools (whole process):")
                tools, res = bench.run_competitors(sizes)
                lines += ["", "### Whole process: the tools a user would otherwise pick", "",
                          "Wall time of the whole command (start, read, dither, write), minimum of %d run(s); "
                          "quality of each output by `ht-metrics` (the same `ht_compute_metrics` for every "
                          "tool): mean tone error |mean(out) − mean(in)| and HVS error mean |G∗in − G∗out| "
                          "(7×7 Gaussian, σ = 1), both in 0..255 units, lower is better. A tool is dropped "
                          "at larger sizes once a run took over %.0f s." % (args.tool_runs, args.tool_limit), ""]
                lines += ["| tool | " + " | ".join("%s² s · tone · HVS" % size_label(s) for s in sizes) + " |",
                          "|---|" + "---|" * len(sizes)]
                for name, how, _ in tools:
                    cells = []
                    for s in sizes:
                        r = res.get((name, s), {"skip": "—"})
                        if "skip" in r:
                            cells.append(r["skip"])
                        else:
                            cells.append("%.3f · %s · %s" % (r["s"], "%.3f" % r["tone"] if r["tone"] is not None else "?",
                                                             "%.2f" % r["hvs"] if r["hvs"] is not None else "?"))
                    lines.append("| %s | %s |" % (name, " | ".join(cells)))
                lines += ["", "Commands:", ""] + ["- %s: %s" % (name, how) for name, how, _ in tools]
                lines += ["", "`pamditherbw` adds brightnesses in linear light (its manual: \"using gamma "
                          "transformations\") and diffuses with random numbers, so against the stored values its "
                          "tone differs by design; `pgmtopbm` is its linear predecessor. GEGL dithers a float "
                          "RGBA buffer and writes RGBA PNG; the metrics read its luma."]
                # speed against the fastest other tool
                for s in sizes:
                    ours = res.get((tools[0][0], s), {})
                    others = [(res[(n, s)]["s"], n) for n, _, _ in tools[1:] if "s" in res.get((n, s), {})]
                    if "s" in ours and others:
                        t, n = min(others)
                        r = t / ours["s"]
                        lines.append("%s- %s²: ours %.3f s, fastest other %s %.3f s: ours %.1f× %s%s" % (
                            "\n" if s == sizes[0] else "", size_label(s), ours["s"], n, t, r if r >= 1 else 1 / r,
                            "faster" if r >= 1 else "slower", "; target ≥ 5× faster at 4K²" if s == 4096 else ""))

            # memory of our CLI on the largest image
            img = bench.image(big)
            out = os.path.join(bench.work, "mem.pbm")
            rss = peak_rss_kib([bench.halftone, "--quiet", img, out])
            base = peak_rss_kib([bench.halftone, "--version"])
            if rss and base:
                in_b, out_b = os.path.getsize(img), os.path.getsize(out)
                work = rss * 1024 - base * 1024 - in_b - out_b
                lines += ["", "Memory of `halftone in.pgm out.pbm` at %s² (`/usr/bin/time -v`): peak RSS %.1f MiB "
                          "= program %.1f MiB (RSS of `halftone --version`) + input %.1f MiB (mapped) + output "
                          "%.1f MiB + %.1f MiB working memory." % (
                              size_label(big), rss / 1024, base / 1024, in_b / 2**20, out_b / 2**20, work / 2**20)]

        text = "\n".join(lines) + "\n"
        print(text)
        if not args.no_write:
            write_section(args.output, section, text)
            log("wrote section %s of %s" % (section, args.output))
    finally:
        if not args.keep and not args.workdir:
            shutil.rmtree(bench.work, ignore_errors=True)


def write_section(path, section, text):
    with open(path) as f:
        doc = f.read()
    begin = re.compile(r"<!-- BEGIN %s(?: [^>]*)?-->\n" % re.escape(section))
    end = "<!-- END %s -->" % section
    m = begin.search(doc)
    e = doc.find(end, m.end()) if m else -1
    if not m or e < 0:
        sys.exit("bench.py: %s has no <!-- BEGIN %s ... --> / %s markers" % (path, section, end))
    doc = doc[:m.end()] + text + doc[e:]
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(doc)
    os.replace(tmp, path)


if __name__ == "__main__":
    main()
