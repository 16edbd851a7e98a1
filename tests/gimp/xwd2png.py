#!/usr/bin/env python3
"""xwd2png.py IN.xwd OUT.png [X Y W H]: a TrueColor ZPixmap screen dump
(xwd -root) to an RGB PNG, or a crop of it; for screenshots where no
image tool is installed (imageio/pnm.py writes the PNG)."""
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'imageio'))
from pnm import write_png  # noqa: E402


def read_xwd(data):
    """An xwd dump, undecoded: (width, height, the header's fields, pixel
    data); rows are decoded only where crop_rgb asks."""
    h = struct.unpack('>25I', data[:100])
    return h[4], h[5], h, data[h[0] + h[19] * 12:]


def crop_raw(img, x, y, w, h):
    """The dump's own bytes of a rectangle: enough to tell whether it
    changed."""
    _, _, hdr, pix = img
    step, bpl = hdr[11] // 8, hdr[12]
    return b''.join(pix[yy * bpl + x * step:yy * bpl + (x + w) * step] for yy in range(y, y + h))


def crop_rgb(img, x, y, w, h):
    _, _, hdr, pix = img
    order, step, bpl, masks = hdr[7], hdr[11] // 8, hdr[12], hdr[14:17]
    shifts = [(m & -m).bit_length() - 1 for m in masks]
    out = bytearray()
    for yy in range(y, y + h):
        row = pix[yy * bpl:yy * bpl + bpl]
        for xx in range(x, x + w):
            v = int.from_bytes(row[xx * step:xx * step + step], 'little' if order == 0 else 'big')
            out += bytes(((v & m) >> s) & 255 for m, s in zip(masks, shifts))
    return out


def write_crop(img, path, x, y, w, h):
    w, h = min(w, img[0] - x), min(h, img[1] - y)
    write_png(path, w, h, 3, 8, list(crop_rgb(img, x, y, w, h)))


if __name__ == '__main__':
    with open(sys.argv[1], 'rb') as f:
        image = read_xwd(f.read())
    box = [int(v) for v in sys.argv[3:7]] if len(sys.argv) > 6 else [0, 0, image[0], image[1]]
    write_crop(image, sys.argv[2], *box)
