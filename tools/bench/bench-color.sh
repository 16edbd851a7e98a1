#!/usr/bin/env bash
# The colour benchmark (issue 20, BENCHMARKS.md "Plane-dependent colour"):
# RGB (--color plane-dependent) and CMYK (--color cmyk) against gray, at
# each size, through the `halftone` CLI's --bench (the halftoning alone,
# in memory: for the GPU that is end to end, transfers included):
#  - CPU one thread and all cores (the gray wavefront the ceiling);
#  - GPU end to end and the gpu-pd kernel alone (HT_CUDA_COLOR_TIMES),
#    with the gray gpu-fast kernel from ht-bench-cuda as the ceiling,
#    where a GPU is usable (else those rows say why not).
# Floyd-Steinberg, inter-plane weights 0.2 (and randomized 1 on all cores
# and the GPU), binary; input data/sample.png's centre resized by
# ht-mkimage; 8-bit values out (gray to a PGM on /dev/shm, written once
# after the runs). Prints a Markdown table per size, times in ms (minimum of
# REPS runs), each colour row with its ratio to gray of the same row kind.
#
#   tools/bench/bench-color.sh BUILD [SIZES] [REPS]     (default "2048 16384" 3)
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -ge 1 ] || { sed -n '2,15p' "$0"; exit 2; }
build=$1
sizes=${2:-"2048 16384"}
reps=${3:-3}
ht=$build/tools/cli/halftone
mk=$build/tools/bench/ht-mkimage
benchcuda=$build/cuda/ht-bench-cuda
[ -x "$ht" ] && [ -x "$mk" ] || { echo "bench-color.sh: build $build first (no $ht or $mk)" >&2; exit 1; }
tmp=$(mktemp -d -p "$( [ -d /dev/shm ] && [ -w /dev/shm ] && echo /dev/shm || echo /tmp)")
trap 'rm -rf "$tmp"' EXIT

# min_ms ARGS... IN OUT: runs halftone --bench, prints its minimum in ms, or
# "n/a" where it failed (e.g. no GPU), keeping the reason for below the
# table.
min_ms() {
  local out
  if out=$("$ht" --bench "$reps" --quiet "$@" 2>&1); then
    sed -n 's/^bench: .* min \([0-9.]*\) ms.*/\1/p' <<<"$out"
  else
    echo "n/a"
    tail -n 1 <<<"$out" >>"$tmp/why"
  fi
}

# kernel_ms ARGS...: the smallest gpu-pd kernel time of a GPU run; its
# line (with the copies' times) is kept for below the table.
kernel_ms() {
  HT_CUDA_COLOR_TIMES=1 "$ht" --bench "$reps" --quiet "$@" 2>&1 | grep '^gpu-pd kernel:' | sort -t: -k2 -g |
    head -n 1 | tee -a "$tmp/copies" | sed -n 's/^gpu-pd kernel: \([0-9.]*\) ms.*/\1/p' || true
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f ×", a / b; else print "—" }'; }

echo "Machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')); $(command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1 || echo 'no GPU'); $(date -u '+%Y-%m-%d %H:%M UTC'); $reps runs, minimum"
for n in $sizes; do
  "$mk" data/sample.png "$n" "$tmp/g.pgm"
  "$mk" data/sample.png "$n" "$tmp/c.ppm"
  # gray writes 8-bit values as the colour rows do (to /dev/null it
  # would pack 1-bit rows, which RGB has no format for)
  g1=$(min_ms --backend cpu --threads 1 "$tmp/g.pgm" "$tmp/out.pgm")
  ga=$(min_ms --backend cpu --threads 0 "$tmp/g.pgm" "$tmp/out.pgm")
  ge=$(min_ms --backend cuda "$tmp/g.pgm" "$tmp/out.pgm")
  rm -f "$tmp/out.pgm"
  gk=""
  if [ -x "$benchcuda" ] && [ $((n % 1024)) -eq 0 ]; then
    gk=$("$benchcuda" --sizes $((n / 1024)) --reps "$reps" --no-paper 2>/dev/null |
      awk -F'|' '/gpu-fast/ && $3 ~ /[0-9]/ { gsub(/[^0-9.]/, "", $3); print $3; exit }' || true)
  fi
  echo
  echo "| $n² | gray | RGB | RGB / gray | CMYK | CMYK / gray |"
  echo "|---|---|---|---|---|---|"
  row() { # label gray-ms rgb-args... -- cmyk is the same with --color cmyk
    local label=$1 gray=$2; shift 2
    local r c
    r=$(min_ms --color plane-dependent "$@" "$tmp/c.ppm" /dev/null)
    c=$(min_ms --color cmyk "$@" "$tmp/c.ppm" /dev/null)
    echo "| $label | ${gray:-—} | $r | $(ratio "$r" "$gray") | $c | $(ratio "$c" "$gray") |"
  }
  row "CPU, 1 thread" "$g1" --interplane 0.2 --backend cpu --threads 1
  row "CPU, all cores" "$ga" --interplane 0.2 --backend cpu --threads 0
  row "CPU, all cores, randomized" "$ga" --interplane 0.2 --randomize 1 --backend cpu --threads 0
  row "GPU, end to end" "$ge" --interplane 0.2 --backend cuda
  row "GPU, end to end, randomized" "$ge" --interplane 0.2 --randomize 1 --backend cuda
  rk=$(kernel_ms --color plane-dependent --interplane 0.2 --backend cuda "$tmp/c.ppm" /dev/null)
  ck=$(kernel_ms --color cmyk --interplane 0.2 --backend cuda "$tmp/c.ppm" /dev/null)
  echo "| GPU kernel (gray: gpu-fast) | ${gk:-—} | ${rk:-—} | $(ratio "$rk" "$gk") | ${ck:-—} | $(ratio "$ck" "$gk") |"
  if [ -s "$tmp/copies" ]; then
    echo
    sed 's/^/fastest run (RGB, then CMYK): /' "$tmp/copies"
    rm -f "$tmp/copies"
  fi
  if [ -s "$tmp/why" ]; then
    echo
    sort -u "$tmp/why" | sed 's/^/n\/a: /'
    rm -f "$tmp/why"
  fi
done
