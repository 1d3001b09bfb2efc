"""The contract each fuzz case asserts (README "Guarantees"), as helpers the
case scripts import: models by name, states, sentinel-filled outputs and the
checks of one call.

A call ends in exactly one of these ways, and `check_call` asserts which ones
the case allows and what each implies:

* success: every selected row equals `mj_forward` at that row's state (exact
  engine: bit for bit; fast engine: 1e-12 for poses, 1e-10 for velocities;
  float32 outputs: the float32 rounding of that value), no byte outside the
  selected rows' planned columns/items changed in any array the call was
  given (or in the buffers those arrays view), and rows whose state is
  non-finite or huge are only required not to crash or disturb other rows;
* rejection: a `TypeError`/`ValueError` whose message names the offending
  argument (the text before its first colon), and nothing written at all;
* `RuntimeError("Refresher is closed")` after `close()` (nothing written);
* `mjrefresh.RefreshError` where the case allows MuJoCo errors in rows (the
  failing rows untouched, the others correct).

Anything else (another exception type, a crash, a hang) is a violation: an
`AssertionError` here, or a signal/timeout reported by the fork server.
"""

from __future__ import annotations

import copy
import re
import traceback
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import mujoco
import numpy as np

import mjrefresh
from support import edge_models, engine_models, models
from support.oracle import Forward, forward_rows
from support.random_trees import build_tree
from support.states import random_states

SENTINEL = -1234.5  # exact in float16/32/64: an untouched output still holds it

POSE_TOL = 1e-12
VEL_TOL = 1e-10
HUGE = 1e100  # a state value this large counts as extreme (like NaN/inf)


class ContractViolation(AssertionError):
    """The library broke a documented guarantee."""


def violation(message: str) -> ContractViolation:
    return ContractViolation(message)


# --------------------------------------------------------------------- models
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


# --------------------------------------------------------------------- states
def make_states(model: mujoco.MjModel, n: int, seed: int) -> dict[str, np.ndarray]:
    """Random states (unit quaternions), C-contiguous float64: qpos, qvel,
    mocap_pos, mocap_quat, time."""
    st = random_states(model, max(n, 1), seed=seed)
    return {k: np.ascontiguousarray(v[:n]) for k, v in st.items()}


def state_kwargs(
    model: mujoco.MjModel, states: Mapping[str, np.ndarray], time: bool = False
) -> dict[str, Any]:
    """The optional state keywords of a refresh: mocap arrays where the model
    has mocap bodies, time when asked."""
    kw: dict[str, Any] = {}
    if model.nmocap:
        kw["mocap_pos"] = states["mocap_pos"]
        kw["mocap_quat"] = states["mocap_quat"]
    if time:
        kw["time"] = states["time"]
    return kw


def sentinel_outputs(
    r: mjrefresh.Refresher, n: int, dtype: Any = np.float64, **arrays: Any
) -> mjrefresh.RefreshOutputs:
    """`r.outputs(n, dtype, **arrays)` with every array filled with SENTINEL."""
    out = r.outputs(n, dtype=dtype, **arrays)
    for a in out.arrays().values():
        a[...] = SENTINEL
    return out


def valid_args(
    r: mjrefresh.Refresher, states: Mapping[str, np.ndarray], n: int, dtype: Any = np.float64
) -> dict[str, Any]:
    """Valid keyword arguments of a refresh of all `n` rows (sentinel outputs)."""
    model = r.model
    args: dict[str, Any] = {
        "rows": np.arange(n),
        "qpos": states["qpos"],
        "qvel": states["qvel"],
        "out": sentinel_outputs(r, n, dtype),
    }
    args.update(state_kwargs(model, states, time=r.plan.needs_time))
    if r.plan.model_fields:  # the template's values in every row
        args["model_fields"] = {
            f: np.repeat(np.asarray(getattr(model, f))[None], n, axis=0)
            for f in r.plan.model_fields
        }
    return args


# ------------------------------------------------------------ memory snapshots
def _root(a: np.ndarray) -> np.ndarray:
    r = a
    while isinstance(r.base, np.ndarray):
        r = r.base
    return r


def _addr(a: np.ndarray) -> int:
    return int(a.__array_interface__["data"][0])


def _raw(root: np.ndarray) -> np.ndarray | None:
    if root.dtype.hasobject or not root.flags.c_contiguous or root.nbytes == 0:
        return None
    return root.reshape(-1).view(np.uint8)


class Memory:
    """Byte snapshots of the buffers behind every array a call was given."""

    def __init__(self, arrays: Iterable[np.ndarray]) -> None:
        self.roots: dict[int, np.ndarray] = {}
        self.before: dict[int, np.ndarray] = {}
        self.marks: dict[int, np.ndarray] = {}
        self.fallback: list[tuple[np.ndarray, np.ndarray]] = []
        for a in arrays:
            root = _root(a)
            raw = _raw(root)
            if raw is None:
                if not a.dtype.hasobject:
                    self.fallback.append((a, a.copy()))
                continue
            if id(root) not in self.roots:
                self.roots[id(root)] = root
                self.before[id(root)] = raw.copy()
                self.marks[id(root)] = np.zeros(raw.shape, dtype=bool)

    def allow(self, a: np.ndarray, index: Any) -> None:
        """The bytes of `a[index]` may change."""
        root = _root(a)
        if id(root) not in self.roots or a.size == 0:
            return
        off = _addr(a) - _addr(root)
        view = np.lib.stride_tricks.as_strided(
            self.marks[id(root)][off:], shape=a.shape + (a.itemsize,), strides=a.strides + (1,)
        )
        view[index] = True

    def changed(self, allowed: bool) -> list[str]:
        """Descriptions of changed bytes (outside the allowed ones if `allowed`)."""
        problems = []
        for k, root in self.roots.items():
            now = _raw(root)
            assert now is not None
            diff = now != self.before[k]
            if allowed:
                diff &= ~self.marks[k]
            if diff.any():
                where = np.flatnonzero(diff)
                problems.append(
                    f"{diff.sum()} bytes of a {root.dtype} buffer of shape {root.shape} changed "
                    f"(first at byte {where[0]}, element {where[0] // root.itemsize})"
                )
        for a, before in self.fallback:
            if not allowed and not np.array_equal(a, before, equal_nan=True):
                problems.append(f"a non-contiguous {a.dtype} array of shape {a.shape} changed")
        return problems


# ---------------------------------------------------------------- expectations
def _arrays_of(value: Any) -> list[np.ndarray]:
    if isinstance(value, np.ndarray):
        return [value]
    if isinstance(value, mjrefresh.RefreshOutputs):
        return [a for a in value.arrays().values() if isinstance(a, np.ndarray)]
    if isinstance(value, Mapping):
        return [a for v in value.values() for a in _arrays_of(v)]
    if isinstance(value, (list, tuple)):
        return [a for v in value for a in _arrays_of(v)]
    return []


def _as_state(value: Any, n: int) -> np.ndarray | None:
    if value is None:
        return None
    try:
        a = np.array(value, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    if a.ndim == 0:
        a = np.broadcast_to(a, (n,))
    return a


def oracle(
    model: mujoco.MjModel,
    states: Mapping[str, Any],
    ids: Sequence[int],
    model_fields: Mapping[str, np.ndarray] | None = None,
) -> Forward:
    """mj_forward at rows `ids` (per-row model copies for per-environment fields),
    with every tree awake (README, Guarantees: a row carries no sleep state;
    MuJoCo's own first forward of a fresh MjData leaves the energies of trees
    that start asleep at 0)."""
    if model.opt.enableflags & mujoco.mjtEnableBit.mjENBL_SLEEP:
        model = copy.deepcopy(model)
        model.opt.enableflags &= ~int(mujoco.mjtEnableBit.mjENBL_SLEEP)
    if not model_fields:
        return forward_rows(model, states, rows=list(ids))
    parts = []
    for row in ids:
        m = copy.deepcopy(model)
        for name, vals in model_fields.items():
            getattr(m, name)[...] = vals[row]
        if "body_mass" in model_fields:  # as mj_setConst derives it
            m.body_subtreemass[:] = m.body_mass
            for b in range(m.nbody - 1, 0, -1):
                m.body_subtreemass[m.body_parentid[b]] += m.body_subtreemass[b]
        parts.append(forward_rows(m, states, rows=[row]))
    if not parts:
        return forward_rows(model, states, rows=[])
    fields = {
        k: np.concatenate([getattr(p, k) for p in parts])
        for k in ("sensordata", "xpos", "xquat", "xmat", "vel", "site_xpos", "site_xmat")
    }
    return Forward(model, **fields)


def _column_tolerances(model: mujoco.MjModel, plan: mjrefresh.RefreshPlan) -> np.ndarray:
    tol = np.full(model.nsensordata, POSE_TOL)
    for i in plan.sensor_ids:
        if int(model.sensor_needstage[i]) == mujoco.mjtStage.mjSTAGE_VEL:
            adr = int(model.sensor_adr[i])
            tol[adr : adr + int(model.sensor_dim[i])] = VEL_TOL
    return tol


def planned_columns(plan: mjrefresh.RefreshPlan) -> np.ndarray:
    return np.array([c for a, b in plan.column_ranges for c in range(a, b)], dtype=np.int64)


def compare(
    name: str,
    got: np.ndarray,
    exp: np.ndarray,
    engine: str,
    tol: Any,
    extreme: np.ndarray,
    label: str = "",
) -> None:
    """`got` (refreshed rows) against mj_forward's `exp`, row mask `extreme`
    excluded except for the exact engine's float64 outputs."""
    got = np.asarray(got)
    f32 = got.dtype == np.float32
    exp32 = exp.astype(np.float32).astype(np.float64) if f32 else exp
    g = got.astype(np.float64)
    ok_rows = ~extreme
    if engine == "exact":
        bad = ~((g == exp32) | (np.isnan(g) & np.isnan(exp32)))
        if not f32:
            # bit for bit, non-finite rows too (the exact engine gives what
            # the stage functions give)
            bad_rows = bad.reshape(bad.shape[0], -1).any(axis=1)
        else:
            bad_rows = bad.reshape(bad.shape[0], -1).any(axis=1) & ok_rows
    else:
        tol = np.broadcast_to(tol, exp.shape)
        # "to rounding": the absolute bounds, plus ~50 ulp where values are large
        rel = np.abs(exp) * (2.0**-23 if f32 else 1e-14) + (1e-37 if f32 else 0.0)
        finite = np.isfinite(exp)
        bad = finite & ~(np.abs(g - exp) <= tol + rel)  # NaN in got counts as bad
        bad_rows = bad.reshape(bad.shape[0], -1).any(axis=1) & ok_rows
    if bad_rows.any():
        k = int(np.flatnonzero(bad_rows)[0])
        ref = exp32 if engine == "exact" else exp
        gk, ek = g[k].reshape(-1), ref[k].reshape(-1)
        j = int(np.flatnonzero(bad[k].reshape(-1))[0])
        tk = np.broadcast_to(tol, exp.shape)[k].reshape(-1)[j] if engine != "exact" else 0.0
        raise violation(
            f"{name}{label}: refreshed value differs from mj_forward ({engine} engine, "
            f"{got.dtype}) at refreshed row #{k}, flat element {j}: got {gk[j]!r}, "
            f"mj_forward {ek[j]!r} (tolerance {tk:g}; {int(bad_rows.sum())} rows differ)"
        )


def assert_rows_match(
    r: mjrefresh.Refresher,
    out: mjrefresh.RefreshOutputs,
    states: Mapping[str, Any],
    ids: Sequence[int],
    model_fields: Mapping[str, np.ndarray] | None = None,
    label: str = "",
    lenient_fast: bool = False,
) -> None:
    """Each of `ids` in `out` equals mj_forward at that row of `states`.

    `lenient_fast`: the model holds a huge finite value (1e308), so absolute
    tolerances mean nothing for the fast engine's rows (MuJoCo's own values
    then carry rounding errors of order 1e290); only the exact engine is
    compared (bit for bit)."""
    ids = [int(i) for i in ids]
    if not ids:
        return
    model, plan = r.model, r.plan
    n = None
    for v in states.values():
        if v is not None and np.ndim(v) >= 1:
            n = len(v)
            break
    st = {k: _as_state(v, n or 0) for k, v in states.items()}
    ref = oracle(model, st, ids, model_fields)
    exp = ref.outputs(plan.body_ids, plan.relative_to_id, plan.site_ids)
    extreme = np.zeros(len(ids), dtype=bool)
    for k, v in st.items():
        if v is None or k == "time" and not plan.needs_time:
            continue
        rows = np.asarray(v)[ids].reshape(len(ids), -1)
        extreme |= ~np.isfinite(rows).all(axis=1) | (np.abs(rows) > HUGE).any(axis=1)
    for f in (model_fields or {}).values():
        rows = np.asarray(f)[ids].reshape(len(ids), -1)
        extreme |= ~np.isfinite(rows).all(axis=1) | (np.abs(rows) > HUGE).any(axis=1)
    engine = plan.engine
    if lenient_fast and engine == "fast":
        extreme[:] = True
    for name, arr in out.arrays().items():
        got = np.asarray(arr)[ids]
        if name == "sensordata":
            cols = planned_columns(plan)
            tol = _column_tolerances(model, plan)[cols]
            compare(name, got[:, cols], exp[name][:, cols], engine, tol, extreme, label)
        else:
            tol = VEL_TOL if name in ("body_linvel", "body_angvel") else POSE_TOL
            compare(name, got, exp[name], engine, tol, extreme, label)


def _allow_outputs(mem: Memory, r: mjrefresh.Refresher, out: Any, ids: np.ndarray) -> None:
    if not isinstance(out, mjrefresh.RefreshOutputs) or ids.size == 0:
        return
    cols = planned_columns(r.plan)
    for name, a in out.arrays().items():
        if not isinstance(a, np.ndarray) or a.ndim < 2 or ids.max() >= a.shape[0]:
            continue
        if name == "sensordata":
            if cols.size and cols.max() < a.shape[1]:
                mem.allow(a, np.ix_(ids, cols))
        else:
            mem.allow(a, ids)


# ------------------------------------------------------------------- rejections
def _aliases(arg: str) -> list[str]:
    if arg.startswith("out."):
        return [arg, arg[4:]]
    return [arg]


def names_argument(message: str, args: Iterable[str]) -> bool:
    """Whether the text before the first colon of `message` names one of `args`
    ("qpos", "out.sensordata"/"sensordata", "sensor_ranges[0]", "a/b", ...)."""
    head = message.split(":", 1)[0].strip()
    parts = [p.removeprefix("out.") for p in re.split(r"[/ ]", head)]
    heads = (head, head.removeprefix("out."))
    for arg in args:
        for alias in _aliases(arg):
            if any(h.startswith(alias) for h in heads) or any(
                p == alias or p.startswith(alias + "[") for p in parts
            ):
                return True
    return False


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def _tb(exc: BaseException) -> str:
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))


CLOSED = "Refresher is closed"


def run_call(r: mjrefresh.Refresher, method: str, args: Mapping[str, Any]) -> Any:
    """Call `method` of `r` ("refresh", "refresh_dirty_rows", "bound",
    "bound_dirty", "bound_call") with keyword `args`."""
    kw = {k: v for k, v in args.items() if k not in ("rows", "dirty", "qpos", "qvel", "out")}
    if method == "refresh":
        return r.refresh(args["rows"], args["qpos"], args["qvel"], args["out"], **kw)
    if method == "refresh_dirty_rows":
        return r.refresh_dirty_rows(args["dirty"], args["qpos"], args["qvel"], args["out"], **kw)
    kw.pop("bound", None)
    bound = args.get("bound") or r.bind(args["qpos"], args["qvel"], args["out"], **kw)
    if method == "bound":
        return bound.refresh(args["rows"])
    if method == "bound_call":
        return bound(args["rows"])
    if method == "bound_dirty":
        return bound.refresh_dirty_rows(args["dirty"])
    raise ValueError(f"unknown method {method!r}")


def _intended_ids(method: str, args: Mapping[str, Any]) -> np.ndarray | None:
    """The row ids a valid call selects, read before the call."""
    key = "dirty" if method.endswith("dirty") or method == "refresh_dirty_rows" else "rows"
    sel = args.get(key)
    try:
        a = np.array(sel)
    except Exception:  # noqa: BLE001 - an unparsable selection is never valid
        return None
    if a.ndim != 1:
        return None
    if a.dtype == np.bool_:
        return np.flatnonzero(a)
    if a.size == 0:
        return np.empty(0, dtype=np.int64)
    if a.dtype.kind not in "iu":
        return None
    return a.astype(np.int64)


def check_call(
    r: mjrefresh.Refresher,
    method: str,
    args: Mapping[str, Any],
    states: Mapping[str, Any] | None = None,
    *,
    broken: Iterable[str] = (),
    maybe: Iterable[str] = (),
    closed: bool = False,
    refresh_errors: bool = False,
    callbacks: bool = False,
    lenient_fast: bool = False,
    note: str = "",
) -> str:
    """Make the call and assert the contract for its outcome.

    Args:
        r, method, args: see `run_call`.
        states: the state the oracle uses (default: the call's own inputs,
            read before the call).
        broken: arguments this case made invalid: the call must be rejected,
            naming one of them.
        maybe: arguments whose validity the README leaves open: success must
            then be correct, a rejection must name one of them.
        closed: the refresher is closed: RuntimeError("Refresher is closed").
        refresh_errors: MuJoCo errors in rows (RefreshError) are allowed.
        callbacks: MuJoCo global callbacks are installed: a clean refusal
            (ValueError/RuntimeError naming the ``mjcb_`` callback, nothing
            written) is allowed besides a correct success.
        lenient_fast: see `assert_rows_match`.

    Returns:
        "ok", "rejected", "closed" or "refresh-error".
    """
    broken, maybe = set(broken), set(maybe)
    label = f" [{note}]" if note else ""
    arrays = [a for v in args.values() for a in _arrays_of(v)]
    mem = Memory(arrays)
    ids = _intended_ids(method, args)
    n_rows = None
    q = args.get("qpos")
    if isinstance(q, np.ndarray) and q.ndim == 2:
        n_rows = q.shape[0]
    if states is None:
        states = {
            "qpos": _as_state(args.get("qpos"), 0),
            "qvel": _as_state(args.get("qvel"), 0),
            "mocap_pos": _as_state(args.get("mocap_pos"), 0),
            "mocap_quat": _as_state(args.get("mocap_quat"), 0),
            "time": _as_state(args.get("time"), n_rows or 0),
        }
    else:
        states = {k: _as_state(v, n_rows or 0) for k, v in states.items()}
    fields = args.get("model_fields")
    fields_copy = (
        {k: np.array(v, dtype=np.float64) for k, v in fields.items()}
        if isinstance(fields, Mapping) and not broken and not maybe
        else fields
    )
    dirty = args.get("dirty") if "dirty" in method or method == "refresh_dirty_rows" else None
    try:
        result = run_call(r, method, args)
    except mjrefresh.RefreshError as exc:
        if not refresh_errors:
            raise violation(f"unexpected RefreshError{label}: {exc}") from exc
        _check_refresh_error(r, exc, args, states, ids, mem, dirty, fields_copy, label)
        return "refresh-error"
    except (TypeError, ValueError, RuntimeError) as exc:
        if callbacks and "mjcb" in str(exc) and not mem.changed(allowed=False):
            return "refused-callback"
        if isinstance(exc, RuntimeError) and not isinstance(exc, mjrefresh.RefreshError):
            return _closed_outcome(exc, closed, mem, label)
        if closed:
            raise violation(
                f"call on a closed refresher raised {_describe(exc)}{label}; expected "
                f"RuntimeError({CLOSED!r})"
            ) from exc
        allowed = broken | maybe
        if not allowed:
            raise violation(
                f"a valid call was rejected{label}: {_describe(exc)}\n{_tb(exc)}"
            ) from exc
        if not names_argument(str(exc), allowed):
            raise violation(
                f"rejection does not name the offending argument (one of {sorted(allowed)})"
                f"{label}: {_describe(exc)}"
            ) from exc
        problems = mem.changed(allowed=False)
        if problems:
            raise violation(
                f"a rejected call ({_describe(exc)}) wrote into its arrays{label}: "
                + "; ".join(problems)
            ) from exc
        return "rejected"
    except Exception as exc:  # noqa: BLE001 - anything else escapes the contract
        raise violation(f"unexpected {_describe(exc)}{label}\n{_tb(exc)}") from exc
    if closed:
        raise violation(f"a call on a closed refresher succeeded{label} (returned {result!r})")
    if broken:
        raise violation(
            f"an invalid call was accepted{label}: {sorted(broken)} should have been rejected "
            f"(returned {result!r})"
        )
    assert ids is not None, "a valid call has parsable rows"
    if result != len(ids):
        raise violation(f"returned {result!r}, expected {len(ids)} rows refreshed{label}")
    _allow_outputs(mem, r, args.get("out"), ids)
    if dirty is not None and isinstance(dirty, np.ndarray):
        mem.allow(dirty, ids)
        if dirty.any():
            raise violation(
                f"dirty entries left set after refresh_dirty_rows{label}: "
                f"{np.flatnonzero(dirty).tolist()[:8]}"
            )
    problems = mem.changed(allowed=True)
    if problems:
        raise violation(
            f"the call wrote outside the selected rows' planned outputs{label}: "
            + "; ".join(problems)
        )
    assert_rows_match(r, args["out"], states, ids, fields_copy, label, lenient_fast)
    return "ok"


def _closed_outcome(exc: RuntimeError, closed: bool, mem: Memory, label: str) -> str:
    if closed and str(exc) == CLOSED:
        problems = mem.changed(allowed=False)
        if problems:
            raise violation(f"a call on a closed refresher wrote{label}: {problems}") from exc
        return "closed"
    raise violation(f"unexpected {_describe(exc)}{label}\n{_tb(exc)}") from exc


def _check_refresh_error(r, exc, args, states, ids, mem, dirty, fields, label) -> None:
    failed = list(exc.rows)
    if ids is None or not set(failed) <= {int(i) for i in ids} or failed != sorted(failed):
        raise violation(f"RefreshError rows {failed} are not sorted selected rows{label}")
    if not str(exc).startswith(f"MuJoCo error while refreshing row {failed[0]}"):
        raise violation(f"RefreshError message does not name the first failing row: {exc}")
    good = np.array([i for i in ids if int(i) not in set(failed)], dtype=np.int64)
    _allow_outputs(mem, r, args.get("out"), good)
    if dirty is not None:
        mem.allow(dirty, good)
        still = set(np.flatnonzero(dirty).tolist())
        if still != set(failed):
            raise violation(
                f"after a RefreshError dirty holds {sorted(still)}, "
                f"expected the failing rows {failed}{label}"
            )
    problems = mem.changed(allowed=True)
    if problems:
        raise violation(f"a RefreshError call wrote failing or unselected rows{label}: {problems}")
    assert_rows_match(r, args["out"], states, good, fields, label)


# ---------------------------------------------------------------- construction
def check_build(
    model: mujoco.MjModel,
    kwargs: Mapping[str, Any],
    *,
    broken: Iterable[str] = (),
    maybe: Iterable[str] = (),
    mentions: Iterable[str] = (),
    resources: bool = False,
    callbacks: bool = False,
) -> mjrefresh.Refresher | None:
    """Build `Refresher(model, **kwargs)` and assert the outcome.

    `broken`/`maybe` as for `check_call`; a PlanError may instead mention one
    of `mentions` (the refused sensor's name); `resources`: MemoryError or a
    RuntimeError naming the thread count is allowed. Returns the refresher,
    or None if it was (rightly) refused.
    """
    broken, maybe = set(broken), set(maybe)
    try:
        r = mjrefresh.Refresher(model, **kwargs)
    except (TypeError, ValueError, RuntimeError) as exc:
        if callbacks and "mjcb" in str(exc):
            return None
        if isinstance(exc, RuntimeError):
            threads = str(kwargs.get("num_threads", ""))
            if resources and (threads in str(exc) or "thread" in str(exc)):
                return None
            raise violation(f"unexpected {_describe(exc)}\n{_tb(exc)}") from exc
        allowed = broken | maybe
        if not allowed:
            raise violation(f"a valid selection was refused: {_describe(exc)}\n{_tb(exc)}") from exc
        named = names_argument(str(exc), allowed) or (
            isinstance(exc, mjrefresh.PlanError) and any(m in str(exc) for m in mentions)
        )
        if not named:
            raise violation(
                f"refusal does not name the offending argument (one of {sorted(allowed)}): "
                f"{_describe(exc)}"
            ) from exc
        return None
    except MemoryError as exc:
        threads = str(kwargs.get("num_threads", ""))
        if resources and (threads in str(exc) or "thread" in str(exc)):
            return None
        raise violation(f"unexpected {_describe(exc)}\n{_tb(exc)}") from exc
    except Exception as exc:  # noqa: BLE001
        raise violation(f"unexpected {_describe(exc)} from Refresher(...)\n{_tb(exc)}") from exc
    if broken:
        r.close()
        raise violation(f"an invalid selection was accepted: {sorted(broken)} {dict(kwargs)!r}")
    return r


def check_full_refresh(
    r: mjrefresh.Refresher, n: int, seed: int, dtype: Any = np.float64, note: str = ""
) -> None:
    """A valid refresh of every row of fresh random states is correct."""
    states = make_states(r.model, n, seed)
    args = valid_args(r, states, n, dtype)
    check_call(r, "refresh", args, note=note)


# ----------------------------------------------------------------------- cache
def expected_read(
    r: mjrefresh.Refresher, states: Mapping[str, Any], read: str, arg: Any, env_ids: Any, n: int
) -> tuple[np.ndarray, Any]:
    """mj_forward's value of a cache read (`read` = an output name, or
    "sensor" with `arg` the sensor name/id), indexed like the read; also the
    tolerance."""
    plan, model = r.plan, r.model
    rows = list(range(n))
    ref = oracle(model, {k: _as_state(v, n) for k, v in states.items()}, rows)
    exp = ref.outputs(plan.body_ids, plan.relative_to_id, plan.site_ids)
    if read == "sensor":
        s = model.sensor(arg)
        cols = slice(int(s.adr[0]), int(s.adr[0] + s.dim[0]))
        full = exp["sensordata"][:, cols]
        tol: Any = VEL_TOL if int(s.needstage[0]) == mujoco.mjtStage.mjSTAGE_VEL else POSE_TOL
    else:
        full = exp[read]
        tol = VEL_TOL if read in ("body_linvel", "body_angvel") else POSE_TOL
        if arg is not None:
            pos = {bid: k for k, bid in enumerate(plan.body_ids)}

            def col(b: Any) -> int:
                return pos[model.body(b).id]

            idx = col(arg) if isinstance(arg, (str, int, np.integer)) else [col(b) for b in arg]
            full = full[:, idx]
    if env_ids is None:
        return full, tol
    if isinstance(env_ids, (slice, int, np.integer)):
        return full[env_ids], tol
    a = np.asarray(env_ids)
    if a.dtype == np.bool_:
        a = np.flatnonzero(a)
    return full[a.astype(np.int64)], tol


def check_cache_read(
    cache: mjrefresh.StateCache,
    read: str,
    arg: Any,
    env_ids: Any,
    states: Mapping[str, Any],
    *,
    broken: Iterable[str] = (),
    note: str = "",
) -> str:
    """One cache read (`cache.<read>(arg, env_ids=...)`), checked against mj_forward."""
    broken = set(broken)
    label = f" [{note}]" if note else ""
    r, n = cache.refresher, cache.num_envs
    storage = cache.storage.arrays()
    mem = Memory(list(storage.values()))
    dirty_before = cache.dirty.copy()
    try:
        if read == "outputs":
            got = cache.outputs(env_ids=env_ids)
        elif read == "sensor":
            got = cache.sensor(arg, env_ids=env_ids)
        else:
            got = getattr(cache, read)(arg, env_ids=env_ids)
    except (TypeError, ValueError) as exc:
        if not broken:
            raise violation(
                f"a valid cache read was rejected{label}: {_describe(exc)}\n{_tb(exc)}"
            ) from exc
        if not names_argument(str(exc), broken):
            raise violation(
                f"cache read rejection does not name one of {sorted(broken)}"
                f"{label}: {_describe(exc)}"
            ) from exc
        if mem.changed(allowed=False) or not np.array_equal(cache.dirty, dirty_before):
            raise violation(
                f"a rejected cache read refreshed rows{label}: {_describe(exc)}"
            ) from exc
        return "rejected"
    except Exception as exc:  # noqa: BLE001
        raise violation(
            f"unexpected {_describe(exc)} from cache.{read}{label}\n{_tb(exc)}"
        ) from exc
    if broken:
        raise violation(f"an invalid cache read was accepted{label}: {sorted(broken)}")
    engine = r.plan.engine
    if read == "outputs":
        cols = planned_columns(r.plan)
        tols = _column_tolerances(r.model, r.plan)
        for name, arr in got.arrays().items():
            exp, tol = expected_read(r, states, name, None, env_ids, n)
            g = np.asarray(arr)
            if name == "sensordata":
                g, exp, tol = g[..., cols], exp[..., cols], tols[cols]
            g2 = g.reshape(1, -1) if g.ndim <= 1 else g.reshape(g.shape[0], -1)
            if g.shape != exp.shape:
                raise violation(
                    f"cache.outputs().{name} has shape {g.shape}, expected {exp.shape}{label}"
                )
            tol2 = np.broadcast_to(tol, exp.shape).reshape(g2.shape)
            compare(
                f"cache.outputs().{name}",
                g2,
                exp.reshape(g2.shape),
                engine,
                tol2,
                np.zeros(g2.shape[0], bool),
                label,
            )
        return "ok"
    exp, tol = expected_read(r, states, read, arg, env_ids, n)
    g = np.asarray(got)
    if g.shape != exp.shape:
        raise violation(f"cache.{read} returned shape {g.shape}, expected {exp.shape}{label}")
    g2 = g.reshape(1, -1) if g.ndim <= 1 else g.reshape(g.shape[0], -1)
    e2 = exp.reshape(g2.shape)
    compare(f"cache.{read}", g2, e2, engine, tol, np.zeros(g2.shape[0], bool), label)
    return "ok"


# ------------------------------------------------------- expected validity
# What README "Use"/"Guarantees" promise about arguments, as a predicate on
# the arrays a case built: `broken` arguments must be rejected, `maybe` ones
# (where the README leaves it open) may be either, everything else must work.
_F64 = np.dtype(np.float64)
_OUT_DTYPES = (np.dtype(np.float64), np.dtype(np.float32))


def _last_contiguous(a: np.ndarray) -> bool:
    # an empty array has no layout to speak of (numpy may give it zero strides)
    return a.size == 0 or a.ndim == 0 or a.shape[-1] <= 1 or a.strides[-1] == a.itemsize


def _rows_contiguous(a: np.ndarray) -> bool:
    """Each row's values (the trailing axes) form one C-contiguous block."""
    if a.size == 0:
        return True
    expect = a.itemsize
    for k in range(a.ndim - 1, 0, -1):
        if a.shape[k] > 1 and a.strides[k] != expect:
            return False
        expect *= a.shape[k]
    return True


def _shares(a: np.ndarray, b: np.ndarray) -> bool:
    try:
        return bool(np.shares_memory(a, b, max_work=10**6))
    except np.exceptions.TooHardError:
        return True


def _is_scalar_number(v: Any) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(
        v, (bool, np.bool_)
    )


def expectation(
    r: mjrefresh.Refresher, method: str, args: Mapping[str, Any]
) -> tuple[set[str], set[str]]:
    """(broken, maybe) argument names of a call with `args` (see check_call)."""
    model, plan = r.model, r.plan
    broken: set[str] = set()
    maybe: set[str] = set()
    q = args.get("qpos")
    n: int | None = None
    if isinstance(q, np.ndarray) and q.ndim == 2:
        n = q.shape[0]
    else:
        broken.add("qpos")
    inputs: list[tuple[str, np.ndarray]] = []

    def state(name: str, a: Any, width: tuple[int, ...], items: bool = False) -> None:
        if not isinstance(a, np.ndarray):
            broken.add(name)
            return
        inputs.append((name, a))
        if a.dtype.kind == "f" and a.itemsize == 8 and not a.dtype.isnative:
            maybe.add(name)  # float64 in the other byte order: README is silent
            if n is None or a.shape != (n, *width) or not _last_contiguous(a):
                broken.add(name)
        elif n is None or a.dtype != _F64 or a.shape != (n, *width) or not _last_contiguous(a):
            broken.add(name)
        elif items and a.size and a.shape[1] > 1 and a.strides[1] != a.shape[2] * a.itemsize:
            maybe.add(name)  # README: "last axis contiguous; any row stride"
        if not a.flags.aligned:
            maybe.add(name)  # README is silent on alignment

    state("qpos", q, (model.nq,))
    state("qvel", args.get("qvel"), (model.nv,))
    for name, w in (("mocap_pos", 3), ("mocap_quat", 4)):
        a = args.get(name)
        if model.nmocap:
            if a is None:
                broken.add(name)
            else:
                state(name, a, (model.nmocap, w), items=True)
        elif a is not None:
            maybe.add(name)  # arrays for a model without mocap bodies
            if isinstance(a, np.ndarray):
                inputs.append((name, a))
    t = args.get("time")
    if t is None:
        if plan.needs_time:
            broken.add("time")
    elif isinstance(t, (bool, np.bool_)):
        maybe.add("time")
    elif _is_scalar_number(t):
        pass
    elif isinstance(t, np.ndarray):
        inputs.append(("time", t))
        if t.ndim == 0:
            if t.dtype != _F64:
                (maybe if t.dtype.kind in "iuf" else broken).add("time")
        elif t.dtype.kind == "f" and t.itemsize == 8 and not t.dtype.isnative:
            maybe.add("time")
        elif t.dtype != _F64 or t.shape != (n,):
            broken.add("time")
    elif isinstance(t, str):
        try:
            float(t)
            maybe.add("time")  # a numeric string: numpy converts it
        except ValueError:
            broken.add("time")
    elif isinstance(t, (list, tuple)):
        try:
            ta = np.asarray(t, dtype=np.float64)
            if ta.shape != (n,):
                broken.add("time")
        except (TypeError, ValueError):
            broken.add("time")
    else:
        broken.add("time")

    fields = args.get("model_fields")
    declared = plan.model_fields
    if fields is None or (isinstance(fields, Mapping) and not fields):
        if declared:
            broken.add("model_fields")
    elif not isinstance(fields, Mapping):
        broken.add("model_fields")
    else:
        if set(fields) != set(declared):
            broken.add("model_fields")
        for name, a in fields.items():
            key = f"model_fields[{name!r}]"
            if not isinstance(a, np.ndarray):
                broken.add("model_fields")
                continue
            inputs.append((key, a))
            if name in declared and n is not None:
                shape = (n, *plan.model_field_shape(model, name))
                if a.dtype != _F64 or a.shape != shape or not _rows_contiguous(a):
                    broken.add("model_fields")

    out = args.get("out")
    written: list[tuple[str, np.ndarray]] = []
    if not isinstance(out, mjrefresh.RefreshOutputs):
        broken.add("out")
    else:
        shapes = r.output_shapes(n) if n is not None else {}
        for name, a in out.arrays().items():
            full = f"out.{name}"
            if not isinstance(a, np.ndarray):
                broken.add(full)
                continue
            written.append((full, a))
            if not a.flags.aligned:
                maybe.add(full)  # README is silent on alignment
            if n is None:
                continue
            if a.dtype.kind == "f" and a.itemsize in (4, 8) and not a.dtype.isnative:
                maybe.add(full)  # float64/32 in the other byte order
                if name not in shapes or a.shape != shapes[name]:
                    broken.add(full)
                continue
            if (
                name not in shapes
                or a.dtype not in _OUT_DTYPES
                or a.shape != shapes[name]
                or not _last_contiguous(a)
                or not a.flags.writeable
                or (a.size and a.shape[0] > 1 and a.strides[0] == 0)
                or (
                    a.size
                    and a.ndim == 3
                    and a.shape[1] > 1
                    and abs(a.strides[1]) < a.shape[2] * a.itemsize
                )
            ):
                broken.add(full)
    for i, (name, a) in enumerate(written):
        for other, b in inputs:
            if _shares(a, b):
                broken.update((name, other.split("[")[0] if other.startswith("model_f") else other))
        for other, b in written[i + 1 :]:
            if _shares(a, b):
                broken.update((name, other))

    def aliases_io(a: np.ndarray) -> tuple[bool, bool]:
        return (any(_shares(a, b) for _, b in written), any(_shares(a, b) for _, b in inputs))

    if method in ("refresh", "bound", "bound_call"):
        sel = args.get("rows")
        if not isinstance(sel, (np.ndarray, list, tuple, range)):
            broken.add("rows")
        else:
            try:
                a = np.asarray(sel)
            except (TypeError, ValueError):
                a = None
            if a is None or a.ndim != 1:
                broken.add("rows")
            elif a.dtype == np.bool_:
                if a.shape[0] != n:
                    broken.add("rows")
            elif a.size == 0:
                pass
            elif a.dtype.kind not in "iu":
                broken.add("rows")
            else:
                v = [int(x) for x in a.tolist()]
                if (
                    n is None
                    or min(v) < 0
                    or max(v) >= n
                    or any(y <= x for x, y in zip(v, v[1:], strict=False))
                ):
                    broken.add("rows")
            if isinstance(sel, np.ndarray) and aliases_io(sel)[0]:
                maybe.add("rows")  # README is silent on row ids inside an output
    else:
        d = args.get("dirty")
        if (
            not isinstance(d, np.ndarray)
            or d.dtype != np.bool_
            or d.ndim != 1
            or d.shape[0] != n
            or not d.flags.writeable
        ):
            broken.add("dirty")
        elif any(aliases_io(d)):
            maybe.add("dirty")
    return broken, maybe - broken


def check(r: mjrefresh.Refresher, method: str, args: Mapping[str, Any], **kw: Any) -> str:
    """`check_call` with the expectation `expectation` derives from the arrays
    (extra `broken`/`maybe` names may be given)."""
    broken, maybe = expectation(r, method, args)
    broken |= set(kw.pop("broken", ()))
    maybe = (maybe | set(kw.pop("maybe", ()))) - broken
    note = kw.pop("note", "")
    what = f"expected: reject naming one of {sorted(broken)}" if broken else "expected: success"
    if maybe:
        what += f" (or a rejection naming one of {sorted(maybe)})"
    return check_call(
        r, method, args, broken=broken, maybe=maybe, note=f"{note}; {what}" if note else what, **kw
    )


# ------------------------------------------------------------------- layouts
def relayout(a: np.ndarray, kind: str, fill: float = 777.25) -> np.ndarray:
    """`a`'s values in another memory layout (a new buffer; `fill` elsewhere)."""
    a = np.asarray(a)
    if kind == "c":
        return np.ascontiguousarray(a).copy()
    if kind == "row_strided":
        buf = np.full((a.shape[0] * 3, *a.shape[1:]), fill, dtype=a.dtype)
        buf[1::3] = a
        return buf[1::3]
    if kind == "negative_rows":
        return a[::-1].copy()[::-1]
    if kind == "fortran":
        return np.asfortranarray(a.copy())
    if kind == "last_strided":
        buf = np.full((*a.shape[:-1], a.shape[-1] * 2), fill, dtype=a.dtype)
        buf[..., ::2] = a
        return buf[..., ::2]
    if kind == "negative_last":
        return a[..., ::-1].copy()[..., ::-1]
    if kind == "wide_rows":  # each row inside a wider row: a backend's interleaved state
        buf = np.full((*a.shape[:-1], a.shape[-1] + 5), fill, dtype=a.dtype)
        buf[..., 2 : 2 + a.shape[-1]] = a
        return buf[..., 2 : 2 + a.shape[-1]]
    if kind == "item_strided":
        buf = np.full((a.shape[0], a.shape[1] * 2, *a.shape[2:]), fill, dtype=a.dtype)
        buf[:, ::2] = a
        return buf[:, ::2]
    if kind == "item_reversed":
        return a[:, ::-1].copy()[:, ::-1]
    if kind == "broadcast":  # read-only, row stride 0: every row is row 0
        return np.broadcast_to(a[:1].copy(), a.shape)
    if kind == "broadcast_writable":
        base = a[:1].copy()
        return np.lib.stride_tricks.as_strided(
            base, shape=a.shape, strides=(0, *base.strides[1:]), writeable=True
        )
    if kind == "readonly":
        b = a.copy()
        b.flags.writeable = False
        return b
    if kind == "unaligned":
        raw = np.zeros(a.nbytes + a.itemsize, dtype=np.uint8)
        b = raw[1 : 1 + a.nbytes].view(a.dtype).reshape(a.shape)
        b[...] = a
        return b
    raise ValueError(f"unknown layout {kind!r}")


LAYOUTS = (
    "c",
    "row_strided",
    "negative_rows",
    "fortran",
    "last_strided",
    "negative_last",
    "wide_rows",
    "broadcast",
    "readonly",
    "unaligned",
)
ITEM_LAYOUTS = ("item_strided", "item_reversed")


def retyped(a: Any, dtype: Any) -> np.ndarray:
    """`a` converted to `dtype` (zeros of that dtype where numpy cannot convert)."""
    a = np.asarray(a)
    dt = np.dtype(dtype)
    if dt.kind == "V":
        return np.zeros(a.shape, dtype=dt)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return a.astype(dt)
    except (TypeError, ValueError):
        return np.zeros(a.shape, dtype=dt)


def int64_view_into(arr: np.ndarray, row: int, first_col: int, ids: Sequence[int]) -> np.ndarray:
    """Row ids written as int64 into the bytes of `arr[row]` from column
    `first_col` on (a row's planned output columns), returned as an int64
    view of them; only as many ids as fit (the first ones) are kept."""
    seg = arr[row].reshape(-1)[first_col:]
    raw = seg.view(np.uint8)
    k = min(len(ids), raw.size // 8)
    view = raw[: 8 * k].view(np.int64)
    view[:] = ids[:k]
    return view


def bool_view_into(arr: np.ndarray, byte: int = 0) -> np.ndarray:
    """A writable (N,) bool view of byte `byte` of each row of `arr` (all False)."""
    first = arr[(slice(None),) + (0,) * (arr.ndim - 2)]  # (N, width): each row's first item
    mask = first.view(np.uint8)[:, byte].view(np.bool_)
    mask[:] = False
    return mask


# ------------------------------------------------------ processes and threads
def vm_size() -> int:
    """This process's virtual memory size in bytes (for RLIMIT_AS)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmSize in /proc/self/status")


def wait_child(pid: int, timeout: float, what: str = "the forked child") -> None:
    """Wait for a forked child; a hang, a signal or a non-zero exit is a violation."""
    import os
    import signal
    import time

    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            raise violation(f"{what} hung (no exit after {timeout:.0f} s; killed)")
        time.sleep(0.005)
    if os.WIFSIGNALED(status):
        raise violation(f"{what} was killed by {signal.Signals(os.WTERMSIG(status)).name}")
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise violation(f"{what} exited with code {code} (its traceback is in the output)")


def expect_closed(
    fn: Callable[[], Any], arrays: Iterable[np.ndarray] = (), what: str = "call"
) -> None:
    """`fn()` raises RuntimeError("Refresher is closed") and writes nothing."""
    mem = Memory(list(arrays))
    try:
        result = fn()
    except RuntimeError as exc:
        if str(exc) != CLOSED:
            raise violation(f"{what} after close raised {_describe(exc)}") from exc
    except Exception as exc:  # noqa: BLE001
        raise violation(f"{what} after close raised {_describe(exc)}\n{_tb(exc)}") from exc
    else:
        raise violation(f"{what} after close returned {result!r}; expected RuntimeError")
    problems = mem.changed(allowed=False)
    if problems:
        raise violation(f"{what} after close wrote: {problems}")


def all_written(
    r: mjrefresh.Refresher, out: mjrefresh.RefreshOutputs, ids: Sequence[int] | None = None
) -> bool:
    """Whether no planned output cell of rows `ids` (default all) still holds SENTINEL."""
    cols = planned_columns(r.plan)
    for name, a in out.arrays().items():
        sub = a if ids is None else a[np.asarray(ids)]
        if name == "sensordata":
            sub = sub[:, cols]
        if (sub == SENTINEL).any():
            return False
    return True


def untouched(out: mjrefresh.RefreshOutputs) -> bool:
    return all((a == SENTINEL).all() for a in out.arrays().values())


def tiled_states(states: Mapping[str, np.ndarray], reps: int) -> dict[str, np.ndarray]:
    """`states` repeated `reps` times along the rows (a long call, cheaply)."""
    return {
        k: np.ascontiguousarray(np.tile(v, (reps,) + (1,) * (v.ndim - 1)))
        for k, v in states.items()
    }


def sleeping_states(model: mujoco.MjModel, n: int, seed: int) -> dict[str, np.ndarray]:
    """States of a sleep-enabled model after random numbers of physics steps
    (some trees asleep), then non-zero velocities written into half the rows."""
    rng = np.random.default_rng(seed)
    st = make_states(model, n, seed)
    d = mujoco.MjData(model)
    for i in range(n):
        mujoco.mj_resetData(model, d)
        d.qvel[:] = rng.normal(scale=0.05, size=model.nv)
        for _ in range(int(rng.integers(0, 400))):
            mujoco.mj_step(model, d)
        st["qpos"][i] = d.qpos
        st["qvel"][i] = d.qvel
        if i % 2:
            st["qvel"][i] += rng.normal(scale=1.0, size=model.nv)
    return st


def check_outputs_call(
    r: mjrefresh.Refresher,
    num_envs: Any,
    dtype: Any = np.float64,
    arrays: Mapping[str, Any] | None = None,
    *,
    broken: Iterable[str] = (),
    maybe: Iterable[str] = (),
) -> str:
    """`r.outputs(num_envs, dtype, **arrays)`: zeroed arrays of the plan's
    shapes (the given arrays as they are), or a rejection naming the argument."""
    broken, maybe = set(broken), set(maybe)
    arrays = dict(arrays or {})
    try:
        out = r.outputs(num_envs, dtype, **arrays)
    except (TypeError, ValueError) as exc:
        allowed = broken | maybe
        if not allowed:
            raise violation(f"a valid outputs() call was rejected: {_describe(exc)}") from exc
        if not names_argument(str(exc), allowed):
            raise violation(
                f"outputs() rejection does not name one of {sorted(allowed)}: {_describe(exc)}"
            ) from exc
        return "rejected"
    except Exception as exc:  # noqa: BLE001
        raise violation(f"unexpected {_describe(exc)} from outputs()\n{_tb(exc)}") from exc
    if broken:
        raise violation(f"an invalid outputs() call was accepted: {sorted(broken)}")
    shapes = r.output_shapes(int(num_envs))
    got = out.arrays()
    if set(got) != set(shapes):
        raise violation(f"outputs() gave {sorted(got)}, the plan writes {sorted(shapes)}")
    for name, a in got.items():
        if name in arrays:
            if a is not arrays[name] and not np.shares_memory(a, np.asarray(arrays[name])):
                raise violation(f"outputs() copied the given {name} array")
            continue
        if a.shape != shapes[name] or a.dtype != np.dtype(dtype) or a.any():
            raise violation(
                f"outputs().{name}: {a.dtype}{a.shape}, expected zeroed "
                f"{np.dtype(dtype)}{shapes[name]}"
            )
    return "ok"


def check_bind_arrays(
    r: mjrefresh.Refresher, *, broken: Iterable[str] = (), maybe: Iterable[str] = (), **kwargs: Any
) -> mjrefresh.StateCache | None:
    """`mjrefresh.bind_arrays(r, **kwargs)`: a cache, or a rejection naming
    one of `broken` that wrote nothing into the given arrays."""
    broken, maybe = set(broken), set(maybe)
    mem = Memory([a for v in kwargs.values() for a in _arrays_of(v)])
    try:
        cache = mjrefresh.bind_arrays(r, **kwargs)
    except (TypeError, ValueError) as exc:
        allowed = broken | maybe
        if not allowed:
            raise violation(f"valid bind_arrays arguments were rejected: {_describe(exc)}") from exc
        if not names_argument(str(exc), allowed):
            raise violation(
                f"bind_arrays rejection does not name one of {sorted(allowed)}: {_describe(exc)}"
            ) from exc
        if mem.changed(allowed=False):
            raise violation(
                f"a rejected bind_arrays wrote into its arrays: {_describe(exc)}"
            ) from exc
        return None
    except Exception as exc:  # noqa: BLE001
        raise violation(f"unexpected {_describe(exc)} from bind_arrays\n{_tb(exc)}") from exc
    if broken:
        raise violation(f"invalid bind_arrays arguments were accepted: {sorted(broken)}")
    return cache


def check_mark(cache: mjrefresh.StateCache, mark: str, rows: Any, *, broken: bool) -> None:
    """`cache.<mark>(rows)`: marks those rows, or rejects bad rows naming `rows`."""
    before = cache.dirty.copy()
    try:
        getattr(cache, mark)(rows)
    except (TypeError, ValueError) as exc:
        if not broken:
            raise violation(
                f"cache.{mark}({rows!r}) rejected valid rows: {_describe(exc)}"
            ) from exc
        if not names_argument(str(exc), {"rows"}):
            raise violation(f"cache.{mark} rejection does not name rows: {_describe(exc)}") from exc
        if not np.array_equal(cache.dirty, before):
            raise violation(f"a rejected cache.{mark} changed the dirty mask") from exc
        return
    except Exception as exc:  # noqa: BLE001
        raise violation(f"unexpected {_describe(exc)} from cache.{mark}\n{_tb(exc)}") from exc
    if broken:
        raise violation(f"cache.{mark}({rows!r}) accepted invalid rows")


def set_quaternions(
    model: mujoco.MjModel, args: dict[str, Any], row: int, q: Sequence[float]
) -> None:
    """Write `q` into every free/ball joint quaternion (and mocap quaternion) of
    `row` of the arrays in `args` (copies them first)."""
    qpos = args["qpos"] = np.array(args["qpos"])
    for j in range(model.njnt):
        adr = int(model.jnt_qposadr[j])
        if int(model.jnt_type[j]) == mujoco.mjtJoint.mjJNT_FREE:
            qpos[row, adr + 3 : adr + 7] = q
        elif int(model.jnt_type[j]) == mujoco.mjtJoint.mjJNT_BALL:
            qpos[row, adr : adr + 4] = q
    if model.nmocap and args.get("mocap_quat") is not None:
        mq = args["mocap_quat"] = np.array(args["mocap_quat"])
        mq[row] = q


def degenerate_field_row(fields: dict[str, np.ndarray], row: int, scale: float) -> None:
    """Row `row` of every per-environment field scaled by `scale` (zero or
    tiny or huge quaternions, masses, axes and offsets; finite)."""
    for k, v in fields.items():
        fields[k] = np.array(v)
        fields[k][row] *= scale


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
