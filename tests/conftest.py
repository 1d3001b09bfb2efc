"""Shared fixtures: models that exercise every joint type and every sensor
type a refresh supports, random non-zero states, and mj_forward references."""

from __future__ import annotations

import ctypes
import glob
import os
import shutil
import subprocess

import mujoco
import numpy as np
import pytest

# Free, ball, hinge and slide joints; a body with two joints; a mocap body;
# sites (one on the world); a fixed and a spatial tendon; actuators on
# joints, on a tendon and on a site; a tracking camera; every position- and
# velocity-stage sensor type that a refresh computes, with and without
# reference frames; and acceleration-stage sensors that must stay untouched.
RICH_XML = """
<mujoco model="rich">
  <option timestep="0.002"/>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 0.1"/>
    <site name="world_site" pos="0.3 -0.2 0.5" quat="0.9 0.1 0.3 0.2"/>
    <camera name="fixed_cam" pos="2 0 1" xyaxes="0 1 0 -0.4 0 1"/>
    <body name="base" pos="0 0 1">
      <freejoint name="root"/>
      <geom name="torso" type="box" size="0.2 0.1 0.05" mass="3"/>
      <site name="imu" pos="0.05 0.02 0.03" quat="0.8 0.2 -0.1 0.3"/>
      <camera name="track_cam" pos="0.3 0 0.2" mode="targetbody" target="arm2"/>
      <body name="arm1" pos="0.2 0 0">
        <joint name="hinge1" type="hinge" axis="0 1 0" pos="-0.05 0 0"/>
        <geom name="arm1_geom" type="capsule" fromto="0 0 0 0.2 0 0" size="0.03"/>
        <site name="arm1_tip" pos="0.2 0 0"/>
        <body name="arm2" pos="0.2 0 0" quat="0.95 0 0.3 0">
          <joint name="slide2" type="slide" axis="1 0 0"/>
          <joint name="hinge2" type="hinge" axis="0 0 1"/>
          <geom name="arm2_geom" type="capsule" fromto="0 0 0 0.15 0 0" size="0.025"/>
          <site name="arm2_tip" pos="0.15 0.01 0" quat="0.7 0.7 0 0"/>
        </body>
      </body>
      <body name="ball_link" pos="-0.2 0 0" quat="0.9 0.2 0.2 0.3">
        <joint name="ball" type="ball"/>
        <geom name="ball_geom" type="sphere" size="0.05" pos="0 0 -0.1"/>
        <site name="ball_site" pos="0 0 -0.15"/>
        <body name="fixed_child" pos="0 0.1 -0.1" quat="0.6 0.8 0 0">
          <geom name="fixed_geom" type="box" size="0.02 0.03 0.04"/>
        </body>
      </body>
    </body>
    <body name="target" mocap="true" pos="1 1 0.5" quat="0.9 0 0.3 0.3">
      <geom name="target_geom" type="sphere" size="0.05" contype="0" conaffinity="0"/>
      <site name="target_site" pos="0 0 0.1"/>
    </body>
  </worldbody>
  <tendon>
    <fixed name="fixed_tendon">
      <joint joint="hinge1" coef="1.0"/>
      <joint joint="hinge2" coef="-0.5"/>
    </fixed>
    <spatial name="spatial_tendon">
      <site site="imu"/>
      <site site="arm1_tip"/>
      <site site="arm2_tip"/>
    </spatial>
  </tendon>
  <actuator>
    <position name="act_hinge1" joint="hinge1" kp="10"/>
    <motor name="act_slide2" joint="slide2"/>
    <motor name="act_tendon" tendon="spatial_tendon"/>
    <motor name="act_site" site="arm2_tip" gear="0 0 1 0 0 0"/>
  </actuator>
  <sensor>
    <touch name="touch" site="ball_site"/>
    <accelerometer name="accel" site="imu"/>
    <force name="force" site="arm1_tip"/>
    <framepos name="fp_xbody" objtype="xbody" objname="arm2"/>
    <framepos name="fp_body_ref_site" objtype="body" objname="arm2" reftype="site" refname="imu"/>
    <framequat name="fq_site" objtype="site" objname="arm2_tip"/>
    <framequat name="fq_geom_ref_xbody" objtype="geom" objname="arm1_geom" reftype="xbody" refname="base"/>
    <framexaxis name="fx_body" objtype="body" objname="ball_link"/>
    <frameyaxis name="fy_site_ref_geom" objtype="site" objname="ball_site" reftype="geom" refname="torso"/>
    <framezaxis name="fz_xbody_ref_body" objtype="xbody" objname="fixed_child" reftype="body" refname="arm1"/>
    <framepos name="fp_cam" objtype="camera" objname="track_cam"/>
    <framepos name="fp_mocap" objtype="xbody" objname="target" reftype="xbody" refname="base"/>
    <framepos name="fp_world_site" objtype="site" objname="world_site" reftype="xbody" refname="arm2"/>
    <framelinvel name="flv_xbody" objtype="xbody" objname="arm2"/>
    <framelinvel name="flv_site_ref_xbody" objtype="site" objname="arm2_tip" reftype="xbody" refname="base"/>
    <frameangvel name="fav_body" objtype="body" objname="ball_link"/>
    <frameangvel name="fav_geom_ref_site" objtype="geom" objname="arm2_geom" reftype="site" refname="imu"/>
    <framelinvel name="flv_cam" objtype="camera" objname="track_cam"/>
    <velocimeter name="velocimeter" site="imu"/>
    <gyro name="gyro" site="imu"/>
    <magnetometer name="magnetometer" site="arm2_tip"/>
    <jointpos name="jp_hinge1" joint="hinge1"/>
    <jointpos name="jp_slide2" joint="slide2"/>
    <jointvel name="jv_hinge2" joint="hinge2"/>
    <ballquat name="ballquat" joint="ball"/>
    <ballangvel name="ballangvel" joint="ball"/>
    <tendonpos name="tp_fixed" tendon="fixed_tendon"/>
    <tendonpos name="tp_spatial" tendon="spatial_tendon"/>
    <tendonvel name="tv_fixed" tendon="fixed_tendon"/>
    <tendonvel name="tv_spatial" tendon="spatial_tendon"/>
    <actuatorpos name="ap_hinge1" actuator="act_hinge1"/>
    <actuatorpos name="ap_tendon" actuator="act_tendon"/>
    <actuatorpos name="ap_site" actuator="act_site"/>
    <actuatorvel name="av_slide2" actuator="act_slide2"/>
    <actuatorvel name="av_tendon" actuator="act_tendon"/>
    <actuatorvel name="av_site" actuator="act_site"/>
    <subtreecom name="subtreecom" body="arm1"/>
    <subtreelinvel name="subtreelinvel" body="base"/>
    <subtreeangmom name="subtreeangmom" body="arm1"/>
    <clock name="clock"/>
    <camprojection name="camproj" site="arm2_tip" camera="fixed_cam"/>
    <rangefinder name="rangefinder" site="ball_site"/>
    <framepos name="fp_cutoff" objtype="xbody" objname="arm2" cutoff="0.1"/>
    <jointvel name="jv_cutoff" joint="hinge1" cutoff="0.05"/>
    <actuatorfrc name="actuatorfrc" actuator="act_hinge1"/>
  </sensor>
</mujoco>
"""

ACC_SENSORS = ("touch", "accel", "force", "actuatorfrc")


@pytest.fixture(scope="session")
def rich_model() -> mujoco.MjModel:
    return mujoco.MjModel.from_xml_string(RICH_XML)


def pos_vel_sensor_names(model: mujoco.MjModel) -> list[str]:
    """Every position/velocity-stage sensor of `model`, by name."""
    names = []
    for i in range(model.nsensor):
        if int(model.sensor_needstage[i]) in (
            mujoco.mjtStage.mjSTAGE_POS,
            mujoco.mjtStage.mjSTAGE_VEL,
        ):
            names.append(mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_SENSOR, i))
    return names


def sensor_columns(model: mujoco.MjModel, name: str) -> slice:
    i = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SENSOR, name)
    adr = int(model.sensor_adr[i])
    return slice(adr, adr + int(model.sensor_dim[i]))


def random_states(model: mujoco.MjModel, n: int, seed: int = 0) -> dict[str, np.ndarray]:
    """Random non-zero states: qpos around qpos0 with random unit quaternions,
    random qvel, random mocap poses and times."""
    rng = np.random.default_rng(seed)
    qpos = np.tile(model.qpos0, (n, 1)) + rng.normal(scale=0.5, size=(n, model.nq))
    for j in range(model.njnt):
        adr = int(model.jnt_qposadr[j])
        jtype = int(model.jnt_type[j])
        if jtype == mujoco.mjtJoint.mjJNT_FREE:
            q = rng.normal(size=(n, 4))
            qpos[:, adr + 3 : adr + 7] = q / np.linalg.norm(q, axis=1, keepdims=True)
        elif jtype == mujoco.mjtJoint.mjJNT_BALL:
            q = rng.normal(size=(n, 4))
            qpos[:, adr : adr + 4] = q / np.linalg.norm(q, axis=1, keepdims=True)
    qvel = rng.normal(scale=1.5, size=(n, model.nv))
    mocap_pos = rng.normal(size=(n, model.nmocap, 3))
    mq = rng.normal(size=(n, model.nmocap, 4))
    mocap_quat = mq / np.linalg.norm(mq, axis=2, keepdims=True)
    time = rng.uniform(0, 10, size=n)
    return {
        "qpos": qpos,
        "qvel": qvel,
        "mocap_pos": mocap_pos,
        "mocap_quat": mocap_quat,
        "time": time,
    }


class Reference:
    """mj_forward at each row's state: the values a refresh must reproduce."""

    def __init__(self, model: mujoco.MjModel, states: dict[str, np.ndarray]) -> None:
        n = states["qpos"].shape[0]
        data = mujoco.MjData(model)
        self.sensordata = np.empty((n, model.nsensordata))
        self.xpos = np.empty((n, model.nbody, 3))
        self.xquat = np.empty((n, model.nbody, 4))
        self.xmat = np.empty((n, model.nbody, 9))
        self.vel = np.empty((n, model.nbody, 6))
        self.site_xpos = np.empty((n, model.nsite, 3))
        self.site_xmat = np.empty((n, model.nsite, 9))
        for r in range(n):
            data.qpos[:] = states["qpos"][r]
            data.qvel[:] = states["qvel"][r]
            if model.nmocap:
                data.mocap_pos[:] = states["mocap_pos"][r]
                data.mocap_quat[:] = states["mocap_quat"][r]
            data.time = states["time"][r]
            mujoco.mj_forward(model, data)
            self.sensordata[r] = data.sensordata
            self.xpos[r] = data.xpos
            self.xquat[r] = data.xquat
            self.xmat[r] = data.xmat
            self.site_xpos[r] = data.site_xpos
            self.site_xmat[r] = data.site_xmat
            for b in range(model.nbody):
                mujoco.mj_objectVelocity(
                    model, data, mujoco.mjtObj.mjOBJ_XBODY, b, self.vel[r, b], 0
                )


@pytest.fixture(scope="session")
def rich_states(rich_model: mujoco.MjModel) -> dict[str, np.ndarray]:
    return random_states(rich_model, 64, seed=1)


@pytest.fixture(scope="session")
def rich_reference(rich_model: mujoco.MjModel, rich_states: dict[str, np.ndarray]) -> Reference:
    return Reference(rich_model, rich_states)


# A real mju_error source on worker threads: a passive-force callback compiled
# from C at test time and installed in MuJoCo's global mjcb_passive slot. A
# refresh that runs mj_fwdVelocity (a tendonvel sensor) calls it on the
# worker threads; it calls mju_error for rows whose qpos[0] is > 100.
FAILING_PASSIVE_C = r"""
#include <mujoco/mujoco.h>
void failing_passive(const mjModel* m, mjData* d) {
  if (d->qpos[0] > 100) mju_error("crafted failure at qpos[0]=%g", d->qpos[0]);
}
"""
LIBMUJOCO = glob.glob(os.path.join(os.path.dirname(mujoco.__file__), "libmujoco.so.*"))[0]


@pytest.fixture(scope="session")
def failing_passive_address(tmp_path_factory) -> int:
    """Address of the compiled failing callback (skips without a C compiler)."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler to build the failing callback")
    tmp = tmp_path_factory.mktemp("cb")
    src = tmp / "fail.c"
    src.write_text(FAILING_PASSIVE_C)
    so = tmp / "libfail.so"
    include = os.path.join(os.path.dirname(mujoco.__file__), "include")
    subprocess.run(
        [cc, "-shared", "-fPIC", "-O1", "-I", include, str(src), "-o", str(so), LIBMUJOCO],
        check=True,
    )
    lib = ctypes.CDLL(str(so))
    return ctypes.cast(lib.failing_passive, ctypes.c_void_p).value


@pytest.fixture()
def failing_passive_installed(failing_passive_address):
    """The failing callback in mjcb_passive for the duration of one test."""
    slot = ctypes.c_void_p.in_dll(ctypes.CDLL(LIBMUJOCO), "mjcb_passive")
    saved = slot.value
    slot.value = failing_passive_address
    try:
        yield
    finally:
        slot.value = saved
