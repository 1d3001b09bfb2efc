"""Embedded example models, built with :class:`mujoco.MjSpec`.

Two robots shaped like the ones the refresh was designed for, built in code so
that no robot files or downloads are needed:

* :func:`quadruped` -- a Go1/Go2-like quadruped: a floating ``base`` and four
  legs (``FL``, ``FR``, ``RL``, ``RR``) of three hinges each (13 moving bodies,
  about 12.7 kg);
* :func:`humanoid` -- a G1-like humanoid: a floating ``pelvis``, 6-hinge legs,
  a 3-hinge waist and 7-hinge arms (30 moving bodies, 29 hinges, about 33 kg).

Both are "materialised" the way a batched RL collector materialises its model:
the authored sensors come first (joint positions and velocities, an IMU, foot
touch sensors, ...), followed by tracking sensors for every moving body, in
contiguous blocks of one kind each, in this order::

    track_pos_w    framepos     of the body frame (xbody), world frame
    track_quat_w   framequat    of the body frame, world frame
    track_linvel_w framelinvel  of the body frame, world frame
    track_angvel_w frameangvel  of the body frame, world frame
    track_pos_b    framepos     relative to the base body frame
    track_quat_b   framequat    relative to the base body frame

Each tracking sensor is named ``f"{kind}/{body_name}"``, e.g.
``track_pos_w/FL_calf``. :func:`tracking_layout` returns the column ranges.

For the quadruped the authored sensors occupy columns 0:68 and the tracking
block columns 68:328 (13 bodies x 20 columns), the layout of a typical
tracking-reward collector on a Go1-class robot (119 sensors: reaching 68
authored columns with 1-column foot touch sensors needs several small ones).

This module imports only numpy, mujoco and the standard library and works with
MuJoCo 3.11 and 4.0.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import mujoco
import numpy as np

__all__ = [
    "TRACKING_KINDS",
    "TrackingLayout",
    "quadruped_spec",
    "quadruped",
    "humanoid_spec",
    "humanoid",
    "tracking_layout",
    "MODELS",
]

#: Tracking sensor kinds in block order: (kind, mjtSensor type, dim, relative to the base body).
TRACKING_KINDS: tuple[tuple[str, int, int, bool], ...] = (
    ("track_pos_w", int(mujoco.mjtSensor.mjSENS_FRAMEPOS), 3, False),
    ("track_quat_w", int(mujoco.mjtSensor.mjSENS_FRAMEQUAT), 4, False),
    ("track_linvel_w", int(mujoco.mjtSensor.mjSENS_FRAMELINVEL), 3, False),
    ("track_angvel_w", int(mujoco.mjtSensor.mjSENS_FRAMEANGVEL), 3, False),
    ("track_pos_b", int(mujoco.mjtSensor.mjSENS_FRAMEPOS), 3, True),
    ("track_quat_b", int(mujoco.mjtSensor.mjSENS_FRAMEQUAT), 4, True),
)

_GEOM = mujoco.mjtGeom
_SENS = mujoco.mjtSensor
_OBJ = mujoco.mjtObj

_X = (1.0, 0.0, 0.0)
_Y = (0.0, 1.0, 0.0)
_Z = (0.0, 0.0, 1.0)


# ----------------------------------------------------------------------------
# spec helpers
# ----------------------------------------------------------------------------


def _new_spec(name: str) -> mujoco.MjSpec:
    """A spec with radians, implicitfast integration, and a lit floor plane."""
    spec = mujoco.MjSpec()
    spec.modelname = name
    spec.compiler.degree = False
    spec.compiler.autolimits = True
    spec.option.timestep = 0.002
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    spec.worldbody.add_light(name="sun", pos=[0, 0, 3], dir=[0, 0, -1])
    spec.worldbody.add_geom(
        name="floor",
        type=_GEOM.mjGEOM_PLANE,
        size=[0, 0, 0.05],
        rgba=[0.8, 0.8, 0.8, 1],
        friction=[1.0, 0.005, 0.0001],
    )
    return spec


def _collision(body: mujoco.MjsBody, name: str, mass: float, **kwargs) -> mujoco.MjsGeom:
    """A mass-carrying collision geom (group 3)."""
    return body.add_geom(name=name, mass=mass, group=3, contype=1, conaffinity=1, **kwargs)


def _visual(body: mujoco.MjsBody, rgba: Sequence[float], **kwargs) -> mujoco.MjsGeom:
    """A massless, non-colliding visual geom (group 2)."""
    return body.add_geom(mass=0.0, group=2, contype=0, conaffinity=0, rgba=list(rgba), **kwargs)


def _hinge_body(
    parent: mujoco.MjsBody,
    name: str,
    pos: Sequence[float],
    axis: Sequence[float],
    joint_range: tuple[float, float],
    *,
    armature: float = 0.01,
    damping: float = 0.1,
) -> mujoco.MjsBody:
    """A child body with one hinge named ``f"{name}_joint"``."""
    body = parent.add_body(name=name, pos=list(pos))
    body.add_joint(
        name=f"{name}_joint",
        type=mujoco.mjtJoint.mjJNT_HINGE,
        axis=list(axis),
        range=list(joint_range),
        armature=armature,
        damping=damping,
    )
    return body


def _add_position_actuator(
    spec: mujoco.MjSpec, joint: str, kp: float, kv: float, force: float, ctrlrange
) -> None:
    act = spec.add_actuator(
        name=joint.removesuffix("_joint"), target=joint, trntype=mujoco.mjtTrn.mjTRN_JOINT
    )
    act.set_to_position(kp=kp, kv=kv)
    act.ctrlrange = list(ctrlrange)
    act.forcerange = [-force, force]


def _sensor(
    spec: mujoco.MjSpec, name: str, stype, objtype, objname: str, reftype=None, refname: str = ""
) -> None:
    kwargs = dict(name=name, type=stype, objtype=objtype, objname=objname)
    if reftype is not None:
        kwargs.update(reftype=reftype, refname=refname)
    spec.add_sensor(**kwargs)


def _add_joint_sensors(spec: mujoco.MjSpec, joints: Sequence[str]) -> None:
    for j in joints:
        _sensor(spec, f"jointpos/{j}", _SENS.mjSENS_JOINTPOS, _OBJ.mjOBJ_JOINT, j)
    for j in joints:
        _sensor(spec, f"jointvel/{j}", _SENS.mjSENS_JOINTVEL, _OBJ.mjOBJ_JOINT, j)


def _add_imu_sensors(spec: mujoco.MjSpec, site: str = "imu") -> None:
    _sensor(spec, "imu_gyro", _SENS.mjSENS_GYRO, _OBJ.mjOBJ_SITE, site)
    _sensor(spec, "imu_acc", _SENS.mjSENS_ACCELEROMETER, _OBJ.mjOBJ_SITE, site)
    _sensor(spec, "imu_linvel", _SENS.mjSENS_VELOCIMETER, _OBJ.mjOBJ_SITE, site)
    _sensor(spec, "imu_quat", _SENS.mjSENS_FRAMEQUAT, _OBJ.mjOBJ_SITE, site)


def _add_tracking_sensors(spec: mujoco.MjSpec, bodies: Sequence[str], base: str) -> None:
    """Six contiguous blocks of tracking sensors, one sensor per body per block."""
    for kind, stype, _dim, relative in TRACKING_KINDS:
        for body in bodies:
            if relative:
                _sensor(
                    spec, f"{kind}/{body}", stype, _OBJ.mjOBJ_XBODY, body, _OBJ.mjOBJ_XBODY, base
                )
            else:
                _sensor(spec, f"{kind}/{body}", stype, _OBJ.mjOBJ_XBODY, body)


def _moving_bodies(spec: mujoco.MjSpec) -> list[str]:
    """Names of the bodies below the world body, depth-first (= compiled order)."""
    return [b.name for b in spec.worldbody.find_all(_OBJ.mjOBJ_BODY)]


def _hinges(spec: mujoco.MjSpec) -> list[str]:
    return [
        j.name
        for j in spec.worldbody.find_all(_OBJ.mjOBJ_JOINT)
        if j.type == mujoco.mjtJoint.mjJNT_HINGE
    ]


# ----------------------------------------------------------------------------
# quadruped
# ----------------------------------------------------------------------------

_LEGS = ("FL", "FR", "RL", "RR")
_QUAD_STAND = (0.0, 0.9, -1.8)  # hip, thigh, calf
_QUAD_BASE_Z = 0.445  # straight legs touch the floor


def quadruped_spec() -> mujoco.MjSpec:
    """Spec of a Go1/Go2-shaped quadruped with materialised tracking sensors.

    Bodies: ``base`` (free joint ``floating_base``) and, per leg ``L`` in FL, FR,
    RL, RR, ``L_hip`` (abduction about x), ``L_thigh`` and ``L_calf`` (about y),
    with hinges ``L_hip_joint``, ``L_thigh_joint``, ``L_calf_joint``. Feet are a
    sphere geom and a site ``L_foot`` on the calf. Position actuators (kp 25)
    named like the links drive the 12 hinges. Sites: ``imu`` on the base.
    Keyframe ``home`` is a standing pose.

    Sensors (119, 328 columns): 12 ``jointpos/*``, 12 ``jointvel/*``,
    ``imu_gyro``, ``imu_acc``, ``imu_linvel``, ``imu_quat``, 4 ``touch/*``,
    4 ``foot_pos/*``, 4 ``foot_linvel/*``, ``com_linvel`` (subtree linear
    velocity of the base) -- columns 0:68 -- then the tracking blocks of the 13
    moving bodies, columns 68:328.
    """
    spec = _new_spec("mjrefresh_quadruped")
    base = spec.worldbody.add_body(name="base", pos=[0, 0, _QUAD_BASE_Z])
    base.add_freejoint(name="floating_base")
    _collision(base, "base_collision", 5.204, type=_GEOM.mjGEOM_BOX, size=[0.1881, 0.04675, 0.057])
    _visual(
        base,
        (0.2, 0.2, 0.2, 1),
        name="base_visual",
        type=_GEOM.mjGEOM_BOX,
        size=[0.19, 0.048, 0.058],
    )
    _visual(
        base,
        (0.3, 0.3, 0.3, 1),
        name="head_visual",
        type=_GEOM.mjGEOM_BOX,
        size=[0.02, 0.04, 0.03],
        pos=[0.2, 0, 0],
    )
    base.add_site(name="imu", pos=[-0.01592, -0.06659, -0.00617])

    hip_range, thigh_range, calf_range = (-0.863, 0.863), (-0.686, 4.501), (-2.818, -0.888)
    for leg in _LEGS:
        sx = 1.0 if leg[0] == "F" else -1.0
        sy = 1.0 if leg[1] == "L" else -1.0
        hip = _hinge_body(base, f"{leg}_hip", (sx * 0.1881, sy * 0.04675, 0), _X, hip_range)
        _collision(
            hip,
            f"{leg}_hip_collision",
            0.680,
            type=_GEOM.mjGEOM_CYLINDER,
            size=[0.046, 0.02, 0],
            pos=[0, sy * 0.045, 0],
            quat=[0.7071068, 0.7071068, 0, 0],
        )
        thigh = _hinge_body(hip, f"{leg}_thigh", (0, sy * 0.08, 0), _Y, thigh_range)
        _collision(
            thigh,
            f"{leg}_thigh_collision",
            1.009,
            type=_GEOM.mjGEOM_CAPSULE,
            fromto=[0, 0, -0.03, 0, 0, -0.18],
            size=[0.025, 0, 0],
        )
        _visual(
            thigh,
            (0.7, 0.7, 0.7, 1),
            name=f"{leg}_thigh_visual",
            type=_GEOM.mjGEOM_BOX,
            size=[0.017, 0.0123, 0.1065],
            pos=[0, 0, -0.1065],
        )
        calf = _hinge_body(thigh, f"{leg}_calf", (0, 0, -0.213), _Y, calf_range)
        _collision(
            calf,
            f"{leg}_calf_collision",
            0.175,
            type=_GEOM.mjGEOM_CAPSULE,
            fromto=[0, 0, -0.02, 0, 0, -0.19],
            size=[0.012, 0, 0],
        )
        _collision(
            calf,
            f"{leg}_foot_collision",
            0.020,
            type=_GEOM.mjGEOM_SPHERE,
            size=[0.022, 0, 0],
            pos=[0, 0, -0.213],
            priority=1,
            condim=3,
        )
        _visual(
            calf,
            (0.1, 0.1, 0.1, 1),
            name=f"{leg}_calf_visual",
            type=_GEOM.mjGEOM_CAPSULE,
            fromto=[0, 0, 0, 0, 0, -0.213],
            size=[0.013, 0, 0],
        )
        calf.add_site(name=f"{leg}_foot", pos=[0, 0, -0.213], size=[0.03, 0, 0])

    joints = _hinges(spec)
    for j in joints:
        lo, hi = {"hip": hip_range, "thigh": thigh_range, "calf": calf_range}[j.split("_")[1]]
        _add_position_actuator(
            spec, j, kp=25.0, kv=0.5, force=35.55 if "calf" in j else 23.7, ctrlrange=(lo, hi)
        )

    _add_joint_sensors(spec, joints)
    _add_imu_sensors(spec)
    for leg in _LEGS:
        _sensor(spec, f"touch/{leg}", _SENS.mjSENS_TOUCH, _OBJ.mjOBJ_SITE, f"{leg}_foot")
    for leg in _LEGS:
        _sensor(spec, f"foot_pos/{leg}", _SENS.mjSENS_FRAMEPOS, _OBJ.mjOBJ_SITE, f"{leg}_foot")
    for leg in _LEGS:
        _sensor(
            spec, f"foot_linvel/{leg}", _SENS.mjSENS_FRAMELINVEL, _OBJ.mjOBJ_SITE, f"{leg}_foot"
        )
    _sensor(spec, "com_linvel", _SENS.mjSENS_SUBTREELINVEL, _OBJ.mjOBJ_BODY, "base")
    _add_tracking_sensors(spec, _moving_bodies(spec), "base")

    stand = list(_QUAD_STAND) * 4
    spec.add_key(name="home", qpos=[0, 0, 0.278, 1, 0, 0, 0, *stand], ctrl=stand)
    return spec


def quadruped() -> mujoco.MjModel:
    """Compiled :func:`quadruped_spec` (14 bodies, 12 hinges, 119 sensors, 328 columns)."""
    return quadruped_spec().compile()


# ----------------------------------------------------------------------------
# humanoid
# ----------------------------------------------------------------------------

# (link, parent, pos in parent, axis, range, mass, kp, force); "{s}" is left/right
_G1_LEG = (
    (
        "{s}_hip_pitch_link",
        "pelvis",
        (0, 0.064452, -0.1027),
        _Y,
        (-2.5307, 2.8798),
        1.350,
        100.0,
        88.0,
    ),
    (
        "{s}_hip_roll_link",
        "{s}_hip_pitch_link",
        (0, 0.052, -0.030465),
        _X,
        (-0.5236, 2.9671),
        1.520,
        100.0,
        88.0,
    ),
    (
        "{s}_hip_yaw_link",
        "{s}_hip_roll_link",
        (0.025001, 0, -0.12412),
        _Z,
        (-2.7576, 2.7576),
        1.702,
        100.0,
        88.0,
    ),
    (
        "{s}_knee_link",
        "{s}_hip_yaw_link",
        (-0.078273, 0.0021489, -0.17734),
        _Y,
        (-0.087267, 2.8798),
        1.932,
        150.0,
        139.0,
    ),
    (
        "{s}_ankle_pitch_link",
        "{s}_knee_link",
        (0, -9.4445e-05, -0.30001),
        _Y,
        (-0.87267, 0.5236),
        0.074,
        40.0,
        50.0,
    ),
    (
        "{s}_ankle_roll_link",
        "{s}_ankle_pitch_link",
        (0, 0, -0.017558),
        _X,
        (-0.2618, 0.2618),
        0.608,
        40.0,
        50.0,
    ),
)
_G1_WAIST = (
    ("waist_yaw_link", "pelvis", (0, 0, 0), _Z, (-2.618, 2.618), 0.214, 100.0, 88.0),
    (
        "waist_roll_link",
        "waist_yaw_link",
        (-0.0039635, 0, 0.035),
        _X,
        (-0.52, 0.52),
        0.086,
        100.0,
        50.0,
    ),
    ("torso_link", "waist_roll_link", (0, 0, 0.019), _Y, (-0.52, 0.52), 7.818, 100.0, 50.0),
)
_G1_ARM = (
    (
        "{s}_shoulder_pitch_link",
        "torso_link",
        (0.0039563, 0.10022, 0.24778),
        _Y,
        (-3.0892, 2.6704),
        0.718,
        40.0,
        25.0,
    ),
    (
        "{s}_shoulder_roll_link",
        "{s}_shoulder_pitch_link",
        (0, 0.038, -0.013831),
        _X,
        (-1.5882, 2.2515),
        0.643,
        40.0,
        25.0,
    ),
    (
        "{s}_shoulder_yaw_link",
        "{s}_shoulder_roll_link",
        (0, 0.00624, -0.1032),
        _Z,
        (-2.618, 2.618),
        0.734,
        40.0,
        25.0,
    ),
    (
        "{s}_elbow_link",
        "{s}_shoulder_yaw_link",
        (0.015783, 0, -0.080518),
        _Y,
        (-1.0472, 2.0944),
        0.600,
        40.0,
        25.0,
    ),
    (
        "{s}_wrist_roll_link",
        "{s}_elbow_link",
        (0.1, 0.00188791, -0.01),
        _X,
        (-1.972, 1.972),
        0.085,
        20.0,
        25.0,
    ),
    (
        "{s}_wrist_pitch_link",
        "{s}_wrist_roll_link",
        (0.038, 0, 0),
        _Y,
        (-1.614, 1.614),
        0.484,
        20.0,
        5.0,
    ),
    (
        "{s}_wrist_yaw_link",
        "{s}_wrist_pitch_link",
        (0.046, 0, 0),
        _Z,
        (-1.614, 1.614),
        0.254,
        20.0,
        5.0,
    ),
)
_G1_PELVIS_Z = 0.793
_G1_HOME = {
    "hip_pitch": -0.312,
    "knee": 0.669,
    "ankle_pitch": -0.363,
    "elbow": 0.6,
    "shoulder_roll": 0.2,
}


def _mirror(side: str, pos, joint_range, axis) -> tuple[list, tuple[float, float]]:
    """Right-side position/range from the left-side ones (mirror in y)."""
    if side == "left":
        return list(pos), joint_range
    pos = [pos[0], -pos[1], pos[2]]
    if axis in (_X, _Z):  # roll and yaw ranges flip sign under the y mirror
        joint_range = (-joint_range[1], -joint_range[0])
    return pos, joint_range


def _g1_link_geoms(
    body: mujoco.MjsBody, name: str, mass: float, child_pos: Sequence[float]
) -> None:
    """A capsule from the body origin towards its child (or a sphere), plus a visual twin."""
    end = np.asarray(child_pos, dtype=float)
    length = float(np.linalg.norm(end))
    if "ankle_roll" in name:
        _collision(
            body,
            f"{name}_collision",
            mass,
            type=_GEOM.mjGEOM_BOX,
            size=[0.1, 0.035, 0.01],
            pos=[0.035, 0, -0.03],
        )
        _visual(
            body,
            (0.2, 0.2, 0.2, 1),
            name=f"{name}_visual",
            type=_GEOM.mjGEOM_BOX,
            size=[0.1, 0.036, 0.011],
            pos=[0.035, 0, -0.03],
        )
    elif length > 0.05:
        fromto = [0, 0, 0, *end.tolist()]
        _collision(
            body,
            f"{name}_collision",
            mass,
            type=_GEOM.mjGEOM_CAPSULE,
            fromto=fromto,
            size=[0.035 if mass > 1 else 0.025, 0, 0],
        )
        _visual(
            body,
            (0.7, 0.7, 0.7, 1),
            name=f"{name}_visual",
            type=_GEOM.mjGEOM_CAPSULE,
            fromto=fromto,
            size=[0.036 if mass > 1 else 0.026, 0, 0],
        )
    else:
        _collision(body, f"{name}_collision", mass, type=_GEOM.mjGEOM_SPHERE, size=[0.03, 0, 0])


def humanoid_spec() -> mujoco.MjSpec:
    """Spec of a Unitree-G1-shaped humanoid with materialised tracking sensors.

    Bodies: ``pelvis`` (free joint ``floating_base``); per side ``s`` in left,
    right a leg ``s_hip_pitch_link`` .. ``s_ankle_roll_link`` (6 hinges) and an
    arm ``s_shoulder_pitch_link`` .. ``s_wrist_yaw_link`` (7 hinges); a waist
    ``waist_yaw_link``, ``waist_roll_link``, ``torso_link`` (3 hinges) -- 30
    moving bodies and 29 hinges named ``f"{link}_joint"``, each driven by a
    position actuator named like its link. Sites: ``imu`` on the torso,
    ``left_foot`` and ``right_foot`` under the ankles. Keyframe ``home`` is a
    standing pose.

    Sensors: 29 ``jointpos/*``, 29 ``jointvel/*``, ``imu_gyro``, ``imu_acc``,
    ``imu_linvel``, ``imu_quat``, ``touch/left``, ``touch/right``,
    ``foot_pos/left``, ``foot_pos/right`` (79 columns), then the tracking
    blocks of the 30 moving bodies (600 columns).
    """
    spec = _new_spec("mjrefresh_humanoid")
    pelvis = spec.worldbody.add_body(name="pelvis", pos=[0, 0, _G1_PELVIS_Z])
    pelvis.add_freejoint(name="floating_base")
    _collision(
        pelvis,
        "pelvis_collision",
        3.813,
        type=_GEOM.mjGEOM_SPHERE,
        size=[0.07, 0, 0],
        pos=[0, 0, -0.05],
    )
    _visual(
        pelvis,
        (0.2, 0.2, 0.2, 1),
        name="pelvis_visual",
        type=_GEOM.mjGEOM_BOX,
        size=[0.05, 0.09, 0.05],
        pos=[0, 0, -0.05],
    )

    bodies: dict[str, mujoco.MjsBody] = {"pelvis": pelvis}
    actuators = []
    # spec order = compiled body order: left leg, right leg, waist/torso, left arm, right arm
    chains = [
        (_G1_LEG, "left"),
        (_G1_LEG, "right"),
        (_G1_WAIST, ""),
        (_G1_ARM, "left"),
        (_G1_ARM, "right"),
    ]
    for chain, side in chains:
        for k, (link, parent, pos, axis, joint_range, mass, kp, force) in enumerate(chain):
            name, parent = link.format(s=side), parent.format(s=side)
            pos_s, range_s = (
                _mirror(side, pos, joint_range, axis) if side else (list(pos), joint_range)
            )
            body = _hinge_body(
                bodies[parent], name, pos_s, axis, range_s, armature=0.02, damping=0.5
            )
            bodies[name] = body
            nxt = (
                chain[k + 1][2]
                if k + 1 < len(chain)
                else (0.05, 0, 0)
                if "wrist" in name
                else (0, 0, 0.3)
            )
            child_pos, _ = _mirror(side, nxt, (0.0, 0.0), _Y) if side else (list(nxt), None)
            if name == "torso_link":
                _collision(
                    body,
                    "torso_collision",
                    mass,
                    type=_GEOM.mjGEOM_BOX,
                    size=[0.07, 0.1, 0.14],
                    pos=[0, 0, 0.2],
                )
                _visual(
                    body,
                    (0.7, 0.7, 0.7, 1),
                    name="torso_visual",
                    type=_GEOM.mjGEOM_BOX,
                    size=[0.071, 0.101, 0.141],
                    pos=[0, 0, 0.2],
                )
                _visual(
                    body,
                    (0.2, 0.2, 0.2, 1),
                    name="head_visual",
                    type=_GEOM.mjGEOM_SPHERE,
                    size=[0.06, 0, 0],
                    pos=[0, 0, 0.42],
                )
                body.add_site(name="imu", pos=[-0.03959, -0.00224, 0.14792])
            else:
                _g1_link_geoms(body, name, mass, child_pos)
            if name.endswith("ankle_roll_link"):
                body.add_site(
                    name=f"{side}_foot",
                    pos=[0.035, 0, -0.04],
                    size=[0.11, 0.045, 0.02],
                    type=_GEOM.mjGEOM_BOX,
                )
            actuators.append((f"{name}_joint", kp, force, range_s))

    for joint, kp, force, joint_range in actuators:
        _add_position_actuator(
            spec, joint, kp=kp, kv=0.1 * kp**0.5, force=force, ctrlrange=joint_range
        )

    joints = _hinges(spec)
    _add_joint_sensors(spec, joints)
    _add_imu_sensors(spec)
    for side in ("left", "right"):
        _sensor(spec, f"touch/{side}", _SENS.mjSENS_TOUCH, _OBJ.mjOBJ_SITE, f"{side}_foot")
    for side in ("left", "right"):
        _sensor(spec, f"foot_pos/{side}", _SENS.mjSENS_FRAMEPOS, _OBJ.mjOBJ_SITE, f"{side}_foot")
    _add_tracking_sensors(spec, _moving_bodies(spec), "pelvis")

    home = [next((v for k, v in _G1_HOME.items() if f"_{k}_link" in j), 0.0) for j in joints]
    home = [
        (-v if "shoulder_roll" in j and j.startswith("right") else v) for v, j in zip(home, joints, strict=True)
    ]
    spec.add_key(name="home", qpos=[0, 0, _G1_PELVIS_Z - 0.02, 1, 0, 0, 0, *home], ctrl=home)
    return spec


def humanoid() -> mujoco.MjModel:
    """Compiled :func:`humanoid_spec` (31 bodies, 29 hinges)."""
    return humanoid_spec().compile()


# ----------------------------------------------------------------------------
# layout
# ----------------------------------------------------------------------------


@dataclass(frozen=True)
class TrackingLayout:
    """Where the tracking sensors of a materialised model live in ``sensordata``.

    Attributes:
      bodies: tracked body names, in block order (the same in every block).
      base: name of the body the ``track_*_b`` sensors are relative to.
      start, stop: the half-open column range of the whole tracking block.
      kinds: per kind (``"track_pos_w"``, ...) its half-open column range.
      sensor_start, sensor_stop: the half-open sensor-id range of the block.
    """

    bodies: tuple[str, ...]
    base: str
    start: int
    stop: int
    kinds: Mapping[str, tuple[int, int]]
    sensor_start: int
    sensor_stop: int

    @property
    def columns(self) -> tuple[int, int]:
        """``(start, stop)``, the form ``sensor_ranges`` takes."""
        return (self.start, self.stop)

    def column(self, kind: str, body: str) -> tuple[int, int]:
        """The half-open column range of one body's sensor of one kind."""
        start, _ = self.kinds[kind]
        dim = next(d for k, _t, d, _r in TRACKING_KINDS if k == kind)
        i = self.bodies.index(body)
        return (start + i * dim, start + (i + 1) * dim)


def tracking_layout(model: mujoco.MjModel) -> TrackingLayout:
    """Locate and validate the tracking blocks of ``model``.

    Raises ValueError if the ``track_*`` sensors are missing, not in the block
    order of :data:`TRACKING_KINDS`, not contiguous, or track different bodies
    in different blocks.
    """
    names = [model.sensor(i).name for i in range(model.nsensor)]
    ids = [i for i, n in enumerate(names) if n.startswith("track_")]
    if not ids:
        raise ValueError("model has no track_* sensors")
    first, last = ids[0], ids[-1]
    if ids != list(range(first, last + 1)):
        raise ValueError("track_* sensors are not contiguous")
    nkind = len(TRACKING_KINDS)
    if len(ids) % nkind:
        raise ValueError(f"expected a multiple of {nkind} track_* sensors, got {len(ids)}")
    nbody = len(ids) // nkind
    bodies = tuple(names[first + i].split("/", 1)[1] for i in range(nbody))
    kinds: dict[str, tuple[int, int]] = {}
    base = ""
    for k, (kind, stype, dim, relative) in enumerate(TRACKING_KINDS):
        block = range(first + k * nbody, first + (k + 1) * nbody)
        for body, sid in zip(bodies, block, strict=True):
            if names[sid] != f"{kind}/{body}":
                raise ValueError(f"sensor {sid} is {names[sid]!r}, expected {kind}/{body!r}")
            if int(model.sensor_type[sid]) != stype or int(model.sensor_dim[sid]) != dim:
                raise ValueError(f"sensor {names[sid]!r} has the wrong type or dim")
            if relative:
                base = model.body(int(model.sensor_refid[sid])).name
        adr0 = int(model.sensor_adr[block[0]])
        kinds[kind] = (adr0, adr0 + nbody * dim)
    start = int(model.sensor_adr[first])
    stop = int(model.sensor_adr[last] + model.sensor_dim[last])
    return TrackingLayout(bodies, base, start, stop, kinds, first, last + 1)


#: Model builders by name.
MODELS: dict[str, Callable[[], mujoco.MjModel]] = {"quadruped": quadruped, "humanoid": humanoid}
