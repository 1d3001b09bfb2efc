"""Which sensors a refresh computes, the MuJoCo stages each one reads, and why
the others are refused.

The rule: a sensor is refreshed when everything it reads is derived by
``mj_forward`` from qpos, qvel, time, mocap and the model, by stage functions
that are safe to run per row on worker threads. It is refused (with the
reason, at planning time) when it reads the physics solve (acceleration
stage), MuJoCo's sensor history, a global callback or plugin code run in the
position/velocity passes, or state only physics steps advance.
"""

from __future__ import annotations

from collections.abc import Iterable

import mujoco

_S = mujoco.mjtSensor
_ACC = mujoco.mjtStage.mjSTAGE_ACC
_POS = mujoco.mjtStage.mjSTAGE_POS
_VEL_STAGE = mujoco.mjtStage.mjSTAGE_VEL

POSE = frozenset({"kinematics"})
VEL = frozenset({"kinematics", "comPos", "comVel"})
CAMERA_STAGES = frozenset({"kinematics", "comPos", "camlight"})
# mj_makeM builds the mass matrix from cinert (mj_comPos).
MASS = frozenset({"kinematics", "comPos", "makeM"})
# What mj_forward runs before mj_makeConstraint (mj_makeImpedance reads the
# factorised mass matrix); collision is added only where contact rows are read.
CONSTRAINT = frozenset({"kinematics", "comPos", "makeM", "factorM", "makeConstraint"})
CONTACTS = frozenset({"kinematics", "comPos", "collision"})

# Sensor types a refresh computes, with the stages their values read.
# sensorPos/sensorVel are added from the sensor's stage; tendon/flex are
# added by the planner where the model has tendons/flexes.
SUPPORTED: dict[int, frozenset[str]] = {
    _S.mjSENS_MAGNETOMETER: POSE,
    _S.mjSENS_CAMPROJECTION: CAMERA_STAGES,
    _S.mjSENS_RANGEFINDER: POSE,
    _S.mjSENS_JOINTPOS: frozenset(),
    _S.mjSENS_BALLQUAT: frozenset(),
    _S.mjSENS_TENDONPOS: frozenset({"kinematics", "comPos", "tendon"}),
    _S.mjSENS_ACTUATORPOS: frozenset({"kinematics", "comPos", "tendon", "transmission"}),
    _S.mjSENS_FRAMEPOS: POSE,
    _S.mjSENS_FRAMEQUAT: POSE,
    _S.mjSENS_FRAMEXAXIS: POSE,
    _S.mjSENS_FRAMEYAXIS: POSE,
    _S.mjSENS_FRAMEZAXIS: POSE,
    _S.mjSENS_SUBTREECOM: frozenset({"kinematics", "comPos"}),
    _S.mjSENS_CLOCK: frozenset(),
    _S.mjSENS_INSIDESITE: POSE,
    _S.mjSENS_GEOMDIST: POSE,
    _S.mjSENS_GEOMNORMAL: POSE,
    _S.mjSENS_GEOMFROMTO: POSE,
    _S.mjSENS_VELOCIMETER: VEL,
    _S.mjSENS_GYRO: VEL,
    _S.mjSENS_JOINTVEL: frozenset(),
    _S.mjSENS_BALLANGVEL: frozenset(),
    # ten_velocity / actuator_velocity are computed inside mj_fwdVelocity,
    # not by mj_comVel (measured error 0.19 / 3.1 when this is missed).
    _S.mjSENS_TENDONVEL: frozenset({"kinematics", "comPos", "tendon", "fwdVelocity"}),
    _S.mjSENS_ACTUATORVEL: frozenset(
        {"kinematics", "comPos", "tendon", "transmission", "fwdVelocity"}
    ),
    _S.mjSENS_FRAMELINVEL: VEL,
    _S.mjSENS_FRAMEANGVEL: VEL,
    # subtree_linvel/angmom: mj_sensorVel calls mj_subtreeVel lazily; the
    # engine clears flg_subtreevel per row (measured error 2.55 otherwise).
    _S.mjSENS_SUBTREELINVEL: VEL,
    _S.mjSENS_SUBTREEANGMOM: VEL,
    # mj_sensorPos calls mj_energyPos / mj_energyVel lazily (the engine
    # clears flg_energypos/vel per row): potential energy reads poses,
    # tendon and flex lengths; kinetic energy reads the mass matrix.
    _S.mjSENS_E_POTENTIAL: POSE,
    _S.mjSENS_E_KINETIC: MASS,
    # Limit sensors read their row of mj_makeConstraint (efc_pos, efc_margin)
    # and, for velocities, efc_vel from mj_fwdVelocity. Limit rows come
    # before contact rows, so they do not need mj_collision.
    _S.mjSENS_JOINTLIMITPOS: CONSTRAINT,
    _S.mjSENS_JOINTLIMITVEL: CONSTRAINT | {"fwdVelocity"},
    _S.mjSENS_TENDONLIMITPOS: CONSTRAINT | {"tendon"},
    _S.mjSENS_TENDONLIMITVEL: CONSTRAINT | {"tendon", "fwdVelocity"},
    # MuJoCo >= 3.16 infers a position or velocity stage for contact sensors
    # that report no forces (found/dist/pos/normal/tangent; velocities), and
    # tactile sensors are velocity-stage; before, both are acceleration-stage.
    _S.mjSENS_CONTACT: CONTACTS,
    _S.mjSENS_TACTILE: CONTACTS | {"comVel"},
}

# Stages whose per-row cost is of another order than the kinematic passes;
# the plan printout states it next to the outputs that need them.
STAGE_COSTS: dict[str, str] = {
    "makeM": "mass matrix (composite rigid body) per row",
    "factorM": "sparse factorisation of the mass matrix per row",
    "collision": "broadphase + narrowphase over all geoms per row; the model's declared "
    "arena is kept (its use depends on the contacts)",
    "makeConstraint": "every constraint row (equality, friction, limits, contacts) with its "
    "Jacobian per row; the model's declared arena is kept",
}

REJECTED: dict[int, str] = {
    _S.mjSENS_USER: "user sensors are computed by the global mjcb_sensor callback, which a "
    "refresh does not call from worker threads",
    _S.mjSENS_PLUGIN: "plugin sensors are computed by plugin code a refresh does not run "
    "on worker threads",
}


class PlanError(ValueError):
    """A selection that a refresh cannot compute correctly."""


def object_name(model: mujoco.MjModel, objtype: mujoco.mjtObj, i: int) -> str:
    """Name of object `i`, or ``#i`` if it has none."""
    return mujoco.mj_id2name(model, objtype, i) or f"#{i}"


def require_model(model: object) -> mujoco.MjModel:
    """`model` if it is a ``mujoco.MjModel``, else TypeError naming the fix
    (compile an ``MjSpec``; pass the ``.model`` of an object that holds one,
    such as a Refresher or an ``MjData``). Every public function taking a
    model checks it here: the native core reads any object's ``_address`` as
    a model (an MjSpec's memory read as sizes)."""
    if isinstance(model, mujoco.MjModel):
        return model
    hint = ""
    if isinstance(model, mujoco.MjSpec):
        hint = " (compile it: spec.compile())"
    else:
        try:
            holds = isinstance(getattr(model, "model", None), mujoco.MjModel)
        except Exception:  # an object whose attribute raises: no hint
            holds = False
        if holds:
            hint = f" (pass {type(model).__name__.lower()}.model)"
    raise TypeError(f"model: expected mujoco.MjModel, got {type(model).__name__}{hint}")


def sensor_label(model: mujoco.MjModel, i: int) -> str:
    """``sensor 'name' (type)``: how messages name sensor `i`."""
    require_model(model)
    if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < model.nsensor:
        raise ValueError(f"i: expected a sensor id in [0, {model.nsensor}), got {i!r}")
    stype = mujoco.mjtSensor(int(model.sensor_type[i])).name.removeprefix("mjSENS_").lower()
    return f"sensor {object_name(model, mujoco.mjtObj.mjOBJ_SENSOR, i)!r} ({stype})"


def _refusal(model: mujoco.MjModel, i: int) -> str | None:
    """Why sensor `i` cannot be refreshed (the text after the label), or None."""
    stype = int(model.sensor_type[i])
    needstage = int(model.sensor_needstage[i])
    if stype in REJECTED:
        return f"cannot be refreshed: {REJECTED[stype]}"
    if needstage == _ACC:
        return (
            "is an acceleration-stage sensor: a refresh never recomputes it (it keeps the "
            "value of the physics solve that produced it); select only position/velocity-stage "
            "sensors"
        )
    if (
        int(model.sensor_historyadr[i]) >= 0
        or float(model.sensor_delay[i]) > 0
        or (float(model.sensor_interval[i, 0]) > 0)
    ):
        return (
            "cannot be refreshed: delayed/interval sensors read MuJoCo's sensor history "
            "buffer, which only physics steps advance"
        )
    if stype not in SUPPORTED:
        return "cannot be refreshed: sensor type not supported"
    if stype == _S.mjSENS_E_POTENTIAL and int(getattr(model, "nplastic", 0)) > 0:
        return (
            "cannot be refreshed: the potential energy reads the plastic spring state "
            "(mjData.plastic), which only physics steps advance"
        )
    rod = _flex_plastic(model) if reads_contacts(model, i) else None
    if rod is not None:
        return (
            f"cannot be refreshed: MuJoCo's collision reads the material frames of flex {rod!r} "
            "(mjData.plastic, MuJoCo >= 4.0 box-section rods), which only physics steps "
            "advance and a refresh does not receive"
        )
    return None


def reads_contacts(model: mujoco.MjModel, i: int) -> bool:
    """Whether sensor `i` is computed from the contacts MuJoCo's collision
    finds (contact, tactile, an adhesion actuator's velocity)."""
    stype = int(model.sensor_type[i])
    if stype == _S.mjSENS_ACTUATORVEL:
        return is_adhesion(model, int(model.sensor_objid[i]))
    return "collision" in SUPPORTED.get(stype, ())


def _flex_plastic(model: mujoco.MjModel) -> str | None:
    """The name of the first flex with plastic state (MuJoCo >= 4.0: the
    material frames of box-section rods, which collision reads), or None."""
    adr = getattr(model, "flex_plasticadr", None)
    if adr is None or int(getattr(model, "nplastic", 0)) == 0:
        return None
    for f, a in enumerate(adr):
        if int(a) >= 0:
            return object_name(model, mujoco.mjtObj.mjOBJ_FLEX, f)
    return None


def sensor_stages(model: mujoco.MjModel, i: int) -> frozenset[str]:
    """Stages sensor `i` needs, or PlanError with the reason it can't be refreshed."""
    why = _refusal(model, i)
    if why is not None:
        raise PlanError(f"{sensor_label(model, i)} {why}")
    stype = int(model.sensor_type[i])
    stages = set(SUPPORTED[stype])
    cam = mujoco.mjtObj.mjOBJ_CAMERA
    if int(model.sensor_objtype[i]) == cam or int(model.sensor_reftype[i]) == cam:
        stages |= CAMERA_STAGES
    if stype == _S.mjSENS_ACTUATORVEL and is_adhesion(model, int(model.sensor_objid[i])):
        # The moment of a body (adhesion) transmission is built from the
        # contacts and their constraint rows (mj_transmission).
        stages |= CONTACTS | CONSTRAINT
    if stype == _S.mjSENS_CONTACT and int(model.sensor_needstage[i]) == _VEL_STAGE:
        stages.add("comVel")  # contact velocities read cvel
    if stype == _S.mjSENS_E_POTENTIAL:
        # mj_energyPos adds tendon and flex-edge spring energies.
        stages |= {"comPos", "tendon"} if model.ntendon else set()
        stages |= {"flex"} if model.nflex else set()
    stages.add("sensorPos" if int(model.sensor_needstage[i]) == _POS else "sensorVel")
    return frozenset(stages)


def num_actuators(model: mujoco.MjModel) -> int:
    """Actuators of `model` (``nactuator``). Controls (``nu``) are not
    actuators: since MuJoCo 3.11 one actuator can take several controls and
    give several force outputs (an ``<orientation>`` servo); releases before
    3.11 have one control per actuator and no ``nactuator``."""
    return int(getattr(model, "nactuator", model.nu))


def is_adhesion(model: mujoco.MjModel, actuator: int) -> bool:
    """Whether `actuator` has a body (adhesion) transmission."""
    return int(model.actuator_trntype[actuator]) == mujoco.mjtTrn.mjTRN_BODY


def pass_plugin_conflict(model: mujoco.MjModel, passes: set[str]) -> str | None:
    """PlanError text if a planned sensor pass (sensorPos/sensorVel) would run
    a plugin sensor's plugin code, else None.

    MuJoCo's sensor passes call every sensor plugin of their stage (keyed on
    the plugin's own stage, not on the sensor mask), so such a model can
    refresh sensors only in the other pass. Plugin sensors of the
    acceleration stage never run in a refresh and block nothing.
    """
    for i in range(model.nsensor):
        if int(model.sensor_type[i]) != _S.mjSENS_PLUGIN:
            continue
        stage = int(model.sensor_needstage[i])
        runs_in = "sensorVel" if stage == _VEL_STAGE else None if stage == _ACC else "sensorPos"
        if runs_in in passes:
            return (
                f"model has plugin {sensor_label(model, i)}, whose plugin mj_{runs_in} runs on "
                "every call: a refresh does not run plugin code on worker threads; select no "
                f"sensors computed by mj_{runs_in}, or remove the plugin sensor"
            )
    return None


# Sensors whose value MuJoCo computes with every geom's distance or ray
# functions (mj_ray, mj_geomDistance), an SDF geom's plugin included.
_GEOM_QUERIES = frozenset(
    {_S.mjSENS_RANGEFINDER, _S.mjSENS_GEOMDIST, _S.mjSENS_GEOMNORMAL, _S.mjSENS_GEOMFROMTO}
)


def sdf_plugin_conflict(
    model: mujoco.MjModel, stages: set[str], sensor_ids: Iterable[int]
) -> str | None:
    """PlanError text if the plan would run an SDF geom's plugin code
    (mj_collision, or a ray/distance sensor), else None."""
    sdf = [g for g in range(model.ngeom) if int(model.geom_type[g]) == mujoco.mjtGeom.mjGEOM_SDF]
    if not sdf:
        return None
    name = object_name(model, mujoco.mjtObj.mjOBJ_GEOM, sdf[0])
    why = (
        f"model has SDF geom {name!r}, whose plugin computes its distances in MuJoCo's "
        "{where}: a refresh does not run plugin code on worker threads; {fix}"
    )
    if "collision" in stages:
        return why.format(
            where="mj_collision",
            fix="select no outputs that need contacts (contact sensors, adhesion actuators)",
        )
    for i in sensor_ids:
        if int(model.sensor_type[i]) in _GEOM_QUERIES:
            return why.format(
                where=f"ray and distance queries, which {sensor_label(model, i)} runs",
                fix="select no rangefinder or geom-distance sensors",
            )
    return None


def refusal_of(model: mujoco.MjModel, i: int) -> str | None:
    """Why a refresh refuses sensor `i` (``sensor 'name' (type) ...``), or None."""
    why = _refusal(model, i)
    return None if why is None else f"{sensor_label(model, i)} {why}"


def refresh_refusals(model: mujoco.MjModel) -> dict[int, str]:
    """Sensors of `model` a refresh refuses, by id, with the reason.

    The same rule :func:`mjrefresh.plan.build_plan` applies to a selection: a
    plan that selects any of these sensors raises :class:`PlanError` with
    this reason.
    """
    require_model(model)
    refused = {}
    for i in range(model.nsensor):
        why = _refusal(model, i)
        if why is not None:
            refused[i] = f"{sensor_label(model, i)} {why}"
    return refused
