#!/bin/sh
# Whole-process benchmark of the output formats (BENCHMARKS.md, "File
# formats"): halftone writing .pbm, .png and .tif (CCITT G4) beside the
# tools a prepress user would otherwise run for the same file, netpbm
# (pgmtopbm -fs | pnmtotiff -g4) and ImageMagick (convert ... -compress
# Group4). Each pair runs alternately, ours then the peer, so that a
# shared machine's drift hits both alike; the median wall time of N runs
# is printed, with the ratio and the output sizes, and our three outputs
# are checked to hold the same pixels.
#
# usage: tools/bench/bench-formats.sh BUILD_DIR [SIZES] [RUNS] [WORKDIR]
#   e.g. tools/bench/bench-formats.sh build-bench "4096 16384" 5 /tmp/htfmt
# Needs netpbm and imagemagick (Debian packages of those names).
set -eu

build=${1:?usage: $0 BUILD_DIR [SIZES] [RUNS] [WORKDIR]}
sizes=${2:-4096 16384}
runs=${3:-5}
work=${4:-/tmp/ht-bench-formats}
here=$(cd "$(dirname "$0")/../.." && pwd)
ht=$(cd "$build" && pwd)/tools/cli/halftone
mk=$(cd "$build" && pwd)/tools/bench/ht-mkimage
# /usr/bin first: a convert earlier in PATH may not be ImageMagick's
im=/usr/bin/convert
for t in "$ht" "$mk" "$im" pgmtopbm pnmtotiff pnmtopng tifftopnm pngtopnm; do
  command -v "$t" >/dev/null || { echo "$0: $t not found" >&2; exit 1; }
done
mkdir -p "$work/policy"
cd "$work"
# Debian's ImageMagick policy refuses images over 16000 pixels a side and
# 128 megapixels: a private policy for these runs, /etc left alone.
cat > policy/policy.xml <<'EOF'
<policymap>
  <policy domain="resource" name="memory" value="16GiB"/>
  <policy domain="resource" name="map" value="32GiB"/>
  <policy domain="resource" name="width" value="1MP"/>
  <policy domain="resource" name="height" value="1MP"/>
  <policy domain="resource" name="area" value="64GP"/>
  <policy domain="resource" name="disk" value="64GiB"/>
</policymap>
EOF
export MAGICK_CONFIGURE_PATH="$work/policy"

# seconds of one run of the shell command $1
wall() {
  t0=$(date +%s%N)
  sh -c "$1" </dev/null >/dev/null 2>&1 || { echo "$0: failed: $1" >&2; exit 1; }
  t1=$(date +%s%N)
  echo "$t0 $t1" | awk '{ printf "%.3f\n", ($2 - $1) / 1e9 }'
}

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# pair LABEL OURS PEER OURS_OUT PEER_OUT: RUNS alternations after one warm-up
pair() {
  : > a.t; : > b.t
  wall "$2" >/dev/null; wall "$3" >/dev/null
  i=0
  while [ "$i" -lt "$runs" ]; do
    wall "$2" >> a.t; wall "$3" >> b.t
    i=$((i + 1))
  done
  a=$(median < a.t); b=$(median < b.t)
  printf '| %s | %s | %s | %s | %s | %.1fx |\n' "$1" "$a" "$(stat -c %s "$4")" "$b" "$(stat -c %s "$5")" \
    "$(echo "$a $b" | awk '{ print $2 / $1 }')"
}

echo "$("$ht" --version | head -n 1); Netpbm $(pgmtopbm --version 2>&1 | sed -n 's/.*Netpbm Version: Netpbm //p');" \
  "$("$im" -version | sed -n 's/^Version: \(ImageMagick [^ ]*\).*/\1/p'); $(nproc) cores; $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "| size, output | ours s (median) | ours bytes | peer s (median) | peer bytes | peer / ours |"
echo "|---|---|---|---|---|---|"
for s in $sizes; do
  [ -f "in$s.pgm" ] || "$mk" "$here/data/sample.png" "$s" "in$s.pgm"
  [ -f "in$s.png" ] || pnmtopng "in$s.pgm" > "in$s.png"
  h="$ht --threads 0 in$s.pgm"
  pair "$s² .tif G4 vs netpbm" "$h o$s.tif" "pgmtopbm -fs in$s.pgm | pnmtotiff -g4 > n$s.tif" "o$s.tif" "n$s.tif"
  pair "$s² .tif G4 vs ImageMagick" "$h o$s.tif" \
    "$im in$s.pgm -dither FloydSteinberg -monochrome -compress Group4 m$s.tif" "o$s.tif" "m$s.tif"
  pair "$s² .pbm vs netpbm" "$h o$s.pbm" "pgmtopbm -fs in$s.pgm > n$s.pbm" "o$s.pbm" "n$s.pbm"
  pair "$s² .png vs netpbm" "$h o$s.png" "pgmtopbm -fs in$s.pgm | pnmtopng > n$s.png" "o$s.png" "n$s.png"
  pair "$s² PNG in, .tif G4 vs netpbm" "$ht --threads 0 in$s.png p$s.tif" \
    "pngtopnm in$s.png | pgmtopbm -fs | pnmtotiff -g4 > q$s.tif" "p$s.tif" "q$s.tif"
  # the three formats hold the same pixels
  tifftopnm "o$s.tif" 2>/dev/null | cmp -s - "o$s.pbm" || { echo "$0: o$s.tif differs from o$s.pbm" >&2; exit 1; }
  pngtopnm "o$s.png" | cmp -s - "o$s.pbm" || { echo "$0: o$s.png differs from o$s.pbm" >&2; exit 1; }
done
