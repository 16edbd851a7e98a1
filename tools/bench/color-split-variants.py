#!/usr/bin/env python3
"""Other ways to split a plane's error in plane-dependent error diffusion,
tried on the paper's Figure 6 ramp (BENCHMARKS.md, "Plane-dependent
colour"): a floating-point model of core/color/pd.c's raster scan with
Floyd-Steinberg, RGB, two levels, printing Grain and Bias (docs/color.md
"Measuring it") for

  split     ours: f = F e forward, b = B e back, the filter takes e - f - b
  cyclic    the same, with the last plane's forward feed going to plane 0
            of the next pixel and plane 0's backward feed to the last
            plane, so that every plane has both feeds
  negative  feeds only where a dot was placed (e < 0)
  additive  the feeds on top of the whole error through the filter

and the best (F, B) pairs of the split. The model agrees with `halftone
--metrics` to a few tenths of a percent (float against fixed point).

With --orders it tries other orders instead, with the split kept:

  rotate    the planes of a pixel in rotated order (R G B, G B R, B R G
            by (x + y) mod 3), so that no plane is always first or last
  pinwheel  the paper's kind of order (its ref. 5): the image cut into
            B x B blocks coloured as a checkerboard, the first colour's
            blocks scanned in a spiral from the centre out, then the
            other's from the edge in, "next pixel" the next on the
            spiral; compared with the raster scan under one generic
            filter (the error shared by the unvisited 8-neighbours, 2 for
            a side and 1 for a corner), since Floyd-Steinberg's taps only
            fit the raster scan"""
import math
import sys

W, H = 512, 32
FS = [(1, 0, 7 / 16), (-1, 1, 3 / 16), (0, 1, 5 / 16), (1, 1, 1 / 16)]


def ramp(x):
    return 0.25 * (x + 0.5) / W


def run(F, B, mode="split", P=3):
    err = [[[0.0] * (W + 2) for _ in range(H + 2)] for _ in range(P)]
    out = [[[0] * W for _ in range(H)] for _ in range(P)]
    cyclic = mode == "cyclic"
    for y in range(H):
        back = [0.0] * P
        for x in range(W):
            last = x == W - 1
            fwd, nback = 0.0, [0.0] * P
            for j in range(P):
                v = ramp(x) + err[j][y][x] + fwd + back[j]
                q = 1 if v >= 0.5 else 0
                out[j][y][x] = q
                e = v - q
                f_w, b_w = (0.0, 0.0) if mode == "negative" and e > 0 else (F, B)
                f = f_w * e if (j < P - 1 or cyclic) else 0.0
                b = 0.0 if last else (b_w * e if (j > 0 or cyclic) else 0.0)
                nback[j - 1 if j > 0 else P - 1] = b if (j > 0 or cyclic) else 0.0
                ei = e if mode == "additive" else e - f - b
                fwd = f
                for dx, dy, wt in FS:
                    tx, ty = x + dx, y + dy
                    if 0 <= tx < W and ty < H:
                        err[j][ty][tx] += wt * ei
            back = nback
            if cyclic and not last:
                back[0] += fwd
    return metrics(out, P)


def metrics(out, P):
    """Grain and Bias of docs/color.md in percent."""
    n = W * H
    grain = sum(1 for y in range(H) for x in range(W) if sum(out[j][y][x] for j in range(P)) >= 2) / n
    want = sum(ramp(x) for x in range(W)) * H
    bias = sum(abs(sum(map(sum, out[j])) - want) for j in range(P)) / n
    return 100 * grain, 100 * bias


ROT = [(0, 1, 2), (1, 2, 0), (2, 0, 1)]


def run_rotated(F, B):
    """The split with the planes of pixel (x, y) in order ROT[(x + y) % 3]:
    the forward feed goes to the next plane in that order, the backward
    feed to the plane before it in the next pixel's place of that order."""
    P = 3
    err = [[[0.0] * (W + 2) for _ in range(H + 2)] for _ in range(P)]
    out = [[[0] * W for _ in range(H)] for _ in range(P)]
    for y in range(H):
        back = [0.0] * P
        for x in range(W):
            order, fwd, nback = ROT[(x + y) % 3], 0.0, [0.0] * P
            for k, j in enumerate(order):
                v = ramp(x) + err[j][y][x] + fwd + back[j]
                q = 1 if v >= 0.5 else 0
                out[j][y][x] = q
                e = v - q
                f = F * e if k < P - 1 else 0.0
                b = B * e if (k > 0 and x < W - 1) else 0.0
                if k > 0:
                    nback[order[k - 1]] = b
                fwd = f
                for dx, dy, wt in FS:
                    tx, ty = x + dx, y + dy
                    if 0 <= tx < W and ty < H:
                        err[j][ty][tx] += wt * (e - f - b)
            back = nback
    return metrics(out, P)


def pinwheel_paths(bs):
    """Block paths of the pinwheel-like order (see the module's text)."""
    paths = []
    for phase in (0, 1):
        for by in range((H + bs - 1) // bs):
            for bx in range((W + bs - 1) // bs):
                if (bx + by) % 2 != phase:
                    continue
                cx, cy = bx * bs + (bs - 1) / 2, by * bs + (bs - 1) / 2
                cells = sorted(((x, y) for y in range(by * bs, min(H, by * bs + bs))
                                for x in range(bx * bs, min(W, bx * bs + bs))),
                               key=lambda c: (max(abs(c[0] - cx), abs(c[1] - cy)),
                                              math.atan2(c[1] - cy, c[0] - cx)))
                paths.append(cells[::-1] if phase else cells)
    return paths


def run_paths(F, B, paths, P=3):
    """The split along the given paths (each a list of pixels; the
    backward feed stays on a path) with the generic 8-neighbour filter."""
    val = [[[ramp(x) for x in range(W)] for _ in range(H)] for _ in range(P)]
    seen = [[False] * W for _ in range(H)]
    out = [[[0] * W for _ in range(H)] for _ in range(P)]
    for path in paths:
        back = [0.0] * P
        for i, (x, y) in enumerate(path):
            seen[y][x] = True
            nb = [(x + dx, y + dy, 2.0 if dx == 0 or dy == 0 else 1.0)
                  for dx in (-1, 0, 1) for dy in (-1, 0, 1)
                  if 0 <= x + dx < W and 0 <= y + dy < H and not seen[y + dy][x + dx]]
            tot = sum(w for _, _, w in nb)
            fwd, nback = 0.0, [0.0] * P
            for j in range(P):
                v = val[j][y][x] + fwd + back[j]
                q = 1 if v >= 0.5 else 0
                out[j][y][x] = q
                e = v - q
                f = F * e if j < P - 1 else 0.0
                b = B * e if (j > 0 and i < len(path) - 1) else 0.0
                if j > 0:
                    nback[j - 1] = b
                fwd = f
                for tx, ty, w in nb:
                    val[j][ty][tx] += (e - f - b) * w / tot
            back = nback
    return metrics(out, P)


def orders():
    raster = [[(x, y) for x in range(W)] for y in range(H)]
    for w in (0.0, 0.2, 0.25):
        g, b = run(w, w)
        print("raster, Floyd-Steinberg   weight %.2f: Grain %.2f %%, Bias %.2f %%" % (w, g, b))
        g, b = run_rotated(w, w)
        print("rotate, Floyd-Steinberg   weight %.2f: Grain %.2f %%, Bias %.2f %%" % (w, g, b))
        for name, paths in (("raster", raster), ("pinwheel 10", pinwheel_paths(10)),
                            ("pinwheel 16", pinwheel_paths(16))):
            g, b = run_paths(w, w, paths)
            print("%-11s generic filter weight %.2f: Grain %.2f %%, Bias %.2f %%" % (name, w, g, b))


def main():
    if "--orders" in sys.argv[1:]:
        orders()
        return
    for mode in ("split", "cyclic", "negative", "additive"):
        for w in (0.1, 0.2, 0.3):
            g, b = run(w, w, mode)
            print("%-8s weight %.1f: Grain %.2f %%, Bias %.2f %%" % (mode, w, g, b))
    pairs = sorted((run(F / 10, B / 10) + (F / 10, B / 10)) for F in range(5) for B in range(5))
    for g, b, F, B in pairs[:6]:
        print("split F %.1f B %.1f: Grain %.2f %%, Bias %.2f %%" % (F, B, g, b))


if __name__ == "__main__":
    main()
