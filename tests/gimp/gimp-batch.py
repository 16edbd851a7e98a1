#!/usr/bin/env python3
"""GIMP 2.10 batch test of the plug-in plug-in-halftone-dither.

Usage: gimp-batch.py PLUGIN_BUILD_DIR GEGL_PATH PHOTO RGBA_PNG WORKDIR

Runs gimp-console-2.10 -i -b with a private GIMP2_DIRECTORY whose gimprc
puts the plug-in's build folder on the plug-in path, calls the plug-in
non-interactively, exports PNGs and checks them against the `gegl`
command line running the same operation (itself checked against the core
by the gegl suite). Exit 77 when gimp-console-2.10 or gegl is missing.
"""
import os
import shutil
import subprocess
import sys

# pnm.py in imageio/, shared with the other suites and tools/bench/
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'imageio'))
from pnm import png_idat, read_image  # noqa: E402
from gimp2 import GIMP, Tally, as_gray16, load_call_save, run_batch, scheme_str, workspace  # noqa: E402


def main():
    if len(sys.argv) != 6:
        print(__doc__)
        return 2
    plugdir, gegl_path, photo, rgba, work = sys.argv[1:]
    gimp, gegl = shutil.which(GIMP), shutil.which('gegl')
    if not gimp or not gegl:
        print(f'SKIP: needs {GIMP} and gegl')
        return 77
    out, env = workspace(work, plugdir, gegl_path)
    photo, rgba = os.path.abspath(photo), os.path.abspath(rgba)

    # (name, input, args after drawable or None for "last values", selection)
    runs = [
        ('jjn', photo, '1 "" 2 0 0 0 1 0', None),
        ('perchan', photo, '6 "" 3 1 0 0 1 2', None),
        ('custom', photo, '8 "- - * 7 5; 3 5 7 5 3; 1 3 5 3 1 / 48" 2 0 0 1 1 0', None),
        ('rgba', rgba, '0 "" 2 0 0 0 1 0', None),
        ('badcoef', photo, '8 "- * 7; 3 x" 2 0 0 0 1 0', None),
        ('badlevels', photo, '0 "" 1 0 0 0 1 0', None),
        ('select', photo, '0 "" 2 0 0 0 1 0', (100, 50, 200, 120)),
        ('lastvals', photo, None, None),
        ('u16', photo, '0 "" 2 0 0 0 1 0', 'PRECISION-U16-LINEAR'),
        ('float', photo, '0 "" 2 0 0 0 1 0', 'PRECISION-FLOAT-LINEAR'),
    ]
    script = []
    for name, src, args, sel in runs:
        call = (f'(plug-in-halftone-dither RUN-NONINTERACTIVE image drawable {args})' if args
                else '(plug-in-halftone-dither RUN-WITH-LAST-VALS image drawable 0 "" 2 0 0 0 0 0)')
        if isinstance(sel, str):  # a precision to convert to first
            select = f'(gimp-image-convert-precision image {sel}) (set! drawable (car (gimp-image-get-active-drawable image)))'
        else:
            select = (f'(gimp-image-select-rectangle image CHANNEL-OP-REPLACE {sel[0]} {sel[1]} {sel[2]} {sel[3]})'
                      if sel else '')
        script.append(load_call_save(src, name, call, out(name + '.png'), select))
    log = run_batch(gimp, script, env, 500)
    print(log[-3000:])

    def gegl_ref(name, src, props):
        path = out(f'ref-{name}.png')
        rr = subprocess.run([gegl, src, '-o', path, '--', 'halftone:dither'] + props,
                            capture_output=True, text=True, env=env)
        if rr.returncode != 0:
            raise RuntimeError(f'gegl failed: {rr.stderr}')
        return read_image(path)

    check = Tally()

    for name in ('jjn', 'perchan', 'custom', 'rgba', 'badcoef', 'badlevels', 'select', 'lastvals',
                 'u16', 'float'):
        check(os.path.exists(out(name + '.png')), f'{name}: GIMP exported a result')
    if check.failed:
        return 1

    original = read_image(photo)
    # luma, Jarvis-Judice-Ninke
    g = as_gray16(read_image(out('jjn.png')))
    ref = as_gray16(gegl_ref('jjn', photo, ['algorithm=jarvis-judice-ninke']))
    check(g[4] == 0, 'jjn: gray result in an RGB layer (R = G = B)')
    check(g[2] == ref[2], 'jjn: GIMP result equals the gegl command line, pixel for pixel')
    check(set(g[2]) == {0, 65535}, 'jjn: black and white only')

    # per channel, 3 levels, Sierra Lite, 2 threads
    a = read_image(out('perchan.png'))
    b = gegl_ref('perchan', photo, ['algorithm=sierra-lite', 'levels=3', 'color-mode=per-channel'])
    na = [v * 65535 // a[3] for v in a[4]]
    nb = [v * 65535 // b[3] for v in b[4]]
    check(a[:3] == b[:3] and na == nb, 'perchan: per-channel result equals the gegl command line')

    # custom coefficients with serpentine scan
    g = as_gray16(read_image(out('custom.png')))
    ref = as_gray16(gegl_ref('custom', photo, ['algorithm=custom', 'serpentine=true',
                                              'coefficients=- - * 7 5; 3 5 7 5 3; 1 3 5 3 1 / 48']))
    check(g[2] == ref[2], 'custom: custom filter + serpentine equals the gegl command line')

    # RGBA: alpha kept
    g = as_gray16(read_image(out('rgba.png')))
    src = as_gray16(read_image(rgba))
    ref = as_gray16(gegl_ref('rgba', rgba, []))
    check(g[3] is not None and g[3] == src[3], 'rgba: alpha channel kept unchanged')
    # GIMP's PNG export drops the colour of fully transparent pixels.
    visible = [i for i, al in enumerate(src[3]) if al > 0]
    check(len(visible) > 0 and all(g[2][i] == ref[2][i] for i in visible),
          'rgba: result equals the gegl command line where alpha > 0')

    # refused calls leave the drawable untouched
    for name in ('badcoef', 'badlevels'):
        check(read_image(out(name + '.png'))[4] == original[4], f'{name}: drawable untouched')
    check('badcoef: the plug-in refused' in log, 'badcoef: the call failed')
    check('badlevels: the plug-in refused' in log, 'badlevels: the call failed')

    # selection: outside untouched, inside halftoned
    w, h, ch, mx, s = read_image(out('select.png'))
    x0, y0, sw, sh = 100, 50, 200, 120
    outside_same = inside_bw = True
    for y in range(h):
        for x in range(w):
            i = (y * w + x) * ch
            inside = x0 <= x < x0 + sw and y0 <= y < y0 + sh
            if inside:
                inside_bw &= s[i] in (0, mx) and s[i] == s[i + 1] == s[i + 2]
            else:
                outside_same &= s[i:i + ch] == original[4][i:i + ch]
    check(outside_same, 'select: pixels outside the selection untouched')
    check(inside_bw, 'select: pixels inside the selection halftoned')

    # last values without stored values: the defaults (Floyd-Steinberg)
    g = as_gray16(read_image(out('lastvals.png')))
    ref = as_gray16(gegl_ref('default', photo, []))
    check(g[2] == ref[2], 'lastvals: defaults used (equals gegl with default properties)')

    # high bit depth layers (linear-light precisions): still pure black and
    # white, and the mean tone of the stored 8-bit values is kept
    w, h, ch, mx, s0 = original
    mean_in = sum(0.2126 * s0[i] + 0.7152 * s0[i + 1] + 0.0722 * s0[i + 2]
                  for i in range(0, w * h * ch, ch)) / (w * h * 255.0)
    for name in ('u16', 'float'):
        g = as_gray16(read_image(out(name + '.png')))
        check(g[4] == 0 and set(g[2]) == {0, 65535}, f'{name}: black and white only (R = G = B)')
        mean_out = sum(g[2]) / (len(g[2]) * 65535.0)
        check(abs(mean_out - mean_in) < 0.01, f'{name}: mean tone {mean_out:.4f}, input {mean_in:.4f}')

    cancelled, untouched = cancel_run(gimp, env, photo, out)
    check(cancelled, 'cancel: the plug-in was stopped while it ran and the call failed')
    check(untouched, 'cancel: the drawable is untouched')
    return 1 if check.failed else 0


def cancel_run(gimp, env, photo, out):
    """GIMP's cancel button closes (kills) the plug-in. Do the same while
    it halftones a large image, then check nothing was written."""
    import signal
    import time
    before, after = out('cancel-before.png'), out('cancel-after.png')
    script = (
        f'(let* ((image (car (gimp-file-load RUN-NONINTERACTIVE {scheme_str(photo)} "x.png")))'
        f' (drawable (car (gimp-image-get-active-drawable image))))'
        f' (gimp-image-scale image 8000 5320)'
        f' (set! drawable (car (gimp-image-get-active-drawable image)))'
        f' (file-png-save2 RUN-NONINTERACTIVE image drawable {scheme_str(before)} "x.png" 0 1 0 0 0 0 0 0 0)'
        f' (catch (gimp-message "cancel: the plug-in was stopped")'
        f'   (plug-in-halftone-dither RUN-NONINTERACTIVE image drawable 1 "" 2 0 0 1 1 1))'
        f' (file-png-save2 RUN-NONINTERACTIVE image drawable {scheme_str(after)} "x.png" 0 1 0 0 0 0 0 0 0)'
        f' (gimp-image-delete image))')
    proc = subprocess.Popen([gimp, '-i', '-d', '-f', '-b', script, '-b', '(gimp-quit 0)'],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    killed = False
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None and not killed:
        for pid in os.listdir('/proc'):
            if not pid.isdigit():
                continue
            try:
                with open(f'/proc/{pid}/stat') as f:
                    fields = f.read().rsplit(')', 1)[1].split()
                exe = os.readlink(f'/proc/{pid}/exe')
            except OSError:
                continue
            # our plug-in, started by the GIMP this test started
            if int(fields[1]) == proc.pid and os.path.basename(exe) == 'halftone-gimp':
                # a moment into its work (it first fetches the image);
                # a plug-in that has ended by then was not cancelled
                time.sleep(0.1)
                try:
                    os.kill(int(pid), signal.SIGKILL)
                    killed = True
                except ProcessLookupError:
                    print('cancel: the plug-in ended before it could be killed')
                break
        time.sleep(0.02)
    log = proc.communicate(timeout=300)[0]
    print(log[-1500:])
    failed_call = 'cancel: the plug-in was stopped' in log
    untouched = os.path.exists(before) and os.path.exists(after) and png_idat(before) == png_idat(after)
    return killed and failed_call, untouched


if __name__ == '__main__':
    sys.exit(main())
