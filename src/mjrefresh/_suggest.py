"""Suggestions for misspelled names in error messages ("did you mean ...?").

Uses :mod:`difflib` from the standard library: the same closeness measure as
Python's own NameError suggestions, no dependency.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

import mujoco

from ._names import name_to_id


def model_names(model: mujoco.MjModel, objtype: mujoco.mjtObj, count: int) -> list[str]:
    """Every non-empty name of the `count` objects of `objtype` in `model`."""
    names = (mujoco.mj_id2name(model, objtype, i) for i in range(count))
    return [n for n in names if n]


def close_matches(name: str, candidates: Iterable[str]) -> list[str]:
    """Up to three candidates close to `name` (case slips included)."""
    pool = list(dict.fromkeys(candidates))
    close = difflib.get_close_matches(name, pool, n=3, cutoff=0.6)
    # A case slip ("Base" for "base") can score below difflib's cutoff.
    return close or [c for c in pool if c.lower() == name.lower()][:3]


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    """``"; did you mean 'a' or 'b'?"`` for close candidates, else ``""``."""
    close = close_matches(name, candidates)
    return "; did you mean " + " or ".join(repr(c) for c in close) + "?" if close else ""


def unknown_name_hint(name: str, candidates: Iterable[str], kind: str) -> str:
    """Suffix for an unknown-name error: close matches, else what exists.

    ``"; did you mean 'base'?"`` when a candidate is close,
    ``"; known body names: world, base, ..."`` (at most 8 shown) otherwise,
    ``"; the model has no named body"`` when nothing has a name.
    """
    pool = list(dict.fromkeys(candidates))
    if not pool:
        return f"; the model has no named {kind}"
    hint = did_you_mean(name, pool)
    if hint:
        return hint
    shown = ", ".join(pool[:8]) + (f", ... ({len(pool)} in all)" if len(pool) > 8 else "")
    return f"; known {kind} names: {shown}"


_KINDS: tuple[tuple[mujoco.mjtObj, str], ...] = (
    (mujoco.mjtObj.mjOBJ_BODY, "body"),
    (mujoco.mjtObj.mjOBJ_SITE, "site"),
    (mujoco.mjtObj.mjOBJ_SENSOR, "sensor"),
    (mujoco.mjtObj.mjOBJ_GEOM, "geom"),
    (mujoco.mjtObj.mjOBJ_JOINT, "joint"),
    (mujoco.mjtObj.mjOBJ_CAMERA, "camera"),
)


def other_kind_hint(model: mujoco.MjModel, name: str, objtype: mujoco.mjtObj) -> str:
    """``"; 'FL_foot' is a site, not a body"`` when `name` names another kind."""
    wanted = dict(_KINDS).get(objtype, "object")
    for kind_type, kind in _KINDS:
        if kind_type != objtype and name_to_id(model, kind_type, name) >= 0:
            return f"; {name!r} is a {kind}, not a {wanted}"
    return ""
