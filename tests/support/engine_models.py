"""Models of the fast-engine tests: a zoo of every covered sensor kind,
frame and reference, a deep chain without a free joint, a Go1-like quadruped
with tracking sensors and two models with uncovered sensors (random
kinematic trees: support.random_trees)."""

from __future__ import annotations

import functools

import mujoco

S = mujoco.mjtSensor
OBJ = mujoco.mjtObj

_ZOO_BODIES = """
    <site name="world_site" pos="0.3 -0.2 0.1" quat="0.9 0.1 0.3 -0.2"/>
    <camera name="world_cam" pos="0.5 -1 0.4" xyaxes="1 0 0 0 0.6 0.8"/>
    <geom name="floor" type="plane" size="2 2 .1"/>
    <body name="base" pos="0 0 1" quat="0.9 0.1 -0.1 0.2">
      <freejoint name="root"/>
      <inertial pos="0.02 -0.01 0.03" quat="0.9 0.2 0.1 0.3" mass="3" diaginertia="0.1 0.2 0.3"/>
      <geom name="base_geom" type="box" size=".2 .1 .05" pos="0.01 0.02 0" quat="0.8 0 0.6 0"/>
      <site name="base_site" pos="0.1 0 0.05" quat="0.8 0.1 -0.2 0.3"/>
      <site name="base_origin"/>
      <camera name="base_cam" pos="0.1 0.05 0.02" quat="0.7 0.1 0.7 -0.1"/>
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
            <camera name="hand_cam" pos="0.02 0.01 -0.03" quat="0.8 0.2 -0.3 0.1"/>
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

_FRAME_TYPES = (
    "framepos",
    "framequat",
    "framexaxis",
    "frameyaxis",
    "framezaxis",
    "framelinvel",
    "frameangvel",
)
# (objtype, objname) and (reftype, refname) combinations of the zoo.
_ZOO_OBJECTS = (
    ("xbody", "hand"),
    ("camera", "hand_cam"),
    ("camera", "world_cam"),
    ("body", "hand"),
    ("site", "hand_site"),
    ("geom", "hand_geom"),
    ("site", "world_site"),
    ("xbody", "target"),
    ("xbody", "foot"),
    ("xbody", "pend2"),
)
_ZOO_REFS = (
    None,
    ("xbody", "arm1"),
    ("body", "leg"),
    ("site", "base_site"),
    ("geom", "base_geom"),
    ("site", "world_site"),
    ("xbody", "target2"),
    ("camera", "base_cam"),
)


def _zoo_sensors() -> str:
    lines = []
    k = 0
    for objtype, objname in _ZOO_OBJECTS:
        for ref in _ZOO_REFS:
            for ftype in _FRAME_TYPES:
                refattr = "" if ref is None else f' reftype="{ref[0]}" refname="{ref[1]}"'
                lines.append(
                    f'<{ftype} name="s{k}" objtype="{objtype}" objname="{objname}"{refattr}/>'
                )
                k += 1
    # every moving body, world frame, body and inertial frames
    for b in (
        "base",
        "arm1",
        "arm2",
        "hand",
        "leg",
        "shin",
        "foot",
        "tail",
        "tail_tip",
        "pendulum",
        "pend2",
        "fixed",
    ):
        for objtype in ("xbody", "body"):
            for ftype in ("framepos", "framequat", "framelinvel", "frameangvel"):
                lines.append(f'<{ftype} objtype="{objtype}" objname="{b}"/>')
    for site in (
        "base_site",
        "base_origin",
        "arm2_site",
        "hand_site",
        "foot_site",
        "fixed_site",
        "target_site",
        "world_site",
    ):
        lines.append(f'<velocimeter site="{site}"/><gyro site="{site}"/>')
    for j in (
        "arm1_hinge",
        "arm2_slide",
        "arm2_hinge",
        "arm2_hinge_b",
        "wrist_hinge",
        "wrist_slide",
        "knee",
        "tail_slide",
        "pend_hinge",
        "pend2_hinge",
        "pend2_slide",
    ):
        lines.append(f'<jointpos joint="{j}"/><jointvel joint="{j}"/>')
    for j in ("wrist_ball", "leg_ball"):
        lines.append(f'<ballquat joint="{j}"/><ballangvel joint="{j}"/>')
    for b in ("base", "arm2", "hand", "leg", "pendulum", "fixed", "world", "target"):
        lines.append(
            f'<subtreecom body="{b}"/><subtreelinvel body="{b}"/><subtreeangmom body="{b}"/>'
        )
    for site in ("hand_site", "world_site", "foot_site"):
        lines.append(f'<magnetometer site="{site}"/>')
    # world frame sensors of sites that share the body's frame or rotation
    for site in ("base_origin", "arm2_site", "foot_site"):
        for ftype in _FRAME_TYPES:
            lines.append(f'<{ftype} objtype="site" objname="{site}"/>')
    for t in ("t_arm", "t_leg", "t_pend"):
        lines.append(f'<tendonpos tendon="{t}"/><tendonvel tendon="{t}"/>')
    for a in (
        "a_hinge",
        "a_slide",
        "a_ball",
        "a_ball_parent",
        "a_free",
        "a_free_parent",
        "a_tendon",
    ):
        lines.append(f'<actuatorpos actuator="{a}"/><actuatorvel actuator="{a}"/>')
    lines.append('<clock name="clock"/>')
    # cutoffs (MuJoCo refuses them on quaternion and axis data)
    lines.append('<framelinvel name="cut_linvel" objtype="xbody" objname="hand" cutoff="0.3"/>')
    lines.append('<framepos name="cut_pos" objtype="site" objname="hand_site" cutoff="0.2"/>')
    lines.append('<framequat name="hand_quat" objtype="xbody" objname="hand"/>')
    lines.append('<jointvel name="cut_jvel" joint="knee" cutoff="0.5"/>')
    lines.append('<gyro name="cut_gyro" site="hand_site" cutoff="0.4"/>')
    lines.append('<subtreecom name="cut_com" body="base" cutoff="0.05"/>')
    lines.append('<clock name="cut_clock" cutoff="0.5"/>')
    lines.append('<subtreeangmom name="cut_angmom" body="base" cutoff="0.5"/>')
    lines.append('<tendonvel name="cut_tvel" tendon="t_arm" cutoff="0.3"/>')
    return "\n    ".join(lines)


def zoo_xml() -> str:
    """The zoo: every covered sensor type on every frame/reference combination
    (fixed cameras included), subtree sensors, fixed tendons, actuators on
    every covered transmission, cutoffs, free, ball, hinge and slide joints,
    mocap bodies."""
    # armature keeps the mass matrix regular (MuJoCo warns otherwise)
    return f"""<mujoco model="zoo">
  <default><joint armature="0.01"/></default>
  <worldbody>{_ZOO_BODIES}
  </worldbody>
  <tendon>
    <fixed name="t_arm"><joint joint="arm1_hinge" coef="0.7"/><joint joint="arm2_slide" coef="-1.3"/>
      <joint joint="wrist_hinge" coef="0.2"/><joint joint="arm2_hinge_b" coef="0.4"/></fixed>
    <fixed name="t_leg"><joint joint="knee" coef="1.1"/><joint joint="tail_slide" coef="0.5"/></fixed>
    <fixed name="t_pend"><joint joint="pend2_slide" coef="2"/><joint joint="pend_hinge" coef="-0.3"/></fixed>
  </tendon>
  <actuator>
    <motor name="a_hinge" joint="knee" gear="1.7"/>
    <motor name="a_slide" joint="wrist_slide" gear="-0.6"/>
    <motor name="a_ball" joint="wrist_ball" gear="0.3 -1.2 0.8 0 0 0"/>
    <general name="a_ball_parent" jointinparent="leg_ball" gear="1.1 0.4 -0.7 0 0 0"/>
    <motor name="a_free" joint="root" gear="0.5 1 -1 0.2 0.3 -0.4"/>
    <general name="a_free_parent" jointinparent="root" gear="-0.5 0.2 1 0.9 -0.3 0.4"/>
    <motor name="a_tendon" tendon="t_arm" gear="2.5"/>
  </actuator>
  <sensor>
    {_zoo_sensors()}
  </sensor>
</mujoco>"""


def chain_xml(n: int = 12) -> str:
    """A deep hinge/slide chain on a hinge root: no free joint anywhere."""
    body = ""
    for i in reversed(range(n)):
        joint = (
            f'<joint name="j{i}" type="slide" axis="0.2 1 0.3"/>'
            if i % 4 == 3
            else f'<joint name="j{i}" axis="{1 + i % 3} {i % 2} 0.5" pos="0.01 {0.02 * (i % 3)} 0"/>'
        )
        body = (
            f'<body name="c{i}" pos="0.1 0.02 {0.01 * i}" quat="0.95 {0.05 * (i % 3)} 0.2 0.1">'
            f'{joint}<geom type="sphere" size="0.02"/>'
            f'<site name="cs{i}" pos="0.05 0 0.01"/>{body}</body>'
        )
    sensors = "".join(
        f'<framepos objtype="xbody" objname="c{i}"/><framelinvel objtype="xbody" objname="c{i}"/>'
        f'<frameangvel objtype="site" objname="cs{i}" reftype="xbody" refname="c0"/>'
        for i in range(n)
    )
    return f"""<mujoco model="chain"><default><joint armature="0.01"/></default><worldbody>{body}</worldbody>
  <sensor>{sensors}</sensor></mujoco>"""


_LEGS = {"FR": (1, -1), "FL": (1, 1), "RR": (-1, -1), "RL": (-1, 1)}
_TRACK_KINDS = (
    ("track_pos_w", "framepos", False),
    ("track_quat_w", "framequat", False),
    ("track_linvel_w", "framelinvel", False),
    ("track_angvel_w", "frameangvel", False),
    ("track_pos_b", "framepos", True),
    ("track_quat_b", "framequat", True),
)


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
        for leg in _LEGS
        for p in ("hip", "thigh", "calf")
    )
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


@functools.cache
def model(name: str) -> mujoco.MjModel:
    """The model case `name` ("zoo", "chain" or "go1like"), compiled once."""
    xml = {"zoo": zoo_xml, "chain": chain_xml, "go1like": go1like_xml}[name]()
    return mujoco.MjModel.from_xml_string(xml)


def tracking_sensors(m: mujoco.MjModel) -> list[int]:
    """Ids of the tracking sensors (named "track_...") of `m`."""
    return [
        i
        for i in range(m.nsensor)
        if (mujoco.mj_id2name(m, OBJ.mjOBJ_SENSOR, i) or "").startswith("track_")
    ]


# Uncovered sensors: a spatial tendon and a frame relative to a tracking
# camera; covered ones: a frame relative to a fixed camera, a fixed tendon.
TENDON_XML = """<mujoco><worldbody>
  <body name="a"><joint name="h" axis="0 1 0"/><geom size=".1"/>
    <site name="s1" pos="0 0 .1"/>
    <body name="b" pos="0 0 -.3"><joint name="h2" axis="0 1 0"/><geom size=".1"/>
      <site name="s2" pos="0 0 -.1"/></body></body>
  <camera name="cam" pos="0 -2 0" xyaxes="1 0 0 0 0 1"/>
  <camera name="trackcam" pos="0 -2 0" xyaxes="1 0 0 0 0 1" mode="track"/>
  </worldbody>
  <tendon><spatial name="t"><site site="s1"/><site site="s2"/></spatial>
    <fixed name="ft"><joint joint="h" coef="0.5"/><joint joint="h2" coef="-1"/></fixed></tendon>
  <sensor><framepos name="p" objtype="xbody" objname="b"/>
    <tendonpos name="tlen" tendon="t"/>
    <framepos name="camrel" objtype="xbody" objname="b" reftype="camera" refname="cam"/>
    <framepos name="trackrel" objtype="xbody" objname="b" reftype="camera" refname="trackcam"/>
    <tendonpos name="flen" tendon="ft"/>
  </sensor></mujoco>"""


# One sensor of every type a refresh computes, on covered and uncovered
# objects (26 of them fast-covered).
MANY_TYPES_XML = """<mujoco><worldbody>
  <body name="a" pos="0 0 1"><freejoint/><geom name="ga" size=".1"/>
    <site name="s1" pos="0 0 .1"/>
    <body name="b" pos="0 0 -.3"><joint name="h2" axis="0 1 0"/><geom name="gb" size=".1"/>
      <site name="s2" pos="0 0 -.1"/></body></body>
  <body name="c" pos="1 0 0"><joint name="ball" type="ball"/><geom size=".1"/></body>
  <camera name="cam" pos="0 -2 0" xyaxes="1 0 0 0 0 1"/>
  <camera name="trackcam" pos="0 -2 0" xyaxes="1 0 0 0 0 1" mode="trackcom"/>
  </worldbody>
  <tendon><spatial name="t"><site site="s1"/><site site="s2"/></spatial>
    <fixed name="ft"><joint joint="h2" coef="2"/></fixed></tendon>
  <actuator><motor name="m" joint="h2"/><motor name="mt" tendon="ft" gear="3"/>
    <motor name="ms" site="s2" gear="0 0 1 0 0 0"/></actuator>
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
    <tendonpos tendon="ft"/><tendonvel tendon="ft"/><actuatorpos actuator="mt"/>
    <actuatorvel actuator="mt"/><actuatorpos actuator="ms"/>
    <framepos objtype="camera" objname="trackcam"/>
  </sensor></mujoco>"""
