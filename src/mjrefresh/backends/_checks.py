"""Argument checks every backend binding shares."""

from __future__ import annotations

import mujoco

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
