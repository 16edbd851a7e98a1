#!/usr/bin/env python3
"""Plane-dependent colour on the `halftone` command line (suite cli).
Python stdlib only. The library's exactness is tested in
tests/core/test-color.c; this checks what the options do.

    test_color.py HALFTONE CASE

Cases:
  weights0     --interplane 0 gives --color per-channel's file, byte for byte
  grain        on the paper's ramp (gray 0..0.25, 512 x 32) --interplane 0.2
               cuts the pixels where colorants overlap (the paper's Grain)
               to under a quarter of per-channel's
  randomize    --randomize 0 ignores --seed; --randomize 1 follows it
  threads      --threads 1, 3 and --variant pd give the same file
  separations  --separations files hold the planes of the output; cmyk's
               RGB rendering follows its ink separations; a CMYK TIFF
  cmyk-alpha   --color cmyk on RGBA (PNG, PAM): the inks, their rendering
               and a CMYK TIFF equal those of the same RGB without alpha,
               with a notice that the alpha is dropped
  errors       out-of-range values and misplaced options: exit 2, one line
  metrics      --metrics prints bias, grain and overlap for plane-dependent,
               per-channel and cmyk output, equal to a computation here on
               the files (cmyk: on the --separations inks and the input
               separated here); none for gray output
"""
import os
import subprocess
import sys
import tempfile

# cases.py one folder up; pnm.py in imageio/, shared with tools/bench/
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "imageio"))
from cases import Fail, check, run_case  # noqa: E402
from pnm import read_pnm, write_png  # noqa: E402


def run(halftone, *args, rc=0):
    p = subprocess.run([halftone] + list(args), capture_output=True, text=True, timeout=120)
    check(p.returncode == rc, "halftone %s: exit %d, want %d; stderr: %s" % (" ".join(args), p.returncode, rc,
                                                                                p.stderr.strip()))
    return p


def ramp(path, lo=0, hi=64, w=512, h=32):
    row = bytearray()
    for x in range(w):
        v = round(lo + x * (hi - lo) / (w - 1))
        row += bytes([v, v, v])
    with open(path, "wb") as f:
        f.write(b"P6\n%d %d\n255\n" % (w, h))
        f.write(bytes(row) * h)


def noise(path, w=97, h=61):
    s = 12345
    data = bytearray()
    for i in range(w * h * 3):
        s = (s * 1103515245 + 12345) & 0x7FFFFFFF
        data.append(((i // 3) % w * 255 // w + (s >> 24)) & 255)
    with open(path, "wb") as f:
        f.write(b"P6\n%d %d\n255\n" % (w, h))
        f.write(bytes(data))


def grain(path):
    img = read_pnm(path)
    s = img.samples
    n = img.width * img.height
    return sum(1 for i in range(n) if (s[3 * i] > 0) + (s[3 * i + 1] > 0) + (s[3 * i + 2] > 0) >= 2) / n


def same(a, b):
    with open(a, "rb") as f, open(b, "rb") as g:
        return f.read() == g.read()


def case_weights0(ht):
    noise("in.ppm")
    run(ht, "--color", "per-channel", "--levels", "2,3,2", "in.ppm", "pc.ppm")
    run(ht, "--color", "plane-dependent", "--interplane", "0", "--levels", "2,3,2", "in.ppm", "pd.ppm")
    check(same("pc.ppm", "pd.ppm"), "--interplane 0 differs from --color per-channel")
    run(ht, "--color", "plane-dependent", "--interplane", "0.3,0.1", "in.ppm", "pd3.ppm")
    check(not same("pc.ppm", "pd3.ppm"), "--interplane 0.3,0.1 changes nothing")


def case_grain(ht):
    ramp("ramp.ppm")
    run(ht, "--color", "per-channel", "ramp.ppm", "pc.ppm")
    run(ht, "--color", "plane-dependent", "--interplane", "0.2", "ramp.ppm", "pd.ppm")
    g0, g2 = grain("pc.ppm"), grain("pd.ppm")
    check(g0 > 0.05, "per-channel grain %.3f: the ramp should overlap its planes" % g0)
    check(g2 < g0 / 4, "grain %.3f with --interplane 0.2, %.3f per-channel" % (g2, g0))


def case_randomize(ht):
    noise("in.ppm")
    base = ["--color", "plane-dependent", "--interplane", "0.2"]
    run(ht, *base, "in.ppm", "a.ppm")
    run(ht, *base, "--randomize", "0", "--seed", "99", "in.ppm", "b.ppm")
    check(same("a.ppm", "b.ppm"), "--randomize 0 depends on --seed")
    run(ht, *base, "--randomize", "1", "--seed", "1", "in.ppm", "c.ppm")
    run(ht, *base, "--randomize", "1", "--seed", "2", "in.ppm", "d.ppm")
    run(ht, *base, "--randomize", "1", "--seed", "1", "in.ppm", "e.ppm")
    check(not same("a.ppm", "c.ppm"), "--randomize 1 changes nothing")
    check(not same("c.ppm", "d.ppm"), "--randomize 1 ignores --seed")
    check(same("c.ppm", "e.ppm"), "the same seed gives another image")


def case_threads(ht):
    noise("in.ppm", 301, 77)
    base = ["--color", "cmyk", "--interplane", "0.25", "--randomize", "0.5", "--seed", "5"]
    run(ht, *base, "--threads", "1", "in.ppm", "t1.ppm")
    run(ht, *base, "--threads", "3", "in.ppm", "t3.ppm")
    run(ht, *base, "--variant", "pd", "--backend", "cpu", "in.ppm", "v.ppm")
    check(same("t1.ppm", "t3.ppm") and same("t1.ppm", "v.ppm"), "threads or variants differ")


def case_separations(ht):
    noise("in.ppm")
    run(ht, "--color", "plane-dependent", "--interplane", "0.2", "--levels", "2,3,2", "--separations", "s",
        "in.ppm", "out.ppm")
    out = read_pnm("out.ppm")
    n = out.width * out.height
    for p, name in enumerate("rgb"):
        path = "s-%s.%s" % (name, "pgm" if p == 1 else "pbm")
        check(os.path.exists(path), "no %s" % path)
        sep = read_pnm(path)
        for i in range(n):
            v = out.samples[3 * i + p]
            want = v if p == 1 else (1 if v else 0)  # PBM reads 1 = white
            if sep.samples[i] != want:
                raise Fail("%s pixel %d: %d, the output's plane has %d" % (path, i, sep.samples[i], v))
    run(ht, "--color", "cmyk", "--black", "0.5", "--interplane", "0.2", "--separations", "k", "in.ppm", "cm.ppm")
    rgb = read_pnm("cm.ppm").samples
    inks = [read_pnm("k-%s.pbm" % c).samples for c in "cmyk"]
    for i in range(n):
        for c in range(3):
            ink = (inks[c][i] == 0) or (inks[3][i] == 0)  # PBM 0 = black = ink
            if rgb[3 * i + c] != (0 if ink else 255):
                raise Fail("cmyk rendering pixel %d channel %d: %d, inks say %s" % (i, c, rgb[3 * i + c], ink))
    p = subprocess.run([ht, "--color", "cmyk", "in.ppm", "cm.tif"], capture_output=True, text=True)
    if p.returncode == 0:
        with open("cm.tif", "rb") as f:
            head = f.read(4)
        check(head in (b"II*\x00", b"MM\x00*"), "cm.tif is no TIFF")
    else:
        check("TIFF" in p.stderr or "tif" in p.stderr, "cm.tif: %s" % p.stderr.strip())


def case_cmyk_alpha(ht):
    noise("in.ppm")
    rgb = read_pnm("in.ppm")
    w, h = rgb.width, rgb.height
    rgba = bytearray()
    for i in range(w * h):
        rgba += bytes(rgb.samples[3 * i:3 * i + 3]) + bytes([(i * 37) & 255])
    write_png("in.png", w, h, 4, 8, rgba)
    with open("in.pam", "wb") as f:
        f.write(b"P7\nWIDTH %d\nHEIGHT %d\nDEPTH 4\nMAXVAL 255\nTUPLTYPE RGB_ALPHA\nENDHDR\n" % (w, h))
        f.write(bytes(rgba))
    opts = ["--color", "cmyk", "--black", "0.5", "--interplane", "0.2"]
    run(ht, *opts, "--separations", "want", "in.ppm", "want.ppm")
    for src in ("in.png", "in.pam"):
        p = run(ht, *opts, "--separations", "got", src, "got.ppm")
        check("--color cmyk drops the input's alpha" in p.stderr, "%s: no notice: %s" % (src, p.stderr.strip()))
        check(p.stderr.count("alpha") == 1, "%s: alpha named more than once: %s" % (src, p.stderr.strip()))
        check(same("got.ppm", "want.ppm"), "%s: the cmyk rendering differs from the RGB input's" % src)
        for c in "cmyk":
            check(same("got-%s.pbm" % c, "want-%s.pbm" % c), "%s: plate %s differs from the RGB input's" % (src, c))
    p = subprocess.run([ht] + opts + ["in.ppm", "want.tif"], capture_output=True, text=True)
    if p.returncode == 0:  # a build with libtiff: the CMYK TIFF itself
        run(ht, *opts, "in.png", "got.tif")
        check(same("got.tif", "want.tif"), "in.png: the CMYK TIFF differs from the RGB input's")


def case_errors(ht):
    noise("in.ppm")
    gray = "in.pgm"
    with open(gray, "wb") as f:
        f.write(b"P5\n4 4\n255\n" + bytes(range(16)))
    for args, words in [
        (["--color", "plane-dependent", "--interplane", "1.5"], "--interplane"),
        (["--color", "plane-dependent", "--interplane", "0.2,x"], "--interplane"),
        (["--color", "plane-dependent", "--interplane", "0.7,0.7"], "add up to more than 1"),
        (["--color", "plane-dependent", "--randomize", "2"], "--randomize"),
        (["--color", "cmyk", "--black", "-1"], "--black"),
        (["--color", "per-channel", "--interplane", "0.2"], "plane-dependent or cmyk"),
        (["--randomize", "0.5"], "plane-dependent or cmyk"),
        (["--separations", "x"], "colour mode"),
        (["--color", "plane-dependent", "--algorithm", "dbs"], "per-channel"),
    ]:
        p = run(ht, *args, "in.ppm", "out.ppm", rc=2)
        check(words in p.stderr, "%s: stderr '%s' does not say '%s'" % (args, p.stderr.strip(), words))
        check(p.stderr.count("\n") == 1, "%s: more than one line: %s" % (args, p.stderr))
        check(not os.path.exists("out.ppm"), "%s: out.ppm written" % args)
    p = run(ht, "--color", "cmyk", gray, "out.ppm", rc=2)
    check("separates RGB" in p.stderr, "cmyk of gray: %s" % p.stderr.strip())
    check(not os.path.exists("out.ppm"), "cmyk of gray: out.ppm written")


def least_overlap(p):
    """The least chance of two or more colorants present with chances p
    (docs/color.md): the smallest t with sum min(p_i, t) - t >= sum p - 1,
    by bisection, allowing for rounding where the sides meet on a flat."""
    s = sum(p)
    if s <= 1 + 1e-12:
        return 0.0
    lo, hi = 0.0, 1.0
    for _ in range(60):
        t = (lo + hi) / 2
        if sum(min(x, t) for x in p) - t >= s - 1 - 1e-12:
            hi = t
        else:
            lo = t
    return hi


def independent_overlap(p):
    none = 1.0
    one = 0.0
    for x in p:
        one = one * (1 - x) + none * x
        none *= 1 - x
    return 1 - none - one


def color_metrics(amounts, levels_out, levels):
    """Bias, grain, overlap (percent, percent, ratio) of pixels given as
    lists of input amounts (0..1) and output level indices."""
    n = len(amounts)
    planes = len(levels)
    bias = sum(abs(sum(q[c] for q in levels_out) / (levels[c] - 1) - sum(a[c] for a in amounts))
               for c in range(planes)) / n
    grain = sum(1 for q in levels_out if sum(1 for v in q if v > 0) >= 2) / n
    cache = {}
    ind = least = 0.0
    for a in amounts:
        key = tuple(a)
        if key not in cache:
            p = [min(1.0, a[c] * (levels[c] - 1)) for c in range(planes)]
            cache[key] = (independent_overlap(p), least_overlap(p))
        ind += cache[key][0]
        least += cache[key][1]
    ind /= n
    least /= n
    return 100 * bias, 100 * grain, (grain - least) / (ind - least)


def printed_metrics(stdout):
    got = {}
    for line in stdout.splitlines():
        key, _, val = line.partition(": ")
        if key in ("bias", "grain", "overlap"):
            got[key] = float(val.split()[0])
    return got


def case_metrics(ht):
    ramp("ramp.ppm")
    noise("in.ppm")
    for img, args in [("ramp.ppm", ["--color", "plane-dependent", "--interplane", "0.2"]),
                      ("ramp.ppm", ["--color", "per-channel"]),
                      ("in.ppm", ["--color", "plane-dependent", "--interplane", "0.3,0.1", "--levels", "2,3,2"])]:
        p = run(ht, *args, "--metrics", img, "out.ppm")
        got = printed_metrics(p.stdout)
        check(set(got) == {"bias", "grain", "overlap"}, "%s: --metrics printed %s" % (args, p.stdout.strip()))
        check("mean tone error" in p.stdout, "%s: no tone error: %s" % (args, p.stdout.strip()))
        inp, out = read_pnm(img), read_pnm("out.ppm")
        n = inp.width * inp.height
        levels = [2, 3, 2] if "--levels" in args else [2, 2, 2]
        amounts = [[inp.samples[3 * i + c] * 257 / 65535 for c in range(3)] for i in range(n)]
        lv = [[round(out.samples[3 * i + c] * (levels[c] - 1) / 255) for c in range(3)] for i in range(n)]
        want = color_metrics(amounts, lv, levels)
        for k, w in zip(("bias", "grain", "overlap"), want):
            check(abs(got[k] - w) < 1e-3, "%s: %s printed %.4f, computed here %.4f" % (args, k, got[k], w))
        if args[1] == "per-channel":
            g_pc = got["grain"]
        elif img == "ramp.ppm":
            g_pd = got["grain"]
    check(g_pd < g_pc / 4, "grain %.2f %% with --interplane 0.2, %.2f %% per-channel" % (g_pd, g_pc))
    # cmyk: the inks against the input separated here (docs/color.md)
    p = run(ht, "--color", "cmyk", "--black", "0.5", "--interplane", "0.2", "--separations", "k", "--metrics",
            "in.ppm", "cm.ppm")
    got = printed_metrics(p.stdout)
    check(set(got) == {"bias", "grain", "overlap"}, "cmyk: --metrics printed %s" % p.stdout.strip())
    inp = read_pnm("in.ppm")
    n = inp.width * inp.height
    inks = [read_pnm("k-%s.pbm" % c).samples for c in "cmyk"]
    kq = int(0.5 * 65536 + 0.5)
    amounts, lv = [], []
    for i in range(n):
        cmy = [65535 - inp.samples[3 * i + c] * 257 for c in range(3)]
        k = (min(cmy) * kq + 32768) >> 16
        amounts.append([(v - k) / 65535 for v in cmy] + [k / 65535])
        lv.append([1 if inks[c][i] == 0 else 0 for c in range(4)])  # PBM 0 = black = ink
    want = color_metrics(amounts, lv, [2, 2, 2, 2])
    for k, w in zip(("bias", "grain", "overlap"), want):
        check(abs(got[k] - w) < 1e-3, "cmyk: %s printed %.4f, computed here %.4f" % (k, got[k], w))
    # gray output: no colour metrics
    p = run(ht, "--metrics", "ramp.ppm", "g.pbm")
    check("grain" not in p.stdout and "mean tone error" in p.stdout, "gray: %s" % p.stdout.strip())


def main():
    if len(sys.argv) != 3:
        print("usage: test_color.py HALFTONE CASE", file=sys.stderr)
        return 2
    ht, case = os.path.abspath(sys.argv[1]), sys.argv[2]
    fn = globals().get("case_" + case.replace("-", "_"))
    if not fn:
        print("unknown case %s" % case, file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as d:
        os.chdir(d)
        return run_case(case, fn, ht)


if __name__ == "__main__":
    sys.exit(main())
