"""Update-state variants of the collector benchmark: how the tracked values are
brought current after a vector step and after a partial reset.

Every variant exposes the same lifecycle, which the collector drives:

* :meth:`Variant.mark_stepped` after the physics of a vector step;
* :meth:`Variant.mark_reset` after the state of some rows was written by a reset;
* :meth:`Variant.tracked` to read the tracking sensor block of all rows or of
  some rows; the correct variants first bring the dirty rows among them current;
* :meth:`Variant.repeat_update` to time the update's refresh again at once on the
  same, now current, rows: the warm reference of the in-situ refresh (same
  values written again; the collector keeps it out of the step's phases).

Variants:

* ``stale`` -- reads the batch's own ``sensordata``, one substep behind the
  state after a step (the old semantics; fast but wrong, for reference only).
  Reset rows are brought current by a native ``mj_forward`` of those rows.
* ``traffic-floor`` -- the stale variant's values, plus only the memory
  traffic of a refresh of every row after a step (each row's ``qpos``/``qvel``
  read, its tracked columns read and written in place; numpy on the same
  number of threads): the floor under an in-situ refresh, for reference only.
* ``loop`` -- per-env Python refresh on a scratch ``MjData``: copy
  ``qpos``/``qvel``, ``mj_kinematics``, ``mj_comPos``, ``mj_comVel``,
  ``mj_sensorPos``, ``mj_sensorVel``, copy the tracked columns.
* ``native-ranges`` -- the backend's own native refresh of the dirty rows
  (mjbatch-uni ``refresh_sensor_ranges``; ``mujoco.batch`` ``forward(ids,
  stage=mjSTAGE_VEL)``), read from the batch's ``sensordata``.
* ``mjrefresh-exact`` / ``mjrefresh-fast`` -- ``mjrefresh.Refresher`` through
  the lifecycle adapter :func:`lifecycle_cache` (one native call over the
  dirty rows, reading the batch's state views in place).
"""

from __future__ import annotations

import time

import mujoco
import numpy as np

from bench.collector.backends import Backend
from bench.collector.tasks import Task
from bench.common.traffic import refresh_traffic
from mjrefresh.bench.availability import mjrefresh_unavailable
from mjrefresh.bench.stage_loop import python_stage_loop


class VariantUnavailable(Exception):
    """The variant cannot run here (library missing, engine rejected, ...)."""


def lifecycle_cache(refresher, num_envs: int, qpos, qvel, sensordata: np.ndarray):
    """The lifecycle adapter the mjrefresh variants refresh through: a
    ``mjrefresh.StateCache`` bound to the backend's state views, writing the
    tracked columns into ``sensordata``."""
    import mjrefresh

    return mjrefresh.StateCache(refresher, num_envs, qpos=qpos, qvel=qvel, sensordata=sensordata)


def adapter_name() -> str:
    """Name of the lifecycle adapter recorded in the JSON."""
    return "mjrefresh.StateCache"


class Variant:
    """One way of bringing the tracked block current, bound to a backend and task.

    Attributes:
      name, description: identifiers for tables and JSON.
      correct: False for ``stale`` (reads values one substep behind).
      refresh_s: seconds spent in refresh calls since :meth:`reset_counters`.
      refreshed_rows: rows refreshed since :meth:`reset_counters`.
    """

    name = ""
    description = ""
    correct = True

    def __init__(self, backend: Backend, task: Task, threads: int) -> None:
        self.backend = backend
        self.task = task
        self.threads = threads
        self.n = backend.n
        self.a, self.b = task.columns
        self.dirty = np.ones(self.n, dtype=bool)
        self._update_rows: np.ndarray | None = None  # rows of the last update's refresh
        self.reset_counters()

    @classmethod
    def unavailable(cls, backend_name: str) -> str | None:
        return None

    @property
    def threads_used(self) -> int:
        """Threads of the refresh (the backend's for the native calls)."""
        return self.backend.threads_used

    def reset_counters(self) -> None:
        self.refresh_s = 0.0
        self.refreshed_rows = 0

    # lifecycle ---------------------------------------------------------------
    def mark_all_current(self) -> None:
        """After the collector brought every row current itself (start of a run)."""
        self.dirty[:] = False

    def mark_stepped(self) -> None:
        self.dirty[:] = True

    def mark_reset(self, ids: np.ndarray) -> None:
        self.dirty[ids] = True

    def tracked(self, ids: np.ndarray | None = None) -> np.ndarray:
        """The tracking block of every row (a view) or of ``ids`` (a copy), current."""
        rows = np.flatnonzero(self.dirty) if ids is None else ids[self.dirty[ids]]
        if rows.size:
            t0 = time.perf_counter()
            self._refresh(None if rows.size == self.n else rows)
            self.refresh_s += time.perf_counter() - t0
            self.refreshed_rows += int(rows.size)
            self.dirty[rows] = False
        if ids is None:
            self._update_rows = rows
        block = self._block()
        return block if ids is None else block[ids]

    def repeat_update(self) -> float | None:
        """Seconds of the last update's refresh repeated at once on the same rows,
        whose state has not changed since (warm caches); None if it refreshed none."""
        rows = self._update_rows
        if rows is None or rows.size == 0:
            return None
        t0 = time.perf_counter()
        self._refresh(None if rows.size == self.n else rows)
        return time.perf_counter() - t0

    def _refresh(self, rows: np.ndarray | None) -> None:
        raise NotImplementedError

    def _block(self) -> np.ndarray:
        raise NotImplementedError

    def close(self) -> None:
        pass


class Stale(Variant):
    """Reads the batch's own sensordata, one substep behind (reference only)."""

    name = "stale"
    description = (
        "reads the batch's own sensordata (one substep behind after a step; reset rows "
        "brought current by the batch's mj_forward) -- wrong, reference only"
    )
    correct = False

    def mark_stepped(self) -> None:
        pass  # reads whatever the step left

    def tracked(self, ids: np.ndarray | None = None) -> np.ndarray:
        block = self._block()
        return block if ids is None else block[ids]

    def repeat_update(self) -> float | None:
        return None  # refreshes nothing after a step

    def mark_reset(self, ids: np.ndarray) -> None:
        t0 = time.perf_counter()
        self.backend.forward(ids)
        self.refresh_s += time.perf_counter() - t0
        self.refreshed_rows += int(ids.size)

    def _block(self) -> np.ndarray:
        return self.backend.sensordata[:, self.a : self.b]


class TrafficFloor(Stale):
    """Stale's values plus only the memory traffic of a refresh (reference only)."""

    name = "traffic-floor"
    description = (
        "stale's values, plus only the memory traffic of a refresh of every row after a "
        "step (qpos/qvel read, tracked columns read and written in place; numpy on the "
        "same threads): the floor under an in-situ refresh -- reference only"
    )

    def __init__(self, backend: Backend, task: Task, threads: int) -> None:
        super().__init__(backend, task, threads)
        block = backend.writable_sensordata
        if block is None:
            raise VariantUnavailable("the backend's sensordata is read-only")
        self._traffic = refresh_traffic(
            backend.qpos, backend.qvel, block[:, self.a : self.b], threads
        )
        self._stepped = False

    @property
    def threads_used(self) -> int:
        return self.threads

    def mark_stepped(self) -> None:
        self._stepped = True

    def tracked(self, ids: np.ndarray | None = None) -> np.ndarray:
        if ids is None and self._stepped:
            t0 = time.perf_counter()
            self._traffic()
            self.refresh_s += time.perf_counter() - t0
            self.refreshed_rows += self.n
            self._stepped = False
        return super().tracked(ids)

    def repeat_update(self) -> float | None:
        t0 = time.perf_counter()
        self._traffic()
        return time.perf_counter() - t0


class Loop(Variant):
    """Per-env Python refresh on a scratch MjData."""

    name = "loop"
    description = (
        "per-env Python loop on a scratch MjData: copy qpos/qvel, mj_kinematics, mj_comPos, "
        "mj_comVel, mj_sensorPos, mj_sensorVel, copy the tracked columns"
    )

    @property
    def threads_used(self) -> int:
        return 1

    def __init__(self, backend: Backend, task: Task, threads: int) -> None:
        super().__init__(backend, task, threads)
        self.data = mujoco.MjData(task.model)
        self.out = np.zeros((self.n, self.b - self.a))
        copies = [(slice(None), slice(self.a, self.b))]
        self._loop = python_stage_loop(
            task.model, self.data, backend.qpos, backend.qvel, self.out, copies
        )

    def _refresh(self, rows: np.ndarray | None) -> None:
        self._loop(range(self.n) if rows is None else rows.tolist())

    def _block(self) -> np.ndarray:
        return self.out


class NativeRanges(Variant):
    """The backend's own native refresh of the dirty rows."""

    name = "native-ranges"
    description = (
        "the backend's own native refresh of the dirty rows (mjbatch-uni "
        "refresh_sensor_ranges(ids, [start, stop]); mujoco.batch forward(ids, stage=mjSTAGE_VEL))"
    )

    def _refresh(self, rows: np.ndarray | None) -> None:
        self.backend.native_refresh(rows, (self.a, self.b))

    def _block(self) -> np.ndarray:
        return self.backend.sensordata[:, self.a : self.b]


class _Mjrefresh(Variant):
    engine = ""

    @classmethod
    def unavailable(cls, backend_name: str) -> str | None:
        return mjrefresh_unavailable(cls.engine)

    def __init__(self, backend: Backend, task: Task, threads: int) -> None:
        super().__init__(backend, task, threads)
        import mjrefresh

        self.refresher = mjrefresh.Refresher(
            task.model,
            sensor_ranges=[(self.a, self.b)],
            num_threads=threads,
            engine=self.engine,
        )
        # results into the batch's own sensordata where it may be written (mjbatch-uni),
        # else into our own array (mujoco.batch outputs are read-only)
        target = backend.writable_sensordata
        self.own = target is None
        if target is None:
            target = np.zeros((self.n, task.model.nsensordata))
        self.sensordata = target
        self.cache = lifecycle_cache(self.refresher, self.n, backend.qpos, backend.qvel, target)
        self._update_all = False  # the last update refreshed every row

    @property
    def threads_used(self) -> int:
        return self.refresher.num_threads

    def mark_stepped(self) -> None:
        super().mark_stepped()
        self.cache.mark_stepped()

    def mark_reset(self, ids: np.ndarray) -> None:
        super().mark_reset(ids)
        self.cache.mark_dirty(ids)

    def mark_all_current(self) -> None:
        # the start of a run: the backend's forward made its sensordata current, but
        # our own array (mujoco.batch) is not; refresh everything once (untimed)
        super().mark_all_current()
        self.cache.mark_stepped()
        self.cache.refresh_dirty_rows()

    def tracked(self, ids: np.ndarray | None = None) -> np.ndarray:
        # the adapter decides which rows are dirty; one native call over them
        t0 = time.perf_counter()
        n = self.cache.refresh_dirty_rows(ids)
        self.refresh_s += time.perf_counter() - t0
        self.refreshed_rows += int(n)
        if ids is None:
            self._update_all = n == self.n
        block = self._block()
        return block if ids is None else block[ids]

    def repeat_update(self) -> float | None:
        # after a step the update refreshes every row: mark them all again, same call
        if not self._update_all:
            return None
        self.cache.mark_stepped()
        t0 = time.perf_counter()
        self.cache.refresh_dirty_rows()
        return time.perf_counter() - t0

    def _block(self) -> np.ndarray:
        return self.sensordata[:, self.a : self.b]

    def close(self) -> None:
        self.refresher.close()


class MjrefreshExact(_Mjrefresh):
    """``mjrefresh.Refresher(engine='exact')`` through the lifecycle adapter."""

    name = "mjrefresh-exact"
    description = "mjrefresh.Refresher(engine='exact') through the lifecycle adapter"
    engine = "exact"


class MjrefreshFast(_Mjrefresh):
    """``mjrefresh.Refresher(engine='fast')`` through the lifecycle adapter."""

    name = "mjrefresh-fast"
    description = "mjrefresh.Refresher(engine='fast') through the lifecycle adapter"
    engine = "fast"


ALL: list[type[Variant]] = [Stale, TrafficFloor, Loop, NativeRanges, MjrefreshExact, MjrefreshFast]
BY_NAME: dict[str, type[Variant]] = {v.name: v for v in ALL}
CORRECT = [v.name for v in ALL if v.correct]


def describe() -> dict[str, str]:
    """Variant name -> description."""
    return {v.name: v.description for v in ALL}


def availability(backend_name: str) -> dict[str, str | None]:
    """Variant name -> None if it can run on ``backend_name``, else why not."""
    return {v.name: v.unavailable(backend_name) for v in ALL}
