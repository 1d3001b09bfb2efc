"""The embedded humanoid (G1 shape): pelvis and 30 moving bodies, 29 hinges."""

from __future__ import annotations

from collections.abc import Sequence

import mujoco
import numpy as np

from ._spec import (
    _GEOM,
    _OBJ,
    _SENS,
    _X,
    _Y,
    _Z,
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


def _mirror(
    side: str,
    pos: Sequence[float],
    joint_range: tuple[float, float],
    axis: tuple[float, float, float],
) -> tuple[list[float], tuple[float, float]]:
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
        (-v if "shoulder_roll" in j and j.startswith("right") else v)
        for v, j in zip(home, joints, strict=True)
    ]
    spec.add_key(name="home", qpos=[0, 0, _G1_PELVIS_Z - 0.02, 1, 0, 0, 0, *home], ctrl=home)
    return spec


def humanoid() -> mujoco.MjModel:
    """Compiled :func:`humanoid_spec` (31 bodies, 29 hinges)."""
    return humanoid_spec().compile()
