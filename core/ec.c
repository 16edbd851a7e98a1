/* placeholder until the real variant lands (same session) */
#include "internal.h"
ht_status ht_ec_run(ht_job *job, const ht_rows *rows) { return ht_ed_run(job, rows); }
