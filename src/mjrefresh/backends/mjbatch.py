"""Binding over an mjbatch-uni ``mjbatch.Batch``: :func:`bind_mjbatch`, and
:class:`MjbatchSensorRefresher`, a drop-in for its ``refresh_sensor_ranges``."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import mujoco
import numpy as np

from .._not_copyable import NotCopyable
from .._rows import SIM_IDS, is_int, row_ids
from ..bound_refresh import BoundRefresh
from ..cache import StateCache
from ..refresher import Refresher, check_cpu_ids, check_num_threads
from ._checks import (
    check_not_supplied,
    check_refresher,
    check_same_sizes,
    check_same_values,
)
from ._optional import require_mjbatch
from .state_vectors import state_views


def _mjbatch_sensordata(batch: Any) -> np.ndarray:
    """The batch's bound sensordata, in whichever dtype it is already bound."""
    try:
        view: np.ndarray = batch.bind("sensordata")
    except ValueError:
        view = batch.bind("sensordata", np.float32)
    return view


def _mjbatch_inputs(batch: Any, names: Sequence[str]) -> dict[str, np.ndarray]:
    """Float64 views of the batch's native state rows (``batch.bind("state")``,
    ``mjSTATE_INTEGRATION`` layout) for the inputs `names`, read in place.

    Its float64 bound views (``bind("qpos")``, ...) are these same rows, so a
    write through them is seen at once; writes through float32 bound views
    (unisim's default) reach the rows at the batch's next call. Binding only
    ``state`` (always float64 in mjbatch-uni) leaves the backend free to bind
    ``qpos``/``qvel``/``time``/``mocap_*`` in either dtype, before or after."""
    model = batch.model
    spec = mujoco.mjtState.mjSTATE_INTEGRATION
    state = batch.bind("state")
    if state.shape[-1] != mujoco.mj_stateSize(model, spec):
        raise ValueError(
            f"batch: its state rows have {state.shape[-1]} columns, not "
            f"mj_stateSize(model, mjSTATE_INTEGRATION) = {mujoco.mj_stateSize(model, spec)}; "
            "this mjbatch-uni lays them out differently"
        )
    views = state_views(model, state, spec)
    return {name: views[name] for name in names}


def _mjbatch_field(batch: Any, name: str) -> np.ndarray:
    """The batch's live float64 per-simulation values of model field `name`."""
    try:
        values: np.ndarray = batch.expand(name)
    except ValueError as exc:  # "... is already bound with another dtype"
        raise ValueError(
            f"model_fields: the batch has {name} expanded in another dtype ({exc}); a refresh "
            f"reads float64 values, and mjbatch-uni keeps the first dtype a field is expanded "
            f"in: expand and write it as float64 (batch.expand({name!r}) before anything "
            f"expands it as float32)"
        ) from exc
    return values


def _input_names(model: mujoco.MjModel, needs_time: bool) -> list[str]:
    """The refresh inputs a batch of `model` must provide."""
    names = ["qpos", "qvel"]
    if model.nmocap:
        names += ["mocap_pos", "mocap_quat"]
    return names + (["time"] if needs_time else [])


def bind_mjbatch(
    batch: Any,
    refresher: Refresher,
    *,
    dtype: type | np.dtype = np.float64,
    **outputs: Any,
) -> StateCache:
    """A :class:`StateCache` over an mjbatch-uni ``mjbatch.Batch``.

    Reads ``qpos``/``qvel`` (and ``mocap_pos``/``mocap_quat``/``time`` when
    needed) in place from the batch's native float64 state rows
    (``batch.bind("state")``): the memory its float64 bound views share, so
    writes through those are seen by the next refresh without a copy. It
    binds none of them itself, so the backend may bind them in either dtype,
    before or after; writes through float32 views (unisim's default) reach
    the state rows at the batch's next call (``step``, ``forward``,
    ``reset``), so refresh after it. Refreshed sensor columns are written into the batch's bound
    ``sensordata`` (float64, or float32 if the backend bound it so: where
    its readers read them); its other columns (acceleration-stage sensors)
    keep the batch's physics values.
    Body/site outputs go to the cache's own arrays (``dtype``) unless given.

    Usage: ``batch.step(); cache.mark_stepped()``; after
    ``batch.reset(ids)`` (which runs mj_forward) ``cache.mark_fresh(ids)``;
    after writing state, ``cache.mark_dirty(ids)``.

    Per-simulation model fields: every field the refresher declares in
    ``model_fields`` is read from ``batch.expand(name)`` (the batch's live
    per-simulation values, expanded if they were not yet). mjbatch-uni cannot
    tell which fields were expanded, so a field expanded but not declared is
    not seen: declare every randomised field that the refreshed outputs read.
    The batch's own model must have the refresher's values in every field a
    refresh reads and does not take per row (ValueError otherwise). The batch
    runs a copy of ``batch.model`` taken when it was built, which mjbatch-uni
    does not expose: the check compares ``batch.model``, so edit a model
    before building its batch (as mjbatch-uni requires), not after.
    ``body_subtreemass`` is derived from ``body_mass`` per row, as
    ``batch.set_const`` would.
    """
    mjbatch = require_mjbatch()
    check_refresher(refresher)
    if not isinstance(batch, mjbatch.Batch):
        raise TypeError(f"batch: expected mjbatch.Batch, got {type(batch).__name__}")
    check_same_sizes(refresher, batch.model, "batch")
    plan = refresher.plan
    kw: dict[str, Any] = _mjbatch_inputs(batch, _input_names(refresher.model, plan.needs_time))
    check_not_supplied("bind_mjbatch", "the batch", (*kw, "model_fields"), outputs)
    check_same_values(refresher, batch.model, "batch")
    if plan.model_fields:
        kw["model_fields"] = {name: _mjbatch_field(batch, name) for name in plan.model_fields}
    backend: tuple[str, ...] = ()
    if plan.column_ranges and "sensordata" not in outputs:
        outputs["sensordata"] = _mjbatch_sensordata(batch)
        backend = ("sensordata",)
    return StateCache(
        refresher, batch.num_sims, dtype=dtype, backend_outputs=backend, **kw, **outputs
    )


class MjbatchSensorRefresher(NotCopyable):
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
    cannot compute (user, plugin, delayed/interval; acceleration-stage ones
    are left alone, as above) raises :class:`~mjrefresh.PlanError`; pending
    float32-bound input writes are not applied (the state rows are read as
    they are: a float32-bound batch's writes reach them at its next call).

    Per-simulation model fields: mjbatch-uni cannot tell which fields a
    batch has expanded, so name those the refreshed sensors read in
    `model_fields` (as for :func:`bind_mjbatch`): each is read from
    ``batch.expand(name)``, the batch's live values. An expanded field not
    named is not seen: every row gets the batch's model's value.

    One :class:`~mjrefresh.Refresher` is planned per distinct set of ranges
    and kept, bound once to the batch's state rows and sensordata (the
    ``max_plans`` most recent); :meth:`close` stops their threads. Calls
    from several threads are serialised, as mjbatch-uni's own.

    Args:
        batch: the ``mjbatch.Batch``.
        num_threads, cpu_ids: as for :class:`~mjrefresh.Refresher`.
        max_plans: how many planned range sets to keep.
        model_fields: model fields the batch holds per simulation (names of
            :data:`mjrefresh.plan.MODEL_FIELDS`), read per row.
    """

    _instead = "make another MjbatchSensorRefresher(batch)"

    def __init__(
        self,
        batch: Any,
        num_threads: int = 0,
        cpu_ids: Sequence[int] | None = None,
        max_plans: int = 4,
        model_fields: Sequence[str] | None = None,
    ) -> None:
        mjbatch = require_mjbatch()
        if not isinstance(batch, mjbatch.Batch):
            raise TypeError(f"batch: expected mjbatch.Batch, got {type(batch).__name__}")
        if not is_int(max_plans) or int(max_plans) < 1:
            raise ValueError(f"max_plans: expected an int >= 1, got {max_plans!r}")
        max_plans = int(max_plans)
        self._batch = batch
        self._model: mujoco.MjModel = batch.model
        # Checked now, not at the first refresh (inside the backend's reads).
        check_num_threads(num_threads)
        check_cpu_ids(cpu_ids)
        self._num_threads = num_threads
        self._cpu_ids = cpu_ids
        self._max_plans = max_plans
        # Checked now (names, dtype) by planning and binding them once.
        with Refresher(self._model, model_fields=model_fields, num_threads=1) as probe:
            self._model_fields = probe.plan.model_fields
        self._fields = {name: _mjbatch_field(batch, name) for name in self._model_fields}
        # One call at a time, as mjbatch-uni's own refresh_sensor_ranges: the
        # plans are shared, and evicting one closes its refresher, which a
        # call from another thread may be about to run.
        self._lock = threading.Lock()
        # Range set -> its refresher and the refresh bound to the batch's
        # state rows and sensordata (checked once), or None for no columns.
        self._plans: OrderedDict[
            tuple[tuple[int, int], ...], tuple[Refresher, BoundRefresh] | None
        ] = OrderedDict()
        m = self._model
        self._acc = [
            (int(m.sensor_adr[i]), int(m.sensor_adr[i] + m.sensor_dim[i]))
            for i in range(m.nsensor)
            if int(m.sensor_needstage[i]) == mujoco.mjtStage.mjSTAGE_ACC
        ]
        self._state = _mjbatch_inputs(batch, _input_names(m, needs_time=True))
        self._closed = False

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
        # numpy keeps ints past 64 bits as objects: checked as ranges below
        big_ints = flat.ndim == 1 and flat.dtype == object and all(map(is_int, flat.tolist()))
        if not big_ints and (flat.ndim != 1 or (flat.size and flat.dtype.kind not in "iu")):
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

    def _bound_for(self, ranges: tuple[tuple[int, int], ...]) -> BoundRefresh | None:
        if ranges in self._plans:
            self._plans.move_to_end(ranges)
            plan = self._plans[ranges]
            return None if plan is None else plan[1]
        plan = None
        if ranges:
            r = Refresher(
                self._model,
                sensor_ranges=list(ranges),
                num_threads=self._num_threads,
                cpu_ids=self._cpu_ids,
                model_fields=self._model_fields,
            )
            kw: dict[str, Any] = dict(self._state)
            if self._fields:
                kw["model_fields"] = self._fields
            if not r.plan.needs_time:
                kw.pop("time")
            out = r.outputs(self._batch.num_sims, sensordata=_mjbatch_sensordata(self._batch))
            plan = (r, r.bind(kw.pop("qpos"), kw.pop("qvel"), out, **kw))
        self._plans[ranges] = plan
        while len(self._plans) > self._max_plans:
            _, old = self._plans.popitem(last=False)
            if old is not None:
                old[0].close()
        return None if plan is None else plan[1]

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
        n = self._batch.num_sims
        rows = None if ids is None else row_ids("ids", ids, n, SIM_IDS)
        if rows is not None and (rows is ids or rows.base is not None):
            rows = rows.copy()  # the caller's ids may lie in the sensordata it writes
        with self._lock:
            if self._closed:  # planning anew would start threads nothing closes
                raise RuntimeError("MjbatchSensorRefresher is closed")
            bound = self._bound_for(ranges)
            if bound is None:
                return
            bound.refresh(np.arange(n, dtype=np.int64) if rows is None else rows)

    def refresh_sensor_range(self, ids: Any = None, sensor_range: Any = None) -> None:
        """One ``(start, stop)`` range; same as ``refresh_sensor_ranges``."""
        if sensor_range is None or np.asarray(sensor_range).shape != (2,):
            raise ValueError(f"sensor_range: expected a (start, stop) pair, got {sensor_range!r}")
        self.refresh_sensor_ranges(ids, sensor_range)

    @property
    def planned_ranges(self) -> list[tuple[tuple[int, int], ...]]:
        """The merged ``(start, stop)`` range sets planned so far (each one
        refresher), least recently used first: what the backend refreshes."""
        with self._lock:
            return list(self._plans)

    def close(self) -> None:
        """Stop the worker threads of every planned refresher (idempotent);
        a later refresh raises ``RuntimeError``."""
        with self._lock:
            self._closed = True
            for plan in self._plans.values():
                if plan is not None:
                    plan[0].close()
            self._plans.clear()

    def __enter__(self) -> MjbatchSensorRefresher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
