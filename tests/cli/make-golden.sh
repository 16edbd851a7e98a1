#!/bin/sh
# Rewrites tests/cli/golden.txt by running the reference variant (ed) of
# the built `halftone`. Run after a deliberate change of the output:
#   tests/cli/make-golden.sh [BUILDDIR]
set -eu
cd "$(dirname "$0")/../.."
build=${1:-build}
ninja -C "$build" tools/cli/halftone tools/bench/ht-metrics >/dev/null
exec python3 tests/cli/test_cli.py "$build/tools/cli/halftone" "$build/tools/bench/ht-metrics" data \
  tests/cli/golden.txt --write-golden
