"""mujoco-uni-runtime 0.5.0's BatchEnvPool, refreshed through bind_state,
against the real package.

``step(return_sensor=True)`` returns the final full-physics state rows and
the sensordata the last substep left (its position/velocity columns one
substep behind); ``post_step_forward_sensor=True`` runs one mj_forward per
row for current columns, re-solving the acceleration stage with ctrl = 0.
Refreshing the plain output through ``bind_state`` must give the pos/vel
columns of the post-step forward and keep the acceleration columns the
physics produced."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
from support.clients import MUJOCO_UNI_MISSING, acc_columns
from support.models import legged_model
from support.sensors import tracked_sensors

import mjrefresh

mujoco_uni = pytest.importorskip("mujoco_uni", reason=MUJOCO_UNI_MISSING)

N = 16
NSTEP = 4
FULL = mujoco.mjtState.mjSTATE_FULLPHYSICS


def initial_states(m: mujoco.MjModel, seed: int) -> np.ndarray:
    """Default state with joint noise and random velocities, as state rows."""
    rng = np.random.default_rng(seed)
    d = mujoco.MjData(m)
    rows = np.empty((N, mujoco.mj_stateSize(m, FULL)))
    for k in range(N):
        mujoco.mj_resetData(m, d)
        d.qpos[7:] += rng.normal(0, 0.3, m.nq - 7)
        d.qvel[:] = rng.normal(0, 0.5, m.nv)
        mujoco.mj_getState(m, d, rows[k], FULL)
    return rows


def stepped(m: mujoco.MjModel, seed: int):
    pool = mujoco_uni.BatchEnvPool(m, nbatch=N, nthread=2)
    s0 = initial_states(m, seed)
    control = np.random.default_rng(seed + 1).uniform(-1, 1, (N, NSTEP, m.nu))
    state, plain = pool.step(s0, nstep=NSTEP, control=control, return_sensor=True)
    _, forwarded = pool.step(
        s0, nstep=NSTEP, control=control, return_sensor=True, post_step_forward_sensor=True
    )
    return pool, state, plain, forwarded


@pytest.mark.parametrize("num_threads", [1, 2, 2 * N + 3])
@pytest.mark.parametrize("model", ["quadruped", "legged"])
def test_step_output_refreshed_equals_post_step_forward_on_pos_vel(model, num_threads):
    # The quadruped (touch/accelerometer sensors) and a model with a mocap
    # body, whose poses the pool leaves at the compiled ones (model_mocap).
    m = mjrefresh.models.quadruped() if model == "quadruped" else legged_model()
    _pool, state, plain, forwarded = stepped(m, seed=3)
    acc = acc_columns(m)
    assert acc.any() and not np.allclose(plain[:, ~acc], forwarded[:, ~acc])
    sensordata = plain.copy()
    with mjrefresh.Refresher(m, sensors=tracked_sensors(m), num_threads=num_threads) as r:
        cache = mjrefresh.bind_state(
            r, state, FULL, sensordata=sensordata, **mjrefresh.model_mocap(m, N)
        )
        cache.mark_stepped()
        assert cache.refresh_dirty_rows() == N
    np.testing.assert_allclose(sensordata[:, ~acc], forwarded[:, ~acc], rtol=0, atol=1e-12)
    np.testing.assert_array_equal(sensordata[:, acc], plain[:, acc])


def test_pool_forward_agrees_with_a_refresh_of_the_same_states():
    # BatchEnvPool.forward is the runtime's own full mj_forward per row: the
    # same pos/vel columns as one refresh over the state rows, written into
    # a fresh sensordata array through refresh(rows, out=, **state_views).
    m = legged_model()
    pool, state, _plain, _fwd = stepped(m, seed=8)
    want = pool.forward(state)
    acc = acc_columns(m)
    with mjrefresh.Refresher(m, sensors=tracked_sensors(m), num_threads=2) as r:
        out = r.outputs(N, sensordata=np.zeros((N, m.nsensordata)))
        views = mjrefresh.state_views(m, state, FULL)
        r.refresh(np.arange(N), out=out, **views, **mjrefresh.model_mocap(m, N))
    np.testing.assert_allclose(out.sensordata[:, ~acc], want[:, ~acc], rtol=0, atol=1e-12)


def test_model_mocap_is_the_compiled_poses_by_mocap_id():
    m = legged_model()
    mocap = mjrefresh.model_mocap(m, 3)
    d = mujoco.MjData(m)
    assert mocap["mocap_pos"].shape == (3, m.nmocap, 3) and not mocap["mocap_pos"].flags.writeable
    np.testing.assert_array_equal(mocap["mocap_pos"][2], d.mocap_pos)
    np.testing.assert_array_equal(mocap["mocap_quat"][0], d.mocap_quat)
    assert mjrefresh.model_mocap(mjrefresh.models.quadruped(), 3) == {}
    with pytest.raises(ValueError, match=r"num_envs: expected a count >= 0, got -1"):
        mjrefresh.model_mocap(m, -1)
