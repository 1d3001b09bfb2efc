"""Every test model: MJCF strings and builders, by what they exercise.

Models that are the subject of one single test stay inline in that test."""

from __future__ import annotations

import mujoco

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

RICH_ACC_SENSORS = ("touch", "accel", "force", "actuatorfrc")
RICH_BODIES = ("base", "arm1", "arm2", "ball_link", "fixed_child", "target")


def rich_model() -> mujoco.MjModel:
    """The model of RICH_XML."""
    return mujoco.MjModel.from_xml_string(RICH_XML)


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

LEGGED_BODIES = ("base", "thigh", "shin", "foot", "tail")
LEGGED_ACC_SENSORS = ("foot_touch", "imu_acc", "imu_force")


def legged_model() -> mujoco.MjModel:
    """The model of LEGGED_XML."""
    return mujoco.MjModel.from_xml_string(LEGGED_XML)


# One free body: a model of another shape than the others (nq=7, nv=6).
FREE_BODY_XML = "<mujoco><worldbody><body><freejoint/><geom size='.1'/></body></worldbody></mujoco>"

# A free body "a" (site "s") with a hinged child "b": the small models of the
# argument-checking, hostile-input and soak tests, each with its own sensors.
_TWO_LINK_BODIES = """
  <body name="a" pos="0 0 1"><freejoint/><geom size=".1"/><site name="s"/>
    <body name="b" pos=".2 0 0"><joint axis="0 1 0"/><geom size=".05"/></body></body>"""


def two_link_xml(sensors: str, extra_bodies: str = "") -> str:
    """MJCF of the two-link body with `sensors` (and `extra_bodies` after it)."""
    return (
        f"<mujoco><worldbody>{_TWO_LINK_BODIES}{extra_bodies}\n  </worldbody>"
        f"<sensor>{sensors}</sensor></mujoco>"
    )


# Argument checks: a position, a velocity, a clock and an acceleration sensor.
BAD_INPUT_XML = two_link_xml(
    '<framepos name="fp" objtype="xbody" objname="b"/><gyro name="gyro" site="s"/>'
    '<clock name="clock"/><accelerometer name="acc" site="s"/>'
)
# Hostile input: a mocap body too.
HOSTILE_XML = two_link_xml(
    '<framepos objtype="xbody" objname="b"/><gyro site="s"/>'
    '<framepos objtype="xbody" objname="mc"/>',
    '\n  <body name="mc" mocap="true"><geom size=".1" contype="0" conaffinity="0"/></body>',
)
# Soak: a position, a velocity and a lazily computed subtree sensor.
SOAK_XML = two_link_xml(
    '<framepos objtype="xbody" objname="b"/><gyro site="s"/><subtreelinvel body="a"/>'
)

# Threads and lifecycle: three links (joint 1 is the one corrupted to make
# mj_kinematics fail).
THREE_LINK_XML = """<mujoco><worldbody>
  <body name="a" pos="0 0 1"><freejoint/><geom size=".1"/><site name="s"/>
    <body name="b" pos=".2 0 0"><joint axis="0 1 0"/><geom size=".05"/>
      <body name="c" pos=".2 0 0"><joint axis="1 0 0"/><geom size=".05"/></body></body></body>
  </worldbody><sensor><framepos objtype="xbody" objname="c"/><gyro site="s"/>
  <subtreeangmom body="a"/></sensor></mujoco>"""


# mju_error on worker threads: a tendonvel sensor makes a refresh run
# mj_fwdVelocity, hence the passive-force callback (see support.callbacks).
TENDON_VEL_XML = """<mujoco><worldbody>
  <body name="a" pos="0 0 1"><freejoint/><geom size=".1"/><site name="s0"/>
    <body name="b" pos=".2 0 0"><joint name="j" axis="0 1 0"/><geom size=".05"/>
      <site name="s1" pos=".1 0 0"/></body></body></worldbody>
  <tendon><spatial name="t"><site site="s0"/><site site="s1"/></spatial></tendon>
  <sensor><tendonvel name="tv" tendon="t"/><framepos name="fp" objtype="xbody" objname="b"/></sensor>
</mujoco>"""


# Planning: every kind of object a sensor can read; `{sensors}` is filled in.
PLAN_BASE_XML = """<mujoco><worldbody>
  <body name="a" pos="0 0 1"><freejoint/><geom size=".1"/><site name="s"/>
    <body name="b" pos=".2 0 0"><joint name="j" axis="0 1 0" range="-1 1" limited="true"/>
      <geom size=".05"/><site name="tip" pos=".1 0 0"/></body></body>
  <camera name="cam" pos="1 0 0" xyaxes="0 1 0 0 0 1"/>
  </worldbody>
  <tendon><fixed name="t" limited="true" range="-1 1"><joint joint="j" coef="1"/></fixed></tendon>
  <actuator><motor name="m" joint="j"/><motor name="mt" tendon="t"/></actuator>
  <sensor>{sensors}</sensor></mujoco>"""


def plan_model(sensors: str) -> mujoco.MjModel:
    """PLAN_BASE_XML with `sensors` (MJCF sensor elements)."""
    return mujoco.MjModel.from_xml_string(PLAN_BASE_XML.format(sensors=sensors))
