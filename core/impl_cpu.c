/* The CPU backend's implementations (impl.h), fastest first. */
#include "impl.h"
#include "diffusion/diffusion.h"
#include "search/search.h"
#include "color/color.h"
#include "ordered/ordered.h"

#define N_(text) text

const ht_impl ht_impls_cpu[] = {
  { HT_VARIANT_WAVEFRONT, "wavefront", N_("Threaded wavefront (CPU)"), HT_METHOD_ERROR_DIFFUSION, HT_BACKEND_CPU,
    HT_CAP_CARRY | HT_CAP_THREADS, ht_wavefront_run, HT_IMPL_NO_MODULE },
  { HT_VARIANT_EC_RC, "ec-rc", N_("Error collection, register caching (CPU)"), HT_METHOD_ERROR_DIFFUSION,
    HT_BACKEND_CPU, HT_CAP_CARRY, ht_ec_rc_run, HT_IMPL_NO_MODULE },
  { HT_VARIANT_ED_RC, "ed-rc", N_("Error diffusion, register caching (CPU)"), HT_METHOD_ERROR_DIFFUSION,
    HT_BACKEND_CPU, HT_CAP_CARRY, ht_ed_rc_run, HT_IMPL_NO_MODULE },
  { HT_VARIANT_EC, "ec", N_("Error collection (CPU)"), HT_METHOD_ERROR_DIFFUSION, HT_BACKEND_CPU, HT_CAP_CARRY,
    ht_ec_run, HT_IMPL_NO_MODULE },
  { HT_VARIANT_ED, "ed", N_("Error diffusion, the reference (CPU)"), HT_METHOD_ERROR_DIFFUSION, HT_BACKEND_CPU,
    HT_CAP_CARRY | HT_CAP_SERPENTINE, ht_ed_run, HT_IMPL_NO_MODULE },
  /* Last: it exists for streamed bands (the MPI tool), which only it takes */
  { HT_VARIANT_STREAM, "stream", N_("Error collection in column chunks, streamed bands (CPU)"),
    HT_METHOD_ERROR_DIFFUSION, HT_BACKEND_CPU, HT_CAP_CARRY | HT_CAP_STREAM, ht_stream_run, HT_IMPL_NO_MODULE },
  /* The search methods: one implementation each, threaded on the
   * parallel schedule; the raster schedule, which gives other bits, is a
   * parameter (ht_params.schedule), not a variant. */
  { HT_VARIANT_LES_CPU, "les-cpu", N_("Local exhaustive search (CPU)"), HT_METHOD_LES, HT_BACKEND_CPU,
    HT_CAP_THREADS, ht_les_run, HT_IMPL_NO_MODULE },
  { HT_VARIANT_PES_CPU, "pes-cpu", N_("Partial exhaustive search (CPU)"), HT_METHOD_PES, HT_BACKEND_CPU,
    HT_CAP_THREADS, ht_pes_run, HT_IMPL_NO_MODULE },
  { HT_VARIANT_DBS_CPU, "dbs-cpu", N_("Direct binary search (CPU)"), HT_METHOD_DBS, HT_BACKEND_CPU,
    HT_CAP_THREADS, ht_dbs_run, HT_IMPL_NO_MODULE },
  /* Plane-dependent colour error diffusion (core/color/): every plane of
   * the image in one run, the same bits threaded or not. */
  { HT_VARIANT_PD_THREADS, "pd-threads", N_("Plane-dependent colour, threaded (CPU)"), HT_METHOD_PLANE_DEPENDENT,
    HT_BACKEND_CPU, HT_CAP_THREADS, ht_pd_threads_run, HT_IMPL_NO_MODULE },
  { HT_VARIANT_PD_CPU, "pd", N_("Plane-dependent colour, the reference (CPU)"), HT_METHOD_PLANE_DEPENDENT,
    HT_BACKEND_CPU, HT_CAP_SERPENTINE, ht_pd_run, HT_IMPL_NO_MODULE },
  /* Ordered dithering: rows independent, any split gives the same bits. */
  { HT_VARIANT_BAYER_CPU, "bayer-cpu", N_("Ordered dither, Bayer matrix (CPU)"), HT_METHOD_BAYER, HT_BACKEND_CPU,
    HT_CAP_THREADS, ht_bayer_run, HT_IMPL_NO_MODULE },
  { HT_VARIANT_THRESHOLD_CPU, "threshold-cpu", N_("Threshold, the nearest level (CPU)"), HT_METHOD_THRESHOLD,
    HT_BACKEND_CPU, HT_CAP_THREADS, ht_threshold_run, HT_IMPL_NO_MODULE },
  { HT_VARIANT_BLUE_NOISE_CPU, "blue-noise-cpu", N_("Ordered dither, blue-noise mask (CPU)"), HT_METHOD_BLUE_NOISE,
    HT_BACKEND_CPU, HT_CAP_THREADS, ht_blue_noise_run, HT_IMPL_NO_MODULE },
  { HT_VARIANT_SCREEN_CPU, "screen-cpu", N_("AM screen (CPU)"), HT_METHOD_SCREEN, HT_BACKEND_CPU, HT_CAP_THREADS,
    ht_screen_run, HT_IMPL_NO_MODULE },
};
const int ht_impls_cpu_count = (int)(sizeof ht_impls_cpu / sizeof ht_impls_cpu[0]);
