"""Velocities of frames on dof-less weld roots (world, static, mocap bodies)
follow mj_objectVelocity's quick return: exact zeros, before the pose is
read, so even a non-finite pose gives 0 (both engines, both releases)."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
from support.oracle import forward_with_model_fields

import mjrefresh

XML = """<mujoco><worldbody>
 <site name="world_site" pos=".1 .2 .3"/>
 <body name="static" pos="0 0 1"><geom name="sg" size=".1"/><site name="ss" pos=".1 0 0"/>
  <body name="static_child" pos="0 .2 0"><site name="sc"/></body></body>
 <body name="mocap" mocap="true" pos="1 0 0"><site name="ms" pos="0 .1 0"/>
  <body name="mocap_child" pos="0 0 .2"><site name="mc"/></body></body>
 <body name="moving" pos="0 1 0"><joint name="h" axis="0 0 1"/><geom size=".05"/>
  <site name="mv" pos=".1 0 0"/></body>
 </worldbody>
 <sensor>
  <framelinvel name="lin_ss" objtype="site" objname="ss"/>
  <frameangvel name="ang_ss" objtype="site" objname="ss"/>
  <velocimeter name="vel_ss" site="ss"/><gyro name="gyro_ss" site="ss"/>
  <framelinvel name="lin_sc" objtype="site" objname="sc"/>
  <framelinvel name="lin_geom" objtype="geom" objname="sg"/>
  <framelinvel name="lin_xbody" objtype="xbody" objname="static_child"/>
  <framelinvel name="lin_ms" objtype="site" objname="ms"/>
  <velocimeter name="vel_mc" site="mc"/>
  <framelinvel name="lin_mv" objtype="site" objname="mv"/>
 </sensor></mujoco>"""

STILL = [
    "lin_ss",
    "ang_ss",
    "vel_ss",
    "gyro_ss",
    "lin_sc",
    "lin_geom",
    "lin_xbody",
    "lin_ms",
    "vel_mc",
]


@pytest.mark.parametrize("engine", ["fast", "exact"])
@pytest.mark.parametrize("field", ["site_pos", "body_pos"])
def test_non_finite_pose_on_dof_less_bodies_gives_zero_velocity(engine, field):
    m = mujoco.MjModel.from_xml_string(XML)
    n = 6
    rng = np.random.default_rng(2)
    qpos = rng.normal(size=(n, m.nq))
    qvel = rng.normal(size=(n, m.nv))
    mocap_pos = np.tile(m.body_pos[m.body("mocap").id], (n, 1, 1))
    mocap_quat = np.tile([1.0, 0, 0, 0], (n, m.nmocap, 1))
    mocap_pos[1] = np.nan  # a non-finite mocap pose
    vals = np.tile(getattr(m, field), (n, 1, 1))
    vals[2:, :] = np.nan  # non-finite per-row poses of every site / body
    vals[4:, :] = np.inf
    r = mjrefresh.Refresher(
        m,
        sensors=[*STILL, "lin_mv"],
        engine=engine,
        model_fields=[field],
        bodies=["static", "static_child", "mocap", "mocap_child"],
    )
    out = r.outputs(n)
    r.refresh(
        np.arange(n),
        qpos,
        qvel,
        out,
        mocap_pos=mocap_pos,
        mocap_quat=mocap_quat,
        model_fields={field: vals},
    )
    states = {"qpos": qpos, "qvel": qvel, "mocap_pos": mocap_pos, "mocap_quat": mocap_quat}
    for row in range(n):
        mm, d, vel = forward_with_model_fields(m, states, {field: vals}, row)
        for name in STILL:
            s = m.sensor(name)
            got = out.sensordata[row, s.adr[0] : s.adr[0] + s.dim[0]]
            want = d.sensordata[s.adr[0] : s.adr[0] + s.dim[0]]
            assert np.array_equal(want, np.zeros(3)), (name, want)  # MuJoCo's quick return
            assert np.array_equal(got, want), (engine, field, row, name, got)
        ids = [m.body(b).id for b in ("static", "static_child", "mocap", "mocap_child")]
        assert np.array_equal(out.body_linvel[row], vel[ids, 3:]), (engine, row)
        assert np.array_equal(out.body_angvel[row], vel[ids, :3]), (engine, row)


@pytest.mark.parametrize("engine", ["fast", "exact"])
def test_world_children_copy_their_pose_like_mj_kinematics(engine):
    # mj_kinematics copies mocap_pos/quat (and body_pos/quat) of a body whose
    # parent is the world: one non-finite component stays in its place.
    m = mujoco.MjModel.from_xml_string(XML)
    n = 3
    mocap_pos = np.tile(m.body_pos[m.body("mocap").id], (n, 1, 1))
    mocap_pos[:, 0, 1] = [np.nan, np.inf, 0.5]
    mocap_quat = np.tile([1.0, 0, 0, 0], (n, m.nmocap, 1))
    body_pos = np.tile(m.body_pos, (n, 1, 1))
    body_pos[:, m.body("static").id, 0] = [np.nan, -np.inf, 0.25]
    qpos = np.zeros((n, m.nq))
    qvel = np.zeros((n, m.nv))
    r = mjrefresh.Refresher(
        m, engine=engine, bodies=["mocap", "static"], sites=["ms", "ss"], model_fields=["body_pos"]
    )
    out = r.outputs(n)
    r.refresh(
        np.arange(n),
        qpos,
        qvel,
        out,
        mocap_pos=mocap_pos,
        mocap_quat=mocap_quat,
        model_fields={"body_pos": body_pos},
    )
    states = {"qpos": qpos, "qvel": qvel, "mocap_pos": mocap_pos, "mocap_quat": mocap_quat}
    for row in range(n):
        _, d, _ = forward_with_model_fields(m, states, {"body_pos": body_pos}, row)
        ids = [m.body("mocap").id, m.body("static").id]
        np.testing.assert_array_equal(out.body_pos[row], d.xpos[ids])
        np.testing.assert_array_equal(out.body_quat[row], d.xquat[ids])


@pytest.mark.parametrize("engine", ["fast", "exact"])
def test_zero_hinge_angle_ignores_a_non_finite_axis(engine):
    # mju_axisAngle2Quat returns the unit quaternion for a zero angle before
    # reading the axis: a non-finite per-row jnt_axis leaves the pose finite
    # at qpos0 (and makes it NaN elsewhere), in both engines, single rows,
    # pairs and quads alike.
    m = mujoco.MjModel.from_xml_string(XML.replace('axis="0 0 1"', 'axis="0 .6 .8"'))
    n = 20  # one call: quads or pairs (see below)
    qpos = np.zeros((n, m.nq))
    qpos[np.isin(np.arange(n) % 5, [1, 3]), 0] = 0.3  # rows 1, 3, 6, 8, ...
    axes = np.tile(m.jnt_axis, (n, 1, 1))
    axes[:, 0, 1] = [np.nan, np.nan, np.inf, 0.6, np.nan] * 4
    r = mjrefresh.Refresher(
        m, engine=engine, bodies=["moving"], sites=["mv"], model_fields=["jnt_axis"]
    )
    out = r.outputs(n)
    mocap = {
        "mocap_pos": np.tile(m.body_pos[m.body("mocap").id], (n, 1, 1)),
        "mocap_quat": np.tile([1.0, 0, 0, 0], (n, m.nmocap, 1)),
    }
    r.refresh(
        np.arange(n), qpos, np.zeros((n, m.nv)), out, model_fields={"jnt_axis": axes}, **mocap
    )
    states = {"qpos": qpos, "qvel": np.zeros((n, m.nv)), **mocap}
    b = m.body("moving").id
    for row in range(n):
        _, d, _ = forward_with_model_fields(m, states, {"jnt_axis": axes}, row)
        got = (out.body_quat[row, 0], out.body_pos[row, 0], out.site_pos[row, 0])
        want = (d.xquat[b], d.xpos[b], d.site_xpos[m.site("mv").id])
        for g, w in zip(got, want, strict=True):
            # Same non-finite pattern; finite values to the fast engine's rounding.
            np.testing.assert_allclose(g, w, rtol=0, atol=0 if engine == "exact" else 1e-12)
    assert np.isfinite(out.body_quat[[0, 2, 4]]).all() and np.isnan(out.body_quat[1]).all()


# A world-welded body whose geoms sit at infinite positions: its inertial
# position is infinite, yet mj_subtreeVel takes its velocity from
# mj_objectVelocity's quick return (zeros), so its subtree's linear momentum
# and velocity are exact zeros; the angular momentum, which multiplies the
# infinite offsets, is NaN in both.
NON_FINITE_XML = """<mujoco><worldbody>
 <body name="w" pos="0 0 1"><geom size=".1" pos="inf 0 0" mass="1"/>
  <body name="c"><geom size=".1" pos="inf -inf 0"/></body></body>
 <body name="f"><freejoint/><geom size=".1"/></body></worldbody>
 <sensor><subtreelinvel name="sl" body="w"/><subtreelinvel name="slc" body="c"/>
  <subtreeangmom name="sa" body="w"/><subtreecom name="sc" body="w"/>
  <subtreelinvel name="sl0" body="world"/></sensor></mujoco>"""


@pytest.mark.parametrize("engine", ["fast", "exact"])
# One thread takes up to 64 rows per chunk (refresher.cc) and runs them in
# SIMD quads (the fast engine's AVX2 build) or pairs, the rest of a chunk
# in a pair and a single row: 5 rows are a quad and a single (two pairs and
# a single in the baseline build), 2 a pair, 1 a single row.
@pytest.mark.parametrize("n", [1, 2, 5, 17])  # single rows, SIMD pairs and quads
def test_subtree_of_a_dof_less_body_with_non_finite_geometry(engine, n):
    m = mujoco.MjModel.from_xml_string(NON_FINITE_XML)
    assert not np.isfinite(m.body_ipos[m.body("w").id]).all()
    rng = np.random.default_rng(4)
    qpos = np.tile(m.qpos0, (n, 1))
    qvel = rng.normal(size=(n, m.nv))
    names = ["sl", "slc", "sa", "sc", "sl0"]
    r = mjrefresh.Refresher(m, sensors=names, engine=engine)
    out = r.outputs(n)
    r.refresh(np.arange(n), qpos, qvel, out)
    for row in range(n):
        d = mujoco.MjData(m)
        d.qpos[:], d.qvel[:] = qpos[row], qvel[row]
        mujoco.mj_forward(m, d)
        np.testing.assert_array_equal(d.sensordata[:3], 0.0)  # MuJoCo: exact zeros
        np.testing.assert_array_equal(out.sensordata[row], d.sensordata, err_msg=engine)
