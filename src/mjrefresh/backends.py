"""Bind a :class:`~mjrefresh.StateCache` to where a backend keeps its state.

Every binding reads the backend's state in place (no copy of ``qpos``/
``qvel``), except :func:`bind_mjdata_list`, whose separate ``MjData`` have no
common row stride (see there).

* :func:`bind_arrays`: plain ``(N, nq)``, ``(N, nv)``, ... arrays.
* :func:`bind_mjbatch`: an mjbatch-uni ``mjbatch.Batch`` (its bound, row-strided
  state views; results go into its bound ``sensordata``), and
  :class:`MjbatchSensorRefresher`, a drop-in for its
  ``refresh_sensor_ranges(ids, sensor_ranges)``.
* :func:`bind_mujoco_batch`: a MuJoCo >= 4.0 ``mujoco.batch.Batch``.
* :func:`bind_mjdata_list`: a list of ``mujoco.MjData`` (one per environment).

Optional dependencies are imported only when a binding needs them; a missing
one raises ImportError saying what to install.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import mujoco
import numpy as np

from .cache import StateCache
from .outputs import as_array
from .plan import MODEL_FIELDS
from .refresher import Refresher

__all__ = [
    "MjDataListCache",
    "MjbatchSensorRefresher",
    "bind_arrays",
    "bind_mjbatch",
    "bind_mjdata_list",
    "bind_mujoco_batch",
]


def _require_mjbatch() -> Any:
    try:
        import mjbatch
    except ImportError as exc:
        raise ImportError(
            "mjrefresh.bind_mjbatch / MjbatchSensorRefresher need mjbatch-uni, which is not "
            "installed: pip install mjbatch-uni (it pins the MuJoCo release it was built for)"
        ) from exc
    return mjbatch


def _require_mujoco_batch() -> Any:
    try:
        from mujoco import batch as mujoco_batch
    except ImportError as exc:
        raise ImportError(
            "mjrefresh.bind_mujoco_batch needs mujoco.batch, which MuJoCo "
            f"{mujoco.__version__} does not have: pip install 'mujoco>=4.0' (and rebuild "
            "mjrefresh against it)"
        ) from exc
    return mujoco_batch


def _check_refresher(refresher: object) -> Refresher:
    if not isinstance(refresher, Refresher):
        raise TypeError(f"refresher: expected mjrefresh.Refresher, got {type(refresher).__name__}")
    return refresher


def _check_same_sizes(refresher: Refresher, model: mujoco.MjModel, what: str) -> None:
    rm = refresher.model
    for attr in ("nq", "nv", "nbody", "nmocap", "nsensor", "nsensordata", "nsite"):
        a, b = getattr(rm, attr), getattr(model, attr)
        if a != b:
            raise ValueError(
                f"{what}: its model does not match the refresher's model "
                f"(expected {attr}={a}, got {attr}={b})"
            )


# --------------------------------------------------------------------- arrays
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
    _check_refresher(refresher)
    q = as_array("qpos", qpos)
    if q.ndim != 2:
        raise ValueError(
            f"qpos: expected a 2-D array (N, {refresher.model.nq}), got shape {q.shape}"
        )
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


# ---------------------------------------------------------------- mjbatch-uni
def _mjbatch_sensordata(batch: Any) -> np.ndarray:
    """The batch's bound sensordata, in whichever dtype it is already bound."""
    try:
        return batch.bind("sensordata")
    except ValueError:
        return batch.bind("sensordata", np.float32)


def _mjbatch_state(batch: Any, name: str) -> np.ndarray:
    try:
        return batch.bind(name)
    except ValueError as exc:
        raise ValueError(
            f"batch: cannot bind {name} as the native float64 view of its state rows ({exc}); "
            "mjrefresh reads the state rows in place"
        ) from None


def bind_mjbatch(
    batch: Any,
    refresher: Refresher,
    *,
    dtype: type | np.dtype = np.float64,
    **outputs: Any,
) -> StateCache:
    """A :class:`StateCache` over an mjbatch-uni ``mjbatch.Batch``.

    Reads the batch's bound ``qpos``/``qvel`` (and ``mocap_pos``/
    ``mocap_quat``/``time`` when needed): row-strided float64 views into its
    state rows, so writes to them are seen by the next refresh without a
    copy. Refreshed sensor columns are written into the batch's bound
    ``sensordata`` (float64, or float32 if the backend bound it so); its other
    columns (acceleration-stage sensors) keep the batch's physics values.
    Body/site outputs go to the cache's own arrays (``dtype``) unless given.

    Usage: ``batch.step(); cache.mark_stepped()``; after
    ``batch.reset(ids)`` (which runs mj_forward) ``cache.mark_fresh(ids)``;
    after writing state, ``cache.mark_dirty(ids)``.

    Per-simulation model fields: every field the refresher declares in
    ``model_fields`` is read from ``batch.expand(name)`` (the batch's live
    per-simulation values, expanded if they were not yet). mjbatch-uni cannot
    tell which fields were expanded, so a field expanded but not declared is
    not seen: declare every randomised field that the refreshed outputs read.
    ``body_subtreemass`` is derived from ``body_mass`` per row, as
    ``batch.set_const`` would.
    """
    mjbatch = _require_mjbatch()
    _check_refresher(refresher)
    if not isinstance(batch, mjbatch.Batch):
        raise TypeError(f"batch: expected mjbatch.Batch, got {type(batch).__name__}")
    _check_same_sizes(refresher, batch.model, "batch")
    plan = refresher.plan
    kw: dict[str, Any] = {
        "qpos": _mjbatch_state(batch, "qpos"),
        "qvel": _mjbatch_state(batch, "qvel"),
    }
    if refresher.model.nmocap:
        kw["mocap_pos"] = _mjbatch_state(batch, "mocap_pos")
        kw["mocap_quat"] = _mjbatch_state(batch, "mocap_quat")
    if plan.needs_time:
        kw["time"] = _mjbatch_state(batch, "time")
    if plan.model_fields:
        kw["model_fields"] = {name: batch.expand(name) for name in plan.model_fields}
    backend: tuple[str, ...] = ()
    if plan.column_ranges and "sensordata" not in outputs:
        outputs["sensordata"] = _mjbatch_sensordata(batch)
        backend = ("sensordata",)
    return StateCache(
        refresher, batch.num_sims, dtype=dtype, backend_outputs=backend, **kw, **outputs
    )


class MjbatchSensorRefresher:
    """Drop-in for mjbatch-uni's ``Batch.refresh_sensor_ranges``, computed correctly.

    ``refresh_sensor_ranges(ids, sensor_ranges)`` takes the same arguments as
    ``mjbatch.Batch.refresh_sensor_ranges`` (``ids``: None for all, sorted
    unique int32/int64 ids or a bool mask of ``num_sims``; ``sensor_ranges``: a
    flat ``(start0, stop0, start1, stop1, ...)`` sequence) and, like it, writes
    the position/velocity-stage sensor columns in those ranges into the
    batch's bound ``sensordata`` for those rows, from their current state,
    leaving every other column and row unchanged. It runs the stages each
    selected sensor needs (so ``tendonpos``/``tendonvel``/``actuatorpos``/
    ``actuatorvel``, subtree velocities and camera-framed sensors are right),
    and leaves acceleration-stage sensor columns inside the ranges unchanged
    (mjbatch-uni 0.2.5 copies its worker's scratch values there, which belong
    to another simulation). Differences: a range covering a sensor a refresh
    cannot compute (joint/tendon limit, energy, user, plugin, delayed) raises
    :class:`~mjrefresh.PlanError`; pending float32-bound input writes are not
    applied (the state rows are read as they are).

    One :class:`~mjrefresh.Refresher` is planned per distinct set of ranges
    and kept (the ``max_plans`` most recent); :meth:`close` stops their threads.

    Args:
        batch: the ``mjbatch.Batch``.
        num_threads, cpu_ids: as for :class:`~mjrefresh.Refresher`.
        max_plans: how many planned range sets to keep.
    """

    def __init__(
        self,
        batch: Any,
        num_threads: int = 0,
        cpu_ids: Sequence[int] | None = None,
        max_plans: int = 4,
    ) -> None:
        mjbatch = _require_mjbatch()
        if not isinstance(batch, mjbatch.Batch):
            raise TypeError(f"batch: expected mjbatch.Batch, got {type(batch).__name__}")
        if isinstance(max_plans, bool) or not isinstance(max_plans, int) or max_plans < 1:
            raise ValueError(f"max_plans: expected an int >= 1, got {max_plans!r}")
        self._batch = batch
        self._model: mujoco.MjModel = batch.model
        self._num_threads = num_threads
        self._cpu_ids = cpu_ids
        self._max_plans = max_plans
        self._plans: OrderedDict[tuple[tuple[int, int], ...], Refresher | None] = OrderedDict()
        m = self._model
        self._acc = [
            (int(m.sensor_adr[i]), int(m.sensor_adr[i] + m.sensor_dim[i]))
            for i in range(m.nsensor)
            if int(m.sensor_needstage[i]) == mujoco.mjtStage.mjSTAGE_ACC
        ]
        self._state: dict[str, np.ndarray] = {
            "qpos": _mjbatch_state(batch, "qpos"),
            "qvel": _mjbatch_state(batch, "qvel"),
        }
        if m.nmocap:
            self._state["mocap_pos"] = _mjbatch_state(batch, "mocap_pos")
            self._state["mocap_quat"] = _mjbatch_state(batch, "mocap_quat")
        self._time: np.ndarray | None = None

    def _ranges(self, sensor_ranges: Any) -> tuple[tuple[int, int], ...]:
        if sensor_ranges is None:  # mjbatch-uni raises ValueError here too
            raise ValueError(
                "sensor_ranges: expected (start, stop) pairs as a flat sequence of ints, got None"
            )
        if isinstance(sensor_ranges, (str, bytes)):
            raise TypeError(
                "sensor_ranges: expected a flat sequence of ints (start0, stop0, start1, "
                f"stop1, ...), got {type(sensor_ranges).__name__}"
            )
        flat = np.asarray(sensor_ranges)
        if flat.ndim != 1 or (flat.size and flat.dtype.kind not in "iu"):
            raise TypeError(
                "sensor_ranges: expected a flat sequence of ints (start0, stop0, start1, "
                f"stop1, ...), got shape {flat.shape} dtype {flat.dtype}"
            )
        if flat.size == 0 or flat.size % 2:
            raise ValueError(
                "sensor_ranges: expected (start, stop) pairs as a flat sequence of ints, "
                f"got {flat.size} values"
            )
        n = self._model.nsensordata
        pairs = []
        for k in range(0, flat.size, 2):
            start, stop = int(flat[k]), int(flat[k + 1])
            if not 0 <= start < stop <= n:
                raise ValueError(
                    f"sensor_ranges: expected 0 <= start < stop <= {n} (nsensordata), got "
                    f"({start}, {stop}) at position {k}"
                )
            pairs.append((start, stop))
        # Drop acceleration-stage columns: they keep the physics values.
        cols = np.zeros(n + 1, dtype=bool)
        for start, stop in pairs:
            cols[start:stop] = True
        for start, stop in self._acc:
            cols[start:stop] = False
        edges = np.flatnonzero(
            np.diff(np.concatenate(([False], cols[:n], [False])).astype(np.int8))
        )
        return tuple((int(a), int(b)) for a, b in zip(edges[::2], edges[1::2], strict=True))

    def _refresher_for(self, ranges: tuple[tuple[int, int], ...]) -> Refresher | None:
        if ranges in self._plans:
            self._plans.move_to_end(ranges)
            return self._plans[ranges]
        r = None
        if ranges:
            r = Refresher(
                self._model,
                sensor_ranges=list(ranges),
                num_threads=self._num_threads,
                cpu_ids=self._cpu_ids,
            )
        self._plans[ranges] = r
        while len(self._plans) > self._max_plans:
            _, old = self._plans.popitem(last=False)
            if old is not None:
                old.close()
        return r

    def _ids(self, ids: Any) -> np.ndarray | None:
        n = self._batch.num_sims
        if ids is None:
            return None
        a = np.asarray(ids)
        if a.ndim != 1:
            raise ValueError(
                "ids: expected a 1-D array of sorted unique ids or a bool mask, "
                f"got shape {a.shape}"
            )
        if a.dtype == np.bool_:
            if a.shape[0] != n:
                raise ValueError(
                    f"ids: expected a bool mask of length {n} (num_sims), got length {a.shape[0]}"
                )
            return np.flatnonzero(a)
        if a.size == 0:
            return np.empty(0, np.int64)
        if a.dtype not in (np.dtype(np.int32), np.dtype(np.int64)):
            raise ValueError(f"ids: expected int32, int64 or a bool mask, got dtype {a.dtype}")
        a = a.astype(np.int64, copy=False)
        if a[0] < 0 or a[-1] >= n or (a.size > 1 and np.any(a[1:] <= a[:-1])):
            raise ValueError(f"ids: expected sorted unique ids in [0, {n}), got {a.tolist()[:8]}")
        return a

    def refresh_sensor_ranges(self, ids: Any = None, sensor_ranges: Any = None) -> None:
        """Refresh the position/velocity-stage columns in `sensor_ranges` for `ids`.

        Args:
            ids: None (all), sorted unique int32/int64 ids, or a bool mask.
            sensor_ranges: flat ``(start0, stop0, start1, stop1, ...)`` ints.

        Raises:
            TypeError, ValueError: bad `ids` or `sensor_ranges`.
            PlanError: a range covers a sensor a refresh cannot compute.
            RefreshError: MuJoCo failed in some rows (the others were refreshed).
        """
        ranges = self._ranges(sensor_ranges)
        rows = self._ids(ids)
        r = self._refresher_for(ranges)
        if r is None:
            return
        if rows is None:
            rows = np.arange(self._batch.num_sims, dtype=np.int64)
        kw = dict(self._state)
        if r.plan.needs_time:
            if self._time is None:
                self._time = _mjbatch_state(self._batch, "time")
            kw["time"] = self._time
        out = r.outputs(self._batch.num_sims, sensordata=_mjbatch_sensordata(self._batch))
        r.refresh(rows, out=out, **kw)

    def refresh_sensor_range(self, ids: Any = None, sensor_range: Any = None) -> None:
        """One ``(start, stop)`` range; same as ``refresh_sensor_ranges``."""
        if sensor_range is None or np.asarray(sensor_range).shape != (2,):
            raise ValueError(f"sensor_range: expected a (start, stop) pair, got {sensor_range!r}")
        self.refresh_sensor_ranges(ids, sensor_range)

    def close(self) -> None:
        """Stop the worker threads of every planned refresher (idempotent)."""
        for r in self._plans.values():
            if r is not None:
                r.close()
        self._plans.clear()

    def __enter__(self) -> MjbatchSensorRefresher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# ---------------------------------------------------------- mujoco.batch (4.0)
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
    mujoco_batch = _require_mujoco_batch()
    _check_refresher(refresher)
    if not isinstance(batch, mujoco_batch.Batch):
        raise TypeError(f"batch: expected mujoco.batch.Batch, got {type(batch).__name__}")
    _check_same_sizes(refresher, batch.model, "batch")
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


# -------------------------------------------------------------- list of MjData
def _as_index(ids: Sequence[int]) -> slice | np.ndarray:
    """A slice for a contiguous increasing id range, else an int64 array."""
    a = np.asarray(ids, dtype=np.int64)
    if a.size and np.array_equal(a, np.arange(a[0], a[0] + a.size)):
        return slice(int(a[0]), int(a[0]) + a.size)
    return a


def _scatter_entry(
    src: np.ndarray, datas: list[mujoco.MjData], field: str, items: slice | np.ndarray
) -> tuple[np.ndarray, list[np.ndarray], Any]:
    if isinstance(items, slice):
        return src, [getattr(d, field)[items] for d in datas], None
    return src, [getattr(d, field) for d in datas], items


class MjDataListCache(StateCache):
    """A :class:`StateCache` over a list of ``mujoco.MjData``, refreshed in place.

    Separate ``MjData`` share no row stride, so the native core cannot read
    them as one ``(N, nq)`` array. Before a refresh, the state (``qpos``,
    ``qvel``, mocap, ``time``) of the rows about to be refreshed is gathered
    into the cache's staging arrays; the refresh runs on the worker threads
    into the cache's outputs; then, for those rows, the selected fields are
    written back into each ``MjData``: the refreshed ``sensordata`` columns,
    ``xpos``/``xquat`` of the selected bodies and ``site_xpos``/``site_xmat`` of
    the selected sites. Afterwards those fields equal what ``mj_forward``
    gives; every other field, including acceleration-stage sensors, is
    unchanged. Velocities and relative poses are read from the cache
    (``body_linvel_w``, ``body_pos_b``, ...).

    Gather and scatter are Python loops over the refreshed rows only (a few
    microseconds per row); a per-row pointer path in the native core would
    remove them.

    Usage: after ``mj_step`` on env i, ``cache.mark_stepped(i)``; reads (or
    :meth:`refresh_dirty_rows`) then update the ``MjData`` in place.

    The cache's own arrays are float64, like the ``MjData`` fields they are
    copied into.

    Args:
        refresher: the refresher (its model must match every ``MjData``).
        datas: one ``MjData`` per environment (kept, not copied).
    """

    def __init__(self, refresher: Refresher, datas: Sequence[mujoco.MjData]) -> None:
        _check_refresher(refresher)
        if isinstance(datas, mujoco.MjData) or not isinstance(datas, Sequence):
            raise TypeError(
                f"datas: expected a sequence of mujoco.MjData, got {type(datas).__name__}"
            )
        datas = list(datas)
        if not datas:
            raise ValueError("datas: expected at least one mujoco.MjData, got an empty sequence")
        m = refresher.model
        for i, d in enumerate(datas):
            if not isinstance(d, mujoco.MjData):
                raise TypeError(f"datas[{i}]: expected mujoco.MjData, got {type(d).__name__}")
            if (
                d.qpos.shape[0] != m.nq
                or d.qvel.shape[0] != m.nv
                or d.sensordata.shape[0] != m.nsensordata
            ):
                raise ValueError(
                    f"datas[{i}]: expected an MjData of the refresher's model (nq={m.nq}, "
                    f"nv={m.nv}), got nq={d.qpos.shape[0]}, nv={d.qvel.shape[0]}"
                )
        n = len(datas)
        self._datas = datas
        self._qpos_views = [d.qpos for d in datas]
        self._qvel_views = [d.qvel for d in datas]
        qpos = np.zeros((n, m.nq))
        qvel = np.zeros((n, m.nv))
        kw: dict[str, Any] = {}
        if m.nmocap:
            self._mpos_views = [d.mocap_pos for d in datas]
            self._mquat_views = [d.mocap_quat for d in datas]
            kw["mocap_pos"] = np.zeros((n, m.nmocap, 3))
            kw["mocap_quat"] = np.zeros((n, m.nmocap, 4))
        if refresher.plan.needs_time:
            kw["time"] = np.zeros(n)
        super().__init__(refresher, n, qpos=qpos, qvel=qvel, **kw)
        plan = refresher.plan
        body_ids = _as_index(plan.body_ids)
        site_ids = _as_index(plan.site_ids)
        # (source output, per-env destination getter) pairs scattered after a refresh.
        self._scatter: list[tuple[np.ndarray, list[np.ndarray], Any]] = []
        out = self._outputs
        for start, stop in plan.column_ranges:
            self._scatter.append(
                (out["sensordata"][:, start:stop], [d.sensordata[start:stop] for d in datas], None)
            )
        # Destinations are views made once (a contiguous id range is a slice,
        # so each row is one plain copy).
        if plan.body_ids:
            for name, field in (("body_pos", "xpos"), ("body_quat", "xquat")):
                self._scatter.append(_scatter_entry(out[name], datas, field, body_ids))
        if plan.site_ids:
            for name, field in (("site_pos", "site_xpos"), ("site_mat", "site_xmat")):
                self._scatter.append(_scatter_entry(out[name], datas, field, site_ids))

    @property
    def datas(self) -> list[mujoco.MjData]:
        """The ``MjData`` this cache refreshes, one per row."""
        return self._datas

    def _before_refresh(self, ids: np.ndarray) -> None:
        idx = ids.tolist()
        inputs = self._inputs
        inputs["qpos"][ids] = np.stack([self._qpos_views[i] for i in idx])
        inputs["qvel"][ids] = np.stack([self._qvel_views[i] for i in idx])
        if "mocap_pos" in inputs:
            inputs["mocap_pos"][ids] = np.stack([self._mpos_views[i] for i in idx])
            inputs["mocap_quat"][ids] = np.stack([self._mquat_views[i] for i in idx])
        if "time" in inputs:
            inputs["time"][ids] = [self._datas[i].time for i in idx]

    def _after_refresh(self, ids: np.ndarray) -> None:
        idx = ids.tolist()
        copyto = np.copyto
        for src, dsts, items in self._scatter:
            if items is None:
                for i in idx:
                    copyto(dsts[i], src[i])
            else:
                for i in idx:
                    dsts[i][items] = src[i]


def bind_mjdata_list(refresher: Refresher, datas: Sequence[mujoco.MjData]) -> MjDataListCache:
    """A :class:`MjDataListCache` over one ``MjData`` per environment (see there)."""
    return MjDataListCache(refresher, datas)
