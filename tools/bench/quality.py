#!/usr/bin/python3
"""Quality by the field's measure (BENCHMARKS.md, "Quality"): PSNR and
SSIM of the original and the halftone both blurred by a Gaussian of
sigma 1.5 and 2 pixels, for our methods and the peers on this machine.

    /usr/bin/python3 tools/bench/quality.py --build build                 # the table, Markdown
    /usr/bin/python3 tools/bench/quality.py --build build --size 256 --photos coffee --only fs,dbs-f15
    /usr/bin/python3 tools/bench/quality.py --metric ORIGINAL.pgm HALFTONE.pgm   # one pair

The metric is computed here, independently of the library's
ht_compute_metrics (core/metrics.c), with numpy: the 2-D Gaussian of
radius ceil(3 sigma) normalised as a whole, borders by edge replication
(numpy.pad mode 'edge'), applied as a sum of shifted images; SSIM per
Wang, Bovik, Sheikh, Simoncelli (2004) with C1 = (0.01 * 255)^2, C2 =
(0.03 * 255)^2 and an 11 x 11 Gaussian window of sigma 1.5, averaged
over the positions where the window fits. The same definitions as the
library's, so the columns match what `halftone --metrics` prints.

Photos: data/coffee.png's centre square resized to SIZE^2 by ht-mkimage
(as every benchmark here) and data/sample.png's centre 300^2 square
(ht-mkimage, no resizing). Peers: ImageMagick's `convert -dither
FloydSteinberg -monochrome` (which also reduces the tones: dark ones go
black) and `-remap pattern:gray50` (a black and white palette), netpbm's `pamditherbw` (Floyd-Steinberg,
its default; it adds light, not the encoded values, so its tones differ
from the input's by this measure) and `pgmtopbm -floyd`, Pillow's `Image.convert('1')` (Floyd-Steinberg) and
GEGL's `gegl:dither` (floyd-steinberg, 2 levels), where installed.
Needs python3-numpy (Debian); python3-pil for the Pillow row and to read
the PNG that gegl writes; imagemagick, netpbm and gegl for theirs (a row
whose tool is missing is left out, with a note on stderr).
"""
import argparse
import datetime
import math
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


# ------------------------------------------------------------------ images

def read_pnm(path):
    """P4 (1 = black) or P5 8-bit as a float array 0..255."""
    with open(path, "rb") as f:
        data = f.read()
    fields, pos = [], 0
    while len(fields) < (3 if data[:2] == b"P4" else 4):
        while data[pos:pos + 1].isspace():
            pos += 1
        if data[pos:pos + 1] == b"#":
            pos = data.index(b"\n", pos)
            continue
        end = pos
        while not data[end:end + 1].isspace():
            end += 1
        fields.append(data[pos:end])
        pos = end
    pos += 1
    magic, w, h = fields[0], int(fields[1]), int(fields[2])
    if magic == b"P4":
        row = (w + 7) // 8
        bits = np.unpackbits(np.frombuffer(data[pos:pos + row * h], np.uint8).reshape(h, row), axis=1)[:, :w]
        return (1 - bits).astype(np.float64) * 255.0
    if magic != b"P5" or int(fields[3]) != 255:
        sys.exit("quality: %s: not an 8-bit PGM or a PBM" % path)
    return np.frombuffer(data[pos:pos + w * h], np.uint8).reshape(h, w).astype(np.float64)


def write_pgm(path, a):
    with open(path, "wb") as f:
        f.write(b"P5\n%d %d\n255\n" % (a.shape[1], a.shape[0]))
        f.write(np.clip(a, 0, 255).astype(np.uint8).tobytes())


# ------------------------------------------------------------------ metric

def gauss2d(sigma, radius):
    y, x = np.mgrid[-radius:radius + 1, -radius:radius + 1]
    k = np.exp(-(x * x + y * y) / (2.0 * sigma * sigma))
    return k / k.sum()


def conv_same(img, k, mode):
    """Correlation with the (odd, square) kernel k; 'edge' keeps the size
    (borders replicated), 'valid' only where k fits."""
    r = k.shape[0] // 2
    src = np.pad(img, r, mode="edge") if mode == "edge" else img
    h, w = src.shape[0] - 2 * r, src.shape[1] - 2 * r
    out = np.zeros((h, w))
    for dy in range(2 * r + 1):
        for dx in range(2 * r + 1):
            out += k[dy, dx] * src[dy:dy + h, dx:dx + w]
    return out


def blurred_quality(a, b, sigma):
    k = gauss2d(sigma, int(math.ceil(3 * sigma)))
    A, B = conv_same(a, k, "edge"), conv_same(b, k, "edge")
    mse = float(np.mean((A - B) ** 2))
    psnr = 10 * math.log10(255.0 ** 2 / mse) if mse > 0 else float("inf")
    g = gauss2d(1.5, 5)
    ma, mb = conv_same(A, g, "valid"), conv_same(B, g, "valid")
    va = conv_same(A * A, g, "valid") - ma * ma
    vb = conv_same(B * B, g, "valid") - mb * mb
    cov = conv_same(A * B, g, "valid") - ma * mb
    C1, C2 = (0.01 * 255) ** 2, (0.03 * 255) ** 2
    ssim = ((2 * ma * mb + C1) * (2 * cov + C2)) / ((ma * ma + mb * mb + C1) * (va + vb + C2))
    return psnr, float(ssim.mean())


# ----------------------------------------------------------------- methods

def ours(*args):
    return ("halftone", list(args))


METHODS = [
    ("fs", "ours: Floyd–Steinberg", ours()),
    ("jjn", "ours: Jarvis–Judice–Ninke", ours("--algorithm", "jarvis-judice-ninke")),
    ("dbs-les", "ours: DBS, LES paper's objective, σ 1 (the old default)", ours("--algorithm", "dbs", "--objective", "les")),
    ("dbs-les15", "ours: DBS, LES paper's objective, σ 1.5, r 5",
     ours("--algorithm", "dbs", "--objective", "les", "--sigma", "1.5", "--eye-radius", "5")),
    ("dbs-f1", "ours: DBS, filtered, σ 1, r 3 (the eye's default)", ours("--algorithm", "dbs")),
    ("dbs-f15", "ours: DBS, filtered, σ 1.5, r 5", ours("--algorithm", "dbs", "--sigma", "1.5", "--eye-radius", "5")),
    ("dbs-f2", "ours: DBS, filtered, σ 2, r 6", ours("--algorithm", "dbs", "--sigma", "2", "--eye-radius", "6")),
    ("les3", "ours: LES m 3, σ 1", ours("--algorithm", "les", "--window", "3")),
    ("pes3", "ours: PES m 3, σ 1", ours("--algorithm", "pes", "--window", "3")),
    ("les4", "ours: LES m 4, σ 1", ours("--algorithm", "les", "--window", "4")),
    ("im", "ImageMagick `convert -dither FloydSteinberg -monochrome`", ("imagemagick", [])),
    ("im-remap", "ImageMagick `convert -dither FloydSteinberg -remap pattern:gray50` (black and white palette)",
     ("imagemagick-remap", [])),
    ("netpbm", "netpbm `pamditherbw` (Floyd–Steinberg in linear light)", ("netpbm", [])),
    ("pgmtopbm", "netpbm `pgmtopbm -floyd` (adds encoded values, as we do)", ("pgmtopbm", [])),
    ("pillow", "Pillow `convert('1')` (Floyd–Steinberg)", ("pillow", [])),
    ("gegl", "GEGL `gegl:dither` floyd-steinberg, 2 levels", ("gegl", [])),
]


def make(kind, args, src, dst, build, threads):
    """Halftones src (PGM) into dst (PGM or PBM); the seconds it took, or
    None where the tool is missing."""
    t = time.time()
    if kind == "halftone":
        subprocess.run([os.path.join(build, "tools/cli/halftone"), "--quiet", "--threads", str(threads)] + args +
                       [src, dst], check=True)
    elif kind == "imagemagick":
        tool = shutil.which("convert")
        if not tool:
            return None
        subprocess.run([tool, src, "-dither", "FloydSteinberg", "-monochrome", "pgm:" + dst], check=True)
    elif kind == "imagemagick-remap":
        tool = shutil.which("convert")
        if not tool:
            return None
        subprocess.run([tool, src, "-dither", "FloydSteinberg", "-remap", "pattern:gray50", "pgm:" + dst], check=True)
    elif kind == "netpbm":
        tool, topnm = shutil.which("pamditherbw"), shutil.which("pamtopnm")
        if not tool or not topnm:
            return None
        with open(dst, "wb") as out:  # pamditherbw writes PAM; pamtopnm makes it a PBM
            dither = subprocess.Popen([tool, src], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            subprocess.run([topnm], check=True, stdin=dither.stdout, stdout=out)
            if dither.wait() != 0:
                sys.exit("quality: pamditherbw failed")
    elif kind == "pgmtopbm":
        tool = shutil.which("pgmtopbm")
        if not tool:
            return None
        with open(dst, "wb") as out:
            subprocess.run([tool, "-floyd", src], check=True, stdout=out, stderr=subprocess.DEVNULL)
    elif kind == "pillow":
        try:
            from PIL import Image
        except ImportError:
            return None
        Image.open(src).convert("1").save(dst)
    elif kind == "gegl":
        tool = shutil.which("gegl")
        try:
            from PIL import Image
        except ImportError:
            return None
        if not tool:
            return None
        png = dst + ".png"
        subprocess.run([tool, src, "-o", png, "--", "gegl:dither", "red-levels=2", "green-levels=2",
                        "blue-levels=2", "alpha-levels=256", "dither-method=floyd-steinberg"], check=True,
                       stderr=subprocess.DEVNULL)
        write_pgm(dst, np.asarray(Image.open(png).convert("RGB"))[:, :, 0].astype(np.float64))
    return time.time() - t


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--size", type=int, default=512, help="the coffee photo's side (default 512)")
    ap.add_argument("--photos", default="coffee,sample")
    ap.add_argument("--only", default="", help="method keys, comma-separated (default: all)")
    ap.add_argument("--threads", type=int, default=0, help="our tool's threads (the bits do not depend on them)")
    ap.add_argument("--metric", nargs=2, metavar=("ORIGINAL", "HALFTONE"), help="print the measure of one pair")
    o = ap.parse_args()
    if o.metric:
        a, b = read_pnm(o.metric[0]), read_pnm(o.metric[1])
        for s in (1.5, 2.0):
            p, q = blurred_quality(a, b, s)
            print("sigma %g: PSNR %.4f dB, SSIM %.4f" % (s, p, q))
        return
    only = set(o.only.split(",")) if o.only else None
    tmp = tempfile.mkdtemp(prefix="ht-quality-")
    photos = []
    for name in o.photos.split(","):
        src = os.path.join(ROOT, "data", name + ".png")
        size = o.size if name == "coffee" else 300
        pgm = os.path.join(tmp, "%s-%d.pgm" % (name, size))
        subprocess.run([os.path.join(o.build, "tools/bench/ht-mkimage"), src, str(size), pgm], check=True)
        photos.append(("%s %d²" % (name, size), pgm))
    print("%s, %s, %d CPUs; %s" % (datetime.date.today(), platform.node() and "this machine",
                                     os.cpu_count() or 0, " ".join(sys.argv)))
    print()
    head = "| method | " + " | ".join("%s PSNR σ1.5 | SSIM σ1.5 | PSNR σ2 | SSIM σ2 | s" % p for p, _ in photos) + " |"
    print(head)
    print("|---|" + "---:|" * (5 * len(photos)))
    for key, label, (kind, args) in METHODS:
        if only and key not in only:
            continue
        cells = []
        for pname, pgm in photos:
            dst = os.path.join(tmp, "%s-%s.pgm" % (os.path.basename(pgm), key))
            secs = make(kind, args, pgm, dst, o.build, o.threads)
            if secs is None:
                cells = None
                break
            a, b = read_pnm(pgm), read_pnm(dst)
            q15, q2 = blurred_quality(a, b, 1.5), blurred_quality(a, b, 2.0)
            cells.append("%.2f | %.4f | %.2f | %.4f | %.1f" % (q15[0], q15[1], q2[0], q2[1], secs))
        if cells is None:
            print("| %s | not installed |" % label, file=sys.stderr)
            continue
        print("| %s | %s |" % (label, " | ".join(cells)), flush=True)
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
