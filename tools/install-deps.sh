#!/usr/bin/env bash
# Installs what GEGL Halftone needs to build and test on Debian 12.
# Idempotent; skips apt when everything is already there. nvcc is not a
# Debian package we pull in: where it is present (/usr/local/cuda/bin) the
# CUDA module is built too, otherwise that part is left out quietly.
set -euo pipefail
packages=(build-essential meson ninja-build pkg-config python3 libpng-dev
          gegl libgegl-dev libbabl-dev libgimp2.0-dev gimp gettext
          xvfb xauth netpbm)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  sudo="sudo"
fi
echo "install-deps: installing ${missing[*]}" >&2
$sudo apt-get update -q
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
