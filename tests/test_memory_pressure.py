"""A process out of memory gets a MemoryError or a RefreshError, never an
end of the process: when workers first touch their thread-local storage
(glibc allocates it then, and aborts when it cannot), and when MuJoCo fails
in so many rows that the list of failed rows cannot grow. Each case runs in
a child process under an address-space limit."""

from __future__ import annotations

import os

import pytest
from support.child import run_child

pytestmark = pytest.mark.skipif(
    bool(os.environ.get("MJREFRESH_UNDER_ASAN")),
    reason="AddressSanitizer's allocator aborts the process when an address-space limit "
    "refuses an allocation (by design); the plain build runs these tests",
)

VM = """
def vm():
    for line in open("/proc/self/status"):
        if line.startswith("VmSize"):
            return int(line.split()[1]) * 1024
"""


@pytest.mark.parametrize("engine", ["exact", "fast"])
@pytest.mark.parametrize("reserve", [0, 40_000])
def test_first_call_of_fresh_workers_with_no_memory_left(engine, reserve):
    # The workers are started but have never run a call; the heap is then
    # used up but for `reserve` bytes. Their thread-locals used to be
    # allocated at that first call: "cannot allocate memory for thread-local
    # data: ABORT" (exit 127). Now they exist once the Refresher is built.
    res = run_child(
        VM
        + f"""
import gc, resource
import numpy as np, mjrefresh
m = mjrefresh.models.quadruped()
n = 4000
qpos, qvel = np.tile(m.qpos0, (n, 1)), np.zeros((n, m.nv))
r = mjrefresh.Refresher(m, bodies=(1,), num_threads=2, engine="{engine}")
b, ids = r.bind(qpos, qvel, r.outputs(n)), np.arange(n)
gc.disable()
reserve = bytearray({reserve})
resource.setrlimit(resource.RLIMIT_AS, (vm() - (8 << 20), resource.RLIM_INFINITY))
hog = []
for size in (1 << 20, 1 << 16, 1 << 12, 1 << 8, 64, 16):
    try:
        while True:
            hog.append(bytearray(size))
    except MemoryError:
        pass
del reserve
try:
    b(ids)
    message = "refreshed"
except MemoryError as exc:
    error, message = exc, None
del hog  # the message is formatted with memory back (it failed once without)
print(message or f"MemoryError: {{error}}")
"""
    )
    assert res.returncode == 0, (res.returncode, res.stderr[-2000:])
    assert res.stdout.strip() == "refreshed" or res.stdout.startswith("MemoryError: rows: "), (
        res.stdout
    )


@pytest.mark.parametrize("threads", [1, 2])
def test_failed_rows_beyond_memory_are_a_memory_error(threads):
    # Every one of 200,000 rows overflows MuJoCo's arena, with about 1.7 MB
    # of address space left: the failed-row list outgrew it. A worker then
    # called std::terminate (abort), or the caller unwound while workers
    # still used the call's state (a segfault).
    res = run_child(
        VM
        + f"""
import gc, resource
import numpy as np, mujoco, mjrefresh
from support.failing_rows import OVERFLOW_XML, overflow_states
m = mujoco.MjModel.from_xml_string(OVERFLOW_XML)
n = 200_000
states = overflow_states(n, bad=range(n))
r = mjrefresh.Refresher(m, sensors=("adv", "fp"), num_threads={threads}, engine="exact")
b = r.bind(states["qpos"], states["qvel"], r.outputs(n))
try:
    b(np.arange(64))
except mjrefresh.RefreshError:
    pass
ids = np.arange(n)
gc.disable()
resource.setrlimit(resource.RLIMIT_AS, (vm() + 1_700_000, resource.RLIM_INFINITY))
try:
    b(ids)
    print("no error")
except mjrefresh.RefreshError as exc:
    print("RefreshError", len(exc.rows))
except MemoryError as exc:
    print("MemoryError:", exc)
"""
    )
    assert res.returncode == 0, (res.returncode, res.stderr[-2000:])
    out = res.stdout.strip()
    assert out == "RefreshError 200000" or out.startswith(
        (
            "MemoryError: rows: MuJoCo failed in more rows than memory was left to record "
            "(the lowest: row 0: mj_stackAlloc: out of memory",
            "MemoryError: rows: MuJoCo failed in 200000 rows, and no memory was left to list",
            "MemoryError: rows: cannot allocate",
        )
    ), out
