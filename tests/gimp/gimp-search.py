#!/usr/bin/env python3
"""GIMP 2.10 batch test of plug-in-halftone-dither2, the procedure with
every property of the operation as an argument: the search methods (DBS,
LES with window 2) and plane-dependent colour, run non-interactively in
gimp-console-2.10, exported and checked bit for bit against the
`halftone` CLI with the same options; the 11-argument
plug-in-halftone-dither still works for a search method (its defaults);
a bad window is refused with the layer untouched. plug-in-halftone-dither3
(every parameter of the library's description, in its order) is
registered in GIMP with the arguments that VALS_TEST --pdb lists (the
plug-in's own list, tests/gimp/test-halftone-vals.c), and a call built
from that list (the defaults, with DBS's options by name) gives the CLI's
bits too.

Usage: gimp-search.py PLUGIN_BUILD_DIR GEGL_PATH HALFTONE VALS_TEST PHOTO GRAY_PHOTO WORKDIR

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
from gimp2 import GIMP, Tally, as_gray16, load_call_save, run_batch, scheme_str, workspace  # noqa: E402

# the library's HT_LIST_ALGORITHMS values (core/halftone.h)
LES, DBS = 64, 66
# GimpPDBArgType
PDB_INT32, PDB_FLOAT, PDB_STRING = 0, 3, 4
DESC_PROC = 'plug-in-halftone-dither3'


def desc_args(vals_test):
    """[(name, type, default)] of plug-in-halftone-dither3's arguments
    after the drawable, as the plug-in makes them."""
    r = subprocess.run([vals_test, '--pdb', DESC_PROC], capture_output=True, text=True, check=True)
    rows = []
    for line in r.stdout.splitlines():
        name, typ, default = line.split('\t', 2)
        rows.append((name, int(typ), default))
    return rows


def desc_call(rows, **given):
    """plug-in-halftone-dither3's arguments after the drawable: the
    defaults, and the values given by name (a_b for a-b)."""
    given = {k.replace('_', '-'): v for k, v in given.items()}
    unknown = set(given) - {name for name, _, _ in rows}
    if unknown:
        raise ValueError(f'{DESC_PROC} has no argument {unknown}')
    out = []
    for name, typ, default in rows:
        v = given.get(name, default)
        out.append(scheme_str(str(v)) if typ == PDB_STRING else
                   repr(float(v)) if typ == PDB_FLOAT else str(int(float(v))))
    return ' '.join(out)


# Script-Fu that prints "pdb-arg I TYPE NAME" for every argument of PROC.
def query_args(proc):
    return (f'(let* ((n (list-ref (gimp-procedural-db-proc-info "{proc}") 6)) (i 0))'
            f' (while (< i n)'
            f'  (let ((a (gimp-procedural-db-proc-arg "{proc}" i)))'
            f'   (gimp-message (string-append "pdb-arg " (number->string i) " "'
            f'                                (number->string (car a)) " " (cadr a))))'
            f'  (set! i (+ i 1))))')


def main():
    if len(sys.argv) != 8:
        print(__doc__)
        return 2
    plugdir, gegl_path, halftone, vals_test, photo, gray, work = sys.argv[1:]
    gimp = shutil.which(GIMP)
    if not gimp:
        print(f'SKIP: needs {GIMP}')
        return 77
    if not (os.path.isfile(halftone) and os.access(halftone, os.X_OK)):
        print(f'SKIP: the halftone CLI is not built ({halftone})')
        return 77
    out, env = workspace(work, plugdir, gegl_path)
    photo, gray = os.path.abspath(photo), os.path.abspath(gray)
    rows = desc_args(vals_test)

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
        # plug-in-halftone-dither3: by name from the plug-in's list
        ('desc-dbs8', photo, 3, desc_call(rows, algorithm=DBS, init=0, seed=8, sigma=1.5),
         ['--algorithm', 'dbs', '--init', 'random', '--seed', '8', '--sigma', '1.5']),
        ('desc-pd', photo, 3, desc_call(rows, color_mode=2, interplane_forward=0.2, interplane_backward=0.3,
                                        randomize=0.5, seed=7),
         ['--color', 'plane-dependent', '--interplane', '0.2,0.3', '--randomize', '0.5', '--seed', '7']),
        ('desc-badsigma', gray, 3, desc_call(rows, algorithm=DBS, sigma=5.0), None),
    ]
    script = [query_args(DESC_PROC)]
    for name, src, proc, args, _ in runs:
        procname = {1: 'plug-in-halftone-dither', 2: 'plug-in-halftone-dither2', 3: DESC_PROC}[proc]
        call = f'({procname} RUN-NONINTERACTIVE image drawable {args})'
        script.append(load_call_save(src, name, call, out(name + '.png')))
    t0 = time.time()
    log = run_batch(gimp, script, env, 800)
    print(f'gimp-console-2.10: {time.time() - t0:.1f} s wall')
    print(log[-3000:])

    check = Tally()

    # the procedure GIMP registered: the plug-in's list, after run-mode,
    # image and drawable
    registered = {}
    for line in log.splitlines():
        at = line.find('pdb-arg ')
        if at >= 0:
            i, typ, name = line[at:].split()[1:4]
            registered[int(i)] = (name, int(typ))
    expected = {i + 3: (name, typ) for i, (name, typ, _) in enumerate(rows)}
    check({i: a for i, a in registered.items() if i >= 3} == expected and len(registered) == len(rows) + 3,
          f'{DESC_PROC}: GIMP lists the {len(rows)} arguments the plug-in makes from the description '
          f'({len(registered)} found)')

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
    if 'dbs8' in results and 'desc-dbs8' in results:
        check(results['dbs8'][4] == results['desc-dbs8'][4], f'{DESC_PROC} gives plug-in-halftone-dither2\'s bits')
    if 'dbs7' in results and 'dbs8' in results:
        check(results['dbs7'][4] != results['dbs8'][4], 'dbs: another seed and sigma give another image')
    return 1 if check.failed else 0


if __name__ == '__main__':
    sys.exit(main())
