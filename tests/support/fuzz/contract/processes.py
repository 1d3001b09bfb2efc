"""Processes, threads and close(): the address-space size, waiting for a
forked child, calls after close, and whether a call wrote every row (or none)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

import mjrefresh
from support.fuzz.contract.calls import CLOSED
from support.fuzz.contract.comparison import written_columns
from support.fuzz.contract.memory import Memory
from support.fuzz.contract.states import SENTINEL
from support.fuzz.contract.violations import _describe, _tb, violation


def vm_size() -> int:
    """This process's virtual memory size in bytes (for RLIMIT_AS)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmSize in /proc/self/status")


def wait_child(pid: int, timeout: float, what: str = "the forked child") -> None:
    """Wait for a forked child; a hang, a signal or a non-zero exit is a violation."""
    import os
    import signal
    import time

    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            raise violation(f"{what} hung (no exit after {timeout:.0f} s; killed)")
        time.sleep(0.005)
    if os.WIFSIGNALED(status):
        raise violation(f"{what} was killed by {signal.Signals(os.WTERMSIG(status)).name}")
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise violation(f"{what} exited with code {code} (its traceback is in the output)")


def expect_closed(
    fn: Callable[[], Any], arrays: Iterable[np.ndarray] = (), what: str = "call"
) -> None:
    """`fn()` raises RuntimeError("Refresher is closed") and writes nothing."""
    mem = Memory(list(arrays))
    try:
        result = fn()
    except RuntimeError as exc:
        if str(exc) != CLOSED:
            raise violation(f"{what} after close raised {_describe(exc)}") from exc
    except Exception as exc:  # noqa: BLE001
        raise violation(f"{what} after close raised {_describe(exc)}\n{_tb(exc)}") from exc
    else:
        raise violation(f"{what} after close returned {result!r}; expected RuntimeError")
    problems = mem.changed(allowed=False)
    if problems:
        raise violation(f"{what} after close wrote: {problems}")


def all_written(
    r: mjrefresh.Refresher, out: mjrefresh.RefreshOutputs, ids: Sequence[int] | None = None
) -> bool:
    """Whether no planned output cell of rows `ids` (default all) still holds SENTINEL."""
    cols = written_columns(r)
    for name, a in out.arrays().items():
        sub = a if ids is None else a[np.asarray(ids)]
        if name == "sensordata":
            sub = sub[:, cols]
        if (sub == SENTINEL).any():
            return False
    return True


def untouched(out: mjrefresh.RefreshOutputs) -> bool:
    return all((a == SENTINEL).all() for a in out.arrays().values())
