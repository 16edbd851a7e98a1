#!/usr/bin/env python3
"""halftone --write-mask: the blue-noise mask as a 16-bit gray file.

    test_masks.py HALFTONE CASE

Cases: write (16-bit, the size asked, a permutation of the ranks scaled,
the same from a cold and a warm cache, PNG and PGM alike), threshold
(the file thresholded is what --algorithm blue-noise makes of flat grays,
by the method's own rule), errors (one-line refusals, nothing left
behind). Each run gets its own XDG_CACHE_HOME, so that no user cache
answers for the generator.
"""
import os
import subprocess
import sys
import tempfile

# cases.py one folder up; pnm.py in imageio/, shared with tools/bench/
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "imageio"))
from cases import check, run_case  # noqa: E402
from pnm import read_png, read_pnm, write_pnm  # noqa: E402


def run(ht, *args, rc=0, cache="cache"):
    env = dict(os.environ, XDG_CACHE_HOME=os.path.abspath(cache))
    p = subprocess.run([ht] + list(args), capture_output=True, text=True, timeout=120, env=env)
    check(p.returncode == rc, "halftone %s: exit %d, want %d; stderr: %s" % (" ".join(args), p.returncode, rc,
                                                                            p.stderr.strip()))
    return p


def read_mask(path):
    """(side, 16-bit samples) of a written mask; it must be one square
    plane of 16-bit samples."""
    if path.endswith(".png"):
        im = read_png(path)
        check(im.depth == 16 and im.channels == 1, "%s: depth %d, %d channels, want 16-bit gray"
              % (path, im.depth, im.channels))
    else:
        im = read_pnm(path)
        check(im.kind == "P5" and im.maxval == 65535, "%s: %s maxval %d, want P5 maxval 65535"
              % (path, im.kind, im.maxval))
    check(im.width == im.height, "%s: %dx%d is not square" % (path, im.width, im.height))
    return im.width, im.samples


def case_write(ht):
    # 256: the largest whose ranks all have values of their own; 512: ranks share values
    for n, seed in ((64, 3), (16, 0), (256, 9), (512, 2)):
        run(ht, "--write-mask", "m.png", "--noise-size", str(n), "--seed", str(seed), cache="cold")
        side, s = read_mask("m.png")
        check(side == n, "--noise-size %d: the file is %dx%d" % (n, side, side))
        cells = n * n
        # a permutation of the ranks scaled: exactly r * 65535 // (cells - 1)
        # for r = 0 .. cells - 1, distinct up to 256^2
        want = [r * 65535 // (cells - 1) for r in range(cells)]
        check(sorted(s) == want, "size %d: the values are not the ranks 0..%d scaled" % (n, cells - 1))
        check(len(set(s)) == min(cells, 65536), "size %d: %d distinct values" % (n, len(set(s))))
        # the second run reads the cache the first wrote; the PGM holds the same
        kept = os.path.join("cold", "gegl-halftone", "blue-noise-v1-%d-%016x.bin" % (n, seed))
        check(os.path.isfile(kept), "no cache file %s after the first run" % kept)
        run(ht, "--write-mask", "m2.pgm", "--noise-size", str(n), "--seed", str(seed), cache="cold")
        check(read_mask("m2.pgm") == (side, s), "size %d: the cached mask (PGM) differs from the first" % n)
        os.rename("cold", "cold-%d" % n)
    # the seed matters: another seed, another mask
    run(ht, "--write-mask", "a.png", "--noise-size", "64", "--seed", "4")
    run(ht, "--write-mask", "b.png", "--noise-size", "64", "--seed", "3")
    check(read_mask("a.png") != read_mask("b.png"), "seeds 3 and 4 give the same mask")
    # the default size is --noise-size's (128)
    run(ht, "--write-mask", "d.png")
    check(read_mask("d.png")[0] == 128, "default size: %d" % read_mask("d.png")[0])


def white_count(g, cells):
    """How many ranks a flat 8-bit gray g turns white, by blue_noise.c's
    rule at 2 levels in stored space: the input is g * 257 in 0..65535
    (HT_FX_ONE), rank r's threshold is ((2r + 1) * 65535) // (2 cells),
    and a pixel is white where the value passes its threshold."""
    v = g * 257
    return sum(1 for r in range(cells) if (2 * r + 1) * 65535 // (2 * cells) < v)


def case_threshold(ht):
    n, seed, w, h = 64, 5, 150, 100  # wider than the mask: it tiles
    cells = n * n
    run(ht, "--write-mask", "m.pgm", "--noise-size", str(n), "--seed", str(seed))
    _, m = read_mask("m.pgm")
    for g in (1, 13, 64, 128, 200, 254):
        k = white_count(g, cells)
        # the file below the value of rank k is ranks 0..k-1 (the values
        # rise strictly with the rank at this size)
        t = k * 65535 // (cells - 1) if k < cells else 65536
        check(sum(1 for v in m if v < t) == k, "gray %d: %d mask values below %d, want %d" % (g, sum(
            1 for v in m if v < t), t, k))
        write_pnm("flat.pgm", "P5", w, h, 255, [g] * (w * h))
        run(ht, "--algorithm", "blue-noise", "--noise-size", str(n), "--seed", str(seed), "flat.pgm", "out.pgm")
        out = read_pnm("out.pgm")
        want = [255 if m[(y % n) * n + x % n] < t else 0 for y in range(h) for x in range(w)]
        bad = sum(1 for a, b in zip(out.samples, want) if a != b)
        check(bad == 0, "gray %d (%d of %d ranks white): %d pixels differ from the mask thresholded at %d"
              % (g, k, cells, bad, t))


def one_line(p, what):
    check(p.stderr.count("\n") == 1 and p.stderr.startswith("halftone: "),
          "%s: want one line 'halftone: ...', got %r" % (what, p.stderr))


def case_errors(ht):
    usage = [
        (["--write-mask", "m.png", "in.pgm"], "INPUT or OUTPUT"),
        (["--write-mask", "m.png", "in.pgm", "out.pgm"], "INPUT or OUTPUT"),
        (["--write-mask", "m.pbm"], "16-bit gray"),
        (["--write-mask", "m.ppm"], "16-bit gray"),
        (["--write-mask", "m"], "16-bit gray"),
        (["--write-mask", "m.png", "--algorithm", "bayer"], "blue-noise"),
        (["--write-mask", "m.png", "--levels", "4"], "--levels"),
        (["--write-mask", "m.png", "--metrics"], "--metrics"),
        (["--write-mask", "m.png", "--threads", "2"], "--threads"),
        (["--write-mask", "m.png", "--variant", "wavefront"], "--variant"),
        (["--write-mask", "m.png", "--noise-size", "100"], "noise-size"),
        (["--write-mask", ""], "FILE"),
    ]
    for args, word in usage:
        p = run(ht, *args, rc=2)
        one_line(p, " ".join(args))
        check(word in p.stderr, "%s: %r does not name %s" % (" ".join(args), p.stderr, word))
    os.mkdir("folder.png")
    one_line(run(ht, "--write-mask", "folder.png", rc=1), "a folder")
    # an existing read-only file is kept without --force, replaced with it
    write_pnm("ro.pgm", "P5", 2, 2, 255, [1, 2, 3, 4])
    os.chmod("ro.pgm", 0o444)
    # (hti_dest_open looks at the mode bits too, so root is refused as well)
    p = run(ht, "--write-mask", "ro.pgm", "--noise-size", "8", rc=1)
    one_line(p, "read-only")
    check("read-only" in p.stderr, "read-only: %r" % p.stderr)
    check(read_pnm("ro.pgm").samples == [1, 2, 3, 4], "the read-only file was changed")
    run(ht, "--write-mask", "ro.pgm", "--noise-size", "8", "--force")
    check(read_mask("ro.pgm")[0] == 8, "--force did not replace the read-only file")
    check(oct(os.stat("ro.pgm").st_mode & 0o777) == oct(0o444), "the replaced file lost its mode")
    # nothing else left behind: no mask of a refused run, no temporary file
    left = sorted(f for f in os.listdir(".") if f != "cache")
    check(left == ["folder.png", "ro.pgm"], "left behind: %s" % left)


def main():
    if len(sys.argv) != 3:
        print("usage: test_masks.py HALFTONE CASE", file=sys.stderr)
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
