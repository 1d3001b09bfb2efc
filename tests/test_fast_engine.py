"""The fast engine (fused selective kinematics) against mj_forward and the
exact engine, on random non-zero states, for every covered output.

References are built once per model case (a Python loop over mj_forward,
copying what each output reads), then compared with the fast engine over
10,000 rows. Tolerances: 1e-12 for poses, 1e-10 for velocities.
"""

from __future__ import annotations

import functools
import warnings

import mujoco
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mjrefresh
from mjrefresh import PlanError

S = mujoco.mjtSensor
OBJ = mujoco.mjtObj
NROWS = 10_000
POS_TOL = 1e-12
VEL_TOL = 1e-10

# --------------------------------------------------------------------------
# models
# --------------------------------------------------------------------------

_ZOO_BODIES = """
    <site name="world_site" pos="0.3 -0.2 0.1" quat="0.9 0.1 0.3 -0.2"/>
    <geom name="floor" type="plane" size="2 2 .1"/>
    <body name="base" pos="0 0 1" quat="0.9 0.1 -0.1 0.2">
      <freejoint name="root"/>
      <inertial pos="0.02 -0.01 0.03" quat="0.9 0.2 0.1 0.3" mass="3" diaginertia="0.1 0.2 0.3"/>
      <geom name="base_geom" type="box" size=".2 .1 .05" pos="0.01 0.02 0" quat="0.8 0 0.6 0"/>
      <site name="base_site" pos="0.1 0 0.05" quat="0.8 0.1 -0.2 0.3"/>
      <site name="base_origin"/>
      <body name="arm1" pos="0.2 0 0" quat="0.7 0.1 0.7 0.1">
        <joint name="arm1_hinge" axis="0.3 0.4 0.5" pos="0.01 0.02 -0.03"/>
        <geom type="capsule" size=".03" fromto="0 0 0 0.3 0 0"/>
        <body name="arm2" pos="0.3 0 0">
          <joint name="arm2_slide" type="slide" axis="1 0.2 0" pos="0 0.05 0"/>
          <joint name="arm2_hinge" axis="0 0 1" pos="0.02 0 0"/>
          <joint name="arm2_hinge_b" axis="0 1 0"/>
          <geom type="capsule" size=".02" fromto="0 0 0 0.2 0 0"/>
          <site name="arm2_site" pos="0.1 0.02 0"/>
          <body name="hand" pos="0.2 0 0.01">
            <inertial pos="0.03 0.01 0" mass="0.3" diaginertia="0.01 0.02 0.03"/>
            <joint name="wrist_hinge" axis="1 0 0" pos="0 0.01 0"/>
            <joint name="wrist_ball" type="ball" pos="0.01 0 0"/>
            <joint name="wrist_slide" type="slide" axis="0 0 1"/>
            <geom name="hand_geom" type="box" size=".02 .03 .04" pos=".03 0 0" quat="0.9 0.2 0.3 0.1"/>
            <site name="hand_site" pos="0.05 0 0" quat="0.9 0 0.4 0"/>
          </body>
        </body>
      </body>
      <body name="leg" pos="-0.2 0 -0.05">
        <joint name="leg_ball" type="ball"/>
        <geom type="capsule" size=".03" fromto="0 0 0 0 0 -0.3"/>
        <body name="shin" pos="0 0 -0.3">
          <joint name="knee" axis="0 1 0" pos="0 0 0.01"/>
          <geom type="capsule" size=".02" fromto="0 0 0 0 0 -0.3"/>
          <body name="foot" pos="0 0 -0.3" quat="0.9 0.3 0 0">
            <geom type="sphere" size="0.03"/>
            <site name="foot_site" pos="0 0.01 -0.02"/>
          </body>
        </body>
      </body>
      <body name="tail" pos="-0.25 0 0">
        <geom type="sphere" size="0.02"/>
        <body name="tail_tip" pos="-0.1 0 0">
          <joint name="tail_slide" type="slide" axis="1 0 0"/>
          <geom type="sphere" size="0.02"/>
        </body>
      </body>
    </body>
    <body name="pendulum" pos="1 1 0.5" quat="0.9 0.1 0.2 0.3">
      <joint name="pend_hinge" axis="1 1 0" pos="0 0 0.1"/>
      <geom type="capsule" size=".02" fromto="0 0 0 0 0 -0.4"/>
      <body name="pend2" pos="0 0 -0.4">
        <joint name="pend2_hinge" axis="0 1 0"/>
        <joint name="pend2_slide" type="slide" axis="0 0 1"/>
        <geom type="sphere" size="0.05"/>
      </body>
    </body>
    <body name="fixed" pos="-1 0 0.2" quat="0.8 0 0 0.6">
      <geom type="box" size=".1 .1 .1"/>
      <site name="fixed_site" pos="0.1 0 0"/>
    </body>
    <body name="target" mocap="true" pos="0.5 0.5 0.5" quat="0.9 0 0.1 0">
      <geom type="sphere" size="0.05" contype="0" conaffinity="0"/>
      <site name="target_site" pos="0 0.1 0"/>
    </body>
    <body name="target2" mocap="true" pos="-0.5 0.5 0.5">
      <geom type="box" size="0.05 0.04 0.03" contype="0" conaffinity="0" pos="0.01 0 0"/>
    </body>
"""

_FRAME_TYPES = ("framepos", "framequat", "framexaxis", "frameyaxis", "framezaxis",
                "framelinvel", "frameangvel")
# (objtype, objname) and (reftype, refname) combinations of the zoo.
_ZOO_OBJECTS = (("xbody", "hand"), ("body", "hand"), ("site", "hand_site"),
                ("geom", "hand_geom"), ("site", "world_site"), ("xbody", "target"),
                ("xbody", "foot"), ("xbody", "pend2"))
_ZOO_REFS = (None, ("xbody", "arm1"), ("body", "leg"), ("site", "base_site"),
             ("geom", "base_geom"), ("site", "world_site"), ("xbody", "target2"))


def _zoo_sensors() -> str:
    lines = []
    k = 0
    for objtype, objname in _ZOO_OBJECTS:
        for ref in _ZOO_REFS:
            for ftype in _FRAME_TYPES:
                refattr = "" if ref is None else f' reftype="{ref[0]}" refname="{ref[1]}"'
                lines.append(f'<{ftype} name="s{k}" objtype="{objtype}" objname="{objname}"{refattr}/>')
                k += 1
    # every moving body, world frame, body and inertial frames
    for b in ("base", "arm1", "arm2", "hand", "leg", "shin", "foot", "tail", "tail_tip",
              "pendulum", "pend2", "fixed"):
        for objtype in ("xbody", "body"):
            for ftype in ("framepos", "framequat", "framelinvel", "frameangvel"):
                lines.append(f'<{ftype} objtype="{objtype}" objname="{b}"/>')
    for site in ("base_site", "base_origin", "arm2_site", "hand_site", "foot_site",
                 "fixed_site", "target_site", "world_site"):
        lines.append(f'<velocimeter site="{site}"/><gyro site="{site}"/>')
    for j in ("arm1_hinge", "arm2_slide", "arm2_hinge", "arm2_hinge_b", "wrist_hinge",
              "wrist_slide", "knee",
              "tail_slide", "pend_hinge", "pend2_hinge", "pend2_slide"):
        lines.append(f'<jointpos joint="{j}"/><jointvel joint="{j}"/>')
    for j in ("wrist_ball", "leg_ball"):
        lines.append(f'<ballquat joint="{j}"/><ballangvel joint="{j}"/>')
    for b in ("base", "arm2", "hand", "leg", "pendulum", "fixed", "world"):
        lines.append(f'<subtreecom body="{b}"/>')
    lines.append('<clock name="clock"/>')
    # cutoffs (MuJoCo refuses them on quaternion and axis data)
    lines.append('<framelinvel name="cut_linvel" objtype="xbody" objname="hand" cutoff="0.3"/>')
    lines.append('<framepos name="cut_pos" objtype="site" objname="hand_site" cutoff="0.2"/>')
    lines.append('<framequat name="hand_quat" objtype="xbody" objname="hand"/>')
    lines.append('<jointvel name="cut_jvel" joint="knee" cutoff="0.5"/>')
    lines.append('<gyro name="cut_gyro" site="hand_site" cutoff="0.4"/>')
    lines.append('<subtreecom name="cut_com" body="base" cutoff="0.05"/>')
    lines.append('<clock name="cut_clock" cutoff="0.5"/>')
    return "\n    ".join(lines)


def zoo_xml() -> str:
    # armature keeps the mass matrix regular (MuJoCo warns otherwise)
    return f"""<mujoco model="zoo">
  <default><joint armature="0.01"/></default>
  <worldbody>{_ZOO_BODIES}
  </worldbody>
  <sensor>
    {_zoo_sensors()}
  </sensor>
</mujoco>"""


def chain_xml(n: int = 12) -> str:
    """A deep hinge/slide chain on a hinge root: no free joint anywhere."""
    body = ""
    for i in reversed(range(n)):
        joint = (f'<joint name="j{i}" type="slide" axis="0.2 1 0.3"/>' if i % 4 == 3 else
                 f'<joint name="j{i}" axis="{1 + i % 3} {i % 2} 0.5" pos="0.01 {0.02 * (i % 3)} 0"/>')
        body = (f'<body name="c{i}" pos="0.1 0.02 {0.01 * i}" quat="0.95 {0.05 * (i % 3)} 0.2 0.1">'
                f'{joint}<geom type="sphere" size="0.02"/>'
                f'<site name="cs{i}" pos="0.05 0 0.01"/>{body}</body>')
    sensors = "".join(
        f'<framepos objtype="xbody" objname="c{i}"/><framelinvel objtype="xbody" objname="c{i}"/>'
        f'<frameangvel objtype="site" objname="cs{i}" reftype="xbody" refname="c0"/>'
        for i in range(n))
    return f"""<mujoco model="chain"><default><joint armature="0.01"/></default><worldbody>{body}</worldbody>
  <sensor>{sensors}</sensor></mujoco>"""


_LEGS = {"FR": (1, -1), "FL": (1, 1), "RR": (-1, -1), "RL": (-1, 1)}
_TRACK_KINDS = (("track_pos_w", "framepos", False), ("track_quat_w", "framequat", False),
                ("track_linvel_w", "framelinvel", False),
                ("track_angvel_w", "frameangvel", False), ("track_pos_b", "framepos", True),
                ("track_quat_b", "framequat", True))


def go1like_xml() -> str:
    """Floating trunk and 4 legs of 3 hinges; authored sensors then tracking
    sensors (world and trunk-relative pose, world velocity) of all 13 bodies."""
    legs = ""
    for name, (sx, sy) in _LEGS.items():
        legs += f"""
      <body name="{name}_hip" pos="{0.19 * sx} {0.05 * sy} 0">
        <inertial pos="0 {0.01 * sy} 0" mass="0.7" diaginertia="0.001 0.001 0.001"/>
        <joint name="{name}_hip_joint" axis="1 0 0"/>
        <geom type="cylinder" size="0.04 0.02" quat="0.707 0.707 0 0"/>
        <body name="{name}_thigh" pos="0 {0.08 * sy} 0">
          <inertial pos="0 0 -0.03" quat="0.99 0.1 0.02 0" mass="1.0" diaginertia="0.005 0.005 0.001"/>
          <joint name="{name}_thigh_joint" axis="0 1 0"/>
          <geom type="capsule" size="0.02" fromto="0 0 0 0 0 -0.2"/>
          <body name="{name}_calf" pos="0 0 -0.213">
            <inertial pos="0 0 -0.1" mass="0.2" diaginertia="0.002 0.002 0.0001"/>
            <joint name="{name}_calf_joint" axis="0 1 0"/>
            <geom type="capsule" size="0.015" fromto="0 0 0 0 0 -0.2"/>
            <geom type="sphere" size="0.02" pos="0 0 -0.213"/>
            <site name="{name}_foot" pos="0 0 -0.213"/>
          </body>
        </body>
      </body>"""
    bodies = ["trunk"] + [f"{leg}_{p}" for leg in _LEGS for p in ("hip", "thigh", "calf")]
    authored = "".join(
        f'<jointpos joint="{leg}_{p}_joint"/><jointvel joint="{leg}_{p}_joint"/>'
        for leg in _LEGS for p in ("hip", "thigh", "calf"))
    authored += "".join(f'<touch site="{leg}_foot"/>' for leg in _LEGS)
    authored += '<gyro site="imu"/><accelerometer site="imu"/><velocimeter site="imu"/>'
    track = ""
    for kind, stype, rel in _TRACK_KINDS:
        for b in bodies:
            ref = ' reftype="xbody" refname="trunk"' if rel else ""
            track += f'<{stype} name="{kind}/{b}" objtype="xbody" objname="{b}"{ref}/>'
    return f"""<mujoco model="go1like">
  <worldbody>
    <geom type="plane" size="5 5 .1"/>
    <body name="trunk" pos="0 0 0.4">
      <freejoint/>
      <inertial pos="0.01 0 0" mass="5" diaginertia="0.02 0.06 0.07"/>
      <geom type="box" size="0.18 0.05 0.05"/>
      <site name="imu" pos="0.01 0.02 0"/>{legs}
    </body>
  </worldbody>
  <sensor>{authored}{track}</sensor>
</mujoco>"""


@functools.lru_cache(maxsize=None)
def model(name: str) -> mujoco.MjModel:
    xml = {"zoo": zoo_xml, "chain": chain_xml, "go1like": go1like_xml}[name]()
    return mujoco.MjModel.from_xml_string(xml)


def tracking_sensors(m: mujoco.MjModel) -> list[int]:
    return [i for i in range(m.nsensor)
            if (mujoco.mj_id2name(m, OBJ.mjOBJ_SENSOR, i) or "").startswith("track_")]


def fast_sensors(m: mujoco.MjModel) -> list[int]:
    """Every sensor of `m` the fast engine covers (all but the authored
    acceleration-stage ones)."""
    return [i for i in range(m.nsensor) if m.sensor_needstage[i] != mujoco.mjtStage.mjSTAGE_ACC]


# --------------------------------------------------------------------------
# states and references
# --------------------------------------------------------------------------

def random_states(m: mujoco.MjModel, n: int, seed: int) -> dict[str, np.ndarray]:
    """Random non-zero states; quaternions in qpos and mocap are NOT unit
    (MuJoCo normalises them, so must the fast engine)."""
    rng = np.random.default_rng(seed)
    qpos = np.tile(m.qpos0, (n, 1)) + rng.normal(0, 0.7, (n, m.nq))
    for j in range(m.njnt):
        adr = m.jnt_qposadr[j]
        if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
            adr += 3
        if m.jnt_type[j] in (mujoco.mjtJoint.mjJNT_FREE, mujoco.mjtJoint.mjJNT_BALL):
            q = rng.normal(0, 1, (n, 4))
            qpos[:, adr:adr + 4] = q * rng.uniform(0.5, 2.0, (n, 1)) / np.linalg.norm(q, axis=1, keepdims=True)
    state = {
        "qpos": qpos,
        "qvel": rng.normal(0, 1.5, (n, m.nv)),
        "time": rng.uniform(-1, 1, n),
    }
    if m.nmocap:
        state["mocap_pos"] = rng.normal(0, 1, (n, m.nmocap, 3))
        state["mocap_quat"] = rng.normal(0, 1, (n, m.nmocap, 4))
    return state


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.cross(a, b)


def forward_reference(m, state, bodies, rel, sites) -> dict[str, np.ndarray]:
    """What mj_forward puts in the fields each output reads, per row."""
    n = state["qpos"].shape[0]
    d = mujoco.MjData(m)
    xpos = np.empty((n, m.nbody, 3))
    xquat = np.empty((n, m.nbody, 4))
    xmat = np.empty((n, m.nbody, 9))
    cvel = np.empty((n, m.nbody, 6))
    com = np.empty((n, m.nbody, 3))
    site_xpos = np.empty((n, m.nsite, 3))
    site_xmat = np.empty((n, m.nsite, 9))
    sensordata = np.empty((n, m.nsensordata))
    for i in range(n):
        d.qpos[:] = state["qpos"][i]
        d.qvel[:] = state["qvel"][i]
        d.time = state["time"][i]
        if m.nmocap:
            d.mocap_pos[:] = state["mocap_pos"][i]
            d.mocap_quat[:] = state["mocap_quat"][i]
        with warnings.catch_warnings():
            # MuJoCo >= 4 warns about a singular mass matrix (a random tree
            # may repeat a joint axis); dynamics play no part in these outputs.
            warnings.simplefilter("ignore", UserWarning)
            mujoco.mj_forward(m, d)
        xpos[i] = d.xpos
        xquat[i] = d.xquat
        xmat[i] = d.xmat
        cvel[i] = d.cvel
        com[i] = d.subtree_com
        site_xpos[i] = d.site_xpos
        site_xmat[i] = d.site_xmat
        sensordata[i] = d.sensordata
    b = np.asarray(bodies, dtype=int)
    root = m.body_rootid[b]
    # mj_objectVelocity(XBODY, flg_local=0): shift cvel from the subtree CoM
    # of the root to the body origin.
    ang = cvel[:, b, :3]
    lin = cvel[:, b, 3:] - _cross(xpos[:, b] - com[:, root], ang)
    ref = {"body_pos": xpos[:, b], "body_quat": xquat[:, b], "body_linvel": lin,
           "body_angvel": ang, "site_pos": site_xpos[:, list(sites)],
           "site_mat": site_xmat[:, list(sites)], "sensordata": sensordata}
    if rel is not None:
        rmat = xmat[:, rel].reshape(n, 3, 3)
        ref["body_pos_rel"] = np.einsum("nji,nbj->nbi", rmat, xpos[:, b] - xpos[:, rel, None])
        rq = xquat[:, rel] * np.array([1, -1, -1, -1])
        q = xquat[:, b]
        w1, x1, y1, z1 = (rq[:, None, k] for k in range(4))
        w2, x2, y2, z2 = (q[..., k] for k in range(4))
        ref["body_quat_rel"] = np.stack([
            w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
            w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
            w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
            w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2], axis=-1)
    return ref


def velocity_columns(m: mujoco.MjModel, sensor_ids) -> tuple[np.ndarray, np.ndarray]:
    """(position-stage columns, velocity-stage columns) of `sensor_ids`."""
    pos, vel = [], []
    for i in sensor_ids:
        cols = range(m.sensor_adr[i], m.sensor_adr[i] + m.sensor_dim[i])
        (vel if m.sensor_needstage[i] == mujoco.mjtStage.mjSTAGE_VEL else pos).extend(cols)
    return np.asarray(pos, dtype=int), np.asarray(vel, dtype=int)


def run(m, state, engine, *, bodies, rel, sites, sensors, threads=1, dtype=np.float64):
    r = mjrefresh.Refresher(m, bodies=bodies, relative_to=rel, sites=sites, sensors=sensors,
                            num_threads=threads, engine=engine)
    n = state["qpos"].shape[0]
    out = r.outputs(n, dtype=dtype)
    r.refresh(np.arange(n), **state, out=out)
    r.close()
    return r.plan, out


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


@functools.lru_cache(maxsize=None)
def _case_data(name: str):
    m, bodies, rel, sites, sensors = _case(name)
    state = random_states(m, NROWS, seed=len(name))
    rel_id = mujoco.mj_name2id(m, OBJ.mjOBJ_BODY, rel)
    ref = forward_reference(m, state, bodies, rel_id, sites)
    plan, out = run(m, state, "fast", bodies=bodies, rel=rel, sites=sites, sensors=sensors)
    return m, bodies, rel, sites, sensors, state, ref, plan, out


def _max_err(a, b) -> float:
    return float(np.max(np.abs(np.asarray(a, dtype=np.float64) - b))) if np.size(a) else 0.0


# --------------------------------------------------------------------------
# parity
# --------------------------------------------------------------------------

@pytest.mark.parametrize("name", CASES)
def test_fast_matches_mj_forward(name):
    m, bodies, rel, sites, sensors, state, ref, plan, out = _case_data(name)
    assert plan.engine == "fast"
    for key in ("body_pos", "body_quat", "body_pos_rel", "body_quat_rel", "site_pos", "site_mat"):
        assert _max_err(getattr(out, key), ref[key]) <= POS_TOL, key
    for key in ("body_linvel", "body_angvel"):
        assert _max_err(getattr(out, key), ref[key]) <= VEL_TOL, key
    pos_cols, vel_cols = velocity_columns(m, sensors)
    assert _max_err(out.sensordata[:, pos_cols], ref["sensordata"][:, pos_cols]) <= POS_TOL
    assert _max_err(out.sensordata[:, vel_cols], ref["sensordata"][:, vel_cols]) <= VEL_TOL


@pytest.mark.parametrize("name", CASES)
def test_fast_matches_exact_engine(name):
    m, bodies, rel, sites, sensors, state, ref, plan, out = _case_data(name)
    exact_plan, exact = run(m, state, "exact", bodies=bodies, rel=rel, sites=sites,
                            sensors=sensors)
    assert exact_plan.engine == "exact"
    for key in ("body_pos", "body_quat", "body_pos_rel", "body_quat_rel", "site_pos", "site_mat"):
        assert _max_err(getattr(out, key), getattr(exact, key)) <= POS_TOL, key
    for key in ("body_linvel", "body_angvel"):
        assert _max_err(getattr(out, key), getattr(exact, key)) <= VEL_TOL, key
    pos_cols, vel_cols = velocity_columns(m, sensors)
    assert _max_err(out.sensordata[:, pos_cols], exact.sensordata[:, pos_cols]) <= POS_TOL
    assert _max_err(out.sensordata[:, vel_cols], exact.sensordata[:, vel_cols]) <= VEL_TOL


def test_zoo_covers_every_sensor_kind_and_cutoff():
    """The zoo exercises every covered sensor type, frame type and cutoff,
    so the parity tests above are not vacuous."""
    m = model("zoo")
    types = {int(t) for t in m.sensor_type}
    covered = {S.mjSENS_FRAMEPOS, S.mjSENS_FRAMEQUAT, S.mjSENS_FRAMEXAXIS, S.mjSENS_FRAMEYAXIS,
               S.mjSENS_FRAMEZAXIS, S.mjSENS_FRAMELINVEL, S.mjSENS_FRAMEANGVEL,
               S.mjSENS_VELOCIMETER, S.mjSENS_GYRO, S.mjSENS_JOINTPOS, S.mjSENS_JOINTVEL,
               S.mjSENS_BALLQUAT, S.mjSENS_BALLANGVEL, S.mjSENS_SUBTREECOM, S.mjSENS_CLOCK}
    assert {int(t) for t in covered} <= types
    *_, state, ref, _, out = _case_data("zoo")
    for name in ("cut_linvel", "cut_pos", "cut_jvel", "cut_gyro", "cut_com", "cut_clock"):
        i = mujoco.mj_name2id(m, OBJ.mjOBJ_SENSOR, name)
        cols = slice(m.sensor_adr[i], m.sensor_adr[i] + m.sensor_dim[i])
        cut = m.sensor_cutoff[i]
        assert np.any(np.abs(ref["sensordata"][:, cols]) == cut), name  # clipping happened
        assert np.all(np.abs(out.sensordata[:, cols]) <= cut), name


def test_float32_outputs_match_float64():
    m, bodies, rel, sites, sensors, state, ref, plan, out = _case_data("zoo")
    small = {k: v[:500] for k, v in state.items()}
    _, out32 = run(m, small, "fast", bodies=bodies, rel=rel, sites=sites, sensors=sensors,
                   dtype=np.float32)
    for key, a in out32.arrays().items():
        assert a.dtype == np.float32
        np.testing.assert_array_equal(a, getattr(out, key)[:500].astype(np.float32))


def test_thread_count_does_not_change_results():
    m, bodies, rel, sites, sensors, state, ref, plan, out = _case_data("go1like")
    small = {k: v[:2000] for k, v in state.items()}
    _, out2 = run(m, small, "fast", bodies=bodies, rel=rel, sites=sites, sensors=sensors,
                  threads=2)
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
    r = mjrefresh.Refresher(m, bodies=bodies, relative_to=rel, sites=sites, sensors=sensors,
                            num_threads=1, engine="fast")
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
    sensors = [i for i in range(m.nsensor)
               if m.sensor_type[i] == S.mjSENS_FRAMELINVEL and m.sensor_objtype[i] == OBJ.mjOBJ_SITE
               and m.sensor_objid[i] == hand_site]
    hand = mujoco.mj_name2id(m, OBJ.mjOBJ_BODY, "hand")
    ref = forward_reference(m, state, [hand], None, [world_site, hand_site])
    plan, out = run(m, state, "fast", bodies=["hand"], rel=None,
                    sites=["world_site", "hand_site"], sensors=sensors)
    assert plan.engine == "fast"
    assert _max_err(out.body_pos, ref["body_pos"]) <= POS_TOL
    assert _max_err(out.body_linvel, ref["body_linvel"]) <= VEL_TOL
    assert _max_err(out.site_pos, ref["site_pos"]) <= POS_TOL
    assert _max_err(out.site_mat, ref["site_mat"]) <= POS_TOL
    _, vel_cols = velocity_columns(m, sensors)
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
    r = mjrefresh.Refresher(m, bodies=["hand"], relative_to="base", sensor_ranges=ranges,
                            num_threads=1, engine="fast")
    ref = mjrefresh.Refresher(m, bodies=["hand"], relative_to="base", sensor_ranges=ranges,
                              num_threads=1, engine="exact")
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
    backing[:, :m.nq] = state["qpos"]
    backing[:, m.nq:m.nq + m.nv] = state["qvel"]
    big = np.full((200, m.nsensordata + 11), 3.0)
    r = mjrefresh.Refresher(m, sensors=sensors, num_threads=2, engine="fast")
    out = r.outputs(200, sensordata=big[:, 5:5 + m.nsensordata])
    r.refresh(np.arange(200), backing[:, :m.nq], backing[:, m.nq:m.nq + m.nv], out)
    _, expect = run(m, state, "exact", bodies=(), rel=None, sites=(), sensors=sensors)
    cols = np.concatenate([np.arange(m.sensor_adr[i], m.sensor_adr[i] + m.sensor_dim[i])
                           for i in sensors])
    assert _max_err(big[:, 5:5 + m.nsensordata][:, cols], expect.sensordata[:, cols]) <= VEL_TOL
    assert np.all(big[:, :5] == 3.0) and np.all(big[:, 5 + m.nsensordata:] == 3.0)


def test_large_hinge_angles():
    """Hinge angles far outside [-pi, pi] (the fast engine reduces them itself
    up to 1e5 rad and hands larger ones to libm)."""
    m = model("chain")
    state = random_states(m, 2000, seed=11)
    rng = np.random.default_rng(12)
    hinge = [m.jnt_qposadr[j] for j in range(m.njnt) if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE]
    for k, scale in enumerate((30.0, 5e3, 1.5e5, 1e8)):
        rows = slice(500 * k, 500 * (k + 1))
        state["qpos"][rows, hinge] = rng.uniform(-scale, scale, (500, len(hinge)))
    bodies = list(range(1, m.nbody))
    ref = forward_reference(m, state, bodies, None, list(range(m.nsite)))
    plan, out = run(m, state, "fast", bodies=bodies, rel=None, sites=list(range(m.nsite)),
                    sensors=None)
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
    plan, out = run(m, state, "fast", bodies=list(range(1, m.nbody)), rel="arm2",
                    sites=list(range(m.nsite)), sensors=fast_sensors(m))
    assert np.isnan(out.body_pos[3]).any()
    assert np.all(np.isfinite(out.body_pos[[0, 1, 2, 4, 5]]))
    ref = forward_reference(m, {k: v[5:6] for k, v in state.items()}, list(range(1, m.nbody)),
                            mujoco.mj_name2id(m, OBJ.mjOBJ_BODY, "arm2"), list(range(m.nsite)))
    assert _max_err(out.body_quat[5:6], ref["body_quat"]) <= POS_TOL


# --------------------------------------------------------------------------
# engine choice
# --------------------------------------------------------------------------

def test_auto_picks_fast_for_tracking_models():
    m = model("go1like")
    r = mjrefresh.Refresher(m, bodies=list(range(1, m.nbody)), relative_to="trunk",
                            sensors=tracking_sensors(m), num_threads=1)
    assert r.plan.engine == "fast"
    assert "auto" in r.plan.engine_reason
    assert "engine: fast" in r.plan.describe()
    r.close()


def test_auto_picks_fast_for_embedded_models():
    models = pytest.importorskip("mjrefresh.models")
    for build in (models.quadruped, models.humanoid):
        m = build()
        r = mjrefresh.Refresher(m, bodies=list(range(1, m.nbody)), relative_to=1,
                                sensors=tracking_sensors(m), num_threads=1)
        assert r.plan.engine == "fast", r.plan.engine_reason
        r.close()


_TENDON_XML = """<mujoco><worldbody>
  <body name="a"><joint name="h" axis="0 1 0"/><geom size=".1"/>
    <site name="s1" pos="0 0 .1"/>
    <body name="b" pos="0 0 -.3"><joint name="h2" axis="0 1 0"/><geom size=".1"/>
      <site name="s2" pos="0 0 -.1"/></body></body>
  <camera name="cam" pos="0 -2 0" xyaxes="1 0 0 0 0 1"/>
  </worldbody>
  <tendon><spatial name="t"><site site="s1"/><site site="s2"/></spatial></tendon>
  <sensor><framepos name="p" objtype="xbody" objname="b"/>
    <tendonpos name="tlen" tendon="t"/>
    <framepos name="camrel" objtype="xbody" objname="b" reftype="camera" refname="cam"/>
  </sensor></mujoco>"""


def test_auto_routes_uncovered_sensors_to_exact():
    m = mujoco.MjModel.from_xml_string(_TENDON_XML)
    r = mjrefresh.Refresher(m, bodies=["b"], sensors=["p", "tlen"], num_threads=1)
    assert r.plan.engine == "exact"
    assert "'tlen'" in r.plan.engine_reason and "tendonpos" in r.plan.engine_reason
    r.close()
    r = mjrefresh.Refresher(m, sensors=["camrel"], num_threads=1)
    assert r.plan.engine == "exact" and "camera" in r.plan.engine_reason
    r.close()
    r = mjrefresh.Refresher(m, bodies=["b"], sensors=["p"], num_threads=1)
    assert r.plan.engine == "fast"
    r.close()


def test_fast_rejects_uncovered_sensor_by_name():
    m = mujoco.MjModel.from_xml_string(_TENDON_XML)
    with pytest.raises(PlanError, match=r"engine='fast'.*'tlen' \(tendonpos\)"):
        mjrefresh.Refresher(m, sensors=["p", "tlen"], engine="fast")
    with pytest.raises(PlanError, match="camera"):
        mjrefresh.Refresher(m, sensors=["camrel"], engine="fast")


_MANY_TYPES_XML = """<mujoco><worldbody>
  <body name="a" pos="0 0 1"><freejoint/><geom name="ga" size=".1"/>
    <site name="s1" pos="0 0 .1"/>
    <body name="b" pos="0 0 -.3"><joint name="h2" axis="0 1 0"/><geom name="gb" size=".1"/>
      <site name="s2" pos="0 0 -.1"/></body></body>
  <body name="c" pos="1 0 0"><joint name="ball" type="ball"/><geom size=".1"/></body>
  <camera name="cam" pos="0 -2 0" xyaxes="1 0 0 0 0 1"/>
  </worldbody>
  <tendon><spatial name="t"><site site="s1"/><site site="s2"/></spatial></tendon>
  <actuator><motor name="m" joint="h2"/></actuator>
  <sensor>
    <framepos objtype="xbody" objname="b"/><framequat objtype="body" objname="b" reftype="geom" refname="ga"/>
    <framexaxis objtype="geom" objname="gb"/><frameyaxis objtype="site" objname="s2"/>
    <framezaxis objtype="xbody" objname="b" reftype="site" refname="s1"/>
    <framelinvel objtype="site" objname="s2" reftype="body" refname="a"/>
    <frameangvel objtype="geom" objname="gb" reftype="xbody" refname="a"/>
    <velocimeter site="s2"/><gyro site="s1"/><jointpos joint="h2"/><jointvel joint="h2"/>
    <ballquat joint="ball"/><ballangvel joint="ball"/><subtreecom body="a"/><clock/>
    <magnetometer site="s1"/><rangefinder site="s1"/><tendonpos tendon="t"/><tendonvel tendon="t"/>
    <actuatorpos actuator="m"/><actuatorvel actuator="m"/><subtreelinvel body="a"/>
    <subtreeangmom body="a"/><camprojection site="s2" camera="cam"/>
    <framepos objtype="camera" objname="cam"/>
    <framelinvel objtype="xbody" objname="b" reftype="camera" refname="cam"/>
  </sensor></mujoco>"""


def test_python_and_native_coverage_rules_agree():
    """For each sensor alone: the planner's rule (plan.fast_uncovered) and the
    native engine's (fast_uncovered in cpp/fast/coverage.cc) accept the same ones."""
    from mjrefresh import _native, plan as plan_mod

    m = mujoco.MjModel.from_xml_string(_MANY_TYPES_XML)
    covered = 0
    for i in range(m.nsensor):
        why = plan_mod.fast_uncovered(m, [i])
        adr, dim = int(m.sensor_adr[i]), int(m.sensor_dim[i])
        config = _native.core.Config()
        config.columns = [(adr, adr + dim)]
        config.sensors = [i]
        config.engine = _native.core.EngineKind.fast
        args = (m._address, config)
        if why is None:
            covered += 1
            _native.core.Refresher(*args).close()
            r = mjrefresh.Refresher(m, sensors=[i], num_threads=1, engine="fast")
            assert r.plan.engine == "fast"
            r.close()
        else:
            with pytest.raises(ValueError, match="engine 'fast'"):
                _native.core.Refresher(*args)
            with pytest.raises(PlanError):
                mjrefresh.Refresher(m, sensors=[i], num_threads=1, engine="fast")
    assert covered == 15


def test_exact_when_requested_and_when_sensors_are_disabled():
    m = model("go1like")
    r = mjrefresh.Refresher(m, sensors=tracking_sensors(m), num_threads=1, engine="exact")
    assert r.plan.engine == "exact" and "requested" in r.plan.engine_reason
    r.close()
    m2 = mujoco.MjModel.from_xml_string(go1like_xml())
    m2.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_SENSOR
    r = mjrefresh.Refresher(m2, sensors=tracking_sensors(m2), num_threads=1)
    assert r.plan.engine == "exact" and "mjDSBL_SENSOR" in r.plan.engine_reason
    r.close()
    # bodies only: sensors being disabled does not matter
    r = mjrefresh.Refresher(m2, bodies=["trunk"], num_threads=1)
    assert r.plan.engine == "fast"
    r.close()


# --------------------------------------------------------------------------
# random kinematic trees (MjSpec)
# --------------------------------------------------------------------------

_JOINT_TYPES = (mujoco.mjtJoint.mjJNT_HINGE, mujoco.mjtJoint.mjJNT_SLIDE, mujoco.mjtJoint.mjJNT_BALL)


@st.composite
def kinematic_trees(draw):
    nbody = draw(st.integers(1, 7))
    vec = st.lists(st.floats(-0.5, 0.5, allow_nan=False, width=32), min_size=3, max_size=3)
    quat = st.lists(st.floats(-1, 1, allow_nan=False, width=32), min_size=4, max_size=4).filter(
        lambda q: sum(x * x for x in q) > 0.1)
    axis = vec.filter(lambda a: sum(x * x for x in a) > 0.01)
    bodies = []
    for i in range(nbody):
        parent = draw(st.integers(-1, i - 1))  # -1: world
        free = parent == -1 and draw(st.booleans())
        joints = [] if free else draw(st.lists(
            st.tuples(st.sampled_from(_JOINT_TYPES), axis, vec), max_size=3))
        # MuJoCo allows no rotation after a ball joint in the same body
        ball = [k for k, j in enumerate(joints) if j[0] == mujoco.mjtJoint.mjJNT_BALL]
        if ball:
            joints = joints[:ball[0] + 1] + [j for j in joints[ball[0] + 1:]
                                             if j[0] == mujoco.mjtJoint.mjJNT_SLIDE]
        bodies.append(dict(parent=parent, pos=draw(vec), quat=draw(quat), free=free,
                           joints=joints, ipos=draw(vec), site=draw(vec)))
    return bodies


def build_tree(bodies) -> mujoco.MjModel:
    spec = mujoco.MjSpec()
    made = []
    for i, b in enumerate(bodies):
        parent = spec.worldbody if b["parent"] < 0 else made[b["parent"]]
        body = parent.add_body(name=f"b{i}", pos=b["pos"], quat=b["quat"])
        if b["free"]:
            body.add_freejoint()
        for k, (jtype, ax, pos) in enumerate(b["joints"]):
            body.add_joint(name=f"j{i}_{k}", type=jtype, axis=ax, pos=pos, armature=0.01)
        body.add_geom(type=mujoco.mjtGeom.mjGEOM_SPHERE, size=[0.05, 0, 0], pos=b["ipos"])
        body.add_site(name=f"s{i}", pos=b["site"])
        made.append(body)
    for i in range(len(bodies)):
        for stype in (S.mjSENS_FRAMEPOS, S.mjSENS_FRAMEQUAT, S.mjSENS_FRAMELINVEL,
                      S.mjSENS_FRAMEANGVEL):
            spec.add_sensor(type=stype, objtype=OBJ.mjOBJ_XBODY, objname=f"b{i}")
            spec.add_sensor(type=stype, objtype=OBJ.mjOBJ_SITE, objname=f"s{i}",
                            reftype=OBJ.mjOBJ_BODY, refname=f"b{len(bodies) - 1 - i}")
        spec.add_sensor(type=S.mjSENS_SUBTREECOM, objtype=OBJ.mjOBJ_BODY, objname=f"b{i}")
    with warnings.catch_warnings():
        # compiling runs the dynamics once: see forward_reference
        warnings.simplefilter("ignore", UserWarning)
        return spec.compile()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tree=kinematic_trees(), seed=st.integers(0, 2**31 - 1))
def test_random_trees_match_mj_forward(tree, seed):
    m = build_tree(tree)
    state = random_states(m, 30, seed)
    bodies = list(range(1, m.nbody))
    sites = list(range(m.nsite))
    sensors = list(range(m.nsensor))
    ref = forward_reference(m, state, bodies, 1, sites)
    plan, out = run(m, state, "auto", bodies=bodies, rel=1, sites=sites, sensors=sensors)
    assert plan.engine == "fast"
    for key in ("body_pos", "body_quat", "body_pos_rel", "body_quat_rel", "site_pos", "site_mat"):
        assert _max_err(getattr(out, key), ref[key]) <= POS_TOL, key
    for key in ("body_linvel", "body_angvel"):
        assert _max_err(getattr(out, key), ref[key]) <= VEL_TOL, key
    pos_cols, vel_cols = velocity_columns(m, sensors)
    assert _max_err(out.sensordata[:, pos_cols], ref["sensordata"][:, pos_cols]) <= POS_TOL
    assert _max_err(out.sensordata[:, vel_cols], ref["sensordata"][:, vel_cols]) <= VEL_TOL
