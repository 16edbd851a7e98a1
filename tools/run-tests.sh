#!/usr/bin/env bash
# Sets up a Debian 12 machine, builds everything and runs the whole test
# suite. Ends with one line: "N passed, N failed, N skipped".
# Tests that need a GPU (suite cuda) skip themselves where there is none.
set -u
cd "$(dirname "$0")/.."
builddir=${BUILDDIR:-build}
summary() { echo "$1 passed, $2 failed, $3 skipped"; }

if ! tools/install-deps.sh; then
  echo "run-tests: installing dependencies failed" >&2
  summary 0 1 0
  exit 1
fi
export PATH="$PATH:/usr/local/cuda/bin"
if [ -d "$builddir" ]; then
  meson setup --reconfigure "$builddir" >/dev/null || rm -rf "$builddir"
fi
if [ ! -d "$builddir" ] && ! meson setup "$builddir"; then
  echo "run-tests: meson setup failed" >&2
  summary 0 1 0
  exit 1
fi
if ! ninja -C "$builddir"; then
  echo "run-tests: build failed" >&2
  summary 0 1 0
  exit 1
fi
meson test -C "$builddir" --print-errorlogs --num-processes "$(nproc)" "$@"
rc=$?
python3 - "$builddir/meson-logs/testlog.json" <<'PY'
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
print(f"{passed} passed, {failed} failed, {skipped} skipped")
PY
exit $rc
