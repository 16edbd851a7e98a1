#!/usr/bin/env bash
# The MPI benchmark (BENCHMARKS.md, section "MPI"): halftone-mpi on 1, 2,
# 4, 8, 16 ranks of this machine against one rank, against `halftone
# --threads 1` and the threaded `halftone` on the same machine, and
# against the machine's ceiling for the ranks' own kernel: 16 independent
# single-thread processes of `halftone --variant stream` at once, measured
# in the same run.
#
#   tools/bench/bench-mpi.sh BUILD_DIR [SIZE] [RANKS] [FILTERS]
#     SIZE     side of the square test image (default 16384)
#     RANKS    default "1 2 4 8 16"
#     FILTERS  default "floyd-steinberg jarvis-judice-ninke"
#   HT_BENCH_MPI_CHECK=1 also writes `halftone`'s result once per filter
#   and compares every rank count's output with it (cmp).
#
# Prints one line per measurement, "name: value", for the tables.
set -euo pipefail
build=${1:?usage: tools/bench/bench-mpi.sh BUILD_DIR [SIZE] [RANKS] [FILTERS]}
size=${2:-16384}
ranks=${3:-1 2 4 8 16}
filters=${4:-floyd-steinberg jarvis-judice-ninke}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/ht-bench-mpi.XXXXXX")
trap 'rm -rf "$work"' EXIT
launch=(mpirun --bind-to core)
# -q keeps mpirun's notices out; Open MPI 5 has no such option
ompi=$(mpirun --version 2>/dev/null || true)
if [[ $ompi =~ Open\ MPI\)?\ [1-4]\. ]]; then launch+=(-q); fi
[ "$(id -u)" -eq 0 ] && launch+=(--allow-run-as-root)
img=$work/img.pgm
"$build/tools/bench/ht-mkimage" "$root/data/fixtures/photo-crop.pgm" "$size" "$img"
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "image: ${size}x${size} 8-bit PGM, output 1-bit PBM"
ms() { sed -n 's/.*min \([0-9.]*\) ms.*/\1/p'; }
for f in $filters; do
  echo "halftone --threads 1 ($f): $("$build/tools/cli/halftone" --threads 1 --algorithm "$f" --bench 2 "$img" /dev/null | ms) ms"
  echo "halftone --threads 0 ($f): $("$build/tools/cli/halftone" --threads 0 --algorithm "$f" --bench 2 "$img" /dev/null | ms) ms"
  echo "halftone --variant stream --threads 1 ($f): $("$build/tools/cli/halftone" --threads 1 --variant stream --algorithm "$f" --bench 1 "$img" /dev/null | ms) ms"
  # the ceiling: 16 independent processes of the ranks' kernel at once
  for i in $(seq 1 16); do
    "$build/tools/cli/halftone" --threads 1 --variant stream --algorithm "$f" --bench 1 "$img" /dev/null | ms >"$work/c$i" &
  done
  wait
  echo "16 independent stream processes at once ($f): $(sort -n "$work"/c* | tail -1) ms (slowest)"
  [ -n "${HT_BENCH_MPI_CHECK:-}" ] && "$build/tools/cli/halftone" --algorithm "$f" "$img" "$work/ref.pbm"
  for p in $ranks; do
    rm -f "$work/out.pbm"
    echo "halftone-mpi -n $p ($f): $("${launch[@]}" -n "$p" "$build/tools/cli/halftone-mpi" --bench --algorithm "$f" "$img" "$work/out.pbm")"
    if [ -n "${HT_BENCH_MPI_CHECK:-}" ]; then
      cmp -s "$work/ref.pbm" "$work/out.pbm" && echo "  same bits as halftone" || { echo "  DIFFERENT from halftone"; exit 1; }
    fi
  done
done
# r and k around the defaults, 16 ranks, Floyd-Steinberg
if [ -n "${HT_BENCH_MPI_SHAPES:-}" ]; then
  for rk in $HT_BENCH_MPI_SHAPES; do
    r=${rk%x*} k=${rk#*x}
    echo "halftone-mpi -n 16 rows $r chunk $k: $("${launch[@]}" -n 16 "$build/tools/cli/halftone-mpi" --bench --rows "$r" --chunk "$k" "$img" "$work/out.pbm")"
  done
fi
