"""Parity of the exact engine (engine="exact") with mj_forward on random non-zero states.

Tolerance: bit-exact (the exact engine runs MuJoCo's own functions), for
every supported sensor type, every output, thread counts 1, 2, 7 and more
threads than rows, row-strided inputs and float32 outputs."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
from support.models import RICH_ACC_SENSORS, RICH_BODIES, RICH_XML
from support.oracle import forward_rows
from support.sensors import pos_vel_sensor_names, sensor_columns
from support.states import random_states, state_inputs

import mjrefresh

# Parity with mj_forward: CI runs these on every supported MuJoCo release.
pytestmark = pytest.mark.parity


def Refresher(*args, **kwargs):  # noqa: N802 - the exact engine under test
    return mjrefresh.Refresher(*args, engine="exact", **kwargs)


THREADS = (1, 2, 7, 100)


def _refresh_all(r: mjrefresh.Refresher, states: dict, out: mjrefresh.RefreshOutputs) -> None:
    n = states["qpos"].shape[0]
    assert (
        r.refresh(
            np.arange(n),
            states["qpos"],
            states["qvel"],
            out,
            **state_inputs(states),
        )
        == n
    )


@pytest.mark.parametrize("num_threads", THREADS)
def test_every_sensor_type_bit_exact(rich_model, rich_states, rich_reference, num_threads):
    names = pos_vel_sensor_names(rich_model)
    r = Refresher(rich_model, sensors=names, num_threads=num_threads)
    out = r.outputs(64)
    _refresh_all(r, rich_states, out)
    for name in names:
        cols = sensor_columns(rich_model, name)
        np.testing.assert_array_equal(
            out.sensordata[:, cols], rich_reference.sensordata[:, cols], err_msg=name
        )


@pytest.mark.parametrize(
    "name",
    [n for n in pos_vel_sensor_names(mujoco.MjModel.from_xml_string(RICH_XML))],
)
def test_each_sensor_alone(rich_model, rich_states, rich_reference, name):
    # Alone, a sensor gets only the stages it needs: proves the planner's
    # stage table (a missing stage leaves a stale or zero value).
    r = Refresher(rich_model, sensors=[name], num_threads=2)
    out = r.outputs(64)
    _refresh_all(r, rich_states, out)
    cols = sensor_columns(rich_model, name)
    np.testing.assert_array_equal(out.sensordata[:, cols], rich_reference.sensordata[:, cols])


@pytest.mark.parametrize("num_threads", THREADS)
def test_body_and_site_outputs_bit_exact(rich_model, rich_states, rich_reference, num_threads):
    bodies = list(RICH_BODIES)
    ids = [mujoco.mj_name2id(rich_model, mujoco.mjtObj.mjOBJ_BODY, b) for b in bodies]
    sites = ["imu", "arm2_tip", "world_site", "target_site"]
    sids = [mujoco.mj_name2id(rich_model, mujoco.mjtObj.mjOBJ_SITE, s) for s in sites]
    r = Refresher(
        rich_model, bodies=bodies, relative_to="base", sites=sites, num_threads=num_threads
    )
    out = r.outputs(64)
    _refresh_all(r, rich_states, out)
    ref = rich_reference
    np.testing.assert_array_equal(out.body_pos, ref.xpos[:, ids])
    np.testing.assert_array_equal(out.body_quat, ref.xquat[:, ids])
    np.testing.assert_array_equal(out.body_angvel, ref.vel[:, ids, :3])
    np.testing.assert_array_equal(out.body_linvel, ref.vel[:, ids, 3:])
    np.testing.assert_array_equal(out.site_pos, ref.site_xpos[:, sids])
    np.testing.assert_array_equal(out.site_mat, ref.site_xmat[:, sids])
    # Relative pose: same arithmetic as framepos/framequat with reftype xbody.
    base = ids[0]
    rel = np.einsum(
        "nji,nkj->nki",
        ref.xmat[:, base].reshape(-1, 3, 3),
        ref.xpos[:, ids] - ref.xpos[:, base : base + 1],
    )
    np.testing.assert_allclose(out.body_pos_rel, rel, atol=1e-12)
    q = np.empty(4)
    for n in range(64):
        neg = np.empty(4)
        mujoco.mju_negQuat(neg, ref.xquat[n, base])
        for k, b in enumerate(ids):
            mujoco.mju_mulQuat(q, neg, ref.xquat[n, b])
            np.testing.assert_array_equal(out.body_quat_rel[n, k], q)


def test_body_outputs_match_frame_sensors_on_the_body():
    # Contract: body_* equal framepos/framequat/framelinvel/frameangvel on the
    # body's xbody frame, and *_rel equal those with reftype xbody.
    xml = """<mujoco><worldbody><body name="a" pos="0 0 1"><freejoint/><geom size=".1"/>
      <body name="b" pos=".2 0 0" quat=".9 .3 .1 0"><joint axis="0 1 0"/><geom size=".05"/></body>
      </body></worldbody><sensor>
      <framepos objtype="xbody" objname="b"/><framequat objtype="xbody" objname="b"/>
      <framelinvel objtype="xbody" objname="b"/><frameangvel objtype="xbody" objname="b"/>
      <framepos objtype="xbody" objname="b" reftype="xbody" refname="a"/>
      <framequat objtype="xbody" objname="b" reftype="xbody" refname="a"/>
      </sensor></mujoco>"""
    m = mujoco.MjModel.from_xml_string(xml)
    states = random_states(m, 32, seed=5)
    ref = forward_rows(m, states)
    r = Refresher(m, bodies=["b"], relative_to="a", num_threads=2)
    out = r.outputs(32)
    r.refresh(np.arange(32), states["qpos"], states["qvel"], out)
    s = ref.sensordata
    np.testing.assert_array_equal(out.body_pos[:, 0], s[:, 0:3])
    np.testing.assert_array_equal(out.body_quat[:, 0], s[:, 3:7])
    np.testing.assert_array_equal(out.body_linvel[:, 0], s[:, 7:10])
    np.testing.assert_array_equal(out.body_angvel[:, 0], s[:, 10:13])
    np.testing.assert_array_equal(out.body_pos_rel[:, 0], s[:, 13:16])
    np.testing.assert_array_equal(out.body_quat_rel[:, 0], s[:, 16:20])


def test_unselected_columns_rows_and_acc_sensors_untouched(rich_model, rich_states, rich_reference):
    sentinel = -12345.678
    names = [n for n in pos_vel_sensor_names(rich_model) if n not in ("gyro", "tp_fixed")]
    r = Refresher(rich_model, sensors=names, bodies=["arm2"], num_threads=2)
    out = r.outputs(64)
    for a in out.arrays().values():
        a.fill(sentinel)
    rows = np.arange(0, 64, 3)
    r.refresh(
        rows,
        rich_states["qpos"],
        rich_states["qvel"],
        out,
        mocap_pos=rich_states["mocap_pos"],
        mocap_quat=rich_states["mocap_quat"],
        time=rich_states["time"],
    )
    selected = np.zeros(rich_model.nsensordata, bool)
    for name in names:
        selected[sensor_columns(rich_model, name)] = True
    for name in RICH_ACC_SENSORS + ("gyro", "tp_fixed"):
        assert not selected[sensor_columns(rich_model, name)].any()
    others = np.setdiff1d(np.arange(64), rows)
    assert (out.sensordata[others] == sentinel).all()
    assert (out.body_pos[others] == sentinel).all()
    assert (out.sensordata[np.ix_(rows, ~selected)] == sentinel).all()
    np.testing.assert_array_equal(
        out.sensordata[np.ix_(rows, selected)], rich_reference.sensordata[np.ix_(rows, selected)]
    )


def test_sensor_ranges_merge_and_match(rich_model, rich_states, rich_reference):
    a = sensor_columns(rich_model, "fp_xbody")
    b = sensor_columns(rich_model, "fp_body_ref_site")
    r = Refresher(rich_model, sensor_ranges=[(b.start, b.stop), (a.start, a.stop)])
    assert r.plan.column_ranges == ((a.start, b.stop),)  # adjacent ranges merged
    out = r.outputs(64)
    _refresh_all(r, rich_states, out)
    np.testing.assert_array_equal(
        out.sensordata[:, a.start : b.stop], rich_reference.sensordata[:, a.start : b.stop]
    )


def test_row_strided_inputs_and_outputs(rich_model, rich_states, rich_reference):
    # A backend's state rows: qpos | qvel | sensordata side by side in one
    # buffer; the refresher reads and writes these views in place.
    m = rich_model
    n = 64
    width = m.nq + m.nv + m.nsensordata + 5
    state = np.zeros((n, width))
    qpos = state[:, : m.nq]
    qvel = state[:, m.nq : m.nq + m.nv]
    sensordata = state[:, m.nq + m.nv : m.nq + m.nv + m.nsensordata]
    qpos[:] = rich_states["qpos"]
    qvel[:] = rich_states["qvel"]
    names = pos_vel_sensor_names(m)
    r = Refresher(m, sensors=names, bodies=["arm2"], num_threads=2)
    out = r.outputs(n, sensordata=sensordata)
    assert out.sensordata is sensordata
    _refresh_all(r, {**rich_states, "qpos": qpos, "qvel": qvel}, out)
    for name in names:
        cols = sensor_columns(m, name)
        np.testing.assert_array_equal(sensordata[:, cols], rich_reference.sensordata[:, cols])
    np.testing.assert_array_equal(state[:, : m.nq], rich_states["qpos"])  # inputs untouched


def test_float32_outputs(rich_model, rich_states, rich_reference):
    names = pos_vel_sensor_names(rich_model)
    r = Refresher(rich_model, sensors=names, bodies=["arm2", "base"], num_threads=2)
    out = r.outputs(64, dtype=np.float32)
    assert out.sensordata.dtype == np.float32 and out.body_pos.dtype == np.float32
    _refresh_all(r, rich_states, out)
    for name in names:
        cols = sensor_columns(rich_model, name)
        np.testing.assert_array_equal(
            out.sensordata[:, cols], rich_reference.sensordata[:, cols].astype(np.float32)
        )


def test_bool_mask_and_int32_rows_agree(rich_model, rich_states):
    r = Refresher(rich_model, bodies=["arm2"], num_threads=2)
    mask = np.zeros(64, bool)
    mask[[3, 10, 11, 40]] = True
    out_a, out_b = r.outputs(64), r.outputs(64)
    kw = dict(mocap_pos=rich_states["mocap_pos"], mocap_quat=rich_states["mocap_quat"])
    assert r.refresh(mask, rich_states["qpos"], rich_states["qvel"], out_a, **kw) == 4
    assert (
        r.refresh(
            np.array([3, 10, 11, 40], np.int32),
            rich_states["qpos"],
            rich_states["qvel"],
            out_b,
            **kw,
        )
        == 4
    )
    np.testing.assert_array_equal(out_a.body_pos, out_b.body_pos)


def test_refresh_dirty_rows_clears_exactly_the_refreshed(rich_model, rich_states, rich_reference):
    r = Refresher(rich_model, bodies=["arm2"], num_threads=2)
    out = r.outputs(64)
    dirty = np.zeros(64, bool)
    dirty[[0, 5, 63]] = True
    kw = dict(mocap_pos=rich_states["mocap_pos"], mocap_quat=rich_states["mocap_quat"])
    assert r.refresh_dirty_rows(dirty, rich_states["qpos"], rich_states["qvel"], out, **kw) == 3
    assert not dirty.any()
    assert r.refresh_dirty_rows(dirty, rich_states["qpos"], rich_states["qvel"], out, **kw) == 0
    arm2 = mujoco.mj_name2id(rich_model, mujoco.mjtObj.mjOBJ_BODY, "arm2")
    np.testing.assert_array_equal(
        out.body_pos[[0, 5, 63], 0], rich_reference.xpos[[0, 5, 63], arm2]
    )
    assert (out.body_pos[1:5] == 0).all()


def test_nan_state_is_refreshed_without_crash(rich_model, rich_states):
    r = Refresher(
        rich_model, sensors=pos_vel_sensor_names(rich_model), bodies=["arm2"], num_threads=2
    )
    qpos = rich_states["qpos"].copy()
    qvel = rich_states["qvel"].copy()
    qpos[3, 2] = np.nan
    qvel[4, :] = np.inf
    out = r.outputs(64)
    _refresh_all(r, {**rich_states, "qpos": qpos, "qvel": qvel}, out)
    assert np.isnan(out.body_pos[3]).any()
    assert np.isfinite(out.body_pos[5]).all()


def test_trap_rows_do_not_leak_between_rows():
    # subtreelinvel/subtreeangmom are computed lazily behind flg_subtreevel;
    # a reused scratch mjData must not serve row k's values to row k+1.
    xml = """<mujoco><worldbody><body name="a"><freejoint/><geom size=".1" mass="2"/>
      <body name="b" pos=".3 0 0"><joint axis="0 0 1"/><geom size=".1"/></body></body>
      </worldbody><sensor><subtreelinvel body="a"/><subtreeangmom body="a"/></sensor></mujoco>"""
    m = mujoco.MjModel.from_xml_string(xml)
    states = random_states(m, 50, seed=9)
    ref = forward_rows(m, states)
    r = Refresher(m, sensor_ranges=[(0, m.nsensordata)], num_threads=1)
    out = r.outputs(50)
    r.refresh(np.arange(50), states["qpos"], states["qvel"], out)
    np.testing.assert_array_equal(out.sensordata, ref.sensordata)
    assert np.abs(np.diff(out.sensordata, axis=0)).max() > 0.1  # rows really differ
