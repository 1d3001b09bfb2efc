"""The fast engine (fused selective kinematics) against mj_forward and the
exact engine, on random non-zero states, for every covered output.

References are built once per model case (support.oracle: mj_forward per
row), then compared with the fast engine over
10,000 rows. Tolerances: 1e-12 for poses, 1e-10 for velocities.
"""

from __future__ import annotations

import functools

import mujoco
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.engine_models import (
    model,
    tracking_sensors,
)
from support.oracle import expected_outputs
from support.random_trees import build_tree, kinematic_trees
from support.runs import refresh_all as run
from support.sensors import non_acc_sensors as fast_sensors
from support.sensors import pos_vel_columns
from support.states import random_states_unnormalised as random_states

import mjrefresh

# Parity with mj_forward: CI runs these on every supported MuJoCo release.
pytestmark = pytest.mark.parity

S = mujoco.mjtSensor
OBJ = mujoco.mjtObj
NROWS = 10_000
POS_TOL = 1e-12
VEL_TOL = 1e-10


# Model cases: (model name, bodies, relative_to, sites, sensors).
def _case(name: str):
    m = model(name)
    all_bodies = list(range(1, m.nbody))
    sites = list(range(m.nsite))
    if name == "go1like":
        return m, all_bodies, "trunk", sites, tracking_sensors(m)
    if name == "chain":
        return m, all_bodies, "c3", sites, fast_sensors(m)
    return m, all_bodies, "arm2", sites, fast_sensors(m)


CASES = ("zoo", "chain", "go1like")


@functools.cache
def _case_data(name: str):
    m, bodies, rel, sites, sensors = _case(name)
    state = random_states(m, NROWS, seed=len(name))
    rel_id = mujoco.mj_name2id(m, OBJ.mjOBJ_BODY, rel)
    ref = expected_outputs(m, state, bodies, rel_id, sites)
    plan, out = run(m, state, "fast", bodies=bodies, rel=rel, sites=sites, sensors=sensors)
    return m, bodies, rel, sites, sensors, state, ref, plan, out


def _max_err(a, b) -> float:
    return float(np.max(np.abs(np.asarray(a, dtype=np.float64) - b))) if np.size(a) else 0.0


def _assert_within_tolerances(m, sensors, out, expect) -> None:
    """Every output of `out` within POS_TOL (poses, position-stage sensors) or
    VEL_TOL (velocities, velocity-stage sensors) of `expect` (a dict)."""
    for key in ("body_pos", "body_quat", "body_pos_rel", "body_quat_rel", "site_pos", "site_mat"):
        assert _max_err(getattr(out, key), expect[key]) <= POS_TOL, key
    for key in ("body_linvel", "body_angvel"):
        assert _max_err(getattr(out, key), expect[key]) <= VEL_TOL, key
    pos_cols, vel_cols = pos_vel_columns(m, sensors)
    assert _max_err(out.sensordata[:, pos_cols], expect["sensordata"][:, pos_cols]) <= POS_TOL
    assert _max_err(out.sensordata[:, vel_cols], expect["sensordata"][:, vel_cols]) <= VEL_TOL


# --------------------------------------------------------------------------
# parity
# --------------------------------------------------------------------------


@pytest.mark.parametrize("name", CASES)
def test_fast_matches_mj_forward(name):
    m, bodies, rel, sites, sensors, state, ref, plan, out = _case_data(name)
    assert plan.engine == "fast"
    _assert_within_tolerances(m, sensors, out, ref)


@pytest.mark.parametrize("name", CASES)
def test_fast_matches_exact_engine(name):
    m, bodies, rel, sites, sensors, state, ref, plan, out = _case_data(name)
    exact_plan, exact = run(m, state, "exact", bodies=bodies, rel=rel, sites=sites, sensors=sensors)
    assert exact_plan.engine == "exact"
    _assert_within_tolerances(m, sensors, out, exact.arrays())


def test_zoo_covers_every_sensor_kind_and_cutoff():
    """The zoo exercises every covered sensor type, frame type and cutoff,
    so the parity tests above are not vacuous."""
    m = model("zoo")
    types = {int(t) for t in m.sensor_type}
    covered = {
        S.mjSENS_FRAMEPOS,
        S.mjSENS_FRAMEQUAT,
        S.mjSENS_FRAMEXAXIS,
        S.mjSENS_FRAMEYAXIS,
        S.mjSENS_FRAMEZAXIS,
        S.mjSENS_FRAMELINVEL,
        S.mjSENS_FRAMEANGVEL,
        S.mjSENS_VELOCIMETER,
        S.mjSENS_GYRO,
        S.mjSENS_JOINTPOS,
        S.mjSENS_JOINTVEL,
        S.mjSENS_BALLQUAT,
        S.mjSENS_BALLANGVEL,
        S.mjSENS_SUBTREECOM,
        S.mjSENS_CLOCK,
        S.mjSENS_SUBTREELINVEL,
        S.mjSENS_SUBTREEANGMOM,
        S.mjSENS_MAGNETOMETER,
        S.mjSENS_TENDONPOS,
        S.mjSENS_TENDONVEL,
        S.mjSENS_ACTUATORPOS,
        S.mjSENS_ACTUATORVEL,
    }
    assert {int(t) for t in covered} <= types
    cameras = m.sensor_objtype == OBJ.mjOBJ_CAMERA
    assert cameras.any() and (m.sensor_reftype == OBJ.mjOBJ_CAMERA).any()
    actuated = {
        int(m.actuator_trntype[m.sensor_objid[i]])
        for i in range(m.nsensor)
        if m.sensor_type[i] == S.mjSENS_ACTUATORPOS
    }
    trn = mujoco.mjtTrn
    assert actuated == {int(trn.mjTRN_JOINT), int(trn.mjTRN_JOINTINPARENT), int(trn.mjTRN_TENDON)}
    *_, state, ref, _, out = _case_data("zoo")
    for name in (
        "cut_linvel",
        "cut_pos",
        "cut_jvel",
        "cut_gyro",
        "cut_com",
        "cut_clock",
        "cut_angmom",
        "cut_tvel",
    ):
        i = mujoco.mj_name2id(m, OBJ.mjOBJ_SENSOR, name)
        cols = slice(m.sensor_adr[i], m.sensor_adr[i] + m.sensor_dim[i])
        cut = m.sensor_cutoff[i]
        assert np.any(np.abs(ref["sensordata"][:, cols]) == cut), name  # clipping happened
        assert np.all(np.abs(out.sensordata[:, cols]) <= cut), name


def test_float32_outputs_match_float64():
    m, bodies, rel, sites, sensors, state, ref, plan, out = _case_data("zoo")
    small = {k: v[:500] for k, v in state.items()}
    _, out32 = run(
        m, small, "fast", bodies=bodies, rel=rel, sites=sites, sensors=sensors, dtype=np.float32
    )
    for key, a in out32.arrays().items():
        assert a.dtype == np.float32
        np.testing.assert_array_equal(a, getattr(out, key)[:500].astype(np.float32))


def test_thread_count_does_not_change_results():
    m, bodies, rel, sites, sensors, state, ref, plan, out = _case_data("go1like")
    small = {k: v[:2000] for k, v in state.items()}
    _, out2 = run(m, small, "fast", bodies=bodies, rel=rel, sites=sites, sensors=sensors, threads=2)
    for key, a in out2.arrays().items():
        np.testing.assert_array_equal(a, getattr(out, key)[:2000])


@pytest.mark.parametrize("name, sensors_only", [("zoo", False), ("go1like", True)])
def test_rows_in_pairs_equal_rows_alone(name, sensors_only):
    """The fast engine runs rows two at a time in SIMD lanes when it can; a
    row must come out the same whether it ran alone or in a pair (with and
    without outputs that need each row's scalar state)."""
    m, bodies, rel, sites, sensors, state, ref, plan, out = _case_data(name)
    if sensors_only:
        bodies, rel, sites = (), None, ()
    n = 41
    r = mjrefresh.Refresher(
        m,
        bodies=bodies,
        relative_to=rel,
        sites=sites,
        sensors=sensors,
        num_threads=1,
        engine="fast",
    )
    paired, alone = r.outputs(n), r.outputs(n)
    small = {k: v[:n] for k, v in state.items()}
    r.refresh(np.arange(n), **small, out=paired)
    for i in range(n):  # one row per call: never paired
        r.refresh([i], **small, out=alone)
    r.close()
    for key, a in alone.arrays().items():
        np.testing.assert_array_equal(a, getattr(paired, key), err_msg=key)
        np.testing.assert_array_equal(a, getattr(out, key)[:n], err_msg=key)


def test_selected_subset_visits_only_what_it_needs_and_stays_exact():
    """One deep body (ancestors only) and a world-attached site."""
    m = model("zoo")
    state = random_states(m, 3000, seed=7)
    hand_site = mujoco.mj_name2id(m, OBJ.mjOBJ_SITE, "hand_site")
    world_site = mujoco.mj_name2id(m, OBJ.mjOBJ_SITE, "world_site")
    sensors = [
        i
        for i in range(m.nsensor)
        if m.sensor_type[i] == S.mjSENS_FRAMELINVEL
        and m.sensor_objtype[i] == OBJ.mjOBJ_SITE
        and m.sensor_objid[i] == hand_site
    ]
    hand = mujoco.mj_name2id(m, OBJ.mjOBJ_BODY, "hand")
    ref = expected_outputs(m, state, [hand], None, [world_site, hand_site])
    plan, out = run(
        m,
        state,
        "fast",
        bodies=["hand"],
        rel=None,
        sites=["world_site", "hand_site"],
        sensors=sensors,
    )
    assert plan.engine == "fast"
    assert _max_err(out.body_pos, ref["body_pos"]) <= POS_TOL
    assert _max_err(out.body_linvel, ref["body_linvel"]) <= VEL_TOL
    assert _max_err(out.site_pos, ref["site_pos"]) <= POS_TOL
    assert _max_err(out.site_mat, ref["site_mat"]) <= POS_TOL
    _, vel_cols = pos_vel_columns(m, sensors)
    assert _max_err(out.sensordata[:, vel_cols], ref["sensordata"][:, vel_cols]) <= VEL_TOL


# --------------------------------------------------------------------------
# input/output contract
# --------------------------------------------------------------------------


def test_unselected_rows_and_columns_are_untouched():
    m = model("zoo")
    state = random_states(m, 64, seed=3)
    hand_pos = mujoco.mj_name2id(m, OBJ.mjOBJ_SENSOR, "cut_pos")
    adr = int(m.sensor_adr[hand_pos])
    # a range that cuts a 3-column sensor and one that cuts a quaternion
    quat = mujoco.mj_name2id(m, OBJ.mjOBJ_SENSOR, "hand_quat")
    qadr = int(m.sensor_adr[quat])
    ranges = [(adr + 1, adr + 2), (qadr + 2, qadr + 4)]
    r = mjrefresh.Refresher(
        m, bodies=["hand"], relative_to="base", sensor_ranges=ranges, num_threads=1, engine="fast"
    )
    ref = mjrefresh.Refresher(
        m, bodies=["hand"], relative_to="base", sensor_ranges=ranges, num_threads=1, engine="exact"
    )
    out = r.outputs(64)
    expect = ref.outputs(64)
    for a in (*out.arrays().values(), *expect.arrays().values()):
        a.fill(7.5)
    dirty = np.zeros(64, dtype=bool)
    dirty[[1, 5, 6, 40]] = True
    dirty_ref = dirty.copy()
    assert r.refresh_dirty_rows(dirty, **state, out=out) == 4
    assert not dirty.any()
    ref.refresh_dirty_rows(dirty_ref, **state, out=expect)
    sd = out.sensordata
    untouched = np.ones(m.nsensordata, dtype=bool)
    untouched[adr + 1] = untouched[qadr + 2] = untouched[qadr + 3] = False
    assert np.all(sd[:, untouched] == 7.5)
    rows = np.zeros(64, dtype=bool)
    rows[[1, 5, 6, 40]] = True
    for a in out.arrays().values():
        assert np.all(a[~rows] == 7.5)
    for key, a in out.arrays().items():
        assert _max_err(a, getattr(expect, key)) <= VEL_TOL, key
    r.close()
    ref.close()


def test_row_strided_inputs_and_outputs():
    m = model("go1like")
    state = random_states(m, 200, seed=5)
    sensors = tracking_sensors(m)
    backing = np.zeros((200, m.nq + m.nv + 5))
    backing[:, : m.nq] = state["qpos"]
    backing[:, m.nq : m.nq + m.nv] = state["qvel"]
    big = np.full((200, m.nsensordata + 11), 3.0)
    r = mjrefresh.Refresher(m, sensors=sensors, num_threads=2, engine="fast")
    out = r.outputs(200, sensordata=big[:, 5 : 5 + m.nsensordata])
    r.refresh(np.arange(200), backing[:, : m.nq], backing[:, m.nq : m.nq + m.nv], out)
    _, expect = run(m, state, "exact", bodies=(), rel=None, sites=(), sensors=sensors)
    cols = np.concatenate(
        [np.arange(m.sensor_adr[i], m.sensor_adr[i] + m.sensor_dim[i]) for i in sensors]
    )
    assert _max_err(big[:, 5 : 5 + m.nsensordata][:, cols], expect.sensordata[:, cols]) <= VEL_TOL
    assert np.all(big[:, :5] == 3.0) and np.all(big[:, 5 + m.nsensordata :] == 3.0)


def test_large_hinge_angles():
    """Hinge angles far outside [-pi, pi] (the fast engine reduces them itself
    up to 1e5 rad and hands larger ones to libm)."""
    m = model("chain")
    state = random_states(m, 2000, seed=11)
    rng = np.random.default_rng(12)
    hinge = [
        m.jnt_qposadr[j] for j in range(m.njnt) if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE
    ]
    for k, scale in enumerate((30.0, 5e3, 1.5e5, 1e8)):
        rows = slice(500 * k, 500 * (k + 1))
        state["qpos"][rows, hinge] = rng.uniform(-scale, scale, (500, len(hinge)))
    bodies = list(range(1, m.nbody))
    ref = expected_outputs(m, state, bodies, None, list(range(m.nsite)))
    plan, out = run(
        m, state, "fast", bodies=bodies, rel=None, sites=list(range(m.nsite)), sensors=None
    )
    for key in ("body_pos", "body_quat", "site_pos", "site_mat"):
        assert _max_err(getattr(out, key), ref[key]) <= POS_TOL, key
    for key in ("body_linvel", "body_angvel"):
        assert _max_err(getattr(out, key), ref[key]) <= VEL_TOL, key


def test_nan_and_inf_inputs_do_not_crash():
    m = model("zoo")
    state = random_states(m, 16, seed=9)
    state["qpos"][3, :] = np.nan
    state["qvel"][4, 2] = np.inf
    state["qpos"][5, 3:7] = 0.0  # zero quaternion: MuJoCo uses the unit quaternion
    state["mocap_quat"][6] = np.nan
    plan, out = run(
        m,
        state,
        "fast",
        bodies=list(range(1, m.nbody)),
        rel="arm2",
        sites=list(range(m.nsite)),
        sensors=fast_sensors(m),
    )
    assert np.isnan(out.body_pos[3]).any()
    assert np.all(np.isfinite(out.body_pos[[0, 1, 2, 4, 5]]))
    ref = expected_outputs(
        m,
        {k: v[5:6] for k, v in state.items()},
        list(range(1, m.nbody)),
        mujoco.mj_name2id(m, OBJ.mjOBJ_BODY, "arm2"),
        list(range(m.nsite)),
    )
    assert _max_err(out.body_quat[5:6], ref["body_quat"]) <= POS_TOL


def test_an_infinite_position_stays_infinite_through_an_off_center_hinge():
    # mj_kinematics sets xpos = xanchor - rot(jnt_pos, xquat); computed as
    # xpos + ((xanchor - xpos) - rot) an infinite xpos became inf - inf =
    # NaN, and a cutoff, which clips MuJoCo's inf, kept the NaN.
    m = mujoco.MjModel.from_xml_string(
        """<mujoco><worldbody><body name="b1" pos="0 0 1"><freejoint/><geom size=".1"/>
        <body name="b2" pos="0.2 0 0"><joint axis="0 0 1" pos="0.01 0.02 -0.03"/>
        <geom size=".05"/></body></body></worldbody><sensor>
        <framepos objtype="xbody" objname="b2"/>
        <framepos objtype="xbody" objname="b2" cutoff="0.5"/></sensor></mujoco>"""
    )
    qpos = np.array([[np.inf, 0.1, 1.0, 1, 0, 0, 0, 0.7]])
    d = mujoco.MjData(m)
    d.qpos[:] = qpos[0]
    with np.errstate(invalid="ignore"):
        mujoco.mj_forward(m, d)
    assert d.sensordata[0] == np.inf and d.sensordata[3] == 0.5
    n = 7  # a quad (AVX2), a pair and a row alone
    with mjrefresh.Refresher(m, sensors=[0, 1], bodies=["b2"], engine="fast") as r:
        out = r.outputs(n)
        r.refresh(np.arange(n), np.repeat(qpos, n, axis=0), np.zeros((n, m.nv)), out)
    np.testing.assert_array_equal(out.sensordata, np.tile(d.sensordata, (n, 1)))
    np.testing.assert_array_equal(out.body_pos[:, 0], np.tile(d.xpos[2], (n, 1)))


# --------------------------------------------------------------------------
# random kinematic trees (MjSpec)
# --------------------------------------------------------------------------


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tree=kinematic_trees(), seed=st.integers(0, 2**31 - 1))
def test_random_trees_match_mj_forward(tree, seed):
    m = build_tree(tree)
    state = random_states(m, 30, seed)
    bodies = list(range(1, m.nbody))
    sites = list(range(m.nsite))
    sensors = list(range(m.nsensor))
    ref = expected_outputs(m, state, bodies, 1, sites)
    plan, out = run(m, state, "auto", bodies=bodies, rel=1, sites=sites, sensors=sensors)
    assert plan.engine == "fast"
    _assert_within_tolerances(m, sensors, out, ref)
