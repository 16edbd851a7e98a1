#!/usr/bin/env python3
"""The memory budget of `halftone` (suite cli): what an input may claim.

    test_limits.py HALFTONE DATA_DIR CASE

A few bytes can declare a huge image: a header over a codec that packs
thousands of pixels into a bit (arithmetic-coded or progressive JPEG,
CCITT G4, ZSTD, LZMA, LZW), or strips that all point at the same bytes.
And a header can be followed by endless bytes on a pipe. Every such input
must be refused before its memory is taken, in well under a second and
100 MB, with a message that says how to allow more (--max-memory); an
ordinary large image must still go through. Python stdlib only: every
file is written here, byte by byte.

  bombs       tiny JPEG and TIFF files declaring 4 GiB images, and a PNG
              of zeros: "too large", quickly, in little memory
  streams     a PNM, PNG, JPEG or TIFF header on standard input followed
              by endless bytes: refused at once or at a bound, never read
              until the memory runs out
  max-memory  --max-memory: its values, a lower limit refuses what the
              default takes, a higher one replaces the default's bound
  large       a 16384^2 gray PGM (file and standard input), 8192^2 PNG,
              TIFF and JPEG still work by default
  g4-wide     two rows of gray 128, 1M pixels wide, to a G4 TIFF: the
              same pixels as the PBM (the coder once took seconds here)
"""
import lzma
import os
import re
import resource
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from cases import Skip, check, run_case  # noqa: E402

MIB = 1 << 20
# What a refusal may take at most: the process's peak resident memory
# and CPU time (its own measure: the machine may be busy with others).
MAX_RSS, MAX_CPU = 100 * MIB, 1.0
# An address-space limit while a case runs, so that a regression fails
# the test rather than the machine; a bomb that got through needs more.
SAFETY_NET = 8 << 30


class Env:
    def __init__(self, halftone, data):
        self.halftone, self.data = halftone, data
        self.dir = tempfile.mkdtemp(prefix="ht-limits-")
        with open(halftone, "rb") as f:
            exe = f.read()
        # sanitizers reserve terabytes of address space (no limit can be
        # set) and take more memory of their own
        self.sanitized = any(s in exe for s in (b"__asan_init", b"__msan_init", b"__tsan_init")) or \
            any(s in os.environ.get("HT_TEST_SANITIZER", "") for s in ("address", "memory", "thread"))
        self.max_rss = MAX_RSS if not self.sanitized else 4 * MAX_RSS

    def path(self, name):
        return os.path.join(self.dir, name)

    def write(self, name, data):
        with open(self.path(name), "wb") as f:
            f.write(data)
        return self.path(name)

    def measure(self, args, feed=None, timeout=60):
        """Runs halftone with `args`, standard input fed `feed` = (head,
        tail): head, then tail over and over until the pipe closes. Returns
        (exit status, stderr, CPU seconds, peak resident bytes)."""
        def pre():
            if not self.sanitized:
                resource.setrlimit(resource.RLIMIT_AS, (SAFETY_NET, SAFETY_NET))
        errf = tempfile.TemporaryFile()
        p = subprocess.Popen([self.halftone] + [str(a) for a in args], stdout=subprocess.DEVNULL, stderr=errf,
                             stdin=subprocess.PIPE if feed else subprocess.DEVNULL, preexec_fn=pre)
        killed = []

        def kill():
            killed.append(True)
            p.kill()
        killer = threading.Timer(timeout, kill)
        killer.start()
        writer = None
        if feed:
            def write():
                try:
                    p.stdin.write(feed[0])
                    while True:
                        p.stdin.write(feed[1])
                except (BrokenPipeError, ValueError, OSError):
                    pass
                finally:
                    try:
                        p.stdin.close()
                    except OSError:
                        pass
            writer = threading.Thread(target=write, daemon=True)
            writer.start()
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        killer.cancel()
        if writer:
            writer.join(timeout=10)
        errf.seek(0)
        err = errf.read().decode(errors="replace")
        errf.close()
        check(not killed, "halftone %s: still running after %d s" % (" ".join(map(str, args)), timeout))
        return p.returncode, err, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024

    def refused(self, args, pattern, what, feed=None):
        rc, err, cpu, rss = self.measure(args, feed)
        check(rc == 1, "%s: exit %d, wanted 1 (%r)" % (what, rc, err[-300:]))
        lines = err.splitlines()
        check(len(lines) == 1 and re.search(pattern, lines[0]),
              "%s: stderr %r does not match %r" % (what, err[-400:], pattern))
        check(cpu < MAX_CPU, "%s: refused after %.2f s of CPU time" % (what, cpu))
        check(rss < self.max_rss, "%s: took %d MiB of memory" % (what, rss // MIB))
        return lines[0]

    def ok(self, *args, stdin=None):
        p = subprocess.run([self.halftone, "--quiet"] + [str(a) for a in args], stdin=stdin,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)
        check(p.returncode == 0, "halftone %s: exit %d, stderr %r" % (" ".join(map(str, args)), p.returncode,
                                                                       p.stderr.decode()[-300:]))

    def supports(self, label, sample):
        """Whether this build reads `label` files; `sample` is one."""
        p = subprocess.run([self.halftone, "--quiet", sample, "/dev/null"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=60)
        return "no %s support" % label not in p.stderr.decode()


# ------------------------------------------------------------ files by hand

def tiff_shared(w, h, bps, compression, blob, rows_per_strip, photometric=1):
    """A little-endian classic TIFF of one sample a pixel whose strips all
    point at the same bytes, `blob` (rows_per_strip rows, coded)."""
    strips = (h + rows_per_strip - 1) // rows_per_strip
    blob_off = 8
    ifd_off = blob_off + len(blob) + (len(blob) & 1)
    entries = sorted([(256, 4, [w]), (257, 4, [h]), (258, 3, [bps]), (259, 3, [compression]),
                      (262, 3, [photometric]), (273, 4, [blob_off] * strips), (277, 3, [1]),
                      (278, 4, [rows_per_strip]), (279, 4, [len(blob)] * strips)])
    body_off = ifd_off + 2 + 12 * len(entries) + 4
    ifd, body = b"", b""
    for tag, typ, vals in entries:
        raw = b"".join(struct.pack("<" + ("H" if typ == 3 else "I"), v) for v in vals)
        if len(raw) <= 4:
            ifd += struct.pack("<HHI", tag, typ, len(vals)) + raw.ljust(4, b"\0")
        else:
            ifd += struct.pack("<HHII", tag, typ, len(vals), body_off + len(body))
            body += raw
    head = b"II*\0" + struct.pack("<I", ifd_off) + blob + b"\0" * (len(blob) & 1)
    return head + struct.pack("<H", len(entries)) + ifd + b"\0\0\0\0" + body


def g4_white(w, h):
    """A G4 TIFF of white rows: each is vertical mode 0 against the row
    above, one bit '1'; then the end of the block (two EOLs)."""
    bits = "1" * h + "000000000001" * 2
    bits += "0" * (-len(bits) % 8)
    data = bytes(int(bits[i:i + 8], 2) for i in range(0, len(bits), 8))
    return tiff_shared(w, h, 1, 4, data, h, photometric=0)


def lzw(data):
    """TIFF's LZW (codes MSB first, 9 to 12 bits, the width growing as
    libtiff's decoder expects, a Clear code when the table is full)."""
    out, acc, nbits = bytearray(), 0, 0

    def emit(code, width):
        nonlocal acc, nbits
        acc = acc << width | code
        nbits += width
        while nbits >= 8:
            nbits -= 8
            out.append(acc >> nbits & 255)
    table = {bytes([i]): i for i in range(256)}
    nxt, width = 258, 9
    emit(256, width)
    w = b""
    for b in data:
        wc = w + bytes([b])
        if wc in table:
            w = wc
            continue
        emit(table[w], width)
        table[wc] = nxt
        nxt += 1
        if nxt in (512, 1024, 2048):
            width += 1
        elif nxt == 4094:
            emit(256, width)
            table = {bytes([i]): i for i in range(256)}
            nxt, width = 258, 9
        w = bytes([b])
    if w:
        emit(table[w], width)
    emit(257, width)
    if nbits:
        out.append(acc << (8 - nbits) & 255)
    return bytes(out)


def zstd_zeros(n):
    """A Zstandard frame of n zero bytes in RLE blocks (4 bytes each for
    128 KiB): magic, a frame header with a 128 KiB window, the blocks."""
    out = struct.pack("<I", 0xFD2FB528) + bytes([0x00, 7 << 3])
    while n > 0:
        k = min(n, 1 << 17)
        n -= k
        out += struct.pack("<I", (1 if n == 0 else 0) | 1 << 1 | k << 3)[:3] + b"\0"
    return out


def jpeg_segment(marker, body):
    return b"\xff" + bytes([marker]) + struct.pack(">H", len(body) + 2) + body


def jpeg(w, h, sof, ss_se, tables=b"", data=b"", end=True):
    """One gray component, one scan: quantisation table of ones, the frame
    header `sof`, the scan's spectral selection ss_se, `data` as its
    entropy-coded bytes. An arithmetic-coded scan without data decodes
    (its decoder reads zeros at a marker) to a flat image."""
    out = b"\xff\xd8" + jpeg_segment(0xDB, b"\x00" + b"\x01" * 64)
    out += jpeg_segment(sof, struct.pack(">BHHB", 8, h, w, 1) + b"\x01\x11\x00") + tables
    out += jpeg_segment(0xDA, b"\x01\x01\x00" + bytes([ss_se[0], ss_se[1], 0])) + data
    return out + (b"\xff\xd9" if end else b"")


def png_chunk(kind, body):
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def png_header(w, h, depth=8, ctype=0):
    return b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, depth, ctype, 0, 0, 0))


def png(w, h, depth, ctype, row):
    """A PNG whose every row (filter byte included) is `row`."""
    c = zlib.compressobj(9)
    body = b"".join(c.compress(row) for _ in range(h)) + c.flush()
    return png_header(w, h, depth, ctype) + png_chunk(b"IDAT", body) + png_chunk(b"IEND", b"")


def tiff_header(w, h, at=200):
    """A TIFF's header and first directory (8-bit gray, one strip at
    `at`), padded to `at` bytes: what a stream of it starts with."""
    entries = [(256, 4, w), (257, 4, h), (258, 3, 8), (259, 3, 1), (262, 3, 1), (273, 4, at), (277, 3, 1),
               (278, 4, h), (279, 4, w * h & 0xFFFFFFFF)]
    ifd = struct.pack("<H", len(entries)) + b"".join(struct.pack("<HHII", t, ty, 1, v) for t, ty, v in entries)
    head = b"II*\0" + struct.pack("<I", 8) + ifd + b"\0\0\0\0"
    return head + b"\0" * (at - len(head))


def tiff_strip(data):
    """(offset, byte count) of the one strip of a classic TIFF."""
    e = "<" if data[:2] == b"II" else ">"
    ifd = struct.unpack(e + "I", data[4:8])[0]
    found = {}
    for i in range(struct.unpack(e + "H", data[ifd:ifd + 2])[0]):
        tag, typ, _, val = struct.unpack(e + "HHI4s", data[ifd + 2 + 12 * i:ifd + 14 + 12 * i])
        if tag in (273, 279):
            found[tag] = struct.unpack(e + ("H" if typ == 3 else "I"), val[:2 if typ == 3 else 4])[0]
    return found[273], found[279]


HOW = r"; --max-memory \d+[MG] allows it$"


# ------------------------------------------------------------ cases

def case_bombs(env):
    """Tiny files that declare 4 GiB images: refused for their size, in
    under a second and 100 MB (before: decoded, 3 to 4.5 GB and more than
    20 s each)."""
    side = 65536
    strip = b"\0" * (side * 16)
    bombs = [("g4.tif", g4_white(side, side)),
             ("lzw.tif", tiff_shared(side, side, 8, 5, lzw(strip), 16)),
             ("deflate.tif", tiff_shared(side, side, 8, 8, zlib.compress(strip, 9), 16)),
             ("packbits.tif", tiff_shared(side, side, 8, 32773, b"\x81\0" * (side // 128 * 16), 16)),
             ("zstd.tif", tiff_shared(side, side, 8, 50000, zstd_zeros(len(strip)), 16)),
             ("lzma.tif", tiff_shared(side, side, 8, 34925, lzma.compress(strip, format=lzma.FORMAT_XZ), 16)),
             ("arithmetic.jpg", jpeg(65500, 65500, 0xC9, (0, 63))),
             ("arithmetic-progressive.jpg", jpeg(65500, 65500, 0xCA, (0, 0)))]
    # a progressive Huffman JPEG of DC scans alone: a bit a block (one
    # code of one bit, category 0), and whole-image coefficients kept
    dc_table = jpeg_segment(0xC4, b"\x00" + bytes([1] + [0] * 15) + b"\x00")
    w = h = 40000
    bombs.append(("progressive.jpg", jpeg(w, h, 0xC2, (0, 0), dc_table, b"\0" * ((w // 8) * (h // 8) // 8))))
    # 1-bit zeros that zlib packs 1000:1, decoded to a byte a pixel
    bombs.append(("zeros.png", png(40000, 30000, 1, 0, b"\0" * (40000 // 8 + 1))))
    have = {"TIFF": env.supports("TIFF", env.write("probe.tif", g4_white(8, 8))),
            "JPEG": env.supports("JPEG", env.write("probe.jpg", jpeg(8, 8, 0xC9, (0, 63)))),
            "PNG": env.supports("PNG", env.write("probe.png", png(8, 8, 1, 0, b"\0\0")))}
    tried = 0
    for name, data in bombs:
        label = {"tif": "TIFF", "jpg": "JPEG", "png": "PNG"}[name.rsplit(".", 1)[1]]
        if not have[label]:
            continue
        path = env.write(name, data)
        env.refused([path, env.path("out.pbm")],
                    r"%s: too large: \d+x\d+ needs [\d.]+ GiB, and by default a file of %d bytes may claim at most "
                    r"[\d.]+ [MG]iB \(1024 times its size, at least 1\.0 GiB\)%s" % (re.escape(path), len(data), HOW),
                    "%s (%d bytes)" % (name, len(data)))
        check(not os.path.exists(env.path("out.pbm")), "%s: an output was written" % name)
        tried += 1
    if not tried:
        raise Skip("this build reads none of TIFF, JPEG and PNG")


def case_streams(env):
    """A header on standard input, then endless bytes: a header that
    declares more than the budget is refused before the data; one within
    it is cut at its format's bound (before: 65500x65500 headers were read
    until the memory ran out, 4 GB in 10 s)."""
    cases = [("PGM", b"P5\n100000 100000\n255\n", b"\0" * 65536, r"too large: 100000x100000 needs [\d.]+ GiB"),
             ("PNG", png_header(65500, 65500), png_chunk(b"IDAT", b"\0" * 65536),
              r"too large: a 65500x65500 PNG read from a stream \([\d.]+ GiB decoded\) goes on past"),
             ("JPEG", jpeg(65500, 65500, 0xC9, (0, 63), end=False), b"\0" * 65536,
              r"too large: a 65500x65500 JPEG read from a stream \([\d.]+ GiB decoded\) goes on past"),
             ("TIFF", tiff_header(65500, 65500), b"\0" * 65536,
              r"too large: a 65500x65500 TIFF read from a stream \([\d.]+ GiB decoded\) goes on past"),
             # within the budget: the format's own bound
             ("PNG", png_header(64, 64) + png_chunk(b"tEXt", b"k\0v"), png_chunk(b"IDAT", b"\0" * 65536),
              r"a 64x64 PNG goes on for more than \d+ bytes without its end"),
             ("JPEG", jpeg(64, 64, 0xC9, (0, 63), end=False), b"\0" * 65536,
              r"a JPEG read from a stream goes on for more than \d+ bytes without its end"),
             ("TIFF", tiff_header(64, 64), b"\0" * 65536, r"a TIFF read from a stream goes on for more than \d+ bytes")]
    samples = {"PNG": png(8, 8, 1, 0, b"\0\0"), "JPEG": jpeg(8, 8, 0xC9, (0, 63)), "TIFF": g4_white(8, 8)}
    have = {k: env.supports(k, env.write("probe-" + k, v)) for k, v in samples.items()}
    for label, head, tail, pattern in cases:
        if not have.get(label, True):
            continue
        env.refused(["-", env.path("out.pbm")], r"^halftone: standard input: " + pattern,
                    "%s header then endless bytes" % label, feed=(head, tail))
        check(not os.path.exists(env.path("out.pbm")), "%s stream: an output was written" % label)


def case_max_memory(env):
    """--max-memory: sizes with K, M, G, T (and a B or iB); a limit below
    what an image takes refuses it, naming the option; one above lets it
    through; a value above the default replaces the default's bound (the
    process's own limit is then what refuses a bomb)."""
    for bad in ("0", "", "x", "4X", "-1", "1.2.3", "4 G", "G", "1e9", "0.1"):
        p = subprocess.run([env.halftone, "--max-memory", bad, "in.pgm", "out.pbm"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=60)
        check(p.returncode == 2, "--max-memory %r: exit %d" % (bad, p.returncode))
        check(re.match(r"halftone: --max-memory must be a size in bytes, or with K, M, G or T \(e\.g\. 512M, 4G\), "
                       r"not '%s' \(see halftone --help\)$" % re.escape(bad), p.stderr.decode()),
              "--max-memory %r: %r" % (bad, p.stderr.decode()))
    # a 2000 x 1500 plain PGM takes 3 000 000 bytes once decoded
    w, h = 2000, 1500
    path = env.write("plain.pgm", b"P2\n%d %d\n255\n" % (w, h) + b"7 " * (w * h))
    for size in ("2M", "2900000", "2.8M", "2929KiB"):
        env.refused(["--max-memory", size, path, env.path("out.pbm")],
                    r"too large: 2000x1500 needs 3 MiB, more than the \d MiB that --max-memory allows$",
                    "--max-memory %s" % size)
    for size in ("3000000", "3M", "1G", "1.5g", "1T", "3000KB"):
        env.ok("--max-memory", size, path, env.path("out.pbm"))
    # a bomb with a limit above its claim: no longer the default's refusal;
    # an address-space limit of 1 GiB refuses it instead
    bomb = env.write("g4.tif", g4_white(65536, 65536))
    if env.supports("TIFF", bomb) and not env.sanitized:
        p = subprocess.run([env.halftone, "--max-memory", "64G", bomb, env.path("out.pbm")], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=60,
                           preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30)))
        err = p.stderr.decode()
        check(p.returncode == 1 and re.search(r"too large: 65536x65536 needs [\d.]+ GiB, more than the 1\.0 GiB of "
                                              r"memory this process may use$", err),
              "--max-memory 64G under a 1 GiB address space: exit %d, %r" % (p.returncode, err))


def case_large(env):
    """Ordinary large images go through by default: 16384^2 gray from a
    file and from a pipe (the same halftone), 8192^2 PNG, TIFF and JPEG."""
    side = 16384
    row = bytes((x * 7 + 13) & 255 for x in range(side))
    big = env.path("big.pgm")
    with open(big, "wb") as f:
        f.write(b"P5\n%d %d\n255\n" % (side, side))
        for y in range(side):
            f.write(row[y % 64:] + row[:y % 64])
    env.ok(big, env.path("big.pbm"))
    with open(big, "rb") as f:
        env.ok("-", env.path("piped.pbm"), stdin=f)
    check(open(env.path("big.pbm"), "rb").read() == open(env.path("piped.pbm"), "rb").read(),
          "a 16384^2 PGM through a pipe differs from the file's halftone")
    os.unlink(env.path("piped.pbm"))
    side = 8192
    gray = bytes((x * 3) & 255 for x in range(side))
    pngfile = env.write("big.png", png(side, side, 8, 0, b"\0" + gray))
    if env.supports("PNG", pngfile):
        env.ok(pngfile, env.path("png.pbm"))
    tif = env.path("big.tif")
    with open(tif, "wb") as f:
        f.write(tiff_header(side, side, at=256))
        for _ in range(side):
            f.write(gray)
    if env.supports("TIFF", tif):
        env.ok(tif, env.path("tif.pbm"))
    if shutil.which("cjpeg"):
        small = env.path("8k.pgm")
        with open(small, "wb") as f:
            f.write(b"P5\n%d %d\n255\n" % (side, side) + gray * side)
        jpg = env.path("big.jpg")
        with open(small, "rb") as fin, open(jpg, "wb") as fout:
            subprocess.run(["cjpeg", "-grayscale", "-progressive"], stdin=fin, stdout=fout, check=True, timeout=300)
        if env.supports("JPEG", jpg):
            env.ok(jpg, env.path("jpg.pbm"))


def case_g4_wide(env):
    """Two rows of gray 128, 2^20 pixels wide, to a G4 TIFF: the pixels of
    the PBM, read back by libtiff (tiffcp); the coder once took 5 s."""
    w = 1 << 20
    src = env.write("wide.pgm", b"P5\n%d 2\n255\n" % w + b"\x80" * (2 * w))
    tif = env.path("wide.tif")
    rc, err, cpu, _ = env.measure([src, tif])
    if rc != 0 and "no TIFF support" in err:
        raise Skip("this build has no TIFF support")
    check(rc == 0, "1M-wide G4: exit %d (%r)" % (rc, err))
    print("1M-wide 2-row G4 TIFF: %.2f s of CPU time" % cpu)
    env.ok(src, env.path("wide.pbm"))
    if not shutil.which("tiffcp"):
        raise Skip("tiffcp is not installed: the G4 TIFF was written but not read back")
    plain = env.path("plain.tif")
    subprocess.run(["tiffcp", "-c", "none", "-r", "1000000", tif, plain], check=True, capture_output=True, timeout=120)
    data = open(plain, "rb").read()
    pbm = open(env.path("wide.pbm"), "rb").read()
    head = b"P4\n%d 2\n" % w
    check(pbm.startswith(head), "the PBM's header: %r" % pbm[:20])
    pixels = pbm[len(head):]
    # MinIsWhite: a set bit is black in both
    off, count = tiff_strip(data)
    check(data[off:off + count] == pixels, "the G4 TIFF's pixels differ from the PBM's")


CASES = {
    "bombs": case_bombs,
    "streams": case_streams,
    "max-memory": case_max_memory,
    "large": case_large,
    "g4-wide": case_g4_wide,
}


def main(argv):
    if len(argv) != 4 or argv[3] not in CASES:
        print("usage: test_limits.py HALFTONE DATA_DIR CASE (cases: %s)" % ", ".join(CASES), file=sys.stderr)
        return 2
    env = Env(argv[1], argv[2])
    try:
        return run_case(argv[3], CASES[argv[3]], env)
    finally:
        shutil.rmtree(env.dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
