"""Argument checks every backend binding shares."""

from __future__ import annotations

from collections.abc import Iterable

import mujoco
import numpy as np

from ..refresher import Refresher


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
