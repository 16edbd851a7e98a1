#!/usr/bin/env bash
# Sets up a Debian 12 machine, builds GEGL Halftone and halftones the
# bundled sample photograph: data/sample.png -> sample-halftone.png.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
export PATH="$PATH:/usr/local/cuda/bin"
[ -d build ] || meson setup build >/dev/null
ninja -C build >/dev/null
./build/tools/halftone --metrics data/sample.png sample-halftone.png
echo "wrote $(pwd)/sample-halftone.png"
