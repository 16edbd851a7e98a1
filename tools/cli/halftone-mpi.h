/* halftone-mpi's netpbm part (halftone-mpi-pnm.c): the binary formats
 * whose rows sit at offsets computable from the header, so that every
 * rank reads and writes only its own rows through MPI-IO.
 *
 * Input: PBM (P4), PGM (P5) and PPM (P6), any maxval, converted row by
 * row exactly as the halftone CLI's reader converts the whole file
 * (imageio/: P4 bits to 0/255, maxval 255 as it is, other maxvals
 * to 16 bits by round(s * 65535 / maxval), samples above maxval
 * refused), so both tools hand libhalftone the same samples. Output: PBM
 * (1 bit, levels 2) or PGM (8 bit), with the CLI's header. */
#ifndef HT_HALFTONE_MPI_H
#define HT_HALFTONE_MPI_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
  char kind;            /* '4', '5' or '6'                                */
  int64_t width, height;
  int maxval;           /* 1 for P4                                       */
  int channels;         /* 1, or 3 for P6                                 */
  int64_t data;         /* byte offset of the first row                   */
  int64_t row_bytes;    /* bytes of a row in the file                     */
} hmpi_header;

/* Reads and checks the header of `path` (and that the file holds every
 * row). False with one line in err (without the file name). */
bool hmpi_read_header(const char *path, hmpi_header *h, char *err, size_t n);

/* Bytes of a converted row: what libhalftone is given (8-bit samples
 * where the file has maxval 255 or is a PBM, else native 16-bit). */
int hmpi_sample_bytes(const hmpi_header *h);
int64_t hmpi_native_row_bytes(const hmpi_header *h);

/* Reads rows y0 .. y0 + n - 1 of the open input into `dst` (n native
 * rows, each hmpi_native_row_bytes), converted. `scratch` holds at
 * least one file row. False with one line in err. */
bool hmpi_read_rows(MPI_File f, const hmpi_header *h, int64_t y0, int64_t n, uint8_t *dst, uint8_t *scratch,
                    char *err, size_t errn);

/* The output's header ("P4\nW H\n" or "P5\nW H\n255\n") into buf; its
 * length. */
int hmpi_out_header(char *buf, size_t size, bool pbm, int64_t width, int64_t height);

/* Writes `len` bytes at `offset` of the open file, in pieces MPI's int
 * counts can hold. False with one line in err. */
bool hmpi_write_at(MPI_File f, int64_t offset, const uint8_t *data, int64_t len, char *err, size_t n);

/* One line of MPI's text for an error code. */
void hmpi_error_string(int code, char *buf, size_t n);

#endif
