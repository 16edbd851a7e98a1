#!/usr/bin/env python3
"""GIMP 2.10 batch test of plug-in-halftone-dither2, the procedure with
every property of the operation as an argument: the search methods (DBS,
LES with window 2) and plane-dependent colour, run non-interactively in
gimp-console-2.10, exported and checked bit for bit against the
`halftone` CLI with the same options; the 11-argument
plug-in-halftone-dither still works for a search method (its defaults);
a bad window is refused with the layer untouched.

Usage: gimp-search.py PLUGIN_BUILD_DIR GEGL_PATH HALFTONE PHOTO GRAY_PHOTO WORKDIR

Exit 77 when gimp-console-2.10 or the halftone CLI is missing.
"""
import os
import shutil
import subprocess
import sys
import time

# pnm.py in imageio/, shared with the other suites and tools/bench/
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'imageio'))
from pnm import read_image  # noqa: E402
from gimp2 import GIMP, Tally, as_gray16, load_call_save, run_batch, workspace  # noqa: E402

# the library's HT_LIST_ALGORITHMS values (core/halftone.h)
LES, DBS = 64, 66


def main():
    if len(sys.argv) != 7:
        print(__doc__)
        return 2
    plugdir, gegl_path, halftone, photo, gray, work = sys.argv[1:]
    gimp = shutil.which(GIMP)
    if not gimp:
        print(f'SKIP: needs {GIMP}')
        return 77
    if not (os.path.isfile(halftone) and os.access(halftone, os.X_OK)):
        print(f'SKIP: the halftone CLI is not built ({halftone})')
        return 77
    out, env = workspace(work, plugdir, gegl_path)
    photo, gray = os.path.abspath(photo), os.path.abspath(gray)

    # (name, input, procedure, arguments after the drawable, CLI options
    # or None where the call must fail). plug-in-halftone-dither2's
    # arguments: algorithm coefficients levels color-mode space serpentine
    # backend threads | window sigma init schedule max-rounds seed
    # interplane-forward interplane-backward randomize black
    runs = [
        ('dbs7', photo, 2, f'{DBS} "" 2 0 0 0 1 0 4 1.0 0 0 0 7 0.2 0.2 0.0 1.0',
         ['--algorithm', 'dbs', '--init', 'random', '--seed', '7']),
        ('dbs8', photo, 2, f'{DBS} "" 2 0 0 0 1 0 4 1.5 0 0 0 8 0.2 0.2 0.0 1.0',
         ['--algorithm', 'dbs', '--init', 'random', '--seed', '8', '--sigma', '1.5']),
        # the raster schedule runs on one thread (the CLI refuses more)
        ('les', gray, 2, f'{LES} "" 2 0 0 0 1 1 2 0.8 1 1 3 0 0.2 0.2 0.0 1.0',
         ['--algorithm', 'les', '--window', '2', '--sigma', '0.8', '--schedule', 'raster',
          '--max-rounds', '3', '--threads', '1']),
        ('les-random', gray, 2, f'{LES} "" 2 0 0 0 1 2 2 1.0 0 0 0 5 0.2 0.2 0.0 1.0',
         ['--algorithm', 'les', '--window', '2', '--init', 'random', '--seed', '5', '--threads', '2']),
        ('pd', photo, 2, '0 "" 2 2 0 0 1 0 4 1.0 1 0 0 7 0.2 0.3 0.5 1.0',
         ['--color', 'plane-dependent', '--interplane', '0.2,0.3', '--randomize', '0.5', '--seed', '7']),
        ('short', photo, 1, f'{DBS} "" 2 0 0 0 1 0', ['--algorithm', 'dbs']),
        ('badwindow', gray, 2, f'{LES} "" 2 0 0 0 1 0 9 1.0 1 0 0 0 0.2 0.2 0.0 1.0', None),
    ]
    script = []
    for name, src, proc, args, _ in runs:
        call = f'(plug-in-halftone-dither{"2" if proc == 2 else ""} RUN-NONINTERACTIVE image drawable {args})'
        script.append(load_call_save(src, name, call, out(name + '.png')))
    t0 = time.time()
    log = run_batch(gimp, script, env, 800)
    print(f'gimp-console-2.10: {time.time() - t0:.1f} s wall')
    print(log[-3000:])

    check = Tally()

    results = {}
    for name, src, _, _, opts in runs:
        if not os.path.exists(out(name + '.png')):
            check(False, f'{name}: GIMP exported a result')
            continue
        got = read_image(out(name + '.png'))
        results[name] = got
        if opts is None:
            check(f'{name}: the plug-in refused' in log, f'{name}: the call failed')
            check(got[4] == read_image(src)[4], f'{name}: drawable untouched')
            continue
        colour = '--color' in opts
        ref_path = out(f'cli-{name}.' + ('ppm' if colour else 'pgm'))
        t0 = time.time()
        rr = subprocess.run([halftone] + opts + [src, ref_path], capture_output=True, text=True)
        if rr.returncode != 0:
            check(False, f'{name}: halftone {" ".join(opts)} failed: {rr.stderr.strip()}')
            continue
        ref = read_image(ref_path)
        if colour:
            same = got[:3] == ref[:3] and [v * 65535 // got[3] for v in got[4]] == \
                [v * 65535 // ref[3] for v in ref[4]]
        else:
            g, c = as_gray16(got), as_gray16(ref)
            same = g[:2] == c[:2] and g[4] == 0 and g[2] == c[2] and set(g[2]) == {0, 65535}
        check(same, f'{name}: GIMP equals halftone {" ".join(opts)}, bit for bit '
                    f'({got[0]}x{got[1]}, CLI {time.time() - t0:.1f} s)')
    if 'dbs7' in results and 'dbs8' in results:
        check(results['dbs7'][4] != results['dbs8'][4], 'dbs: another seed and sigma give another image')
    return 1 if check.failed else 0


if __name__ == '__main__':
    sys.exit(main())
