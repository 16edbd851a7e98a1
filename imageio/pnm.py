"""Netpbm (PBM, PGM, PPM) and PNG files, read and written with the Python
standard library only, for the test scripts (tests/) and the benchmark
and figure scripts (tools/bench/). It shares no code with the C library
beside it (imageio.h): the tests check that library's files against it.

The tests compare pixels across formats and across programs (the CLI,
`gegl`, GIMP), so every reader returns the same thing for the same
picture: a flat list of samples in row order, channels interleaved, as
intensities 0..maxval. A 1-bit image (PBM, or PNG of depth 1) therefore
reads as 0 for black and 1 for white, although a PBM file stores black
as 1.

The scripts live in different folders and are run by `meson test` from
the build folder, so they find this module by a path relative to their
own file, from a folder two below the repository's root:

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'imageio'))
    import pnm

A malformed or unsupported file raises FormatError (a ValueError).
"""
import collections
import struct
import zlib

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

# PNG colour types by channel count (gray, gray + alpha, RGB, RGBA);
# palettes (type 3) are not supported.
_PNG_CTYPE = {1: 0, 2: 4, 3: 2, 4: 6}
_PNG_CHANNELS = {0: 1, 4: 2, 2: 3, 6: 4}


class FormatError(ValueError):
    """A file this module cannot read: not the format, truncated, or a
    variant it does not support."""


class Pnm(collections.namedtuple("Pnm", "kind width height maxval samples")):
    """A Netpbm image: kind is the magic ('P1' .. 'P6'); P1 and P4 (PBM)
    have maxval 1, with 0 for black and 1 for white."""
    __slots__ = ()

    @property
    def channels(self):
        """3 for PPM, 1 for PBM and PGM."""
        return 3 if self.kind in ("P3", "P6") else 1


class Png(collections.namedtuple("Png", "width height channels depth samples")):
    """A PNG image: channels 1 (gray), 2 (gray + alpha), 3 (RGB) or 4
    (RGBA); depth in bits per sample (1, 2, 4, 8 or 16)."""
    __slots__ = ()

    @property
    def maxval(self):
        """The largest sample value, (1 << depth) - 1."""
        return (1 << self.depth) - 1


Image = collections.namedtuple("Image", "width height channels maxval samples")
Image.__doc__ = """Any image read by read_image: the layout that lets PNG and
Netpbm files of different depths be compared (see normalized)."""


# ------------------------------------------------------------ Netpbm

def _pnm_tokens(data, pos, count):
    """count whitespace-separated header tokens from data[pos:], skipping
    '#' comments; returns (tokens, position just after the last one)."""
    tokens = []
    while len(tokens) < count:
        while data[pos:pos + 1].isspace():
            pos += 1
        if data[pos:pos + 1] == b"#":
            while data[pos:pos + 1] not in (b"\n", b"\r", b""):
                pos += 1
            continue
        start = pos
        while data[pos:pos + 1].isdigit():
            pos += 1
        if pos == start:
            raise FormatError("bad header token at byte %d" % start)
        tokens.append(int(data[start:pos]))
    return tokens, pos


def read_pnm(path):
    """Reads a PBM, PGM or PPM file, raw (P4, P5, P6) or plain (P1, P2,
    P3), into a Pnm. The body must hold exactly the samples the header
    announces (a raw file) or at least them (a plain one)."""
    with open(path, "rb") as f:
        data = f.read()
    kind = data[:2].decode("latin-1")
    if kind not in ("P1", "P2", "P3", "P4", "P5", "P6"):
        raise FormatError("%s: not a PBM, PGM or PPM file" % path)
    bitmap = kind in ("P1", "P4")
    try:
        header, pos = _pnm_tokens(data, 2, 2 if bitmap else 3)
    except FormatError as e:
        raise FormatError("%s: %s" % (path, e)) from None
    w, h = header[0], header[1]
    maxval = 1 if bitmap else header[2]
    ch = 3 if kind in ("P3", "P6") else 1
    n = w * h * ch
    if kind == "P1":
        # plain PBM: 0/1 digits, whitespace optional; 1 is black
        body = bytearray()
        for line in data[pos:].split(b"\n"):
            body += bytes(c for c in line.split(b"#")[0] if c in b"01")
        if len(body) < n:
            raise FormatError("%s: plain PBM body holds %d pixels, expected %d" % (path, len(body), n))
        return Pnm(kind, w, h, 1, [1 if c == ord("0") else 0 for c in body[:n]])
    if kind in ("P2", "P3"):
        words = []
        for line in data[pos:].split(b"\n"):
            words += line.split(b"#")[0].split()
        if len(words) < n:
            raise FormatError("%s: plain body holds %d samples, expected %d" % (path, len(words), n))
        return Pnm(kind, w, h, maxval, [int(v) for v in words[:n]])
    body = data[pos + 1:]  # one whitespace character ends the header
    if kind == "P4":
        rb = (w + 7) // 8
        if len(body) != rb * h:
            raise FormatError("%s: PBM body is %d bytes, expected %d" % (path, len(body), rb * h))
        px = []
        for y in range(h):
            row = body[y * rb:(y + 1) * rb]
            px += [0 if (row[x >> 3] >> (7 - (x & 7))) & 1 else 1 for x in range(w)]
        return Pnm(kind, w, h, 1, px)
    if maxval < 256:
        if len(body) != n:
            raise FormatError("%s: body size %d, expected %d" % (path, len(body), n))
        return Pnm(kind, w, h, maxval, list(body))
    if len(body) != 2 * n:
        raise FormatError("%s: body size %d, expected %d" % (path, len(body), 2 * n))
    return Pnm(kind, w, h, maxval, list(struct.unpack(">%dH" % n, body)))


def write_pnm(path, kind, w, h, maxval, samples, comment="written by imageio/pnm.py"):
    """Writes samples as a Netpbm file of the given kind ('P1' .. 'P6').
    For P1 and P4 the samples are 0 (black) / 1 (white) and maxval is not
    written. The header carries one comment line unless comment is None
    (readers must skip it: the CLI tests rely on that)."""
    bitmap = kind in ("P1", "P4")
    head = kind.encode() + b"\n"
    if comment is not None:
        head += b"# " + comment.encode() + b"\n"
    head += b"%d %d\n" % (w, h)
    if not bitmap:
        head += b"%d\n" % maxval
    with open(path, "wb") as f:
        f.write(head)
        if kind in ("P1", "P2", "P3"):
            values = [1 - v for v in samples] if bitmap else samples
            for i in range(0, len(values), 16):
                f.write((" ".join(str(v) for v in values[i:i + 16]) + "\n").encode())
        elif kind == "P4":
            f.write(_pack_rows([1 - v for v in samples], w, h, 1))
        elif maxval < 256:
            f.write(bytes(samples))
        else:
            f.write(struct.pack(">%dH" % len(samples), *samples))


# ------------------------------------------------------------ PNG

def _pack_rows(samples, n, h, depth, filter_byte=None):
    """h rows of n samples each as bytes of the given depth (most
    significant bits first, rows padded to whole bytes), each row led by
    filter_byte unless it is None."""
    out = bytearray()
    for y in range(h):
        row = samples[y * n:(y + 1) * n]
        if filter_byte is not None:
            out.append(filter_byte)
        if depth == 8:
            out += bytes(row)
        elif depth == 16:
            out += struct.pack(">%dH" % n, *row)
        else:
            per = 8 // depth
            for i in range(0, n, per):
                byte = 0
                for k, v in enumerate(row[i:i + per]):
                    byte |= v << (8 - depth * (k + 1))
                out.append(byte)
    return bytes(out)


def png_chunk(kind, body):
    """One PNG chunk: length, type, body, CRC."""
    c = struct.pack(">I", len(body)) + kind + body
    return c + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)


def write_png(path, w, h, channels, depth, samples):
    """Writes a non-interlaced PNG (filter 0 on every row) of 1 to 4
    channels; depth 1, 2 or 4 for gray only, 8 or 16 for any."""
    if depth < 8 and channels != 1:
        raise FormatError("PNG depth %d needs one channel" % depth)
    raw = _pack_rows(samples, w * channels, h, depth, filter_byte=0)
    with open(path, "wb") as f:
        f.write(PNG_SIGNATURE)
        f.write(png_chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, depth, _PNG_CTYPE[channels], 0, 0, 0)))
        f.write(png_chunk(b"IDAT", zlib.compress(raw)))
        f.write(png_chunk(b"IEND", b""))


def write_png_palette(path, w, h, palette, indices, depth=8):
    """Writes a palette PNG (colour type 3): palette is a list of up to
    2^depth (r, g, b) triples, indices one per pixel; depth 1, 2, 4 or 8.
    For the pictures in docs/, whose few colours keep the files small."""
    if len(palette) > 1 << depth:
        raise FormatError("%d colours do not fit depth %d" % (len(palette), depth))
    raw = _pack_rows(indices, w, h, depth, filter_byte=0)
    with open(path, "wb") as f:
        f.write(PNG_SIGNATURE)
        f.write(png_chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, depth, 3, 0, 0, 0)))
        f.write(png_chunk(b"PLTE", b"".join(bytes(c) for c in palette)))
        f.write(png_chunk(b"IDAT", zlib.compress(raw, 9)))
        f.write(png_chunk(b"IEND", b""))


def _png_chunks(path):
    """(IHDR fields, concatenated IDAT bodies) of a PNG, every chunk's CRC
    checked."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != PNG_SIGNATURE:
        raise FormatError("%s: not a PNG" % path)
    pos, idat, hdr = 8, [], None
    while pos + 12 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length] or b"\0\0\0\0")
        if zlib.crc32(kind + body) & 0xFFFFFFFF != crc:
            raise FormatError("%s: bad CRC" % path)
        if kind == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)  # joined once: += on bytes copies all so far
        elif kind == b"IEND":
            break
        pos += 12 + length
    if hdr is None:
        raise FormatError("%s: no IHDR chunk" % path)
    return hdr, b"".join(idat)


def png_idat(path):
    """The decompressed image data of a PNG: files with equal pixels from
    the same exporter with the same settings have equal bytes here,
    whatever their other chunks (dates, comments) say."""
    return zlib.decompress(_png_chunks(path)[1])


def read_png(path):
    """Reads a non-interlaced, non-palette PNG into a Png; samples of
    depth below 8 come back as they are stored (0/1 for depth 1)."""
    (w, h, depth, ctype, _, _, interlace), idat = _png_chunks(path)
    if interlace != 0 or ctype not in _PNG_CHANNELS or depth not in (1, 2, 4, 8, 16) \
            or (depth < 8 and ctype != 0):
        raise FormatError("%s: unsupported PNG (depth %d, colour type %d, interlace %d)"
                          % (path, depth, ctype, interlace))
    channels = _PNG_CHANNELS[ctype]
    raw = zlib.decompress(idat)
    n = w * channels
    rb = (n * depth + 7) // 8
    bpp = max(1, channels * depth // 8)
    if len(raw) < h * (rb + 1):
        raise FormatError("%s: image data is %d bytes, expected %d" % (path, len(raw), h * (rb + 1)))
    prev = bytearray(rb)
    out = []
    for y in range(h):
        f = raw[y * (rb + 1)]
        cur = bytearray(raw[y * (rb + 1) + 1:(y + 1) * (rb + 1)])
        if f == 1:
            for i in range(bpp, rb):
                cur[i] = (cur[i] + cur[i - bpp]) & 255
        elif f == 2:
            for i in range(rb):
                cur[i] = (cur[i] + prev[i]) & 255
        elif f == 3:
            for i in range(rb):
                a = cur[i - bpp] if i >= bpp else 0
                cur[i] = (cur[i] + (a + prev[i]) // 2) & 255
        elif f == 4:
            for i in range(rb):
                a = cur[i - bpp] if i >= bpp else 0
                b = prev[i]
                c = prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                cur[i] = (cur[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        elif f != 0:
            raise FormatError("%s: unknown filter type %d in row %d" % (path, f, y))
        if depth == 8:
            out += cur
        elif depth == 16:
            out += struct.unpack(">%dH" % n, bytes(cur))
        else:
            mask = (1 << depth) - 1
            out += [(cur[(x * depth) >> 3] >> (8 - depth - ((x * depth) & 7))) & mask for x in range(n)]
        prev = cur
    return Png(w, h, channels, depth, out)


# ------------------------------------------------------------ either

def read_image(path):
    """Reads a PNG or a Netpbm file (told apart by their first bytes)
    into an Image."""
    with open(path, "rb") as f:
        head = f.read(8)
    if head == PNG_SIGNATURE:
        img = read_png(path)
    else:
        img = read_pnm(path)
    return Image(img.width, img.height, img.channels, img.maxval, img.samples)


def normalized(img):
    """(width, height, channels, samples scaled to 0..65535) of an Image,
    so that files of different depths compare sample for sample."""
    w, h, ch, maxval, s = img
    return w, h, ch, [v * 65535 // maxval for v in s]
