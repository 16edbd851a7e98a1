#!/usr/bin/env python3
"""Benchmark of the search methods (docs/search.md) beside Kouge, Ito,
Nakano, "GPU-accelerated Digital Halftoning by the Local Exhaustive
Search" (../shared/papers/local-exhaustive-search-gpu.md), Tables I and II.

    python3 tools/bench/bench-search.py --build build-19                     # 512: LES, PES, DBS, FS; 1 and all threads
    python3 tools/bench/bench-search.py --sizes 256,512,1024 --methods dbs --threads 1,0
    python3 tools/bench/bench-search.py --sizes 128 --inits floyd-steinberg,random --schedules parallel,raster

Each row is one `halftone --bench 1 --metrics` run: the time of the
halftoning alone (no file I/O, as the paper's), the rounds and the eye
error (mean |a - V*b| in 0..255 units, sigma 1, 7x7 by default: Table
II's measure). Floyd-Steinberg is timed the same way, with its eye error
(`--sigma 1` makes --metrics print it). Images: the centre square of
data/sample.png resized by ht-mkimage (the paper used Lena, 512 x 512).
The ceiling of a thread count is the 1-thread time divided by the
threads the machine has (`os.sched_getaffinity`). Prints a Markdown
table. Python 3 standard library only.
"""
import argparse
import datetime
import os
import platform
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Table I (seconds, 512 x 512 Lena, m = 4, sigma 1, w = 3) and Table II
# (average error) of the paper.
PAPER_TIME = {"les": {"cpu": 37364, "fpga": 1186, "gpu": 733}, "pes": {"cpu": 13794, "fpga": 546, "gpu": 449}}
PAPER_ERROR = {"floyd-steinberg": 7.06, "dbs": 5.86, "les": (4.70, 4.75), "pes": (4.71, 4.75)}


def run(tool, args):
    p = subprocess.run([tool] + args, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("bench-search: %s %s: %s" % (tool, " ".join(args), p.stderr.strip()))
    return p.stdout


def cpu_name():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build", help="build folder with tools/cli/halftone and tools/bench/ht-mkimage")
    ap.add_argument("--sizes", default="512", help="square sides, comma-separated (default 512, the paper's)")
    ap.add_argument("--methods", default="floyd-steinberg,dbs,pes,les")
    ap.add_argument("--threads", default="1,0", help="thread counts, 0 = all (default 1,0)")
    ap.add_argument("--window", type=int, default=4)
    ap.add_argument("--inits", default="floyd-steinberg")
    ap.add_argument("--schedules", default="parallel")
    ap.add_argument("--image", default=os.path.join(ROOT, "data", "sample.png"))
    a = ap.parse_args()
    halftone = os.path.join(a.build, "tools", "cli", "halftone")
    mkimage = os.path.join(a.build, "tools", "bench", "ht-mkimage")
    ncpu = len(os.sched_getaffinity(0))
    work = tempfile.mkdtemp(prefix="bench-search-")
    print("Machine: %s, %d threads available; %s UTC" % (cpu_name(), ncpu,
                                                         datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M")))
    print("Command: python3 tools/bench/bench-search.py " + " ".join(sys.argv[1:]))
    print()
    print("| size | method | init | schedule | threads | rounds | eye error | paper's error | time (s) "
          "| 1-thread / threads (s) | paper's time (s) |")
    print("|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for size in [int(s) for s in a.sizes.split(",")]:
        img = os.path.join(work, "in-%d.pgm" % size)
        run(mkimage, [a.image, str(size), img])
        for method in a.methods.split(","):
            for init in a.inits.split(","):
                for sched in a.schedules.split(","):
                    if method == "floyd-steinberg" and (init != "floyd-steinberg" or sched != "parallel"):
                        continue
                    one = None
                    for t in [int(x) for x in a.threads.split(",")]:
                        if sched == "raster" and t != 1:
                            continue
                        args = ["--bench", "1", "--metrics", "--threads", str(t)]
                        if method == "floyd-steinberg":
                            args += ["--sigma", "1"]
                        else:
                            args += ["--algorithm", method]
                            if method != "dbs":
                                args += ["--window", str(a.window)]
                            else:  # the paper's Table II compares DBS on its own error
                                args += ["--objective", "les"]
                            if init != "floyd-steinberg":
                                args += ["--init", init]
                            if sched != "parallel":
                                args += ["--schedule", sched]
                        out = run(halftone, args + [img, "/dev/null"])
                        ms = float(re.search(r"min ([0-9.]+) ms", out).group(1))
                        err = float(re.search(r"eye error \([^)]*\): ([0-9.]+)", out).group(1))
                        m = re.search(r"rounds: (\d+)", out)
                        rounds = m.group(1) if m else "—"
                        if t == 1:
                            one = ms
                        tt = t or ncpu
                        ceiling = "%.3f" % (one / 1000 / tt) if one is not None and tt > 1 else "—"
                        pe = PAPER_ERROR.get(method) if size == 512 else None
                        if isinstance(pe, tuple):
                            pe = pe[0] if sched == "raster" or tt == 1 else pe[1]
                        pt = PAPER_TIME.get(method, {}).get("cpu") if size == 512 and a.window == 4 and tt == 1 \
                            else None
                        print("| %d² | %s | %s | %s | %s | %s | %.3f | %s | %.3f | %s | %s |" % (
                            size, method, "—" if method == "floyd-steinberg" else init,
                            "—" if method == "floyd-steinberg" else sched, t if t else "all (%d)" % ncpu, rounds,
                            err, "%.2f" % pe if pe else "—", ms / 1000, ceiling, pt or "—"))
                        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
