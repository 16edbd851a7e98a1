/* The implementation tables (core/impl_cpu.c, core/impl_cuda.c) against
 * the CUDA module's numbers (cuda/module.h): every GPU row names the
 * number the module knows it by (module_variant), which its family's host
 * side passes on as it is. So, for each of the module's entry points
 * (run for error diffusion, search for LES, PES and DBS, color_pd for
 * plane-dependent colour), the rows' numbers are distinct, within the
 * numbers the entry takes, and cover them all; a search row asks for its
 * own method; and no CPU row has a number. Reordering ht_variant
 * (core/halftone.h) then cannot run another kernel unnoticed. */
#include "ht-test.h"
#include "impl.h"
#include "../../cuda/module.h"

/* The module's entry point that runs a GPU row of `method`, and how many
 * numbers it takes (0 .. count - 1). */
static const char *entry_of(ht_method method, int *count)
{
  switch (method) {
  case HT_METHOD_ERROR_DIFFUSION: *count = HT_CUDA_VARIANT_COUNT; return "run";
  case HT_METHOD_LES:
  case HT_METHOD_PES:
  case HT_METHOD_DBS: *count = HT_CUDA_SEARCH_DBS + 1; return "search";
  case HT_METHOD_PLANE_DEPENDENT: *count = 1; return "color_pd";
  default: *count = 0; return "none";
  }
}

int main(void)
{
  for (int i = 0; i < ht_impls_cpu_count; i++)
    CHECK(ht_impls_cpu[i].module_variant == HT_IMPL_NO_MODULE, "CPU row %s has module number %d",
          ht_impls_cpu[i].name, ht_impls_cpu[i].module_variant);

  enum { MAXN = 64 };
  const char *entries[] = { "run", "search", "color_pd" };
  for (size_t e = 0; e < sizeof entries / sizeof entries[0]; e++) {
    const ht_impl *by_number[MAXN] = { 0 };
    int count = 0, rows = 0;
    for (int i = 0; i < ht_impls_cuda_count; i++) {
      const ht_impl *r = &ht_impls_cuda[i];
      int n;
      const char *entry = entry_of(r->method, &n);
      CHECK(n > 0, "GPU row %s: method %d runs in no entry point of the module", r->name, (int)r->method);
      if (strcmp(entry, entries[e]) != 0)
        continue;
      count = n;
      rows++;
      const int v = r->module_variant;
      CHECK(r->backend == HT_BACKEND_CUDA, "row %s of the GPU table is not on backend cuda", r->name);
      CHECK(v >= 0 && v < n && v < MAXN, "GPU row %s: module number %d is not one of %s's 0..%d", r->name, v,
            entry, n - 1);
      if (v < 0 || v >= n || v >= MAXN)
        continue;
      CHECK(!by_number[v], "GPU rows %s and %s have the same module number %d (%s)", by_number[v] ? by_number[v]->name : "",
            r->name, v, entry);
      by_number[v] = r;
    }
    for (int v = 0; v < count && v < MAXN; v++)
      CHECK(by_number[v], "no GPU row runs %s's number %d", entries[e], v);
    CHECK(rows > 0, "no GPU row runs %s", entries[e]);
  }

  /* a search row's number is its own method's */
  for (int i = 0; i < ht_impls_cuda_count; i++) {
    const ht_impl *r = &ht_impls_cuda[i];
    const int want = r->method == HT_METHOD_LES   ? HT_CUDA_SEARCH_LES
                     : r->method == HT_METHOD_PES ? HT_CUDA_SEARCH_PES
                     : r->method == HT_METHOD_DBS ? HT_CUDA_SEARCH_DBS
                                                  : -1;
    if (want >= 0)
      CHECK(r->module_variant == want, "GPU row %s (method %d) asks the module for search method %d", r->name,
            (int)r->method, r->module_variant);
  }
  return test_finish("test-impls");
}
