#!/bin/sh
# Runs one libFuzzer target for a bounded time, as a Meson test:
#   run-fuzzer.sh FUZZER SEEDS WORK SECONDS [DICTIONARY]
# FUZZER is the target's executable, or "none" where this build has no
# libFuzzer (the test then skips: 77). The target starts from the seed
# corpus SEEDS (the tree's, only read) and keeps what it finds in
# WORK/corpus, so a second run goes on from there; a crash is written to
# WORK/ and fails the test. HT_FUZZ_SECONDS overrides SECONDS.
set -u
fuzzer=$1 seeds=$2 work=$3 seconds=${HT_FUZZ_SECONDS:-$4} dict=${5:-}
if [ "$fuzzer" = none ]; then
  echo "SKIP: this build has no libFuzzer (clang with -fsanitize=fuzzer; see docs/fuzzing.md)"
  exit 77
fi
mkdir -p "$work/corpus" || exit 1
set -- -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
  -artifact_prefix="$work/"
if [ -n "$dict" ]; then
  set -- "$@" -dict="$dict"
fi
exec "$fuzzer" "$@" "$work/corpus" "$seeds"
