"""MjSpec building blocks shared by the embedded models (geoms, hinges,
actuators, sensors)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import mujoco

from .tracking import TRACKING_KINDS

_GEOM = mujoco.mjtGeom
_SENS = mujoco.mjtSensor
_OBJ = mujoco.mjtObj

_X = (1.0, 0.0, 0.0)
_Y = (0.0, 1.0, 0.0)
_Z = (0.0, 0.0, 1.0)


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


def _collision(body: mujoco.MjsBody, name: str, mass: float, **kwargs: Any) -> mujoco.MjsGeom:
    """A mass-carrying collision geom (group 3)."""
    return body.add_geom(name=name, mass=mass, group=3, contype=1, conaffinity=1, **kwargs)


def _visual(body: mujoco.MjsBody, rgba: Sequence[float], **kwargs: Any) -> mujoco.MjsGeom:
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
    spec: mujoco.MjSpec,
    joint: str,
    kp: float,
    kv: float,
    force: float,
    ctrlrange: Sequence[float],
) -> None:
    act = spec.add_actuator(
        name=joint.removesuffix("_joint"), target=joint, trntype=mujoco.mjtTrn.mjTRN_JOINT
    )
    act.set_to_position(kp=kp, kv=kv)
    act.ctrlrange = list(ctrlrange)
    act.forcerange = [-force, force]


def _sensor(
    spec: mujoco.MjSpec,
    name: str,
    stype: int,
    objtype: int,
    objname: str,
    reftype: int | None = None,
    refname: str = "",
) -> None:
    kwargs: dict[str, Any] = dict(name=name, type=stype, objtype=objtype, objname=objname)
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
