"""What a run refreshes: the embedded models' tracking columns, or the
user's own model with the bodies, sites and sensors named on the command line.

A user's bodies and sites become frame sensors appended to a copy of the
model (see :class:`mjrefresh.bench.workloads.Selection`), so every contender
-- including those that only refresh sensordata columns -- computes the same
values, and ``mj_forward`` on that copy is the reference for all of them.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import mujoco

from mjrefresh import models
from mjrefresh._names import name_to_id
from mjrefresh.bench.states import random_states
from mjrefresh.bench.workloads import (
    COLUMN_SETS,
    Problem,
    Selection,
    make_problem,
    sensor_ranges,
)
from mjrefresh.model_args import is_mjb, load_model, name_or_id, posvel_sensors
from mjrefresh.plan import refresh_refusals

_SENS, _OBJ = mujoco.mjtSensor, mujoco.mjtObj
#: Frame sensors per selected body / site, in column order (their widths sum to 13 / 12).
BODY_SENSORS = (
    _SENS.mjSENS_FRAMEPOS,
    _SENS.mjSENS_FRAMEQUAT,
    _SENS.mjSENS_FRAMELINVEL,
    _SENS.mjSENS_FRAMEANGVEL,
)
SITE_SENSORS = (
    _SENS.mjSENS_FRAMEPOS,
    _SENS.mjSENS_FRAMEXAXIS,
    _SENS.mjSENS_FRAMEYAXIS,
    _SENS.mjSENS_FRAMEZAXIS,
)


_SINGULAR = {"bodies": "body", "sites": "site", "sensors": "sensor"}


@dataclass
class Source:
    """A named problem to build for each N: ``build(n)`` gives the problem."""

    name: str
    build: Callable[[int], Problem]
    describe: str  # one line on what is refreshed


def _ids(model: mujoco.MjModel, obj: mujoco.mjtObj, what: str, items: Sequence[str]) -> list[int]:
    """Ids of named or numbered ``items`` of one kind; SystemExit naming a bad
    or repeated one (the Refresher refuses repeats, as ``mjrefresh plan`` says)."""
    count = {
        _OBJ.mjOBJ_BODY: model.nbody,
        _OBJ.mjOBJ_SITE: model.nsite,
        _OBJ.mjOBJ_SENSOR: model.nsensor,
    }[obj]
    one = _SINGULAR[what]
    out: list[int] = []
    for item in items:
        named = name_or_id(model, obj, item)
        i = named if isinstance(named, int) else name_to_id(model, obj, named)
        if not 0 <= i < count:
            raise SystemExit(
                f"mjrefresh bench: --{what}: no {one} {item!r} in the model "
                f"(it has {count}; give names or ids 0..{count - 1})"
            )
        if i in out:
            first = items[out.index(i)]
            also = "" if first == item else f" (as {first!r} and {item!r})"
            raise SystemExit(
                f"mjrefresh bench: --{what}: {one} {item!r} is listed twice{also}; list each once"
            )
        out.append(i)
    return out


def _names(model: mujoco.MjModel, obj: mujoco.mjtObj, what: str, ids: list[int]) -> list[str]:
    """Names of ``ids`` (frame sensors refer to objects by name)."""
    names = [mujoco.mj_id2name(model, obj, i) or "" for i in ids]
    for i, name in zip(ids, names, strict=True):
        if not name:
            raise SystemExit(
                f"mjrefresh bench: --{what}: {_SINGULAR[what]} {i} has no name; name it in the MJCF"
            )
    return names


def _spec(path: str) -> mujoco.MjSpec:
    """The editable spec of an embedded model name or an MJCF file."""
    if path in models.MODELS:
        return getattr(models, f"{path}_spec")()
    if is_mjb(path):
        raise SystemExit(
            "mjrefresh bench: --bodies/--sites need an MJCF (.xml) model or an embedded "
            f"model, got the binary {path!r}; select sensors with --sensors or --all-posvel"
        )
    return mujoco.MjSpec.from_file(path)


def _with_frame_sensors(path: str, bodies: list[str], sites: list[str]) -> mujoco.MjModel:
    """The model at ``path`` with :data:`BODY_SENSORS` per body and
    :data:`SITE_SENSORS` per site appended, in that order."""
    spec = _spec(path)
    for kinds, names, objtype in (
        (BODY_SENSORS, bodies, _OBJ.mjOBJ_XBODY),
        (SITE_SENSORS, sites, _OBJ.mjOBJ_SITE),
    ):
        for name in names:
            for stype in kinds:
                spec.add_sensor(type=stype, objtype=objtype, objname=name)
    return spec.compile()


def _sensor_ids(model: mujoco.MjModel, args: argparse.Namespace) -> list[int]:
    """The selected sensors; SystemExit if one is a sensor a refresh refuses."""
    if args.all_posvel:
        return posvel_sensors(model)[0]
    ids = _ids(model, _OBJ.mjOBJ_SENSOR, "sensors", args.sensors or [])
    refused = refresh_refusals(model)
    for i in ids:
        if i in refused:
            raise SystemExit(f"mjrefresh bench: --sensors: {refused[i]}")
    return ids


def embedded_source(name: str, args: argparse.Namespace) -> Source:
    """The embedded model ``name`` refreshing ``args.columns`` (a key of COLUMN_SETS)."""
    return Source(
        name,
        lambda n: make_problem(name, n, args.seed, args.columns),
        COLUMN_SETS[args.columns],
    )


def user_source(args: argparse.Namespace) -> Source:
    """The problem of ``args.model`` with the selection of ``args``.

    No selection: an embedded model refreshes its tracking block (or
    ``--columns``), a file every position/velocity-stage sensor a refresh computes.
    """
    spec = args.model
    base = load_model(spec)
    name = spec if spec in models.MODELS else os.path.splitext(os.path.basename(spec))[0]
    if not (args.bodies or args.sites or args.sensors or args.all_posvel):
        if spec in models.MODELS:
            return embedded_source(spec, args)
        args.all_posvel = True
    body_ids = _ids(base, _OBJ.mjOBJ_BODY, "bodies", args.bodies or [])
    site_ids = _ids(base, _OBJ.mjOBJ_SITE, "sites", args.sites or [])
    ranges = sensor_ranges(base, _sensor_ids(base, args))
    if not (body_ids or site_ids or ranges):
        refused = posvel_sensors(base)[1]
        if refused:  # there are such sensors: say why none of them is refreshed
            why = "; ".join(refused.values())
            raise SystemExit(
                f"mjrefresh bench: {spec}: a refresh refuses its {len(refused)} "
                f"position/velocity-stage sensor{'s' if len(refused) > 1 else ''} ({why}); "
                "select --bodies or --sites"
            )
        raise SystemExit(
            f"mjrefresh bench: {spec} has no position/velocity sensor to refresh; "
            "select --bodies, --sites or --sensors"
        )
    model = base
    if body_ids or site_ids:
        model = _with_frame_sensors(
            spec,
            _names(base, _OBJ.mjOBJ_BODY, "bodies", body_ids),
            _names(base, _OBJ.mjOBJ_SITE, "sites", site_ids),
        )
    block = (base.nsensordata, model.nsensordata)
    selection = Selection(base, body_ids, site_ids, ranges, base.nsensordata)
    all_ranges = ranges + ([block] if block[1] > block[0] else [])
    if len(all_ranges) > 1 and all_ranges[-2][1] == block[0]:  # adjacent: one range
        all_ranges[-2:] = [(all_ranges[-2][0], block[1])]
    width = sum(b - a for a, b in ranges)
    describe = ", ".join(
        f"{k} {one if k == 1 else many}"
        for k, one, many in (
            (len(body_ids), "body (world pose and velocity)", "bodies (world pose and velocity)"),
            (len(site_ids), "site (world pose)", "sites (world pose)"),
            (width, "sensordata column", "sensordata columns"),
        )
        if k
    )

    def build(n: int) -> Problem:
        qpos, qvel = random_states(model, n, args.seed)
        return Problem(name, model, qpos, qvel, list(all_ranges), selection)

    return Source(name, build, describe)


def sources(args: argparse.Namespace) -> list[Source]:
    """What ``args`` asks to measure: ``args.model`` with its selection, or
    every model of ``args.models`` with ``args.columns``."""
    if args.model is not None:
        return [user_source(args)]
    if args.bodies or args.sites or args.sensors or args.all_posvel:
        raise SystemExit(
            "mjrefresh bench: --bodies/--sites/--sensors/--all-posvel need a MODEL "
            "(an MJCF/MJB file or an embedded model name)"
        )
    return [embedded_source(name, args) for name in args.models]
