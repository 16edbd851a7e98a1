#!/usr/bin/env bash
# Installs what GEGL Halftone needs to build and test on Debian 12
# (bookworm) and 13 (trixie). Idempotent: skips apt when everything is
# there. Prints one line; apt's output goes to a log file
# ($HT_APT_LOG, default ${TMPDIR:-/tmp}/gegl-halftone-apt.log), whose
# last lines are shown when apt fails.
#
# GIMP 2.10 (its development files, libgimp2.0-dev, and gimp itself for
# the plug-in's tests) is installed where the release has it, Debian 12:
# the GIMP 2.10 plug-in is built there. Debian 13 has GIMP 3, which uses
# the GEGL operation directly and which nothing here needs to build or
# test, so it is not pulled in (there 113 packages and 65 MB of download
# more than the 258 packages and 196 MB needed). nvcc is not a Debian
# package we pull in: where it is present (/usr/local/cuda/bin) the CUDA
# module can be built too. Open MPI (libopenmpi-dev, openmpi-bin) builds
# halftone-mpi and runs its tests (suite mpi).
# libtiff and libjpeg-turbo: TIFF in and out, JPEG in; libtiff-tools
# (tiffinfo, tiffcp, tiff2pdf) and libjpeg-turbo-progs (djpeg, cjpeg)
# are what the format tests (tests/cli/test_formats.py) check against.
set -euo pipefail
required=(build-essential meson ninja-build pkg-config python3 libpng-dev
          gegl libgegl-dev libbabl-dev gettext xvfb xauth netpbm
          libtiff-dev libjpeg62-turbo-dev libtiff-tools libjpeg-turbo-progs
          libopenmpi-dev openmpi-bin)
gimp2=(libgimp2.0-dev gimp) # all where the first is known, else none
# With --tests (tools/run-tests.sh): clang and its run-time libraries,
# for the libFuzzer targets of the fuzz suite (docs/fuzzing.md).
if [ "${1:-}" = --tests ]; then
  required+=(clang libclang-rt-dev)
fi
log=${HT_APT_LOG:-${TMPDIR:-/tmp}/gegl-halftone-apt.log}

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "ok installed"; }
# whether apt's package lists (as they are now) know a package
known() { apt-cache show "$1" >/dev/null 2>&1; }

missing=()
for p in "${required[@]}"; do
  installed "$p" || missing+=("$p")
done
if known "${gimp2[0]}"; then
  for p in "${gimp2[@]}"; do
    installed "$p" || missing+=("$p")
  done
fi
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all packages present"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null; then
    echo "install-deps: missing ${missing[*]}; run this as root or install sudo" >&2
    exit 1
  fi
  sudo="sudo"
fi
apt() {
  if ! DEBIAN_FRONTEND=noninteractive $sudo apt-get "$@" >>"$log" 2>&1 </dev/null; then
    echo "install-deps: apt-get $1 failed; the end of $log:" >&2
    tail -n 15 "$log" >&2
    exit 1
  fi
}
: >"$log"
echo "install-deps: installing ${#missing[@]} packages (${missing[*]}); apt's output: $log"
apt update -q
# after the update: the required ones missing, and GIMP 2.10 where this
# release has it
todo=()
for p in "${required[@]}"; do
  installed "$p" || todo+=("$p")
done
if known "${gimp2[0]}"; then
  for p in "${gimp2[@]}"; do
    installed "$p" || todo+=("$p")
  done
fi
apt install -y -q --no-install-recommends "${todo[@]}"
echo "install-deps: done"
