"""A real mju_error source on worker threads: a passive-force callback
compiled from C at test time and installed in MuJoCo's global mjcb_passive
slot. A refresh that runs mj_fwdVelocity (a tendonvel sensor) calls it on the
worker threads; it calls mju_error for rows whose qpos[0] is > 100."""

from __future__ import annotations

import contextlib
import ctypes
import glob
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import mujoco

FAILING_PASSIVE_C = r"""
#include <mujoco/mujoco.h>
void failing_passive(const mjModel* m, mjData* d) {
  if (d->qpos[0] > 100) mju_error("crafted failure at qpos[0]=%g", d->qpos[0]);
}
"""
LIBMUJOCO = glob.glob(os.path.join(os.path.dirname(mujoco.__file__), "libmujoco.so.*"))[0]


def c_compiler() -> str | None:
    """Path of a C compiler, or None."""
    return shutil.which("cc") or shutil.which("gcc")


def compile_failing_passive(cc: str, tmp: Path) -> int:
    """Build the failing callback with `cc` in `tmp`; its address."""
    src = tmp / "fail.c"
    src.write_text(FAILING_PASSIVE_C)
    so = tmp / "libfail.so"
    include = os.path.join(os.path.dirname(mujoco.__file__), "include")
    subprocess.run(
        [cc, "-shared", "-fPIC", "-O1", "-I", include, str(src), "-o", str(so), LIBMUJOCO],
        check=True,
    )
    lib = ctypes.CDLL(str(so))
    return ctypes.cast(lib.failing_passive, ctypes.c_void_p).value


@contextlib.contextmanager
def passive_callback(address: int) -> Iterator[None]:
    """The callback at `address` in mjcb_passive while the block runs."""
    slot = ctypes.c_void_p.in_dll(ctypes.CDLL(LIBMUJOCO), "mjcb_passive")
    saved = slot.value
    slot.value = address
    try:
        yield
    finally:
        slot.value = saved
