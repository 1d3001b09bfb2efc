"""Models by name (`load_model`, `MODEL_NAMES`): the MJCF models of
tests/support, the embedded quadruped and humanoid and the few models defined
here; random kinematic trees; the sensors a refresh may compute; the model
option flags."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import mujoco

import mjrefresh
from support import edge_models, engine_models, models
from support.random_trees import build_tree

# A multi-dimensional actuator (MuJoCo >= 3.11): <orientation> on a ball joint
# has 3 controls and 3 force outputs, so model.nu != model.nactuator.
ORIENTATION_XML = """<mujoco><worldbody>
 <body name="base" pos="0 0 1"><freejoint/><geom size=".1"/><site name="imu"/>
  <body name="arm" pos=".2 0 0"><joint name="shoulder" type="ball"/>
   <geom type="capsule" size=".03" fromto="0 0 0 .3 0 0"/><site name="tip" pos=".3 0 0"/>
   <body name="fore" pos=".3 0 0"><joint name="elbow" axis="0 1 0"/>
    <geom type="capsule" size=".02" fromto="0 0 0 .2 0 0"/><site name="hand" pos=".2 0 0"/>
   </body></body></body></worldbody>
 <tendon><fixed name="ft"><joint joint="elbow" coef="1.5"/></fixed></tendon>
 <actuator><orientation name="orient" joint="shoulder"/><motor name="elbow_m" joint="elbow"/>
  <motor name="tendon_m" tendon="ft"/></actuator>
 <sensor><actuatorpos name="orient_pos" actuator="orient"/>
  <actuatorvel name="orient_vel" actuator="orient"/>
  <actuatorpos name="elbow_pos" actuator="elbow_m"/><actuatorvel name="elbow_vel" actuator="elbow_m"/>
  <actuatorvel name="tendon_vel" actuator="tendon_m"/><framepos name="hand_pos" objtype="site" objname="hand"/>
  <gyro name="gyro" site="imu"/><ballquat name="bq" joint="shoulder"/>
  <subtreeangmom name="am" body="base"/></sensor></mujoco>"""

# A world-welded body whose geom sits at infinity (and a moving one): with
# finite states mj_forward gives finite values, e.g. 0 subtree velocities.
INF_GEOM_XML = """<mujoco><worldbody>
 <body name="welded" pos="0 0 1"><geom name="far" size=".1" pos="inf 0 0"/><site name="ws"/></body>
 <body name="moving" pos="0 1 0"><joint name="h" axis="0 0 1"/><geom size=".05" pos=".1 0 0"/>
  <site name="ms" pos=".1 0 0"/></body></worldbody>
 <sensor><subtreelinvel name="stlv" body="welded"/><subtreeangmom name="stam" body="welded"/>
  <subtreecom name="stc" body="moving"/><framelinvel name="flv" objtype="site" objname="ws"/>
  <velocimeter name="vel" site="ms"/><subtreelinvel name="stlv_m" body="moving"/></sensor></mujoco>"""

# A user sensor (never selectable) next to ordinary ones: mj_sensorPos/Vel
# call the global mjcb_sensor for it when one is installed.
USER_SENSOR_XML = """<mujoco><worldbody>
 <body name="a" pos="0 0 1"><freejoint/><geom size=".1"/><site name="s"/>
  <body name="b" pos=".2 0 0"><joint name="j" axis="0 1 0"/><geom size=".05"/></body></body>
 </worldbody><sensor><user name="u" dim="2" needstage="vel" datatype="real"/>
 <framepos name="fp" objtype="xbody" objname="b"/><gyro name="gy" site="s"/>
 <jointvel name="jv" joint="j"/></sensor></mujoco>"""

# Sleep enabled: one tree asleep at reset, one awake, one that sleeps whenever
# it can (sleep="auto"), with sensors on each.
SLEEP2_XML = """<mujoco><option><flag sleep="enable"/></option><worldbody>
 <geom type="plane" size="5 5 .1"/>
 <body name="a" pos="0 0 .1" sleep="init"><freejoint/><geom type="box" size=".1 .1 .1"/>
  <site name="sa"/><body name="a2" pos=".1 0 0"><joint name="ha" axis="0 1 0"/>
   <geom size=".03" pos=".05 0 0"/></body></body>
 <body name="b" pos="1 0 1"><joint name="h" type="hinge"/>
  <geom type="capsule" size=".05" fromto="0 0 0 0 0 -.5"/><site name="sb" pos="0 0 -.5"/></body>
 <body name="c" pos="-1 0 .5" sleep="init"><joint name="sl" type="slide" axis="0 0 1"/>
  <geom size=".05"/><site name="sc"/></body>
 </worldbody>
 <tendon><fixed name="ft"><joint joint="ha" coef="1"/><joint joint="sl" coef="-.5"/></fixed></tendon>
 <sensor><framepos name="pa" objtype="site" objname="sa"/><framelinvel name="va" objtype="site" objname="sa"/>
  <framepos name="pb" objtype="site" objname="sb"/><velocimeter name="vb" site="sb"/>
  <gyro name="gc" site="sc"/><jointvel name="jva" joint="ha"/><subtreelinvel name="stla" body="a"/>
  <subtreeangmom name="stma" body="a"/><tendonvel name="tv" tendon="ft"/>
  <e_kinetic name="ek"/><touch name="tch" site="sa"/></sensor></mujoco>"""

_XML: dict[str, Callable[[], str]] = {
    "hostile": lambda: models.HOSTILE_XML,
    "bad_input": lambda: models.BAD_INPUT_XML,
    "soak": lambda: models.SOAK_XML,
    "rich": lambda: models.RICH_XML,
    "legged": lambda: models.LEGGED_XML,
    "three_link": lambda: models.THREE_LINK_XML,
    "tendon_vel": lambda: models.TENDON_VEL_XML,
    "free_body": lambda: models.FREE_BODY_XML,
    "constraint": lambda: edge_models.CONSTRAINT_XML,
    "sleep": lambda: edge_models.SLEEP_XML,
    "sleep2": lambda: SLEEP2_XML,
    "touch_grid": lambda: edge_models.TOUCH_GRID_XML,
    "big_arena": lambda: edge_models.BIG_ARENA_XML,
    "zoo": engine_models.zoo_xml,
    "chain": engine_models.chain_xml,
    "go1like": engine_models.go1like_xml,
    "orientation": lambda: ORIENTATION_XML,
    "inf_geom": lambda: INF_GEOM_XML,
    "user_sensor": lambda: USER_SENSOR_XML,
}

PID_XML = """<mujoco>
 <extension><plugin plugin="mujoco.pid"><instance name="pid">
   <config key="kp" value="40"/><config key="kd" value="4"/></instance></plugin></extension>
 <worldbody><body name="arm"><joint name="h" type="hinge" axis="0 1 0"/>
   <geom type="capsule" size=".05" fromto="0 0 0 .3 0 0"/><site name="tip" pos=".3 0 0"/></body>
 </worldbody>
 <actuator><plugin name="pidact" joint="h" plugin="mujoco.pid" instance="pid"/></actuator>
 <sensor><framepos name="fp" objtype="site" objname="tip"/><actuatorpos name="ap" actuator="pidact"/>
  <actuatorvel name="av" actuator="pidact"/></sensor>
</mujoco>"""
_XML["pid"] = lambda: PID_XML

MODEL_NAMES: tuple[str, ...] = (*_XML, "quadruped", "humanoid")
_CACHE: dict[str, mujoco.MjModel] = {}


def load_model(name: str) -> mujoco.MjModel:
    """A test model by name (`MODEL_NAMES`): the MJCF models of tests/support,
    the embedded quadruped and humanoid, and the few models defined here."""
    if name not in _CACHE:
        if name == "quadruped":
            _CACHE[name] = mjrefresh.models.quadruped()
        elif name == "humanoid":
            _CACHE[name] = mjrefresh.models.humanoid()
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                _CACHE[name] = mujoco.MjModel.from_xml_string(_XML[name]())
    return _CACHE[name]


def tree_model(desc: Sequence[Mapping[str, Any]]) -> mujoco.MjModel:
    """`support.random_trees.build_tree` of a JSON description (joint types as ints)."""
    bodies = []
    for b in desc:
        b = dict(b)
        b["joints"] = [(mujoco.mjtJoint(int(t)), list(ax), list(p)) for t, ax, p in b["joints"]]
        bodies.append(b)
    return build_tree(bodies)


def random_tree_desc(rng: Any, max_bodies: int = 6) -> list[dict[str, Any]]:
    """A random tree description for `tree_model` (like random_trees.kinematic_trees),
    from a `random.Random`; JSON-able."""

    def vec(scale: float = 0.5) -> list[float]:
        return [round(rng.uniform(-scale, scale), 3) for _ in range(3)]

    def axis() -> list[float]:
        while True:
            a = vec()
            if sum(x * x for x in a) > 0.01:
                return a

    def quat() -> list[float]:
        while True:
            q = [round(rng.uniform(-1, 1), 3) for _ in range(4)]
            if sum(x * x for x in q) > 0.1:
                return q

    hinge, slide, ball = (
        int(mujoco.mjtJoint.mjJNT_HINGE),
        int(mujoco.mjtJoint.mjJNT_SLIDE),
        int(mujoco.mjtJoint.mjJNT_BALL),
    )
    bodies: list[dict[str, Any]] = []
    for i in range(rng.randint(1, max_bodies)):
        parent = rng.randint(-1, i - 1)
        free = parent == -1 and rng.random() < 0.5
        joints: list[list[Any]] = []
        if not free:
            for _ in range(rng.randint(0, 3)):
                joints.append([rng.choice((hinge, slide, ball)), axis(), vec()])
            balls = [k for k, j in enumerate(joints) if j[0] == ball]
            if balls:  # MuJoCo allows no rotation after a ball joint in one body
                joints = joints[: balls[0] + 1] + [
                    j for j in joints[balls[0] + 1 :] if j[0] == slide
                ]
        bodies.append(
            dict(
                parent=parent,
                pos=vec(),
                quat=quat(),
                free=free,
                joints=joints,
                ipos=vec(),
                site=vec(),
            )
        )
    return bodies


def pos_vel_sensors(model: mujoco.MjModel) -> list[int]:
    """Ids of the sensors a refresh may compute (plan refusals excluded)."""
    refused = mjrefresh.plan.refresh_refusals(model)
    return [i for i in range(model.nsensor) if i not in refused]


def names(model: mujoco.MjModel, objtype: mujoco.mjtObj, count: int) -> list[str]:
    return [mujoco.mj_id2name(model, objtype, i) or "" for i in range(count)]


#: (mjOption field, bit) of every disable and enable flag, and their names.
OPTION_FLAGS: tuple[tuple[str, int], ...] = tuple(
    [
        ("disableflags", int(v))
        for k, v in mujoco.mjtDisableBit.__members__.items()
        if k != "mjNDISABLE"
    ]
    + [
        ("enableflags", int(v))
        for k, v in mujoco.mjtEnableBit.__members__.items()
        if k != "mjNENABLE"
    ]
)
OPTION_NAMES: dict[tuple[str, int], str] = {
    **{("disableflags", int(v)): k for k, v in mujoco.mjtDisableBit.__members__.items()},
    **{("enableflags", int(v)): k for k, v in mujoco.mjtEnableBit.__members__.items()},
}
