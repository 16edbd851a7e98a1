/* The CUDA backend's run-time loader. The core never links the CUDA
 * runtime: it dlopen()s libhalftone-cuda.so (cuda/module.h) on the first
 * GPU run, so the library, the CLI and the GEGL operation work on
 * machines without a driver. Search order:
 *   1. $HT_CUDA_MODULE, a path (and nothing else when it is set);
 *   2. next to the code calling us (the CLI, a test, the GEGL module) and
 *      up to two folders above it in cuda/ (the build tree), then the same
 *      around /proc/self/exe;
 *   3. the install folder HT_CUDA_MODULE_DIR.
 * A module found by 2 or 3 is loaded only where an NVIDIA driver shows
 * itself (a device node, or /proc/driver/nvidia).
 */
#include "cuda_loader.h"
#include "../cuda/module.h"
#include "color/color.h"

#include <dlfcn.h>
#include <pthread.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef HT_CUDA_MODULE_DIR
#define HT_CUDA_MODULE_DIR "/usr/local/lib/gegl-halftone"
#endif
#define MODULE_NAME "libhalftone-cuda.so"

struct ht_cuda {
  void *dl;
  const ht_cuda_module_api *api;
  void *dev;
};

/* Loads one candidate; on failure a reason in msg. */
static ht_cuda *try_load(const char *path, char *msg)
{
  void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!dl) {
    const char *e = dlerror();
    ht_set_msg(msg, "cannot load the CUDA module %s: %s", path, e ? e : "unknown error");
    return NULL;
  }
  ht_cuda_entry_fn entry;
  *(void **)&entry = dlsym(dl, HT_CUDA_ENTRY);
  const ht_cuda_module_api *api = entry ? entry(HT_CUDA_ABI) : NULL;
  if (!api || api->abi != HT_CUDA_ABI) {
    ht_set_msg(msg, "the CUDA module %s does not have ABI version %d", path, HT_CUDA_ABI);
    dlclose(dl);
    return NULL;
  }
  void *dev = NULL;
  char why[HT_MSG_MAX] = "";
  if (api->open(&dev, why, sizeof why) != HT_CUDA_OK || !dev) {
    ht_set_msg(msg, "%s", why[0] ? why : "no usable GPU");
    dlclose(dl);
    return NULL;
  }
  ht_cuda *c = calloc(1, sizeof *c);
  if (!c) {
    api->close(dev);
    dlclose(dl);
    ht_set_msg(msg, "out of memory");
    return NULL;
  }
  c->dl = dl;
  c->api = api;
  c->dev = dev;
  return c;
}

/* Candidates around the folder of `file`: dir/, dir/../cuda/, dir/../../cuda/ */
static bool find_near(const char *file, char *out, size_t size)
{
  if (!file || !file[0])
    return false;
  char dir[PATH_MAX];
  snprintf(dir, sizeof dir, "%s", file);
  char *slash = strrchr(dir, '/');
  if (!slash)
    return false;
  *slash = '\0';
  static const char *const rel[] = { "/" MODULE_NAME, "/../cuda/" MODULE_NAME, "/../../cuda/" MODULE_NAME };
  for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
    if ((size_t)snprintf(out, size, "%s%s", dir, rel[i]) < size && access(out, R_OK) == 0)
      return true;
  }
  return false;
}

/* Device nodes or proc files of an NVIDIA driver. */
static bool driver_shows(void)
{
  static const char *const nodes[] = { "/dev/nvidiactl", "/dev/nvidia0", "/dev/dxg", "/proc/driver/nvidia/version" };
  for (size_t i = 0; i < sizeof nodes / sizeof nodes[0]; i++)
    if (access(nodes[i], F_OK) == 0)
      return true;
  return false;
}

bool ht_cuda_maybe_present(void)
{
  const char *env = getenv("HT_CUDA_MODULE");
  return (env && env[0]) || driver_shows();
}

ht_cuda *ht_cuda_open(char *msg)
{
  const char *env = getenv("HT_CUDA_MODULE");
  if (env && env[0])
    return try_load(env, msg);
  char path[PATH_MAX];
  Dl_info info;
  bool found = false;
  if (dladdr((void *)(uintptr_t)ht_cuda_open, &info) && info.dli_fname)
    found = find_near(info.dli_fname, path, sizeof path);
  if (!found) {
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
      exe[n] = '\0';
      found = find_near(exe, path, sizeof path);
    }
  }
  if (!found) {
    snprintf(path, sizeof path, "%s/%s", HT_CUDA_MODULE_DIR, MODULE_NAME);
    found = access(path, R_OK) == 0;
  }
  if (!found) {
    ht_set_msg(msg, "the CUDA module %s was not found (looked next to the program and in %s; set HT_CUDA_MODULE)",
               MODULE_NAME, HT_CUDA_MODULE_DIR);
    return NULL;
  }
  /* Loading the module (22 MB of kernels and a static CUDA runtime) costs
   * about 4 ms of a run's start, which a 4K image's whole run (about
   * 18 ms on 2 cores) notices. Without any NVIDIA driver node it can only
   * fail, so it is not tried. An HT_CUDA_MODULE set by hand is always
   * tried (above), for its own message. */
  if (!driver_shows()) {
    ht_set_msg(msg, "no NVIDIA driver (no /dev/nvidiactl, /dev/dxg or /proc/driver/nvidia), so %s was not loaded",
               path);
    return NULL;
  }
  return try_load(path, msg);
}

void ht_cuda_close(ht_cuda *c)
{
  if (!c)
    return;
  c->api->close(c->dev);
  /* The module's static CUDA runtime registers exit handlers; unloading
   * it would leave them dangling, so the handle stays open. */
  free(c);
}

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

/* The module's status as the library's, its reason in the job's message. */
static ht_status status_of(ht_job *job, int r, const char *why)
{
  switch (r) {
  case HT_CUDA_OK: return HT_OK;
  case HT_CUDA_ERR_CANCELLED: return HT_ERR_CANCELLED;
  case HT_CUDA_ERR_NO_MEMORY:
    ht_set_msg(job->msg, "GPU out of memory: %s", why);
    return HT_ERR_NO_MEMORY;
  case HT_CUDA_ERR_UNSUPPORTED:
    ht_set_msg(job->msg, "%s", why);
    return HT_ERR_UNSUPPORTED;
  case HT_CUDA_ERR_NO_GPU:
    ht_set_msg(job->msg, "%s", why);
    return HT_ERR_NO_GPU;
  default:
    ht_set_msg(job->msg, "%s", why[0] ? why : "GPU failure");
    return HT_ERR_GPU;
  }
}

static bool job_tick(void *user, int64_t done, int64_t total) { return ht_job_tick(user, done, total); }

ht_status ht_cuda_search_run(ht_cuda *c, ht_job *job, ht_cuda_search *s)
{
  s->tick = job_tick;
  s->user = job;
  char why[HT_MSG_MAX] = "";
  return status_of(job, c->api->search(c->dev, s, why, sizeof why), why);
}

ht_status ht_cuda_run(ht_cuda *c, ht_job *job, const ht_rows *rows, ht_variant variant)
{
  int v = variant == HT_VARIANT_AUTO ? HT_CUDA_VARIANT_FAST : (int)variant - HT_VARIANT_GPU_FIRST;
  if (v < 0 || v >= HT_CUDA_VARIANT_COUNT) {
    ht_set_msg(job->msg, "unknown GPU variant %d", (int)variant);
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
  if (rows->in_channel == 0 && rows->in_channels == 1 &&
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
  return status_of(job, c->api->run(c->dev, v, &job->filter, job->levels, &io, why, sizeof why), why);
}

/* The host side of gpu-pd: rows y0 .. y1 of every plane loaded (and
 * separated) into `in`, or stored from `out`, on one of several threads
 * (rows.h: load and store may run on several threads at once). */
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
    if (r->in_format != HT_FORMAT_U8 || r->in != r0->in || r->in_stride != r0->in_stride ||
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

ht_status ht_cuda_color_run(ht_cuda *c, ht_job *job)
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
  int r = c->api->color_pd(c->dev, &job->filter, &cc, why, sizeof why);
  switch (r) {
  case HT_CUDA_OK: break;
  case HT_CUDA_ERR_NO_MEMORY: ht_set_msg(job->msg, "GPU out of memory: %s", why); s = HT_ERR_NO_MEMORY; goto done;
  case HT_CUDA_ERR_UNSUPPORTED: ht_set_msg(job->msg, "%s", why); s = HT_ERR_UNSUPPORTED; goto done;
  case HT_CUDA_ERR_NO_GPU: ht_set_msg(job->msg, "%s", why); s = HT_ERR_NO_GPU; goto done;
  default: ht_set_msg(job->msg, "%s", why[0] ? why : "GPU failure"); s = HT_ERR_GPU; goto done;
  }
  if (getenv("HT_CUDA_COLOR_TIMES")) /* tools/bench-color.sh: the kernel alone, and the copies */
    fprintf(stderr, "gpu-pd kernel: %.3f ms (up %.3f ms, down %.3f ms, pixels %s in, %s out)\n", cc.kernel_ms,
            cc.upload_ms, cc.download_ms, in8 ? "8-bit" : "host planes", out8 ? "8-bit" : "host planes");
  if (!out8)
    color_parts(cj, NULL, out, true, job->threads);
  if (!ht_job_tick(job, h, h))
    s = HT_ERR_CANCELLED;
done:
  free(in);
  free(out);
  return s;
}
