"""Helpers of the GIMP 2.10 batch tests (gimp-batch.py, gimp-search.py):
a private GIMP profile whose plug-in path holds the build folder, Script-Fu
strings, and gray samples of exported images."""
import os
import shutil
import subprocess

GIMP = 'gimp-console-2.10'


def workspace(work, plugdir, gegl_path):
    """A fresh WORK folder with its GIMP profile (make_profile): a
    function giving the absolute path of a file in it, and the
    environment that GIMP runs in (the profile, GEGL_PATH)."""
    work = os.path.abspath(work)
    home = make_profile(work, plugdir)
    env = dict(os.environ, GIMP2_DIRECTORY=home, GEGL_PATH=gegl_path)
    return lambda name: os.path.join(work, name), env


class Tally:
    """check(ok, msg): prints "ok   msg" or "FAIL msg" and counts the
    failures in check.failed."""

    def __init__(self):
        self.failed = 0

    def __call__(self, ok, msg):
        print(('ok   ' if ok else 'FAIL ') + msg)
        if not ok:
            self.failed += 1


def scheme_str(s):
    return '"' + s.replace('\\', '\\\\').replace('"', '\\"') + '"'


def make_profile(work, plugdir):
    """A fresh WORK folder with a GIMP2_DIRECTORY (returned) that finds
    the plug-in in PLUGDIR besides GIMP's own plug-ins."""
    if os.path.isdir(work):
        shutil.rmtree(work)
    home = os.path.join(work, 'gimp2')
    for d in ('brushes', 'gradients', 'patterns', 'palettes', 'fonts', 'plug-ins', 'scripts',
              'tool-presets', 'dynamics', 'mypaint-brushes', 'themes', 'templates'):
        os.makedirs(os.path.join(home, d), exist_ok=True)
    system_plugins = subprocess.run(['pkg-config', '--variable=gimplibdir', 'gimp-2.0'],
                                    capture_output=True, text=True).stdout.strip() or '/usr/lib/gimp/2.0'
    with open(os.path.join(home, 'gimprc'), 'w') as f:
        f.write(f'(plug-in-path "{system_plugins}/plug-ins:{os.path.abspath(plugdir)}")\n')
    return home


def as_gray16(img):
    """(w, h, gray 0..65535 per pixel, alpha or None, count of pixels
    whose R, G and B differ) of a read_image() result."""
    w, h, ch, mx, s = img
    colors = ch - (1 if ch in (2, 4) else 0)
    gray, alpha, mixed = [], [] if ch in (2, 4) else None, 0
    for i in range(w * h):
        px = s[i * ch:(i + 1) * ch]
        if colors == 3 and not (px[0] == px[1] == px[2]):
            mixed += 1
        gray.append(px[0] * 65535 // mx)
        if alpha is not None:
            alpha.append(px[-1] * 65535 // mx)
    return w, h, gray, alpha, mixed


def load_call_save(src, name, call, png, before=''):
    """A Script-Fu batch command: load SRC, run BEFORE, then CALL (a
    refusal prints "NAME: the plug-in refused"), export PNG with no
    selection."""
    return (f'(let* ((image (car (gimp-file-load RUN-NONINTERACTIVE {scheme_str(src)} {scheme_str(src)})))'
            f' (drawable (car (gimp-image-get-active-drawable image))))'
            f' {before}'
            f' (catch (gimp-message "{name}: the plug-in refused") {call})'
            f' (gimp-selection-none image)'
            f' (gimp-file-save RUN-NONINTERACTIVE image drawable {scheme_str(png)} "x.png")'
            f' (gimp-image-delete image))')


def run_batch(gimp, scripts, env, timeout):
    """Runs the batch commands in one gimp-console; returns its output."""
    cmd = [gimp, '-i', '-d', '-f']
    for s in scripts:
        cmd += ['-b', s]
    cmd += ['-b', '(gimp-quit 0)']
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    return r.stdout + r.stderr
