/* Whether backend cuda can run here, for the GIMP 2.10 dialog's line
 * under the backend: found once per dialog in a thread of its own
 * (opening a GPU takes a large part of a second).
 *
 * Copyright (C) 2026 the GEGL Halftone authors. GPL-3.0-or-later.
 */
#ifndef HT_GPU_PROBE_H
#define HT_GPU_PROBE_H

#include <glib.h>

typedef struct GpuProbe GpuProbe;

GpuProbe *gpu_probe_start (void);
/* FALSE while the probe runs; then TRUE, with *why NULL where a GPU is
 * usable, else why not (owned by the probe). */
gboolean  gpu_probe_result (GpuProbe *probe, const gchar **why);
/* Waits for the probe's thread. */
void      gpu_probe_free (GpuProbe *probe);

#endif
