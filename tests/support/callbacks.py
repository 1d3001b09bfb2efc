"""MuJoCo's global callbacks, made observable: counting C callbacks for every
``mjcb_*`` slot, compiled at test time against the installed MuJoCo and
installed straight into libmujoco's globals (as a C program would), and a
context manager that sets Python callbacks through the mujoco bindings.

A refresh must never call any of them (README, Guarantees)."""

from __future__ import annotations

import contextlib
import ctypes
import glob
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import mujoco

LIBMUJOCO = glob.glob(os.path.join(os.path.dirname(mujoco.__file__), "libmujoco.so.*"))[0]

#: Slot -> C signature of a counting callback (the counter is `<slot>_calls`).
SLOTS = {
    "mjcb_passive": "void {f}(const mjModel* m, mjData* d)",
    "mjcb_control": "void {f}(const mjModel* m, mjData* d)",
    "mjcb_contactfilter": "int {f}(const mjModel* m, mjData* d, int g1, int g2)",
    "mjcb_sensor": "void {f}(const mjModel* m, mjData* d, int stage)",
    "mjcb_time": "mjtNum {f}(void)",
    "mjcb_act_dyn": "mjtNum {f}(const mjModel* m, const mjData* d, int id)",
    "mjcb_act_gain": "mjtNum {f}(const mjModel* m, const mjData* d, int id)",
    "mjcb_act_bias": "mjtNum {f}(const mjModel* m, const mjData* d, int id)",
}


def c_compiler() -> str | None:
    """Path of a C compiler, or None."""
    return shutil.which("cc") or shutil.which("gcc")


class CountingCallbacks:
    """A compiled library with one counting callback per ``mjcb_*`` slot."""

    def __init__(self, cc: str, tmp: Path) -> None:
        lines = ["#include <mujoco/mujoco.h>"]
        for slot, sig in SLOTS.items():
            ret = "" if sig.startswith("void") else "return 0;"
            lines.append(f"int {slot}_calls = 0;")
            lines.append(sig.format(f=f"count_{slot}") + f" {{ {slot}_calls++; {ret} }}")
        src = tmp / "counting.c"
        src.write_text("\n".join(lines) + "\n")
        so = tmp / "libcounting.so"
        include = os.path.join(os.path.dirname(mujoco.__file__), "include")
        subprocess.run(
            [cc, "-shared", "-fPIC", "-O1", "-I", include, str(src), "-o", str(so), LIBMUJOCO],
            check=True,
        )
        self._lib = ctypes.CDLL(str(so))
        self._mujoco = ctypes.CDLL(LIBMUJOCO)

    def address(self, slot: str) -> int:
        """Address of the counting callback for `slot`."""
        return int(ctypes.cast(getattr(self._lib, f"count_{slot}"), ctypes.c_void_p).value)

    def calls(self) -> dict[str, int]:
        """Calls counted so far, by slot."""
        return {s: ctypes.c_int.in_dll(self._lib, f"{s}_calls").value for s in SLOTS}

    @contextlib.contextmanager
    def installed(self, slots: tuple[str, ...] = tuple(SLOTS)) -> Iterator[None]:
        """The counting callbacks in libmujoco's `slots` while the block runs."""
        saved = {}
        for s in slots:
            slot = ctypes.c_void_p.in_dll(self._mujoco, s)
            saved[s] = slot.value
            slot.value = self.address(s)
        try:
            yield
        finally:
            for s, value in saved.items():
                ctypes.c_void_p.in_dll(self._mujoco, s).value = value


@contextlib.contextmanager
def python_callbacks(**callbacks: Callable[..., object]) -> Iterator[None]:
    """Python callbacks set through the bindings (``passive=f`` calls
    ``mujoco.set_mjcb_passive(f)``) while the block runs; unset afterwards."""
    for name, f in callbacks.items():
        getattr(mujoco, f"set_mjcb_{name}")(f)
    try:
        yield
    finally:
        for name in callbacks:
            getattr(mujoco, f"set_mjcb_{name}")(None)
