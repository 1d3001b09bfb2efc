"""Random kinematic trees for the fast-engine tests: a hypothesis strategy
(`kinematic_trees`) and its MjSpec builder (`build_tree`), with frame and
subtree sensors, a fixed tendon and actuators on every covered transmission."""

from __future__ import annotations

import warnings

import mujoco
from hypothesis import strategies as st

S = mujoco.mjtSensor
OBJ = mujoco.mjtObj

_JOINT_TYPES = (
    mujoco.mjtJoint.mjJNT_HINGE,
    mujoco.mjtJoint.mjJNT_SLIDE,
    mujoco.mjtJoint.mjJNT_BALL,
)


@st.composite
def kinematic_trees(draw: st.DrawFn) -> list[dict]:
    """A random tree description for `build_tree`: up to 7 bodies, free,
    hinge, slide and ball joints, random poses, inertial offsets and sites."""
    nbody = draw(st.integers(1, 7))
    vec = st.lists(st.floats(-0.5, 0.5, allow_nan=False, width=32), min_size=3, max_size=3)
    quat = st.lists(st.floats(-1, 1, allow_nan=False, width=32), min_size=4, max_size=4).filter(
        lambda q: sum(x * x for x in q) > 0.1
    )
    axis = vec.filter(lambda a: sum(x * x for x in a) > 0.01)
    bodies = []
    for i in range(nbody):
        parent = draw(st.integers(-1, i - 1))  # -1: world
        free = parent == -1 and draw(st.booleans())
        joints = (
            []
            if free
            else draw(st.lists(st.tuples(st.sampled_from(_JOINT_TYPES), axis, vec), max_size=3))
        )
        # MuJoCo allows no rotation after a ball joint in the same body
        ball = [k for k, j in enumerate(joints) if j[0] == mujoco.mjtJoint.mjJNT_BALL]
        if ball:
            joints = joints[: ball[0] + 1] + [
                j for j in joints[ball[0] + 1 :] if j[0] == mujoco.mjtJoint.mjJNT_SLIDE
            ]
        bodies.append(
            dict(
                parent=parent,
                pos=draw(vec),
                quat=draw(quat),
                free=free,
                joints=joints,
                ipos=draw(vec),
                site=draw(vec),
            )
        )
    return bodies


def _add_transmissions(spec: mujoco.MjSpec, bodies: list[dict]) -> None:
    """A fixed tendon over the tree's hinges and slides (coefficients from
    their axes), an actuator on every joint (jointinparent on every other
    one) and one on the tendon, with position and velocity sensors on all."""
    joints = [(f"j{i}_{k}", j) for i, b in enumerate(bodies) for k, j in enumerate(b["joints"])]
    free = [f"b{i}" for i, b in enumerate(bodies) if b["free"]]
    scalar = [(name, j) for name, j in joints if j[0] != mujoco.mjtJoint.mjJNT_BALL]
    if scalar:  # MuJoCo 4.0 accepts only hinges and slides in fixed tendons
        tendon = spec.add_tendon(name="tendon")
        for name, (_, ax, _) in scalar:
            tendon.wrap_joint(name, 0.5 + ax[0])
        spec.add_sensor(type=S.mjSENS_TENDONPOS, objtype=OBJ.mjOBJ_TENDON, objname="tendon")
        spec.add_sensor(type=S.mjSENS_TENDONVEL, objtype=OBJ.mjOBJ_TENDON, objname="tendon")
    targets = [(name, ax + [0.3, -0.2, 0.1]) for name, (_, ax, _) in joints]
    for i, b in enumerate(free):
        body = spec.body(b)
        body.first_joint().name = f"free{i}"
        targets.append((f"free{i}", [0.4, -0.5, 0.6, 0.1, 0.2, -0.3]))
    trn = mujoco.mjtTrn
    for k, (name, gear) in enumerate(targets):
        spec.add_actuator(
            name=f"a{k}",
            target=name,
            gear=gear,
            trntype=trn.mjTRN_JOINTINPARENT if k % 2 else trn.mjTRN_JOINT,
        )
    if scalar:
        spec.add_actuator(
            name="a_tendon", target="tendon", trntype=trn.mjTRN_TENDON, gear=[1.5, 0, 0, 0, 0, 0]
        )
        targets.append(("tendon", None))
    for k in range(len(targets)):
        name = "a_tendon" if k == len(targets) - 1 and scalar else f"a{k}"
        for stype in (S.mjSENS_ACTUATORPOS, S.mjSENS_ACTUATORVEL):
            spec.add_sensor(type=stype, objtype=OBJ.mjOBJ_ACTUATOR, objname=name)


def build_tree(bodies: list[dict]) -> mujoco.MjModel:
    """Compile a `kinematic_trees` description, with frame sensors on every
    body and site (sites relative to another body), subtree sensors, a fixed
    tendon and actuators (see `_add_transmissions`)."""
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
        for stype in (
            S.mjSENS_FRAMEPOS,
            S.mjSENS_FRAMEQUAT,
            S.mjSENS_FRAMELINVEL,
            S.mjSENS_FRAMEANGVEL,
        ):
            spec.add_sensor(type=stype, objtype=OBJ.mjOBJ_XBODY, objname=f"b{i}")
            spec.add_sensor(
                type=stype,
                objtype=OBJ.mjOBJ_SITE,
                objname=f"s{i}",
                reftype=OBJ.mjOBJ_BODY,
                refname=f"b{len(bodies) - 1 - i}",
            )
        for stype in (S.mjSENS_SUBTREECOM, S.mjSENS_SUBTREELINVEL, S.mjSENS_SUBTREEANGMOM):
            spec.add_sensor(type=stype, objtype=OBJ.mjOBJ_BODY, objname=f"b{i}")
    _add_transmissions(spec, bodies)
    with warnings.catch_warnings():
        # compiling runs the dynamics once: see support.oracle
        warnings.simplefilter("ignore", UserWarning)
        return spec.compile()
