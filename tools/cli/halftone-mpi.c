/* halftone-mpi: the halftone CLI's error diffusion spread over the
 * processes of an MPI job, bit-identical to `halftone` on one machine.
 *
 *   mpirun -n P halftone-mpi [OPTIONS] INPUT OUTPUT
 *
 * Distribution (Guilloteau, "Parallel Dithering: How Fast Can We Go?",
 * Sec. 5-7; docs/mpi.md): the rows are dealt in blocks of r consecutive
 * rows, block j to rank j mod P. A block's last rows' quantisation
 * errors (the carried rows, core/halftone.h) go to the owner of block
 * j + 1 in chunks of k columns as soon as they are final, with
 * non-blocking sends; the block runs its rows in skewed column chunks
 * (ht_run_band_stream), so the next rank starts on its block while this
 * one is still on its own: the ranks work as one wavefront. Any width,
 * height, rank count, filter and level count; the bits are those of
 * ht_run, since every band gets exactly the errors the rows above it
 * would have pushed in one run.
 *
 * Files: each rank reads its own rows of the PBM/PGM/PPM input and
 * writes its own rows of the output with MPI-IO; no rank holds the whole
 * image. Rank 0 claims the output first (imageio's hti_dest_open:
 * the same checks as halftone, a temporary file beside it); every rank
 * writes into that temporary file, and rank 0 renames it over the
 * destination only when every rank said it succeeded (MPI_Allreduce).
 * Every failure is agreed on by all ranks at one of those points, so no
 * rank waits for one that gave up; rank 0 prints one line
 * "halftone-mpi: ..." (the first failing rank's) and exits 1 (2 for a
 * bad command line; the other ranks exit 0 after it, see exit_status),
 * and no output file is left.
 */
#include "halftone.h"
#include "halftone-mpi.h"
#include "cli-args.h"
#include "imageio.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

#define EXIT_USAGE 2
#define ERR_MAX 600

static int rank, nranks;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
  if (rank != 0)
    return;
  va_list ap;
  va_start(ap, fmt);
  cli_vsay("halftone-mpi", "", fmt, ap);
  va_end(ap);
}

static const char help_text[] =
  "Usage: mpirun -n P halftone-mpi [OPTIONS] INPUT OUTPUT\n"
  "\n"
  "Error diffusion of one image by the P processes of an MPI job, on one\n"
  "machine or many: exactly the pixels `halftone` gives with the same options.\n"
  "Rows are dealt to the ranks in blocks of R rows, round-robin; a block's\n"
  "last rows' errors go to the next block's rank in chunks of K columns as\n"
  "they are done, so the ranks work at once. Each rank reads and writes\n"
  "only its own rows (MPI-IO): on a cluster INPUT and OUTPUT must be on a\n"
  "file system that every node sees.\n"
  "\n"
  "INPUT   binary PGM (P5) or PPM (P6, dithered as its luma), any maxval, or\n"
  "        PBM (P4); convert PNG, PAM and plain netpbm files first\n"
  "OUTPUT  .pbm (1 bit, --levels 2) or .pgm (8 bit); written under a\n"
  "        temporary name beside it and renamed only when every rank is done\n"
  "\n"
  "Options:\n";

static void print_help(FILE *f)
{
  fputs(help_text, f);
  fputs("  --algorithm NAME    the error-diffusion filter (default floyd-steinberg):\n", f);
  int n = 0;
  const ht_choice *c = ht_choices(HT_LIST_FILTERS, &n);
  for (int i = 0; i < n; i++)
    fprintf(f, "                        %-20s %s\n", c[i].name, c[i].label);
  fputs("  --coefficients STR  the filter for --algorithm custom, as in halftone\n"
        "                      (Floyd-Steinberg is \"- * 7; 3 5 1 / 16\")\n", f);
  const ht_param *lv = ht_param_info(HT_PARAM_LEVELS);
  fprintf(f, "  --levels N          output levels %g..%g (default %g: black and white)\n", lv->min, lv->max, lv->def);
  fputs("  --threads N         threads per rank (default 1): a block's rows run on\n"
        "                      them as a wavefront of their own (at most R)\n"
        "  --rows R            rows per block (default 15; see docs/mpi.md)\n"
        "  --chunk K           columns per message (default W / (P (R + 1)), the\n"
        "                      widest that keeps every rank busy, at most 3 KiB\n"
        "                      of errors; docs/mpi.md)\n"
        "  --metrics           print the mean tone error (0..255 units) to stdout\n"
        "  --bench             print the time of the halftoning (all ranks, without\n"
        "                      the file reading and writing), R and K to stdout\n"
        "  --force             replace an existing output file that is read-only\n"
        "  --version           print the version and exit\n"
        "  --help              print this help and exit\n"
        "\n"
        "Example:\n"
        "  mpirun -n 16 halftone-mpi --algorithm jarvis-judice-ninke scan.pgm out.pbm\n"
        "  mpirun --hostfile hosts -n 64 halftone-mpi /shared/scan.pgm /shared/out.pbm\n"
        "\n"
        "Exit status: 0 done, 1 failed, 2 bad command line. On any failure rank 0\n"
        "prints one line, no output file is written and an existing one is left as\n"
        "it was. (With Open MPI 4, mpirun -q keeps mpirun's own notice about the\n"
        "exit status out; Open MPI 5 has no -q.)\n",
        f);
}

typedef struct {
  const char *input, *output, *algorithm, *coefficients;
  int levels, threads;
  int64_t rows, chunk;
  bool metrics, bench, force;
} options;

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
  if (rank == 0) {
    va_list ap;
    va_start(ap, fmt);
    cli_vsay("halftone-mpi", " (see halftone-mpi --help)", fmt, ap);
    va_end(ap);
  }
  return EXIT_USAGE;
}

enum { OPT_ROWS = CLI_OPT_OWN, OPT_CHUNK, OPT_BENCH };

/* -1 to go on, else the exit status. Every rank parses the same command
 * line, so every rank comes to the same answer without a message. */
static int parse_args(int argc, char **argv, options *o)
{
  static const struct option longopts[] = {
    CLI_COMMON_LONGOPTS,
    { "rows", required_argument, NULL, OPT_ROWS },
    { "chunk", required_argument, NULL, OPT_CHUNK },
    { "bench", no_argument, NULL, OPT_BENCH },
    { NULL, 0, NULL, 0 },
  };
  memset(o, 0, sizeof *o);
  o->levels = 2;
  o->threads = 1;
  opterr = 0;
  int c;
  int64_t v;
  while ((c = getopt_long(argc, argv, ":hV", longopts, NULL)) != -1) {
    switch (c) {
    case CLI_OPT_ALGORITHM: o->algorithm = optarg; break;
    case CLI_OPT_COEFFICIENTS: o->coefficients = optarg; break;
    case CLI_OPT_LEVELS: { /* the library's range (its description), one value: one plane here */
      const ht_param *d = ht_param_info(HT_PARAM_LEVELS);
      if (!cli_parse_int64(optarg, (int64_t)d->min, (int64_t)d->max, &v))
        return usage_error("--levels must be a whole number %g..%g, not '%s'", d->min, d->max, optarg);
      o->levels = (int)v;
      break;
    }
    case CLI_OPT_THREADS:
      if (!cli_parse_int64(optarg, 1, 1024, &v))
        return usage_error("--threads must be a whole number 1..1024 (threads per rank), not '%s'", optarg);
      o->threads = (int)v;
      break;
    case OPT_ROWS:
      if (!cli_parse_int64(optarg, 1, HT_MAX_SIDE, &o->rows))
        return usage_error("--rows must be a whole number 1..%lld, not '%s'", (long long)HT_MAX_SIDE, optarg);
      break;
    case OPT_CHUNK:
      if (!cli_parse_int64(optarg, 1, HT_MAX_SIDE, &o->chunk))
        return usage_error("--chunk must be a whole number 1..%lld, not '%s'", (long long)HT_MAX_SIDE, optarg);
      break;
    case CLI_OPT_METRICS: o->metrics = true; break;
    case OPT_BENCH: o->bench = true; break;
    case CLI_OPT_FORCE: o->force = true; break;
    case 'V':
    case CLI_OPT_VERSION:
      if (rank == 0)
        printf("halftone-mpi %s\n", ht_version());
      return 0;
    case 'h':
    case CLI_OPT_HELP:
      if (rank == 0)
        print_help(stdout);
      return 0;
    default: return usage_error("%s", cli_option_message(c, argv));
    }
  }
  const char *why = cli_two_files(argc, argv, &o->input, &o->output);
  return why ? usage_error("%s", why) : -1;
}

/* The filter and levels, checked by the library as halftone checks them. */
static int setup(const options *o, ht_params *p, ht_context **ctx)
{
  ht_params_init(p);
  p->levels = o->levels;
  p->variant = HT_VARIANT_STREAM;
  const ht_choice *alg = o->algorithm ? ht_choice_by_name(HT_LIST_FILTERS, o->algorithm)
                                      : ht_choice_by_value(HT_LIST_FILTERS, (int)p->filter.id);
  if (!alg)
    return usage_error("--algorithm: unknown filter '%s'", o->algorithm);
  char msg[320];
  if (!cli_coefficients(alg, o->coefficients, &p->filter, msg, sizeof msg))
    return usage_error("%s", msg);
  if (alg->value != HT_FILTER_CUSTOM)
    p->filter = *ht_filter_builtin((ht_filter_id)alg->value);
  *ctx = ht_context_new();
  if (!*ctx) {
    say("out of memory");
    return 1;
  }
  ht_context_set_backend(*ctx, HT_BACKEND_CPU);
  ht_context_set_threads(*ctx, o->threads);
  if (ht_check(*ctx, p) != HT_OK) {
    int rc = usage_error("%s", ht_context_message(*ctx));
    ht_context_free(*ctx);
    *ctx = NULL;
    return rc;
  }
  return -1;
}

/* ------------------------------------------------------- agreement */

/* Every rank's verdict: true when all succeeded. Otherwise rank 0 gets
 * the message of the lowest failing rank into err. Collective. */
static bool all_ok(bool ok, char *err)
{
  int mine = ok ? nranks : rank, first = nranks;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (first == nranks)
    return true;
  if (first != 0) {
    if (rank == first)
      MPI_Send(err, ERR_MAX, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
    else if (rank == 0)
      MPI_Recv(err, ERR_MAX, MPI_CHAR, first, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  err[ERR_MAX - 1] = '\0';
  return false;
}

/* ------------------------------------------------------- the wavefront */

/* One rank's carried-row traffic for one of its blocks: receives of the
 * block above's chunks into `above`, sends of this block's into `below`.
 * Two slots, used by a rank's blocks in turn, so that the receives of
 * the next block are posted while this one runs and the sends of the
 * last one may still be under way. */
typedef struct {
  int32_t *above, *below;
  MPI_Request *rreq, *sreq;
  int64_t received, sent; /* chunks */
  bool recv_posted, send_posted;
} slot;

typedef struct {
  int64_t w, k, nch;
  int D;
  MPI_Datatype full, last; /* D rows of k (or the last chunk's) columns */
  int from, to;            /* the ranks of the blocks above and below */
  slot s[2];
  slot *cur;
} wave;

static MPI_Datatype chunk_type(const wave *wv, int64_t c) { return c == wv->nch - 1 ? wv->last : wv->full; }

static void post_receives(wave *wv, slot *s)
{
  for (int64_t c = 0; c < wv->nch; c++)
    MPI_Irecv(s->above + c * wv->k, 1, chunk_type(wv, c), wv->from, 0, MPI_COMM_WORLD, &s->rreq[c]);
  s->received = 0;
  s->recv_posted = true;
}

/* Columns < x of the carried-in rows: wait for the chunks that hold them. */
static bool need_columns(int64_t x, void *user)
{
  wave *wv = user;
  slot *s = wv->cur;
  while (s->received < wv->nch && s->received * wv->k < x)
    MPI_Wait(&s->rreq[s->received++], MPI_STATUS_IGNORE);
  if (s->received == wv->nch)
    s->recv_posted = false;
  return true;
}

/* Columns < x of the carried-out rows are final: send the whole chunks. */
static bool ready_columns(int64_t x, void *user)
{
  wave *wv = user;
  slot *s = wv->cur;
  while (s->sent < wv->nch && ((s->sent + 1) * wv->k < wv->w ? (s->sent + 1) * wv->k : wv->w) <= x) {
    MPI_Isend(s->below + s->sent * wv->k, 1, chunk_type(wv, s->sent), wv->to, 0, MPI_COMM_WORLD,
              &s->sreq[s->sent]);
    s->sent++;
  }
  s->send_posted = s->sent > 0;
  return true;
}

static void finish_sends(slot *s)
{
  if (s->send_posted)
    MPI_Waitall((int)s->sent, s->sreq, MPI_STATUSES_IGNORE);
  s->send_posted = false;
  s->sent = 0;
}

/* ------------------------------------------------------- the run */

typedef struct {
  hmpi_header hd;
  int64_t r, k, nb;        /* rows per block, columns per chunk, blocks */
  int64_t mine;            /* rows this rank owns                        */
  bool pbm;
  int64_t in_row, out_row; /* bytes of a native input row, an output row */
  int hdr_len;
} layout;

/* Rows of block j, and where this rank keeps them. */
static int64_t block_rows(const layout *l, int64_t j)
{
  return l->hd.height - j * l->r < l->r ? l->hd.height - j * l->r : l->r;
}

/* The defaults (docs/mpi.md). A block of r rows in skewed chunks of k
 * columns hands its first chunk on after about r (r + 1) / 2 chunks of
 * work; the wavefront keeps every rank busy when the last of P ranks
 * starts before the first needs its next block's rows, about
 * P r (r + 1) k / 2 <= r W, i.e. k <= 2 W / (P (r + 1)) (the paper's eq.
 * 20, which has k = W / (r (P - 1/2) + P + 1/2)). With k at half that
 * bound, r only trades the fill of the pipeline (grows with r) against
 * the work per block (falls with r): measured on 16 cores at 16K x 16K,
 * r = 7..15 is twice as fast as the paper's r = sqrt(2 H) = 181 with its
 * k = 5 (BENCHMARKS.md, MPI). */
static void choose_shape(layout *l, const options *o, int carry)
{
  l->r = o->rows ? o->rows : 15;
  if (l->r > l->hd.height)
    l->r = l->hd.height;
  if (o->chunk) {
    l->k = o->chunk;
  } else {
    l->k = l->hd.width / ((int64_t)nranks * (l->r + 1));
    /* and a message small enough to go eagerly: above Open MPI's
     * shared-memory eager limit (4 KiB) a send waits for the receiver's
     * handshake, which a rank that is computing answers only at its next
     * chunk (measured: Jarvis-Judice-Ninke on 2 ranks with 4 KiB chunks
     * no faster than on 1) */
    const int64_t eager = 768 / (carry > 0 ? carry : 1);
    if (l->k > eager)
      l->k = eager;
    if (l->k < 1)
      l->k = 1;
  }
  if (l->k > l->hd.width)
    l->k = l->hd.width;
  l->nb = (l->hd.height + l->r - 1) / l->r;
  l->mine = 0;
  for (int64_t j = rank; j < l->nb; j += nranks)
    l->mine += block_rows(l, j);
}

/* The 8-bit gray of input pixel x of a native row, as the CLI's metrics
 * see it (imageio's hti_gray8: the luma of colour input). */
static int64_t gray8(const layout *l, const uint8_t *row, int64_t x)
{
  const bool two = hmpi_sample_bytes(&l->hd) == 2;
  int64_t v[3];
  for (int c = 0; c < l->hd.channels; c++) {
    const int64_t i = x * l->hd.channels + c;
    v[c] = two ? ((const uint16_t *)(const void *)row)[i] : (int64_t)row[i] * 257;
  }
  const int64_t s = l->hd.channels == 3 ? (13933 * v[0] + 46871 * v[1] + 4732 * v[2] + 32768) >> 16 : v[0];
  return (s + 128) / 257;
}

/* This process's peak resident memory in KiB (Linux), 0 where unknown. */
static long peak_kib(void)
{
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long kib = 0;
  while (f && fgets(line, sizeof line, f))
    if (sscanf(line, "VmHWM: %ld", &kib) == 1)
      break;
  if (f)
    fclose(f);
  return kib;
}

/* The process's exit status for the job's status `rc`: rank 0 says it;
 * the other ranks exit 0, so that mpirun, which ends the whole job as soon
 * as one process exits non-zero, never cuts rank 0 short while it prints
 * the message and removes the temporary file. mpirun then returns rank
 * 0's status. */
static int exit_status(int rc) { return rank == 0 ? rc : 0; }

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Runs this rank's blocks; false with err on failure (which happens only
 * before the first message: the buffers are all there by then). */
static bool run_blocks(ht_context *ctx, const ht_params *p, const layout *l, wave *wv, const uint8_t *in,
                       uint8_t *out, char *err)
{
  const ht_format in_fmt = hmpi_sample_bytes(&l->hd) == 2 ? HT_FORMAT_U16 : HT_FORMAT_U8;
  const ht_format out_fmt = l->pbm ? HT_FORMAT_BIT1 : HT_FORMAT_U8;
  int64_t local = 0, done = 0;
  if (wv->D > 0 && rank < l->nb && rank > 0)
    post_receives(wv, &wv->s[0]);
  for (int64_t j = rank; j < l->nb; j += nranks, local++) {
    const int64_t n = block_rows(l, j);
    slot *s = &wv->s[local % 2];
    slot *next = &wv->s[(local + 1) % 2];
    wv->cur = s;
    finish_sends(s); /* the block before the last one used it */
    if (wv->D > 0 && j + nranks < l->nb) {
      finish_sends(next);
      post_receives(wv, next);
    }
    ht_stream st = { j * l->r, l->k, NULL, NULL, NULL, NULL, wv };
    if (wv->D > 0 && j > 0) {
      st.above = s->above;
      st.need = need_columns;
    }
    if (wv->D > 0 && j + 1 < l->nb) {
      st.below = s->below;
      st.ready = ready_columns;
      s->sent = 0;
    }
    ht_image im = { l->hd.width, n, (size_t)l->in_row, l->hd.channels, in_fmt,
                    (void *)(uintptr_t)(in + done * l->in_row) };
    ht_image om = { l->hd.width, n, (size_t)l->out_row, 1, out_fmt, out + done * l->out_row };
    ht_status status = ht_run_band_stream(ctx, &im, &om, p, &st);
    if (status != HT_OK) { /* refused before it began: nothing was sent or awaited */
      snprintf(err, ERR_MAX, "rank %d: %s", rank, ht_context_message(ctx));
      return false;
    }
    done += n;
  }
  finish_sends(&wv->s[0]);
  finish_sends(&wv->s[1]);
  return true;
}

int main(int argc, char **argv)
{
  hti_std_fds();
  /* threads of a rank never call MPI: the band's callbacks come from the
   * thread that runs it (ht_run_band_stream) */
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  if (rank == 0)
    hti_signals("halftone-mpi");

  options o;
  int rc = parse_args(argc, argv, &o);
  ht_params params;
  ht_context *ctx = NULL;
  if (rc < 0)
    rc = setup(&o, &params, &ctx);
  if (rc < 0) {
    int kind = hti_kind_from_path(o.output);
    if (kind != HTI_PBM && kind != HTI_PGM)
      rc = usage_error("%s: halftone-mpi writes .pbm or .pgm (rows at fixed offsets), not this type", o.output);
    else if (kind == HTI_PBM && o.levels != 2)
      rc = usage_error("%s: PBM holds 2 levels only; use .pgm for --levels %d", o.output, o.levels);
  }
  if (rc >= 0) {
    ht_context_free(ctx);
    MPI_Finalize();
    return exit_status(rc);
  }

  /* --- rank 0 claims the output and reads the header; all hear of it */
  char err[ERR_MAX] = "";
  hti_dest dest = { .fd = -1 };
  struct {
    hmpi_header hd;
    char tmp[4096];
  } shared;
  memset(&shared, 0, sizeof shared);
  bool ok = true;
  if (rank == 0) {
    char why[ERR_MAX - 100];
    if (!hti_dest_open(&dest, o.output, o.input, o.force, why, sizeof why)) {
      snprintf(err, sizeof err, "%s: %s", o.output, why);
      ok = false;
    } else if (!hmpi_read_header(o.input, &shared.hd, why, sizeof why)) {
      snprintf(err, sizeof err, "%s: %s", o.input, why);
      ok = false;
    } else if (!dest.discard && !hti_dest_create(&dest, why, sizeof why)) {
      /* made once the header is read and checked: a kill while it is
       * read leaves no temporary file (issue 37) */
      snprintf(err, sizeof err, "%s: %s", o.output, why);
      ok = false;
    } else if (dest.discard || !dest.tmp || strlen(dest.tmp) >= sizeof shared.tmp) {
      snprintf(err, sizeof err, "%s: cannot be written by MPI-IO", o.output);
      ok = false;
    } else {
      strcpy(shared.tmp, dest.tmp);
    }
  }
  if (!all_ok(ok, err)) {
    say("%s", err);
    hti_dest_close(&dest);
    ht_context_free(ctx);
    MPI_Finalize();
    return exit_status(1);
  }
  MPI_Bcast(&shared, (int)sizeof shared, MPI_BYTE, 0, MPI_COMM_WORLD);

  layout l = { .hd = shared.hd, .pbm = hti_kind_from_path(o.output) == HTI_PBM };
  choose_shape(&l, &o, ht_carry_rows(&params));
  l.in_row = hmpi_native_row_bytes(&l.hd);
  l.out_row = (int64_t)ht_format_row_bytes(l.pbm ? HT_FORMAT_BIT1 : HT_FORMAT_U8, l.hd.width, 1);
  char header[64];
  l.hdr_len = hmpi_out_header(header, sizeof header, l.pbm, l.hd.width, l.hd.height);

  /* --- files, memory, this rank's input rows */
  MPI_File fin = MPI_FILE_NULL, fout = MPI_FILE_NULL;
  int mrc = MPI_File_open(MPI_COMM_WORLD, o.input, MPI_MODE_RDONLY, MPI_INFO_NULL, &fin);
  if (mrc != MPI_SUCCESS) {
    char text[300];
    hmpi_error_string(mrc, text, sizeof text);
    snprintf(err, sizeof err, "%s: cannot open with MPI-IO on rank %d: %s", o.input, rank, text);
    ok = false;
  }
  mrc = MPI_File_open(MPI_COMM_WORLD, shared.tmp, MPI_MODE_WRONLY, MPI_INFO_NULL, &fout);
  if (mrc != MPI_SUCCESS && ok) {
    char text[300];
    hmpi_error_string(mrc, text, sizeof text);
    snprintf(err, sizeof err, "%s: cannot open its temporary file with MPI-IO on rank %d: %s", o.output, rank, text);
    ok = false;
  }
  wave wv = { .w = l.hd.width, .k = l.k, .nch = (l.hd.width + l.k - 1) / l.k, .D = ht_carry_rows(&params),
              .from = (rank + nranks - 1) % nranks, .to = (rank + 1) % nranks };
  const size_t carry = (size_t)wv.D * (size_t)wv.w;
  uint8_t *in = malloc(l.mine * l.in_row > 0 ? (size_t)(l.mine * l.in_row) : 1);
  uint8_t *out = malloc(l.mine * l.out_row > 0 ? (size_t)(l.mine * l.out_row) : 1);
  uint8_t *scratch = malloc((size_t)l.hd.row_bytes);
  bool mem = in && out && scratch;
  for (int i = 0; i < 2; i++) {
    wv.s[i].above = malloc(carry ? carry * sizeof(int32_t) : 1);
    wv.s[i].below = malloc(carry ? carry * sizeof(int32_t) : 1);
    wv.s[i].rreq = malloc((size_t)wv.nch * sizeof(MPI_Request));
    wv.s[i].sreq = malloc((size_t)wv.nch * sizeof(MPI_Request));
    mem = mem && wv.s[i].above && wv.s[i].below && wv.s[i].rreq && wv.s[i].sreq;
  }
  if (ok && !mem) {
    snprintf(err, sizeof err, "out of memory on rank %d (%lld rows of %lld bytes)", rank, (long long)l.mine,
             (long long)(l.in_row + l.out_row));
    ok = false;
  }
  int64_t done = 0;
  for (int64_t j = rank; ok && j < l.nb; j += nranks) {
    char why[ERR_MAX - 100];
    if (!hmpi_read_rows(fin, &l.hd, j * l.r, block_rows(&l, j), in + done * l.in_row, scratch, why, sizeof why)) {
      snprintf(err, sizeof err, "%s: %s", o.input, why);
      ok = false;
    }
    done += block_rows(&l, j);
  }
  if (fin != MPI_FILE_NULL)
    MPI_File_close(&fin);
  ok = all_ok(ok, err);

  /* --- the wavefront */
  double t0 = 0, t1 = 0;
  if (ok) {
    MPI_Type_vector(wv.D > 0 ? wv.D : 1, (int)wv.k, (int)wv.w, MPI_INT32_T, &wv.full);
    MPI_Type_vector(wv.D > 0 ? wv.D : 1, (int)(wv.w - (wv.nch - 1) * wv.k), (int)wv.w, MPI_INT32_T, &wv.last);
    MPI_Type_commit(&wv.full);
    MPI_Type_commit(&wv.last);
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = now_s();
    ok = all_ok(run_blocks(ctx, &params, &l, &wv, in, out, err), err);
    t1 = now_s();
    MPI_Type_free(&wv.full);
    MPI_Type_free(&wv.last);
  }

  /* --- metrics: the mean tone error over all ranks' rows, from integer
   * sums as ht_compute_metrics makes them (so the same number as
   * halftone --metrics prints) */
  if (ok && o.metrics) {
    int64_t sums[2] = { 0, 0 }, all[2] = { 0, 0 };
    for (int64_t y = 0; y < l.mine; y++)
      for (int64_t x = 0; x < l.hd.width; x++) {
        sums[0] += gray8(&l, in + y * l.in_row, x);
        sums[1] += l.pbm ? ((out[y * l.out_row + (x >> 3)] >> (7 - (x & 7))) & 1 ? 0 : 255) : out[y * l.out_row + x];
      }
    MPI_Reduce(sums, all, 2, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
      printf("mean tone error: %.4f\n",
             fabs((double)all[1] - (double)all[0]) / ((double)l.hd.width * (double)l.hd.height));
  }
  if (ok && o.bench) {
    long mine = peak_kib(), most = 0;
    MPI_Reduce(&mine, &most, 1, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
      printf("bench: %lldx%lld, %d rank(s) of %d thread(s), rows %lld, chunk %lld: %.3f ms, %.3f ns/pixel, peak "
             "memory of a rank %.1f MiB\n", (long long)l.hd.width, (long long)l.hd.height, nranks, o.threads,
             (long long)l.r,
             (long long)l.k, (t1 - t0) * 1e3, (t1 - t0) * 1e9 / ((double)l.hd.width * (double)l.hd.height),
             (double)most / 1024.0);
  }

  /* --- the output: header, every rank's rows, then the verdict */
  if (ok && fout != MPI_FILE_NULL) {
    char why[ERR_MAX - 100];
    bool wrote = rank != 0 || hmpi_write_at(fout, 0, (const uint8_t *)header, l.hdr_len, why, sizeof why);
    done = 0;
    for (int64_t j = rank; wrote && j < l.nb; j += nranks) {
      wrote = hmpi_write_at(fout, l.hdr_len + j * l.r * l.out_row, out + done * l.out_row,
                            block_rows(&l, j) * l.out_row, why, sizeof why);
      done += block_rows(&l, j);
    }
    if (!wrote) {
      snprintf(err, sizeof err, "%s: %s", o.output, why);
      ok = false;
    }
  }
  if (fout != MPI_FILE_NULL) {
    if (ok && MPI_File_sync(fout) != MPI_SUCCESS) {
      snprintf(err, sizeof err, "%s: could not sync the written rows to the disk on rank %d", o.output, rank);
      ok = false;
    }
    MPI_File_close(&fout);
  }
  ok = all_ok(ok, err);
  if (ok && rank == 0 && fflush(stdout) != 0) {
    snprintf(err, sizeof err, "cannot write to stdout: %s; %s not written", strerror(errno), o.output);
    ok = false;
  }
  if (ok && rank == 0) {
    /* the tools' common finish: MPI-IO wrote and synced the rows through
     * its own handle, so rank 0's descriptor is closed, and the rename
     * goes through hti_dest_commit with the signals held, so that a
     * signal after it no longer says "not written" of the file */
    char why[ERR_MAX - 100];
    hti_dest *set[1] = { &dest };
    if (dest.fd >= 0 && close(dest.fd) != 0)
      snprintf(why, sizeof why, "cannot write: %s", strerror(errno));
    dest.fd = -1;
    if (hti_dest_commit(set, 1, why, sizeof why) != 1) {
      snprintf(err, sizeof err, "%s: %s", o.output, why);
      ok = false;
    }
  }
  ok = all_ok(ok, err);
  if (!ok)
    say("%s", err);
  hti_dest_close(&dest);
  for (int i = 0; i < 2; i++) {
    free(wv.s[i].above);
    free(wv.s[i].below);
    free(wv.s[i].rreq);
    free(wv.s[i].sreq);
  }
  free(in);
  free(out);
  free(scratch);
  ht_context_free(ctx);
  MPI_Finalize();
  return exit_status(ok ? 0 : 1);
}
