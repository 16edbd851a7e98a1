#!/usr/bin/env python3
"""By hand, not a Meson test (it needs Xvfb, xdotool and xwd, and runs for
minutes): is GIMP 3 responsive while plug-in-halftone's dialog computes a
long preview, and how fast does Cancel stop it?

Usage (as root in the Debian 13 chroot, from a build tree):
    tests/gimp/gimp3-responsive.py BUILD IMAGE OUTDIR [SECONDS] [WHEEL]

Starts Xvfb and gimp-3.0 with IMAGE and the plug-in from BUILD/ui/gimp3,
opens the dialog (a Python batch call, RUN-INTERACTIVE), turns the
algorithm combo WHEEL steps down (9: LES) with the mouse wheel, then for
SECONDS moves the pointer over GIMP's canvas every 2 s and checks that
GIMP's pointer-coordinate display (the status bar) changed within 0.5 s,
sampling the dialog's progress bar alike; then presses Escape (or with
HT_KEY=Return, OK: the result is saved to OUTDIR/ok.png) and times
how long the plug-in's process takes to end, and checks that the canvas
shows what it showed before the dialog (the layer untouched).
Screenshots go to OUTDIR (dialog.png: the dialog while it computes).
"""
import os
import subprocess
import sys
import time

# HT_KEY=Return presses OK instead of Escape (the result is saved to
# OUTDIR/ok.png)
KEY = os.environ.get('HT_KEY', 'Escape')
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from xwd2png import crop_raw, read_xwd, write_crop  # noqa: E402

OPEN = r'''
import os
from gi.repository import Gimp, Gio
image = Gimp.file_load(Gimp.RunMode.NONINTERACTIVE, Gio.File.new_for_path(os.environ['HT_IMAGE']))
Gimp.Display.new(image)
Gimp.displays_flush()
proc = Gimp.get_pdb().lookup_procedure('plug-in-halftone')
config = proc.create_config()
config.set_property('run-mode', Gimp.RunMode.INTERACTIVE)
config.set_property('image', image)
config.set_core_object_array('drawables', [image.get_layers()[0]])
result = proc.run(config)
with open(os.environ['HT_OUTDIR'] + '/status.txt', 'w') as f:
    f.write(result.index(0).value_nick + '\n')
if result.index(0) == Gimp.PDBStatusType.SUCCESS:
    Gimp.file_save(Gimp.RunMode.NONINTERACTIVE, image, Gio.File.new_for_path(os.environ['HT_OUTDIR'] + '/ok.png'), None)
'''


def xdo(*args):
    return subprocess.run(['xdotool'] + [str(a) for a in args], capture_output=True, text=True).stdout.strip()


def grab():
    return read_xwd(subprocess.run(['xwd', '-root', '-silent'], capture_output=True).stdout)


def crop(img, x, y, w, h):
    return crop_raw(img, x, y, w, h)


def plugin_pids():
    r = subprocess.run(['pgrep', '-x', 'halftone-gimp3'], capture_output=True, text=True)
    return r.stdout.split()


def main():
    build, image, outdir = sys.argv[1:4]
    seconds = int(sys.argv[4]) if len(sys.argv) > 4 else 30
    wheel = int(sys.argv[5]) if len(sys.argv) > 5 else 9
    os.makedirs(outdir, exist_ok=True)
    cfg = os.path.join(outdir, 'gimp3')
    plugdir = os.path.join(cfg, 'plug-ins', 'halftone-gimp3')
    os.makedirs(plugdir, exist_ok=True)
    subprocess.run(['cp', os.path.join(build, 'ui', 'gimp3', 'halftone-gimp3'), plugdir], check=True)
    with open(os.path.join(outdir, 'open.py'), 'w') as f:
        f.write(OPEN)
    xvfb = subprocess.Popen(['Xvfb', ':98', '-screen', '0', '1480x900x24'], stderr=subprocess.DEVNULL)
    time.sleep(2)
    env = dict(os.environ, DISPLAY=':98', GIMP3_DIRECTORY=cfg, HT_IMAGE=os.path.abspath(image), HT_OUTDIR=os.path.abspath(outdir), NO_AT_BRIDGE='1',
               GEGL_PATH=os.path.join(build, 'plugin') + ':/usr/lib/x86_64-linux-gnu/gegl-0.4',
               G_MESSAGES_DEBUG='halftone')
    log = open(os.path.join(outdir, 'gimp.log'), 'w')
    os.environ['DISPLAY'] = ':98'
    gimp = subprocess.Popen(['gimp-3.0', '--no-splash', '--batch-interpreter', 'python-fu-eval', '-b',
                             f'exec(open({os.path.join(outdir, "open.py")!r}).read())'],
                            env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        dialog = ''
        for _ in range(120):
            time.sleep(1)
            dialog = xdo('search', '--name', '^Halftone$').split('\n')[0]
            if dialog:
                break
        if not dialog:
            print('no dialog')
            return 1
        time.sleep(3)
        for w in xdo('search', '--name', 'Welcome to GIMP').split():
            xdo('windowunmap', w)
        # the dialog to the right, the canvas free on the left
        xdo('windowmove', dialog, 680, 0)
        image_win = [w for w in xdo('search', '--name', 'GIMP$').split() if w != dialog][0]
        geo = dict(line.strip().split(': ', 1) for line in xdo('getwindowgeometry', image_win).split('\n')[1:])
        wx, wy = (int(v) for v in geo['Position'].split(' ')[0].split(','))
        ww, wh = (int(v) for v in geo['Geometry'].split('x'))
        print(f'GIMP image window {ww}x{wh} at {wx},{wy}')
        # the canvas: the middle of the window; the status bar: its bottom
        # left, where the pointer's coordinates are
        cx, cy, cw, ch = wx + 220, wy + 120, min(ww, 680) - 300, wh - 240
        status = (wx + 150, wy + wh - 32, 260, 28)
        xdo('mousemove', 1270, 890)
        time.sleep(1)
        write_crop(grab(), os.path.join(outdir, 'screen-start.png'), 0, 0, 1280, 900)
        canvas_before = crop(grab(), cx, cy, cw, ch)
        dgeo = dict(line.strip().split(': ', 1) for line in xdo('getwindowgeometry', dialog).split('\n')[1:])
        dw, dh = (int(v) for v in dgeo['Geometry'].split('x'))
        # the algorithm's combo: the top row's right end
        xdo('mousemove', 680 + dw - 120, 28)
        for _ in range(wheel):
            xdo('click', 5)
            time.sleep(0.2)
        time.sleep(2)
        dgeo = dict(line.strip().split(': ', 1) for line in xdo('getwindowgeometry', dialog).split('\n')[1:])
        dw, dh = (int(v) for v in dgeo['Geometry'].split('x'))
        write_crop(grab(), os.path.join(outdir, 'dialog-start.png'), 680, 0, dw, dh)
        followed, moves, progress = 0, 0, []
        t_end = time.monotonic() + seconds
        i = 0
        while time.monotonic() < t_end:
            before = crop(grab(), *status)
            x, y = cx + (i * 97) % cw, cy + (i * 53) % ch
            xdo('mousemove', x, y)
            time.sleep(0.5)
            img = grab()
            after = crop(img, *status)
            moves += 1
            followed += after != before
            progress.append(crop(img, 680, 0, dw, dh))
            if i == 3:
                write_crop(img, os.path.join(outdir, 'dialog.png'), 680, 0, dw, dh)
            i += 1
            time.sleep(1.5)
        changing = sum(a != b for a, b in zip(progress, progress[1:]))
        print(f'pointer moved {moves} times over the canvas; GIMP\'s coordinate display followed within 0.5 s '
              f'{followed} times; the dialog repainted between {changing} of {len(progress) - 1} samples')
        pids = plugin_pids()
        xdo('windowfocus', dialog)
        t0 = time.monotonic()
        xdo('key', '--window', dialog, KEY)
        while plugin_pids() and time.monotonic() - t0 < 30:
            time.sleep(0.02)
        print(f'{KEY}: the plug-in process {pids} ended after {time.monotonic() - t0:.2f} s'
              if not plugin_pids() else 'Escape: the plug-in still runs after 30 s')
        xdo('mousemove', 1270, 890)
        time.sleep(2)
        canvas_after = crop(grab(), cx, cy, cw, ch)
        for line in open(os.path.join(outdir, 'gimp.log')):
            if 'stopped' in line:
                print(line.strip())
        print(f'canvas after {KEY} ' + ('equals' if canvas_after == canvas_before else 'DIFFERS from') +
              ' the canvas before the dialog')
        return 0
    finally:
        gimp.terminate()
        time.sleep(2)
        xvfb.terminate()


if __name__ == '__main__':
    sys.exit(main())
