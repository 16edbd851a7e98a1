/* placeholder until the CUDA loader lands (same session) */
#include "internal.h"
ht_cuda *ht_cuda_open(char *msg) { ht_set_msg(msg, "this build has no CUDA module"); return NULL; }
void ht_cuda_close(ht_cuda *c) { (void)c; }
ht_status ht_cuda_run(ht_cuda *c, ht_job *j, const ht_rows *r, ht_variant v) { (void)c; (void)j; (void)r; (void)v; return HT_ERR_NO_GPU; }
