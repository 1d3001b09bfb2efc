"""Binding over a MuJoCo >= 4.0 ``mujoco.batch.Batch``: :func:`bind_mujoco_batch`."""

from __future__ import annotations

from typing import Any

import mujoco
import numpy as np

from ..cache import StateCache
from ..refresher import Refresher
from ._checks import (
    check_not_supplied,
    check_refresher,
    check_same_sizes,
    check_same_values,
    declare_fix,
    fields_to_compare,
    same_values,
)
from ._optional import require_mujoco_batch

_INPUTS = ("qpos", "qvel", "mocap_pos", "mocap_quat", "time", "model_fields")
# The constants mj_setConst derives (None: this MuJoCo does not list them),
# and those of them it does not also read.
_DERIVED: frozenset[str] | None = (
    frozenset(mujoco.MjModel._setconst_outputs)
    if hasattr(mujoco.MjModel, "_setconst_outputs")
    else None
)
_ONLY_DERIVED = (_DERIVED or frozenset()) - frozenset(
    getattr(mujoco.MjModel, "_setconst_inputs", ())
)


_Watch = tuple[list[tuple[str, np.ndarray, np.ndarray]], list[str]]


def _watched(batch: Any, refresher: Refresher) -> _Watch:
    """Check that the batch runs the refresher's model in every field a
    refresh reads and does not take per row; return those the batch has
    expanded (with the model's values so far): (name, live values, model's),
    and the names of those not expanded that ``batch.set_const()`` may expand
    (the constants it derives from values: subtree masses, frame flags,
    camera and tendon reference values): set_const expands them natively,
    unseen by ``batch._expanded``."""
    if batch.models is not None:
        raise ValueError(
            "batch: it runs caller models (set_models); a refresh uses the refresher's one "
            "model for every row. Expected batch.models None"
        )
    known = require_mujoco_batch().MODEL_FIELDS  # what batch.expanded() accepts
    watched, probe = [], []
    for name, ours in fields_to_compare(refresher):
        per_sim = batch.expanded(name) if name in known else None
        if per_sim is None:
            # Structure (tree ids, actuator ids) is derived too but cannot
            # change in a batch; unknown outputs: probe every field.
            if name in known and (
                _DERIVED is None
                or name in _DERIVED
                and (ours.dtype.kind == "f" or name.endswith("_sameframe"))
            ):
                probe.append(name)
            continue
        template = np.broadcast_to(ours, per_sim.shape)
        if not same_values(per_sim, template):
            by = " (batch.set_const() derives it per simulation)" if name in _ONLY_DERIVED else ""
            raise ValueError(
                f"batch: model field {name} is expanded with per-simulation values{by} that the "
                f"refresher does not take; {declare_fix(name)}"
            )
        watched.append((name, per_sim, template))
    return watched, probe


class _MujocoBatchCache(StateCache):
    """A StateCache that re-checks, before each refresh, what
    bind_mujoco_batch checked: caller models set or fields expanded since
    (``len(batch._expanded)``: mujoco.batch's own record of expand(), which
    set_models and the named views go through; and ``batch.expanded(name)``
    of the derived constants set_const expands natively), and the values of
    expanded fields that must keep the model's. About 1 us a refresh plus
    0.6 us per derived constant a refresh reads (one, body_subtreemass, for
    body poses; measured on MuJoCo 4.0.0), plus a compare of each watched
    field; the rows stay dirty when it raises."""

    _batch: Any
    _expanded_count: int
    _watch: list[tuple[str, np.ndarray, np.ndarray]]
    _probe: list[str]

    def _expanded_now(self) -> int:
        expanded = getattr(self._batch, "_expanded", None)
        return -1 if expanded is None else len(expanded)  # -1: unknown, re-check every time

    def _before_refresh(self, ids: np.ndarray) -> None:
        count = self._expanded_now()
        if (
            count != self._expanded_count
            or count < 0
            or self._batch.models is not None
            or any(self._batch.expanded(name) is not None for name in self._probe)
        ):
            self._watch, self._probe = _watched(self._batch, self.refresher)
            self._expanded_count = count
        for name, live, template in self._watch:
            if not same_values(live, template):
                raise ValueError(
                    f"batch: model field {name} was given per-simulation values after "
                    f"bind_mujoco_batch, and the refresh reads it from the refresher's model; "
                    f"{declare_fix(name)}"
                )


def bind_mujoco_batch(
    batch: Any,
    refresher: Refresher,
    *,
    dtype: type | np.dtype = np.float64,
    **outputs: Any,
) -> StateCache:
    """A :class:`StateCache` over a MuJoCo >= 4.0 ``mujoco.batch.Batch``.

    Reads the batch's state views (``bind('qpos')``, ``bind('qvel')``, and
    ``mocap_pos``/``mocap_quat``/``time`` when needed) in place. The batch's
    derived fields are read-only outputs of its own calls, so results go to
    the cache's arrays (or to arrays given by name).

    Usage: ``batch.step(); cache.mark_stepped()``; after ``batch.reset(ids)``
    or ``batch.forward(ids)``, ``cache.mark_fresh(ids)`` (the cache's arrays
    are then refreshed on the next read of those rows).

    Per-simulation model fields: a field the batch has expanded
    (``batch.expanded(name)``) and the refresher declares in ``model_fields``
    is read from the batch's live per-simulation values; a declared field the
    batch has not expanded yet is expanded (``batch.expand(name)``) so later
    writes to it are seen. Every other field a refresh reads (the kinematic
    tree's, and those its selected sensors read: ``actuator_gear`` for
    ``actuatorpos``, ``opt.magnetic`` for a magnetometer, camera fields for
    camera-framed sensors, ...) must keep the refresher's model's values:
    checked here, and again before each refresh (caller models set or
    fields expanded since, new values in an expanded field).

    Raises:
        ValueError: the batch runs caller models (``set_models``), its model
            has other values than the refresher's where a refresh reads
            them, or a model field a refresh reads is expanded with values
            that differ from the refresher's model and the refresher does not
            declare it in ``model_fields`` (or cannot take it per row); also
            from a later refresh, when any of this becomes true after binding.
        TypeError: an input the binding reads from the batch is passed too.
    """
    mujoco_batch = require_mujoco_batch()
    check_refresher(refresher)
    if not isinstance(batch, mujoco_batch.Batch):
        raise TypeError(f"batch: expected mujoco.batch.Batch, got {type(batch).__name__}")
    check_same_sizes(refresher, batch.model, "batch")
    check_not_supplied("bind_mujoco_batch", "the batch", _INPUTS, outputs)
    watch, probe = _watched(batch, refresher)
    # The batch runs a copy of the model it was built from, taken then:
    # batch.model is the caller's object, which may have been edited since.
    check_same_values(refresher, batch.get_model(0), "batch", source="batch.get_model(0)")
    plan = refresher.plan
    kw: dict[str, Any] = {"qpos": batch.bind("qpos"), "qvel": batch.bind("qvel")}
    if refresher.model.nmocap:
        kw["mocap_pos"] = batch.bind("mocap_pos")
        kw["mocap_quat"] = batch.bind("mocap_quat")
    if plan.needs_time:
        kw["time"] = batch.bind("time")
    if plan.model_fields:
        # expand() returns the live values, expanding a field not expanded yet
        kw["model_fields"] = {name: batch.expand(name) for name in plan.model_fields}
    cache = _MujocoBatchCache(refresher, batch.nsim, dtype=dtype, **kw, **outputs)
    cache._batch = batch
    cache._watch = watch
    cache._probe = probe
    cache._expanded_count = cache._expanded_now()
    return cache
