#!/usr/bin/env python3
"""Tests of the print formats of the `halftone` command line (suite cli):
TIFF in and out, JPEG in, resolution and ICC profiles kept, pipes, and
malformed TIFF and JPEG files refused. Python stdlib only; Debian's
libtiff-tools (tiffinfo, tiffcp, tiff2pdf) and libjpeg-turbo-progs
(cjpeg, djpeg) are the independent readers and writers where a case needs
them (it skips, 77, without them).

    test_formats.py HALFTONE DATA_DIR CASE
"""
import os
import pty
import re
import shutil
import struct
import subprocess
import sys
import tempfile

# cases.py one folder up; pnm.py in imageio/, shared with tools/bench/
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "imageio"))
from cases import Skip, check, run_case  # noqa: E402
from pnm import FormatError, png_chunk, read_pnm, write_pnm  # noqa: E402

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def on_terminal(*argv):
    """Runs argv with a pseudo-terminal as standard input, output and
    error; returns the wait status and all it wrote there."""
    try:
        pid, fd = pty.fork()
    except OSError as e:  # a container without /dev/pts
        raise Skip("no pseudo-terminal: %s" % e)
    if pid == 0:
        os.execv(argv[0], list(argv))
    text = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        text += chunk
    _, status = os.waitpid(pid, 0)
    return status, text


class Env:
    def __init__(self, halftone, data):
        self.halftone, self.data = halftone, data
        self.dir = tempfile.mkdtemp(prefix="ht-formats-")
        self.crop = os.path.join(data, "fixtures", "photo-crop.pgm")

    def path(self, name):
        return os.path.join(self.dir, name)

    def run(self, *args, stdin=None, tool=None):
        p = subprocess.run([tool or self.halftone] + [str(a) for a in args], input=stdin,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
        return p.returncode, p.stdout, p.stderr.decode()

    def ok(self, *args, stdin=None):
        rc, out, err = self.run("--quiet", *args, stdin=stdin)
        check(rc == 0, "halftone %s: exit %d, stderr %r" % (" ".join(map(str, args)), rc, err))
        return out

    def need(self, *tools):
        for t in tools:
            if not shutil.which(t):
                raise Skip("%s is not installed (tools/install-deps.sh installs it)" % t)

    def need_tiff(self):
        rc, _, err = self.run("--quiet", self.crop, self.path("probe.tif"))
        if rc != 0 and "no TIFF support" in err:
            raise Skip("this build has no TIFF support")

    def need_jpeg(self):
        p = self.path("probe.jpg")
        with open(p, "wb") as f:
            f.write(b"\xff\xd8\xff\xe0" + b"\0" * 20)
        rc, _, err = self.run("--quiet", p, self.path("probe.pgm"))
        if "no JPEG support" in err:
            raise Skip("this build has no JPEG support")


def read(path):
    with open(path, "rb") as f:
        return f.read()


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


# ------------------------------------------------------------ TIFF by hand

def tiff(w, h, bps, spp, photometric, pixels, extra=(), strips=None, big_endian=False, compression=1):
    """A TIFF of one image written here, independently of libtiff: the
    pixel bytes as given (one strip unless `strips` lists (offset, count)
    overrides), tags sorted. `extra` adds (tag, type, values) entries."""
    e = ">" if big_endian else "<"
    head = (b"MM\0*" if big_endian else b"II*\0")
    data_off = 8
    entries = [(256, 4, [w]), (257, 4, [h]), (258, 3, [bps] * spp), (259, 3, [compression]),
               (262, 3, [photometric]), (273, 4, [data_off] if strips is None else [s[0] for s in strips]),
               (277, 3, [spp]), (278, 4, [h]),
               (279, 4, [len(pixels)] if strips is None else [s[1] for s in strips])]
    entries += list(extra)
    entries.sort()
    size = {3: 2, 4: 4, 5: 8}
    ifd = data_off + len(pixels)
    ifd += ifd & 1
    body_off = ifd + 2 + 12 * len(entries) + 4
    ifd_bytes, body = b"", b""
    for tag, typ, vals in entries:
        if typ == 5:
            raw = b"".join(struct.pack(e + "II", n, d) for n, d in vals)
        elif typ == 7:
            raw = bytes(vals)
        else:
            raw = b"".join(struct.pack(e + ("H" if typ == 3 else "I"), v) for v in vals)
        count = len(vals)
        if len(raw) <= 4:
            ifd_bytes += struct.pack(e + "HHI", tag, typ, count) + raw.ljust(4, b"\0")
        else:
            ifd_bytes += struct.pack(e + "HHII", tag, typ, count, body_off + len(body))
            body += raw + (b"\0" if len(raw) & 1 else b"")
    out = head + struct.pack(e + "I", ifd) + pixels
    out += b"\0" * (ifd - len(out))
    return out + struct.pack(e + "H", len(entries)) + ifd_bytes + b"\0\0\0\0" + body


def tiff_tags(data):
    """{tag: (type, count, values or raw bytes)} of a little- or big-endian
    classic TIFF's first directory."""
    e = "<" if data[:2] == b"II" else ">"
    ifd = struct.unpack(e + "I", data[4:8])[0]
    n = struct.unpack(e + "H", data[ifd:ifd + 2])[0]
    tags = {}
    for i in range(n):
        tag, typ, count, val = struct.unpack(e + "HHI4s", data[ifd + 2 + 12 * i: ifd + 14 + 12 * i])
        size = {1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 7: 1, 16: 8}.get(typ, 1) * count
        raw = val[:size] if size <= 4 else data[struct.unpack(e + "I", val)[0]:][:size]
        if typ == 3:
            v = list(struct.unpack(e + "%dH" % count, raw))
        elif typ == 4:
            v = list(struct.unpack(e + "%dI" % count, raw))
        elif typ == 5:
            v = [(a, b) for a, b in zip(*[iter(struct.unpack(e + "%dI" % (2 * count), raw))] * 2)]
        else:
            v = raw
        tags[tag] = (typ, count, v)
    return tags


def tiff_bits(path, env):
    """The rows of a 1-bit TIFF as bytes, decompressed by tiffcp (libtiff's
    own tool) and read here from its plain strips."""
    plain = path + ".plain.tif"
    subprocess.run(["tiffcp", "-c", "none", "-r", "1000000", path, plain], check=True, capture_output=True)
    data = read(plain)
    t = tiff_tags(data)
    off, count = t[273][2][0], t[279][2][0]
    return data[off:off + count], t


def png_phys_dpi(path):
    data = read(path)
    i = data.find(b"pHYs")
    if i < 0:
        return None
    x, y, unit = struct.unpack(">IIB", data[i + 4:i + 13])
    return (round(x * 0.0254, 2), round(y * 0.0254, 2)) if unit == 1 else None


def tiff_dpi(path):
    t = tiff_tags(read(path))
    if 282 not in t:
        return None
    (xn, xd), = t[282][2]
    (yn, yd), = t[283][2]
    unit = t.get(296, (3, 1, [2]))[2][0]
    f = 2.54 if unit == 3 else 1.0
    return round(xn / xd * f, 2), round(yn / yd * f, 2)


def icc_profile(space, desc):
    """A minimal ICC profile: header (size, version 2.1, class 'mntr', the
    colour space, 'acsp', the D50 illuminant) and a 'desc' tag."""
    text = desc.encode() + b"\0"
    tag = b"desc\0\0\0\0" + struct.pack(">I", len(text)) + text + b"\0" * 79
    tag += b"\0" * (-len(tag) % 4)
    count = 1
    off = 128 + 4 + 12 * count
    size = off + len(tag)
    head = struct.pack(">I4sI4s4s4s", size, b"none", 0x02100000, b"mntr", space, b"XYZ ") + b"\0" * 12 + b"acsp"
    head = head.ljust(68, b"\0") + struct.pack(">iii", 63190, 65536, 54061)
    head = head.ljust(128, b"\0")
    return head + struct.pack(">I", count) + b"desc" + struct.pack(">II", off, len(tag)) + tag


def png_with(path, w, h, gray, chunks):
    import zlib
    raw = b"".join(b"\0" + bytes(gray[y * w:(y + 1) * w]) for y in range(h))
    write(path, PNG_SIGNATURE + png_chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0))
          + b"".join(png_chunk(k, v) for k, v in chunks)
          + png_chunk(b"IDAT", zlib.compress(raw)) + png_chunk(b"IEND", b""))


# ------------------------------------------------------------ cases

def case_tiff_g4(env):
    """PGM -> 1-bit G4 TIFF: the bits are the PBM's; the file is what
    libtiff's tools read (tiffinfo -D decodes every strip, tiff2pdf passes
    the G4 data into a PDF); the TIFF read back gives the PGM bit for bit;
    and an 8-bit TIFF round trip keeps every sample."""
    env.need_tiff()
    env.need("tiffinfo", "tiffcp", "tiff2pdf")
    pbm, tif = env.path("a.pbm"), env.path("a.tif")
    env.ok(env.crop, pbm)
    env.ok(env.crop, tif)
    t = tiff_tags(read(tif))
    check(t[259][2] == [4] and t[258][2] == [1] and t[262][2] == [0],
          "compression %s, bits %s, photometric %s: not G4 min-is-white" % (t[259][2], t[258][2], t[262][2]))
    p = read_pnm(pbm)
    bits, _ = tiff_bits(tif, env)
    rb = (p.width + 7) // 8
    ours = read(pbm)[-rb * p.height:]
    check(bits == ours, "the G4 TIFF's bits differ from the PBM's")
    info = subprocess.run(["tiffinfo", "-D", tif], capture_output=True, text=True)
    check(info.returncode == 0 and "CCITT Group 4" in info.stdout and not re.search(r"(?i)error", info.stderr),
          "tiffinfo -D: %r" % info.stderr)
    pdf = env.path("a.pdf")
    r = subprocess.run(["tiff2pdf", "-o", pdf, tif], capture_output=True, text=True)
    check(r.returncode == 0 and read(pdf).startswith(b"%PDF") and b"/CCITTFaxDecode" in read(pdf),
          "tiff2pdf: exit %d, %r" % (r.returncode, r.stderr))
    # TIFF -> PBM and PGM: 256 levels of 0/255 keep every pixel
    env.ok(tif, env.path("back.pbm"))
    check(read(env.path("back.pbm")) == read(pbm), "G4 TIFF -> PBM differs from the PBM")
    env.ok("--levels", "256", tif, env.path("back.pgm"))
    env.ok("--levels", "256", pbm, env.path("ref.pgm"))
    check(read(env.path("back.pgm")) == read(env.path("ref.pgm")), "G4 TIFF -> PGM differs")
    # continuous tone: PGM -> 8-bit TIFF (Deflate, LZW, none) -> PGM
    for comp in ("deflate", "lzw", "none"):
        t8 = env.path("c-%s.tif" % comp)
        env.ok("--levels", "256", "--compression", comp, env.crop, t8)
        env.ok("--levels", "256", t8, env.path("c.pgm"))
        check(read_pnm(env.path("c.pgm")).samples == read_pnm(env.crop).samples,
              "PGM -> %s TIFF -> PGM changed samples" % comp)
    # several strips, coded by several threads at once: the bits are the
    # PBM's, and every strip's bytes are those tiffcp codes one by one
    w, h = 2048, 1100
    big = env.path("big.pgm")
    write_pnm(big, "P5", w, h, 255, [(x * 7 + y * 3 + (x * y) % 91) % 256 for y in range(h) for x in range(w)])
    env.ok(big, env.path("big.pbm"))
    env.ok(big, env.path("big.tif"))
    bits, t = tiff_bits(env.path("big.tif"), env)
    check(bits == read(env.path("big.pbm"))[-(w // 8) * h:], "multi-strip G4 TIFF: bits differ from the PBM")
    data = read(env.path("big.tif"))
    t = tiff_tags(data)
    rows = t[278][2][0]
    check(len(t[273][2]) > 1, "the 2048x1100 G4 TIFF has one strip (rows per strip %d)" % rows)
    seq = env.path("seq.tif")
    subprocess.run(["tiffcp", "-c", "g4", "-r", str(rows), env.path("big.tif.plain.tif"), seq], check=True,
                   capture_output=True)
    sd = read(seq)
    st = tiff_tags(sd)
    ours = [data[o:o + c] for o, c in zip(t[273][2], t[279][2])]
    theirs = [sd[o:o + c] for o, c in zip(st[273][2], st[279][2])]
    check(ours == theirs, "G4 strips coded in parallel differ from libtiff's sequential coding")
    env.ok("--levels", "256", big, env.path("big8.tif"))
    env.ok("--levels", "256", env.path("big8.tif"), env.path("big8.pgm"))
    check(len(tiff_tags(read(env.path("big8.tif")))[273][2]) > 1 and
          read_pnm(env.path("big8.pgm")).samples == read_pnm(big).samples, "multi-strip Deflate round trip")
    rc, _, err = env.run("--levels", "4", "--compression", "g4", env.crop, env.path("x.tif"))
    check(rc == 2 and "g4 holds 1-bit gray only" in err and not os.path.exists(env.path("x.tif")),
          "--compression g4 with 4 levels: %d %r" % (rc, err))


def case_tiff_read(env):
    """16-bit TIFF -> the same pixels as the 16-bit PGM (the halftone of
    each, 2 and 256 levels, bit for bit), whatever libtiff's tools make of
    the file: LZW, Deflate, PackBits, tiles, big-endian, planar RGB; and
    CMYK, 1-bit, MinIsWhite and associated alpha read as defined."""
    env.need_tiff()
    env.need("tiffcp")
    w, h = 37, 23
    gray16 = [(x * 1791 + y * 2897 + (x * y * 131) % 4099) % 65536 for y in range(h) for x in range(w)]
    pgm = env.path("g16.pgm")
    write_pnm(pgm, "P5", w, h, 65535, gray16)
    base = env.path("g16.tif")
    write(base, tiff(w, h, 16, 1, 1, struct.pack("<%dH" % len(gray16), *gray16)))
    rgb16 = [(v * 7 + c * 9000) % 65536 for v in gray16 for c in range(3)]
    ppm = env.path("c16.ppm")
    write_pnm(ppm, "P6", w, h, 65535, rgb16)
    cbase = env.path("c16.tif")
    write(cbase, tiff(w, h, 16, 3, 2, struct.pack(">%dH" % len(rgb16), *rgb16), big_endian=True))
    rgb8 = [v >> 8 for v in rgb16]
    ppm8 = env.path("c8.ppm")
    write_pnm(ppm8, "P6", w, h, 255, rgb8)
    c8 = env.path("c8.tif")
    write(c8, tiff(w, h, 8, 3, 2, bytes(rgb8)))
    variants = [[], ["-c", "lzw"], ["-c", "zip"], ["-c", "packbits"], ["-t", "-w", "16", "-l", "16"],
                ["-B"], ["-c", "zip", "-r", "5"]]
    for src, ref, color in ((base, pgm, []), (cbase, ppm, ["--color", "per-channel"]),
                            (c8, ppm8, ["--color", "per-channel"])):
        for levels in ("2", "256"):
            env.ok("--levels", levels, *color, ref, env.path("ref.png"))
            want = read(env.path("ref.png"))
            planar = [["-p", "separate"], ["-p", "separate", "-t", "-w", "16", "-l", "16", "-c", "lzw"]]
            for v in variants + (planar if src == c8 else []):
                t = env.path("v.tif")
                subprocess.run(["tiffcp"] + v + [src, t], check=True, capture_output=True)
                env.ok("--levels", levels, *color, t, env.path("got.png"))
                check(read(env.path("got.png")) == want,
                      "%s via tiffcp %s, %s levels: not the pixels of %s" % (os.path.basename(src), " ".join(v),
                                                                             levels, os.path.basename(ref)))
    # 8-bit CMYK: R = (255-C)(255-K)/255 rounded, per channel
    cmyk = [(x * 11) % 256 if c < 3 else (y * 9) % 256 for y in range(h) for x in range(w) for c in range(4)]
    ct = env.path("cmyk.tif")
    write(ct, tiff(w, h, 8, 4, 5, bytes(cmyk), extra=[(332, 3, [1])]))
    env.ok("--levels", "256", "--color", "per-channel", ct, env.path("cmyk.ppm"))
    got = read_pnm(env.path("cmyk.ppm")).samples
    want = [((255 - cmyk[4 * i + c]) * (255 - cmyk[4 * i + 3]) + 127) // 255 for i in range(w * h) for c in range(3)]
    check(got == want, "CMYK TIFF: not R = (1-C)(1-K)")
    rc, _, err = env.run("--levels", "256", "--color", "per-channel", ct, env.path("cmyk2.ppm"))
    check(rc == 0 and "CMYK converted to RGB" in err, "CMYK: no notice (%r)" % err)
    # 1-bit MinIsWhite and MinIsBlack: the same picture read either way
    rb = (w + 7) // 8
    bits = bytes((x * 37 + y * 11) % 256 for y in range(h) for x in range(rb))
    write(env.path("w.tif"), tiff(w, h, 1, 1, 0, bits))
    write(env.path("b.tif"), tiff(w, h, 1, 1, 1, bytes(255 - b for b in bits)))
    env.ok("--levels", "256", env.path("w.tif"), env.path("w.pgm"))
    env.ok("--levels", "256", env.path("b.tif"), env.path("b.pgm"))
    gw = read_pnm(env.path("w.pgm")).samples
    check(gw == read_pnm(env.path("b.pgm")).samples, "MinIsWhite and MinIsBlack of one picture differ")
    check(gw[:8] == [0 if (bits[0] >> (7 - i)) & 1 else 255 for i in range(8)], "1-bit MinIsWhite: 1 is not black")
    # two pages: the first is read, and the run says so
    two = env.path("two.tif")
    subprocess.run(["tiffcp", env.path("w.tif"), base, two], check=True, capture_output=True)
    rc, _, err = env.run("--levels", "256", two, env.path("p1.pgm"))
    check(rc == 0 and "2 pages; the first" in err and read(env.path("p1.pgm")) == read(env.path("w.pgm")),
          "two pages: %d %r" % (rc, err))


def case_jpeg(env):
    """JPEG decoded pixels equal libjpeg's reference decoder (djpeg) for
    gray, colour and progressive files: 256 levels keep every pixel."""
    env.need_jpeg()
    env.need("cjpeg", "djpeg")
    tiny = os.path.join(env.data, "fixtures", "tiny.ppm")
    for name, src, opts in (("gray", env.crop, []), ("color", tiny, []), ("prog", tiny, ["-progressive"]),
                            ("gray-prog", env.crop, ["-progressive", "-quality", "95"]),
                            ("sub", tiny, ["-sample", "2x2", "-quality", "60"])):
        j = env.path(name + ".jpg")
        write(j, subprocess.run(["cjpeg"] + opts + [src], check=True, capture_output=True).stdout)
        ref = env.path(name + "-ref.pnm")
        write(ref, subprocess.run(["djpeg", "-pnm", j], check=True, capture_output=True).stdout)
        r = read_pnm(ref)
        out = env.path(name + (".pgm" if r.channels == 1 else ".ppm"))
        env.ok("--levels", "256", *(["--color", "per-channel"] if r.channels == 3 else []), j, out)
        check(read_pnm(out).samples == r.samples, "%s JPEG: pixels differ from djpeg's" % name)
    # CMYK and YCCK with an Adobe marker (inks stored inverted), written by
    # libjpeg at quality 100: quadrants of C 255, M 128, Y 64 and K 200
    corpus = os.path.join(env.data, "..", "tests", "fuzz", "corpus", "imageio")
    for name in ("cmyk-adobe.jpg", "ycck-adobe.jpg"):
        out = env.path(name + ".ppm")
        env.ok("--levels", "256", "--color", "per-channel", os.path.join(corpus, name), out)
        px = read_pnm(out).samples
        for (x, y), want in (((2, 2), (0, 255, 255)), ((12, 2), (255, 127, 255)), ((2, 12), (255, 255, 191)),
                             ((12, 12), (55, 55, 55))):
            got = px[3 * (y * 16 + x):3 * (y * 16 + x) + 3]
            check(all(abs(g - v) <= 2 for g, v in zip(got, want)), "%s at (%d, %d): %s, not about %s"
                  % (name, x, y, got, want))


def case_resolution(env):
    """The input's resolution goes into PNG and TIFF output (PNG pHYs, TIFF
    X/YResolution in cm, JPEG JFIF density); --dpi sets it; netpbm output
    cannot hold one and says so."""
    env.need_tiff()
    w, h = 24, 16
    gray = [(x * 10 + y * 5) % 256 for y in range(h) for x in range(w)]
    png = env.path("r.png")
    png_with(png, w, h, gray, [(b"pHYs", struct.pack(">IIB", 11811, 23622, 1))])  # 300 x 600 dpi
    for out in ("o.tif", "o.png"):
        env.ok(png, env.path(out))
    check(tiff_dpi(env.path("o.tif")) == (300.0, 600.0), "PNG -> TIFF: %s" % (tiff_dpi(env.path("o.tif")),))
    check(png_phys_dpi(env.path("o.png")) == (300.0, 600.0), "PNG -> PNG: %s" % (png_phys_dpi(env.path("o.png")),))
    # TIFF in centimetres -> PNG and TIFF (in inches)
    t = env.path("cm.tif")
    write(t, tiff(w, h, 8, 1, 1, bytes(gray), extra=[(282, 5, [(472, 1)]), (283, 5, [(472, 1)]), (296, 3, [3])]))
    env.ok(t, env.path("cm.png"))
    env.ok(t, env.path("cm-out.tif"))
    check(png_phys_dpi(env.path("cm.png")) == (1198.88, 1198.88), "TIFF (cm) -> PNG: %s"
          % (png_phys_dpi(env.path("cm.png")),))
    check(tiff_dpi(env.path("cm-out.tif")) == (1198.88, 1198.88), "TIFF -> TIFF: %s" % (tiff_dpi(env.path("cm-out.tif")),))
    # --dpi wins
    env.ok("--dpi", "1200", png, env.path("d.tif"))
    check(tiff_dpi(env.path("d.tif")) == (1200.0, 1200.0), "--dpi 1200: %s" % (tiff_dpi(env.path("d.tif")),))
    env.ok("--dpi", "2400", t, env.path("d.png"))
    check(png_phys_dpi(env.path("d.png")) == (2400.0, 2400.0), "--dpi 2400 into PNG")
    rc, _, err = env.run("--dpi", "600", png, env.path("d.pbm"))
    check(rc == 0 and "PBM has no place for a resolution" in err, "--dpi into PBM: %r" % err)
    rc, out, _ = env.run("--metrics", png, "/dev/null")
    check(b"input resolution: 300 x 600 dpi" in out, "--metrics: %r" % out)
    # JPEG JFIF density (dots per cm here) -> TIFF
    if shutil.which("cjpeg") and "no JPEG support" not in env.run(png, env.path("p.pgm"))[2]:
        pgm = env.path("r.pgm")
        write_pnm(pgm, "P5", w, h, 255, gray)
        j = bytearray(subprocess.run(["cjpeg", pgm], check=True, capture_output=True).stdout)
        check(j[6:11] == b"JFIF\0", "cjpeg wrote no JFIF header")
        j[13:18] = struct.pack(">BHH", 2, 100, 100)  # 100 dots/cm = 254 dpi
        write(env.path("r.jpg"), bytes(j))
        env.ok(env.path("r.jpg"), env.path("j.tif"))
        check(tiff_dpi(env.path("j.tif")) == (254.0, 254.0), "JPEG -> TIFF: %s" % (tiff_dpi(env.path("j.tif")),))


def case_icc(env):
    """An ICC profile: kept where the output holds it and its colour space
    is the output's, reported by --metrics, and a notice where it is not
    kept."""
    env.need_tiff()
    w, h = 16, 8
    gray = [(x * 16) % 256 for y in range(h) for x in range(w)]
    import zlib
    prof = icc_profile(b"GRAY", "Test Gray Profile")
    png = env.path("icc.png")
    png_with(png, w, h, gray, [(b"iCCP", b"test\0\0" + zlib.compress(prof))])
    env.ok(png, env.path("g.tif"))
    t = tiff_tags(read(env.path("g.tif")))
    check(34675 in t and t[34675][2] == prof, "gray ICC profile not kept in the TIFF")
    env.ok(png, env.path("g.png"))
    d = read(env.path("g.png"))
    i = d.find(b"iCCP")
    check(i > 0 and zlib.decompress(d[i + 4 + d[i + 4:].index(b"\0") + 2:]
                                    [:struct.unpack(">I", d[i - 4:i])[0] - (d[i + 4:].index(b"\0") + 2)]) == prof,
          "gray ICC profile not kept in the PNG")
    rc, out, _ = env.run("--metrics", png, env.path("m.tif"))
    check(rc == 0 and b"input ICC profile: Test Gray Profile (GRAY, %d bytes), kept" % len(prof) in out,
          "--metrics: %r" % out)
    rgb = icc_profile(b"RGB ", "Test RGB")
    rgb_tif = env.path("rgb.tif")
    write(rgb_tif, tiff(w, h, 8, 3, 2, bytes(v for v in gray for _ in range(3)), extra=[(34675, 7, list(rgb))]))
    env.ok("--levels", "256", "--color", "per-channel", rgb_tif, env.path("rgb-out.tif"))
    check(tiff_tags(read(env.path("rgb-out.tif"))).get(34675, (0, 0, b""))[2] == rgb,
          "RGB ICC profile not kept in RGB output")
    rc, _, err = env.run(rgb_tif, env.path("r.tif"))
    check(rc == 0 and "ICC profile (Test RGB, RGB) is not kept" in err, "RGB profile on gray output: %r" % err)
    check(34675 not in tiff_tags(read(env.path("r.tif"))), "an RGB profile was put on a gray TIFF")
    # the bundled sample's sRGB profile, one libpng calls "known incorrect",
    # goes out to a colour PNG as it came in
    sample = os.path.join(env.data, "sample.png")
    env.ok("--color", "per-channel", sample, env.path("sample-rgb.png"))
    check(b"iCCP" in read(env.path("sample-rgb.png"))[:4096], "the sample's ICC profile not kept in the PNG")


def case_pipes(env):
    """- as INPUT (every format, told by its signature) and as OUTPUT (with
    --format); a terminal is refused; printed figures go to stderr; an
    endless TIFF or JPEG stream is cut off."""
    env.need_tiff()
    env.ok(env.crop, env.path("ref.pbm"))
    ref = read(env.path("ref.pbm"))
    out = env.ok("-", "--format", "pbm", "-", stdin=read(env.crop))
    check(out == ref, "PGM on stdin -> PBM on stdout differs from the file run")
    env.ok(env.crop, env.path("ref.tif"))
    tif = env.ok("-", "--format", "tiff", "-", stdin=read(env.crop))
    write(env.path("pipe.tif"), tif)
    env.ok(env.path("pipe.tif"), env.path("pipe.pbm"))
    check(read(env.path("pipe.pbm")) == ref, "TIFF written to a pipe does not read back")
    out = env.ok("-", "--format", "pbm", "-", stdin=tif)
    check(out == ref, "TIFF on stdin differs")
    png = env.ok("-", "--format", "png", "-", stdin=read(env.crop))
    check(png.startswith(PNG_SIGNATURE), "PNG on stdout")
    rc, out, err = env.run("--metrics", "-", "--format", "pbm", "-", stdin=read(env.crop))
    check(rc == 0 and out == ref and "mean tone error" in err, "--metrics with OUTPUT -: figures on stdout")
    rc, _, err = env.run(env.crop, "-")
    check(rc == 2 and "needs --format" in err, "OUTPUT - without --format: %d %r" % (rc, err))
    # standard output on a terminal: refused before any work
    status, text = on_terminal(env.halftone, "--format", "pbm", env.crop, "-")
    check(os.WEXITSTATUS(status) == 1 and b"standard output is a terminal" in text and b"P4" not in text,
          "binary output to a terminal: %r" % text)
    # standard input on a terminal: refused, not waited on
    status, text = on_terminal(env.halftone, "-", env.path("tty.pbm"))
    check(os.WEXITSTATUS(status) == 1 and b"standard input: is a terminal" in text
          and not os.path.exists(env.path("tty.pbm")), "INPUT - on a terminal: %r" % text)
    # endless streams: a TIFF or JPEG header and then zeros for ever
    bigtiff = b"II+\0\x08\0\0\0" + struct.pack("<Q", 16) + struct.pack("<Q", 2) + \
        struct.pack("<HHQQ", 256, 4, 1, 64) + struct.pack("<HHQQ", 257, 4, 1, 64)
    for name, head in (("TIFF", tiff(64, 64, 8, 1, 1, b"\0" * 64 * 64)[:200]), ("BigTIFF", bigtiff),
                       ("JPEG", b"\xff\xd8\xff\xe0\0\x10JFIF\0")):
        p = subprocess.Popen("cat; exec cat /dev/zero", shell=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        p.stdin.write(head)
        p.stdin.close()
        r = subprocess.run([env.halftone, "-", env.path("endless.pbm")], stdin=p.stdout, capture_output=True,
                           timeout=120)
        p.kill()
        p.wait()
        err = r.stderr.decode()
        check(r.returncode == 1 and len(err.splitlines()) == 1 and not os.path.exists(env.path("endless.pbm")),
              "endless %s stream: %d %r" % (name, r.returncode, err))


def case_hostile(env):
    """Malformed TIFF and JPEG files: one line, exit 1, no output, an
    existing output untouched."""
    env.need_tiff()
    env.need_jpeg()
    w, h = 40, 30
    good = tiff(w, h, 8, 1, 1, bytes(range(256)) * 4 + bytes(w * h - 1024))
    pix = bytes(w * h)
    cases = {
        "truncated.tif": (good[:600], r"truncated|TIFF:"),
        "header-only.tif": (good[:8], r"TIFF:"),
        "huge.tif": (tiff(1 << 24, 1 << 24, 8, 1, 1, pix), r"truncated"),
        "absurd.tif": (tiff(1 << 31, 5, 8, 1, 1, pix), r"TIFF: bad size|too large"),
        "zero.tif": (tiff(0, 5, 8, 1, 1, pix), r"TIFF"),
        "float.tif": (tiff(w, h, 32, 1, 1, bytes(4 * w * h), extra=[(339, 3, [3])]),
                      r"unsupported TIFF sample format: 32-bit floating point"),
        "bits12.tif": (tiff(w, h, 12, 1, 1, pix), r"unsupported TIFF sample size: 12 bits"),
        "nostrips.tif": (tiff(w, h, 8, 1, 1, pix, strips=[]), r"TIFF"),
        "beyond.tif": (tiff(w, h, 8, 1, 1, pix, strips=[(10 ** 9, 1200)]), r"truncated|TIFF"),
        "deflate-bomb.tif": (tiff(60000, 60000, 8, 1, 1, b"x\x9c" + bytes(100), compression=8), r"truncated"),
        "inks.tif": (tiff(w, h, 8, 4, 5, bytes(4 * w * h), extra=[(332, 3, [2])]), r"not CMYK"),
        "empty.jpg": (b"\xff\xd8\xff", r"JPEG"),
        "truncated.jpg": (None, r"JPEG|truncated"),
        "huge.jpg": (None, r"truncated"),
    }
    tiny = os.path.join(env.data, "fixtures", "tiny.ppm")
    have_cjpeg = shutil.which("cjpeg") is not None
    if have_cjpeg:
        j = subprocess.run(["cjpeg", env.crop], check=True, capture_output=True).stdout
        cases["truncated.jpg"] = (j[:len(j) // 2], cases["truncated.jpg"][1])
        big = bytearray(j)
        i = big.index(b"\xff\xc0")  # baseline frame header: height, width after the precision byte
        big[i + 5:i + 9] = struct.pack(">HH", 65000, 65000)
        cases["huge.jpg"] = (bytes(big), cases["huge.jpg"][1])
    out = env.path("keep.pbm")
    write(out, b"P4\n1 1\n\0")
    for name, (data, pattern) in cases.items():
        if data is None:
            continue
        p = env.path(name)
        write(p, data)
        for target in (out, env.path("new.pbm")):
            rc, _, err = env.run(p, target)
            lines = err.splitlines()
            check(rc == 1 and len(lines) == 1 and re.search(pattern, lines[0]),
                  "%s: exit %d, %r (wanted one line matching %r)" % (name, rc, err, pattern))
            check(read(out) == b"P4\n1 1\n\0" and not os.path.exists(env.path("new.pbm")),
                  "%s: an output was written or changed" % name)


def case_cmyk_write(env):
    """imageio's CMYK TIFF writer (hti_write_cmyk_tiff, through the test
    tool cmyk-tiff): planes separated, InkSet CMYK, 1 bit a colorant for 2
    levels (from 1-bit or 8-bit planes), 8 bits otherwise; every sample as
    given (read back through tiffcp), the resolution written, and
    halftone reads it back as R = (1-C)(1-K) ..."""
    env.need_tiff()
    env.need("tiffcp", "tiffinfo")
    tool = os.environ.get("HT_TEST_CMYK_TIFF")
    if not tool or not os.path.exists(tool):
        raise Skip("the test tool cmyk-tiff was not built")
    w, h = 29, 11
    for depth, levels, comp in ((8, 2, None), (1, 2, "lzw"), (8, 4, "none"), (8, 256, "deflate"), (1, 2, None)):
        out = env.path("c-%d-%d.tif" % (depth, levels))
        r = subprocess.run([tool, str(depth), str(levels), str(w), str(h), out] + ([comp] if comp else []),
                           capture_output=True, text=True)
        check(r.returncode == 0, "cmyk-tiff %d %d: %r" % (depth, levels, r.stderr))
        bits = 1 if levels == 2 else 8
        t = tiff_tags(read(out))
        check(t[262][2] == [5] and t[284][2] == [2] and t[277][2] == [4] and t[258][2] == [bits] * 4
              and t.get(332, (0, 0, [1]))[2] == [1], "%s: not a planar CMYK TIFF of %d bits: %s" % (out, bits, t))
        check(tiff_dpi(out) == (2400.0, 2400.0), "%s: resolution %s" % (out, tiff_dpi(out)))
        info = subprocess.run(["tiffinfo", "-D", out], capture_output=True, text=True)
        check(info.returncode == 0 and not re.search(r"(?i)error", info.stderr), "tiffinfo -D: %r" % info.stderr)
        plain = out + ".plain.tif"
        subprocess.run(["tiffcp", "-c", "none", "-r", "1000000", out, plain], check=True, capture_output=True)
        pd = read(plain)
        pt = tiff_tags(pd)
        rb = (w + 7) // 8 if bits == 1 else w
        inks = []
        for p in range(4):
            data = pd[pt[273][2][p]:pt[273][2][p] + pt[279][2][p]]
            want = []
            plane = []
            for y in range(h):
                for x in range(w):
                    v = (x * (p + 1) + y * 3) % levels
                    ink = 255 if (v & 1 if depth == 1 else v * 255 // (levels - 1) >= 128) else 0
                    if bits == 8:
                        ink = v * 255 // (levels - 1)
                    plane.append(ink)
                    got = data[y * rb + x] if bits == 8 else (255 if data[y * rb + x // 8] >> (7 - x % 8) & 1 else 0)
                    want.append(got == ink)
            check(all(want), "%s: plane %d differs from what was given" % (out, p))
            inks.append(plane)
        env.ok("--levels", "256", "--color", "per-channel", out, env.path("back.ppm"))
        px = read_pnm(env.path("back.ppm")).samples
        rgb = [((255 - inks[c][i]) * (255 - inks[3][i]) + 127) // 255 for i in range(w * h) for c in range(3)]
        check(px == rgb, "%s: read back, not R = (1-C)(1-K)" % out)
    r = subprocess.run([tool, "8", "2", str(w), str(h), env.path("g4.tif"), "g4"], capture_output=True, text=True)
    check(r.returncode == 1 and "G4" in r.stderr and not os.path.exists(env.path("g4.tif")),
          "CMYK with G4: %d %r" % (r.returncode, r.stderr))


CASES = {
    "cmyk-write": case_cmyk_write,
    "tiff-g4": case_tiff_g4,
    "tiff-read": case_tiff_read,
    "jpeg": case_jpeg,
    "resolution": case_resolution,
    "icc": case_icc,
    "pipes": case_pipes,
    "hostile": case_hostile,
}


def main(argv):
    if len(argv) != 4 or argv[3] not in CASES:
        print("usage: test_formats.py HALFTONE DATA_DIR CASE (cases: %s)" % ", ".join(CASES), file=sys.stderr)
        return 2
    env = Env(argv[1], argv[2])
    try:
        return run_case(argv[3], CASES[argv[3]], env, fails=(FormatError, subprocess.CalledProcessError))
    finally:
        shutil.rmtree(env.dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
