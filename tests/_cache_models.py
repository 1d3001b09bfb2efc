"""Test models and a real-MuJoCo reference for the StateCache/backend tests."""

from __future__ import annotations

import mujoco
import numpy as np

# A floating base with a two-link leg that touches the floor, a tendon, a
# mocap target, and sensors of every stage: tracked frame sensors (world and
# base-relative), velocity sensors that need more than mj_comVel, and
# acceleration-stage sensors (touch, accelerometer, force) that a refresh
# must never touch.
LEGGED_XML = """
<mujoco>
  <option timestep="0.005"/>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 .1"/>
    <body name="target" mocap="true" pos=".3 .2 .6">
      <geom size=".03" contype="0" conaffinity="0"/>
      <site name="target_site"/>
    </body>
    <body name="base" pos="0 0 .45">
      <freejoint name="root"/>
      <geom type="box" size=".15 .08 .04" mass="4"/>
      <site name="imu" pos=".02 0 .01"/>
      <site name="hip_anchor" pos=".1 0 0"/>
      <body name="thigh" pos=".1 0 -.02">
        <joint name="hip" axis="0 1 0" range="-1.5 1.5" damping=".1"/>
        <geom type="capsule" fromto="0 0 0 0 0 -.18" size=".025" mass=".6"/>
        <body name="shin" pos="0 0 -.18">
          <joint name="knee" axis="0 1 0" range="-2.5 0" damping=".1"/>
          <geom type="capsule" fromto="0 0 0 0 0 -.18" size=".02" mass=".3"/>
          <site name="shin_anchor" pos="0 0 -.05"/>
          <body name="foot" pos="0 0 -.18">
            <geom name="foot" type="sphere" size=".025" mass=".1"/>
            <site name="foot" size=".03"/>
          </body>
        </body>
      </body>
      <body name="tail" pos="-.15 0 0">
        <joint name="tail" type="ball" damping=".05"/>
        <geom type="capsule" fromto="0 0 0 -.15 0 .05" size=".02" mass=".2"/>
      </body>
    </body>
  </worldbody>
  <tendon>
    <spatial name="spring">
      <site site="hip_anchor"/>
      <site site="shin_anchor"/>
    </spatial>
  </tendon>
  <actuator>
    <motor name="hip" joint="hip" gear="10"/>
    <motor name="knee" joint="knee" gear="10"/>
    <motor name="pull" tendon="spring" gear="5"/>
  </actuator>
  <sensor>
    <framepos name="foot_pos_w" objtype="xbody" objname="foot"/>
    <framequat name="foot_quat_w" objtype="xbody" objname="foot"/>
    <touch name="foot_touch" site="foot"/>
    <framelinvel name="foot_linvel_w" objtype="xbody" objname="foot"/>
    <frameangvel name="shin_angvel_w" objtype="xbody" objname="shin"/>
    <accelerometer name="imu_acc" site="imu"/>
    <framepos name="foot_pos_b" objtype="xbody" objname="foot" reftype="xbody" refname="base"/>
    <framequat name="tail_quat_b" objtype="xbody" objname="tail" reftype="xbody" refname="base"/>
    <force name="imu_force" site="imu"/>
    <gyro name="imu_gyro" site="imu"/>
    <velocimeter name="imu_vel" site="imu"/>
    <jointpos name="knee_pos" joint="knee"/>
    <jointvel name="knee_vel" joint="knee"/>
    <tendonpos name="spring_len" tendon="spring"/>
    <tendonvel name="spring_vel" tendon="spring"/>
    <actuatorpos name="pull_pos" actuator="pull"/>
    <actuatorvel name="pull_vel" actuator="pull"/>
    <subtreelinvel name="base_subtree_vel" body="base"/>
    <subtreeangmom name="base_angmom" body="base"/>
    <framepos name="target_pos" objtype="site" objname="target_site"/>
  </sensor>
</mujoco>
"""

BODIES = ("base", "thigh", "shin", "foot", "tail")
ACC_SENSORS = ("foot_touch", "imu_acc", "imu_force")


def legged_model() -> mujoco.MjModel:
    return mujoco.MjModel.from_xml_string(LEGGED_XML)


def tracked_sensors(model: mujoco.MjModel) -> list[str]:
    """Every sensor a refresh can compute (all but the acceleration stage)."""
    return [
        model.sensor(i).name
        for i in range(model.nsensor)
        if model.sensor_needstage[i] != mujoco.mjtStage.mjSTAGE_ACC
    ]


def sensor_cols(model: mujoco.MjModel, names) -> np.ndarray:
    cols = []
    for name in names:
        s = model.sensor(name)
        cols.extend(range(int(s.adr[0]), int(s.adr[0] + s.dim[0])))
    return np.array(cols, dtype=np.int64)


def random_state(model: mujoco.MjModel, rng: np.random.Generator, d: mujoco.MjData) -> None:
    """A random non-zero state (unit quaternions, non-trivial velocities)."""
    mujoco.mj_resetData(model, d)
    d.qpos[:] = model.qpos0 + rng.normal(scale=0.2, size=model.nq)
    for j in range(model.njnt):
        adr = model.jnt_qposadr[j]
        if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
            d.qpos[adr + 2] = 0.38 + rng.uniform(-0.03, 0.03)
            q = np.array([1.0, 0, 0, 0]) + rng.normal(scale=0.15, size=4)
            d.qpos[adr + 3 : adr + 7] = q / np.linalg.norm(q)
        elif model.jnt_type[j] == mujoco.mjtJoint.mjJNT_BALL:
            q = rng.normal(size=4)
            d.qpos[adr : adr + 4] = q / np.linalg.norm(q)
    d.qvel[:] = rng.normal(scale=1.0, size=model.nv)
    if model.nmocap:
        d.mocap_pos[:] = rng.normal(scale=0.3, size=d.mocap_pos.shape)
        q = rng.normal(size=(model.nmocap, 4))
        d.mocap_quat[:] = q / np.linalg.norm(q, axis=1, keepdims=True)


class ArrayBackend:
    """A toy batched backend: state in (N, ...) arrays, physics by real mj_step.

    Each env has a persistent MjData (so warmstarts and contacts carry over,
    like a real backend). After a step the backend's arrays hold the new state
    and the step's sensordata: acceleration-stage sensors from that physics
    solve, position/velocity ones one substep stale, as with mj_step.
    """

    def __init__(self, model: mujoco.MjModel, n: int, seed: int = 0) -> None:
        self.model = model
        self.n = n
        self.rng = np.random.default_rng(seed)
        self.datas = [mujoco.MjData(model) for _ in range(n)]
        self.qpos = np.zeros((n, model.nq))
        self.qvel = np.zeros((n, model.nv))
        self.mocap_pos = np.zeros((n, model.nmocap, 3))
        self.mocap_quat = np.zeros((n, model.nmocap, 4))
        self.time = np.zeros(n)
        self.sensordata = np.zeros((n, model.nsensordata))
        for i, d in enumerate(self.datas):
            random_state(model, self.rng, d)
            mujoco.mj_forward(model, d)
            self._save(i)

    def _save(self, i: int) -> None:
        d = self.datas[i]
        self.qpos[i] = d.qpos
        self.qvel[i] = d.qvel
        self.mocap_pos[i] = d.mocap_pos
        self.mocap_quat[i] = d.mocap_quat
        self.time[i] = d.time
        self.sensordata[i] = d.sensordata

    def step(self, rows=None, nsub: int = 2) -> None:
        rows = range(self.n) if rows is None else rows
        for i in rows:
            d = self.datas[i]
            d.ctrl[:] = self.rng.uniform(-1, 1, size=self.model.nu)
            for _ in range(nsub):
                mujoco.mj_step(self.model, d)
            self._save(i)

    def reset(self, rows) -> None:
        """Reset rows to a new random state and run mj_forward (backend-side)."""
        for i in rows:
            d = self.datas[i]
            random_state(self.model, self.rng, d)
            mujoco.mj_forward(self.model, d)
            self._save(i)

    def write_state(self, rows) -> None:
        """Write new qpos/qvel into the arrays without any forward."""
        for i in rows:
            self.qpos[i] += self.rng.normal(scale=0.05, size=self.model.nq)
            self.qvel[i] += self.rng.normal(scale=0.5, size=self.model.nv)
            self.datas[i].qpos[:] = self.qpos[i]
            self.datas[i].qvel[:] = self.qvel[i]


class Reference:
    """What mj_forward gives at a row's state, in the cache's output layout."""

    def __init__(self, model: mujoco.MjModel, bodies, relative_to=None, sites=()) -> None:
        self.model = model
        self.body_ids = [model.body(b).id for b in bodies]
        self.rel = None if relative_to is None else model.body(relative_to).id
        self.site_ids = [model.site(s).id for s in sites]
        self.d = mujoco.MjData(model)

    def __call__(self, qpos, qvel, mocap_pos=None, mocap_quat=None, time=0.0) -> dict:
        m, d = self.model, self.d
        mujoco.mj_resetData(m, d)
        d.qpos[:] = qpos
        d.qvel[:] = qvel
        if m.nmocap:
            d.mocap_pos[:] = mocap_pos
            d.mocap_quat[:] = mocap_quat
        d.time = float(time)
        mujoco.mj_forward(m, d)
        out = {
            "sensordata": d.sensordata.copy(),
            "body_pos": d.xpos[self.body_ids].copy(),
            "body_quat": d.xquat[self.body_ids].copy(),
        }
        lin, ang = [], []
        vel = np.zeros(6)
        for b in self.body_ids:
            mujoco.mj_objectVelocity(m, d, mujoco.mjtObj.mjOBJ_XBODY, b, vel, 0)
            ang.append(vel[:3].copy())
            lin.append(vel[3:].copy())
        out["body_linvel"] = np.array(lin)
        out["body_angvel"] = np.array(ang)
        if self.rel is not None:
            r = self.rel
            rmat = d.xmat[r].reshape(3, 3)
            out["body_pos_rel"] = (d.xpos[self.body_ids] - d.xpos[r]) @ rmat
            neg = np.zeros(4)
            mujoco.mju_negQuat(neg, d.xquat[r])
            quats = []
            for b in self.body_ids:
                q = np.zeros(4)
                mujoco.mju_mulQuat(q, neg, d.xquat[b])
                quats.append(q)
            out["body_quat_rel"] = np.array(quats)
        if self.site_ids:
            out["site_pos"] = d.site_xpos[self.site_ids].copy()
            out["site_mat"] = d.site_xmat[self.site_ids].copy()
        return out

    def rows(self, qpos, qvel, mocap_pos=None, mocap_quat=None, time=None, rows=None) -> dict:
        """Stacked reference outputs for `rows` (default all) of batched state."""
        n = qpos.shape[0]
        rows = range(n) if rows is None else rows
        per = [
            self(
                qpos[i],
                qvel[i],
                None if mocap_pos is None else mocap_pos[i],
                None if mocap_quat is None else mocap_quat[i],
                0.0 if time is None else time[i],
            )
            for i in rows
        ]
        return {k: np.stack([p[k] for p in per]) for k in per[0]}
