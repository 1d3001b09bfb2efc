"""The dirty/cache lifecycle adapter: decides *when* rows are refreshed.

A :class:`StateCache` sits between a simulation backend and one
:class:`~mjrefresh.Refresher`. The backend tells it what happened to each row
(``mark_stepped`` after physics, ``mark_fresh`` after its own forward/reset,
``mark_dirty`` after a state write); readers ask it for values
(``body_pos``, ``sensor``, ...). A read refreshes, in one native call, only
the dirty rows among the rows it returns; a repeated read refreshes nothing.

This module holds the read accessors; binding, marks and refreshes are in
:mod:`mjrefresh.cache_lifecycle`, row parsing in :mod:`mjrefresh._rows`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Union

import mujoco
import numpy as np

from ._names import name_to_id
from ._rows import RowsLike, is_int, normalize_rows
from ._suggest import did_you_mean, model_names, unknown_name_hint
from .cache_lifecycle import CacheLifecycle, CacheStats
from .outputs import OUTPUTS, OutputSpec, RefreshOutputs
from .sensor_rules import refusal_of

__all__ = ["BodiesLike", "CacheStats", "RowsLike", "StateCache", "normalize_rows"]

#: What ``bodies`` accepts: None (all of the refresher's bodies), one body name
#: or model body id (drops the body axis), or a sequence of them.
BodiesLike = Union[str, int, Sequence[Union[str, int]], None]  # noqa: UP007


class StateCache(CacheLifecycle):
    """Per-row dirty tracking and on-demand refresh over one :class:`Refresher`.

    The cache is bound once to the backend's live state arrays and to output
    storage; it never copies the state. Each of the N rows is either *fresh*
    (the outputs describe the row's current state) or *dirty*. The backend
    marks rows; reads refresh what they need:

    * :meth:`mark_stepped` after physics (derived values are one substep
      stale), :meth:`mark_dirty` after writing state without a forward,
      :meth:`mark_fresh` after the backend's own forward/reset.
    * one reader per body or site output of :class:`RefreshOutputs`, named
      like it (``body_pos``, ..., in the world frame or, for the ``_rel``
      ones, in the refresher's
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

    # ----------------------------------------------------------------- reads
    def _output(self, name: str) -> np.ndarray:
        arr = self._outputs.get(name)
        if arr is None:
            raise ValueError(f"{name}: the refresher selects no {self._why_missing(name)}")
        return arr

    def _why_missing(self, name: str) -> str:
        by = next(o.indexed_by for o in OUTPUTS if o.name == name)
        return _MISSING[by]

    def _body_index(self, bodies: BodiesLike) -> Any:
        if bodies is None:
            return None
        key: Any = None
        if isinstance(bodies, str):
            key = bodies
        elif is_int(bodies):
            key = int(bodies)  # type: ignore[arg-type]
        elif isinstance(bodies, (bool, np.bool_, float, bytes, bytearray)):  # bytes: ints
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
                plan = self._refresher.plan
                hint = did_you_mean(b, plan.body_names) if isinstance(b, str) else ""
                if b in plan.body_names:  # a label "#<id>" that another body is named
                    bid = plan.body_ids[plan.body_names.index(b)]
                    hint = f"; the refresher's {b!r} is unnamed body {bid}: read it by id"
                raise ValueError(
                    f"bodies: {b!r} is not one of the refresher's bodies "
                    f"{self._refresher.plan.body_names}{hint}"
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

    def _read_items(self, name: str, bodies: BodiesLike, env_ids: RowsLike) -> np.ndarray:
        arr = self._output(name)
        cols = self._body_index(bodies)
        rows = self._prepare(env_ids)
        return self._take(arr, rows, cols)

    def _read_sites(self, name: str, sites: None, env_ids: RowsLike) -> np.ndarray:
        self._check_no_subset(sites)
        arr = self._output(name)
        return self._take(arr, self._prepare(env_ids), None)

    if TYPE_CHECKING:
        # One reader per item output of the native table, made below
        # (body_pos, ...): (bodies or sites=None, env_ids=None).
        def __getattr__(self, name: str) -> Callable[..., np.ndarray]: ...

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
            sid = name_to_id(model, mujoco.mjtObj.mjOBJ_SENSOR, name)
            if sid < 0:
                hint = unknown_name_hint(
                    name, model_names(model, mujoco.mjtObj.mjOBJ_SENSOR, model.nsensor), "sensor"
                )
                raise ValueError(f"name: unknown sensor {name!r}{hint}")
        elif is_int(name):
            sid = int(name)
            if not 0 <= sid < model.nsensor:
                raise ValueError(f"name: sensor id {sid} out of range [0, {model.nsensor})")
        else:
            raise TypeError(
                f"name: expected a sensor name (str) or id (int), got {type(name).__name__}"
            )
        label = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_SENSOR, sid) or f"#{sid}"
        # A sensor no refresh computes (acceleration-stage, user, plugin,
        # delayed): readable where sensordata is the backend's own array.
        refused = refusal_of(model, sid)
        if refused is not None and "sensordata" in self._supplied:
            adr = int(model.sensor_adr[sid])
            return slice(adr, adr + int(model.sensor_dim[sid]))
        if refused is not None:
            where = (
                "this cache's sensordata is its own array, which holds no physics results "
                "(pass the backend's sensordata to read it)"
                if "sensordata" in self._outputs
                else "this cache has no sensordata: its refresher selects no sensors (read "
                "it from the backend's own sensordata)"
            )
            raise ValueError(f"name: {refused}; {where}")
        adr, dim = int(model.sensor_adr[sid]), int(model.sensor_dim[sid])
        covered = sum(
            max(0, min(b, adr + dim) - max(a, adr)) for a, b in self._refresher.plan.column_ranges
        )
        if covered:
            raise ValueError(
                f"name: sensor {label!r} is only partly refreshed ({covered} of its {dim} "
                f"columns {adr}-{adr + dim - 1} are in the refresher's column ranges "
                f"{list(self._refresher.plan.column_ranges)}); select it whole with "
                "Refresher(sensors=...) or a sensor_ranges entry covering it"
            )
        raise ValueError(
            f"name: sensor {label!r} is not refreshed by this cache's refresher "
            f"(it selects {self._refresher.plan.sensor_names}); add it to Refresher(sensors=...)"
        )

    def outputs(self, env_ids: RowsLike = None) -> RefreshOutputs:
        """All outputs of `env_ids` (default: all rows, as views of the storage),
        refreshed as needed in one native call."""
        rows = self._prepare(env_ids)
        if rows is None:  # a new holder of the same arrays: assigning to it leaves ours
            return RefreshOutputs(**self._outputs)
        return RefreshOutputs(**{k: v[rows] for k, v in self._outputs.items()})


#: Why a reader returns nothing, by what its output is indexed by.
_MISSING = {
    "bodies": "bodies (pass bodies= to Refresher)",
    "relative": "relative_to body (pass relative_to= to Refresher)",
    "sites": "sites (pass sites= to Refresher)",
    "sensordata": "sensors (pass sensors= or sensor_ranges= to Refresher)",
}
_WHAT = {
    "bodies": ("bodies", "B", "the world frame"),
    "relative": ("bodies", "B", "the refresher's relative_to body's frame"),
    "sites": ("sites", "S", "the world frame"),
}


def _reader(spec: OutputSpec) -> Callable[..., np.ndarray]:
    """The StateCache reader of one item output of the native table."""
    items, letter, frame = _WHAT[spec.indexed_by]
    name = spec.name
    if spec.indexed_by == "sites":

        def read(self: StateCache, sites: None = None, env_ids: RowsLike = None) -> np.ndarray:
            return self._read_sites(name, sites, env_ids)

    else:

        def read(  # type: ignore[misc]
            self: StateCache, bodies: BodiesLike = None, env_ids: RowsLike = None
        ) -> np.ndarray:
            return self._read_items(name, bodies, env_ids)

    read.__name__ = read.__qualname__ = name
    read.__doc__ = (
        f"``{name}`` of the refresher's {items}, ``(N, {letter}, {spec.width})``, in {frame} "
        f"(as :class:`~mjrefresh.RefreshOutputs` defines it), refreshed as needed. "
        f"`{'sites' if letter == 'S' else 'bodies'}`: "
        + (
            "None only (all of the refresher's sites)."
            if letter == "S"
            else "None (all), one body name or model id (drops the body axis), or a sequence."
        )
        + " `env_ids`: None (all rows), an int, a slice, row ids or a bool mask."
    )
    return read


for _spec in OUTPUTS:
    if _spec.indexed_by != "sensordata":
        setattr(StateCache, _spec.name, _reader(_spec))
