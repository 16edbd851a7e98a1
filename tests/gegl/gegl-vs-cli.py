#!/usr/bin/env python3
"""The `gegl` command line with halftone:dither gives exactly the pixels
the `halftone` CLI gives for the same parameters, on a real photograph.

Usage: gegl-vs-cli.py GEGL HALFTONE PHOTO WORKDIR
Exit 77 (skip) when the gegl program or the halftone CLI is missing.
Python standard library only (zlib PNG and PGM readers below).
"""
import os
import shutil
import struct
import subprocess
import sys
import zlib


def read_png(path):
    """Returns (width, height, channels, maxval, flat list of samples)."""
    with open(path, 'rb') as f:
        data = f.read()
    if data[:8] != b'\x89PNG\r\n\x1a\n':
        raise ValueError(f'{path}: not a PNG')
    pos, idat, hdr = 8, b'', None
    while pos < len(data):
        n, kind = struct.unpack('>I4s', data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b'IHDR':
            hdr = struct.unpack('>IIBBBBB', body)
        elif kind == b'IDAT':
            idat += body
        elif kind == b'IEND':
            break
    w, h, depth, ctype, _, _, interlace = hdr
    if interlace or depth not in (8, 16) or ctype not in (0, 2, 4, 6):
        raise ValueError(f'{path}: unsupported PNG (depth {depth}, type {ctype}, interlace {interlace})')
    ch = {0: 1, 2: 3, 4: 2, 6: 4}[ctype]
    bps = depth // 8
    bpp = ch * bps
    stride = w * bpp
    raw = zlib.decompress(idat)
    out = bytearray()
    prev = bytearray(stride)
    for y in range(h):
        ft = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if ft == 1:
                line[i] = (line[i] + a) & 255
            elif ft == 2:
                line[i] = (line[i] + b) & 255
            elif ft == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif ft == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pr = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pr) & 255
        out += line
        prev = line
    if bps == 2:
        samples = list(struct.unpack(f'>{len(out) // 2}H', out))
    else:
        samples = list(out)
    return w, h, ch, (1 << depth) - 1, samples


def read_pnm(path):
    with open(path, 'rb') as f:
        data = f.read()
    fields, pos = [], 0
    while len(fields) < 4:
        while data[pos:pos + 1].isspace():
            pos += 1
        if data[pos:pos + 1] == b'#':
            while data[pos:pos + 1] not in (b'\n', b''):
                pos += 1
            continue
        start = pos
        while not data[pos:pos + 1].isspace():
            pos += 1
        fields.append(data[start:pos])
    pos += 1
    magic, w, h, maxval = fields[0], int(fields[1]), int(fields[2]), int(fields[3])
    ch = {b'P5': 1, b'P6': 3}[magic]
    n = w * h * ch
    if maxval > 255:
        samples = list(struct.unpack(f'>{n}H', data[pos:pos + 2 * n]))
    else:
        samples = list(data[pos:pos + n])
    return w, h, ch, maxval, samples


def read_image(path):
    return read_png(path) if path.endswith('.png') else read_pnm(path)


def normalized(img):
    """Samples scaled to 0..65535 so 8- and 16-bit files compare."""
    w, h, ch, maxval, s = img
    return w, h, ch, [v * 65535 // maxval for v in s]


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
]


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
        a = os.path.join(work, f'gegl-{k}.png')
        b = os.path.join(work, f'cli-{k}{ext}')
        for p in (a, b):
            if os.path.exists(p):
                os.remove(p)
        r1 = subprocess.run([gegl, photo, '-o', a, '--', 'halftone:dither'] + props,
                            capture_output=True, text=True)
        r2 = subprocess.run([halftone] + opts + [photo, b], capture_output=True, text=True)
        if r1.returncode != 0 or not os.path.exists(a):
            print(f'FAIL case {k}: gegl failed ({r1.returncode}): {r1.stderr.strip()}')
            failed += 1
            continue
        if r2.returncode != 0 or not os.path.exists(b):
            print(f'FAIL case {k}: halftone failed ({r2.returncode}): {r2.stderr.strip()}')
            failed += 1
            continue
        ga, cb = normalized(read_image(a)), normalized(read_image(b))
        if ga[:3] != cb[:3]:
            print(f'FAIL case {k}: gegl gives {ga[:3]}, halftone gives {cb[:3]} (w, h, channels)')
            failed += 1
            continue
        diff = sum(1 for x, y in zip(ga[3], cb[3]) if x != y)
        levels = sorted(set(ga[3]))
        if diff or len(levels) < 2:
            print(f'FAIL case {k} {props}: {diff} of {len(ga[3])} samples differ; gegl levels {levels[:8]}')
            failed += 1
        else:
            print(f'ok case {k} {props}: {ga[0]}x{ga[1]}x{ga[2]} identical, levels {levels}')

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
    ref = os.path.join(work, 'gegl-1.png')
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
