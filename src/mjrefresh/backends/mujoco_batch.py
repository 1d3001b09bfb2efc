"""Binding over a MuJoCo >= 4.0 ``mujoco.batch.Batch``: :func:`bind_mujoco_batch`."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..cache import StateCache
from ..plan import MODEL_FIELDS
from ..refresher import Refresher
from ._checks import check_refresher, check_same_sizes
from ._optional import require_mujoco_batch

# Per-simulation model fields that change what a refresh computes: those a
# refresh can take per row (MODEL_FIELDS) and camera poses, which it cannot.
_KINEMATIC_FIELDS = (*MODEL_FIELDS, "cam_pos", "cam_quat")


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
    writes to it are seen.

    Raises:
        ValueError: the batch runs caller models (``set_models``), or a model
            field that changes refreshed outputs is expanded with values that
            differ from the refresher's model and the refresher does not
            declare it in ``model_fields`` (or cannot take it per row).
    """
    mujoco_batch = require_mujoco_batch()
    check_refresher(refresher)
    if not isinstance(batch, mujoco_batch.Batch):
        raise TypeError(f"batch: expected mujoco.batch.Batch, got {type(batch).__name__}")
    check_same_sizes(refresher, batch.model, "batch")
    if batch.models is not None:
        raise ValueError(
            "batch: it runs caller models (set_models); a refresh uses the refresher's one "
            "model for every row. Expected batch.models None"
        )
    plan = refresher.plan
    fields: dict[str, np.ndarray] = {}
    for name in _KINEMATIC_FIELDS:
        per_sim = batch.expanded(name)
        if name in plan.model_fields:
            fields[name] = per_sim if per_sim is not None else batch.expand(name)
        elif per_sim is not None and not np.array_equal(
            per_sim, np.broadcast_to(getattr(refresher.model, name), per_sim.shape)
        ):
            fix = (
                f"declare it: Refresher(..., model_fields=({name!r}, ...))"
                if name in MODEL_FIELDS
                else "a refresh cannot take it per environment"
            )
            raise ValueError(
                f"batch: model field {name} is expanded with per-simulation values that the "
                f"refresher does not take; {fix}"
            )
    kw: dict[str, Any] = {"qpos": batch.bind("qpos"), "qvel": batch.bind("qvel")}
    if refresher.model.nmocap:
        kw["mocap_pos"] = batch.bind("mocap_pos")
        kw["mocap_quat"] = batch.bind("mocap_quat")
    if plan.needs_time:
        kw["time"] = batch.bind("time")
    if fields:
        kw["model_fields"] = fields
    return StateCache(refresher, batch.nsim, dtype=dtype, **kw, **outputs)
