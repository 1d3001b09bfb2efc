"""Argument checks every backend binding shares."""

from __future__ import annotations

from collections.abc import Iterable

import mujoco
import numpy as np

from ..model_reads import model_value
from ..plan import MODEL_FIELDS
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


def same_values(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether `a` and `b` hold the same values, NaN equal to NaN (numpy
    before 1.24 cannot ask equal_nan of an int array)."""
    if a.shape != b.shape:
        return False
    if a.dtype == b.dtype and a.flags.c_contiguous and b.flags.c_contiguous:
        if a.tobytes() == b.tobytes():  # 25x faster than array_equal on small arrays
            return True
    return np.array_equal(a, b) or (a.dtype.kind == "f" and np.array_equal(a, b, equal_nan=True))


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


def fields_to_compare(refresher: Refresher) -> tuple[tuple[str, np.ndarray], ...]:
    """(name, the value the refresher copied at construction) of every field
    a refresh reads from its model (model_reads.fields_read) and does not
    take per row: what another model or a batch must not change."""
    return tuple(
        (name, ours)
        for name, ours in refresher._model_values.items()
        if not taken_per_row(refresher, name)
    )


def check_same_values(
    refresher: Refresher,
    model: mujoco.MjModel,
    what: str,
    per_row: bool = True,
    source: str | None = None,
) -> None:
    """ValueError naming `what` unless `model` has the refresher's values in
    every field a refresh reads and does not take per row (a batch or an
    MjData of another model of the same sizes). `per_row`: whether the
    binding can take fields per row (the fix then names model_fields);
    `source`: how the fix names that model (default ``<what>.model``)."""
    for name, ours in fields_to_compare(refresher):
        theirs = model_value(model, name)
        if theirs is None or same_values(ours, theirs):
            continue
        fix = f"build the Refresher from that model ({source or what + '.model'})"
        if per_row and name in MODEL_FIELDS:
            fix += f", or {declare_fix(name)}"
        raise ValueError(
            f"{what}: its model has other values in {name} than the refresher's model, and "
            f"a refresh reads them from the refresher's model; {fix}"
        )
