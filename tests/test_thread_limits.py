"""Worker threads the system refuses: building a refresher raises
RuntimeError naming the thread count and the remedy, with every thread it
had started joined and everything it had made freed; the process goes on
(and a forked child whose limits refuse new workers refreshes on fewer).
Each case runs in a child process: the limits are process-wide, and the
failure used to abort the process ("terminate called without an active
exception")."""

from __future__ import annotations

import os
import resource
import subprocess
from pathlib import Path

import pytest
from support.callbacks import c_compiler
from support.child import child_env, run_child
from support.thread_faults import build_shim, run_with_thread_faults

UNDER_ASAN = bool(os.environ.get("MJREFRESH_UNDER_ASAN"))
ASAN_REASON = (
    "AddressSanitizer's allocator aborts the process when an address-space limit refuses "
    "an allocation (by design); the plain build runs this test"
)

CHECK = """
import os, numpy as np, mjrefresh
from support.oracle import forward_rows
from support.states import random_states
m = mjrefresh.models.quadruped()
st = random_states(m, 8, seed=1)
want = forward_rows(m, st).xpos[:, m.body("base").id]
def threads():
    return len(os.listdir("/proc/self/task"))
def threads_settled(expected, timeout=5.0):
    # A joined thread leaves /proc/self/task a moment after pthread_join
    # returns: the kernel wakes the joiner when the exiting thread clears its
    # tid, before the thread is reaped. A leaked thread stays past the timeout.
    import time
    end = time.monotonic() + timeout
    while (n := threads()) != expected and time.monotonic() < end:
        time.sleep(0.01)
    return n
def refresh_ok(r):
    out = r.outputs(8)
    r.refresh(np.arange(8), st["qpos"], st["qvel"], out)
    assert np.allclose(out.body_pos[:, 0], want, rtol=0, atol=1e-12)
"""


def _run_with_stack_limit(code: str) -> subprocess.CompletedProcess[str]:
    # glibc sizes every new thread's stack from RLIMIT_STACK at start-up; a
    # 1 TiB limit makes each thread's stack mapping fail (EAGAIN). OpenBLAS
    # would fail to start its own threads at import: one thread.
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_STACK, (1 << 40, resource.RLIM_INFINITY))

    env = child_env(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    return run_child(code, env=env, preexec_fn=limit)


def test_refused_threads_raise_and_leave_nothing_running():
    res = _run_with_stack_limit(
        CHECK
        + """
before = threads()
try:
    mjrefresh.Refresher(m, bodies=("base",), num_threads=3)
except RuntimeError as exc:
    print("RuntimeError:", exc)
assert threads_settled(before) == before, (before, threads())
refresh_ok(mjrefresh.Refresher(m, bodies=("base",), num_threads=1))  # no worker needed
print("survived")
"""
    )
    assert res.returncode == 0, res.stderr
    assert (
        "RuntimeError: num_threads: could not start worker thread 1 of 2 (num_threads=3, the "
        "calling thread included): Resource temporarily unavailable" in res.stdout
    ), res.stdout
    assert "pass a smaller num_threads" in res.stdout and "survived" in res.stdout


@pytest.mark.skipif(UNDER_ASAN, reason=ASAN_REASON)
def test_many_threads_under_an_address_space_limit_raise():
    res = run_child(
        CHECK
        + """
import resource
before = threads()
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
try:
    mjrefresh.Refresher(m, bodies=("base",), num_threads=400)
except RuntimeError as exc:
    print("RuntimeError:", exc)
assert threads_settled(before) == before, (before, threads())
refresh_ok(mjrefresh.Refresher(m, bodies=("base",), num_threads=2))
print("survived")
"""
    )
    assert res.returncode == 0, res.stderr
    assert "RuntimeError: num_threads: could not start worker thread" in res.stdout, res.stdout
    assert "of 399 (num_threads=400" in res.stdout and "survived" in res.stdout


@pytest.fixture(scope="module")
def shim(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cc = c_compiler()
    if cc is None:
        pytest.skip("no C compiler to build the thread-creation shim")
    return build_shim(cc, tmp_path_factory.mktemp("shim"))


def test_the_third_refused_worker_unwinds_the_two_started(shim):
    res = run_with_thread_faults(
        shim,
        CHECK
        + """
before = threads()
refuse_threads_after(2)
try:
    mjrefresh.Refresher(m, bodies=("base",), num_threads=4)
except RuntimeError as exc:
    print("RuntimeError:", exc)
refuse_threads_after(-1)
assert threads_settled(before) == before, (before, threads())
refresh_ok(mjrefresh.Refresher(m, bodies=("base",), num_threads=4))
print("survived")
""",
    )
    assert res.returncode == 0, res.stderr
    assert "could not start worker thread 3 of 3 (num_threads=4" in res.stdout, res.stdout
    assert "survived" in res.stdout


def test_forked_child_refused_new_workers_refreshes_on_fewer(shim):
    # A forked child restarts the parent's workers on its first call; the
    # ones the system refuses are dropped and the rows shared by the rest.
    res = run_with_thread_faults(
        shim,
        CHECK
        + """
r = mjrefresh.Refresher(m, bodies=("base",), num_threads=4)
refresh_ok(r)
pid = os.fork()
if pid == 0:
    refuse_threads_after(1)
    try:
        refresh_ok(r)
        assert threads() == 2, threads()  # one worker started, two refused
    except BaseException as exc:
        print("child failed:", type(exc).__name__, exc, flush=True)
        os._exit(1)
    os._exit(0)
_, status = os.waitpid(pid, 0)
assert os.waitstatus_to_exitcode(status) == 0, status
refresh_ok(r)
print("survived")
""",
    )
    assert res.returncode == 0, (res.stdout, res.stderr)
    assert "survived" in res.stdout
