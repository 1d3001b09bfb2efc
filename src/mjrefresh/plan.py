"""Refresh planning: which outputs a Refresher writes and which MuJoCo stages
that requires, decided once per model.

The rule is: run only the stage functions that the selected outputs read, in
the order ``mj_forward`` runs them, and reject at construction every sensor a
refresh cannot compute correctly (with the sensor's name and the reason).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import mujoco
import numpy as np

from ._names import name_to_id
from ._native import core as _core
from ._rows import is_int
from ._suggest import did_you_mean, model_names, other_kind_hint, unknown_name_hint
from .sensor_rules import (
    STAGE_COSTS,
    VEL,
    PlanError,
    is_adhesion,
    num_actuators,
    pass_plugin_conflict,
    refresh_refusals,
    require_model,
    sdf_plugin_conflict,
    sensor_label,
    sensor_stages,
)
from .sensor_rules import object_name as _name

__all__ = [
    "ENGINES",
    "MODEL_FIELDS",
    "STAGE_ORDER",
    "PlanError",
    "RefreshPlan",
    "build_plan",
    "fast_uncovered",
    "refresh_refusals",
    "resolve_ids",
    "sensor_label",
]

# Stage names in the order the exact engine runs them (= mj_forward's order),
# as the native core defines them (_core.Stage, cpp/core/selection.h).
STAGE_ORDER: tuple[str, ...] = tuple(str(s.name) for s in _core.Stage)

# Per-environment model fields a refresh can take (domain randomisation):
# name -> (count attribute of MjModel, values per item), in the order of the
# native ModelField enum. The core generates this table from MuJoCo's
# mjxmacro.h (cpp/core/model_fields.cc).
MODEL_FIELDS: dict[str, tuple[str, int]] = {
    name: (count, width) for name, count, width in _core.MODEL_FIELDS
}
_FIELD_IDS = {name: i for i, name in enumerate(MODEL_FIELDS)}

ENGINES: tuple[str, ...] = ("auto", "exact", "fast")


def fast_uncovered(model: mujoco.MjModel, sensor_ids: Iterable[int]) -> str | None:
    """None if the fast engine computes all of `sensor_ids`, else why not.

    Body, relative and site outputs are always covered; the reason names the
    first sensor the fused kernels do not compute. The rule is the native
    engine's own (cpp/fast/coverage.cc), so planner and engine cannot differ.
    """
    require_model(model)
    ids = []
    for i in as_items("sensor_ids", sensor_ids, (), "sensor ids (int)"):
        if not is_int(i):
            raise TypeError(f"sensor_ids: expected sensor ids (int), got {type(i).__name__} {i!r}")
        ids.append(int(i))
    return _core.fast_uncovered(model._address, ids)


@dataclass(frozen=True)
class RefreshPlan:
    """What a :class:`~mjrefresh.Refresher` computes and why.

    Attributes:
        engine: the engine that runs: "exact" (MuJoCo's stage functions) or
            "fast" (fused kernels over the needed bodies only).
        engine_reason: why that engine was chosen.
        stages: MuJoCo stage functions the exact engine runs per row, in
            order (with engine "fast" no stage function runs; the list says
            what the outputs depend on).
        stage_reasons: for each stage, the outputs that need it.
        column_ranges: merged ``sensordata`` column ranges ``[start, stop)``
            written per row.
        sensor_ids / sensor_names: sensors whose columns are written.
        body_ids / body_names: bodies of the ``body_*`` outputs, in order.
        relative_to_id / relative_to_name: frame of ``body_*_rel`` (or None).
        site_ids / site_names: sites of the ``site_*`` outputs, in order.
        needs_mocap: rows need ``mocap_pos``/``mocap_quat`` inputs.
        needs_time: rows need ``time`` (a clock sensor is selected).
        model_fields: per-environment model fields every call supplies.
    """

    engine: str
    engine_reason: str
    stages: tuple[str, ...]
    stage_reasons: dict[str, tuple[str, ...]] = field(repr=False)
    column_ranges: tuple[tuple[int, int], ...]
    sensor_ids: tuple[int, ...]
    sensor_names: tuple[str, ...]
    body_ids: tuple[int, ...]
    body_names: tuple[str, ...]
    relative_to_id: int | None
    relative_to_name: str | None
    site_ids: tuple[int, ...]
    site_names: tuple[str, ...]
    needs_mocap: bool
    needs_time: bool
    model_fields: tuple[str, ...] = ()

    @property
    def model_field_ids(self) -> tuple[int, ...]:
        """The ModelField ids of :attr:`model_fields` (native contract)."""
        return tuple(_FIELD_IDS[f] for f in self.model_fields)

    def model_field_shape(self, model: mujoco.MjModel, name: str) -> tuple[int, ...]:
        """Shape of one row's values of model field `name` (like ``model.<name>``)."""
        count, width = MODEL_FIELDS[name]
        n = int(getattr(model, count))
        return (n,) if width == 1 else (n, width)

    @property
    def num_columns(self) -> int:
        """Number of sensordata columns written per row."""
        return sum(stop - start for start, stop in self.column_ranges)

    def describe(self, verbose: bool = False) -> str:
        """Human-readable summary: engine and why, stages, outputs.

        The default is compact (a line per stage: the first output that needs
        it and how many more; long name lists shortened); ``verbose=True``
        lists every output under every stage and every name and range.
        """
        lines = [f"engine: {self.engine} ({self.engine_reason})"]
        if self.engine == "fast":
            lines.append(
                "stages (what the outputs depend on; the fast engine computes them with "
                "fused kernels, no stage function runs):"
            )
        else:
            lines.append("stages:")
        for stage in self.stages:
            why = self.stage_reasons.get(stage, ())
            if verbose:
                text = "; ".join(why)
            else:
                text = why[0] if why else ""
                if len(why) > 1:
                    text += f" and {len(why) - 1} more ({len(why)} outputs)"
            cost = f" [cost: {STAGE_COSTS[stage]}]" if stage in STAGE_COSTS else ""
            lines.append(f"  {stage}: {text}{cost}")
        if self.column_ranges:
            ranges = [f"{a}:{b}" for a, b in self.column_ranges]
            lines.append(
                f"sensordata columns: {_listing(ranges, verbose)} ({self.num_columns} columns, "
                f"{len(self.sensor_ids)} sensors)"
            )
        if self.body_ids:
            lines.append(f"bodies: {_listing(self.body_names, verbose)}")
        if self.relative_to_name is not None:
            lines.append(f"relative_to: {self.relative_to_name}")
        if self.site_ids:
            lines.append(f"sites: {_listing(self.site_names, verbose)}")
        if self.model_fields:
            lines.append(f"per-environment model fields: {', '.join(self.model_fields)}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.describe()


def _listing(items: Sequence[str], verbose: bool, limit: int = 6) -> str:
    """Comma-separated `items`; past `limit` shortened unless `verbose`."""
    if verbose or len(items) <= limit:
        return ", ".join(items)
    return ", ".join(items[:limit]) + f", ... ({len(items)} in all)"


def as_items(
    argument: str, items: object, single: tuple[type, ...], expected: str
) -> tuple[Any, ...]:
    """`items` as a tuple: None is none, one value of a `single` type is one
    item, else an iterable's items; TypeError naming `argument` and what it
    `expected` otherwise. The items themselves are the caller's to check."""
    if items is None:
        return ()
    if isinstance(items, np.ndarray) and items.ndim == 0:
        items = items[()]  # its one value, a numpy scalar
    if isinstance(items, single):
        return (items,)
    if isinstance(items, (bytes, bytearray, np.bytes_, np.ndarray)) and not isinstance(
        items, np.ndarray
    ):  # bytes iterate as ints: b"imu" would be ids 105, 109, 117
        raise TypeError(
            f"{argument}: expected {expected}, or a sequence of them, got "
            f"{type(items).__name__} {items!r}"
            + (f" (pass {items.decode(errors='replace')!r})" if isinstance(items, bytes) else "")
        )
    if not isinstance(items, Iterable):
        raise TypeError(
            f"{argument}: expected {expected}, or a sequence of them, got {type(items).__name__}"
        )
    return tuple(items)


def resolve_ids(
    model: mujoco.MjModel,
    objtype: mujoco.mjtObj,
    items: Iterable[str | int] | None,
    count: int,
    argument: str,
    kind: str,
) -> tuple[int, ...]:
    """Turn names or ids (None: none) into ids, with a ValueError naming `argument`."""
    expected = f"{kind} names (str) or ids (int)"
    ids: list[int] = []
    for item in as_items(argument, items, (str, int, np.integer), expected):
        if isinstance(item, (bool, np.bool_)) or not isinstance(item, (str, int, np.integer)):
            raise TypeError(f"{argument}: expected {expected}, got {type(item).__name__} {item!r}")
        if isinstance(item, str):
            i = name_to_id(model, objtype, item)
            if i < 0:
                hint = other_kind_hint(model, item, objtype) or unknown_name_hint(
                    item, model_names(model, objtype, count), kind
                )
                raise ValueError(f"{argument}: unknown {kind} name {item!r}{hint}")
        else:
            i = int(item)
            if not 0 <= i < count:
                raise ValueError(f"{argument}: {kind} id {i} out of range [0, {count})")
        if i in ids:
            raise ValueError(f"{argument}: {kind} {item!r} is listed twice")
        ids.append(i)
    return tuple(ids)


def _merge(ranges: Iterable[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    merged: list[list[int]] = []
    for start, stop in sorted(ranges):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], stop)
        else:
            merged.append([start, stop])
    return tuple((a, b) for a, b in merged)


def _check_ranges(model: mujoco.MjModel, sensor_ranges: object) -> list[tuple[int, int]]:
    if (
        isinstance(sensor_ranges, tuple)
        and len(sensor_ranges) == 2
        and all(is_int(v) for v in sensor_ranges)
    ):
        sensor_ranges = [sensor_ranges]
    if not isinstance(sensor_ranges, Sequence) or isinstance(sensor_ranges, str):
        raise TypeError(
            "sensor_ranges: expected a sequence of (start, stop) pairs, "
            f"got {type(sensor_ranges).__name__}"
        )
    out = []
    n = model.nsensordata
    for k, item in enumerate(sensor_ranges):
        try:
            pair = tuple(item)
        except TypeError:
            pair = ()
        if len(pair) != 2 or not all(is_int(v) for v in pair):
            raise TypeError(
                f"sensor_ranges[{k}]: expected a (start, stop) pair of ints, got {item!r}"
            )
        start, stop = (int(v) for v in pair)
        if not 0 <= start < stop <= n:
            raise ValueError(
                f"sensor_ranges[{k}]: expected 0 <= start < stop <= {n} "
                f"(model.nsensordata), got ({start}, {stop})"
            )
        out.append((start, stop))
    return out


def build_plan(
    model: mujoco.MjModel,
    *,
    bodies: Iterable[str | int] | None = (),
    relative_to: str | int | None = None,
    sites: Iterable[str | int] | None = (),
    sensors: Iterable[str | int] | None = None,
    sensor_ranges: object = None,
    engine: str = "auto",
    model_fields: Iterable[str] | None = (),
) -> RefreshPlan:
    """Plan a refresh of the given selection on `model` (see RefreshPlan).

    `engine` "auto" picks "fast" when the fused kernels cover every selected
    output and "exact" otherwise; "fast" raises PlanError naming the first
    sensor they do not cover.
    """
    if engine not in ENGINES:
        raise ValueError(f"engine: expected one of {ENGINES}, got {engine!r}")
    require_model(model)
    fields = _check_model_fields(model, model_fields)
    body_ids = resolve_ids(model, mujoco.mjtObj.mjOBJ_BODY, bodies, model.nbody, "bodies", "body")
    site_ids = resolve_ids(model, mujoco.mjtObj.mjOBJ_SITE, sites, model.nsite, "sites", "site")
    rel_id: int | None = None
    if relative_to is not None:
        (rel_id,) = resolve_ids(
            model, mujoco.mjtObj.mjOBJ_BODY, (relative_to,), model.nbody, "relative_to", "body"
        )
        if not body_ids:
            raise ValueError("relative_to: expected at least one body in `bodies`, got none")

    sensor_ids: list[int] = []
    ranges: list[tuple[int, int]] = []
    if sensors is not None:
        sensor_ids = list(
            resolve_ids(
                model, mujoco.mjtObj.mjOBJ_SENSOR, sensors, model.nsensor, "sensors", "sensor"
            )
        )
        for i in sensor_ids:
            adr = int(model.sensor_adr[i])
            ranges.append((adr, adr + int(model.sensor_dim[i])))
    if sensor_ranges is not None:
        ranges.extend(_check_ranges(model, sensor_ranges))
    columns = _merge(ranges)
    # Every sensor overlapping a selected column is computed.
    adr = model.sensor_adr
    dim = model.sensor_dim
    for i in range(model.nsensor):
        a, b = int(adr[i]), int(adr[i]) + int(dim[i])
        if i not in sensor_ids and any(a < stop and start < b for start, stop in columns):
            sensor_ids.append(i)
    sensor_ids.sort()

    reasons: dict[str, list[str]] = {}

    def need(stages: Iterable[str], why: str) -> None:
        for s in stages:
            reasons.setdefault(s, []).append(why)

    if body_ids:
        need({"kinematics"}, "body poses")
        need(VEL, "body velocities (mj_objectVelocity reads cvel)")
    if rel_id is not None:
        rel_name = _name(model, mujoco.mjtObj.mjOBJ_BODY, rel_id)
        need({"kinematics"}, "poses relative to body " + rel_name)
    if site_ids:
        need({"kinematics"}, "site poses")
    needs_time = False
    sensor_names = []
    for i in sensor_ids:
        sensor_names.append(_name(model, mujoco.mjtObj.mjOBJ_SENSOR, i))
        need(sensor_stages(model, i), sensor_label(model, i))
        if int(model.sensor_type[i]) == mujoco.mjtSensor.mjSENS_CLOCK:
            needs_time = True
    conflict = pass_plugin_conflict(model, set(reasons) & {"sensorPos", "sensorVel"})
    if conflict is not None:
        raise PlanError(conflict)
    _add_implied_stages(model, reasons)
    conflict = sdf_plugin_conflict(model, set(reasons), sensor_ids)
    if conflict is not None:
        raise PlanError(conflict)

    stages = tuple(s for s in STAGE_ORDER if s in reasons)
    chosen, engine_reason = _choose_engine(model, engine, sensor_ids)
    return RefreshPlan(
        engine=chosen,
        engine_reason=engine_reason,
        stages=stages,
        stage_reasons={s: tuple(reasons[s]) for s in stages},
        column_ranges=columns,
        sensor_ids=tuple(sensor_ids),
        sensor_names=tuple(sensor_names),
        body_ids=body_ids,
        body_names=tuple(_name(model, mujoco.mjtObj.mjOBJ_BODY, i) for i in body_ids),
        relative_to_id=rel_id,
        relative_to_name=None if rel_id is None else _name(model, mujoco.mjtObj.mjOBJ_BODY, rel_id),
        site_ids=site_ids,
        site_names=tuple(_name(model, mujoco.mjtObj.mjOBJ_SITE, i) for i in site_ids),
        needs_mocap=model.nmocap > 0,
        needs_time=needs_time,
        model_fields=fields,
    )


def _add_implied_stages(model: mujoco.MjModel, reasons: dict[str, list[str]]) -> None:
    """Stages the planned stages themselves read, as mj_forward runs them;
    each is needed by the outputs that need the stage reading it."""

    def inherit(stages: Iterable[str], source: str) -> None:
        for s in stages:
            have = reasons.setdefault(s, [])
            have.extend(w for w in reasons[source] if w not in have)

    adhesion = any(is_adhesion(model, a) for a in range(num_actuators(model)))
    if "collision" in reasons and (
        "fwdVelocity" in reasons or ("transmission" in reasons and adhesion)
    ):
        # Contacts without their constraint rows: adhesion transmissions and
        # contact passive forces read con->efc_address (MuJoCo 3.10 and 3.11's
        # mj_transmission crashes on it), so build the rows as mj_forward does.
        inherit({"makeConstraint"}, "collision")
    if "makeConstraint" in reasons:
        # Constraint impedance reads the factorised mass matrix.
        inherit({"kinematics", "comPos", "makeM", "factorM"}, "makeConstraint")
    for source in ("makeM", "makeConstraint"):
        if model.ntendon and source in reasons:
            inherit({"tendon"}, source)  # tendon armature / tendon rows read ten_J
    if model.nflex:
        for source in ("tendon", "fwdVelocity", "makeM", "collision", "makeConstraint"):
            if source in reasons:
                inherit({"flex"}, source)  # these read flex edges
    if "fwdVelocity" in reasons:
        # mj_fwdVelocity computes cvel itself (it calls mj_comVel).
        reasons["fwdVelocity"].extend(reasons.pop("comVel", []))


def _check_model_fields(
    model: mujoco.MjModel, model_fields: Iterable[str] | None
) -> tuple[str, ...]:
    fields: list[str] = []
    for name in as_items("model_fields", model_fields, (str,), "mjModel field names (str)"):
        if not isinstance(name, str):
            raise TypeError(
                f"model_fields: expected mjModel field names (str), got {type(name).__name__}"
            )
        if name not in MODEL_FIELDS:
            what = (
                "is not an mjModel field"
                if not hasattr(model, name)
                else (
                    "is not supported per environment (it does not change refreshed outputs, or "
                    "it is derived by the compiler)"
                )
            )
            raise ValueError(
                f"model_fields: {name!r} {what}; supported: {', '.join(MODEL_FIELDS)}"
                + did_you_mean(name, MODEL_FIELDS)
            )
        if name in fields:
            raise ValueError(f"model_fields: {name!r} is listed twice")
        fields.append(name)
    return tuple(sorted(fields, key=_FIELD_IDS.__getitem__))


def _choose_engine(
    model: mujoco.MjModel, engine: str, sensor_ids: Sequence[int]
) -> tuple[str, str]:
    """(engine, reason) for the requested `engine` and the selected sensors."""
    if engine == "exact":
        return "exact", "requested (MuJoCo's own stage functions)"
    # Per-environment model fields do not decide: both engines take every
    # field of MODEL_FIELDS.
    why = fast_uncovered(model, sensor_ids)
    if engine == "fast":
        if why is not None:
            raise PlanError(
                f"engine='fast' cannot compute this selection: {why}; use engine='auto' or 'exact'"
            )
        return "fast", "requested; the fused kernels cover every selected output"
    if why is not None:
        return "exact", f"auto: {why}"
    return "fast", "auto: the fused kernels cover every selected output"
