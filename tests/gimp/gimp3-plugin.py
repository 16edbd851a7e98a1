#!/usr/bin/env python3
"""GIMP 3 batch test of the plug-in plug-in-halftone (ui/gimp3/).

Usage: gimp3-plugin.py PLUGIN GEGL_PATH HALFTONE DESCRIBE_DUMP PHOTO SMALL COLOUR WORKDIR

PLUGIN is the tests' build of the plug-in (halftone-gimp3-test: the same
sources plus plug-in-halftone-test-cancel, the apply path with a cancel
from a timer). It is installed into a private GIMP3_DIRECTORY, and one
gimp-console-3.0 session (Python batch interpreter) checks:

- the procedure's arguments against the library's description
  (tests/cli/describe-dump): names and order, types, ranges, defaults,
  the lists' names;

- several methods non-interactively (Floyd-Steinberg, Jarvis-Judice-Ninke
  with 3 levels, DBS with a random start, LES, per-channel colour, CMYK
  on a layer with alpha), each checked against the halftone CLI with the
  same options, bit for bit;
- a rectangle selected: the CLI's halftone of that crop inside, the
  layer untouched outside;
- Filters > Repeat's run mode (RUN-WITH-LAST-VALS; GIMP keeps the
  settings of interactive runs only, so in batch it gives the defaults);
- bad custom coefficients: the call fails with the parser's one-line
  message and the layer is untouched;
- LES on PHOTO cancelled by a timer after 1 s through the apply path's
  cancel: the call fails as cancelled and the layer is untouched (how
  long the stop took is printed, not checked).

Exit 77 where gimp-console-3.0 is missing.
"""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'imageio'))
from pnm import normalized, read_image, write_pnm  # noqa: E402

# A rectangle selected for the 'selection' case: x, y, width, height.
SELECTION = (37, 21, 120, 90)

# The session's script: runs every case, exports each layer, and writes
# what each call returned to results.json.
SESSION = r'''
import json, time
from gi.repository import Gimp, Gio

def load(path):
    image = Gimp.file_load(Gimp.RunMode.NONINTERACTIVE, Gio.File.new_for_path(path))
    return image, image.get_layers()[0]

def call(proc_name, image, layer, mode, props):
    props = dict(props)
    if '_select' in props:
        image.select_rectangle(Gimp.ChannelOps.REPLACE, *props.pop('_select'))
    proc = Gimp.get_pdb().lookup_procedure(proc_name)
    config = proc.create_config()
    config.set_property('run-mode', mode)
    config.set_property('image', image)
    config.set_core_object_array('drawables', [layer])
    for k, v in props.items():
        config.set_property(k, v)
    t0 = time.monotonic()
    r = proc.run(config)
    seconds = time.monotonic() - t0
    status = r.index(0)
    message = r.index(1) if r.length() > 1 and isinstance(r.index(1), str) else ''
    if not message:
        message = Gimp.PDB.get_last_error(Gimp.get_pdb()) or ''
    return status.value_nick, message, seconds

def describe(pspec):
    """An argument as the test compares it with the description."""
    d = {'name': pspec.name, 'type': pspec.value_type.name}
    for attr in ('minimum', 'maximum', 'default_value'):
        if hasattr(pspec, attr):
            v = getattr(pspec, attr)
            d[attr] = v if isinstance(v, (int, float, str, bool)) or v is None else str(v)
    try:
        d['choices'] = list(Gimp.param_spec_choice_get_choice(pspec).list_nicks())
        d['default_value'] = Gimp.param_spec_choice_get_default(pspec)
    except Exception:
        pass
    return d

results = {'_arguments': [describe(a) for a in Gimp.get_pdb().lookup_procedure('plug-in-halftone').get_arguments()]}
for name, proc, src, mode, props in CASES:
    image, layer = load(src)
    status, message, seconds = call(proc, image, layer, getattr(Gimp.RunMode, mode), props)
    Gimp.file_save(Gimp.RunMode.NONINTERACTIVE, image, Gio.File.new_for_path(WORK + '/' + name + '.png'), None)
    image.delete()
    results[name] = {'status': status, 'message': message, 'seconds': seconds}
with open(WORK + '/results.json', 'w') as f:
    json.dump(results, f)
'''


def selection_ok(got, src, halftone, work):
    """A gray layer with SELECTION selected: inside, the CLI's halftone of
    the crop; outside, the original."""
    w, h, ch, orig = normalized(read_image(src))
    x0, y0, cw, chh = SELECTION
    img = read_image(src)
    crop = [img[4][(y * w + x)] for y in range(y0, y0 + chh) for x in range(x0, x0 + cw)]
    crop_path, ref_path = os.path.join(work, 'crop.pgm'), os.path.join(work, 'cli-crop.pgm')
    write_pnm(crop_path, 'P5', cw, chh, img[3], crop)
    subprocess.run([halftone, crop_path, ref_path], check=True)
    ref = normalized(read_image(ref_path))[3]
    want = list(orig)
    for y in range(chh):
        want[(y0 + y) * w + x0:(y0 + y) * w + x0 + cw] = ref[y * cw:(y + 1) * cw]
    return got == (w, h, ch, want)


def arguments_ok(args, describe_dump, check):
    """The procedure's arguments against the library's description
    (describe-dump): one a parameter, in its order, with the
    description's type, range (whole: every one fits GIMP's gint), default and
    list of choices."""
    desc = [json.loads(line) for line in subprocess.run([describe_dump], capture_output=True, text=True,
                                                          check=True).stdout.splitlines()]
    names = [a['name'] for a in args][3:]
    check(names == [d['name'] for d in desc],
          f'the arguments are the description\'s parameters in its order: {names}')
    by_name = {a['name']: a for a in args}
    for d in desc:
        a = by_name.get(d['name'])
        if a is None:
            continue
        t = d['type']
        if t in ('int', 'seed'):
            # whole: a seed the CLI takes must be one GIMP takes (issue 37)
            ok = a['type'] == 'gint' and a['minimum'] == d['min'] and \
                a['maximum'] == d['max'] and a['default_value'] == d['default']
        elif t == 'number':
            ok = a['type'] == 'gdouble' and (a['minimum'], a['maximum'], a['default_value']) == \
                (d['min'], d['max'], d['default'])
        elif t == 'bool':
            ok = a['type'] == 'gboolean' and a['default_value'] == bool(d['default'])
        elif t == 'choice':
            ok = a.get('choices') == d['choices'] and a['default_value'] in d['choices']
        else:
            ok = a['type'] == 'gchararray' and a['default_value'] == d['default_text']
        check(ok, f'argument {d["name"]} has the description\'s type, range, default and choices: {a}')


def main():
    plugin, gegl_path, halftone, describe_dump, photo, small, colour, work = sys.argv[1:9]
    gimp = shutil.which('gimp-console-3.0') or shutil.which('gimp-console-3')
    if not gimp:
        print('SKIP: needs gimp-console-3.0 (GIMP 3)')
        return 77
    work = os.path.abspath(work)
    shutil.rmtree(work, ignore_errors=True)
    plugdir = os.path.join(work, 'gimp3', 'plug-ins', 'halftone-gimp3-test')
    os.makedirs(plugdir)
    shutil.copy(plugin, os.path.join(plugdir, 'halftone-gimp3-test'))
    photo, small, colour = (os.path.abspath(p) for p in (photo, small, colour))
    # a layer with alpha, beside tiny.ppm
    rgba = os.path.join(os.path.dirname(colour), 'tiny-rgba.png')

    # (name, procedure, source, run mode, arguments, the CLI's options or
    # None where the call must fail and leave the layer)
    cases = [
        ('fs', 'plug-in-halftone', small, 'NONINTERACTIVE', {}, []),
        ('dbs', 'plug-in-halftone', small, 'NONINTERACTIVE',
         {'algorithm': 'dbs', 'init': 'random', 'seed': 7}, ['--algorithm', 'dbs', '--init', 'random', '--seed', '7']),
        ('les', 'plug-in-halftone', colour, 'NONINTERACTIVE',
         {'algorithm': 'les', 'window': 2, 'max-rounds': 2}, ['--algorithm', 'les', '--window', '2', '--max-rounds', '2']),
        ('perchan', 'plug-in-halftone', colour, 'NONINTERACTIVE',
         {'color-mode': 'per-channel', 'levels': 3, 'serpentine': True},
         ['--color', 'per-channel', '--levels', '3', '--serpentine']),
        # CMYK on a layer with alpha: the inks shown as RGB, alpha kept
        ('cmyk_alpha', 'plug-in-halftone', rgba, 'NONINTERACTIVE',
         {'color-mode': 'cmyk'}, ['--color', 'cmyk']),
        ('jjn3', 'plug-in-halftone', small, 'NONINTERACTIVE',
         {'algorithm': 'jarvis-judice-ninke', 'levels': 3}, ['--algorithm', 'jarvis-judice-ninke', '--levels', '3']),
        # a selection: its bounding box is halftoned whole, the rest stays
        ('selection', 'plug-in-halftone', small, 'NONINTERACTIVE', {'_select': SELECTION}, []),
        # Filters > Repeat's run mode: GIMP keeps the settings of
        # interactive runs only, so here it runs with the defaults
        ('repeat', 'plug-in-halftone', small, 'WITH_LAST_VALS', {}, []),
        ('badcoef', 'plug-in-halftone', small, 'NONINTERACTIVE',
         {'algorithm': 'custom', 'coefficients': '- * 7; 3 x'}, None),
        ('cancel', 'plug-in-halftone-test-cancel', photo, 'NONINTERACTIVE',
         {'algorithm': 'les', 'cancel-after-ms': 1000}, None),
    ]
    script = f'WORK = {work!r}\nCASES = {[c[:5] for c in cases]!r}\n' + SESSION
    with open(os.path.join(work, 'session.py'), 'w') as f:
        f.write(script)
    env = dict(os.environ, GEGL_PATH=gegl_path, GIMP3_DIRECTORY=os.path.join(work, 'gimp3'), LC_ALL='C.UTF-8')
    r = subprocess.run([gimp, '-i', '--no-data', '--no-fonts', '--batch-interpreter', 'python-fu-eval', '--quit',
                        '-b', f'exec(open({os.path.join(work, "session.py")!r}).read())'],
                       capture_output=True, text=True, env=env, timeout=900)
    log = r.stdout + r.stderr
    failures = 0

    def check(ok, msg):
        nonlocal failures
        print(('ok: ' if ok else 'FAIL: ') + msg)
        failures += 0 if ok else 1

    try:
        with open(os.path.join(work, 'results.json')) as f:
            results = json.load(f)
    except OSError:
        print(log[-3000:])
        check(False, 'the GIMP 3 session ran every case')
        return 1

    arguments_ok(results['_arguments'], describe_dump, check)
    for name, _, src, _, _, opts in cases:
        res = results[name]
        got = normalized(read_image(os.path.join(work, name + '.png')))
        if opts is None:
            check(res['status'] != 'success', f'{name}: the call failed ({res["status"]}: {res["message"]})')
            check(got == normalized(read_image(src)), f'{name}: the layer is untouched')
            continue
        check(res['status'] == 'success', f'{name}: the call succeeded ({res["status"]}: {res["message"]})')
        if name == 'selection':
            check(selection_ok(got, src, halftone, work), 'selection: the selected rectangle equals the CLI\'s '
                  'halftone of that crop, bit for bit, and the rest is untouched')
            continue
        colour_out = '--color' in opts
        # PNG keeps the alpha of an RGBA source, as GIMP's layer does
        ref_path = os.path.join(work, f'cli-{name}.' + ('png' if name.endswith('_alpha') else
                                                        'ppm' if colour_out else 'pgm'))
        rr = subprocess.run([halftone] + opts + [src, ref_path], capture_output=True, text=True)
        if rr.returncode != 0:
            check(False, f'{name}: halftone {" ".join(opts)}: {rr.stderr.strip()}')
            continue
        ref = normalized(read_image(ref_path))
        if name.endswith('_alpha'):
            # the CLI writes cmyk's view without alpha (with a notice); the
            # layer keeps its alpha: the alpha is the source's, the colours
            # the CLI's where a pixel shows (GIMP's PNG export writes the
            # colour of a fully transparent pixel as 0)
            srcn = normalized(read_image(src))
            shown = [p for p in range(ref[0] * ref[1]) if got[3][4 * p + 3] > 0]
            same = got[:3] == (ref[0], ref[1], 4) and ref[2] == 3 and got[3][3::4] == srcn[3][3::4] and \
                len(shown) > 0 and all(got[3][4 * p:4 * p + 3] == ref[3][3 * p:3 * p + 3] for p in shown)
        elif not colour_out and got[2] == 3:
            # luma of an RGB layer: the plug-in writes R = G = B
            same = got[:2] == ref[:2] and got[3][0::3] == ref[3] and got[3][1::3] == ref[3] and \
                got[3][2::3] == ref[3]
        else:
            same = got == ref
        check(same, f'{name}: GIMP 3 equals halftone {" ".join(opts)}, bit for bit')
    check('coefficients' in results['badcoef']['message'],
          f'badcoef: the message names the problem: {results["badcoef"]["message"]!r}')
    check('cancel' in results['cancel']['message'].lower(),
          f'cancel: the message says cancelled: {results["cancel"]["message"]!r}')
    print(f'info: cancel after 1.000 s: the call returned after {results["cancel"]["seconds"]:.3f} s')
    for line in log.splitlines():
        if line.startswith('halftone-gimp3-test:') and 'after the cancel' in line:
            print('info: ' + line)
    if failures:
        print(log[-3000:])
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
