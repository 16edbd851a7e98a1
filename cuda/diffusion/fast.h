/* cuda/diffusion/fast.h: our own exact kernel (variant gpu-fast), used by
 * run_fast.cu and bench.cu. */
#ifndef HT_CUDA_FAST_H
#define HT_CUDA_FAST_H

#include <cuda_runtime.h>
#include "../module.h"

/* One launch covers a "chunk" of rows that is resident on the device. */
typedef struct {
  const void *in;          /* 8- or 16-bit samples, rows rounded up to 32   */
  size_t in_pitch;         /* bytes, multiple of 16, >= roundup(width, 32)  */
  int in_bits;             /* 8 or 16                                       */
  unsigned char *out;      /* lut[level] bytes, or packed bits              */
  size_t out_pitch;        /* >= roundup(width, 32) (bytes) or /8 for bits  */
  int out_bit1;
  int width, height;       /* of the chunk                                  */
  int levels;              /* ht_fast_set_filter sets levels and q          */
  int q[4][9];             /* Q12 weight of (dx, dy) at q[dy][dx + 4]       */
  unsigned char lut[256];  /* level -> output byte (out_bit1 == 0)          */
  /* Error rows handed from band to band: slot b holds the last `down`
   * rows of band b - 1 (slot 0: the rows carried from the chunk above,
   * or into the plane; the launch's last band, which may be shorter than
   * 32 rows, stores its last `down` rows at the slot's bottom),
   * as 32-bit words error + (wtag << 24). A word is this launch's when
   * it differs from wtag << 24 by a 24-bit signed value, so no fence or
   * flag is needed between bands, and one 32-bit store hands a word on.
   * Errors stay far inside 24 bits (|e| is about half of full scale,
   * 65535, for weights that sum to at most 1); a word that never turns
   * valid ends the wait after seconds with *fault = 1, never a hang.
   * Tags run 1..255; the host clears the slots (0 is never valid) before
   * they wrap. */
  unsigned *bound;
  size_t bound_row;        /* words per boundary row, >= width              */
  unsigned tag;            /* this launch's tag for done[], never 0         */
  unsigned wtag;           /* this launch's word tag, 1..255                */
  unsigned carry_wtag;     /* word tag of the carried rows in slot 0        */
  int *fault;              /* host-mapped; set when a wait timed out        */
  int have_carry;
  int *ticket;             /* zeroed before the launch: band order          */
  const int *in_ready;     /* number of stripes uploaded so far             */
  int stripe_rows;         /* multiple of 32                                */
  unsigned *done;          /* host-mapped: done[band] = tag when written    */
  unsigned long long *trace; /* benchmark only, or NULL: see below      */
} ht_fast_params;

/* Layout of ht_fast_params.trace: HT_FAST_TRACE_BAND words per band
 * (%globaltimer at its start and end, then HT_FAST_STATS counters), then
 * HT_FAST_TRACE_GROUPS per band (when each of its first groups passed;
 * every HT_FAST_STATS_EVERY-th group, see fast.cu). */
#define HT_FAST_TRACE_BAND 16
#define HT_FAST_TRACE_GROUPS 512
/* The words of a band (HT_FAST_STATS builds fill all but START and END). */
enum {
  HT_FT_START,      /* %globaltimer when the band was taken              */
  HT_FT_END,        /* ... when it was done                              */
  HT_FT_FIRST,      /* ... when its first group passed                   */
  HT_FT_WAITS,      /* waits after the first group                       */
  HT_FT_WAIT_CYC,   /* clock cycles in them                              */
  HT_FT_WAIT_MAX,   /* the longest, cycles                               */
  HT_FT_C15,        /* cycles from the first group to column 15 of row 31 */
  HT_FT_POLLS_RT,   /* first-group polls | one load's round trip << 32    */
  HT_FT_CLOCKS,     /* cycles the band took                              */
  HT_FT_WAITS_CHUNK /* waits at a chunk's first group                    */
};
/* The one-line reason a launch failed on a band's wait (*fault set). */
#define HT_FAST_FAULT_MSG "a GPU band waited seconds for the band above (an error outside 24 bits, or a lost word)"

/* The filter's taps as the kernel's dense q[][] (taps outside it have
 * weight 0), and the level count. The one place a filter becomes kernel
 * parameters. */
void ht_fast_set_filter(ht_fast_params *p, const ht_filter *f, int levels);
/* Rows of boundary words per band for this filter (>= reach_down). */
int ht_fast_down(const ht_filter *f);
/* Launches the persistent kernel on `stream`; returns at once. `wps`:
 * resident warps per multiprocessor to launch (0: default). The kernel
 * shape follows f's reach and delay; p's weights come from the same f. */
cudaError_t ht_fast_launch(const ht_filter *f, const ht_fast_params *p, int multiprocessors,
                           int wps, cudaStream_t stream);
/* Name of the kernel shape used for f, for the benchmark. */
const char *ht_fast_shape_name(const ht_filter *f);

#endif
