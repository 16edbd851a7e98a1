/* The halftone CLI's own pieces, shared by its files: halftone.c (the
 * run), halftone-args.c (the command line into parameters) and
 * halftone-help.c (--help). Not part of the library. */
#ifndef HT_HALFTONE_CLI_H
#define HT_HALFTONE_CLI_H

#include "halftone.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define EXIT_USAGE 2

typedef struct {
  const char *input, *output;
  /* The method parameters, set from their options as the library's
   * description says (ht_params_set_text); `given` has bit 1 << id for
   * each parameter on the command line, so that one the run does not
   * use is refused. */
  ht_params params;
  unsigned given;
  const char *algorithm; /* --algorithm's name, or NULL (the default)  */
  const char *coefficients; /* --coefficients, for --algorithm custom */
  /* read back from `params` after parsing, for halftone.c */
  int levels;
  int nplane_levels;     /* values of --levels N,N,N[,N]; 0 for N      */
  ht_color_mode color;
  /* the context's parameters */
  ht_backend backend;
  int threads;
  /* the CLI's own */
  int variant;
  bool metrics;
  int bench;
  bool force;
  bool quiet;
  bool verbose;      /* --verbose: the estimate and details on stderr     */
  double dpi;        /* --dpi, 0: the input's                           */
  uint64_t max_memory; /* --max-memory in bytes, 0: imageio's default  */
  int format;        /* --format: an hti_kind, or -1                     */
  int compression;   /* --compression: an hti_compression, or -1         */
  const char *separations;  /* --separations PREFIX                */
  const char *write_mask;   /* --write-mask FILE: the blue-noise mask
                               alone, no INPUT or OUTPUT (halftone.c)  */
} options;

#define GIVEN(id) (1u << (id))

/* Notices wait until the end: a run that then fails prints its error
 * line alone. */
typedef struct {
  char text[6][512];
  int count;
} notices;

/* One line "halftone: ..." on stderr. */
void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same with "(see halftone --help)"; returns EXIT_USAGE. */
int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void notice_add(notices *n, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The names of `list` as "a, b or c" (a static buffer). */
const char *names_or(ht_list list);
void print_help(FILE *f);
/* Where parameter `id` of the library's description is used, as the CLI
 * says it ("--algorithm les or pes"), into buf. */
void where_used(int id, char *buf, size_t size);

/* imageio's formats in lists (halftone-formats.c): those that have every
 * property in `which` (none: all), */
enum {
  FORMATS_WRITTEN = 1,    /* written into files by this build          */
  FORMATS_METADATA = 2,   /* kept with the resolution and ICC profile  */
  FORMATS_COMPRESSED = 4, /* taking --compression                      */
};
/* by */
typedef enum {
  FORMAT_NAME,       /* "tiff"                                         */
  FORMAT_EXTENSIONS, /* ".tif", ".tiff"                                */
  FORMAT_EXTENSION,  /* the first alone: ".tif"                        */
  FORMAT_LABEL,      /* "TIFF"                                         */
} format_field;
/* joined "a, b or c" (last_sep before the last) into buf; returns how
 * many there are. */
int format_list(char *buf, size_t size, unsigned which, format_field field, const char *last_sep);
/* What --format takes in this build, "pbm, pgm, ppm, png or tiff", and
 * --compression, "g4, deflate, lzw or none" (static buffers). */
const char *format_names_or(void);
const char *compressions_or(void);
/* --compression's help: the formats, the names with notes, the default. */
void compression_help(char *buf, size_t size);

/* Returns -1 to go on, else the exit status. */
int parse_args(int argc, char **argv, options *o);
/* The parameters and a context for the options (ht_check included);
 * returns -1 to go on, else the exit status. */
int setup(options *o, ht_params *params, ht_context **ctx_out, notices *notes);

static inline int quit(ht_context *ctx, int rc)
{
  ht_context_free(ctx);
  return rc;
}

#endif
