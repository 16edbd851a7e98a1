#!/usr/bin/python3
"""Regenerates data/fixtures/ from data/coffee.png (run from anywhere).

Needs Pillow (Debian: python3-pil); the tests themselves do not. The
outputs are committed, so this only runs when a fixture has to change.

  photo-crop.pgm      257x193 P5 8-bit crop of the coffee photo, Rec. 709
                      luma of the stored sRGB values (the weights `halftone
                      --color luma` uses, rounded here in 8-bit units);
                      read by tests/core and tests/cli. Odd sizes on purpose: not a multiple of
                      8 (PBM padding) nor of any tile size.
  tiny.ppm            61x47 P6 8-bit colour crop
  tiny-rgba.png       61x47 RGBA 8-bit crop with an alpha ramp
  tiny-ga16.png       61x47 gray+alpha 16-bit
  tiny-palette.png    61x47 palette (indexed) PNG, 64 colours
"""
import os
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "fixtures")


def luma709(rgb):
    # Integer Rec. 709 weights on the stored values (no linearisation),
    # rounded half up; the library's weights are the same in 1/65536.
    r, g, b = rgb
    return (2126 * r + 7152 * g + 722 * b + 5000) // 10000


def main():
    os.makedirs(OUT, exist_ok=True)
    photo = Image.open(os.path.join(HERE, "coffee.png")).convert("RGB")

    crop = photo.crop((170, 60, 170 + 257, 60 + 193))
    gray = Image.new("L", crop.size)
    gray.putdata([luma709(p) for p in crop.getdata()])
    gray.save(os.path.join(OUT, "photo-crop.pgm"))  # Pillow writes P5

    tiny = photo.crop((250, 120, 250 + 61, 120 + 47))
    w, h = tiny.size
    alpha = Image.new("L", tiny.size)
    alpha.putdata([(x * 255) // (w - 1) for y in range(h) for x in range(w)])
    tiny.save(os.path.join(OUT, "tiny.ppm"))  # P6
    rgba = tiny.copy()
    rgba.putalpha(alpha)
    rgba.save(os.path.join(OUT, "tiny-rgba.png"))

    # 16-bit gray+alpha: Pillow has no LA;16 mode, so write it by hand.
    tg = [luma709(p) * 257 for p in tiny.getdata()]
    ta = [((x * 65535) // (w - 1)) for y in range(h) for x in range(w)]
    write_png_ga16(os.path.join(OUT, "tiny-ga16.png"), w, h, tg, ta)

    tiny.quantize(colors=64, dither=Image.Dither.NONE).save(
        os.path.join(OUT, "tiny-palette.png"))


def write_png_ga16(path, w, h, gray, alpha):
    import struct
    import zlib

    def chunk(kind, body):
        c = struct.pack(">I", len(body)) + kind + body
        return c + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)

    raw = bytearray()
    for y in range(h):
        raw.append(0)  # filter: none
        for x in range(w):
            raw += struct.pack(">HH", gray[y * w + x], alpha[y * w + x])
    png = b"\x89PNG\r\n\x1a\n"
    png += chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 16, 4, 0, 0, 0))
    png += chunk(b"IDAT", zlib.compress(bytes(raw), 9))
    png += chunk(b"IEND", b"")
    with open(path, "wb") as f:
        f.write(png)


if __name__ == "__main__":
    main()
