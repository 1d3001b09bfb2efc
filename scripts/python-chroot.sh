#!/usr/bin/env bash
# A cached Debian 13 (trixie) chroot with CPython 3.13 or 3.14, g++, make,
# CMake and Ninja: this Debian 12 host has only CPython 3.11, and the
# stable-ABI wheel needs a Python >= 3.12 to build, newer CPythons to test.
#
#   scripts/python-chroot.sh VERSION
#       Make the chroot unless it is complete; print its directory on stdout.
#   scripts/python-chroot.sh VERSION run [--bind DIR]... [--env NAME=VALUE]... -- CMD [ARG]...
#       Make it likewise, then run CMD in it as root with each DIR (existing)
#       bind-mounted read-write at its own path, in the host's working
#       directory if the chroot has that path (else /); exits with CMD's status.
#
# 3.13 is trixie's python3.13. 3.14 comes from Debian testing, pinned
# (priority 100; apt's 3.0 solver without strict pinning) so that testing
# supplies only python3.14 and what trixie has too old for it: today glibc,
# so the 3.14 chroot has glibc 2.43, the 3.13 one trixie's 2.41.
# Progress goes to stderr. Needs root; installs debootstrap if missing.
#
# Cache: ${MJREFRESH_CHROOT_CACHE:-~/.cache/mjrefresh-chroots}/python<VERSION>,
# complete once a stamp holding the recipe is written (last); a chroot without
# it (half made) or with another recipe is made again from scratch. Packages
# come from the mirror of the host's apt (or MJREFRESH_DEBIAN_MIRROR).
#
# The script re-runs itself in new mount and PID namespaces (unshare
# --kill-child): when it ends, however (even killed), the processes it
# started die and its mounts vanish; the host never sees them. Mounted: /proc,
# /dev (with /dev/shm), /sys, a fresh tmpfs on /tmp, the --bind directories,
# and read-only the host's resolv.conf, hosts, CA bundle and pip configuration
# (/etc/pip.conf, /etc/xdg/pip, PIP_*; not ~/.config/pip) with the local
# paths it names, so pip inside reaches PyPI configured as on the host.
# CMD's environment: PATH, HOME=/root, LANG=C.UTF-8, TERM, the host's CI,
# PIP_*, MJREFRESH_*, PYTHONUNBUFFERED, PYTHONDONTWRITEBYTECODE, each --env.
#
# CI example: a venv in a host temp dir, the checkout at its own path.
#   t=$(mktemp -d); run="scripts/python-chroot.sh 3.13 run --bind $t --bind $PWD --"
#   $run python3.13 -m venv "$t/venv"
#   $run "$t/venv/bin/pip" install dist/mjrefresh-*.whl mujoco pytest
#   $run "$t/venv/bin/python" -m pytest -q tests
set -euo pipefail
usage() { echo "usage: $0 3.13|3.14 [run [--bind DIR]... [--env NAME=VALUE]... -- CMD [ARG]...]" >&2 && exit 2; }
[ $# -ge 1 ] || usage
version=$1
shift
case $version in 3.13 | 3.14) ;; *) usage ;; esac
[ "$(id -u)" = 0 ] || { echo "python-chroot.sh: needs root" >&2; exit 1; }
if [ -z "${_PYTHON_CHROOT_NS:-}" ]; then
  _PYTHON_CHROOT_NS=1 exec unshare --mount --propagation private --pid --fork --kill-child \
    -- bash "$0" "$version" "$@"
fi
binds=() envs=()
if [ $# -gt 0 ]; then
  [ "$1" = run ] || usage
  shift
  while [ $# -gt 0 ] && [ "$1" != -- ]; do
    case $1 in
      --bind) binds+=("$(realpath -e "$2")") ;;
      --env) envs+=("$2") ;;
      *) usage ;;
    esac
    shift 2
  done
  [ $# -ge 2 ] || usage
  shift
fi

cache=${MJREFRESH_CHROOT_CACHE:-$HOME/.cache/mjrefresh-chroots}
root=$cache/python$version
stamp=$root/.mjrefresh-chroot-complete
packages="python$version python$version-venv python$version-dev g++ make cmake ninja-build"
recipe="1 trixie $packages" # bump the number when the steps below change
# shellcheck disable=SC2016 # $(REPO_URI) is apt's field, not a shell expansion
mirror=${MJREFRESH_DEBIAN_MIRROR:-$(apt-get indextargets --format '$(REPO_URI)' 'Label: Debian' | head -n 1)}
mirror=${mirror:-http://deb.debian.org/debian}
cwd=/
apt_opts=(-o Acquire::Check-Valid-Until=false -o APT::Install-Recommends=false -q)
log() { echo "python-chroot: $*" >&2; }
in_chroot() { # [NAME=VALUE]... CMD [ARG]...: in a clean environment, in $cwd
  chroot "$root" /usr/bin/env -i -C "$cwd" HOME=/root LANG=C.UTF-8 \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"
}
bind() { # host path $1 at the same path inside; $2=ro: read-only
  if [ -L "$root$1" ]; then rm -f "$root$1"; fi # never follow a link out of the chroot
  if [ -d "$1" ]; then
    mkdir -p "$root$1"
  elif [ ! -e "$root$1" ]; then
    mkdir -p "$(dirname "$root$1")" && touch "$root$1"
  fi
  mount --bind ${2:+-o ro} "$1" "$root$1"
}
pip_paths() { # local paths that the host's pip configuration names (an index
  # .../simple as its parent: its pages may link to ../../files/)
  { cat /etc/pip.conf /etc/xdg/pip/pip.conf 2>/dev/null || true; env | grep '^PIP_' || true; } |
    grep -oE '(^|[[:space:]=])(file://)?/[^[:space:]]+' | sed -E 's#^[[:space:]=]*(file://)?##; s#/simple/?$##'
}
mount_system() { # what apt and Python need; DNS as on the host
  mount -t proc proc "$root/proc"
  mount --rbind /dev "$root/dev"
  mount --rbind /sys "$root/sys"
  mount -t tmpfs tmpfs "$root/tmp"
  bind /etc/resolv.conf ro
  bind /etc/hosts ro
}
mount_pip_config() { # after the chroot's ca-certificates wrote its bundle: the host's replaces it
  local path
  while read -r path; do
    if [ -e "$path" ]; then bind "$path" ro; fi
  done < <({ printf '%s\n' /etc/ssl/certs/ca-certificates.crt /etc/pip.conf /etc/xdg/pip && pip_paths; } | sort -u)
}

complete() { [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$recipe" ]; }

mkdir -p "$cache"
exec 9>"$root.lock"
flock -s 9 # shared while using it: no other call remakes it meanwhile
mounted=
if ! complete; then
  flock 9 # exclusive to make it, once running commands are done
fi
if ! complete; then
  if awk -v r="$root" '$5 == r || index($5, r "/") == 1 {f = 1} END {exit !f}' /proc/self/mountinfo; then
    echo "python-chroot.sh: something is mounted under $root; unmount it first" >&2
    exit 1
  fi
  log "making $root (Debian trixie + python$version, mirror $mirror)"
  start=$SECONDS
  rm -rf "$root"
  if ! command -v debootstrap >/dev/null; then
    apt-get update -q >&2
    apt-get install -y -q debootstrap >&2
  fi
  debootstrap --variant=minbase trixie "$root" "$mirror" >&2
  mount_system
  mounted=1
  install_opts=()
  if [ "$version" = 3.14 ]; then
    printf 'Types: deb\nURIs: %s\nSuites: testing\nComponents: main\nSigned-By: %s\n' \
      "$mirror" /usr/share/keyrings/debian-archive-keyring.gpg >"$root/etc/apt/sources.list.d/testing.sources"
    printf 'Package: *\nPin: release a=testing\nPin-Priority: 100\n' >"$root/etc/apt/preferences.d/testing"
    # The solver may then take testing's version of a dependency whose
    # trixie version is too old (libc6 >= 2.42), and of nothing else.
    install_opts=(--solver 3.0 --no-strict-pinning)
  fi
  # shellcheck disable=SC2086 # $packages is a list
  {
    in_chroot apt-get "${apt_opts[@]}" update
    in_chroot DEBIAN_FRONTEND=noninteractive apt-get "${apt_opts[@]}" install -y "${install_opts[@]}" $packages
    in_chroot apt-get clean
  } >&2
  echo "$recipe" >"$stamp"
  log "made $root in $((SECONDS - start)) s ($(du -sh --one-file-system "$root" | cut -f1))"
fi
flock -s 9
if [ ${#binds[@]} -eq 0 ] && [ $# -eq 0 ]; then
  echo "$root"
  exit 0
fi
[ -n "$mounted" ] || mount_system
mount_pip_config
for dir in "${binds[@]}"; do bind "$dir"; done
keep=()
while IFS= read -r -d '' var; do
  case $var in CI=* | PIP_* | MJREFRESH_* | PYTHONUNBUFFERED=* | PYTHONDONTWRITEBYTECODE=*) keep+=("$var") ;; esac
done < <(env -0)
if [ -d "$root$PWD" ]; then cwd=$PWD; fi
in_chroot TERM="${TERM:-dumb}" "${keep[@]}" "${envs[@]}" "$@"
