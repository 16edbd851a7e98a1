/* Image files for the halftone tools: PGM/PPM/PBM/PAM (netpbm), PNG,
 * TIFF and JPEG (input). One file a format (imageio_pnm.c, _png.c,
 * _tiff.c, _jpeg.c), and the table of them (imageio_formats.c);
 * imageio_read.c reads files and streams and dispatches by signature,
 * imageio_dest.c claims the output, writes and renames it, and
 * imageio_util.c holds what they all use.
 *
 * Reading maps the file and, where the file's samples already are what
 * libhalftone takes (8-bit PGM/PPM with maxval 255), points straight into
 * the mapping: no copy. Anything else (16-bit big-endian samples, other
 * maxvals, ASCII variants, PNG) is converted once into a native buffer.
 *
 * Input that is not a regular file (a pipe, a device, standard input
 * named "-") is read only as far as its format goes: the first bytes must
 * be a known signature, and the header bounds what follows, so an endless stream such as /dev/zero is
 * refused instead of filling the memory. Every allocation sized from a
 * header is checked first against what the file can hold ("truncated")
 * and the memory budget (hti_set_memory_limit: "too large").
 *
 * Writing claims the destination before the work (hti_dest_open: the
 * checks, and the temporary file beside the destination), builds the
 * whole file in memory, writes and syncs it to the temporary file and
 * renames it over the destination only when everything succeeded, so a
 * failure never leaves a partial file and never touches an existing one.
 * Signals (hti_signals) remove the temporary file on their way out.
 *
 * What each format is, reads and writes stands in one table
 * (hti_formats, imageio_formats.c): reading dispatches through it,
 * writing checks and writes through it, and the tools' checks, their
 * --format and their --help read it.
 */
#ifndef HT_IMAGEIO_H
#define HT_IMAGEIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
  HTI_PBM = 0,
  HTI_PGM,
  HTI_PPM,
  HTI_PNG,
  HTI_TIFF,
  HTI_NULL, /* /dev/null: the layout PNG would have, nothing written */
  HTI_JPEG, /* read only */
} hti_kind;

/* How TIFF output is compressed. AUTO: CCITT Group 4 for 1-bit gray,
 * Deflate for everything else. G4 takes 1-bit gray only. */
typedef enum {
  HTI_COMPRESS_AUTO = 0,
  HTI_COMPRESS_G4,
  HTI_COMPRESS_DEFLATE,
  HTI_COMPRESS_LZW,
  HTI_COMPRESS_NONE,
} hti_compression;

/* A decoded image: interleaved samples, alpha last when has_alpha. */
typedef struct {
  int64_t width, height;
  int channels;          /* 1..4                                         */
  bool has_alpha;
  bool cmyk;             /* 4 channels C, M, Y, K: ink, 0 = none (TIFF,
                            JPEG); no alpha (a CMYK file's is dropped)   */
  int depth;             /* 8 (uint8) or 16 (native-endian uint16)       */
  size_t stride;         /* bytes between rows                           */
  const uint8_t *pixels;
  const char *format;    /* e.g. "PGM (P5, 8-bit)", for messages          */
  double xdpi, ydpi;     /* resolution in dots per inch, 0 where the file
                            records none (PNG pHYs, TIFF X/YResolution,
                            JPEG JFIF density)                           */
  uint8_t *icc;          /* the file's ICC profile (malloc'ed) or NULL   */
  size_t icc_len;
  int pages;             /* TIFF: images in the file, of which the first
                            is read; 1 for the other formats            */
  const char *note;      /* what reading left out or changed (e.g. "the
                            alpha channel of a CMYK TIFF is dropped"), or
                            NULL; for a notice                           */
  /* ownership */
  void *map;
  size_t map_len;
  void *buf;
} hti_image;

/* Reads `path`, or standard input for "-" (a stream, bounded as above).
 * On failure returns false and writes one line (without the file name)
 * into err. */
bool hti_read(const char *path, hti_image *img, char *err, size_t err_size);
void hti_release(hti_image *img);

/* The memory budget of reading: every reader and stream checks what a
 * header declares against it before allocating, and refuses more as
 * "too large". By default the least of 4 GiB, the machine's memory, and,
 * for a file, 1024 times its size but at least 1 GiB (a small file that
 * declares a huge image is a decompression bomb whatever its codec);
 * never more than the process's address-space or data limit. `bytes` > 0
 * replaces the default (the tools' --max-memory); 0 restores it. */
void hti_set_memory_limit(uint64_t bytes);
/* "4G", "512M", "1.5G", "300000000": a size in bytes, with K, M, G or T
 * (powers of 1024, an optional "B" or "iB" after them); false when it is
 * none or zero. */
bool hti_parse_size(const char *text, uint64_t *bytes);

/* Turns a CMYK image (img->cmyk) into RGB in place, by the plain formula
 * R = (1 - C)(1 - K), G = (1 - M)(1 - K), B = (1 - Y)(1 - K) on the
 * samples scaled to 0..1, rounded to nearest; no colour management (an
 * ICC profile of the file is not applied). False when out of memory. */
bool hti_cmyk_to_rgb(hti_image *img, char *err, size_t err_size);

/* The colour space an ICC profile declares ("GRAY", "RGB", "CMYK", ...,
 * from its header) into buf, and its description (the 'desc' tag, where
 * it can be read) into desc; false when it is no ICC profile. */
bool hti_icc_info(const uint8_t *icc, size_t len, char *space, size_t space_size, char *desc,
                  size_t desc_size);
/* Whether an ICC profile is sRGB's, whatever its name and version: RGB
 * with sRGB's primaries (its rXYZ, gXYZ, bXYZ tags, adapted to D50) and
 * a tone curve close to sRGB's (rTRC: a table, a parametric curve or a
 * gamma near 2.2). */
bool hti_icc_is_srgb(const uint8_t *icc, size_t len);

/* One 8-bit plane of the image, `width` bytes a row, malloc'ed (NULL when
 * out of memory): channel `channel`, or with channel -1 the gray channel
 * of a gray image and the Rec. 709 luma of the stored values of a colour
 * one, computed exactly as libhalftone does for --color luma. 16-bit
 * samples are rounded to 8 bits. */
uint8_t *hti_gray8(const hti_image *img, int channel);

/* The output kind named by the file name's extension (case-insensitive:
 * one of a written format's extensions in hti_formats, whether or not
 * this build has the format), HTI_NULL for the null device, or -1. */
int hti_kind_from_path(const char *path);
/* The output kind named by `name`, a written format's name or one of its
 * extensions without the dot (pbm, pgm, ppm, png, tiff, tif), or -1. */
int hti_kind_from_name(const char *name);
/* The kind's label, for messages ("PBM", "the null device"). */
const char *hti_kind_name(hti_kind kind);

/* The compressions of TIFF output, by name, with a note for --help. */
typedef struct {
  hti_compression value;
  const char *name; /* "g4"                                           */
  const char *note; /* "CCITT Group 4, 1-bit only"; for AUTO what it
                       picks; NULL: nothing to say                    */
} hti_compression_name;
const hti_compression_name *hti_compressions(size_t *count);
/* The compression named by `name` (auto, g4, deflate, lzw, none), or -1. */
int hti_compression_from_name(const char *name);

/* An output file under construction. Render `height` rows of `stride`
 * bytes into `pixels`:
 *   depth 1:  packed bits, MSB first, bit set = black (HT_FORMAT_BIT1);
 *   depth 8:  uint8 samples, `channels` interleaved;
 *   depth 16: native uint16 samples (PNG and TIFF only).
 * TIFF output is 1-bit gray (CCITT G4 by default), or 8/16-bit gray,
 * gray+alpha, RGB or RGBA (Deflate by default), written in strips
 * straight from `pixels`; classic TIFF, or BigTIFF where the file passes
 * the 4 GiB of classic TIFF (the file is then written again, as
 * BigTIFF: a file that fits comes out as before). */
typedef struct {
  hti_kind kind;
  int64_t width, height;
  int channels;
  int depth;
  uint8_t *pixels;
  size_t stride;
  /* set by the caller after hti_out_init, where the format holds them
   * (PNG, TIFF; netpbm has no place for either): */
  double xdpi, ydpi;          /* 0: no resolution written              */
  const uint8_t *icc;         /* an ICC profile to embed, or NULL; the
                                 caller passes one whose colour space is
                                 the output's (GRAY or RGB)             */
  size_t icc_len;
  hti_compression compression; /* TIFF only                            */
  int threads;                /* TIFF: threads that code strips at once;
                                 0: one a CPU it may run on            */
  /* private */
  uint8_t *file;     /* netpbm: header + pixels, written in one go */
  size_t file_len;
} hti_out;

/* Checks the combination (e.g. PBM needs depth 1 and one channel) and
 * the size (PNG: at most 1 000 000 pixels a side), so that what the
 * writer would refuse is refused before the work, and allocates. False
 * with a message in err when it cannot. */
bool hti_out_init(hti_out *o, hti_kind kind, int64_t width, int64_t height, int channels,
                  int depth, char *err, size_t err_size);
void hti_out_free(hti_out *o);

/* A file format: one row of the table that reading (the dispatch by
 * signature), writing (hti_out_init's checks, hti_out_write) and the
 * tools (their checks, --format and --help) all read, so that a format
 * added there, or left out of a build, shows everywhere by itself. */
typedef struct {
  hti_kind kind;
  const char *name;          /* what --format takes and lists ("tiff");
                                NULL: none                               */
  const char *extensions[3]; /* file name endings, dot included, the one
                                --help shows first (".tif", ".tiff"),
                                NULL after the last                      */
  const char *label;         /* in messages: "TIFF"                      */
  const char *summary;       /* what the tools write in it, for --help;
                                NULL where nothing is written            */
  const char *library;       /* what reading and writing it take
                                ("libtiff"); NULL: nothing              */
  bool built;                /* whether this build has that library     */
  uint32_t depths;           /* bit d set: writes d-bit samples (d = 1,
                                8, 16); 0: never written (input only)   */
  uint32_t channels;         /* bit c set: writes c channels (1..4)     */
  bool metadata;             /* writes the resolution and an ICC profile
                                (hti_out's xdpi, ydpi and icc)          */
  bool compression;          /* takes an hti_compression                */
  const char *holds;         /* for a layout it refuses, "PBM holds ..."
                                (what it holds); NULL: "unsupported ...
                                layout"                                  */
  /* whether data starts as its files do; NULL: no file (the null device) */
  bool (*signature)(const uint8_t *data, size_t len);
  /* the decoder and the writer, NULL where this build has no library for
   * them or the format is never read or written */
  bool (*read)(const uint8_t *data, size_t len, hti_image *img, char *err, size_t err_size);
  bool (*write)(const hti_out *o, int fd, char *err, size_t err_size);
  int64_t max_side;          /* the widest and highest image it writes
                                (hti_out_init refuses more, before the
                                work); 0: the tools' own bound          */
} hti_format;

/* The table, `*count` rows in hti_kind's order, and a kind's row (NULL
 * for none). */
const hti_format *hti_formats(size_t *count);
const hti_format *hti_format_of(hti_kind kind);
/* Whether the format writes `channels` channels of `depth` bits (1-bit
 * only as one channel). */
bool hti_format_writes(const hti_format *f, int channels, int depth);
/* "this build has no PNG support (libpng was not found)" into buf. */
void hti_format_missing(const hti_format *f, char *buf, size_t size);

/* Where an output file goes. */
typedef struct {
  char *path;   /* the file replaced: OUTPUT, or where its symbolic link points */
  char *tmp;    /* the temporary file beside it; NULL until hti_dest_create
                   makes it, and once renamed or removed                    */
  char *pattern; /* private: tmp's name before mkstemp (".NAME.tmp-XXXXXX") */
  int fd;       /* open on tmp (on standard output for "-"), or -1            */
  bool discard; /* OUTPUT is the null device: nothing is written              */
  bool to_stdout; /* OUTPUT is "-": written straight to standard output       */
  bool defer;   /* set by the caller: hti_out_write and hti_write_cmyk_tiff
                   write and sync the temporary file but leave the rename to
                   hti_dest_commit, which puts a set of outputs in place
                   together                                                 */
  int slot;     /* private: the signal handler's slot of tmp, or -1         */
} hti_dest;

/* Claims `output` before any work, so that a run fails before the work
 * rather than after it: refuses a folder, a device or pipe (other than
 * the null device), the file `input` itself under any name (hard or
 * symbolic link, another path; `input` may be NULL or "-" for standard
 * input), and an existing
 * read-only file unless `force`, and a folder we may not create a file
 * in; follows a symbolic link to its target. Creates nothing: the
 * temporary file is made by hti_dest_create (hti_out_write and
 * hti_write_cmyk_tiff call it), once the input is read, so that a
 * process killed while it reads (SIGKILL, the OOM killer: no handler
 * runs) leaves no temporary file behind. False with a message in err. */
bool hti_dest_open(hti_dest *d, const char *output, const char *input, bool force, char *err,
                   size_t err_size);
/* Creates the temporary file of a claimed `d` beside the destination,
 * with the mode (and, where permitted, the owner) an existing file has,
 * else 0666 & ~umask; from then on the signals of hti_signals remove it.
 * Nothing for standard output, the null device or a file made already.
 * False with a message in err; then nothing is left behind. */
bool hti_dest_create(hti_dest *d, char *err, size_t err_size);
/* "-" as `output` is standard output: refused when it is a terminal
 * (binary data would be garbage there), when it was closed at the start
 * (hti_std_fds; an image sent to /dev/null is no success) and when it is
 * the input file (device and inode, as for named outputs), else written
 * straight (no temporary file: a failure part way leaves what was
 * written in the pipe, and the exit status says so). */
/* Whether `path` is "-" or names the process's standard output where
 * that is no regular file (/dev/stdout or /proc/self/fd/1 on a pipe), so
 * that it is written as "-" is; a regular file behind /dev/stdout is
 * replaced as any named file. */
bool hti_is_stdout(const char *path);

/* Writes the file to the temporary file, syncs it to the disk and renames
 * it over the destination. False with a message in err; the caller then
 * calls hti_dest_close, which removes the temporary file. */
bool hti_out_write(const hti_out *o, hti_dest *d, char *err, size_t err_size);

/* A CMYK image for print, for TIFF (the colour halftone's output):
 * four planes, C, M, Y, K, each `width` x `height`, of ink amounts.
 *   depth 1: packed bits, MSB first, bit set = ink (rows of `stride[p]`
 *            bytes);
 *   depth 8: one byte a pixel, 0 = no ink .. 255 = full ink.
 * levels[p] is how many ink values plane p uses (2..256). Where every
 * plane has 2 levels the file holds 1 bit per colorant (8-bit planes:
 * 128 and above is ink), else 8 bits.
 *
 * The file is written with the planes separated (PlanarConfiguration 2,
 * "separate"), not interleaved: each colorant's plane is then one run of
 * bits that compresses as a plate of its own (interleaving 1-bit CMYK
 * packs four colorants into each nibble, which breaks every run), a
 * reader can take one separation without decoding the others, as a
 * platesetter images one plate at a time, and the planes are written
 * strip by strip straight from the caller's memory. Compression: Deflate
 * by default (AUTO), LZW or none; G4 is for one-sample bilevel images
 * only. Photometric is Separated with InkSet CMYK; the resolution and an
 * ICC profile (a CMYK one) are written where given. */
typedef struct {
  int64_t width, height;
  int depth;                 /* 1 or 8                                   */
  const uint8_t *plane[4];   /* C, M, Y, K                               */
  size_t stride[4];          /* bytes between rows of each plane         */
  int levels[4];             /* 2..256                                   */
  double xdpi, ydpi;         /* 0: none written                          */
  const uint8_t *icc;        /* a CMYK ICC profile, or NULL              */
  size_t icc_len;
  hti_compression compression;
} hti_cmyk;

/* Writes `img` as a CMYK TIFF to `d` (claimed with hti_dest_open for an
 * OUTPUT ending in .tif/.tiff, or "-"), synced and renamed like
 * hti_out_write. False with a message in err; then hti_dest_close
 * removes the temporary file. */
bool hti_write_cmyk_tiff(const hti_cmyk *img, hti_dest *d, char *err, size_t err_size);
/* Removes the temporary file unless hti_out_write renamed it; frees. */
void hti_dest_close(hti_dest *d);
/* Renames the temporary files of `count` destinations, each written
 * with `defer` set, into place in their order, with signals held until
 * the last: a set of outputs (an image and its separations) appears only
 * once every one of them is complete, and an interruption before that
 * leaves every old file as it was. Returns how many were renamed: count
 * on success; else the message of the one that failed is in err (the
 * files are there and complete, so only the rename itself can fail, and
 * those before it stay renamed). Destinations without a temporary file
 * (standard output, the null device) are skipped. */
int hti_dest_commit(hti_dest *const *set, int count, char *err, size_t err_size);

/* From now on SIGINT, SIGTERM and SIGHUP (unless ignored already) remove
 * the temporary files of the open hti_dests, print one line
 * "PROG: interrupted by SIGINT: ... not written" and end the process by
 * that signal; a signal that arrives once the output is renamed into
 * place waits and is dropped: the run has succeeded. SIGPIPE and SIGXFSZ
 * are ignored, so that a closed pipe or a file size limit is an error
 * of the write that meets it, reported like any other. */
void hti_signals(const char *prog);
/* Opens /dev/null on whichever of stdin, stdout and stderr is closed, so
 * that no file the tool opens gets descriptor 0, 1 or 2 and then
 * receives its printed metrics or messages. Call first. */
void hti_std_fds(void);

#endif
