/* Image files for the halftone tools: PGM/PPM/PBM/PAM (netpbm) and PNG.
 *
 * Reading maps the file and, where the file's samples already are what
 * libhalftone takes (8-bit PGM/PPM with maxval 255), points straight into
 * the mapping: no copy. Anything else (16-bit big-endian samples, other
 * maxvals, ASCII variants, PNG) is converted once into a native buffer.
 *
 * Input that is not a regular file (a pipe, a device) is read only as far
 * as its format goes: the first bytes must be a known signature, and the
 * header bounds what follows, so an endless stream such as /dev/zero is
 * refused instead of filling the memory. Every allocation sized from a
 * header is checked first against what the file can hold ("truncated")
 * and the memory the process may use ("too large").
 *
 * Writing claims the destination before the work (hti_dest_open: the
 * checks, and the temporary file beside the destination), builds the
 * whole file in memory, writes and syncs it to the temporary file and
 * renames it over the destination only when everything succeeded, so a
 * failure never leaves a partial file and never touches an existing one.
 * Signals (hti_signals) remove the temporary file on their way out.
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
  HTI_NULL, /* /dev/null: the layout PNG would have, nothing written */
} hti_kind;

/* A decoded image: interleaved samples, alpha last when has_alpha. */
typedef struct {
  int64_t width, height;
  int channels;          /* 1..4                                         */
  bool has_alpha;
  int depth;             /* 8 (uint8) or 16 (native-endian uint16)       */
  size_t stride;         /* bytes between rows                           */
  const uint8_t *pixels;
  const char *format;    /* e.g. "PGM (P5, 8-bit)", for messages          */
  /* ownership */
  void *map;
  size_t map_len;
  void *buf;
} hti_image;

/* Reads `path`. On failure returns false and writes one line (without the
 * file name) into err. */
bool hti_read(const char *path, hti_image *img, char *err, size_t err_size);
void hti_release(hti_image *img);

/* One 8-bit plane of the image, `width` bytes a row, malloc'ed (NULL when
 * out of memory): channel `channel`, or with channel -1 the gray channel
 * of a gray image and the Rec. 709 luma of the stored values of a colour
 * one, computed exactly as libhalftone does for --color luma. 16-bit
 * samples are rounded to 8 bits. */
uint8_t *hti_gray8(const hti_image *img, int channel);

/* The kind named by the file name's extension (case-insensitive: .pbm,
 * .pgm, .ppm, .png), HTI_NULL for the null device, or -1. */
int hti_kind_from_path(const char *path);
const char *hti_kind_name(hti_kind kind);
/* Whether this build can read and write PNG. */
bool hti_have_png(void);

/* An output file under construction. Render `height` rows of `stride`
 * bytes into `pixels`:
 *   depth 1:  packed bits, MSB first, bit set = black (HT_FORMAT_BIT1);
 *   depth 8:  uint8 samples, `channels` interleaved;
 *   depth 16: native uint16 samples (PNG only). */
typedef struct {
  hti_kind kind;
  int64_t width, height;
  int channels;
  int depth;
  uint8_t *pixels;
  size_t stride;
  /* private */
  uint8_t *file;     /* netpbm: header + pixels, written in one go */
  size_t file_len;
} hti_out;

/* Checks the combination (e.g. PBM needs depth 1 and one channel) and
 * allocates. False with a message in err when it cannot. */
bool hti_out_init(hti_out *o, hti_kind kind, int64_t width, int64_t height, int channels,
                  int depth, char *err, size_t err_size);
void hti_out_free(hti_out *o);

/* Where an output file goes. */
typedef struct {
  char *path;   /* the file replaced: OUTPUT, or where its symbolic link points */
  char *tmp;    /* the temporary file beside it; NULL once renamed or removed */
  int fd;       /* open on tmp, or -1                                         */
  bool discard; /* OUTPUT is the null device: nothing is written              */
} hti_dest;

/* Claims `output` before any work, so that a run fails before the work
 * rather than after it: refuses a folder, a device or pipe (other than
 * the null device), the file `input` itself under any name (hard or
 * symbolic link, another path; `input` may be NULL), and an existing
 * read-only file unless `force`; follows a symbolic link to its target;
 * creates the temporary file beside the destination with the mode (and,
 * where permitted, the owner) an existing file has, else 0666 & ~umask.
 * False with a message in err; then nothing is left behind. */
bool hti_dest_open(hti_dest *d, const char *output, const char *input, bool force, char *err,
                   size_t err_size);
/* Writes the file to the temporary file, syncs it to the disk and renames
 * it over the destination. False with a message in err; the caller then
 * calls hti_dest_close, which removes the temporary file. */
bool hti_out_write(const hti_out *o, hti_dest *d, char *err, size_t err_size);
/* Removes the temporary file unless hti_out_write renamed it; frees. */
void hti_dest_close(hti_dest *d);

/* From now on SIGINT, SIGTERM and SIGHUP (unless ignored already) remove
 * the temporary file of the open hti_dest, print one line
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
