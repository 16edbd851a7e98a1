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
 *
 * Loading only: what runs on the module is each family's host side
 * (diffusion/gpu.c, search/gpu.c, color/gpu.c); they share the module's
 * statuses turned into the library's (ht_cuda_status), the one thing of
 * the ABI besides the table that every call meets.
 */
#include "cuda_loader.h"
#include "../cuda/module.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef HT_CUDA_MODULE_DIR
#define HT_CUDA_MODULE_DIR "/usr/local/lib/gegl-halftone"
#endif
#define MODULE_NAME "libhalftone-cuda.so"

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

/* ------------------------------------------------ what every call shares */

ht_status ht_cuda_status(ht_job *job, int r, const char *why)
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
