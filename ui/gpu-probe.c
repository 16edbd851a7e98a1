/* Whether backend cuda can run here (gpu-probe.h).
 *
 * Copyright (C) 2026 the GEGL Halftone authors. GPL-3.0-or-later.
 */
#include "ht-config.h"

#include <string.h>

#include "halftone.h"
#include "gpu-probe.h"

struct GpuProbe
{
  GThread *thread;
  gchar   *why;   /* NULL: usable; written by the thread before known */
  gint     known;
};

/* A small run on the GPU: what the library says is why it cannot run. */
static gpointer
probe (gpointer data)
{
  GpuProbe   *p = data;
  guint8      pixels[64 * 64], levels[64 * 64];
  ht_image    in  = { 64, 64, 64, 1, HT_FORMAT_U8, pixels };
  ht_image    out = { 64, 64, 64, 1, HT_FORMAT_U8, levels };
  ht_params   params;
  ht_context *ctx = ht_context_new ();

  memset (pixels, 128, sizeof pixels);
  ht_params_init (&params);
  if (!ctx)
    p->why = g_strdup ("out of memory");
  else
    {
      ht_context_set_backend (ctx, HT_BACKEND_CUDA);
      ht_context_set_threads (ctx, 1);
      if (ht_run (ctx, &in, &out, &params) != HT_OK)
        p->why = g_strdup (ht_context_message (ctx));
      ht_context_free (ctx);
    }
  g_atomic_int_set (&p->known, TRUE);
  return NULL;
}

GpuProbe *
gpu_probe_start (void)
{
  GpuProbe *p = g_new0 (GpuProbe, 1);

  p->thread = g_thread_new ("halftone-gpu-probe", probe, p);
  return p;
}

gboolean
gpu_probe_result (GpuProbe *p, const gchar **why)
{
  if (!g_atomic_int_get (&p->known))
    return FALSE;
  *why = p->why;
  return TRUE;
}

void
gpu_probe_free (GpuProbe *p)
{
  g_thread_join (p->thread);
  g_free (p->why);
  g_free (p);
}
