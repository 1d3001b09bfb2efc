"""Binding over plain state arrays: :func:`bind_arrays`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from ..cache import StateCache
from ..outputs import RefreshOutputs, as_array
from ..refresher import Refresher
from ._checks import check_refresher


def bind_arrays(
    refresher: Refresher,
    qpos: Any,
    qvel: Any,
    *,
    dtype: type | np.dtype = np.float64,
    backend_outputs: Iterable[str] = (),
    model_fields: Mapping[str, Any] | None = None,
    **arrays: Any,
) -> StateCache:
    """A :class:`StateCache` over plain ``(N, nq)``/``(N, nv)`` state arrays.

    N is ``qpos.shape[0]``. The arrays are read in place at every refresh (any
    row stride, contiguous last axis). The other inputs (``mocap_pos``,
    ``mocap_quat``, ``time``) and output arrays are passed by name (outputs:
    numpy, torch CPU tensors, float32 allowed); outputs not passed are
    allocated. See :class:`StateCache` for the arguments.
    """
    check_refresher(refresher)
    q = as_array("qpos", qpos)
    if q.ndim != 2:
        refresher.bind(q, qvel, RefreshOutputs())  # raises the core's qpos error
    if q.shape[0] == 0:  # StateCache would name its num_envs, which the caller never gave
        raise ValueError(
            f"qpos: expected at least one row (a cache of N >= 1 environments), got shape {q.shape}"
        )
    return StateCache(
        refresher,
        q.shape[0],
        qpos=q,
        qvel=qvel,
        dtype=dtype,
        backend_outputs=backend_outputs,
        model_fields=model_fields,
        **arrays,
    )
