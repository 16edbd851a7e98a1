/* halftone:dither's run: what halftone-dither.c (the operation's
 * properties and GEGL glue) hands to halftone-dither-run.c (the core's
 * runs over the buffers, the kept core context, messages), both compiled
 * into the one module.
 *
 * Copyright (C) 2026 the GEGL Halftone authors. GPL-3.0-or-later.
 */
#ifndef HALFTONE_DITHER_RUN_H
#define HALFTONE_DITHER_RUN_H

#include <gegl.h>
#include <gegl-plugin.h>
#include <operation/gegl-operation-context.h>

#include "halftone.h"

/* What the core is given and what it gives back, for one input format
 * (made from the properties and the input's format by make_plan). */
typedef struct
{
  const Babl *in_format;   /* what the input is converted to          */
  const Babl *out_format;  /* the halftone's own format, converted to
                              the input's for the output             */
  const Babl *core_format; /* what the core writes (u8 or u16)        */
  ht_format   in_type;
  ht_format   out_type;
  int         in_channels;
  int         out_channels;
  gboolean    alpha;
  gboolean    float_out;   /* output levels as floats from u16 levels */
} Plan;

/* The input is passed on: says why, in the op's log domain and where the
 * user sees it, and records it as the operation's data
 * "halftone-failed". */
G_GNUC_INTERNAL void halftone_warn_pass_through (GeglOperation *operation, const gchar *why);

/* Hands the input buffer itself on as the output. Returns TRUE (what a
 * process function returns for a result). */
G_GNUC_INTERNAL gboolean halftone_pass_through (GeglOperationContext *context, GObject *input);

/* Halftones `area` of `input` (the whole input) with `params` on the
 * `backend` asked for, and writes the part `roi` into the context's
 * output; on any failure the input itself is the output, with a
 * warning. Error diffusion on the CPU runs in bands of rows through
 * reused band memory; the other runs take the whole image at once. */
G_GNUC_INTERNAL gboolean halftone_process (GeglOperation *operation, GeglOperationContext *context,
                                           GObject *input, const Plan *plan, const ht_params *params,
                                           ht_backend backend, gint threads, const GeglRectangle *area,
                                           const GeglRectangle *roi);

#endif
