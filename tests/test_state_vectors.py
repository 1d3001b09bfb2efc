"""Rows kept as MuJoCo state vectors: state_views gives zero-copy views of
the inputs in mj_getState's layout (any spec holding qpos and qvel, any row
stride, merged leading axes), refreshes through them equal mj_forward after
mj_setState, bind_state is a StateCache over them that writes a runtime's
sensordata in place, and bad states are refused naming the argument."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
from mujoco import rollout
from support.models import rich_model
from support.states import random_states

import mjrefresh

pytestmark = pytest.mark.parity

S = mujoco.mjtState
N = 12
MOCAP_SPEC = int(S.mjSTATE_FULLPHYSICS) | int(S.mjSTATE_MOCAP_POS) | int(S.mjSTATE_MOCAP_QUAT)


def _states(m: mujoco.MjModel, spec: int, n: int = N, seed: int = 0) -> np.ndarray:
    """(n, nstate) rows written by mj_getState from random states."""
    st = random_states(m, n, seed=seed)
    d = mujoco.MjData(m)
    rows = np.zeros((n, mujoco.mj_stateSize(m, spec)))
    for k in range(n):
        d.qpos[:], d.qvel[:], d.time = st["qpos"][k], st["qvel"][k], st["time"][k]
        d.mocap_pos[:], d.mocap_quat[:] = st["mocap_pos"][k], st["mocap_quat"][k]
        d.act[:] = k
        mujoco.mj_getState(m, d, rows[k], spec)
    return rows


def _forward(m: mujoco.MjModel, rows: np.ndarray, spec: int) -> np.ndarray:
    """mj_forward's sensordata at each row (mj_setState on a reset MjData;
    mocap as compiled when the spec has none)."""
    d = mujoco.MjData(m)
    out = np.zeros((len(rows), m.nsensordata))
    for k, row in enumerate(rows):
        mujoco.mj_resetData(m, d)
        mujoco.mj_setState(m, d, row, spec)
        mujoco.mj_forward(m, d)
        out[k] = d.sensordata
    return out


@pytest.mark.parametrize("spec", [int(S.mjSTATE_FULLPHYSICS), MOCAP_SPEC])
def test_views_are_the_state_components_in_place(spec):
    m = rich_model()
    rows = _states(m, spec)
    views = mjrefresh.state_views(m, rows, spec)
    d = mujoco.MjData(m)
    for k in (0, N - 1):
        mujoco.mj_setState(m, d, rows[k], spec)
        np.testing.assert_array_equal(views["qpos"][k], d.qpos)
        np.testing.assert_array_equal(views["qvel"][k], d.qvel)
        assert views["time"][k] == d.time
        if spec == MOCAP_SPEC:
            np.testing.assert_array_equal(views["mocap_pos"][k], d.mocap_pos)
            np.testing.assert_array_equal(views["mocap_quat"][k], d.mocap_quat)
    assert ("mocap_pos" in views) == (spec == MOCAP_SPEC)
    for v in views.values():
        assert np.shares_memory(v, rows)


@pytest.mark.parametrize("engine", ["exact", "auto"])
def test_a_refresh_through_the_views_equals_mj_forward(engine):
    m = rich_model()
    rows = _states(m, MOCAP_SPEC)
    names = [m.sensor(i).name for i in range(m.nsensor) if m.sensor_needstage[i] != 3]
    r = mjrefresh.Refresher(m, sensors=names, engine=engine, num_threads=2)
    out = r.outputs(N)
    r.refresh(np.arange(N), out=out, **mjrefresh.state_views(m, rows, MOCAP_SPEC))
    want = _forward(m, rows, MOCAP_SPEC)
    for a, b in r.plan.column_ranges:
        if r.plan.engine == "exact":
            np.testing.assert_array_equal(out.sensordata[:, a:b], want[:, a:b])
        else:
            np.testing.assert_allclose(out.sensordata[:, a:b], want[:, a:b], atol=1e-10)


def test_a_rollout_trajectory_refreshes_in_one_call():
    m = mjrefresh.models.quadruped()
    spec = int(S.mjSTATE_FULLPHYSICS)
    nbatch, nstep = 3, 7
    x0 = _states(m, spec, nbatch, seed=1)
    ctrl = np.random.default_rng(2).normal(scale=0.3, size=(nbatch, nstep, m.nu))
    state, sensordata = rollout.rollout(m, mujoco.MjData(m), x0, ctrl)
    assert state.shape == (nbatch, nstep, mujoco.mj_stateSize(m, spec))
    physics = sensordata.copy()
    r = mjrefresh.Refresher(m, sensor_ranges=[(68, 328)], num_threads=2)
    cache = mjrefresh.bind_state(r, state, sensordata=sensordata)
    assert cache.num_envs == nbatch * nstep
    cache.mark_stepped()
    assert cache.refresh_dirty_rows() == nbatch * nstep
    want = _forward(m, state.reshape(-1, state.shape[-1]), spec).reshape(sensordata.shape)
    np.testing.assert_allclose(sensordata[..., 68:328], want[..., 68:328], rtol=0, atol=1e-10)
    # the rest, acceleration-stage sensors included, keeps the physics' values
    np.testing.assert_array_equal(sensordata[..., :68], physics[..., :68])


def test_row_strided_states_are_read_in_place():
    m = rich_model()
    spec = int(S.mjSTATE_FULLPHYSICS)
    wide = np.zeros((2 * N, mujoco.mj_stateSize(m, spec) + 5))
    wide[::2, : wide.shape[1] - 5] = _states(m, spec)
    rows = wide[::2, : wide.shape[1] - 5]
    views = mjrefresh.state_views(m, rows, spec)
    assert views["qpos"].strides[0] == wide.strides[0] * 2
    # FULLPHYSICS holds no mocap poses: give the model's, the same for every row
    d = mujoco.MjData(m)
    mocap = {"mocap_pos": np.broadcast_to(d.mocap_pos, (N, m.nmocap, 3))}
    mocap["mocap_quat"] = np.broadcast_to(d.mocap_quat, (N, m.nmocap, 4))
    r = mjrefresh.Refresher(m, bodies=["arm2"])
    out = r.outputs(N)
    r.refresh(np.arange(N), out=out, **views, **mocap)
    mujoco.mj_setState(m, d, rows[3], spec)
    mujoco.mj_forward(m, d)
    np.testing.assert_allclose(out.body_pos[3, 0], d.xpos[m.body("arm2").id], atol=1e-12)


def test_bad_states_are_refused_naming_them():
    m = rich_model()
    spec = int(S.mjSTATE_FULLPHYSICS)
    rows = _states(m, spec)
    width = rows.shape[1]
    with pytest.raises(ValueError, match=r"spec: expected a state spec that includes mjSTATE_QPOS"):
        mjrefresh.state_views(m, rows, S.mjSTATE_TIME)
    with pytest.raises(
        ValueError, match=rf"states: expected {width} columns \(mj_stateSize\(model, spec=0x"
    ):
        mjrefresh.state_views(m, rows[:, :-1], spec)
    other = mjrefresh.models.quadruped()
    with pytest.raises(ValueError, match=r"states: expected \d+ columns .*another model"):
        mjrefresh.state_views(other, rows, spec)
    with pytest.raises(TypeError, match=r"states: expected dtype float64, got float32"):
        mjrefresh.state_views(m, rows.astype(np.float32), spec)
    with pytest.raises(ValueError, match=r"states: expected \(N, \d+\) or \(\.\.\., \d+\) rows"):
        mjrefresh.state_views(m, rows[0], spec)
    traj = np.zeros((4, 3, width))[:, ::2]  # leading axes that do not merge
    with pytest.raises(ValueError, match=r"states: its leading axes \(4, 2\) cannot be merged"):
        mjrefresh.state_views(m, traj, spec)
    with pytest.raises(TypeError, match=r"spec: expected a mujoco.mjtState value"):
        mjrefresh.state_views(m, rows, "fullphysics")
    with mjrefresh.Refresher(m, bodies=[1], num_threads=1) as r:
        with pytest.raises(
            TypeError,
            match=r"^model: expected mujoco.MjModel, got Refresher \(pass refresher.model\)$",
        ):
            mjrefresh.state_views(r, rows, spec)
        with pytest.raises(
            TypeError,
            match=r"^qvel: bind_state reads it from the state rows; do not pass it as well$",
        ):
            mjrefresh.bind_state(r, rows, spec, qvel=np.zeros((len(rows), m.nv)))
    with pytest.raises(TypeError, match=r"^num_envs: expected an int >= 0, got float$"):
        mjrefresh.model_mocap(m, 2.0)
    with pytest.raises(TypeError, match=r"^model: expected mujoco.MjModel, got str$"):
        mjrefresh.model_mocap("m", 2)
    every = int(S.mjSTATE_INTEGRATION)
    for bad in (-1, every + 1):
        with pytest.raises(
            ValueError,
            match=rf"^spec: expected a mujoco.mjtState value or a union of them \(bits within "
            rf"{every:#x}\), got {bad}$",
        ):
            mjrefresh.state_views(m, rows, bad)


def test_layouts_the_views_cannot_take_are_refused_naming_states():
    m = rich_model()
    spec = int(S.mjSTATE_FULLPHYSICS)
    rows = _states(m, spec)
    with pytest.raises(
        ValueError,
        match=r"^states: its last axis must be contiguous \(stride 8 bytes\), got stride 16 bytes",
    ):
        mjrefresh.state_views(m, np.repeat(rows, 2, axis=1)[:, ::2], spec)
    raw = np.zeros(rows.size * 8 + 1, np.uint8)[1:].view(np.float64).reshape(rows.shape)
    with pytest.raises(
        ValueError, match=r"^states: its data and strides must be multiples of 8 bytes"
    ):
        mjrefresh.state_views(m, raw, spec)
    with mjrefresh.Refresher(m, sensors=["fp_xbody"], num_threads=1) as r:
        traj = np.stack([rows, rows])  # (2, N, w): sensordata must be (2N, ...) or (2, N, ...)
        swapped = np.zeros((rows.shape[0], 2, m.nsensordata))
        with pytest.raises(
            ValueError,
            match=rf"^sensordata: its leading axes \({rows.shape[0]}, 2\) differ from those of "
            rf"states \(2, {rows.shape[0]}\); expected \(N, nsensordata\) or the leading axes",
        ):
            mjrefresh.bind_state(r, traj, spec, sensordata=swapped)
        flat = np.zeros((2 * rows.shape[0], m.nsensordata))
        mocap = mjrefresh.model_mocap(m, 2 * rows.shape[0])
        mjrefresh.bind_state(r, traj, spec, sensordata=flat, **mocap).refresh_dirty_rows()


def test_a_model_without_dofs_has_empty_qpos_and_qvel():
    m = mujoco.MjModel.from_xml_string(
        """<mujoco><worldbody><body name="mc" mocap="true" pos="0 0 1"><site name="s"/></body>
        </worldbody><sensor><framepos name="fp" objtype="site" objname="s"/></sensor></mujoco>"""
    )
    spec = int(S.mjSTATE_INTEGRATION)
    states = np.zeros((3, mujoco.mj_stateSize(m, spec)))
    d = mujoco.MjData(m)
    for i in range(3):
        d.mocap_pos[0] = (i, 0, 1)
        mujoco.mj_getState(m, d, states[i], spec)
    views = mjrefresh.state_views(m, states, spec)
    assert views["qpos"].shape == (3, 0) and views["qvel"].shape == (3, 0)
    with mjrefresh.Refresher(m, bodies=["mc"], sensors=["fp"], num_threads=1) as r:
        cache = mjrefresh.bind_state(r, states, spec)
        np.testing.assert_array_equal(cache.body_pos("mc")[:, 0], [0.0, 1.0, 2.0])
        np.testing.assert_array_equal(cache.sensor("fp")[:, 0], [0.0, 1.0, 2.0])


@pytest.mark.parametrize("lead", [(0,), (3, 0)])
def test_no_rows_give_empty_views_and_a_cache_is_refused_naming_states(lead):
    # numpy gives an empty array strides of 0: they were read as a
    # non-contiguous last axis ("got stride 0 bytes").
    m = rich_model()
    spec = MOCAP_SPEC
    states = np.zeros((*lead, mujoco.mj_stateSize(m, spec)))
    views = mjrefresh.state_views(m, states, spec)
    assert views["qpos"].shape == (0, m.nq) and views["qvel"].shape == (0, m.nv)
    assert views["time"].shape == (0,) and views["mocap_quat"].shape == (0, m.nmocap, 4)
    with mjrefresh.Refresher(m, bodies=[1], num_threads=2) as r:
        qpos, qvel = views.pop("qpos"), views.pop("qvel")
        assert r.refresh(np.arange(0), qpos, qvel, r.outputs(0), **views) == 0
        with pytest.raises(
            ValueError,
            match=rf"^states: expected at least one row .*, got shape \({', '.join(map(str, states.shape))}\)$",
        ):
            mjrefresh.bind_state(r, states, spec)


def test_a_sensordata_overlapping_the_states_is_refused_naming_states():
    # It was "out.sensordata: overlaps the input qvel": a view the caller
    # never made.
    m = rich_model()
    spec = MOCAP_SPEC
    width = mujoco.mj_stateSize(m, spec)
    block = np.zeros((4, width + m.nsensordata))
    with mjrefresh.Refresher(m, bodies=[1], sensors=["fp_xbody"], num_threads=1) as r:
        with pytest.raises(
            ValueError,
            match=r"^sensordata: overlaps states in memory \(the state rows the refresh reads\)",
        ):
            mjrefresh.bind_state(
                r, block[:, :width], spec, block[:, width - 1 : width - 1 + m.nsensordata]
            )
        cache = mjrefresh.bind_state(r, block[:, :width], spec, block[:, width:])  # side by side
        assert cache.sensor("fp_xbody").shape[0] == 4
