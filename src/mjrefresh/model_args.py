"""What the ``mjrefresh plan`` and ``mjrefresh bench`` commands share: the
MODEL argument (an embedded model by name, or an MJCF/MJB file) and the
selection options (``--bodies``, ``--sites``, ``--sensors`` |
``--all-posvel``)."""

from __future__ import annotations

import argparse
import os

import mujoco

from . import models
from ._names import name_to_id
from .plan import refresh_refusals


def load_model(spec: str) -> mujoco.MjModel:
    """An embedded model by name (``quadruped``), else an MJCF/MJB file."""
    if spec in models.MODELS:
        return models.MODELS[spec]()
    if not os.path.exists(spec):
        known = ", ".join(models.MODELS)
        raise SystemExit(f"mjrefresh: MODEL: no file {spec!r} (embedded models: {known})")
    if os.path.isdir(spec):  # MuJoCo would warn, then call it an empty file
        raise SystemExit(
            f"mjrefresh: MODEL: {spec!r} is a directory; give an MJCF (.xml) or MJB file in it"
        )
    if not os.path.isfile(spec):  # a FIFO would block the read, a device never end
        raise SystemExit(
            f"mjrefresh: MODEL: {spec!r} is not a regular file; give an MJCF (.xml) or MJB file"
        )
    try:
        if is_mjb(spec):
            return mujoco.MjModel.from_binary_path(spec)
        return mujoco.MjModel.from_xml_path(spec)
    except Exception as exc:  # MuJoCo's compiler error names the element
        raise SystemExit(f"mjrefresh: MODEL: {spec} did not compile: {exc}") from None


def is_mjb(path: str) -> bool:
    """Whether ``path`` names a binary MJB model (``.mjb`` in any case, as
    written on case-insensitive file systems)."""
    return path.lower().endswith(".mjb")


def posvel_sensors(model: mujoco.MjModel) -> tuple[list[int], dict[int, str]]:
    """(sensor ids a refresh computes, {refused id: reason}) over every
    position/velocity-stage sensor of `model`."""
    refused = refresh_refusals(model)
    stages = (mujoco.mjtStage.mjSTAGE_POS, mujoco.mjtStage.mjSTAGE_VEL)
    posvel = [i for i in range(model.nsensor) if int(model.sensor_needstage[i]) in stages]
    return [i for i in posvel if i not in refused], {i: refused[i] for i in posvel if i in refused}


def name_or_id(model: mujoco.MjModel, obj: mujoco.mjtObj, item: str) -> str | int:
    """A command-line ``item`` of one kind of object: the name when the model
    has an object so named, else a decimal number as an id (``--bodies 1``),
    else the name (which the Refresher then reports as unknown)."""
    if name_to_id(model, obj, item) < 0 and item.isascii() and item.isdecimal():
        return int(item)
    return item


def add_selection_args(p: argparse.ArgumentParser, posvel_note: str = "") -> None:
    """``--bodies``, ``--sites`` and ``--sensors`` | ``--all-posvel`` (what
    ``plan`` and ``bench`` select); ``posvel_note`` ends the last one's help."""
    p.add_argument("--bodies", nargs="+", metavar="BODY", help="bodies (names or ids)")
    p.add_argument("--sites", nargs="+", metavar="SITE", help="sites (names or ids)")
    sel = p.add_mutually_exclusive_group()
    sel.add_argument("--sensors", nargs="+", metavar="SENSOR", help="sensors (names or ids)")
    sel.add_argument(
        "--all-posvel",
        action="store_true",
        help="every position/velocity-stage sensor a refresh computes" + posvel_note,
    )
