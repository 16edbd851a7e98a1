/* Plane-dependent colour error diffusion on the GPU (gpu-pd), the host
 * side (cuda/color/ is the device side): every plane of the job to the
 * module's color_pd (cuda/module.h's ht_cuda_color). 8-bit interleaved
 * pixels cross as they are and are converted on the GPU; other formats
 * cross as planes of HT_FX values made here, and leave as level indices
 * stored here, on the job's threads. */
#include "color.h"
#include "../cuda_loader.h"
#include "../../cuda/module.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Rows y0 .. y1 of every plane loaded (and separated) into `in`, or
 * stored from `out`, on one of several threads (rows.h: load and store
 * may run on several threads at once). */
typedef struct {
  const ht_color_job *cj;
  uint16_t *in;
  const uint8_t *out;
  int64_t y0, y1;
  bool store;
  bool ok, threaded;
  pthread_t tid;
} color_part;

static void *color_part_run(void *arg)
{
  color_part *pt = arg;
  const ht_color_job *cj = pt->cj;
  const int P = cj->planes;
  const int64_t w = cj->rows[0].width, h = cj->rows[0].height;
  const size_t plane = (size_t)w * (size_t)h;
  if (pt->store) {
    for (int64_t y = pt->y0; y < pt->y1; y++)
      for (int j = 0; j < P; j++)
        cj->rows[j].store(&cj->rows[j], y, 0, w, pt->out + (size_t)j * plane + (size_t)y * (size_t)w);
    return NULL;
  }
  int32_t *row = malloc((size_t)w * (size_t)(P + 3) * sizeof *row);
  pt->ok = row != NULL;
  if (!row)
    return NULL;
  int32_t *dst[4];
  for (int j = 0; j < P; j++)
    dst[j] = row + (size_t)j * (size_t)w;
  for (int64_t y = pt->y0; y < pt->y1; y++) {
    ht_color_load(cj, y, 0, w, dst, row + (size_t)P * (size_t)w);
    for (int j = 0; j < P; j++) {
      uint16_t *o = pt->in + (size_t)j * plane + (size_t)y * (size_t)w;
      for (int64_t x = 0; x < w; x++) /* HT_FX values (separated too) are 0..65535 */
        o[x] = (uint16_t)dst[j][x];
    }
  }
  free(row);
  return NULL;
}

/* Every row on up to `threads` threads; false when out of memory. */
static bool color_parts(const ht_color_job *cj, uint16_t *in, const uint8_t *out, bool store, int threads)
{
  enum { MAXT = 64 };
  color_part parts[MAXT];
  const int64_t h = cj->rows[0].height;
  int n = threads < 1 ? 1 : threads > MAXT ? MAXT : threads;
  if (n > h)
    n = (int)h;
  for (int k = 0; k < n; k++) {
    parts[k] = (color_part){ .cj = cj, .in = in, .out = out, .y0 = h * k / n, .y1 = h * (k + 1) / n,
                             .store = store, .ok = true, .threaded = false };
    if (k > 0)
      parts[k].threaded = pthread_create(&parts[k].tid, NULL, color_part_run, &parts[k]) == 0;
    if (k > 0 && !parts[k].threaded)
      color_part_run(&parts[k]); /* no thread: this one does it */
  }
  color_part_run(&parts[0]);
  bool ok = true;
  for (int k = 0; k < n; k++) {
    if (parts[k].threaded)
      pthread_join(parts[k].tid, NULL);
    ok = ok && parts[k].ok;
  }
  return ok;
}

/* Whether every plane reads channel p (cmyk: R, G, B) of one 8-bit
 * interleaved input, which the module then takes as it is (in8). */
static bool color_in8(const ht_color_job *cj)
{
  const ht_rows *r0 = &cj->rows[0];
  for (int p = 0; p < (cj->cmyk ? 3 : cj->planes); p++) {
    const ht_rows *r = &cj->rows[p];
    if (r->linear || r->in_format != HT_FORMAT_U8 || r->in != r0->in || r->in_stride != r0->in_stride ||
        r->in_channels != r0->in_channels || r->in_channel != p)
      return false;
  }
  return true;
}

/* Whether plane p goes to channel p of one 8-bit interleaved output
 * (out8), its values from each plane's table. */
static bool color_out8(const ht_color_job *cj)
{
  const ht_rows *r0 = &cj->rows[0];
  for (int p = 0; p < cj->planes; p++) {
    const ht_rows *r = &cj->rows[p];
    if (r->out_format != HT_FORMAT_U8 || r->out != r0->out || r->out_stride != r0->out_stride ||
        r->out_channels != r0->out_channels || r->out_channel != p)
      return false;
  }
  return true;
}

/* For tools/bench-color.sh, where HT_CUDA_COLOR_TIMES is set: the
 * kernel's time alone, and the copies'. */
static void print_times(const ht_cuda_color *cc, bool in8, bool out8)
{
  if (getenv("HT_CUDA_COLOR_TIMES"))
    fprintf(stderr, "gpu-pd kernel: %.3f ms (up %.3f ms, down %.3f ms, pixels %s in, %s out)\n", cc->kernel_ms,
            cc->upload_ms, cc->download_ms, in8 ? "8-bit" : "host planes", out8 ? "8-bit" : "host planes");
}

ht_status ht_color_gpu_run(ht_cuda *c, ht_job *job)
{
  const ht_color_job *cj = job->color;
  const int P = cj->planes;
  const int64_t w = cj->rows[0].width, h = cj->rows[0].height;
  const size_t plane = (size_t)w * (size_t)h;
  ht_cuda_color cc;
  memset(&cc, 0, sizeof cc);
  cc.width = w;
  cc.height = h;
  cc.planes = P;
  for (int j = 0; j < P; j++) {
    cc.levels[j] = cj->levels[j];
    cc.forward[j] = cj->forward[j];
    cc.backward[j] = cj->backward[j];
  }
  cc.amount = cj->amount;
  cc.seed = job->seed;
  /* 8-bit pixels cross as they are and are converted on the GPU
   * (cuda/color/io.cu); other formats as planes made here. */
  const bool in8 = color_in8(cj), out8 = color_out8(cj);
  if (in8) {
    cc.in8 = cj->rows[0].in;
    cc.in8_channels = cj->rows[0].in_channels;
    cc.in8_stride = cj->rows[0].in_stride;
    cc.cmyk = cj->cmyk;
    cc.black = cj->black;
  }
  if (out8) {
    cc.out8 = cj->rows[0].out;
    cc.out8_channels = cj->rows[0].out_channels;
    cc.out8_stride = cj->rows[0].out_stride;
    for (int j = 0; j < P; j++)
      for (int q = 0; q < 256; q++)
        cc.out8_lut[j][q] = (uint8_t)cj->rows[j].lut[q];
  }
  uint16_t *in = in8 ? NULL : ht_alloc_raw(job, plane * (size_t)P, sizeof *in);
  uint8_t *out = out8 ? NULL : ht_alloc_raw(job, plane * (size_t)P, 1);
  ht_status s = HT_OK;
  if ((!in8 && !in) || (!out8 && !out) || (!in8 && !color_parts(cj, in, NULL, false, job->threads))) {
    ht_set_msg(job->msg, "out of memory: the rows of a %lldx%lld image", (long long)w, (long long)h);
    s = HT_ERR_NO_MEMORY;
    goto done;
  }
  cc.in = in;
  cc.out = out;
  char why[HT_MSG_MAX] = "";
  s = ht_cuda_status(job, c->api->color_pd(c->dev, &job->filter, &cc, why, sizeof why), why);
  if (s != HT_OK)
    goto done;
  print_times(&cc, in8, out8);
  if (!out8)
    color_parts(cj, NULL, out, true, job->threads);
  if (!ht_job_tick(job, h, h))
    s = HT_ERR_CANCELLED;
done:
  free(in);
  free(out);
  return s;
}
