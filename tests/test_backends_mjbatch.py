"""bind_mjbatch and the refresh_sensor_ranges drop-in, against a real
mjbatch-uni Batch (skipped where mjbatch-uni is not installable, e.g. with
MuJoCo 4.0: it pins mujoco==3.11.0)."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
from _cache_models import (
    ACC_SENSORS,
    BODIES,
    Reference,
    legged_model,
    random_state,
    sensor_cols,
    tracked_sensors,
)

import mjrefresh

mjbatch = pytest.importorskip(
    "mjbatch", reason="mjbatch-uni is not installed (pip install mjbatch-uni; needs mujoco 3.11)"
)

N = 6
ATOL = 1e-12
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


@pytest.fixture(scope="module")
def model() -> mujoco.MjModel:
    return legged_model()


@pytest.fixture(scope="module")
def refresher(model):
    r = mjrefresh.Refresher(
        model, bodies=BODIES, relative_to="base", sensors=tracked_sensors(model), num_threads=2
    )
    yield r
    r.close()


def randomize(batch, model, seed: int, rows=None) -> None:
    """Random states written through the bound state views, then forward."""
    rng = np.random.default_rng(seed)
    d = mujoco.MjData(model)
    qpos, qvel = batch.bind("qpos"), batch.bind("qvel")
    mpos, mquat = batch.bind("mocap_pos"), batch.bind("mocap_quat")
    rows = range(batch.num_sims) if rows is None else rows
    for i in rows:
        random_state(model, rng, d)
        qpos[i], qvel[i], mpos[i], mquat[i] = d.qpos, d.qvel, d.mocap_pos, d.mocap_quat


@pytest.fixture()
def batch(model):
    b = mjbatch.Batch(model, N, num_threads=2)
    b.bind("sensordata")
    randomize(b, model, seed=7)
    b.forward()
    return b


def state(batch) -> tuple:
    return tuple(batch.bind(n).copy() for n in ("qpos", "qvel", "mocap_pos", "mocap_quat", "time"))


def step(batch, rng, nstep: int = 3) -> None:
    batch.bind("ctrl")[:] = rng.uniform(-1, 1, size=batch.bind("ctrl").shape)
    batch.step(nstep=nstep)


def check_cache(cache, batch, model, rows=None) -> None:
    ref = Reference(model, BODIES, "base")
    exp = ref.rows(*state(batch), rows=rows)
    env_ids = None if rows is None else np.asarray(rows)
    for name, got in (
        ("body_pos", cache.body_pos_w(env_ids=env_ids)),
        ("body_quat", cache.body_quat_w(env_ids=env_ids)),
        ("body_linvel", cache.body_linvel_w(env_ids=env_ids)),
        ("body_angvel", cache.body_angvel_w(env_ids=env_ids)),
        ("body_pos_rel", cache.body_pos_b(env_ids=env_ids)),
        ("body_quat_rel", cache.body_quat_b(env_ids=env_ids)),
    ):
        np.testing.assert_allclose(got, exp[name], rtol=0, atol=ATOL, err_msg=name)
    cols = sensor_cols(model, tracked_sensors(model))
    cache.refresh_dirty_rows(env_ids)
    sd = batch.bind("sensordata")
    got = sd[:, cols] if rows is None else sd[np.asarray(rows)][:, cols]
    np.testing.assert_allclose(got, exp["sensordata"][:, cols], rtol=0, atol=ATOL)


# ------------------------------------------------------------- bind_mjbatch
def test_bind_mjbatch_reads_equal_mj_forward_after_steps(model, refresher, batch):
    cache = mjrefresh.bind_mjbatch(batch, refresher)
    sd = batch.bind("sensordata")
    # the cache reads the batch's state rows in place and writes its sensordata
    assert np.shares_memory(cache.storage.sensordata, sd)
    rng = np.random.default_rng(0)
    acc = sensor_cols(model, ACC_SENSORS)
    for _ in range(3):
        step(batch, rng)
        solved = sd[:, acc].copy()
        cache.mark_stepped()
        cache.reset_stats()
        check_cache(cache, batch, model)
        assert cache.stats.native_calls == 1 and cache.stats.rows_refreshed == N
        np.testing.assert_array_equal(sd[:, acc], solved)
        for name in ACC_SENSORS:  # readable through the cache, never refreshed
            s = model.sensor(name)
            np.testing.assert_array_equal(cache.sensor(name), sd[:, s.adr[0] : s.adr[0] + s.dim[0]])
    assert np.abs(solved).max() > 0


def test_bind_mjbatch_partial_reset_isolation(model, refresher, batch):
    cache = mjrefresh.bind_mjbatch(batch, refresher)
    rng = np.random.default_rng(1)
    step(batch, rng)
    cache.mark_stepped()
    cache.refresh_dirty_rows()
    before = {k: v.copy() for k, v in cache.storage.arrays().items()}
    reset = np.array([0, 4])
    batch.reset(reset)  # mj_resetData + mj_forward, sensordata copied out
    cache.mark_fresh(reset)
    keep = [1, 2, 3, 5]
    check_cache(cache, batch, model, rows=reset)
    for name, arr in cache.storage.arrays().items():
        np.testing.assert_array_equal(arr[keep], before[name][keep], err_msg=name)


def test_bind_mjbatch_sensordata_only_mark_fresh_is_free(model, batch):
    with mjrefresh.Refresher(model, sensors=tracked_sensors(model), num_threads=2) as r:
        cache = mjrefresh.bind_mjbatch(batch, r)
        cache.refresh_dirty_rows()
        randomize(batch, model, seed=3, rows=[2])
        batch.forward(np.array([2]))
        cache.mark_fresh([2])
        cache.reset_stats()
        ref = Reference(model, ())
        exp = ref.rows(*state(batch), rows=[2])
        s = model.sensor("foot_linvel_w")
        np.testing.assert_allclose(
            cache.sensor("foot_linvel_w", env_ids=[2]),
            exp["sensordata"][:, s.adr[0] : s.adr[0] + 3],
            rtol=0,
            atol=ATOL,
        )
        assert cache.stats.native_calls == 0


def test_bind_mjbatch_frozen_inside_step_callback(model, refresher, batch):
    cache = mjrefresh.bind_mjbatch(batch, refresher)
    cache.refresh_dirty_rows()
    cached = cache.body_pos_w().copy()
    seen = []

    def callback(k, state_rows, ctrl):
        ctrl[:] = 0.3
        with cache.frozen():  # the backend's own substep window
            seen.append(cache.body_pos_w().copy())
            cache.mark_stepped([1])

    cache.reset_stats()
    batch.step(nstep=3, callback=callback)
    assert len(seen) == 3 and all(np.array_equal(s, cached) for s in seen)
    assert cache.stats.native_calls == 0
    np.testing.assert_array_equal(cache.dirty, [False, True, False, False, False, False])
    cache.mark_stepped()
    assert cache.num_dirty == N
    check_cache(cache, batch, model)


def test_bind_mjbatch_float32_sensordata(model):
    b = mjbatch.Batch(model, 3, num_threads=1)
    sd32 = b.bind("sensordata", np.float32)
    randomize(b, model, seed=5)
    b.forward()
    with mjrefresh.Refresher(model, sensors=tracked_sensors(model), num_threads=1) as r:
        cache = mjrefresh.bind_mjbatch(b, r)
        assert cache.storage.sensordata.dtype == np.float32
        b.step(nstep=2)
        cache.mark_stepped()
        cache.refresh_dirty_rows()
        exp = Reference(model, ()).rows(*state(b))
        cols = sensor_cols(model, tracked_sensors(model))
        np.testing.assert_allclose(sd32[:, cols], exp["sensordata"][:, cols], rtol=1e-5, atol=1e-5)


def test_bind_mjbatch_errors(model, refresher, batch):
    with pytest.raises(TypeError, match="batch: expected mjbatch.Batch, got list"):
        mjrefresh.bind_mjbatch([], refresher)
    with pytest.raises(TypeError, match="refresher: expected mjrefresh.Refresher, got NoneType"):
        mjrefresh.bind_mjbatch(batch, None)
    other = mujoco.MjModel.from_xml_string(
        "<mujoco><worldbody><body><freejoint/><geom size='.1'/></body></worldbody></mujoco>"
    )
    with mjrefresh.Refresher(other, bodies=[1], num_threads=1) as r:
        with pytest.raises(
            ValueError,
            match=r"batch: its model does not match the refresher's model \(expected nq=7, got nq=13\)",  # noqa: E501
        ):
            mjrefresh.bind_mjbatch(batch, r)
    b = mjbatch.Batch(model, 2, num_threads=1)
    b.bind("qpos", np.float32)
    with pytest.raises(ValueError, match="batch: cannot bind qpos as the native float64 view"):
        mjrefresh.bind_mjbatch(b, refresher)


# ---------------------------------------------------------------- drop-in
def test_drop_in_equals_mj_forward_and_mjbatch_where_it_is_right(model, batch):
    rng = np.random.default_rng(11)
    sd = batch.bind("sensordata")
    full = (0, model.nsensordata)
    acc = sensor_cols(model, ACC_SENSORS)
    tracked = sensor_cols(model, tracked_sensors(model))
    right = sensor_cols(model, [s for s in tracked_sensors(model) if s not in MJBATCH_WRONG])
    with mjrefresh.MjbatchSensorRefresher(batch, num_threads=2) as drop_in:
        for _ in range(3):
            step(batch, rng)
            after_step = sd.copy()
            batch.refresh_sensor_ranges(None, full)  # mjbatch-uni's own
            theirs = sd.copy()
            sd[:] = after_step
            drop_in.refresh_sensor_ranges(None, full)
            exp = Reference(model, ()).rows(*state(batch))["sensordata"]
            np.testing.assert_allclose(sd[:, tracked], exp[:, tracked], rtol=0, atol=ATOL)
            np.testing.assert_array_equal(sd[:, acc], after_step[:, acc])  # untouched
            np.testing.assert_allclose(sd[:, right], theirs[:, right], rtol=0, atol=ATOL)
            np.testing.assert_allclose(theirs[:, right], exp[:, right], rtol=0, atol=ATOL)
        # what mjbatch-uni gets wrong and the drop-in gets right
        wrong = sensor_cols(model, MJBATCH_WRONG)
        assert np.abs(theirs[:, wrong] - exp[:, wrong]).max() > 1e-6


def test_drop_in_rows_and_ranges_are_respected(model, batch):
    rng = np.random.default_rng(12)
    sd = batch.bind("sensordata")
    step(batch, rng)
    after_step = sd.copy()
    foot = model.sensor("foot_pos_w")
    gyro = model.sensor("imu_gyro")
    ranges = [foot.adr[0], foot.adr[0] + 3, gyro.adr[0], gyro.adr[0] + 3]
    mask = np.array([True, False, True, False, False, True])
    with mjrefresh.MjbatchSensorRefresher(batch, num_threads=1) as drop_in:
        drop_in.refresh_sensor_ranges(mask, ranges)
        exp = Reference(model, ()).rows(*state(batch))["sensordata"]
        cols = np.r_[foot.adr[0] : foot.adr[0] + 3, gyro.adr[0] : gyro.adr[0] + 3]
        rows = np.flatnonzero(mask)
        np.testing.assert_allclose(
            sd[np.ix_(rows, cols)], exp[np.ix_(rows, cols)], rtol=0, atol=ATOL
        )
        others = np.setdiff1d(np.arange(model.nsensordata), cols)
        np.testing.assert_array_equal(sd[:, others], after_step[:, others])
        np.testing.assert_array_equal(sd[~mask], after_step[~mask])
        # int ids (int32 too), one range, a range of only acceleration sensors (no-op)
        drop_in.refresh_sensor_ranges(np.array([1, 3], dtype=np.int32), ranges)
        drop_in.refresh_sensor_range(np.array([4]), (foot.adr[0], foot.adr[0] + 3))
        np.testing.assert_allclose(
            sd[[1, 3, 4]][:, cols[:3]], exp[[1, 3, 4]][:, cols[:3]], rtol=0, atol=ATOL
        )
        touch = model.sensor("foot_touch")
        before = sd.copy()
        drop_in.refresh_sensor_ranges(None, (touch.adr[0], touch.adr[0] + 1))
        np.testing.assert_array_equal(sd, before)
        drop_in.refresh_sensor_ranges(np.array([], dtype=np.int64), ranges)


def test_drop_in_errors(model, batch):
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


def test_drop_in_rejects_sensors_it_cannot_compute():
    m = mujoco.MjModel.from_xml_string(
        """<mujoco><worldbody><body><joint name="j" limited="true" range="-1 1"/>
        <geom size=".1"/></body></worldbody>
        <sensor><jointpos joint="j"/><jointlimitpos name="lim" joint="j"/></sensor></mujoco>"""
    )
    b = mjbatch.Batch(m, 2, num_threads=1)
    with mjrefresh.MjbatchSensorRefresher(b, num_threads=1) as drop_in:
        drop_in.refresh_sensor_ranges(None, (0, 1))
        with pytest.raises(
            mjrefresh.PlanError, match="sensor 'lim' .jointlimitpos. cannot be refreshed"
        ):
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
