"""The lifecycle half of a :class:`~mjrefresh.StateCache`: binding, marks, refreshes.

:class:`CacheLifecycle` binds the backend's state and the output storage to
the refresher once (:meth:`Refresher.bind <mjrefresh.Refresher.bind>`),
keeps the per-row dirty mask the backend's marks update, and refreshes the
dirty rows among the rows a read returns in one native call. The read
accessors built on it are in :mod:`mjrefresh.cache`.
"""

from __future__ import annotations

import time as _time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, fields
from typing import Any, TypeVar

import mujoco
import numpy as np

from ._names import name_to_id
from ._not_copyable import NotCopyable
from ._rows import RowsLike, dirty_among, is_int, normalize_rows
from ._suggest import did_you_mean
from .bound_refresh import BoundRefresh, RefreshError
from .outputs import INPUT_NAMES, OUTPUT_NAMES, RefreshOutputs
from .plan import as_items
from .refresher import Refresher

_Cache = TypeVar("_Cache", bound="CacheLifecycle")


def _finds(model: mujoco.MjModel, objtype: mujoco.mjtObj, oid: int, label: str) -> bool:
    """Whether a read by the name `label` means object `oid`: its model name,
    or the plan's ``#<id>`` label of an unnamed object unless another object
    is really named so (a body named "#2" is not unnamed body 2)."""
    if mujoco.mj_id2name(model, objtype, oid):
        return True
    return name_to_id(model, objtype, label) < 0


def _names(argument: str, names: Iterable[str] | str | None) -> tuple[str, ...]:
    """Output names as a tuple: None is none, one str is one name."""
    out = as_items(argument, names, (str,), "output names (str)")
    for name in out:
        if not isinstance(name, str):
            raise TypeError(f"{argument}: expected output names (str), got {type(name).__name__}")
    return out


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


class CacheLifecycle(NotCopyable):
    """Per-row dirty tracking and on-demand refresh over one :class:`Refresher`.

    The base of :class:`~mjrefresh.StateCache`, which documents the
    arguments and adds the read accessors.
    """

    _instead = "bind another cache over the same arrays (bind_arrays, bind_mjbatch, ...)"

    def __init__(
        self,
        refresher: Refresher,
        num_envs: int,
        *,
        qpos: Any,
        qvel: Any,
        dtype: type | np.dtype = np.float64,
        backend_outputs: Iterable[str] | None = (),
        model_fields: Mapping[str, Any] | None = None,
        **arrays: Any,
    ) -> None:
        if not isinstance(refresher, Refresher):
            raise TypeError(
                f"refresher: expected mjrefresh.Refresher, got {type(refresher).__name__}"
            )
        if not is_int(num_envs):
            raise TypeError(f"num_envs: expected an int >= 1, got {type(num_envs).__name__}")
        if int(num_envs) < 1:
            raise ValueError(f"num_envs: expected an int >= 1, got {num_envs!r}")
        n = int(num_envs)
        self._refresher = refresher
        self._n = n
        # The other inputs (mocap_pos, ..., as the native table names them)
        # and the outputs, by name; an output passed as None is allocated by
        # the cache, like an omitted one.
        for name in arrays:
            if name not in INPUT_NAMES and name not in OUTPUT_NAMES:
                others = [k for k in INPUT_NAMES if k not in ("qpos", "qvel")]
                raise TypeError(
                    f"{name}: unexpected keyword argument; the inputs besides qpos and qvel are "
                    f"{', '.join(others)}, the outputs {', '.join(OUTPUT_NAMES)}"
                    + did_you_mean(name, (*INPUT_NAMES, *OUTPUT_NAMES))
                )
        inputs = {"qpos": qpos, "qvel": qvel}
        inputs.update({k: v for k, v in arrays.items() if k in INPUT_NAMES})
        outputs = {k: v for k, v in arrays.items() if k not in inputs and v is not None}
        backend = _names("backend_outputs", backend_outputs)
        for name in backend:
            if name not in outputs:
                raise ValueError(
                    f"backend_outputs: {name!r} is not one of the supplied output arrays "
                    f"{tuple(sorted(outputs))}"
                )
        out = refresher.outputs(n, dtype, **outputs)
        # Full validation (dtypes, shapes, strides, writability, overlaps),
        # by the native core, once, on these very arrays; every refresh
        # reuses the binding.
        self._bound = self._bind(inputs, out, model_fields)
        self._inputs = self._bound.inputs
        self._outputs = out.arrays()
        self._supplied = frozenset(outputs)
        # mark_fresh may clear rows only if every output is kept current by the
        # backend's own forward; otherwise the cache's arrays still need one.
        self._fresh_clears = set(self._outputs) <= set(backend)
        self._dirty = np.ones(n, dtype=bool)
        self._maybe_dirty = True
        self._frozen = 0
        self._stats = CacheStats()
        self._index_columns()

    def _index_columns(self) -> None:
        """Where the read accessors find each body and sensor in the outputs:
        the output column of each selected body and the sensordata columns of
        each refreshed sensor, by model id and by name. Resolved ``bodies``
        arguments are memoised in ``_bodies_cache`` (at most 256 keys)."""
        plan, model = self._refresher.plan, self._refresher.model
        self._body_col: dict[str | int, int] = {}
        body, sensor = mujoco.mjtObj.mjOBJ_BODY, mujoco.mjtObj.mjOBJ_SENSOR
        for k, (bid, bname) in enumerate(zip(plan.body_ids, plan.body_names, strict=True)):
            self._body_col[bid] = k
            if _finds(model, body, bid, bname):
                self._body_col[bname] = k
        self._bodies_cache: dict[Any, Any] = {}
        self._sensor_cols: dict[str | int, slice] = {}
        for sid, sname in zip(plan.sensor_ids, plan.sensor_names, strict=True):
            adr, dim = int(model.sensor_adr[sid]), int(model.sensor_dim[sid])
            covered = all(
                any(a <= c < b for a, b in plan.column_ranges) for c in range(adr, adr + dim)
            )
            if covered:
                self._sensor_cols[sid] = slice(adr, adr + dim)
                if _finds(model, sensor, sid, sname):
                    self._sensor_cols[sname] = slice(adr, adr + dim)

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
        """The output arrays, as they are (no refresh): a new holder of the
        cache's arrays, so assigning to its fields leaves the cache's own."""
        return RefreshOutputs(**self._outputs)

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
    def frozen(self: _Cache) -> Iterator[_Cache]:
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
        if rows is None:
            # Cleared before the call, like the rows' flags (_refresh_ids):
            # a mark made while it runs (a signal handler, another callback)
            # sets it again and is kept.
            self._maybe_dirty = False
        if ids.size:
            try:
                self._refresh_ids(ids)
            except BaseException:
                self._maybe_dirty = True  # rows left dirty
                raise
        return int(ids.size)

    def _refresh_ids(self, ids: np.ndarray) -> None:
        """One native call over `ids` (sorted, unique, all dirty)."""
        self._before_refresh(ids)
        stats = self._stats
        # Clear the flags before the call, not after: Python runs pending
        # signal handlers when the call returns, and a handler that writes
        # a row and marks it would see its mark erased (stale reads).
        self._dirty[ids] = False
        t0 = _time.perf_counter()
        try:
            self._bound._refresh_ids(ids)  # ids are already sorted unique int64
        except RefreshError as exc:
            failed = np.asarray(exc.rows, dtype=np.int64)
            self._dirty[failed] = True
            ok = np.setdiff1d(ids, failed, assume_unique=True)
            stats.rows_refreshed += int(ok.size)
            self._after_refresh(ok)
            raise
        except BaseException:
            self._dirty[ids] = True  # not known to be refreshed
            raise
        finally:
            stats.native_seconds += _time.perf_counter() - t0
            stats.native_calls += 1
        stats.rows_refreshed += int(ids.size)
        self._after_refresh(ids)

    def _bind(
        self,
        inputs: dict[str, Any],
        out: RefreshOutputs,
        model_fields: Mapping[str, Any] | None,
    ) -> BoundRefresh:
        """The checked refresh over `inputs` (names to arrays or None) and
        `out`, for N = num_envs rows (a backend whose state is not in arrays,
        like a list of ``MjData``, binds its own)."""
        return self._refresher._bind(inputs, out, model_fields, num_envs=self._n)

    def _before_refresh(self, ids: np.ndarray) -> None:
        """Hook for backends whose state must be gathered first (no-op here)."""

    def _after_refresh(self, ids: np.ndarray) -> None:
        """Hook for backends that scatter results afterwards (no-op here)."""

    def _prepare(self, env_ids: RowsLike) -> int | slice | np.ndarray | None:
        """Validate `env_ids`, refresh what a read of them needs, count the read."""
        rows = None if env_ids is None else normalize_rows("env_ids", env_ids, self._n)
        if (
            isinstance(rows, np.ndarray)
            and self._maybe_dirty
            and (rows is env_ids or rows.base is not None)
        ):
            # The caller's ids may view an output the refresh below writes
            # (a cache's own storage): index with the ids as they were asked.
            rows = rows.copy()
        stats = self._stats
        stats.reads += 1
        if self._frozen or not self._maybe_dirty or self._refresh_needed(rows) == 0:
            stats.cached_reads += 1
        return rows

    def __repr__(self) -> str:
        frozen = ", frozen" if self._frozen else ""
        return f"<mjrefresh.StateCache N={self._n}, {self.num_dirty} dirty{frozen}>"
