#!/usr/bin/env python3
"""The `gegl` command line with halftone:dither gives exactly the pixels
the `halftone` CLI gives for the same parameters, on a real photograph.

Usage: gegl-vs-cli.py GEGL HALFTONE PHOTO WORKDIR
Exit 77 (skip) when the gegl program or the halftone CLI is missing.
Python standard library only (the PNG and PGM readers of imageio/pnm.py).
"""
import os
import shutil
import subprocess
import sys

# pnm.py in imageio/, shared with the other suites and tools/bench/
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'imageio'))
from pnm import normalized, read_image, write_png  # noqa: E402


# (gegl properties, halftone CLI options, CLI output extension)
CASES = [
    ([], [], '.pgm'),
    (['algorithm=jarvis-judice-ninke'], ['--algorithm', 'jarvis-judice-ninke'], '.pgm'),
    (['algorithm=stucki', 'levels=4'], ['--algorithm', 'stucki', '--levels', '4'], '.pgm'),
    (['algorithm=atkinson', 'serpentine=true'], ['--algorithm', 'atkinson', '--serpentine'], '.pgm'),
    (['algorithm=sierra-lite', 'color-mode=per-channel', 'levels=3'],
     ['--algorithm', 'sierra-lite', '--color', 'per-channel', '--levels', '3'], '.png'),
    (['algorithm=custom', 'coefficients=- - * 7 5; 3 5 7 5 3; 1 3 5 3 1 / 48', 'threads=2'],
     ['--algorithm', 'custom', '--coefficients', '- - * 7 5; 3 5 7 5 3; 1 3 5 3 1 / 48', '--threads', '2'],
     '.pgm'),
    # plane-dependent colour (docs/color.md); cmyk: the op's RGB rendering
    # of the inks is the CLI's, so both separate RGB the same way
    (['color-mode=plane-dependent', 'interplane-forward=0.2', 'interplane-backward=0.3', 'randomize=0.5',
      'seed=7'],
     ['--color', 'plane-dependent', '--interplane', '0.2,0.3', '--randomize', '0.5', '--seed', '7'], '.ppm'),
    (['color-mode=cmyk', 'interplane-forward=0.2', 'interplane-backward=0.2', 'black=0.6'],
     ['--color', 'cmyk', '--interplane', '0.2', '--black', '0.6'], '.ppm'),
    # the search methods (docs/search.md); small windows keep the CPU time
    # of les and pes to seconds
    (['algorithm=dbs'], ['--algorithm', 'dbs'], '.pgm'),
    (['algorithm=les', 'window=2', 'init=random', 'seed=5'],
     ['--algorithm', 'les', '--window', '2', '--init', 'random', '--seed', '5'], '.pgm'),
    (['algorithm=pes', 'window=2', 'sigma=0.8', 'max-rounds=3', 'color-mode=per-channel'],
     ['--algorithm', 'pes', '--window', '2', '--sigma', '0.8', '--max-rounds', '3', '--color', 'per-channel'],
     '.png'),
    (['algorithm=dbs', 'schedule=raster', 'threads=1'],
     ['--algorithm', 'dbs', '--schedule', 'raster', '--threads', '1'], '.pgm'),
]

# The op in bands of 7 rows (HT_GEGL_BAND_ROWS; 300 rows are 42 bands and
# 6 rows) against the CLI's one run: Jarvis-Judice-Ninke carries 2 rows
# from band to band. On the colour photograph and on a gray one.
BAND_CASES = [
    (gray, ['algorithm=jarvis-judice-ninke', f'levels={levels}'],
     ['--algorithm', 'jarvis-judice-ninke', '--levels', str(levels)], '.pgm')
    for gray in (False, True) for levels in (2, 3)
]


def as_gray(img):
    """The op's output is in its input's format: a luma halftone of a
    colour photograph is colour with equal R, G and B. Those as one gray
    channel (alpha kept), to compare with the CLI's gray file; an image
    whose colours differ is returned as it is."""
    w, h, ch, s = img
    colors = 3 if ch in (3, 4) else ch
    if colors != 3:
        return img
    px = [s[i:i + ch] for i in range(0, len(s), ch)]
    if any(p[0] != p[1] or p[1] != p[2] for p in px):
        return img
    return w, h, ch - 2, [v for p in px for v in (p[0],) + tuple(p[3:])]


def compare(name, gegl, halftone, photo, work, props, opts, ext, env=None):
    """Runs the op through the gegl program and the CLI on `photo`; True
    when they give the same samples."""
    tag = name.replace(' ', '-')
    a = os.path.join(work, f'gegl-{tag}.png')
    b = os.path.join(work, f'cli-{tag}{ext}')
    for p in (a, b):
        if os.path.exists(p):
            os.remove(p)
    r1 = subprocess.run([gegl, photo, '-o', a, '--', 'halftone:dither'] + props,
                        capture_output=True, text=True, env=dict(os.environ, **(env or {})))
    r2 = subprocess.run([halftone] + opts + [photo, b], capture_output=True, text=True)
    if r1.returncode != 0 or not os.path.exists(a):
        print(f'FAIL {name}: gegl failed ({r1.returncode}): {r1.stderr.strip()}')
        return False
    if r2.returncode != 0 or not os.path.exists(b):
        print(f'FAIL {name}: halftone failed ({r2.returncode}): {r2.stderr.strip()}')
        return False
    ga, cb = normalized(read_image(a)), normalized(read_image(b))
    if ga[2] > cb[2]:
        ga = as_gray(ga)
    if ga[:3] != cb[:3]:
        print(f'FAIL {name}: gegl gives {ga[:3]}, halftone gives {cb[:3]} (w, h, channels)')
        return False
    diff = sum(1 for x, y in zip(ga[3], cb[3]) if x != y)
    levels = sorted(set(ga[3]))
    if diff or len(levels) < 2:
        print(f'FAIL {name} {props}: {diff} of {len(ga[3])} samples differ; gegl levels {levels[:8]}')
        return False
    print(f'ok {name} {props}: {ga[0]}x{ga[1]}x{ga[2]} identical, levels {levels}')
    return True


def main():
    if len(sys.argv) != 5:
        print(__doc__)
        return 2
    gegl, halftone, photo, work = sys.argv[1:]
    if not shutil.which(gegl):
        print(f'SKIP: no gegl program ({gegl})')
        return 77
    if not (os.path.isfile(halftone) and os.access(halftone, os.X_OK)):
        print(f'SKIP: the halftone CLI is not built ({halftone})')
        return 77
    os.makedirs(work, exist_ok=True)
    failed = 0
    for k, (props, opts, ext) in enumerate(CASES):
        failed += not compare(f'case {k}', gegl, halftone, photo, work, props, opts, ext)
    w, h, ch, maxval, samples = read_image(photo)
    gray_photo = os.path.join(work, 'gray.png')
    write_png(gray_photo, w, h, 1, 8, samples[1::ch])
    for k, (gray, props, opts, ext) in enumerate(BAND_CASES):
        failed += not compare(f'bands {k}{" gray" if gray else ""}', gegl, halftone,
                              gray_photo if gray else photo, work, props, opts, ext, {'HT_GEGL_BAND_ROWS': '7'})

    # An XML graph (as documented in docs/gegl.md) gives the same pixels.
    xml = os.path.join(work, 'graph.xml')
    with open(xml, 'w') as f:
        f.write("<?xml version='1.0' encoding='UTF-8'?>\n<gegl>\n"
                "  <node operation='halftone:dither'>\n"
                "    <params><param name='algorithm'>jarvis-judice-ninke</param></params>\n"
                "  </node>\n"
                f"  <node operation='gegl:load' path='{os.path.abspath(photo)}'/>\n</gegl>\n")
    out = os.path.join(work, 'graph.png')
    r = subprocess.run([gegl, xml, '-o', out], capture_output=True, text=True)
    ref = os.path.join(work, 'gegl-case-1.png')
    if r.returncode != 0 or not os.path.exists(out):
        print(f'FAIL xml graph: {r.stderr.strip()}')
        failed += 1
    elif os.path.exists(ref) and normalized(read_image(out)) != normalized(read_image(ref)):
        print('FAIL xml graph differs from the command-line chain')
        failed += 1
    else:
        print('ok xml graph')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
