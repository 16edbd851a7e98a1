#!/usr/bin/env python3
"""docs/screens-compare.png: one photo crop under the four families at
100 %, side by side: Floyd-Steinberg, Bayer 8 x 8, blue noise and a 45°
round-dot AM screen, each made by the halftone CLI (README, "Blue noise
and screens").

Python standard library only: imageio/pnm.py reads the photo and the
CLI's PGM output and writes the PNG. The crop is turned into gray here
(Rec. 709 luma of the stored values, integers, as data/make-fixtures.py
does) so that all four methods get the same gray input and none of them
depends on the CLI's colour conversion.

    python3 tools/bench/screens-figure.py --halftone build/tools/cli/halftone \\
        [--photo data/coffee.png] [--at 200,70] [--out docs/screens-compare.png]
"""
import argparse
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "imageio"))
import pnm  # noqa: E402

W, H = 200, 150
GAP = 8  # white columns between the panels, so that their edges show
# The four panels, left to right. The screen: 50 lines per inch at 300
# dpi is a 6-pixel cell, dots large enough to see at 100 %.
METHODS = [
    ("floyd-steinberg", ["--algorithm", "floyd-steinberg"]),
    ("bayer-8", ["--algorithm", "bayer", "--mask-size", "8"]),
    ("blue-noise", ["--algorithm", "blue-noise", "--noise-size", "128", "--seed", "1"]),
    ("screen-45-round", ["--algorithm", "screen", "--dpi", "300", "--lpi", "50", "--angle", "45", "--dot", "round"]),
]


def crop_gray(photo, x0, y0):
    """W x H samples of the photo from (x0, y0), as 8-bit luma."""
    im = pnm.read_png(photo)
    if im.depth != 8 or im.channels not in (1, 3, 4) or x0 + W > im.width or y0 + H > im.height:
        sys.exit("screens-figure: %s: need 8-bit gray or RGB(A) of at least %dx%d from (%d, %d)"
                 % (photo, W, H, x0, y0))
    c, s, out = im.channels, im.samples, []
    for y in range(y0, y0 + H):
        for x in range(x0, x0 + W):
            i = (y * im.width + x) * c
            if c == 1:
                out.append(s[i])
            else:
                out.append((2126 * s[i] + 7152 * s[i + 1] + 722 * s[i + 2] + 5000) // 10000)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--halftone", required=True, help="the CLI, e.g. build/tools/cli/halftone")
    ap.add_argument("--photo", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                                    "data", "coffee.png"))
    ap.add_argument("--at", default="200,70",
                    help="the crop's top-left corner X,Y (default 200,70: the cup's rim and the crema)")
    ap.add_argument("--out", default="docs/screens-compare.png")
    a = ap.parse_args()
    x0, y0 = (int(v) for v in a.at.split(","))
    gray = crop_gray(a.photo, x0, y0)
    panels = []
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "crop.pgm")
        pnm.write_pnm(src, "P5", W, H, 255, gray)
        for name, args in METHODS:
            dst = os.path.join(d, name + ".pgm")
            # --levels 2 written as PGM (0 / 255) rather than PBM: read back
            # as plain samples
            p = subprocess.run([a.halftone, "--quiet"] + args + [src, dst], capture_output=True, text=True)
            if p.returncode != 0:
                sys.exit("screens-figure: %s: %s" % (" ".join(args), p.stderr.strip()))
            im = pnm.read_pnm(dst)
            panels.append(im.samples)
    # side by side, GAP white columns between
    fw = 4 * W + 3 * GAP
    rows = []
    for y in range(H):
        row = []
        for i, s in enumerate(panels):
            if i:
                row += [255] * GAP
            row += s[y * W:(y + 1) * W]
        rows += row
    pnm.write_png(a.out, fw, H, 1, 8, rows)
    print("%s: %dx%d; left to right: %s" % (a.out, fw, H, ", ".join(n for n, _ in METHODS)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
