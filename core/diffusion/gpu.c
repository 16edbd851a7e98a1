/* Error diffusion on the GPU, the host side (cuda/diffusion/ is the
 * device side): one plane of the job to the module's run (cuda/module.h's
 * ht_cuda_io), its pixels as they are where the module reads them (8- or
 * 16-bit single-channel planes in, 1-bit or 8-bit planes out), otherwise
 * row by row through the plane's loader and storer on the module's copy
 * threads. */
#include "diffusion.h"
#include "../cuda_loader.h"
#include "../../cuda/module.h"

#include <string.h>

/* ---------------------------------------------------- rows <-> module io */

typedef struct {
  ht_job *job;
  const ht_rows *rows;
} bridge;

/* Called by the module's copy threads, each with its own scratch row. */
static void bridge_load(void *user, int64_t y, uint16_t *dst, int32_t *scratch)
{
  const bridge *b = user;
  b->rows->load(b->rows, y, 0, b->rows->width, scratch);
  for (int64_t x = 0; x < b->rows->width; x++)
    dst[x] = (uint16_t)scratch[x]; /* HT_FX values are 0..65535 */
}

static void bridge_store(void *user, int64_t y, const uint8_t *levels)
{
  bridge *b = user;
  b->rows->store(b->rows, y, 0, b->rows->width, levels);
}

static bool bridge_tick(void *user, int64_t done, int64_t total)
{
  bridge *b = user;
  return ht_job_tick(b->job, done, total);
}

ht_status ht_diffusion_gpu_run(ht_cuda *c, ht_job *job, const ht_rows *rows, int module_variant)
{
  const int v = module_variant;
  if (v < 0 || v >= HT_CUDA_VARIANT_COUNT) {
    ht_set_msg(job->msg, "unknown GPU variant %d", (int)job->variant);
    return HT_ERR_INVALID_ARGUMENT;
  }
  bridge b = { job, rows };
  ht_cuda_io io;
  memset(&io, 0, sizeof io);
  io.width = rows->width;
  io.height = rows->height;
  io.user = &b;
  io.tick = bridge_tick;
  /* carried rows (ht_run_band): the module writes all of carry_out,
   * including the rows above a band shorter than the carry */
  io.carry_in = job->carry_in;
  io.carry_out = job->carry_out;
  /* The common planes go as they are; anything else row by row. */
  if (rows->in_channel == 0 && rows->in_channels == 1 && !rows->linear &&
      (rows->in_format == HT_FORMAT_U8 || rows->in_format == HT_FORMAT_U16)) {
    io.in = rows->in;
    io.in_stride = rows->in_stride;
    io.in_bits = rows->in_format == HT_FORMAT_U8 ? 8 : 16;
  } else {
    io.load = bridge_load;
  }
  if (rows->out_format == HT_FORMAT_BIT1 && rows->out_channels == 1) {
    io.out_kind = HT_CUDA_OUT_BIT1;
    io.out = rows->out;
    io.out_stride = rows->out_stride;
  } else if (rows->out_format == HT_FORMAT_U8 && rows->out_channels == 1) {
    io.out_kind = HT_CUDA_OUT_U8;
    io.out = rows->out;
    io.out_stride = rows->out_stride;
    for (int i = 0; i < 256; i++)
      io.lut[i] = (uint8_t)rows->lut[i];
  } else {
    io.out_kind = HT_CUDA_OUT_STORE;
    io.store = bridge_store;
  }

  char why[HT_MSG_MAX] = "";
  return ht_cuda_status(job, c->api->run(c->dev, v, &job->filter, job->levels, &io, why, sizeof why), why);
}
