"""``cpu_ids``: worker k runs on ``cpu_ids[k % len(cpu_ids)]`` for its life;
the calling thread (participant 0) runs on ``cpu_ids[0]`` during each call
and gets its own affinity back when the call returns. Observed from another
thread while the call runs (the kernel releases the GIL)."""

from __future__ import annotations

import os
import threading
import time

import numpy as np
import pytest

import mjrefresh

CPUS = sorted(os.sched_getaffinity(0))
pytestmark = pytest.mark.skipif(len(CPUS) < 2, reason="needs two CPUs in this process's set")


def test_the_calling_thread_is_pinned_during_a_call_and_restored_after():
    m = mjrefresh.models.quadruped()
    n = 20_000
    qpos, qvel = np.tile(m.qpos0, (n, 1)), np.zeros((n, m.nv))
    target = CPUS[-1]
    before_workers = set(os.listdir("/proc/self/task"))
    r = mjrefresh.Refresher(m, sensor_ranges=[(68, 328)], num_threads=2, cpu_ids=[target])
    workers = set(os.listdir("/proc/self/task")) - before_workers
    out = r.outputs(n)
    seen: set[frozenset[int]] = set()
    tid: list[int] = []
    restored: list[bool] = []
    done = threading.Event()

    def caller() -> None:
        tid.append(threading.get_native_id())
        own = os.sched_getaffinity(0)
        try:
            for _ in range(20):
                r.refresh(np.arange(n), qpos, qvel, out)
                restored.append(os.sched_getaffinity(0) == own)
        finally:
            done.set()

    t = threading.Thread(target=caller)
    t.start()
    while not tid:
        time.sleep(0.001)
    while not done.is_set():
        try:
            seen.add(frozenset(os.sched_getaffinity(tid[0])))
        except OSError:  # the thread has just ended
            break
    t.join()
    assert len(workers) == 1
    assert all(os.sched_getaffinity(int(w)) == {target} for w in workers)
    r.close()
    assert restored == [True] * 20  # its own affinity back after each call
    assert frozenset({target}) in seen, seen  # pinned while inside a call
