"""The dirty/cache lifecycle adapter: decides *when* rows are refreshed.

A :class:`StateCache` sits between a simulation backend and one
:class:`~mjrefresh.Refresher`. The backend tells it what happened to each row
(``mark_stepped`` after physics, ``mark_fresh`` after its own forward/reset,
``mark_dirty`` after a state write); readers ask it for values
(``body_pos_w``, ``sensor``, ...). A read refreshes, in one native call, only
the dirty rows among the rows it returns; a repeated read refreshes nothing.
"""

from __future__ import annotations

import time as _time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, fields
from typing import Any, Union

import mujoco
import numpy as np

from ._rows import RowsLike, dirty_among, is_int, normalize_rows
from .bound_refresh import RefreshError
from .outputs import RefreshOutputs, as_array
from .refresher import Refresher

#: What ``bodies`` accepts: None (all of the refresher's bodies), one body name
#: or model body id (drops the body axis), or a sequence of them.
BodiesLike = Union[str, int, Sequence[Union[str, int]], None]  # noqa: UP007


def _as_output(name: str, obj: Any) -> Any:
    """Numpy view of a buffer-protocol object (memoryview, ctypes array, ...)
    that is neither a numpy array nor a DLPack/array-interface exporter;
    everything else is passed on unchanged (and checked later)."""
    if isinstance(obj, np.ndarray) or hasattr(obj, "__dlpack__"):
        return obj
    if hasattr(obj, "__array_interface__"):
        return obj
    try:
        view = memoryview(obj)
    except TypeError:
        return obj  # rejected with a message naming `name` by as_array
    if view.readonly:
        raise ValueError(
            f"{name}: expected a writable buffer, got a read-only {type(obj).__name__}"
        )
    return np.asarray(view)


@dataclass
class CacheStats:
    """Counters of a :class:`StateCache` (reset with :meth:`reset`).

    Attributes:
        native_calls: native refresh calls made (each covers many rows).
        rows_refreshed: rows refreshed by those calls.
        reads: reads served (``body_*``, ``sensor``, ``outputs``).
        cached_reads: reads served without a refresh (nothing they return
            was dirty, or inside :meth:`StateCache.frozen`).
        native_seconds: wall-clock seconds spent inside native calls.
    """

    native_calls: int = 0
    rows_refreshed: int = 0
    reads: int = 0
    cached_reads: int = 0
    native_seconds: float = 0.0

    def reset(self) -> None:
        """Set every counter back to zero."""
        for f in fields(self):
            setattr(self, f.name, type(getattr(self, f.name))())

    def as_dict(self) -> dict[str, float]:
        """The counters as a plain dict."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


class StateCache:
    """Per-row dirty tracking and on-demand refresh over one :class:`Refresher`.

    The cache is bound once to the backend's live state arrays and to output
    storage; it never copies the state. Each of the N rows is either *fresh*
    (the outputs describe the row's current state) or *dirty*. The backend
    marks rows; reads refresh what they need:

    * :meth:`mark_stepped` after physics (derived values are one substep
      stale), :meth:`mark_dirty` after writing state without a forward,
      :meth:`mark_fresh` after the backend's own forward/reset.
    * ``body_pos_w``/``body_quat_w``/``body_linvel_w``/``body_angvel_w``
      (world frame), ``body_pos_b``/``body_quat_b`` (in the refresher's
      ``relative_to`` frame), :meth:`sensor` and :meth:`outputs` refresh, in
      one native call, the dirty rows among the rows they return, then return
      the values. Nothing else is refreshed: other dirty rows stay dirty.
    * Inside :meth:`frozen` reads never refresh.

    A read never returns another row's values, nor values older than the last
    ``mark_stepped``/``mark_dirty`` of the rows it returns (outside
    :meth:`frozen`).

    Reads with ``env_ids=None`` (or a slice/int) and ``bodies=None`` (or one
    body) return views of the storage, which later refreshes overwrite; a
    list/array of ids or of bodies returns a new array. Not thread-safe: use
    one cache from one thread at a time.

    Args:
        refresher: what to compute (its plan) and the worker threads. The cache
            does not own it (closing it is the caller's business).
        num_envs: N, the number of rows.
        qpos, qvel: the backend's ``(N, nq)``/``(N, nv)`` float64 state, last
            axis contiguous, any row stride (read in place at every refresh).
        mocap_pos, mocap_quat: ``(N, nmocap, 3|4)`` float64 state; required
            when the model has mocap bodies.
        time: ``(N,)`` float64 per-row time (a live view), or a scalar; required
            when the refresher selects a clock sensor.
        dtype: dtype of the arrays the cache allocates (float64 or float32).
        backend_outputs: names of the supplied output arrays that the backend
            itself brings current when it runs its own forward/reset (e.g.
            ``("sensordata",)`` for a backend's bound ``sensordata``). See
            :meth:`mark_fresh`.
        model_fields: ``{name: (N, ...) float64 array}`` of the per-environment
            model fields the refresher declared (live views, e.g. a backend's
            expanded fields; read in place at every refresh).
        **outputs: output arrays to write instead of the cache's own, by name
            (``sensordata``, ``body_pos``, ... as in :class:`RefreshOutputs`;
            None means the cache allocates it):
            numpy arrays, CPU tensors exporting DLPack or the array interface,
            or writable buffer-protocol objects (all written in place;
            float32 allowed).

    Raises:
        TypeError, ValueError: a bad argument, naming it with expected vs got.
    """

    def __init__(
        self,
        refresher: Refresher,
        num_envs: int,
        *,
        qpos: Any,
        qvel: Any,
        mocap_pos: Any = None,
        mocap_quat: Any = None,
        time: Any = None,
        dtype: type | np.dtype = np.float64,
        backend_outputs: Iterable[str] = (),
        model_fields: Mapping[str, Any] | None = None,
        **outputs: Any,
    ) -> None:
        if not isinstance(refresher, Refresher):
            raise TypeError(
                f"refresher: expected mjrefresh.Refresher, got {type(refresher).__name__}"
            )
        if not is_int(num_envs) or int(num_envs) < 1:
            raise ValueError(f"num_envs: expected an int >= 1, got {num_envs!r}")
        n = int(num_envs)
        model = refresher.model
        plan = refresher.plan
        self._refresher = refresher
        self._n = n

        inputs: dict[str, np.ndarray] = {}
        for name, value, width in (("qpos", qpos, model.nq), ("qvel", qvel, model.nv)):
            a = as_array(name, value)
            if a.ndim != 2 or a.shape != (n, width):
                raise ValueError(f"{name}: expected shape ({n}, {width}), got {a.shape}")
            inputs[name] = a
        if model.nmocap:
            for name, value, width in (("mocap_pos", mocap_pos, 3), ("mocap_quat", mocap_quat, 4)):
                if value is None:
                    raise ValueError(
                        f"{name}: the model has {model.nmocap} mocap bodies; expected an array "
                        f"of shape ({n}, {model.nmocap}, {width}), got None"
                    )
                a = as_array(name, value)
                if a.shape != (n, model.nmocap, width):
                    raise ValueError(
                        f"{name}: expected shape ({n}, {model.nmocap}, {width}), got {a.shape}"
                    )
                inputs[name] = a
        if time is not None:
            if (
                is_int(time)
                or isinstance(time, (float, np.floating))
                or (isinstance(time, np.ndarray) and time.ndim == 0)
            ):
                t = np.full(n, float(time))
            else:
                t = as_array("time", time)
                if t.shape != (n,):
                    raise ValueError(f"time: expected a scalar or shape ({n},), got {t.shape}")
            inputs["time"] = t
        elif plan.needs_time:
            raise ValueError(
                "time: the refresher selects a clock sensor; expected a scalar or an "
                f"({n},) float64 array, got None"
            )

        # An output passed as None is allocated by the cache, like an omitted one.
        outputs = {k: v for k, v in outputs.items() if v is not None}
        backend = tuple(backend_outputs)
        for name in backend:
            if name not in outputs:
                raise ValueError(
                    f"backend_outputs: {name!r} is not one of the supplied output arrays "
                    f"{tuple(sorted(outputs))}"
                )
        outputs = {k: _as_output(k, v) for k, v in outputs.items()}
        out = refresher.outputs(n, dtype, **outputs)
        # Full validation (dtypes, shapes, strides, writability, overlaps)
        # once, on these very arrays; every refresh reuses the binding.
        self._bound = refresher.bind(
            inputs["qpos"],
            inputs["qvel"],
            out,
            mocap_pos=inputs.get("mocap_pos"),
            mocap_quat=inputs.get("mocap_quat"),
            time=inputs.get("time"),
            model_fields=model_fields,
        )
        self._inputs = self._bound.inputs
        self._out = out
        self._outputs = out.arrays()
        self._supplied = frozenset(outputs)
        # mark_fresh may clear rows only if every output is kept current by the
        # backend's own forward; otherwise the cache's arrays still need one.
        self._fresh_clears = set(self._outputs) <= set(backend)
        self._dirty = np.ones(n, dtype=bool)
        self._maybe_dirty = True
        self._frozen = 0
        self._stats = CacheStats()

        self._body_col = {}
        for k, (bid, bname) in enumerate(zip(plan.body_ids, plan.body_names, strict=True)):
            self._body_col[bid] = k
            self._body_col[bname] = k
        self._bodies_cache: dict[Any, Any] = {}
        self._sensor_cols: dict[Any, slice] = {}
        for sid, sname in zip(plan.sensor_ids, plan.sensor_names, strict=True):
            adr, dim = int(model.sensor_adr[sid]), int(model.sensor_dim[sid])
            covered = all(
                any(a <= c < b for a, b in plan.column_ranges) for c in range(adr, adr + dim)
            )
            if covered:
                self._sensor_cols[sid] = self._sensor_cols[sname] = slice(adr, adr + dim)

    # ------------------------------------------------------------------ info
    @property
    def refresher(self) -> Refresher:
        """The refresher this cache calls."""
        return self._refresher

    @property
    def num_envs(self) -> int:
        """N, the number of rows."""
        return self._n

    @property
    def storage(self) -> RefreshOutputs:
        """The output arrays, as they are (no refresh)."""
        return self._out

    @property
    def dirty(self) -> np.ndarray:
        """Read-only view of the per-row dirty mask, shape ``(N,)``."""
        v = self._dirty.view()
        v.flags.writeable = False
        return v

    @property
    def num_dirty(self) -> int:
        """Number of dirty rows."""
        return int(np.count_nonzero(self._dirty))

    @property
    def stats(self) -> CacheStats:
        """Live counters: native calls, rows refreshed, reads, cached reads, seconds."""
        return self._stats

    def reset_stats(self) -> None:
        """Zero :attr:`stats`."""
        self._stats.reset()

    @property
    def is_frozen(self) -> bool:
        """True inside :meth:`frozen`."""
        return self._frozen > 0

    # ----------------------------------------------------------------- marks
    def mark_stepped(self, rows: RowsLike = None) -> None:
        """Physics advanced `rows` (default: all): their derived values are stale."""
        self._mark(rows, True, "rows")

    def mark_dirty(self, rows: RowsLike) -> None:
        """The backend wrote the state of `rows` without a forward (e.g. a reset
        that only writes qpos/qvel); `rows` is required (pass None for all)."""
        self._mark(rows, True, "rows")

    def mark_fresh(self, rows: RowsLike = None) -> None:
        """The backend brought `rows` (default: all) current itself, by its own
        forward or reset+forward.

        When every output of this cache is one the backend writes in that
        forward (``backend_outputs``, e.g. only a backend's bound
        ``sensordata``), the rows become fresh and cost nothing. Otherwise the
        cache's own arrays still describe the old state, so the rows become
        dirty and the next read that returns them refreshes them.
        """
        self._mark(rows, not self._fresh_clears, "rows")

    def _mark(self, rows: RowsLike, value: bool, name: str) -> None:
        if rows is None:
            self._dirty[:] = value
        else:
            self._dirty[normalize_rows(name, rows, self._n)] = value
        if value:
            self._maybe_dirty = True

    @contextmanager
    def frozen(self) -> Iterator[StateCache]:
        """Reads inside this block return the stored values and never refresh.

        For the window in which the backend's own per-substep callback already
        supplies current values. Marks made inside the block are kept when it
        ends (the next read outside refreshes them). Blocks nest.
        """
        self._frozen += 1
        try:
            yield self
        finally:
            self._frozen -= 1

    # --------------------------------------------------------------- refresh
    def refresh_dirty_rows(self, env_ids: RowsLike = None) -> int:
        """Refresh the dirty rows among `env_ids` (default: all) in one native
        call and return how many were refreshed (0 if none was dirty).

        An explicit call refreshes even inside :meth:`frozen`.

        Raises:
            RefreshError: MuJoCo failed in some rows; they stay dirty, the
                others were refreshed.
        """
        rows = None if env_ids is None else normalize_rows("env_ids", env_ids, self._n)
        return self._refresh_needed(rows)

    def _refresh_needed(self, rows: int | slice | np.ndarray | None) -> int:
        if not self._maybe_dirty:
            return 0
        ids = dirty_among(self._dirty, rows)
        if ids.size:
            self._refresh_ids(ids)
        if rows is None:
            self._maybe_dirty = False
        return int(ids.size)

    def _refresh_ids(self, ids: np.ndarray) -> None:
        """One native call over `ids` (sorted, unique, all dirty)."""
        self._before_refresh(ids)
        stats = self._stats
        t0 = _time.perf_counter()
        try:
            self._bound._refresh_ids(ids)  # ids are already sorted unique int64
        except RefreshError as exc:
            ok = np.setdiff1d(ids, np.asarray(exc.rows, dtype=np.int64), assume_unique=True)
            self._dirty[ok] = False
            stats.rows_refreshed += int(ok.size)
            self._after_refresh(ok)
            raise
        finally:
            stats.native_seconds += _time.perf_counter() - t0
            stats.native_calls += 1
        self._dirty[ids] = False
        stats.rows_refreshed += int(ids.size)
        self._after_refresh(ids)

    def _before_refresh(self, ids: np.ndarray) -> None:
        """Hook for backends whose state must be gathered first (no-op here)."""

    def _after_refresh(self, ids: np.ndarray) -> None:
        """Hook for backends that scatter results afterwards (no-op here)."""

    def _prepare(self, env_ids: RowsLike) -> int | slice | np.ndarray | None:
        """Validate `env_ids`, refresh what a read of them needs, count the read."""
        rows = None if env_ids is None else normalize_rows("env_ids", env_ids, self._n)
        stats = self._stats
        stats.reads += 1
        if self._frozen or not self._maybe_dirty or self._refresh_needed(rows) == 0:
            stats.cached_reads += 1
        return rows

    # ----------------------------------------------------------------- reads
    def _output(self, name: str, what: str) -> np.ndarray:
        arr = self._outputs.get(name)
        if arr is None:
            raise ValueError(f"{what}: the refresher selects no {self._why_missing(name)}")
        return arr

    def _why_missing(self, name: str) -> str:
        if name.startswith("body_") and name.endswith("_rel"):
            return "relative_to body (pass relative_to= to Refresher)"
        if name.startswith("body_"):
            return "bodies (pass bodies= to Refresher)"
        if name.startswith("site_"):
            return "sites (pass sites= to Refresher)"
        return "sensors (pass sensors= or sensor_ranges= to Refresher)"

    def _body_index(self, bodies: BodiesLike) -> Any:
        if bodies is None:
            return None
        key: Any = None
        if isinstance(bodies, str):
            key = bodies
        elif is_int(bodies):
            key = int(bodies)  # type: ignore[arg-type]
        elif isinstance(bodies, (bool, np.bool_, float)):
            raise TypeError(
                "bodies: expected a body name, a model body id, or a sequence of them, "
                f"got {type(bodies).__name__} {bodies!r}"
            )
        else:
            try:
                items = tuple(bodies)  # type: ignore[arg-type]
            except TypeError:
                raise TypeError(
                    "bodies: expected a body name, a model body id, or a sequence of them, "
                    f"got {type(bodies).__name__}"
                ) from None
            for b in items:
                if not isinstance(b, str) and not is_int(b):
                    raise TypeError(
                        f"bodies: expected body names (str) or model body ids (int), "
                        f"got {type(b).__name__} {b!r}"
                    )
            key = tuple(b if isinstance(b, str) else int(b) for b in items)
        hit = self._bodies_cache.get(key)
        if hit is not None:
            return hit

        def col(b: str | int) -> int:
            k = self._body_col.get(b)
            if k is None:
                raise ValueError(
                    f"bodies: {b!r} is not one of the refresher's bodies "
                    f"{self._refresher.plan.body_names}"
                )
            return k

        idx: Any = (
            col(key) if not isinstance(key, tuple) else np.array([col(b) for b in key], np.int64)
        )
        if len(self._bodies_cache) < 256:
            self._bodies_cache[key] = idx
        return idx

    @staticmethod
    def _take(arr: np.ndarray, rows: Any, cols: Any) -> np.ndarray:
        if rows is None:
            a = arr
        elif isinstance(rows, np.ndarray):
            a = np.take(arr, rows, axis=0)  # faster than fancy indexing
        else:
            a = arr[rows]
        if cols is None:
            return a
        if isinstance(cols, np.ndarray):
            return np.take(a, cols, axis=a.ndim - 2)
        return a[..., cols, :]

    def _read_items(
        self, name: str, what: str, bodies: BodiesLike, env_ids: RowsLike
    ) -> np.ndarray:
        arr = self._output(name, what)
        cols = self._body_index(bodies)
        rows = self._prepare(env_ids)
        return self._take(arr, rows, cols)

    def body_pos_w(self, bodies: BodiesLike = None, env_ids: RowsLike = None) -> np.ndarray:
        """World position of the bodies' frames, ``(N, B, 3)`` (rows/bodies selectable)."""
        return self._read_items("body_pos", "body_pos_w", bodies, env_ids)

    def body_quat_w(self, bodies: BodiesLike = None, env_ids: RowsLike = None) -> np.ndarray:
        """World orientation (w, x, y, z) of the bodies' frames, ``(N, B, 4)``."""
        return self._read_items("body_quat", "body_quat_w", bodies, env_ids)

    def body_linvel_w(self, bodies: BodiesLike = None, env_ids: RowsLike = None) -> np.ndarray:
        """World linear velocity of the bodies' frame origins, ``(N, B, 3)``."""
        return self._read_items("body_linvel", "body_linvel_w", bodies, env_ids)

    def body_angvel_w(self, bodies: BodiesLike = None, env_ids: RowsLike = None) -> np.ndarray:
        """World angular velocity of the bodies, ``(N, B, 3)``."""
        return self._read_items("body_angvel", "body_angvel_w", bodies, env_ids)

    def body_pos_b(self, bodies: BodiesLike = None, env_ids: RowsLike = None) -> np.ndarray:
        """Position of the bodies in the ``relative_to`` body's frame, ``(N, B, 3)``."""
        return self._read_items("body_pos_rel", "body_pos_b", bodies, env_ids)

    def body_quat_b(self, bodies: BodiesLike = None, env_ids: RowsLike = None) -> np.ndarray:
        """Orientation of the bodies in the ``relative_to`` body's frame, ``(N, B, 4)``."""
        return self._read_items("body_quat_rel", "body_quat_b", bodies, env_ids)

    def site_pos_w(self, sites: None = None, env_ids: RowsLike = None) -> np.ndarray:
        """World position of the refresher's sites, ``(N, S, 3)``."""
        self._check_no_subset(sites)
        arr = self._output("site_pos", "site_pos_w")
        return self._take(arr, self._prepare(env_ids), None)

    def site_mat_w(self, sites: None = None, env_ids: RowsLike = None) -> np.ndarray:
        """World orientation matrix (row-major) of the refresher's sites, ``(N, S, 9)``."""
        self._check_no_subset(sites)
        arr = self._output("site_mat", "site_mat_w")
        return self._take(arr, self._prepare(env_ids), None)

    @staticmethod
    def _check_no_subset(sites: object) -> None:
        if sites is not None:
            raise ValueError(
                f"sites: selecting a subset is not supported; expected None, got {sites!r}"
            )

    def sensor(self, name: str | int, env_ids: RowsLike = None) -> np.ndarray:
        """Columns of one sensor, ``(N, dim)``, by sensor name or id.

        Position/velocity-stage sensors the refresher selects are refreshed as
        needed. When ``sensordata`` is the backend's own array, an
        acceleration-stage sensor (touch, force, accelerometer, ...) can be
        read too: it is never refreshed and holds the value of the backend's
        last physics solve.

        Raises:
            ValueError: the sensor is unknown, or neither refreshed by this
                cache nor an acceleration-stage sensor of a backend array.
        """
        if not isinstance(name, str) and not is_int(name):
            raise TypeError(
                "name: expected a sensor name (str) or id (int), "
                f"got {type(name).__name__} {name!r}"
            )
        cols = self._sensor_cols.get(name if isinstance(name, str) else int(name))
        if cols is None:
            cols = self._backend_sensor(name)
            arr = self._outputs["sensordata"]
            rows = None if env_ids is None else normalize_rows("env_ids", env_ids, self._n)
            self._stats.reads += 1
            self._stats.cached_reads += 1
        else:
            arr = self._outputs["sensordata"]
            rows = self._prepare(env_ids)
        return arr[:, cols] if rows is None else arr[rows, cols]

    def _backend_sensor(self, name: str | int) -> slice:
        model = self._refresher.model
        if isinstance(name, str):
            sid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SENSOR, name)
            if sid < 0:
                raise ValueError(f"name: unknown sensor {name!r}")
        elif is_int(name):
            sid = int(name)
            if not 0 <= sid < model.nsensor:
                raise ValueError(f"name: sensor id {sid} out of range [0, {model.nsensor})")
        else:
            raise TypeError(
                f"name: expected a sensor name (str) or id (int), got {type(name).__name__}"
            )
        label = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_SENSOR, sid) or f"#{sid}"
        acc = int(model.sensor_needstage[sid]) == mujoco.mjtStage.mjSTAGE_ACC
        if acc and "sensordata" in self._supplied:
            adr = int(model.sensor_adr[sid])
            return slice(adr, adr + int(model.sensor_dim[sid]))
        if acc:
            raise ValueError(
                f"name: sensor {label!r} is an acceleration-stage sensor; this cache's "
                "sensordata is its own array, which holds no physics results (pass the "
                "backend's sensordata to read it)"
            )
        raise ValueError(
            f"name: sensor {label!r} is not refreshed by this cache's refresher "
            f"(it selects {self._refresher.plan.sensor_names}); add it to Refresher(sensors=...)"
        )

    def outputs(self, env_ids: RowsLike = None) -> RefreshOutputs:
        """All outputs of `env_ids` (default: all rows, as views of the storage),
        refreshed as needed in one native call."""
        rows = self._prepare(env_ids)
        if rows is None:
            return self._out
        return RefreshOutputs(**{k: v[rows] for k, v in self._outputs.items()})

    def __repr__(self) -> str:
        frozen = ", frozen" if self._frozen else ""
        return f"<mjrefresh.StateCache N={self._n}, {self.num_dirty} dirty{frozen}>"
