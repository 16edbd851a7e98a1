/* The CPU backend's implementations (impl.h), fastest first. */
#include "impl.h"
#include "diffusion/diffusion.h"

#define N_(text) text

const ht_impl ht_impls_cpu[] = {
  { HT_VARIANT_WAVEFRONT, "wavefront", N_("Threaded wavefront (CPU)"), HT_METHOD_ERROR_DIFFUSION, HT_BACKEND_CPU,
    HT_CAP_CARRY | HT_CAP_THREADS, ht_wavefront_run },
  { HT_VARIANT_EC_RC, "ec-rc", N_("Error collection, register caching (CPU)"), HT_METHOD_ERROR_DIFFUSION,
    HT_BACKEND_CPU, HT_CAP_CARRY, ht_ec_rc_run },
  { HT_VARIANT_ED_RC, "ed-rc", N_("Error diffusion, register caching (CPU)"), HT_METHOD_ERROR_DIFFUSION,
    HT_BACKEND_CPU, HT_CAP_CARRY, ht_ed_rc_run },
  { HT_VARIANT_EC, "ec", N_("Error collection (CPU)"), HT_METHOD_ERROR_DIFFUSION, HT_BACKEND_CPU, HT_CAP_CARRY,
    ht_ec_run },
  { HT_VARIANT_ED, "ed", N_("Error diffusion, the reference (CPU)"), HT_METHOD_ERROR_DIFFUSION, HT_BACKEND_CPU,
    HT_CAP_CARRY | HT_CAP_SERPENTINE, ht_ed_run },
};
const int ht_impls_cpu_count = (int)(sizeof ht_impls_cpu / sizeof ht_impls_cpu[0]);
