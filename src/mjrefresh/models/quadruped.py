"""The embedded quadruped (Go1/Go2 shape): floating base, four 3-hinge legs."""

from __future__ import annotations

import mujoco

from ._spec import (
    _GEOM,
    _OBJ,
    _SENS,
    _X,
    _Y,
    _add_imu_sensors,
    _add_joint_sensors,
    _add_position_actuator,
    _add_tracking_sensors,
    _collision,
    _hinge_body,
    _hinges,
    _moving_bodies,
    _new_spec,
    _sensor,
    _visual,
)

_LEGS = ("FL", "FR", "RL", "RR")
_QUAD_STAND = (0.0, 0.9, -1.8)  # hip, thigh, calf
_QUAD_BASE_Z = 0.445  # straight legs touch the floor


def quadruped_spec(tracking: bool = True) -> mujoco.MjSpec:
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

    Args:
        tracking: False leaves out the tracking blocks (the 41 authored sensors,
            columns 0:68), for a backend that injects its own tracking sensors
            (unisim-core's MuJoCo backend does, for its ``tracked_body_names``).
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
    if tracking:
        _add_tracking_sensors(spec, _moving_bodies(spec), "base")

    stand = list(_QUAD_STAND) * 4
    spec.add_key(name="home", qpos=[0, 0, 0.278, 1, 0, 0, 0, *stand], ctrl=stand)
    return spec


def quadruped() -> mujoco.MjModel:
    """Compiled :func:`quadruped_spec` (14 bodies, 12 hinges, 119 sensors, 328 columns)."""
    return quadruped_spec().compile()
