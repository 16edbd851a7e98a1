#!/usr/bin/env bash
# Sets up a Debian 12 machine, builds everything and runs the whole test
# suite; then builds the core, the CLI and the GEGL operation again with
# AddressSanitizer and UndefinedBehaviorSanitizer and runs the core, cli
# and gegl suites there; then, where clang has libFuzzer, runs each fuzz
# target for a short while (docs/fuzzing.md). Ends with one line:
# "N passed, N failed, N skipped", the sum over all three.
# Tests that need a GPU (suite cuda) skip themselves where there is none.
#
# Arguments go to the first `meson test` (e.g. --suite core). Build
# folders: BUILDDIR (build), SANITIZE_BUILDDIR (build-sanitize),
# FUZZ_BUILDDIR (build-fuzz); SANITIZE=0 or FUZZ=0 leaves a part out;
# HT_FUZZ_SECONDS sets each fuzz target's time (60 s).
set -u
cd "$(dirname "$0")/.."
builddir=${BUILDDIR:-build}
sanbuild=${SANITIZE_BUILDDIR:-build-sanitize}
fuzzbuild=${FUZZ_BUILDDIR:-build-fuzz}
jobs=$(nproc)
passed=0 failed=0 skipped=0 rc=0

summary() { echo "$passed passed, $failed failed, $skipped skipped"; }

# Says how long a part took (CI's time limit is the sum).
mark=$SECONDS
took() {
  echo "run-tests: $1 took $(((SECONDS - mark) / 60)) min $(((SECONDS - mark) % 60)) s" >&2
  mark=$SECONDS
}

# Adds the results of the last `meson test` in build folder $1.
count() {
  local line
  line=$(python3 - "$1/meson-logs/testlog.json" <<'PY'
import json, sys
passed = failed = skipped = 0
try:
    with open(sys.argv[1]) as f:
        for line in f:
            r = json.loads(line).get("result")
            if r in ("OK", "EXPECTEDFAIL"):
                passed += 1
            elif r == "SKIP":
                skipped += 1
            else:
                failed += 1
except OSError:
    failed = 1
print(passed, failed, skipped)
PY
)
  set -- $line
  passed=$((passed + $1)) failed=$((failed + $2)) skipped=$((skipped + $3))
}

# setup DIR [MESON OPTIONS...]: configures DIR, again from scratch when
# its configuration no longer takes.
setup() {
  local dir=$1
  shift
  if [ -d "$dir" ]; then
    meson setup --reconfigure "$dir" "$@" >/dev/null || rm -rf "$dir"
  fi
  [ -d "$dir" ] || meson setup "$dir" "$@"
}

# A part that could not be built counts as one failure.
broken() {
  echo "run-tests: $1" >&2
  failed=$((failed + 1)) rc=1
}

# Whether clang can build a libFuzzer target (clang and its run-time
# library, Debian's libclang-rt-14-dev).
have_libfuzzer() {
  command -v clang >/dev/null || return 1
  local dir
  dir=$(mktemp -d) || return 1
  printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
    'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }' >"$dir/t.c"
  clang -fsanitize=fuzzer,address,undefined "$dir/t.c" -o "$dir/t" >/dev/null 2>&1
  local ok=$?
  rm -rf "$dir"
  return $ok
}

if ! tools/install-deps.sh --tests; then
  echo "run-tests: installing dependencies failed" >&2
  failed=1
  summary
  exit 1
fi
export PATH="$PATH:/usr/local/cuda/bin"
took "checking the dependencies"

fuzz=0
if [ "${FUZZ:-1}" != 0 ] && have_libfuzzer; then
  fuzz=1
elif [ "${FUZZ:-1}" != 0 ]; then
  echo "run-tests: no clang with libFuzzer: the fuzz targets skip (Debian: clang libclang-rt-14-dev)" >&2
fi

# 1. Everything, as built for use. Where the fuzz build runs the fuzz
# suite, it is left out here (its tests would only skip).
# Without a GPU the CUDA module is only compiled, not run: one GPU
# generation proves that it builds and saves most of the build's time
# (seven generations took about 10 of CI's minutes). With a GPU, every
# generation, as installed builds are made. GPU_ARCH overrides.
arch=()
if [ -n "${GPU_ARCH:-}" ]; then
  arch=(-Dgpu_arch="$GPU_ARCH")
elif ! nvidia-smi -L >/dev/null 2>&1; then
  arch=(-Dgpu_arch=sm_90)
fi
if ! setup "$builddir" "${arch[@]}"; then
  broken "meson setup failed"
elif ! ninja -C "$builddir"; then
  broken "build failed"
else
  extra=()
  [ $fuzz = 1 ] && extra=(--no-suite fuzz)
  meson test -C "$builddir" --print-errorlogs --num-processes "$jobs" "${extra[@]}" "$@" || rc=1
  count "$builddir"
fi
took "the build and its tests"

# 2. The core, the CLI and the GEGL operation with ASan and UBSan. -O1:
# at -O2 and -O3 the instrumented wavefront kernels take minutes each to
# compile. Sanitizer reports abort the test (halt_on_error); allocations
# that cannot be made return NULL, which the code handles as out of
# memory (the run-time's default aborts instead). The gegl suite's own
# options are in tests/gegl/meson.build. HT_TEST_SANITIZER tells tests
# that cannot run under a sanitizer (an address-space limit) to skip.
if [ "${SANITIZE:-1}" != 0 ]; then
  if ! setup "$sanbuild" -Db_sanitize=address,undefined -Doptimization=1 -Ddebug=true -Db_ndebug=false \
      -Dcuda=disabled -Dgimp=disabled; then
    broken "meson setup of the sanitizer build failed"
  elif ! ninja -C "$sanbuild"; then
    broken "the sanitizer build failed"
  else
    suites=(--suite core --suite cli --no-suite core-variant)
    grep -q ':gegl"' "$sanbuild/meson-info/intro-tests.json" 2>/dev/null && suites+=(--suite gegl)
    ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1:halt_on_error=1:abort_on_error=1:print_summary=1 \
    UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1:print_stacktrace=1:print_summary=1 \
    HT_TEST_SANITIZER=address,undefined \
      meson test -C "$sanbuild" --print-errorlogs --num-processes "$jobs" --timeout-multiplier 3 "${suites[@]}" || rc=1
    count "$sanbuild"
  fi
  took "the sanitizer build and its tests"
fi

# 3. The fuzz targets, built by clang with coverage for the whole library
# and the sanitizers, each run for HT_FUZZ_SECONDS from its seed corpus.
if [ $fuzz = 1 ]; then
  if ! CC=clang setup "$fuzzbuild" -Db_sanitize=address,undefined -Db_lundef=false \
      -Dc_args=-fsanitize=fuzzer-no-link -Doptimization=1 -Ddebug=true -Db_ndebug=false \
      -Dcuda=disabled -Dgegl=disabled -Dgimp=disabled; then
    broken "meson setup of the fuzz build failed"
  elif ! ninja -C "$fuzzbuild" tests/fuzz/fuzz-core tests/fuzz/fuzz-filter tests/fuzz/fuzz-imageio; then
    broken "the fuzz build failed"
  else
    UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1:print_stacktrace=1:print_summary=1 \
      meson test -C "$fuzzbuild" --no-rebuild --print-errorlogs --num-processes "$jobs" --suite fuzz || rc=1
    count "$fuzzbuild"
  fi
  took "the fuzz build and its runs"
fi

summary
[ "$failed" -eq 0 ] || rc=1
exit $rc
