"""Third-party robots for the zoo parity tests (tests/test_model_zoo.py).

`zoo_paths` lists the MuJoCo XML files gymnasium ships for its MuJoCo
environments (read as files; gymnasium itself is never imported) and every
XML under the directories in ``MJREFRESH_ZOO_DIRS`` (``os.pathsep``
separated; for example dm_control's or metaworld's assets). `with_sensors`
compiles one of them with a position/velocity sensor of each kind a refresh
computes on every named body, joint, site, actuator and tendon, since most
of these robots declare few or none of their own.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import warnings
from pathlib import Path

import mujoco

S = mujoco.mjtSensor
OBJ = mujoco.mjtObj
# As ints: MuJoCo 4.0's enums do not compare equal to numpy's integers.
HINGE_OR_SLIDE = (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))
BALL = int(mujoco.mjtJoint.mjJNT_BALL)

GYMNASIUM_MISSING = "gymnasium is not installed (pip install gymnasium==1.4.0)"

# Per body: (type, objtype, reftype or None: then the parent body's frame).
BODY_SENSORS = (
    (S.mjSENS_FRAMEPOS, OBJ.mjOBJ_XBODY, None),
    (S.mjSENS_FRAMEQUAT, OBJ.mjOBJ_BODY, None),
    (S.mjSENS_FRAMEXAXIS, OBJ.mjOBJ_XBODY, None),
    (S.mjSENS_FRAMELINVEL, OBJ.mjOBJ_XBODY, None),
    (S.mjSENS_FRAMEANGVEL, OBJ.mjOBJ_BODY, None),
    (S.mjSENS_FRAMEPOS, OBJ.mjOBJ_BODY, OBJ.mjOBJ_XBODY),
    (S.mjSENS_FRAMEQUAT, OBJ.mjOBJ_XBODY, OBJ.mjOBJ_XBODY),
    (S.mjSENS_FRAMELINVEL, OBJ.mjOBJ_XBODY, OBJ.mjOBJ_BODY),
    (S.mjSENS_FRAMEANGVEL, OBJ.mjOBJ_XBODY, OBJ.mjOBJ_XBODY),
    (S.mjSENS_SUBTREECOM, OBJ.mjOBJ_BODY, None),
    (S.mjSENS_SUBTREELINVEL, OBJ.mjOBJ_BODY, None),
    (S.mjSENS_SUBTREEANGMOM, OBJ.mjOBJ_BODY, None),
)
SITE_SENSORS = (S.mjSENS_FRAMEPOS, S.mjSENS_VELOCIMETER, S.mjSENS_GYRO, S.mjSENS_MAGNETOMETER)


def gymnasium_assets() -> Path | None:
    """gymnasium's MuJoCo asset directory, or None without gymnasium."""
    spec = importlib.util.find_spec("gymnasium")  # finds the package without importing it
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "envs" / "mujoco" / "assets"


def zoo_paths() -> list[Path]:
    """gymnasium's MuJoCo XML files, then every XML under MJREFRESH_ZOO_DIRS."""
    dirs = [gymnasium_assets()]
    dirs += [Path(d) for d in os.environ.get("MJREFRESH_ZOO_DIRS", "").split(os.pathsep) if d]
    return [p for d in dirs if d is not None for p in sorted(d.rglob("*.xml"))]


@functools.cache  # the parity fixture and the zoo's self-check share each model
def with_sensors(path: Path) -> mujoco.MjModel | None:
    """`path` compiled with the sensors above added (None: it is not a whole
    model, e.g. a file that other files include). Callers must not edit it."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            spec = mujoco.MjSpec.from_file(str(path))
            plain = spec.compile()
    except Exception:  # any compile error: not a whole model
        return None
    count = 0

    def add(kind: int, objtype: int, name: str, reftype: int | None = None, ref: str = "") -> None:
        nonlocal count
        count += 1
        kw = {"reftype": reftype, "refname": ref} if reftype is not None else {}
        spec.add_sensor(name=f"zoo{count}", type=kind, objtype=objtype, objname=name, **kw)

    def name_of(obj: int, i: int) -> str:
        return mujoco.mj_id2name(plain, obj, i) or ""

    for b in range(1, plain.nbody):
        body, parent = name_of(OBJ.mjOBJ_BODY, b), name_of(OBJ.mjOBJ_BODY, plain.body_parentid[b])
        for kind, objtype, reftype in BODY_SENSORS:
            if body and (reftype is None or parent):
                add(kind, objtype, body, reftype, parent)
    for j in range(plain.njnt):
        joint, jtype = name_of(OBJ.mjOBJ_JOINT, j), int(plain.jnt_type[j])
        if joint and jtype in HINGE_OR_SLIDE:
            add(S.mjSENS_JOINTPOS, OBJ.mjOBJ_JOINT, joint)
            add(S.mjSENS_JOINTVEL, OBJ.mjOBJ_JOINT, joint)
        elif joint and jtype == BALL:
            add(S.mjSENS_BALLQUAT, OBJ.mjOBJ_JOINT, joint)
            add(S.mjSENS_BALLANGVEL, OBJ.mjOBJ_JOINT, joint)
    for obj, count_of, kinds in (
        (OBJ.mjOBJ_SITE, plain.nsite, SITE_SENSORS),
        (OBJ.mjOBJ_ACTUATOR, plain.nu, (S.mjSENS_ACTUATORPOS, S.mjSENS_ACTUATORVEL)),
        (OBJ.mjOBJ_TENDON, plain.ntendon, (S.mjSENS_TENDONPOS, S.mjSENS_TENDONVEL)),
    ):
        for name in filter(None, (name_of(obj, i) for i in range(count_of))):
            for kind in kinds:
                add(kind, obj, name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return spec.compile()
