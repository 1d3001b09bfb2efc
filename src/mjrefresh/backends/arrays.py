"""Binding over plain state arrays: :func:`bind_arrays`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from .._rows import qpos_rows
from ..cache import StateCache
from ..refresher import Refresher
from ._checks import check_refresher


def bind_arrays(
    refresher: Refresher,
    qpos: Any,
    qvel: Any,
    *,
    mocap_pos: Any = None,
    mocap_quat: Any = None,
    time: Any = None,
    dtype: type | np.dtype = np.float64,
    backend_outputs: Iterable[str] = (),
    model_fields: Mapping[str, Any] | None = None,
    **outputs: Any,
) -> StateCache:
    """A :class:`StateCache` over plain ``(N, nq)``/``(N, nv)`` state arrays.

    N is ``qpos.shape[0]``. The arrays are read in place at every refresh (any
    row stride, contiguous last axis). Output arrays may be supplied by name
    (numpy, torch CPU tensors, float32 allowed); the others are allocated.
    See :class:`StateCache` for the arguments.
    """
    check_refresher(refresher)
    q = qpos_rows(qpos, refresher.model)
    return StateCache(
        refresher,
        q.shape[0],
        qpos=q,
        qvel=qvel,
        mocap_pos=mocap_pos,
        mocap_quat=mocap_quat,
        time=time,
        dtype=dtype,
        backend_outputs=backend_outputs,
        model_fields=model_fields,
        **outputs,
    )
