"""bind_mjbatch and the refresh_sensor_ranges drop-in, against a real
mjbatch-uni Batch (skipped where mjbatch-uni is not installable, e.g. with
MuJoCo 4.0: it pins mujoco==3.11.0)."""

from __future__ import annotations

import copy
import threading

import mujoco
import numpy as np
import pytest
from support.backends import (
    MJBATCH_MISSING,
    batch_states,
    declared,
    make_mjbatch,
    other_model_message,
    randomize_batch,
)
from support.checks import ATOL, assert_reads_equal_forward
from support.models import FREE_BODY_XML
from support.models import LEGGED_ACC_SENSORS as ACC_SENSORS
from support.oracle import expected_outputs, forward_with_model_fields
from support.sensors import sensor_cols, tracked_sensors
from support.threads import run_on_threads

import mjrefresh

mjbatch = pytest.importorskip("mjbatch", reason=MJBATCH_MISSING)

N = 6
# Sensors mjbatch-uni 0.2.5's own refresh gets wrong (stages it does not run,
# a stale subtree-velocity flag): the drop-in is compared with it elsewhere.
MJBATCH_WRONG = (
    "spring_len",
    "spring_vel",
    "pull_pos",
    "pull_vel",
    "base_subtree_vel",
    "base_angmom",
)


@pytest.fixture()
def batch(legged_model):
    return make_mjbatch(legged_model, N, seed=7)


def step(batch, rng, nstep: int = 3) -> None:
    batch.bind("ctrl")[:] = rng.uniform(-1, 1, size=batch.bind("ctrl").shape)
    batch.step(nstep=nstep)


# ------------------------------------------------------------- bind_mjbatch
def test_bind_mjbatch_writes_the_batch_sensordata_in_place(legged_model, legged_refresher, batch):
    # (reads after steps and partial resets: test_backends_common.py)
    cache = mjrefresh.bind_mjbatch(batch, legged_refresher)
    assert np.shares_memory(cache.storage.sensordata, batch.bind("sensordata"))


def test_bind_mjbatch_sensordata_only_mark_fresh_is_free(legged_model, batch):
    with mjrefresh.Refresher(
        legged_model, sensors=tracked_sensors(legged_model), num_threads=2
    ) as r:
        cache = mjrefresh.bind_mjbatch(batch, r)
        cache.refresh_dirty_rows()
        randomize_batch(batch, legged_model, seed=3, rows=[2])
        batch.forward(np.array([2]))
        cache.mark_fresh([2])
        cache.reset_stats()
        exp = expected_outputs(legged_model, batch_states(batch), rows=[2])
        s = legged_model.sensor("foot_linvel_w")
        np.testing.assert_allclose(
            cache.sensor("foot_linvel_w", env_ids=[2]),
            exp["sensordata"][:, s.adr[0] : s.adr[0] + 3],
            rtol=0,
            atol=ATOL,
        )
        assert cache.stats.native_calls == 0


def test_bind_mjbatch_frozen_inside_step_callback(legged_model, legged_refresher, batch):
    cache = mjrefresh.bind_mjbatch(batch, legged_refresher)
    cache.refresh_dirty_rows()
    cached = cache.body_pos().copy()
    seen = []

    def callback(k, state_rows, ctrl):
        ctrl[:] = 0.3
        with cache.frozen():  # the backend's own substep window
            seen.append(cache.body_pos().copy())
            cache.mark_stepped([1])

    cache.reset_stats()
    batch.step(nstep=3, callback=callback)
    assert len(seen) == 3 and all(np.array_equal(s, cached) for s in seen)
    assert cache.stats.native_calls == 0
    np.testing.assert_array_equal(cache.dirty, [False, True, False, False, False, False])
    cache.mark_stepped()
    assert cache.num_dirty == N
    exp = assert_reads_equal_forward(cache, legged_model, batch_states(batch))
    cols = sensor_cols(legged_model, tracked_sensors(legged_model))
    cache.refresh_dirty_rows()
    np.testing.assert_allclose(
        batch.bind("sensordata")[:, cols], exp["sensordata"][:, cols], rtol=0, atol=ATOL
    )


def test_bind_mjbatch_float32_sensordata(legged_model):
    b = mjbatch.Batch(legged_model, 3, num_threads=1)
    sd32 = b.bind("sensordata", np.float32)
    randomize_batch(b, legged_model, seed=5)
    b.forward()
    with mjrefresh.Refresher(
        legged_model, sensors=tracked_sensors(legged_model), num_threads=1
    ) as r:
        cache = mjrefresh.bind_mjbatch(b, r)
        assert cache.storage.sensordata.dtype == np.float32
        b.step(nstep=2)
        cache.mark_stepped()
        cache.refresh_dirty_rows()
        exp = expected_outputs(legged_model, batch_states(b))
        cols = sensor_cols(legged_model, tracked_sensors(legged_model))
        np.testing.assert_allclose(sd32[:, cols], exp["sensordata"][:, cols], rtol=1e-5, atol=1e-5)


def _float32_batch(model, n, seed):
    """A batch bound as unisim binds it by default: state, controls and
    sensordata as float32 views, random states written through them."""
    b = mjbatch.Batch(model, n, num_threads=2)
    names = ("time", "qpos", "qvel", "mocap_pos", "mocap_quat", "ctrl", "sensordata")
    views = {name: b.bind(name, np.float32) for name in names}
    rng = np.random.default_rng(seed)
    views["qpos"][:] = model.qpos0 + rng.normal(scale=0.3, size=views["qpos"].shape)
    views["qvel"][:] = rng.normal(size=views["qvel"].shape)
    b.forward()  # applies the float32 writes to the state rows
    return b, views


def _float64_states(b):
    """The batch's native float64 state rows, per component (mjSTATE_INTEGRATION)."""
    views = mjrefresh.state_views(b.model, b.bind("state"), mujoco.mjtState.mjSTATE_INTEGRATION)
    return {k: v.copy() for k, v in views.items()}


def test_bind_mjbatch_reads_a_float32_bound_batch_from_its_state_rows(legged_model):
    # unisim's default: every view float32. The state is read from the
    # native float64 rows; refreshed columns go where the backend reads them.
    b, views = _float32_batch(legged_model, 5, seed=6)
    names = tracked_sensors(legged_model)
    with mjrefresh.Refresher(legged_model, bodies=["base", "foot"], sensors=names) as r:
        cache = mjrefresh.bind_mjbatch(b, r)
        assert cache.storage.sensordata.dtype == np.float32
        assert np.shares_memory(cache.storage.sensordata, views["sensordata"])
        assert np.shares_memory(cache._inputs["qpos"], b.bind("state"))
        views["ctrl"][:] = 0.3
        b.step(nstep=3)
        cache.mark_stepped()
        pos = cache.body_pos("foot")
        exp = expected_outputs(legged_model, _float64_states(b), ["base", "foot"])
        np.testing.assert_allclose(pos, exp["body_pos"][:, 1], rtol=0, atol=1e-12)
        cols = sensor_cols(legged_model, names)
        np.testing.assert_allclose(
            views["sensordata"][:, cols], exp["sensordata"][:, cols], rtol=2e-7, atol=1e-6
        )


def test_drop_in_refreshes_a_float32_bound_batch(legged_model):
    b, views = _float32_batch(legged_model, 4, seed=8)
    views["ctrl"][:] = -0.2
    b.step(nstep=2)
    cols = sensor_cols(legged_model, tracked_sensors(legged_model))
    lo, hi = int(cols.min()), int(cols.max()) + 1
    with mjrefresh.MjbatchSensorRefresher(b, num_threads=2) as d:
        d.refresh_sensor_ranges(None, [lo, hi])
    exp = expected_outputs(legged_model, _float64_states(b))["sensordata"]
    np.testing.assert_allclose(views["sensordata"][:, cols], exp[:, cols], rtol=2e-7, atol=1e-6)


def test_bind_mjbatch_errors(legged_model, legged_refresher, batch):
    with pytest.raises(TypeError, match="batch: expected mjbatch.Batch, got list"):
        mjrefresh.bind_mjbatch([], legged_refresher)
    with pytest.raises(TypeError, match="refresher: expected mjrefresh.Refresher, got NoneType"):
        mjrefresh.bind_mjbatch(batch, None)
    other = mujoco.MjModel.from_xml_string(FREE_BODY_XML)
    with mjrefresh.Refresher(other, bodies=[1], num_threads=1) as r:
        with pytest.raises(
            ValueError,
            match=r"batch: its model does not match the refresher's model \(expected nq=7, got nq=13\)",  # noqa: E501
        ):
            mjrefresh.bind_mjbatch(batch, r)
    with pytest.raises(
        TypeError, match=r"^qpos: bind_mjbatch reads it from the batch; do not pass it as well$"
    ):
        mjrefresh.bind_mjbatch(batch, legged_refresher, qpos=np.zeros((batch.num_sims, 13)))


# ---------------------------------------------------------------- drop-in
def test_drop_in_equals_mj_forward_and_mjbatch_where_it_is_right(legged_model, batch):
    rng = np.random.default_rng(11)
    sd = batch.bind("sensordata")
    full = (0, legged_model.nsensordata)
    acc = sensor_cols(legged_model, ACC_SENSORS)
    tracked = sensor_cols(legged_model, tracked_sensors(legged_model))
    right = sensor_cols(
        legged_model, [s for s in tracked_sensors(legged_model) if s not in MJBATCH_WRONG]
    )
    with mjrefresh.MjbatchSensorRefresher(batch, num_threads=2) as drop_in:
        for _ in range(3):
            step(batch, rng)
            after_step = sd.copy()
            batch.refresh_sensor_ranges(None, full)  # mjbatch-uni's own
            theirs = sd.copy()
            sd[:] = after_step
            drop_in.refresh_sensor_ranges(None, full)
            exp = expected_outputs(legged_model, batch_states(batch))["sensordata"]
            np.testing.assert_allclose(sd[:, tracked], exp[:, tracked], rtol=0, atol=ATOL)
            np.testing.assert_array_equal(sd[:, acc], after_step[:, acc])  # untouched
            np.testing.assert_allclose(sd[:, right], theirs[:, right], rtol=0, atol=ATOL)
            np.testing.assert_allclose(theirs[:, right], exp[:, right], rtol=0, atol=ATOL)
        # what mjbatch-uni gets wrong and the drop-in gets right
        wrong = sensor_cols(legged_model, MJBATCH_WRONG)
        assert np.abs(theirs[:, wrong] - exp[:, wrong]).max() > 1e-6


def test_drop_in_rows_and_ranges_are_respected(legged_model, batch):
    rng = np.random.default_rng(12)
    sd = batch.bind("sensordata")
    step(batch, rng)
    after_step = sd.copy()
    foot = legged_model.sensor("foot_pos_w")
    gyro = legged_model.sensor("imu_gyro")
    ranges = [foot.adr[0], foot.adr[0] + 3, gyro.adr[0], gyro.adr[0] + 3]
    mask = np.array([True, False, True, False, False, True])
    with mjrefresh.MjbatchSensorRefresher(batch, num_threads=1) as drop_in:
        drop_in.refresh_sensor_ranges(mask, ranges)
        exp = expected_outputs(legged_model, batch_states(batch))["sensordata"]
        cols = np.r_[foot.adr[0] : foot.adr[0] + 3, gyro.adr[0] : gyro.adr[0] + 3]
        rows = np.flatnonzero(mask)
        np.testing.assert_allclose(
            sd[np.ix_(rows, cols)], exp[np.ix_(rows, cols)], rtol=0, atol=ATOL
        )
        others = np.setdiff1d(np.arange(legged_model.nsensordata), cols)
        np.testing.assert_array_equal(sd[:, others], after_step[:, others])
        np.testing.assert_array_equal(sd[~mask], after_step[~mask])
        # int ids (int32 too), one range, a range of only acceleration sensors (no-op)
        drop_in.refresh_sensor_ranges(np.array([1, 3], dtype=np.int32), ranges)
        drop_in.refresh_sensor_range(np.array([4]), (foot.adr[0], foot.adr[0] + 3))
        np.testing.assert_allclose(
            sd[[1, 3, 4]][:, cols[:3]], exp[[1, 3, 4]][:, cols[:3]], rtol=0, atol=ATOL
        )
        touch = legged_model.sensor("foot_touch")
        before = sd.copy()
        drop_in.refresh_sensor_ranges(None, (touch.adr[0], touch.adr[0] + 1))
        np.testing.assert_array_equal(sd, before)
        drop_in.refresh_sensor_ranges(np.array([], dtype=np.int64), ranges)


def test_drop_in_errors(legged_model, batch):
    with mjrefresh.MjbatchSensorRefresher(batch, num_threads=1) as drop_in:
        with pytest.raises(
            ValueError,
            match="sensor_ranges: expected .start, stop. pairs as a flat sequence of ints, got 3 values",  # noqa: E501
        ):
            drop_in.refresh_sensor_ranges(None, (0, 3, 4))
        with pytest.raises(
            ValueError,
            match=r"sensor_ranges: expected 0 <= start < stop <= 48 \(nsensordata\), got \(3, 49\)",
        ):
            drop_in.refresh_sensor_ranges(None, (0, 3, 3, 49))
        with pytest.raises(
            ValueError, match="sensor_ranges: expected .start, stop. pairs .*got None"
        ):
            drop_in.refresh_sensor_ranges(np.array([0]))
        with pytest.raises(TypeError, match="sensor_ranges: expected a flat sequence of ints"):
            drop_in.refresh_sensor_ranges(None, ((0, 3),))
        with pytest.raises(
            ValueError, match=r"ids: expected sorted unique ids in \[0, 6\), got \[2, 1\]"
        ):
            drop_in.refresh_sensor_ranges(np.array([2, 1]), (0, 3))
        with pytest.raises(
            ValueError, match="ids: expected a bool mask of length 6 .num_sims., got length 2"
        ):
            drop_in.refresh_sensor_ranges(np.array([True, False]), (0, 3))
        with pytest.raises(
            ValueError, match="ids: expected int32, int64 or a bool mask, got dtype float64"
        ):
            drop_in.refresh_sensor_ranges(np.array([1.0]), (0, 3))
        with pytest.raises(ValueError, match="sensor_range: expected a .start, stop. pair"):
            drop_in.refresh_sensor_range(None, (0, 3, 4, 5))
    with pytest.raises(TypeError, match="batch: expected mjbatch.Batch"):
        mjrefresh.MjbatchSensorRefresher(object())


def test_drop_in_refuses_to_refresh_once_closed(legged_model, batch):
    # It planned a new refresher (new worker threads nothing closed) instead.
    with mjrefresh.MjbatchSensorRefresher(batch, num_threads=2) as drop_in:
        drop_in.refresh_sensor_ranges(None, (0, 3))
    threads = threading.active_count()
    for call in (
        lambda: drop_in.refresh_sensor_ranges(None, (0, 3)),
        lambda: drop_in.refresh_sensor_range(np.array([1]), (3, 6)),
    ):
        with pytest.raises(RuntimeError, match="^MjbatchSensorRefresher is closed$"):
            call()
    assert drop_in.planned_ranges == [] and threading.active_count() == threads
    drop_in.close()  # idempotent


def test_drop_in_takes_ids_and_numbers_as_mjbatch_does(legged_model, batch):
    rng = np.random.default_rng(13)
    step(batch, rng)
    sd = batch.bind("sensordata")
    tracked = sensor_cols(legged_model, tracked_sensors(legged_model))
    exp = expected_outputs(legged_model, batch_states(batch))["sensordata"]
    # ids stored in row 0's columns the call writes (refused as "rows:
    # overlaps out.sensordata", arguments the caller never passed): mjbatch-uni
    # copies them, so does the drop-in
    c = tracked[0]
    assert tracked[1] == c + 1
    ids = sd.view(np.int64)[0, c : c + 2]  # a view into the sensordata
    ids[:] = [1, 4]
    with mjrefresh.MjbatchSensorRefresher(batch, num_threads=2, max_plans=np.int64(2)) as drop_in:
        drop_in.refresh_sensor_ranges(ids, (0, legged_model.nsensordata))
        np.testing.assert_allclose(sd[[1, 4]][:, tracked], exp[[1, 4]][:, tracked], atol=ATOL)
        with pytest.raises(
            ValueError,
            match=rf"^sensor_ranges: expected 0 <= start < stop <= {legged_model.nsensordata} "
            rf"\(nsensordata\), got \(0, {2**70}\) at position 0$",
        ):
            drop_in.refresh_sensor_ranges(None, (0, 2**70))


def test_drop_in_rejects_sensors_it_cannot_compute():
    m = mujoco.MjModel.from_xml_string(
        """<mujoco><worldbody><body><joint name="j" limited="true" range="-1 1"/>
        <geom size=".1"/></body></worldbody>
        <sensor><jointpos joint="j"/><user name="lim" dim="1" needstage="pos"/></sensor></mujoco>"""
    )
    b = mjbatch.Batch(m, 2, num_threads=1)
    with mjrefresh.MjbatchSensorRefresher(b, num_threads=1) as drop_in:
        drop_in.refresh_sensor_ranges(None, (0, 1))
        with pytest.raises(mjrefresh.PlanError, match="sensor 'lim' .user. cannot be refreshed"):
            drop_in.refresh_sensor_ranges(None, (0, 2))


def test_bind_mjbatch_reads_time_and_state_views_in_place():
    m = mujoco.MjModel.from_xml_string(
        """<mujoco><worldbody><body><joint name="j" type="slide"/><geom size=".1"/></body>
        </worldbody><sensor><clock name="t"/><jointpos name="p" joint="j"/></sensor></mujoco>"""
    )
    b = mjbatch.Batch(m, 3, num_threads=1)
    with mjrefresh.Refresher(m, sensors=["t", "p"], num_threads=1) as r:
        cache = mjrefresh.bind_mjbatch(b, r)
        b.bind("qvel")[:] = [[1.0], [2.0], [3.0]]
        b.step(nstep=4)
        cache.mark_stepped()
        np.testing.assert_array_equal(cache.sensor("t")[:, 0], b.bind("time"))
        np.testing.assert_array_equal(cache.sensor("p")[:, 0], b.bind("qpos")[:, 0])
        b.bind("qpos")[1] = 0.25  # a state write without a forward
        cache.mark_dirty([1])
        assert cache.sensor("p", env_ids=1)[0] == 0.25
        with mjrefresh.MjbatchSensorRefresher(b, num_threads=1) as drop_in:
            b.step()
            drop_in.refresh_sensor_ranges(None, (0, 2))
            sd = b.bind("sensordata")
            np.testing.assert_array_equal(sd[:, 0], b.bind("time"))
            np.testing.assert_array_equal(sd[:, 1], b.bind("qpos")[:, 0])


def test_bindings_leave_the_batch_views_to_the_backend(legged_model, legged_refresher):
    # Neither binds qpos/qvel/time/mocap: a backend binding them as float32
    # afterwards (as unisim does) still can.
    b = mjbatch.Batch(legged_model, N, num_threads=1)
    with mjrefresh.MjbatchSensorRefresher(b, num_threads=1) as drop_in:
        mjrefresh.bind_mjbatch(b, legged_refresher)
        drop_in.refresh_sensor_ranges(None, (0, 3))
        for name in ("qpos", "qvel", "time", "mocap_pos", "mocap_quat"):
            assert b.bind(name, np.float32).dtype == np.float32


def test_bind_mjbatch_refuses_a_batch_of_another_model(legged_model, legged_refresher):
    other = copy.copy(legged_model)
    other.jnt_axis[2] = (0.0, 0.6, 0.8)  # same sizes, another hinge axis
    with pytest.raises(
        ValueError,
        match=other_model_message("jnt_axis", fix=declared("jnt_axis")),
    ):
        mjrefresh.bind_mjbatch(mjbatch.Batch(other, 2, num_threads=1), legged_refresher)


def test_bind_mjbatch_refuses_a_model_field_expanded_as_float32(legged_model):
    b = mjbatch.Batch(legged_model, 2, num_threads=1)
    b.expand("body_pos", np.float32)
    with mjrefresh.Refresher(legged_model, bodies=["foot"], model_fields=("body_pos",)) as r:
        with pytest.raises(
            ValueError,
            match=r"^model_fields: the batch has body_pos expanded in another dtype \(.*\); a "
            r"refresh reads float64 values, and mjbatch-uni keeps the first dtype a field is "
            r"expanded in: expand and write it as float64 \(batch.expand\('body_pos'\) before "
            r"anything expands it as float32\)$",
        ):
            mjrefresh.bind_mjbatch(b, r)
    # the fix the message gives works
    b = mjbatch.Batch(legged_model, 2, num_threads=1)
    b.expand("body_pos")
    with mjrefresh.Refresher(legged_model, bodies=["foot"], model_fields=("body_pos",)) as r:
        assert mjrefresh.bind_mjbatch(b, r).refresh_dirty_rows() == 2


def test_drop_in_checks_its_threads_at_once(legged_model, batch):
    with pytest.raises(ValueError, match=r"^num_threads: expected >= 0"):
        mjrefresh.MjbatchSensorRefresher(batch, num_threads=-1)
    with pytest.raises(TypeError, match=r"^num_threads: expected an int, got float$"):
        mjrefresh.MjbatchSensorRefresher(batch, num_threads=1.5)
    with pytest.raises(ValueError, match=r"^cpu_ids: cpu 100000 is not in this process's CPU"):
        mjrefresh.MjbatchSensorRefresher(batch, cpu_ids=[100000])
    with (
        mjrefresh.MjbatchSensorRefresher(batch) as drop_in,
        pytest.raises(
            TypeError,
            match=r"^MjbatchSensorRefresher cannot be copied or pickled: .*; make another",
        ),
    ):
        copy.copy(drop_in)


def test_drop_in_from_several_threads(legged_model, batch):
    # mjbatch-uni's own refresh_sensor_ranges may be called from any thread.
    # More range sets than max_plans, from two threads: each call evicts
    # plans the other may be about to run; every call must still succeed and
    # the values equal mj_forward.
    step(batch, np.random.default_rng(13))
    names = tracked_sensors(legged_model)[:6]
    ranges = [(int(s.adr[0]), int(s.adr[0] + s.dim[0])) for s in map(legged_model.sensor, names)]
    sd = batch.bind("sensordata")
    sd[:] = 0
    with mjrefresh.MjbatchSensorRefresher(batch, num_threads=2, max_plans=2) as drop_in:

        def work(k: int) -> None:
            for i in range(300):
                drop_in.refresh_sensor_ranges(None, ranges[(i * (1 + k)) % len(ranges)])

        assert run_on_threads(work, 2) == []
        assert len(drop_in.planned_ranges) == 2
    exp = expected_outputs(legged_model, batch_states(batch))["sensordata"]
    cols = sensor_cols(legged_model, names)
    np.testing.assert_allclose(sd[:, cols], exp[:, cols], rtol=0, atol=ATOL)


def test_drop_in_reads_the_model_fields_it_is_told_the_batch_expanded(legged_model, batch):
    # mjbatch-uni cannot tell which fields a batch expanded: the drop-in reads
    # those named in model_fields from batch.expand (live values), per row.
    body_pos = batch.expand("body_pos")
    body_pos[:, 2, 2] += np.linspace(0, 0.06, batch.num_sims)
    step(batch, np.random.default_rng(17))
    names = tracked_sensors(legged_model)[:4]
    ranges = [(int(s.adr[0]), int(s.adr[0] + s.dim[0])) for s in map(legged_model.sensor, names)]
    states = batch_states(batch)
    sd = batch.bind("sensordata")
    cols = sensor_cols(legged_model, names)
    with mjrefresh.MjbatchSensorRefresher(
        batch, num_threads=2, model_fields=["body_pos"]
    ) as drop_in:
        sd[:] = 0
        drop_in.refresh_sensor_ranges(None, [v for r in ranges for v in r])
        for i in range(batch.num_sims):
            _, d, _ = forward_with_model_fields(legged_model, states, {"body_pos": body_pos}, i)
            np.testing.assert_allclose(sd[i, cols], d.sensordata[cols], rtol=0, atol=ATOL)
    with pytest.raises(ValueError, match=r"^model_fields: 'body_poz' is not an mjModel field; "):
        mjrefresh.MjbatchSensorRefresher(batch, model_fields=["body_poz"])
