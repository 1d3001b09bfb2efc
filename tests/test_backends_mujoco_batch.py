"""bind_mujoco_batch against a real MuJoCo >= 4.0 mujoco.batch.Batch
(skipped with older MuJoCo, which has no mujoco.batch)."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
from _cache_models import (
    BODIES,
    Reference,
    legged_model,
    random_state,
    sensor_cols,
    tracked_sensors,
)

import mjrefresh

mujoco_batch = pytest.importorskip(
    "mujoco.batch", reason=f"mujoco.batch needs MuJoCo >= 4.0 (installed: {mujoco.__version__})"
)

N = 5
ATOL = 1e-12


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
    rng = np.random.default_rng(seed)
    d = mujoco.MjData(model)
    rows = range(batch.nsim) if rows is None else rows
    for i in rows:
        random_state(model, rng, d)
        batch.bind("qpos")[i] = d.qpos
        batch.bind("qvel")[i] = d.qvel
        batch.bind("mocap_pos")[i] = d.mocap_pos
        batch.bind("mocap_quat")[i] = d.mocap_quat


@pytest.fixture()
def batch(model):
    b = mujoco_batch.Batch(model, N, nthread=2)
    randomize(b, model, seed=2)
    b.forward()
    return b


def state(batch) -> tuple:
    return tuple(batch.bind(n).copy() for n in ("qpos", "qvel", "mocap_pos", "mocap_quat", "time"))


def check_cache(cache, batch, model, rows=None) -> None:
    exp = Reference(model, BODIES, "base").rows(*state(batch), rows=rows)
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
    for name in tracked_sensors(model):
        s = model.sensor(name)
        np.testing.assert_allclose(
            cache.sensor(name, env_ids=env_ids),
            exp["sensordata"][:, s.adr[0] : s.adr[0] + s.dim[0]],
            rtol=0,
            atol=ATOL,
            err_msg=name,
        )


def test_reads_equal_mj_forward_after_steps(model, refresher, batch):
    cache = mjrefresh.bind_mujoco_batch(batch, refresher)
    assert np.shares_memory(cache._inputs["qpos"], batch.state)  # read in place
    rng = np.random.default_rng(0)
    ctrl = batch.bind("ctrl")
    sd = batch.bind("sensordata")  # the batch's own (read-only) outputs
    for _ in range(3):
        ctrl[:] = rng.uniform(-1, 1, size=ctrl.shape)
        batch.step(nstep=3)
        stale = sd.copy()
        cache.mark_stepped()
        cache.reset_stats()
        check_cache(cache, batch, model)
        assert cache.stats.native_calls == 1 and cache.stats.rows_refreshed == N
        np.testing.assert_array_equal(sd, stale)  # the batch's outputs are not written
    cols = sensor_cols(model, ["foot_linvel_w"])
    assert not np.allclose(stale[:, cols], cache.storage.sensordata[:, cols])


def test_partial_reset_isolation(model, refresher, batch):
    cache = mjrefresh.bind_mujoco_batch(batch, refresher)
    batch.step(nstep=2)
    cache.mark_stepped()
    cache.refresh_dirty_rows()
    before = {k: v.copy() for k, v in cache.storage.arrays().items()}
    reset = np.array([1, 2])
    batch.reset(reset)
    randomize(batch, model, seed=9, rows=reset)
    batch.forward(reset)
    cache.mark_fresh(reset)
    np.testing.assert_array_equal(cache.dirty, [False, True, True, False, False])
    check_cache(cache, batch, model, rows=reset)
    keep = [0, 3, 4]
    for name, arr in cache.storage.arrays().items():
        np.testing.assert_array_equal(arr[keep], before[name][keep], err_msg=name)


def test_on_demand_reads(model, refresher, batch):
    cache = mjrefresh.bind_mujoco_batch(batch, refresher, dtype=np.float32)
    cache.refresh_dirty_rows()
    batch.step(np.array([0, 3]), nstep=2)
    cache.mark_stepped([0, 3])
    cache.reset_stats()
    cache.body_linvel_w(["foot"], env_ids=[3])
    cache.body_linvel_w(["foot"], env_ids=[3])
    assert cache.stats.rows_refreshed == 1 and cache.stats.cached_reads == 1
    np.testing.assert_array_equal(cache.dirty, [True, False, False, False, False])


def test_errors(model, refresher, batch):
    with pytest.raises(TypeError, match="batch: expected mujoco.batch.Batch, got dict"):
        mjrefresh.bind_mujoco_batch({}, refresher)
    b = mujoco_batch.Batch(model, 2, nthread=1)
    b.set_models([model, model])
    with pytest.raises(ValueError, match=r"batch: it runs caller models \(set_models\)"):
        mjrefresh.bind_mujoco_batch(b, refresher)
    b = mujoco_batch.Batch(model, 2, nthread=1)
    b.expand("body_pos")[1, 2, 0] += 0.1
    with pytest.raises(
        ValueError, match="batch: model field body_pos is expanded with per-simulation values"
    ):
        mjrefresh.bind_mujoco_batch(b, refresher)
    b = mujoco_batch.Batch(model, 2, nthread=1)
    b.expand("geom_friction")[:] = 0.5  # does not change what a refresh computes
    mjrefresh.bind_mujoco_batch(b, refresher)
