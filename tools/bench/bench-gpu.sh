#!/usr/bin/env bash
# The GPU benchmark: builds ht-bench-cuda (if needed), runs it, and writes
# its Markdown table between "<!-- BEGIN gpu" and "<!-- END gpu -->" in
# BENCHMARKS.md.
#
#   tools/bench/bench-gpu.sh [--build DIR] [--arch sm_90] [--out FILE] [--no-update] [-- BENCH ARGS]
#   tools/bench/bench-gpu.sh --insert FILE     # put a table made elsewhere (e.g.
#                                        # on the GPU machine) into BENCHMARKS.md
#
# BENCH ARGS go to ht-bench-cuda (--sizes 1,2,4 --reps 5 --no-paper).
# On a machine without GEGL/GIMP/libpng the build uses
# -Dgegl=disabled -Dgimp=disabled -Dpng=disabled.
set -euo pipefail
cd "$(dirname "$0")/../.."

build=build-bench-gpu
arch=""
out=bench-out/gpu.md
update=1
insert=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --arch) arch=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --no-update) update=0; shift ;;
    --insert) insert=$2; shift 2 ;;
    --) shift; break ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "bench-gpu.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

# Replaces what lies between the gpu markers with the table file $1. What
# bounds the kernel is written by hand below the END marker, so it stays.
insert_table() {
  [ -s "$1" ] || { echo "bench-gpu.sh: $1 is empty or missing" >&2; exit 1; }
  grep -q '<!-- BEGIN gpu' BENCHMARKS.md && grep -q '<!-- END gpu -->' BENCHMARKS.md ||
    { echo "bench-gpu.sh: BENCHMARKS.md has no gpu markers" >&2; exit 1; }
  awk -v f="$1" '
    BEGIN { while ((getline l < f) > 0) body = body l "\n" }
    /<!-- BEGIN gpu/ { print; printf "%s", body; skip = 1; next }
    /<!-- END gpu -->/ { skip = 0 }
    !skip { print }' BENCHMARKS.md > BENCHMARKS.md.tmp
  mv BENCHMARKS.md.tmp BENCHMARKS.md
  echo "bench-gpu.sh: BENCHMARKS.md updated from $1"
}

if [ -n "$insert" ]; then
  insert_table "$insert"
  exit 0
fi

export PATH="$PATH:/usr/local/cuda/bin"
if [ ! -f "$build/build.ninja" ]; then
  opts=(-Dgegl=disabled -Dgimp=disabled -Dcuda=enabled)
  pkg-config --exists libpng 2>/dev/null || opts+=(-Dpng=disabled)
  [ -n "$arch" ] && opts+=("-Dgpu_arch=$arch")
  meson setup "$build" "${opts[@]}"
fi
ninja -C "$build" cuda/ht-bench-cuda cuda/libhalftone-cuda.so
mkdir -p "$(dirname "$out")"
HT_CUDA_MODULE="$PWD/$build/cuda/libhalftone-cuda.so" "$build/cuda/ht-bench-cuda" --out "$out" "$@"
echo "bench-gpu.sh: table in $out"
if [ "$update" = 1 ]; then
  insert_table "$out"
fi
