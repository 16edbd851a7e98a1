#!/usr/bin/env python3
"""The pictures and the table of plane-dependent colour (docs/color.md,
BENCHMARKS.md "Plane-dependent colour"), made by the halftone CLI:

  - Zhang et al., Figure 6: Bias and Grain (and our overlap figure)
    against the inter-plane weight 0 ... 0.5, without and with randomized
    filter weights, on the paper's ramp: 512 x 32, gray 0 ... 0.25 across
    (column x: 16383 x / 511 of 65535, 16-bit RGB), Floyd-Steinberg;
    a Markdown table on stdout and a plot (--plot, PNG);
  - the ramps of Figures 4 and 5 (gray 0 ... 0.25 and 0.25 ... 0.5) at
    weights 0, 0.3 and 0.5, without and with randomization (--ramps,
    PNG, 2x enlarged, a strip each).

Python standard library only (imageio/pnm.py writes the PNGs; the plot is
drawn here, text in a 5x7 pixel font).

    python3 tools/bench/color-figures.py --halftone build/tools/cli/halftone \\
        [--step 0.05] [--seed 1] [--plot docs/color-figure6.png] \\
        [--ramps docs/color-ramps.png] > table.md
"""
import argparse
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "imageio"))
import pnm  # noqa: E402

W, H = 512, 32

# The paper's Figure 6 as its text gives it (Sec. 4): Grain 10 % at
# weight 0, 1 % at 0.2; Bias grows with larger weights (no value given).
PAPER_GRAIN = {0.0: "≈ 10 %", 0.2: "≈ 1 %"}


def ramp(path, lo):
    """The paper's ramp from gray lo to lo + 0.25 (lo in 0..0.75), 16-bit
    RGB PPM, as tests/core/test-color.c makes it."""
    base = round(lo * 65536)
    row = []
    for x in range(W):
        v = min(65535, base + x * 16383 // (W - 1))
        row += [v, v, v]
    pnm.write_pnm(path, "P6", W, H, 65535, row * H)


def halftone(exe, src, dst, weight, randomize, seed, metrics=False):
    args = [exe, "--quiet", "--color", "plane-dependent", "--interplane", "%g" % weight]
    if randomize:
        args += ["--randomize", "1", "--seed", str(seed)]
    if metrics:
        args.append("--metrics")
    p = subprocess.run(args + [src, dst], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("color-figures: %s: %s" % (" ".join(args), p.stderr.strip()))
    got = {}
    for line in p.stdout.splitlines():
        key, _, val = line.partition(": ")
        if key in ("bias", "grain", "overlap"):
            got[key] = float(val.split()[0]) if val.split()[0] != "n/a" else float("nan")
    return got


# ------------------------------------------------------------- drawing

FONT = {
    "0": [" ### ", "#   #", "#  ##", "# # #", "##  #", "#   #", " ### "],
    "1": ["  #  ", " ##  ", "  #  ", "  #  ", "  #  ", "  #  ", " ### "],
    "2": [" ### ", "#   #", "    #", "   # ", "  #  ", " #   ", "#####"],
    "3": ["#####", "   # ", "  #  ", "   # ", "    #", "#   #", " ### "],
    "4": ["   # ", "  ## ", " # # ", "#  # ", "#####", "   # ", "   # "],
    "5": ["#####", "#    ", "#### ", "    #", "    #", "#   #", " ### "],
    "6": ["  ## ", " #   ", "#    ", "#### ", "#   #", "#   #", " ### "],
    "7": ["#####", "    #", "   # ", "  #  ", " #   ", " #   ", " #   "],
    "8": [" ### ", "#   #", "#   #", " ### ", "#   #", "#   #", " ### "],
    "9": [" ### ", "#   #", "#   #", " ####", "    #", "   # ", " ##  "],
    ".": ["     ", "     ", "     ", "     ", "     ", " ##  ", " ##  "],
    "%": ["##   ", "##  #", "   # ", "  #  ", " #   ", "#  ##", "   ##"],
    "(": ["   # ", "  #  ", " #   ", " #   ", " #   ", "  #  ", "   # "],
    ")": [" #   ", "  #  ", "   # ", "   # ", "   # ", "  #  ", " #   "],
    "-": ["     ", "     ", "     ", "#####", "     ", "     ", "     "],
    ",": ["     ", "     ", "     ", "     ", " ##  ", "  #  ", " #   "],
    " ": ["     "] * 7,
    "B": ["#### ", "#   #", "#   #", "#### ", "#   #", "#   #", "#### "],
    "G": [" ### ", "#   #", "#    ", "# ###", "#   #", "#   #", " ####"],
    "O": [" ### ", "#   #", "#   #", "#   #", "#   #", "#   #", " ### "],
    "a": ["     ", "     ", " ### ", "    #", " ####", "#   #", " ####"],
    "b": ["#    ", "#    ", "# ## ", "##  #", "#   #", "#   #", "#### "],
    "d": ["    #", "    #", " ## #", "#  ##", "#   #", "#   #", " ####"],
    "e": ["     ", "     ", " ### ", "#   #", "#####", "#    ", " ### "],
    "f": ["  ## ", " #   ", "#### ", " #   ", " #   ", " #   ", " #   "],
    "g": ["     ", " ####", "#   #", "#   #", " ####", "    #", " ### "],
    "h": ["#    ", "#    ", "# ## ", "##  #", "#   #", "#   #", "#   #"],
    "i": ["  #  ", "     ", " ##  ", "  #  ", "  #  ", "  #  ", " ### "],
    "l": [" ##  ", "  #  ", "  #  ", "  #  ", "  #  ", "  #  ", " ### "],
    "m": ["     ", "     ", "## # ", "# # #", "# # #", "#   #", "#   #"],
    "n": ["     ", "     ", "# ## ", "##  #", "#   #", "#   #", "#   #"],
    "o": ["     ", "     ", " ### ", "#   #", "#   #", "#   #", " ### "],
    "p": ["     ", "     ", "#### ", "#   #", "#### ", "#    ", "#    "],
    "r": ["     ", "     ", "# ## ", "##  #", "#    ", "#    ", "#    "],
    "s": ["     ", "     ", " ####", "#    ", " ### ", "    #", "#### "],
    "t": [" #   ", " #   ", "###  ", " #   ", " #   ", " #  #", "  ## "],
    "u": ["     ", "     ", "#   #", "#   #", "#   #", "#  ##", " ## #"],
    "v": ["     ", "     ", "#   #", "#   #", "#   #", " # # ", "  #  "],
    "w": ["     ", "     ", "#   #", "#   #", "# # #", "# # #", " # # "],
    "x": ["     ", "     ", "#   #", " # # ", "  #  ", " # # ", "#   #"],
    "y": ["     ", "     ", "#   #", "#   #", " ####", "    #", " ### "],
    "z": ["     ", "     ", "#####", "   # ", "  #  ", " #   ", "#####"],
}


class Canvas:
    """Palette-indexed pixels."""

    def __init__(self, w, h, bg=0):
        self.w, self.h = w, h
        self.px = [bg] * (w * h)

    def set(self, x, y, c):
        if 0 <= x < self.w and 0 <= y < self.h:
            self.px[y * self.w + x] = c

    def rect(self, x0, y0, x1, y1, c):
        for y in range(y0, y1 + 1):
            for x in range(x0, x1 + 1):
                self.set(x, y, c)

    def line(self, x0, y0, x1, y1, c, thick=1):
        dx, dy = abs(x1 - x0), -abs(y1 - y0)
        sx, sy = (1 if x0 < x1 else -1), (1 if y0 < y1 else -1)
        err = dx + dy
        while True:
            self.rect(x0 - thick // 2, y0 - thick // 2, x0 + (thick - 1) // 2, y0 + (thick - 1) // 2, c)
            if x0 == x1 and y0 == y1:
                return
            e2 = 2 * err
            if e2 >= dy:
                err += dy
                x0 += sx
            if e2 <= dx:
                err += dx
                y0 += sy

    def text(self, x, y, s, c, align="left"):
        width = 6 * len(s) - 1
        if align == "right":
            x -= width
        elif align == "center":
            x -= width // 2
        for k, ch in enumerate(s):
            for gy, row in enumerate(FONT[ch]):
                for gx, bit in enumerate(row):
                    if bit == "#":
                        self.set(x + 6 * k + gx, y + gy, c)


WHITE, BLACK, GRAY, LIGHT, RED, BLUE, GREEN = range(7)
PALETTE = [(255, 255, 255), (0, 0, 0), (128, 128, 128), (225, 225, 225), (200, 30, 30), (30, 60, 200),
           (20, 140, 60)]


def plot(path, weights, rows):
    """Two panels like the paper's Figure 6: (a) without, (b) with
    randomization; Bias and Grain in percent against the weight."""
    top = max(max(r["bias"], r["grain"]) for rr in rows for r in rr)
    ymax = 5 * int(top / 5 + 1)
    pw, ph, ml, mt, gap = 300, 200, 40, 24, 30
    cv = Canvas(ml + 2 * pw + gap + 10, mt + ph + 40)
    for panel, (title, data) in enumerate(zip(("(a) plain filter", "(b) randomized filter"), rows)):
        x0, y0 = ml + panel * (pw + gap), mt

        def at(w, v):
            return (x0 + round(w / 0.5 * pw), y0 + ph - round(v / ymax * ph))

        for t in range(0, ymax + 1, 5):
            _, y = at(0, t)
            cv.line(x0, y, x0 + pw, y, LIGHT)
            cv.text(x0 - 4, y - 3, "%d" % t, BLACK, "right")
        for k in range(6):
            x, _ = at(k / 10, 0)
            cv.line(x, y0 + ph, x, y0 + ph + 3, BLACK)
            cv.text(x, y0 + ph + 6, "0" if k == 0 else "0.%d" % k, BLACK, "center")
        cv.line(x0, y0, x0, y0 + ph, BLACK)
        cv.line(x0, y0 + ph, x0 + pw, y0 + ph, BLACK)
        cv.text(x0 + pw // 2, 6, title, BLACK, "center")
        cv.text(x0 + pw // 2, y0 + ph + 18, "inter-plane weight", BLACK, "center")
        for key, colour in (("bias", RED), ("grain", BLUE)):
            pts = [at(w, r[key]) for w, r in zip(weights, data)]
            for a, b in zip(pts, pts[1:]):
                cv.line(a[0], a[1], b[0], b[1], colour, 2)
            for x, y in pts:
                cv.rect(x - 2, y - 2, x + 2, y + 2, colour)
        cv.rect(x0 + pw - 70, y0 + 8, x0 + pw - 60, y0 + 10, RED)
        cv.text(x0 + pw - 55, y0 + 6, "Bias", RED)
        cv.rect(x0 + pw - 70, y0 + 20, x0 + pw - 60, y0 + 22, BLUE)
        cv.text(x0 + pw - 55, y0 + 18, "Grain", BLUE)
    cv.text(4, 6, "%", BLACK)
    pnm.write_png_palette(path, cv.w, cv.h, PALETTE, cv.px, 4)


def ramps(path, exe, tmp, seed):
    """The ramps of Figures 4 and 5 at weights 0, 0.3, 0.5, without and
    with randomization, 2x enlarged, a label left of each strip."""
    strips = []
    for lo in (0.0, 0.25):
        src = os.path.join(tmp, "ramp%g.ppm" % lo)
        ramp(src, lo)
        for weight in (0.0, 0.3, 0.5):
            for rnd in (False, True):
                dst = os.path.join(tmp, "r.ppm")
                halftone(exe, src, dst, weight, rnd, seed)
                img = pnm.read_pnm(dst)
                label = "%g-%g %s %s" % (lo, lo + 0.25, "w %g" % weight, "rand" if rnd else "")
                strips.append((label, img))
    # 3 bits a pixel (R, G, B on or off) -> the 8 palette entries after the plot colours
    pal = PALETTE + [(255 * (i >> 2 & 1), 255 * (i >> 1 & 1), 255 * (i & 1)) for i in range(8)]
    ml, sh, gap = 124, 2 * H, 4
    cv = Canvas(ml + 2 * W, len(strips) * (sh + gap) + 12)
    for k, (label, img) in enumerate(strips):
        y0 = 12 + k * (sh + gap)
        cv.text(4, y0 + sh // 2 - 3, label.replace("rand", "rnd"), BLACK)
        s = img.samples
        for y in range(H):
            for x in range(W):
                i = 3 * (y * W + x)
                c = len(PALETTE) + ((s[i] > 0) << 2 | (s[i + 1] > 0) << 1 | (s[i + 2] > 0))
                for dy in range(2):
                    row = (y0 + 2 * y + dy) * cv.w + ml + 2 * x
                    cv.px[row] = cv.px[row + 1] = c
    pnm.write_png_palette(path, cv.w, cv.h, pal, cv.px, 4)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--halftone", required=True, help="the built halftone CLI")
    ap.add_argument("--step", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--plot", help="write the Figure 6 plot here (PNG)")
    ap.add_argument("--ramps", help="write the Figure 4/5 ramps here (PNG)")
    a = ap.parse_args()
    exe = os.path.abspath(a.halftone)
    n = int(round(0.5 / a.step))
    weights = [round(k * a.step, 4) for k in range(n + 1)]
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = os.path.join(tmp, "ramp.ppm"), os.path.join(tmp, "out.ppm")
        ramp(src, 0.0)
        rows = [[halftone(exe, src, dst, w, rnd, a.seed, metrics=True) for w in weights] for rnd in (False, True)]
        print("| weight | Grain | Bias | overlap | Grain, randomized | Bias, randomized | overlap, randomized "
              "| paper Grain |")
        print("|---|---|---|---|---|---|---|---|")
        for k, w in enumerate(weights):
            p, r = rows[0][k], rows[1][k]
            print("| %g | %.2f %% | %.2f %% | %.3f | %.2f %% | %.2f %% | %.3f | %s |" % (
                w, p["grain"], p["bias"], p["overlap"], r["grain"], r["bias"], r["overlap"],
                PAPER_GRAIN.get(w, "—")))
        if a.plot:
            plot(a.plot, weights, rows)
        if a.ramps:
            ramps(a.ramps, exe, tmp, a.seed)


if __name__ == "__main__":
    main()
