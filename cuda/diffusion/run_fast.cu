/* cuda/diffusion/run_fast.cu: gpu-fast over one plane (module.h's run,
 * variant 0).
 *
 * The plane goes up in horizontal stripes while ONE persistent kernel
 * (fast.cu) runs over all of it: a band of rows waits on a device counter
 * of uploaded stripes and announces its finished rows in host-mapped
 * flags, so stripe k + 1 uploads and stripe k - 1 downloads while stripe
 * k computes, with no kernel boundary between stripes (each kernel
 * boundary would cost a whole pipeline fill). A plane larger than the
 * device's memory runs as several such chunks, the last error rows of
 * one carried into the next through boundary slot 0 (fast.h).
 *
 * Carried rows of a band of a taller image (io->carry_in, carry_out; the
 * core's ht_run_band) use the same slots:
 *  - carry_in goes into slot 0 of the first chunk as boundary words, as
 *    if a chunk above had left them there;
 *  - carry_out comes from the last chunk's last two slots: its last band
 *    stores its last D rows into slot nbands whatever its height, and
 *    slot nbands - 1 holds the D rows above that band (slot 0: the rows
 *    above the chunk), so the two hold the last D rows up to the plane's
 *    end even where the last band, or the whole plane, is shorter than D.
 */
#include "../module_private.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <sched.h>
#include <vector>

namespace htcuda {

bool arm_fault(dev *d, ctx_err &ce, int **fault_dev)
{
  if (!grow_host(ce, (void **)&d->h_fault, &d->h_fault_n, sizeof(int), cudaHostAllocMapped, "the fault flag") ||
      !ce.check(cudaHostGetDevicePointer((void **)fault_dev, d->h_fault, 0), "cudaHostGetDevicePointer"))
    return false;
  *(volatile int *)d->h_fault = 0;
  return true;
}

/* The flag is set before the band's done flag, so a finished stripe
 * shows it. HT_CUDA_FAIL_WAIT tests this path: the rows carried into the
 * second chunk are wiped, so its first band waits for words that never
 * come. */
bool faulted(dev *d, ctx_err &ce)
{
  if (!*(volatile int *)d->h_fault)
    return false;
  say(ce.msg, ce.n, "%s%s", HT_FAST_FAULT_MSG, env_set("HT_CUDA_FAIL_WAIT") ? " (simulated by HT_CUDA_FAIL_WAIT)" : "");
  ce.err = cudaErrorUnknown;
  return true;
}

namespace {

/* The errors a boundary word can carry: a 24-bit signed value (fast.h).
 * The core's errors stay near half of full scale (docs/arithmetic.md). */
constexpr int32_t WORD_MIN = -(1 << 23), WORD_MAX = (1 << 23) - 1;

/* The error in boundary word w of tag wtag; false when w is not such a
 * word. */
bool word_error(unsigned w, unsigned wtag, int32_t *e)
{
  const unsigned base = wtag << 24;
  if (w - base + 0x800000u >= 0x1000000u)
    return false;
  *e = (int32_t)(w - base);
  return true;
}

/* io->carry_in (Df rows, the one next to the plane last) into slot 0 as
 * words of tag wtag: slot row D - k is the k-th row above the plane. Rows
 * the filter does not reach (k > Df, where the kernel's box is deeper
 * than the filter) are zeros, which the box weights 0. */
bool put_carry_in(dev *d, ctx_err &ce, const ht_cuda_io *io, int W, int Df, int D, size_t bound_row, unsigned wtag)
{
  const unsigned base = wtag << 24;
  std::vector<unsigned> w((size_t)D * bound_row, base);
  for (int k = 1; k <= Df; k++) {
    const int32_t *src = io->carry_in + (size_t)(Df - k) * (size_t)W;
    unsigned *dst = w.data() + (size_t)(D - k) * bound_row;
    for (int x = 0; x < W; x++)
      dst[x] = (unsigned)src[x] + base;
  }
  /* synchronised: the vector is gone when this returns */
  return ce.check(cudaMemcpyAsync(d->d_bound, w.data(), w.size() * sizeof(unsigned), cudaMemcpyHostToDevice, d->comp),
                  "the carried rows") &&
         ce.check(cudaStreamSynchronize(d->comp), "the carried rows");
}

/* io->carry_out (Df rows, the plane's last row last) after the last
 * chunk, of Hc rows, ran with word tag wtag; slot 0 held the rows above
 * that chunk with tag slot0_wtag, or nothing (!slot0) where the plane
 * starts the image, which means zeros above. */
bool get_carry_out(dev *d, ctx_err &ce, const ht_cuda_io *io, int W, int Df, int D, size_t bound_row, int Hc,
                   unsigned wtag, bool slot0, unsigned slot0_wtag)
{
  const int nb = (Hc + 31) / 32, last = Hc - (nb - 1) * 32, m = std::min(last, D);
  std::vector<unsigned> w((size_t)(2 * D) * bound_row);
  if (!ce.check(cudaMemcpyAsync(w.data(), d->d_bound + (size_t)(nb - 1) * (size_t)D * bound_row,
                                w.size() * sizeof(unsigned), cudaMemcpyDeviceToHost, d->comp),
                "the carried rows") ||
      !ce.check(cudaStreamSynchronize(d->comp), "the carried rows"))
    return false;
  /* The rows down to the chunk's last, in order: the D rows of slot
   * nb - 1, then the m rows that the last band stored at the bottom of
   * slot nb (slot rows D - m .. D - 1). carry_out is their last Df. */
  for (int r = 0; r < Df; r++) {
    const int s = D + m - Df + r;
    const bool above = s < D;
    const unsigned *src = w.data() + (size_t)(above ? s : s + D - m) * bound_row;
    const bool zeros = above && nb == 1 && !slot0;
    const unsigned tag = above && nb == 1 ? slot0_wtag : wtag;
    int32_t *dst = io->carry_out + (size_t)r * (size_t)W;
    for (int x = 0; x < W; x++) {
      if (zeros) {
        dst[x] = 0;
      } else if (!word_error(src[x], tag, &dst[x])) {
        say(ce.msg, ce.n, "the GPU left carried row %d incomplete at column %d", r, x);
        ce.err = cudaErrorUnknown;
        return false;
      }
    }
  }
  return true;
}

} // namespace

int run_fast(dev *d, const ht_filter *f, int levels, const ht_cuda_io *io, char *msg, size_t msg_size)
{
  ctx_err ce{ msg, msg_size };
  plane pl;
  plane_init(pl, io);
  const int D = ht_fast_down(f); /* rows of boundary words, >= Df */
  const int Df = f->reach_down;  /* rows the core carries */
  const int W = pl.W, H = pl.H;
  const size_t bound_row = roundup((size_t)W, 32);
  const bool carry_in = io->carry_in && Df > 0, carry_out = io->carry_out && Df > 0;
  if (Df > D) {
    say(msg, msg_size, "gpu-fast has no kernel for a filter reaching %d rows down", Df);
    return HT_CUDA_ERR_UNSUPPORTED;
  }
  for (size_t i = 0; carry_in && i < (size_t)Df * (size_t)W; i++)
    if (io->carry_in[i] < WORD_MIN || io->carry_in[i] > WORD_MAX) {
      say(msg, msg_size, "carried error %d (row %zu, column %zu) is outside the GPU's 24 bits", (int)io->carry_in[i],
          i / (size_t)W, i % (size_t)W);
      return HT_CUDA_ERR_UNSUPPORTED;
    }

  /* Stripe height: enough stripes to overlap transfers with the kernel,
   * not so thin that per-copy overheads dominate. */
  long S = env_long("HT_CUDA_STRIPE_ROWS", 0);
  if (S <= 0)
    S = std::max<long>((H + 15) / 16, (1L << 20) / W);
  S = (long)roundup((size_t)std::max<long>(S, 32), 32);
  /* Chunk height: what fits in device memory. */
  size_t per_row = pl.in_pitch + pl.out_pitch + (size_t)D * bound_row * sizeof(unsigned) / 32 + 16;
  size_t free_b = 0, total_b = 0;
  if (!ce.check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo"))
    return status_of(ce);
  size_t budget = (free_b + d->d_in_size + d->d_out_size + d->d_bound_size) / 10 * 7;
  long C = env_long("HT_CUDA_CHUNK_ROWS", 0);
  if (C <= 0)
    C = (long)std::min<size_t>(budget / per_row, (size_t)INT_MAX / 2);
  C = C / 32 * 32;
  if (C < 32) {
    say(msg, msg_size, "not enough GPU memory for a %dx32 stripe (%zu bytes free)", W, free_b);
    return HT_CUDA_ERR_NO_MEMORY;
  }
  if (S > C)
    S = C;
  C = C / S * S;
  if (C > (long)roundup((size_t)H, (size_t)S))
    C = (long)roundup((size_t)H, (size_t)S);
  const int Cpad = (int)C; /* multiple of 32 */
  const int max_bands = Cpad / 32;
  const int max_stripes = (int)((C + S - 1) / S);

  if (!grow_dev(ce, &d->d_in, &d->d_in_size, pl.in_pitch * (size_t)Cpad, false, "the input") ||
      !grow_dev(ce, (void **)&d->d_out, &d->d_out_size, pl.out_pitch * (size_t)Cpad, false, "the output") ||
      !grow_dev(ce, (void **)&d->d_bound, &d->d_bound_size,
                (size_t)(max_bands + 1) * (size_t)D * bound_row * sizeof(unsigned), true, "the band boundaries") ||
      !grow_host(ce, (void **)&d->h_done, &d->h_done_n, (size_t)max_bands * sizeof(unsigned), cudaHostAllocMapped,
                 "the band flags") ||
      !grow_host(ce, (void **)&d->h_vals, &d->h_vals_n, (size_t)(max_stripes + 1) * sizeof(int),
                 cudaHostAllocDefault, "the stripe flags") ||
      !ensure_staging(d, ce, pl, (int)S))
    return status_of(ce);
  unsigned *done_dev = nullptr;
  int *fault_dev = nullptr;
  if (!ce.check(cudaHostGetDevicePointer((void **)&done_dev, d->h_done, 0), "cudaHostGetDevicePointer") ||
      !arm_fault(d, ce, &fault_dev))
    return status_of(ce);

  ht_fast_params p;
  memset(&p, 0, sizeof p);
  p.in = d->d_in;
  p.in_pitch = pl.in_pitch;
  p.in_bits = pl.in_bits;
  p.out = d->d_out;
  p.out_pitch = pl.out_pitch;
  p.out_bit1 = pl.bit1;
  p.width = W;
  ht_fast_set_filter(&p, f, levels);
  for (int i = 0; i < 256; i++) /* packed bits are made from level indices */
    p.lut[i] = pl.store || pl.bit1 ? (unsigned char)i : io->lut[i];
  p.bound = d->d_bound;
  p.bound_row = bound_row;
  p.ticket = d->d_ticket;
  p.in_ready = d->d_ready;
  p.stripe_rows = (int)S;
  p.done = done_dev;
  p.fault = fault_dev;
  const int wps = (int)env_long("HT_CUDA_FAST_WPS", 0);

  /* slot 0 holds rows above the chunk (carried in, or from the chunk
   * above) with this word tag */
  bool have_carry = false;
  unsigned carry_wtag = 0;
  int64_t stored_rows = 0;
  for (int64_t y0 = 0; y0 < H; y0 += C) {
    const int Hc = (int)std::min<int64_t>(C, H - y0);
    const int nstripes = (int)((Hc + S - 1) / S);
    const int nbands = (Hc + 31) / 32;
    if (++d->tag == 0)
      d->tag = 1;
    p.tag = d->tag;
    p.height = Hc;
    if (!next_wtag(d, ce, have_carry ? (size_t)D * bound_row : 0))
      goto fail;
    p.wtag = d->wtag;
    if (y0 == 0 && carry_in) {
      if (!put_carry_in(d, ce, io, W, Df, D, bound_row, p.wtag))
        goto fail;
      have_carry = true;
      carry_wtag = p.wtag;
    }
    p.have_carry = have_carry;
    p.carry_wtag = carry_wtag;
    if (y0 == C && env_set("HT_CUDA_FAIL_WAIT") && /* see faulted() */
        !ce.check(cudaMemsetAsync(d->d_bound, 0, (size_t)D * bound_row * sizeof(unsigned), d->comp), "cudaMemsetAsync"))
      goto fail;
    if (!ce.check(cudaMemsetAsync(d->d_ticket, 0, sizeof(int), d->comp), "cudaMemsetAsync") ||
        !ce.check(cudaMemsetAsync(d->d_ready, 0, sizeof(int), d->comp), "cudaMemsetAsync") ||
        !ce.check(cudaEventRecord(d->ev_reset, d->comp), "event") ||
        !ce.check(cudaStreamWaitEvent(d->h2d, d->ev_reset, 0), "cudaStreamWaitEvent") ||
        !ce.check(ht_fast_launch(f, &p, d->prop.multiProcessorCount, wps, d->comp), "the kernel launch"))
      goto fail;
    {
      int up = 0, down = 0, stored = 0;
      auto rows_of = [&](int k) { return (int)std::min<long>(S, Hc - (long)k * S); };
      auto stripe_done = [&](int k) {
        int b0 = (int)((long)k * S / 32), b1 = std::min(nbands, (int)(((long)k * S + rows_of(k) + 31) / 32));
        for (int b = b0; b < b1; b++)
          if (((volatile unsigned *)d->h_done)[b] != p.tag)
            return false;
        return true;
      };
      while (stored < nstripes) {
        bool busy = false;
        if (up < nstripes) {
          unsigned char *dst = (unsigned char *)d->d_in + (size_t)up * (size_t)S * pl.in_pitch;
          if (!upload_rows(d, ce, pl, y0 + (int64_t)up * S, rows_of(up), dst, up % NSLOT))
            goto fail;
          d->h_vals[up + 1] = up + 1;
          if (!ce.check(cudaMemcpyAsync(d->d_ready, &d->h_vals[up + 1], sizeof(int), cudaMemcpyHostToDevice, d->h2d),
                        "stripe flag"))
            goto fail;
          up++;
          busy = true;
        }
        if (down < up && down - stored < NSLOT && stripe_done(down)) {
          if (faulted(d, ce)) /* before any of its rows reach the caller */
            goto fail;
          const unsigned char *src = d->d_out + (size_t)down * (size_t)S * pl.out_pitch;
          if (!download_rows(d, ce, pl, y0 + (int64_t)down * S, rows_of(down), src, down % NSLOT))
            goto fail;
          down++;
          busy = true;
        }
        if (stored < down) {
          cudaError_t e = cudaEventQuery(d->ev_out[stored % NSLOT]);
          if (e == cudaSuccess) {
            store_rows(d, pl, y0 + (int64_t)stored * S, rows_of(stored), stored % NSLOT);
            stored_rows += rows_of(stored);
            stored++;
            busy = true;
            if (io->tick && !io->tick(io->user, stored_rows, H)) {
              say(msg, msg_size, "cancelled");
              release_kernel(d);
              return HT_CUDA_ERR_CANCELLED;
            }
          } else if (e != cudaErrorNotReady && !ce.check(e, "download")) {
            goto fail;
          }
        }
        if (!busy) {
          cudaError_t e = cudaStreamQuery(d->comp);
          if (e == cudaSuccess && down < nstripes && !stripe_done(down)) {
            say(msg, msg_size, "the GPU kernel ended without finishing rows %lld..",
                (long long)(y0 + (int64_t)down * S));
            ce.err = cudaErrorUnknown;
            goto fail;
          }
          if (e != cudaSuccess && e != cudaErrorNotReady && !ce.check(e, "the kernel"))
            goto fail;
          sched_yield();
        }
      }
    }
    if (!ce.check(cudaStreamSynchronize(d->comp), "the kernel") || faulted(d, ce))
      goto fail;
    if (y0 + C < H) {
      /* the last error rows into slot 0 for the next chunk */
      if (!ce.check(cudaMemcpyAsync(d->d_bound, d->d_bound + (size_t)nbands * (size_t)D * bound_row,
                                    (size_t)D * bound_row * sizeof(unsigned), cudaMemcpyDeviceToDevice, d->comp),
                    "carry"))
        goto fail;
      have_carry = true;
      carry_wtag = p.wtag;
    }
  }
  if (!ce.check(cudaStreamSynchronize(d->comp), "the kernel"))
    goto fail;
  /* p still describes the last chunk */
  if (carry_out &&
      !get_carry_out(d, ce, io, W, Df, D, bound_row, p.height, p.wtag, p.have_carry != 0, p.carry_wtag))
    goto fail;
  return HT_CUDA_OK;
fail:
  release_kernel(d);
  return status_of(ce);
}

} // namespace htcuda
