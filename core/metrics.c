/* placeholder until metrics land (same session) */
#include "internal.h"
ht_status ht_compute_metrics(const uint8_t *gray, size_t gs, const uint8_t *res, size_t rs,
                             int64_t w, int64_t h, ht_metrics *m)
{ (void)gray; (void)gs; (void)res; (void)rs; (void)w; (void)h; (void)m; return HT_ERR_UNSUPPORTED; }
