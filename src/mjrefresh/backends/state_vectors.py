"""Rows kept as MuJoCo state vectors (``mj_getState`` layout):
:func:`state_views` and :func:`bind_state`.

Batch runtimes and MuJoCo's own ``mujoco.rollout`` hand their rows back as
state vectors: ``(N, nstate)`` (or ``(..., nstate)``, e.g. a rollout's
``(nbatch, nstep, nstate)``) arrays whose columns are the components of a
state spec (``mujoco.mjtState``) in ``mj_getState``'s order, increasing bit
by bit. :func:`state_views` returns zero-copy views of the components a
refresh reads, named like the refresh's inputs, so that
``refresher.refresh(rows, out=out, **state_views(model, states))`` and
``refresher.bind(out=out, **views)`` read the state rows in place;
:func:`bind_state` is the :class:`~mjrefresh.StateCache` over them.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Mapping
from typing import Any

import mujoco
import numpy as np

from .._rows import is_int
from ..cache import StateCache
from ..outputs import as_array
from ..refresher import Refresher
from ..sensor_rules import require_model
from ._checks import check_not_supplied, check_refresher

_STATE = mujoco.mjtState
#: The refresh inputs a state vector can hold, by the spec bit holding them.
_COMPONENTS = {
    "time": "mjSTATE_TIME",
    "qpos": "mjSTATE_QPOS",
    "qvel": "mjSTATE_QVEL",
    "mocap_pos": "mjSTATE_MOCAP_POS",
    "mocap_quat": "mjSTATE_MOCAP_QUAT",
}


def _single_bits() -> list[int]:
    """Every one-component mjtState bit this MuJoCo has, in increasing order
    (mj_getState writes the components of a spec in this order)."""
    bits = {int(getattr(_STATE, n)) for n in dir(_STATE) if n.startswith("mjSTATE_")}
    return sorted(b for b in bits if b and b & (b - 1) == 0)


def _spec_bits(spec: Any) -> int:
    if isinstance(spec, bool) or not isinstance(spec, (int, np.integer, _STATE)):
        raise TypeError(
            f"spec: expected a mujoco.mjtState value (e.g. mjSTATE_FULLPHYSICS), got "
            f"{type(spec).__name__}"
        )
    every = int(_STATE.mjSTATE_INTEGRATION)  # the union of every state component
    if int(spec) < 0 or int(spec) & ~every:
        raise ValueError(
            f"spec: expected a mujoco.mjtState value or a union of them (bits within "
            f"{every:#x}), got {int(spec)}"
        )
    return int(spec)


def _rows(
    name: str, obj: Any, width: int, what: str, dtypes: tuple[type, ...] = (np.float64,)
) -> np.ndarray:
    """`obj` as (rows, width) with a dtype of `dtypes`: a view that merges any
    leading axes (never a copy), or ValueError/TypeError."""
    a = as_array(name, obj, written=name != "states")
    if a.ndim < 2:
        raise ValueError(
            f"{name}: expected (N, {width}) or (..., {width}) rows, got shape {a.shape}"
        )
    if a.shape[-1] != width:
        raise ValueError(
            f"{name}: expected {width} columns ({what}), got {a.shape[-1]} (rows of another model "
            "or another state spec?)"
        )
    if a.dtype not in [np.dtype(d) for d in dtypes]:
        expected = " or ".join(np.dtype(d).name for d in dtypes)
        raise TypeError(f"{name}: expected dtype {expected}, got {a.dtype}")
    # The views of the components inherit this layout; the core would report
    # a bad one on them (qpos, ...), which the caller never passed. An empty
    # array has none (numpy gives np.zeros((0, n)) strides (0, 0)).
    if a.size == 0:
        return a.reshape(-1, width)
    if width > 1 and a.strides[-1] != a.itemsize:
        raise ValueError(
            f"{name}: its last axis must be contiguous (stride {a.itemsize} bytes), got stride "
            f"{a.strides[-1]} bytes: pass rows whose columns are adjacent"
        )
    if a.ctypes.data % a.itemsize or any(st % a.itemsize for st in a.strides):
        raise ValueError(
            f"{name}: its data and strides must be multiples of {a.itemsize} bytes (the "
            f"element size), got address {a.ctypes.data:#x} and strides {a.strides}"
        )
    if a.ndim == 2:
        return a
    rows = a.reshape(-1, width)  # a view when the leading axes merge, else a copy
    if rows.size and not np.shares_memory(rows, a):
        raise ValueError(
            f"{name}: its leading axes {a.shape[:-1]} cannot be merged into rows without a copy "
            f"(strides {a.strides}); pass {name}.reshape(-1, {width}) of an array that allows it"
        )
    return rows


def state_views(
    model: mujoco.MjModel, states: Any, spec: Any = _STATE.mjSTATE_FULLPHYSICS
) -> dict[str, np.ndarray]:
    """Zero-copy views of the refresh inputs held in MuJoCo state vectors.

    Args:
        model: the model the states belong to.
        states: ``(N, nstate)`` float64 rows in ``mj_getState(model, d, state,
            spec)``'s layout, any row stride, last axis contiguous; more
            leading axes (a ``mujoco.rollout`` trajectory's ``(nbatch,
            nstep, nstate)``) are merged into rows, never copied.
        spec: the ``mujoco.mjtState`` spec the rows were written with
            (default ``mjSTATE_FULLPHYSICS``, what ``mujoco.rollout`` and
            mujoco-uni-runtime return); it must include ``mjSTATE_QPOS`` and
            ``mjSTATE_QVEL``.

    Returns:
        ``{"qpos": (N, nq), "qvel": (N, nv)}`` and, where the spec and the
        model have them, ``"time": (N,)``, ``"mocap_pos": (N, nmocap, 3)``,
        ``"mocap_quat": (N, nmocap, 4)``: views into `states`, so that
        ``refresher.refresh(rows, out=out, **views)`` reads the rows in place.
        A spec without the mocap components (``mjSTATE_FULLPHYSICS``) leaves
        a model's mocap poses to the caller (``mocap_pos=``/``mocap_quat=``
        of the refresh; :func:`model_mocap` gives the compiled ones, what
        ``mujoco.rollout`` and mujoco-uni-runtime simulate with), as
        ``mj_setState`` leaves them in the ``MjData``.

    Raises:
        TypeError, ValueError: a spec without qpos or qvel, rows of the wrong
            width (another model's or another spec's), not float64, or
            leading axes that cannot be merged without a copy.
    """
    require_model(model)
    bits = _spec_bits(spec)
    missing = [c for c in ("mjSTATE_QPOS", "mjSTATE_QVEL") if not bits & int(getattr(_STATE, c))]
    if missing:
        raise ValueError(
            f"spec: expected a state spec that includes mjSTATE_QPOS and mjSTATE_QVEL, got "
            f"{bits:#x} (without {' and '.join(missing)})"
        )
    width = int(mujoco.mj_stateSize(model, bits))
    rows = _rows("states", states, width, f"mj_stateSize(model, spec={bits:#x})")
    offsets: dict[int, int] = {}
    at = 0
    for bit in _single_bits():
        if bits & bit:
            offsets[bit] = at
            at += int(mujoco.mj_stateSize(model, bit))
    n = rows.shape[0]
    views: dict[str, np.ndarray] = {}
    for name, member in _COMPONENTS.items():
        bit = int(getattr(_STATE, member))
        size = int(mujoco.mj_stateSize(model, bit))
        if not bits & bit or (size == 0 and name not in ("qpos", "qvel")):
            continue  # qpos/qvel are always given: (N, 0) for a model without them
        block = rows[:, offsets[bit] : offsets[bit] + size]
        if name == "time":
            views[name] = block[:, 0]
        elif name.startswith("mocap"):
            views[name] = block.reshape(n, model.nmocap, 3 if name == "mocap_pos" else 4)
        else:
            views[name] = block
    return views


def model_mocap(model: mujoco.MjModel, num_envs: int) -> dict[str, np.ndarray]:
    """The model's compiled mocap poses for every row, as refresh inputs.

    Runtimes whose state rows hold no mocap (``mjSTATE_FULLPHYSICS``:
    ``mujoco.rollout``, mujoco-uni-runtime's ``BatchEnvPool`` unless the
    control spec drives mocap) simulate with the poses the model was compiled
    with. This returns them as ``{"mocap_pos": (N, nmocap, 3), "mocap_quat":
    (N, nmocap, 4)}`` read-only broadcast views (no per-row copy), or ``{}``
    for a model without mocap bodies, to pass next to :func:`state_views`.
    """
    require_model(model)
    if not is_int(num_envs):
        raise TypeError(f"num_envs: expected an int >= 0, got {type(num_envs).__name__}")
    n = operator.index(num_envs)
    if n < 0:
        raise ValueError(f"num_envs: expected a count >= 0, got {n}")
    if model.nmocap == 0:
        return {}
    # The mocap bodies, ordered by mocap id (as mj_resetData copies them).
    bodies = np.flatnonzero(model.body_mocapid >= 0)
    bodies = bodies[np.argsort(model.body_mocapid[bodies])]
    return {
        "mocap_pos": np.broadcast_to(model.body_pos[bodies], (n, model.nmocap, 3)),
        "mocap_quat": np.broadcast_to(model.body_quat[bodies], (n, model.nmocap, 4)),
    }


def _refuse_overlaps(states: Any, outputs: Mapping[str, Any]) -> None:
    """ValueError naming `states` for an output sharing memory with it (the
    native check would name the internal views, qvel or time, the caller
    never passed)."""
    rows = as_array("states", states)
    for name, obj in outputs.items():
        if obj is None:
            continue
        out = as_array(name, obj, written=True)
        # bounds first; then exact (a few axes each: numpy's solver is quick)
        if np.may_share_memory(out, rows) and np.shares_memory(out, rows):
            raise ValueError(
                f"{name}: overlaps states in memory (the state rows the refresh reads); "
                f"pass a {name} array of its own"
            )


def bind_state(
    refresher: Refresher,
    states: Any,
    spec: Any = _STATE.mjSTATE_FULLPHYSICS,
    sensordata: Any = None,
    *,
    dtype: type | np.dtype = np.float64,
    backend_outputs: Iterable[str] = (),
    model_fields: Mapping[str, Any] | None = None,
    **outputs: Any,
) -> StateCache:
    """A :class:`~mjrefresh.StateCache` over rows kept as state vectors.

    The state is read in place from `states` (see :func:`state_views`; a
    rollout's ``(nbatch, nstep, nstate)`` is ``nbatch * nstep`` rows).
    `sensordata`, e.g. the sensordata a batch runtime returned next to the
    states (``(N, nsensordata)`` or with the same leading axes), is written
    in place: only the refreshed position/velocity columns change, so its
    acceleration-stage columns keep the physics' values. Other outputs, and
    the inputs the spec does not hold (``mocap_pos``/``mocap_quat`` for a
    ``mjSTATE_FULLPHYSICS`` spec on a model with mocap bodies), are passed
    by name, as for :func:`~mjrefresh.bind_arrays`.
    """
    check_refresher(refresher)
    views = state_views(refresher.model, states, spec)
    check_not_supplied("bind_state", "the state rows", views, outputs)
    if sensordata is not None:
        lead = np.shape(states)[:-1]
        given = np.shape(sensordata)[:-1]
        if len(given) > 1 and given != lead:
            raise ValueError(
                f"sensordata: its leading axes {given} differ from those of states {lead}; "
                "expected (N, nsensordata) or the leading axes of states"
            )
        outputs["sensordata"] = _rows(
            "sensordata",
            sensordata,
            refresher.model.nsensordata,
            "model.nsensordata",
            (np.float64, np.float32),
        )
    _refuse_overlaps(states, outputs)
    qpos = views.pop("qpos")
    if qpos.shape[0] == 0:  # StateCache would name its num_envs, which the caller never gave
        raise ValueError(
            "states: expected at least one row (a cache of N >= 1 environments), "
            f"got shape {np.shape(states)}"
        )
    return StateCache(
        refresher,
        qpos.shape[0],
        qpos=qpos,
        qvel=views.pop("qvel"),
        dtype=dtype,
        backend_outputs=backend_outputs,
        model_fields=model_fields,
        **views,
        **outputs,
    )
