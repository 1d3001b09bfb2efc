"""Threads, serialised calls, close(), fork(), MuJoCo errors on workers and
the build/run-time MuJoCo version guard."""

from __future__ import annotations

import copy
import os
import pickle
import re
import threading

import mujoco
import numpy as np
import pytest
from support.child import run_child
from support.models import THREE_LINK_XML as XML
from support.oracle import forward_rows
from support.states import random_states
from support.threads import run_on_threads

import mjrefresh
from mjrefresh import _native


# Comparisons with mj_forward bit for bit name engine="exact" (auto would
# pick the fast engine, which agrees to 1e-12/1e-10: test_fast_engine.py).
@pytest.fixture(scope="module")
def m():
    return mujoco.MjModel.from_xml_string(XML)


@pytest.fixture(scope="module")
def states(m):
    return random_states(m, 300, seed=3)


@pytest.fixture(scope="module")
def ref(m, states):
    return forward_rows(m, states)


def test_calls_from_several_python_threads_are_serialised(m, states, ref):
    r = mjrefresh.Refresher(
        m, bodies=["c"], sensor_ranges=[(0, m.nsensordata)], num_threads=2, engine="exact"
    )

    def worker(seed):
        rng = np.random.default_rng(seed)
        out = r.outputs(300)
        for _ in range(20):
            rows = np.flatnonzero(rng.random(300) < 0.5)
            r.refresh(rows, states["qpos"], states["qvel"], out)
            np.testing.assert_array_equal(out.sensordata[rows], ref.sensordata[rows])

    errors = run_on_threads(worker, 4)
    assert not errors, errors


def test_several_refreshers_run_concurrently(m, states, ref):
    rs = [
        mjrefresh.Refresher(m, sensor_ranges=[(0, m.nsensordata)], num_threads=2, engine="exact")
        for _ in range(3)
    ]
    outs = [r.outputs(300) for r in rs]
    threads = [
        threading.Thread(target=r.refresh, args=(np.arange(300), states["qpos"], states["qvel"], o))
        for r, o in zip(rs, outs, strict=True)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for o in outs:
        np.testing.assert_array_equal(o.sensordata, ref.sensordata)


def test_close_and_context_manager(m, states):
    with mjrefresh.Refresher(m, bodies=["c"], num_threads=2) as r:
        out = r.outputs(300)
        r.refresh(np.arange(300), states["qpos"], states["qvel"], out)
    assert r.closed
    with pytest.raises(RuntimeError, match="Refresher is closed"):
        r.refresh(np.arange(300), states["qpos"], states["qvel"], out)
    r.close()  # idempotent
    assert "closed" in repr(r)


def test_model_can_be_deleted_after_construction(states, ref):
    model = mujoco.MjModel.from_xml_string(XML)
    r = mjrefresh.Refresher(
        model, sensor_ranges=[(0, model.nsensordata)], num_threads=2, engine="exact"
    )
    model.body_pos[2] += 1.0  # edits after construction do not leak into the copy
    del model
    out = r.outputs(300)
    r.refresh(np.arange(300), states["qpos"], states["qvel"], out)
    np.testing.assert_array_equal(out.sensordata, ref.sensordata)


def test_fork_child_can_refresh(m, states, ref):
    r = mjrefresh.Refresher(m, sensor_ranges=[(0, m.nsensordata)], num_threads=2, engine="exact")
    out = r.outputs(300)
    r.refresh(np.arange(300), states["qpos"], states["qvel"], out)  # workers exist in the parent
    pid = os.fork()
    if pid == 0:  # child: the parent's worker threads do not exist here
        code = 1
        try:
            child_out = r.outputs(300)
            r.refresh(np.arange(300), states["qpos"], states["qvel"], child_out)
            code = 0 if np.array_equal(child_out.sensordata, ref.sensordata) else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    r.refresh(np.arange(300), states["qpos"], states["qvel"], out)  # parent still works
    np.testing.assert_array_equal(out.sensordata, ref.sensordata)


@pytest.mark.parametrize("num_threads", [1, 2, 7])
def test_mujoco_error_on_workers_becomes_refresh_error(num_threads, states):
    model = mujoco.MjModel.from_xml_string(XML)
    model.jnt_type[1] = 9  # corrupt joint type: mj_kinematics raises mju_error
    r = mjrefresh.Refresher(model, bodies=["c"], num_threads=num_threads)
    assert r.plan.engine == "exact"  # the fused kernels do not take a corrupted model
    out = r.outputs(300)
    out.body_pos.fill(-1.0)
    with pytest.raises(mujoco.FatalError, match="unknown joint type 9$") as theirs:
        mujoco.mj_kinematics(model, mujoco.MjData(model))
    with pytest.raises(
        mjrefresh.RefreshError,
        match=r"^MuJoCo error while refreshing row 3: "
        + re.escape(str(theirs.value))  # MuJoCo's own message ("mj_kinematics1: ...")
        + r" \(2 other rows also failed\)",
    ) as info:
        r.refresh(np.array([3, 50, 299]), states["qpos"], states["qvel"], out)
    assert info.value.rows == (3, 50, 299)
    assert (out.body_pos == -1.0).all()  # failing rows are left as they were
    # The process survived and the bindings' own error reporting still works.
    with pytest.raises(mujoco.FatalError, match="unknown joint type"):
        mujoco.mj_kinematics(model, mujoco.MjData(model))


def test_dirty_rows_stay_dirty_for_failed_rows(states):
    model = mujoco.MjModel.from_xml_string(XML)
    model.jnt_type[1] = 9
    r = mjrefresh.Refresher(model, bodies=["c"], num_threads=2)
    dirty = np.zeros(300, bool)
    dirty[[1, 2]] = True
    with pytest.raises(mjrefresh.RefreshError):
        r.refresh_dirty_rows(dirty, states["qpos"], states["qvel"], r.outputs(300))
    assert dirty[[1, 2]].all() and dirty.sum() == 2


def test_version_guard_message():
    with pytest.raises(
        ImportError,
        match=r"mjrefresh's native core was built for MuJoCo 3\.11\.0, "
        r"but this process runs MuJoCo 4\.0\.0\. Fix: install the MuJoCo it was built "
        r"for \(pip install mujoco==3\.11\.0\), or rebuild mjrefresh",
    ):
        _native.check_versions("3.11.0", "4.0.0")
    _native.check_versions(mujoco.__version__, mujoco.__version__)
    assert mjrefresh.MUJOCO_BUILD_VERSION == mujoco.__version__


def test_ctrl_c_is_delivered_after_the_call_returns(m):
    import signal
    import time

    n = 60_000
    states = random_states(m, n, seed=8)
    r = mjrefresh.Refresher(m, sensor_ranges=[(0, m.nsensordata)], num_threads=2, engine="exact")
    out = r.outputs(n)
    out.sensordata.fill(np.nan)
    # Python keeps SIGINT ignored when it starts with it ignored, as in a
    # background job of a non-interactive shell (`bash .ci/run &`): give it
    # Python's own handler for this test.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    start = time.perf_counter()
    # The delay counts from just before the call: a Timer's own start (it
    # waits for its thread) took over 5 ms on a loaded host, and the signal
    # then interrupted the test before the call.
    fire = threading.Event()

    def interrupt() -> None:
        fire.wait()
        time.sleep(0.005)
        os.kill(os.getpid(), signal.SIGINT)

    timer = threading.Thread(target=interrupt)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            fire.set()
            r.refresh(np.arange(n), states["qpos"], states["qvel"], out)
            time.sleep(5)  # only reached if the call finished before the signal
    finally:
        timer.join()
        signal.signal(signal.SIGINT, previous)
    # The native call ran to completion: every row was written.
    assert not np.isnan(out.sensordata).any(), (
        f"call interrupted after {time.perf_counter() - start:.3f}s"
    )
    sample = {k: v[:50] for k, v in states.items()}
    np.testing.assert_array_equal(out.sensordata[:50], forward_rows(m, sample).sensordata)


def test_fork_while_another_thread_is_inside_a_call(m):
    # The child inherits the call lock held by the parent's busy thread; it
    # must recover instead of deadlocking.
    import time

    n = 20_000
    big = random_states(m, n, seed=12)
    reps = 40  # the busy thread spends about a second inside the native call
    qpos = np.tile(big["qpos"], (reps, 1))
    qvel = np.tile(big["qvel"], (reps, 1))
    r = mjrefresh.Refresher(m, sensor_ranges=[(0, m.nsensordata)], num_threads=2, engine="exact")
    out = r.outputs(n * reps)
    busy = threading.Thread(target=r.refresh, args=(np.arange(n * reps), qpos, qvel, out))
    busy.start()
    time.sleep(0.1)
    assert busy.is_alive()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            # memory_bytes took the call lock too (describe() prints it)
            assert r.memory_bytes > 0 and "memory:" in r.describe()
            small = {k: v[:20] for k, v in big.items()}
            o = r.outputs(20)
            r.refresh(np.arange(20), small["qpos"], small["qvel"], o)
            code = 0 if np.array_equal(o.sensordata, forward_rows(m, small).sensordata) else 2
        finally:
            os._exit(code)
    deadline = time.monotonic() + 20
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            pytest.fail("child deadlocked after fork")
        time.sleep(0.01)
    busy.join()
    assert os.waitstatus_to_exitcode(status) == 0


def test_small_calls_wake_only_the_threads_they_need(m, states, ref):
    r = mjrefresh.Refresher(m, sensor_ranges=[(0, m.nsensordata)], num_threads=7, engine="exact")
    out = r.outputs(300)
    per = r._core.min_rows_per_thread
    assert per == 16  # the exact engine (gyro, subtreeangmom)
    for count, expect in [(1, 1), (per, 1), (per + 1, 2), (3 * per, 3), (300, 7)]:
        rows = np.arange(count)
        r.refresh(rows, states["qpos"], states["qvel"], out)
        assert r._core.last_participants == expect, count
        np.testing.assert_array_equal(out.sensordata[rows], ref.sensordata[rows])


def test_a_mark_made_while_a_cache_refreshes_is_kept(m):
    # Python runs a signal handler when the native call returns; the cache
    # used to clear the rows' dirty flags after that, erasing a handler's
    # write-and-mark of row 0: later reads returned the old pose, with no
    # row dirty.
    import signal
    import time

    n = 60_000
    states = random_states(m, n, seed=21)
    qpos, qvel = states["qpos"].copy(), states["qvel"].copy()
    r = mjrefresh.Refresher(m, bodies=["c"], num_threads=2, engine="exact")
    cache = mjrefresh.bind_arrays(r, qpos, qvel)
    fired = []

    def write_and_mark(signum, frame):
        qpos[0] += 0.5
        cache.mark_dirty(0)
        fired.append(time.perf_counter())

    previous = signal.signal(signal.SIGALRM, write_and_mark)
    start = time.perf_counter()
    signal.setitimer(signal.ITIMER_REAL, 0.01)  # during the refresh of every row below
    try:
        cache.body_pos("c")
        while not fired:  # only if the refresh ended first
            time.sleep(0.01)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert cache.num_dirty == 1, f"handler ran {fired[0] - start:.3f}s into the read"
    want = forward_rows(m, {"qpos": qpos[:1], "qvel": qvel[:1]})
    np.testing.assert_array_equal(cache.body_pos("c")[0], want.xpos[0, r.plan.body_ids[0]])


@pytest.mark.parametrize("how", [copy.copy, copy.deepcopy, pickle.dumps])
def test_objects_owning_native_state_refuse_copies(m, states, how):
    # A shallow copy shared the native core and the dirty flags: closing the
    # copy closed the original, a mark on one was not seen by the other.
    r = mjrefresh.Refresher(m, bodies=["c"], num_threads=2)
    cache = mjrefresh.bind_arrays(r, states["qpos"], states["qvel"])
    bound = r.bind(states["qpos"], states["qvel"], r.outputs(len(states["qpos"])))
    for obj, instead in (
        (r, r"build another with Refresher\(model, \.\.\.\)"),
        (cache, r"bind another cache over the same arrays"),
        (bound, r"bind again with Refresher\.bind"),
    ):
        with pytest.raises(
            TypeError,
            match=rf"^{type(obj).__name__} cannot be copied or pickled: it owns native state "
            rf".*; {instead}",
        ):
            how(obj)
    assert cache.refresh_dirty_rows() == len(states["qpos"])  # the original still works
    r.close()


@pytest.mark.slow
def test_ctrl_c_while_arrays_are_checked_stays_a_keyboard_interrupt():
    # Python runs pending signal handlers inside PyObject_Str; the native
    # parser took array names through it and cleared the error, so a Ctrl-C
    # landing there became "ValueError: ?: unknown array" (about 1 in 10).
    result = run_child(
        """
        import os, signal, subprocess, time
        import numpy as np
        import mjrefresh

        class Interrupted(BaseException):
            pass

        stopping = False
        def interrupt(signum, frame):
            if not stopping:
                raise Interrupted

        signal.signal(signal.SIGINT, interrupt)
        m = mjrefresh.models.quadruped()
        qpos, qvel = np.tile(m.qpos0, (4, 1)), np.zeros((4, m.nv))
        r = mjrefresh.Refresher(m, bodies=("base",), sensor_ranges=[(68, 328)], num_threads=1)
        out, rows = r.outputs(4), np.arange(4)
        counts = {"ok": 0, "interrupted": 0}
        wrong = []
        sender = subprocess.Popen(
            ["bash", "-c", f"while kill -INT {os.getpid()}; do sleep 0.001; done"]
        )
        deadline = time.monotonic() + 3

        def calls():
            while time.monotonic() < deadline:
                try:
                    r.refresh(rows, qpos, qvel, out)
                    counts["ok"] += 1
                except Interrupted:
                    counts["interrupted"] += 1
                except ValueError as exc:
                    wrong.append(str(exc))

        while True:
            try:
                calls()
                stopping = True
                break
            except Interrupted:
                counts["interrupted"] += 1
        sender.kill()
        sender.wait()
        print(counts["ok"], counts["interrupted"], len(wrong), wrong[:2])
        """,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    ok, interrupted, wrong, examples = result.stdout.split(maxsplit=3)
    assert int(interrupted) > 100 and int(ok) > 100, result.stdout
    assert int(wrong) == 0, examples


def test_keyboard_interrupt_while_inputs_are_read_is_not_an_input_error(m, states):
    # A Ctrl-C lands inside whatever Python code a call runs: an input's
    # strides formatted for a message, a scalar time converted. It came
    # back as a TypeError about that input, and the interrupt was lost.
    class Strides(tuple):
        def __str__(self):
            raise KeyboardInterrupt

    class NumpyLike:  # an object with numpy's attributes, not an ndarray
        itemsize = 8
        flags = type("Flags", (), {"aligned": True})()

        def __init__(self, a):
            self.strides = Strides(a.strides)

    class Time:
        def __float__(self):
            raise KeyboardInterrupt

    n = len(states["qpos"])
    r = mjrefresh.Refresher(m, bodies=["c"], num_threads=1)
    clock = mjrefresh.Refresher(
        mujoco.MjModel.from_xml_string(
            '<mujoco><worldbody><body><joint/><geom size=".1"/></body></worldbody>'
            "<sensor><clock/></sensor></mujoco>"
        ),
        sensors=[0],
        num_threads=1,
    )
    with pytest.raises(KeyboardInterrupt):
        r.refresh(np.arange(n), NumpyLike(states["qpos"]), states["qvel"], r.outputs(n))
    with pytest.raises(KeyboardInterrupt):
        clock.refresh([0], np.zeros((1, 1)), np.zeros((1, 1)), clock.outputs(1), time=Time())
