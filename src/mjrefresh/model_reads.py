"""The model fields a refresh reads, beyond those it can take per row: what
a binding must find equal in another model (a batch's, an MjData's), and
the copies of their values a Refresher keeps from its construction."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import mujoco
import numpy as np

from .plan import MODEL_FIELDS
from .sensor_rules import reads_contacts

if TYPE_CHECKING:
    from .plan import RefreshPlan

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
# Frames a refresh reads only where a selected output does (fields_read):
# a geom's or a site's pose and compiled sameframe flag, a body's inertial
# frame flag (mj_setConst re-derives the flags when a batch's declared
# body_ipos/geom_pos/... change), the sensors' cutoffs.
_GEOM_FRAME = ("geom_pos", "geom_quat", "geom_sameframe")
_SITE_FRAME = ("site_pos", "site_quat", "site_sameframe")
_INERTIAL_FRAME = ("body_sameframe",)
_EVERY_REFRESH = (
    *(f for f in MODEL_FIELDS if f not in (*_GEOM_FRAME, *_SITE_FRAME, "sensor_cutoff")),
    *("qpos0", "body_subtreemass", "opt.disableflags", "opt.enableflags"),
)
_CAMERA = ("cam_pos", "cam_quat", "cam_pos0", "cam_poscom0", "cam_mat0", "cam_mode", "cam_bodyid")
# Tendons: their paths; the sites and geoms they wrap are added where a
# tendon wraps them (fields_read).
_TENDON = ("wrap_type", "wrap_objid", "wrap_prm", "tendon_adr", "tendon_num")
_GEOMETRY = (
    *("geom_type", "geom_size", "geom_dataid", "geom_group", "geom_rgba", "geom_matid"),
    *("geom_margin", "geom_gap", "mat_rgba", "body_weldid", "geom_rbound", "geom_aabb"),
)
# Geometry sensors also read every heightfield and mesh value (terrain and
# mesh shapes under a ray, a mesh's vertices and hull for a distance).
_GEOMETRY_PREFIXES = ("hfield_", "mesh_")
# MuJoCo's collision (mj_collision: the sensors computed from contacts, see
# sensor_rules.reads_contacts): which geoms, flexes and explicit pairs can
# touch (filters, the parent filter's weld ids, exclusions), their shapes,
# margins and bounds, the global overrides and the convex/SDF solvers'
# settings. Not the contacts' solver parameters (friction, solref, condim,
# priority: no position/velocity-stage sensor reads them).
_COLLISION = (
    *("geom_type", "geom_size", "geom_dataid", "geom_margin", "geom_gap", "geom_rbound"),
    *("geom_aabb", "geom_contype", "geom_conaffinity", "geom_plugin", "geom_surfacevel"),
    *("geom_adhesion", "body_contype", "body_conaffinity", "body_margin", "body_weldid"),
    *("opt.o_margin", "opt.ccd_tolerance", "opt.ccd_iterations", "opt.sdf_iterations"),
    "opt.sdf_initpoints",
)
_COLLISION_PREFIXES = (*_GEOMETRY_PREFIXES, "pair_", "exclude_", "flex_")
# insidesite with enclosed="true" (MuJoCo >= 3.15, sensor_intprm[0] = 1)
# measures the object geom's whole shape, a mesh's vertices included;
# without it, only the object's position (fields_read adds these only then).
_ENCLOSED = ("geom_type", "geom_size", "geom_dataid", "geom_rbound", "geom_aabb")
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
_WRAPPING_TYPES = frozenset(
    f"{base}{stage}" for base in ("TENDON", "ACTUATOR", "TENDONLIMIT") for stage in ("POS", "VEL")
)
# Sensors that read bodies' inertial frames (xipos: the subtree's centre of
# mass, the mass matrix, potential energy).
_INERTIA_TYPES = frozenset(
    ("SUBTREECOM", "SUBTREELINVEL", "SUBTREEANGMOM", "E_KINETIC", "E_POTENTIAL")
)
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
    # frame flags: compared where a selected output reads the frame (above)
    r"|_sameframe$"
)


_INT_FIELDS: list[tuple[str, ...]] = []  # computed once: fields and dtypes are per MuJoCo


def _int_fields(model: mujoco.MjModel) -> tuple[str, ...]:
    """The integer array fields of this MuJoCo's MjModel that a refresh may
    read (all but _INT_NOT_READ). From `model` itself: compiling a model
    here would run the caller's global MuJoCo callbacks."""
    if not _INT_FIELDS:
        names = []
        for name in dir(model):
            if name.startswith("_") or _INT_NOT_READ.search(name):
                continue
            value = getattr(model, name, None)
            if isinstance(value, np.ndarray) and value.dtype.kind in "iub":
                names.append(name)
        _INT_FIELDS.append(tuple(names))
    return _INT_FIELDS[0]


def fields_read(model: mujoco.MjModel, plan: RefreshPlan) -> tuple[str, ...]:
    """The model fields (mjModel names; ``opt.<name>`` for mjOption's) whose
    values change what a refresh of `plan` computes: those of every refresh,
    the model's structure, and those its selected sensors read (see
    _BY_SENSOR_TYPE)."""
    names = dict.fromkeys((*_EVERY_REFRESH, *_int_fields(model)))
    kinds: set[str] = set()
    objects: set[int] = set()  # object and reference types of the selected sensors
    enclosed = False  # an insidesite measuring its object geom's whole shape
    for i in plan.sensor_ids:
        kind = mujoco.mjtSensor(int(model.sensor_type[i])).name.removeprefix("mjSENS_")
        kinds.add(kind)
        names.update(dict.fromkeys(_BY_SENSOR_TYPE.get(kind, ())))
        objects.update((int(model.sensor_objtype[i]), int(model.sensor_reftype[i])))
        enclosed |= kind == "INSIDESITE" and bool(model.sensor_intprm[i, 0])
    if enclosed:
        names.update(dict.fromkeys(_ENCLOSED))
    obj = mujoco.mjtObj
    camera = int(obj.mjOBJ_CAMERA) in objects
    if camera:
        names.update(dict.fromkeys(_CAMERA))
    if kinds & _GEOMETRY_TYPES or enclosed:
        names.update(dict.fromkeys(n for n in dir(model) if n.startswith(_GEOMETRY_PREFIXES)))
    contacts = any(reads_contacts(model, i) for i in plan.sensor_ids)
    if contacts:
        names.update(dict.fromkeys(_COLLISION))
        names.update(dict.fromkeys(n for n in dir(model) if n.startswith(_COLLISION_PREFIXES)))
    # Tendons wrap around sites and geoms (a geom's size is its wrapping
    # radius); transmissions act at sites.
    tendons = any("wrap_type" in _BY_SENSOR_TYPE.get(kind, ()) for kind in kinds)
    wrap = {int(t) for t in model.wrap_type} if tendons else set()
    sites = wrap & {int(mujoco.mjtWrap.mjWRAP_SITE), int(mujoco.mjtWrap.mjWRAP_PULLEY)}
    geoms = wrap & {int(mujoco.mjtWrap.mjWRAP_SPHERE), int(mujoco.mjtWrap.mjWRAP_CYLINDER)}
    transmission_site = bool(kinds & _WRAPPING_TYPES)
    if geoms:
        names["geom_size"] = None
    if (
        plan.site_ids
        or int(obj.mjOBJ_SITE) in objects
        or sites
        or geoms  # a wrapped geom's side site
        or transmission_site
        or "INSIDESITE" in kinds
    ):
        names.update(dict.fromkeys(_SITE_FRAME))
    if int(obj.mjOBJ_GEOM) in objects or geoms or kinds & _GEOMETRY_TYPES or contacts:
        names.update(dict.fromkeys(_GEOM_FRAME))
    if int(obj.mjOBJ_BODY) in objects or camera or kinds & _INERTIA_TYPES:
        names.update(dict.fromkeys(_INERTIAL_FRAME))
    if plan.sensor_ids:
        names["sensor_cutoff"] = None
    return tuple(names)


def copy_values(model: mujoco.MjModel, plan: RefreshPlan) -> dict[str, np.ndarray]:
    """Copies of `model`'s values of every field a refresh of `plan` reads
    (that this MuJoCo has): what the bindings compare another model with,
    as they were when the refresher copied the model.

    Raises:
        MemoryError: naming the field and its bytes.
    """
    values = {}
    for name in fields_read(model, plan):
        value = model_value(model, name)
        if value is None:
            continue
        try:
            values[name] = np.array(value, copy=True)
        except MemoryError:
            raise MemoryError(
                f"could not allocate {value.nbytes} bytes for the copy of the model's {name} "
                "that bindings compare other models with; free memory or select fewer sensors"
            ) from None
    return values


def model_value(model: mujoco.MjModel, name: str) -> np.ndarray | None:
    """`model`'s value of field `name` (``opt.<name>`` for mjOption's), or
    None where this MuJoCo has no such field."""
    if name.startswith("opt."):
        value = getattr(model.opt, name[4:], None)
    else:
        value = getattr(model, name, None)
    return None if value is None or callable(value) else np.asarray(value)
