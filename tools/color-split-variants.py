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
--metrics` to a few tenths of a percent (float against fixed point)."""
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
    n = W * H
    grain = sum(1 for y in range(H) for x in range(W) if sum(out[j][y][x] for j in range(P)) >= 2) / n
    want = sum(ramp(x) for x in range(W)) * H
    bias = sum(abs(sum(map(sum, out[j])) - want) for j in range(P)) / n
    return 100 * grain, 100 * bias


def main():
    for mode in ("split", "cyclic", "negative", "additive"):
        for w in (0.1, 0.2, 0.3):
            g, b = run(w, w, mode)
            print("%-8s weight %.1f: Grain %.2f %%, Bias %.2f %%" % (mode, w, g, b))
    pairs = sorted((run(F / 10, B / 10) + (F / 10, B / 10)) for F in range(5) for B in range(5))
    for g, b, F, B in pairs[:6]:
        print("split F %.1f B %.1f: Grain %.2f %%, Bias %.2f %%" % (F, B, g, b))


if __name__ == "__main__":
    main()
