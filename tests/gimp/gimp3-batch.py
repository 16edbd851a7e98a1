#!/usr/bin/env python3
"""GIMP 3 batch test of the GEGL operation halftone:dither inside GIMP 3.

Usage: gimp3-batch.py GEGL_PATH PHOTO WORKDIR

GIMP 3 runs GEGL operations itself (scripts apply the op as a filter;
its menu entry is the plug-in plug-in-halftone, tests/gimp/gimp3-plugin.py).
This runs gimp-console-3.0 -i with a private
GIMP3_DIRECTORY and GEGL_PATH pointing at the op, applies the op to a
layer through Script-Fu's gimp-drawable-merge-new-filter (what a script
or a menu run does: a drawable filter merged into the layer), exports
PNGs, and checks them against the `gegl` command line running the same
operation (itself checked against the core by the gegl suite):

- default settings and two others give the gegl program's pixels;
- bad custom coefficients leave the layer untouched and GIMP 3 is told
  why (the op's message in the log domain GIMP shows, "GEGL");
- backend cuda without a usable GPU gives the CPU's pixels, and GIMP 3 is
  told that the CPU computed it.

Exit 77 where gimp-console-3.0 or gegl is missing.
"""
import os
import shutil
import subprocess
import sys

# pnm.py in imageio/, shared with the other suites and tools/bench/
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'imageio'))
from pnm import read_image  # noqa: E402


def main():
    gegl_path, photo, work = sys.argv[1:4]
    gimp = shutil.which('gimp-console-3.0') or shutil.which('gimp-console-3')
    gegl = shutil.which('gegl')
    if not gimp or not gegl:
        print('SKIP: needs gimp-console-3.0 (GIMP 3) and gegl')
        return 77
    work = os.path.abspath(work)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    photo = os.path.abspath(photo)
    out = lambda name: os.path.join(work, name + '.png')  # noqa: E731
    env = dict(os.environ, GEGL_PATH=gegl_path, GIMP3_DIRECTORY=os.path.join(work, 'gimp3'),
               HT_CUDA_MODULE='/nonexistent/libhalftone-cuda.so', LC_ALL='C.UTF-8')
    failures = 0

    def check(ok, msg):
        nonlocal failures
        print(('ok: ' if ok else 'FAIL: ') + msg)
        failures += 0 if ok else 1

    # (name, Script-Fu property pairs, gegl properties)
    runs = [
        ('default', '', []),
        ('jjn', '"algorithm" "jarvis-judice-ninke" "levels" 3', ['algorithm=jarvis-judice-ninke', 'levels=3']),
        ('perchan', '"color-mode" "per-channel" "serpentine" TRUE', ['color-mode=per-channel', 'serpentine=true']),
        ('badcoef', '"algorithm" "custom" "coefficients" "- * 7; 3 x"', None),
        ('cuda', '"backend" "cuda"', []),
    ]
    logs = {}
    for name, props, _ in runs:
        script = f'''
          (let* ((image (car (gimp-file-load RUN-NONINTERACTIVE "{photo}")))
                 (layer (vector-ref (car (gimp-image-get-layers image)) 0)))
            (gimp-drawable-merge-new-filter layer "halftone:dither" 0 LAYER-MODE-REPLACE 1.0 {props})
            (gimp-file-save RUN-NONINTERACTIVE image "{out(name)}" -1)
            (gimp-image-delete image))'''
        r = subprocess.run([gimp, '-i', '--no-data', '--no-fonts', '--batch-interpreter', 'plug-in-script-fu-eval',
                            '--quit', '-b', script],
                           capture_output=True, text=True, env=env, timeout=500)
        logs[name] = r.stdout + r.stderr
        check(os.path.exists(out(name)), f'{name}: GIMP 3 wrote {out(name)}' +
              ('' if os.path.exists(out(name)) else ': ' + logs[name][-1500:]))
    if failures:
        return 1

    original = read_image(photo)
    for name, _, props in runs:
        got = read_image(out(name))
        if props is None:
            check(got.samples == original.samples, f'{name}: the layer is untouched')
            continue
        ref = out(name + '-gegl')
        subprocess.run([gegl, photo, '-o', ref, '--', 'halftone:dither'] + props, env=env,
                       capture_output=True, check=True, timeout=300)
        want = read_image(ref)
        # the gegl program writes a luma halftone as gray, GIMP an RGB layer with R = G = B
        if want.channels < got.channels and got.channels >= 3:
            gs = [got.samples[i] for i in range(0, len(got.samples), got.channels)]
            ws = [want.samples[i] for i in range(0, len(want.samples), want.channels)]
        else:
            gs, ws = got.samples, want.samples
        scale = lambda s, m: [v * 65535 // m for v in s]  # noqa: E731
        check(scale(gs, got.maxval) == scale(ws, want.maxval), f'{name}: GIMP 3 gives the gegl program\'s pixels')
    # GIMP's console shows its messages as DOMAIN-Severity (its window, in a dialog)
    check('GEGL-Warning: halftone:dither: coefficients' in logs['badcoef'],
          'badcoef: GIMP 3 is told why, in the GEGL domain: ' + logs['badcoef'][-400:].replace('\n', ' | '))
    check('GEGL-Warning: halftone:dither: no NVIDIA GPU found; computed on the CPU, same result' in logs['cuda']
          and '/nonexistent' not in logs['cuda'],
          'cuda: GIMP 3 is told the CPU computed it: ' + logs['cuda'][-400:].replace('\n', ' | '))
    print('GIMP 3:', 'FAIL' if failures else 'OK')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
