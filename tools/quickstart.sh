#!/usr/bin/env bash
# The first run: sets up a Debian 12 or 13 machine, builds GEGL Halftone
# for this machine, installs it for the current user (no root needed for
# that part) and halftones the bundled photograph twice, with `halftone`
# and through a `gegl` graph, so that every part is seen to work:
#
#   ~/.local/bin/halftone                          the command-line tool
#   ~/.local/share/gegl-0.4/plug-ins/              halftone:dither (GEGL, GIMP 3)
#   ~/.config/GIMP/2.10/plug-ins/halftone-gimp/    the GIMP 2.10 plug-in (where
#                                                  GIMP 2.10 is installed)
#   ~/.local/lib/<arch>/gegl-halftone/             the CUDA module (with a GPU)
#
# CUDA is built for the GPU in this machine only, and not at all where
# there is none (the test command, tools/run-tests.sh, builds it for every
# generation). The build folder is build-quickstart/, so `build/` stays
# what tools/run-tests.sh and the README's manual steps make it. Output
# is a few lines; the details go to build-quickstart/quickstart.log.
set -uo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--cuda-options" ]; then
  # what step 2 would choose for this machine, without doing anything
  only_cuda=1
elif [ "${1:-}" = "--uninstall" ] && [ $# -eq 1 ]; then
  # removes what step 4 installed, from the list it wrote
  # (~/.local/share/gegl-halftone/installed-files); needs no build folder
  exec python3 tools/user-install.py --uninstall
elif [ $# -gt 0 ]; then
  echo "usage: tools/quickstart.sh [--cuda-options | --uninstall]" >&2
  exit 2
fi

# CUDA for the GPU present, or none (step 2). Sets cuda_opts (Meson
# options) and gpu_note (what was found, for the user).
cuda_setup() {
  export PATH="$PATH:/usr/local/cuda/bin"
  cuda_opts=(-Dcuda=disabled)
  local caps known cap k pick list archs=()
  if ! command -v nvidia-smi >/dev/null || ! nvidia-smi >/dev/null 2>&1; then
    gpu_note="no NVIDIA GPU found (no working nvidia-smi): the CUDA module is left out"
    return
  fi
  caps=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | tr -d ' .' | grep -E '^[0-9]+$' | sort -nu)
  if [ -z "$caps" ]; then
    gpu_note="nvidia-smi does not tell the GPU's generation (a driver older than 510?): the CUDA module is left out; build it with meson setup -Dgpu_arch=sm_XY"
    return
  fi
  if ! command -v nvcc >/dev/null; then
    gpu_note="a GPU is there but no CUDA compiler (nvcc, /usr/local/cuda/bin): the CUDA module is left out"
    return
  fi
  # each card's sm_XY or, where this nvcc is older than the card, the
  # newest it knows (whose PTX, added by cuda/meson.build, the driver
  # compiles for the card)
  known=$(nvcc --list-gpu-arch 2>/dev/null | sed -n 's/^compute_\([0-9]*\)$/\1/p' | sort -n)
  for cap in $caps; do
    pick=""
    for k in $known; do [ "$k" -le "$cap" ] && pick=$k; done
    [ -n "$pick" ] && [[ " ${archs[*]} " != *" sm_$pick "* ]] && archs+=("sm_$pick")
  done
  if [ ${#archs[@]} -eq 0 ]; then
    gpu_note="this nvcc knows no GPU generation up to the card's (sm_$(echo $caps | tr ' ' ,)): the CUDA module is left out"
    return
  fi
  list=$(IFS=,; echo "${archs[*]}")
  cuda_opts=(-Dcuda=enabled "-Dgpu_arch=$list")
  gpu_note="GPU found (sm_$(echo $caps | sed 's/ /, sm_/g')): the CUDA module is built for $list only"
}
if [ -n "${only_cuda:-}" ]; then
  cuda_setup
  printf '%s\n%s\n' "${cuda_opts[*]}" "$gpu_note"
  exit 0
fi

root=$(pwd)
bd=build-quickstart
mkdir -p "$bd"
log=$root/$bd/quickstart.log
: >"$log"
t0=$(date +%s)
step() { printf 'quickstart: %s\n' "$*"; printf '\n== %s\n' "$*" >>"$log"; }
die() {
  printf 'quickstart: %s; the end of %s:\n' "$1" "$log" >&2
  tail -n 20 "$log" | sed 's/^/  /' >&2
  exit 1
}
say_took() { printf '  (%d s)\n' $(( $(date +%s) - $1 )); }
run() { "$@" >>"$log" 2>&1 </dev/null; }

# --- 1. packages (apt's output goes to the log too)
step "1/5 Debian packages"
HT_APT_LOG=$log tools/install-deps.sh 2>&1 | sed 's/^/  /' || { echo "quickstart: installing packages failed (log: $log)" >&2; exit 1; }

# --- 2. configure
cuda_setup
step "2/5 configure: $gpu_note"
opts=(-Duser_install=true "${cuda_opts[@]}")
if [ -f "$bd/build.ninja" ]; then
  run meson setup --reconfigure "$bd" "${opts[@]}" || die "meson setup failed"
else
  run meson setup "$bd" "${opts[@]}" || die "meson setup failed"
fi

# --- 3. build what is installed (the tests are built by the test
# command, tools/run-tests.sh)
step "3/5 build (ninja -C $bd)"
t=$(date +%s)
targets=$(meson introspect "$bd" --targets 2>>"$log" | python3 -c '
import json, os, sys
bd = os.path.realpath(sys.argv[1])
for t in json.load(sys.stdin):
    if t["installed"]:
        print("\n".join(os.path.relpath(f, bd) for f in t["filename"]))' "$bd") || die "meson introspect failed"
run ninja -C "$bd" $targets || die "the build failed"
say_took "$t"

# --- 4. install for this user: -Duser_install=true points every file at
# the user's own folders, and tools/user-install.py (run by meson install)
# puts the GIMP 2.10 plug-in into the GIMP 2.10 profile, setting that up
# first where GIMP 2.10 has not run yet, and lists what was installed.
step "4/5 install into your own folders (no root needed)"
run meson install -C "$bd" --no-rebuild || die "meson install failed"
manifest=${XDG_DATA_HOME:-$HOME/.local/share}/gegl-halftone/installed-files
placed=$(cat "$manifest") || die "meson install wrote no $manifest"
gimp_note="not built (no GIMP 2.10 development files; GIMP 3 uses the GEGL operation)"
[ -x "$bd/ui/halftone-gimp" ] && gimp_note="left out: GIMP 2.10 is not installed, and its profile does not exist yet"
show() { echo "$placed" | grep -q "$1" && printf '  %-18s %s\n' "$2" "$(echo "$placed" | grep "$1" | head -1 | sed "s|^$HOME|~|")"; }
show "/bin/halftone$" "halftone"
show "halftone-dither.so$" "GEGL operation"
show "plug-ins/halftone-gimp/halftone-gimp$" "GIMP 2.10 plug-in" || printf '  %-18s %s\n' "GIMP 2.10 plug-in" "$gimp_note"
show "libhalftone-cuda.so$" "CUDA module"

# --- 5. the sample, both ways, with what was installed
step "5/5 halftone data/sample.png"
"$HOME/.local/bin/halftone" --metrics data/sample.png sample-halftone.png >>"$log" 2>&1 \
  || die "halftone data/sample.png failed"
echo "  halftone data/sample.png sample-halftone.png"
# GEGL finds the operation in ~/.local/share/gegl-0.4/plug-ins by itself
# (GEGL_PATH, when set, would replace that folder); gegl exits 0 even
# when the operation is missing, so its message is looked for too.
rm -f sample-gegl.png
env -u GEGL_PATH gegl data/sample.png -o sample-gegl.png -- halftone:dither >"$bd/gegl.out" 2>&1
cat "$bd/gegl.out" >>"$log"
if grep -q "No such op" "$bd/gegl.out" || [ ! -s sample-gegl.png ]; then
  die "gegl did not find halftone:dither in ~/.local/share/gegl-0.4/plug-ins"
fi
echo "  gegl data/sample.png -o sample-gegl.png -- halftone:dither"
results="sample-halftone.png, sample-gegl.png"
# and through GIMP 2.10's plug-in, as a script would call it
if echo "$placed" | grep -q "plug-ins/halftone-gimp/halftone-gimp$" && command -v gimp-console-2.10 >/dev/null; then
  rm -f sample-gimp.png
  env -u GEGL_PATH timeout 600 gimp-console-2.10 -i -b '
    (let* ((image (car (gimp-file-load RUN-NONINTERACTIVE "data/sample.png" "data/sample.png")))
           (drawable (car (gimp-image-get-active-drawable image))))
      (plug-in-halftone-dither RUN-NONINTERACTIVE image drawable 0 "" 2 0 0 0 0 0)
      (gimp-file-save RUN-NONINTERACTIVE image drawable "sample-gimp.png" "sample-gimp.png")
      (gimp-image-delete image))' -b '(gimp-quit 0)' >>"$log" 2>&1 </dev/null
  [ -s sample-gimp.png ] || die "GIMP 2.10 did not run the plug-in plug-in-halftone-dither"
  echo "  gimp-console-2.10 -b '(plug-in-halftone-dither ...)' -> sample-gimp.png"
  results="$results, sample-gimp.png"
fi

echo "quickstart: done in $(( $(date +%s) - t0 )) s: $results in $root"
echo "quickstart: in GIMP: Colors > Halftone... (GIMP 2.10 and GIMP 3); docs: README.md, docs/gegl.md, docs/gimp.md"
case ":$PATH:" in
  *":$HOME/.local/bin:"*) ;;
  *) echo "quickstart: ~/.local/bin is not on your PATH yet (Debian's ~/.profile adds it at your next login); for now:"
     echo '  export PATH="$HOME/.local/bin:$PATH"' ;;
esac
