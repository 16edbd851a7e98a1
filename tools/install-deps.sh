#!/usr/bin/env bash
# Installs what GEGL Halftone needs to build and test on Debian 12
# (bookworm) and 13 (trixie). Idempotent: skips apt when everything is
# there. Prints one line; apt's output goes to a log file
# ($HT_APT_LOG, default ${TMPDIR:-/tmp}/gegl-halftone-apt.log), whose
# last lines are shown when apt fails.
#
# Optional packages are installed where the release has them: the GIMP
# 2.10 development files (libgimp2.0-dev) exist on Debian 12 only, so the
# GIMP 2.10 plug-in is built there; Debian 13's GIMP 3 uses the GEGL
# operation directly. nvcc is not a Debian package we pull in: where it
# is present (/usr/local/cuda/bin) the CUDA module can be built too.
set -euo pipefail
required=(build-essential meson ninja-build pkg-config python3 libpng-dev
          gegl libgegl-dev libbabl-dev gettext xvfb xauth netpbm)
optional=(libgimp2.0-dev gimp)
log=${HT_APT_LOG:-${TMPDIR:-/tmp}/gegl-halftone-apt.log}

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "ok installed"; }
# whether apt's package lists (as they are now) know a package
known() { apt-cache show "$1" >/dev/null 2>&1; }

missing=()
for p in "${required[@]}"; do
  installed "$p" || missing+=("$p")
done
for p in "${optional[@]}"; do
  installed "$p" || ! known "$p" || missing+=("$p")
done
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
# after the update: the required ones missing, and the optional ones
# this release has
todo=()
for p in "${required[@]}"; do
  installed "$p" || todo+=("$p")
done
for p in "${optional[@]}"; do
  installed "$p" || ! known "$p" || todo+=("$p")
done
apt install -y -q --no-install-recommends "${todo[@]}"
echo "install-deps: done"
