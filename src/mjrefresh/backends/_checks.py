"""Argument checks every backend binding shares."""

from __future__ import annotations

import functools
import re
import weakref
from collections.abc import Iterable

import mujoco
import numpy as np

from ..plan import MODEL_FIELDS
from ..refresher import Refresher

# Model fields a refresh reads from the refresher's model (beyond those it
# can take per row, MODEL_FIELDS): a batch that gives them other values per
# simulation, or runs another model, gets other position/velocity-stage
# values than the refresh computes. After MuJoCo's mj_kinematics/mj_comPos
# (every refresh), mj_camlight, mj_tendon, mj_transmission, mj_energyPos/
# mj_energyVel (with mj_crb/mj_makeM) and the sensors' own reads (only where
# a selected sensor reads them): randomising a field no selected output
# reads (friction, damping, a camera no sensor uses, the size of a geom no
# ray or distance sensor sees) stays allowed. Every integer field (the
# model's structure: joint types, parent and object ids, addresses, camera
# targets, ...) is compared too, except those of _INT_NOT_READ: compared
# unless known unread, so a field a new MuJoCo adds is compared.
_EVERY_REFRESH = (
    *MODEL_FIELDS,
    *("qpos0", "body_subtreemass", "opt.disableflags", "opt.enableflags"),
)
_CAMERA = ("cam_pos", "cam_quat", "cam_pos0", "cam_poscom0", "cam_mat0", "cam_mode", "cam_bodyid")
_TENDON = ("wrap_type", "wrap_objid", "wrap_prm", "geom_size", "tendon_adr", "tendon_num")
_GEOMETRY = (
    *("geom_type", "geom_size", "geom_dataid", "geom_group", "geom_rgba", "geom_matid"),
    *("geom_margin", "geom_gap", "mat_rgba", "body_weldid", "geom_rbound", "geom_aabb"),
)
# Geometry sensors also read every heightfield and mesh value (terrain and
# mesh shapes under a ray, a mesh's vertices and hull for a distance).
_GEOMETRY_PREFIXES = ("hfield_", "mesh_")
_BY_SENSOR_TYPE = {
    "CAMPROJECTION": (
        *_CAMERA,
        *("cam_fovy", "cam_intrinsic", "cam_sensorsize", "cam_resolution", "cam_projection"),
    ),
    "MAGNETOMETER": ("opt.magnetic",),
    "ACTUATORPOS": (
        "actuator_trntype",
        "actuator_trnid",
        "actuator_gear",
        "actuator_cranklength",
        *_TENDON,
    ),
    "TENDONPOS": _TENDON,
    "RANGEFINDER": _GEOMETRY,
    "GEOMDIST": (*_GEOMETRY, "opt.ccd_tolerance", "opt.ccd_iterations"),
    "INSIDESITE": ("site_type", "site_size"),
    "JOINTLIMITPOS": ("jnt_range", "jnt_margin"),
    "TENDONLIMITPOS": ("tendon_range", "tendon_margin", *_TENDON),
    # mj_energyPos: gravity, joint, tendon and flex-edge springs
    "E_POTENTIAL": (
        *("opt.gravity", "jnt_stiffness", "jnt_stiffnesspoly", "qpos_spring"),
        *("tendon_stiffness", "tendon_stiffnesspoly", "tendon_lengthspring"),
        *("flex_edgestiffness", "flexedge_length0", "flex_dim", "flex_edgeadr"),
        *("flex_edgenum", "flex_rigid", "flexedge_rigid", *_TENDON),
    ),
    # mj_energyVel: qvel' M qvel, M from mj_crb plus armatures (mj_makeM)
    "E_KINETIC": ("dof_armature", "tendon_armature", *_TENDON),
}
for _pos, _vel in (
    ("ACTUATORPOS", "ACTUATORVEL"),
    ("TENDONPOS", "TENDONVEL"),
    ("JOINTLIMITPOS", "JOINTLIMITVEL"),
    ("TENDONLIMITPOS", "TENDONLIMITVEL"),
):
    _BY_SENSOR_TYPE[_vel] = _BY_SENSOR_TYPE[_pos]
_BY_SENSOR_TYPE["GEOMNORMAL"] = _BY_SENSOR_TYPE["GEOMFROMTO"] = _BY_SENSOR_TYPE["GEOMDIST"]
_GEOMETRY_TYPES = frozenset(("RANGEFINDER", "GEOMDIST", "GEOMNORMAL", "GEOMFROMTO"))
# Integer fields no refresh reads: names and texts, rendering (lights,
# textures, materials, skins, groups, shadows), collision (filters,
# priorities, pairs, exclusions, bounding volumes, octrees), equality
# constraints, plugins' own data, actuator dynamics and limits. mujoco.batch
# lets each of these be expanded per simulation.
_INT_NOT_READ = re.compile(
    r"^(name_|names_map|text_|numeric_|tuple_|light_|tex_|mat_tex|skin_|pair_|exclude_|eq_"
    r"|plugin|bvh_|oct_|key_)"
    r"|_(contype|conaffinity|condim|priority|group|matid|pathadr|castshadow|plugin"
    r"|bvhadr|bvhnum|octadr|octnum|texcoordadr|texcoordnum)$"
    r"|^actuator_(dyntype|gaintype|biastype|ctrllimited|forcelimited|actlimited|actearly"
    r"|actadr|actnum|history|historyadr|ctrladr|ctrlnum|ctrlspec|outadr|outnum)$"
    r"|^(jnt|tendon)_act(frclimited|gravcomp)$"
    # sparse-matrix layouts derived from the tree (dof_parentid, compared);
    # flexes (no refreshed output but e_potential's flex springs reads
    # them); meshes and heightfields (only the geometry sensors read them)
    r"|^(M|D|B|efm\w*|ten_J|flexedge_J|flexvert_J)_|^map[MD]2[MD]$|^dof_Madr$"
    r"|^(flex|flexedge|flexvert|mesh|hfield)_|^cam_(output|resolution)$"
)


@functools.cache
def _int_fields() -> tuple[str, ...]:
    """The integer array fields of this MuJoCo's MjModel that a refresh may
    read (all but _INT_NOT_READ), from an empty model (same fields, dtypes)."""
    empty = mujoco.MjModel.from_xml_string("<mujoco/>")
    names = []
    for name in dir(empty):
        if name.startswith("_") or _INT_NOT_READ.search(name):
            continue
        value = getattr(empty, name, None)
        if isinstance(value, np.ndarray) and value.dtype.kind in "iub":
            names.append(name)
    return tuple(names)


def check_refresher(refresher: object) -> Refresher:
    """`refresher` if it is a :class:`~mjrefresh.Refresher`, else TypeError."""
    if not isinstance(refresher, Refresher):
        raise TypeError(f"refresher: expected mjrefresh.Refresher, got {type(refresher).__name__}")
    return refresher


def check_same_sizes(refresher: Refresher, model: mujoco.MjModel, what: str) -> None:
    """ValueError naming `what` unless `model` has the refresher's model sizes."""
    rm = refresher.model
    for attr in ("nq", "nv", "nbody", "nmocap", "nsensor", "nsensordata", "nsite"):
        a, b = getattr(rm, attr), getattr(model, attr)
        if a != b:
            raise ValueError(
                f"{what}: its model does not match the refresher's model "
                f"(expected {attr}={a}, got {attr}={b})"
            )


def check_model(model: object) -> mujoco.MjModel:
    """`model` if it is a ``mujoco.MjModel``, else TypeError (naming the fix
    when a Refresher was passed)."""
    if not isinstance(model, mujoco.MjModel):
        hint = " (pass refresher.model)" if isinstance(model, Refresher) else ""
        raise TypeError(f"model: expected mujoco.MjModel, got {type(model).__name__}{hint}")
    return model


def check_flag(name: str, value: object) -> bool:
    """`value` if it is a bool (numpy's too), else TypeError naming `name`."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name}: expected True or False, got {type(value).__name__} {value!r}")
    return bool(value)


def check_not_supplied(
    binding: str, source: str, supplied: Iterable[str], given: Iterable[str]
) -> None:
    """TypeError naming an array of `given` that `binding` reads from
    `source` itself (`supplied`), instead of Python's "got multiple values
    for keyword argument"."""
    for name in given:
        if name in supplied:
            raise TypeError(f"{name}: {binding} reads it from {source}; do not pass it as well")


def fields_read(refresher: Refresher) -> tuple[str, ...]:
    """The model fields (mjModel names; ``opt.<name>`` for mjOption's) whose
    values change what `refresher` computes: those of every refresh, and
    those its selected sensors read (see _BY_SENSOR_TYPE)."""
    m = refresher._values_model
    names = dict.fromkeys((*_EVERY_REFRESH, *_int_fields()))
    camera = int(mujoco.mjtObj.mjOBJ_CAMERA)
    geometry = False
    for i in refresher.plan.sensor_ids:
        kind = mujoco.mjtSensor(int(m.sensor_type[i])).name.removeprefix("mjSENS_")
        names.update(dict.fromkeys(_BY_SENSOR_TYPE.get(kind, ())))
        geometry = geometry or kind in _GEOMETRY_TYPES
        if camera in (int(m.sensor_objtype[i]), int(m.sensor_reftype[i])):
            names.update(dict.fromkeys(_CAMERA))
    if geometry:
        names.update(dict.fromkeys(n for n in dir(m) if n.startswith(_GEOMETRY_PREFIXES)))
    return tuple(names)


def same_values(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether `a` and `b` hold the same values, NaN equal to NaN (numpy
    before 1.24 cannot ask equal_nan of an int array)."""
    if a.shape != b.shape:
        return False
    if a.dtype == b.dtype and a.flags.c_contiguous and b.flags.c_contiguous:
        if a.tobytes() == b.tobytes():  # 25x faster than array_equal on small arrays
            return True
    return np.array_equal(a, b) or (a.dtype.kind == "f" and np.array_equal(a, b, equal_nan=True))


def model_value(model: mujoco.MjModel, name: str) -> np.ndarray | None:
    """`model`'s value of field `name` (``opt.<name>`` for mjOption's), or
    None where this MuJoCo has no such field."""
    if name.startswith("opt."):
        value = getattr(model.opt, name[4:], None)
    else:
        value = getattr(model, name, None)
    return None if value is None or callable(value) else np.asarray(value)


def taken_per_row(refresher: Refresher, name: str) -> bool:
    """Whether a refresh takes field `name` per row: declared in
    model_fields, or body_subtreemass derived from a declared body_mass."""
    declared = refresher.plan.model_fields
    return name in declared or (name == "body_subtreemass" and "body_mass" in declared)


def declare_fix(name: str) -> str:
    """The fix for per-simulation values in field `name` that a refresh
    reads from the refresher's model: declare it in model_fields where a
    refresh can take it per row, else that it cannot."""
    if name in MODEL_FIELDS:
        return f"declare it (Refresher(..., model_fields=({name!r}, ...))) and bind again"
    return "a refresh cannot take it per environment"


# fields_to_compare per refresher: its plan and copied values never change,
# and refresh_mjdata compares each call (165 fields of the quadruped: 0.23
# ms to list again, against 0.1 ms to compare).
_COMPARED: weakref.WeakKeyDictionary[Refresher, tuple[tuple[str, np.ndarray], ...]] = (
    weakref.WeakKeyDictionary()
)


def fields_to_compare(refresher: Refresher) -> tuple[tuple[str, np.ndarray], ...]:
    """(name, the refresher's model's value) of every field a refresh reads
    from the refresher's model (fields_read, less those it takes per row)
    that this MuJoCo has: what another model or a batch must not change."""
    compared = _COMPARED.get(refresher)
    if compared is None:
        compared = tuple(
            (name, ours)
            for name in fields_read(refresher)
            if (ours := model_value(refresher._values_model, name)) is not None
            and not taken_per_row(refresher, name)
        )
        _COMPARED[refresher] = compared
    return compared


def check_same_values(
    refresher: Refresher, model: mujoco.MjModel, what: str, per_row: bool = True
) -> None:
    """ValueError naming `what` unless `model` has the refresher's values in
    every field a refresh reads and does not take per row (a batch or an
    MjData of another model of the same sizes). `per_row`: whether the
    binding can take fields per row (the fix then names model_fields)."""
    for name, ours in fields_to_compare(refresher):
        theirs = model_value(model, name)
        if theirs is None or same_values(ours, theirs):
            continue
        fix = f"build the Refresher from that model ({what}.model)"
        if per_row and name in MODEL_FIELDS:
            fix += f", or {declare_fix(name)}"
        raise ValueError(
            f"{what}: its model has other values in {name} than the refresher's model, and "
            f"a refresh reads them from the refresher's model; {fix}"
        )
