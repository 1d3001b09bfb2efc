"""The ways of refreshing tracked sensor columns that the benchmark compares.

Every contender refreshes the selected sensordata column ranges for the
selected rows of a :class:`mjrefresh.bench.workloads.Problem` from the rows'
``qpos``/``qvel``. Each one is only built when the library it needs is
installed; :func:`availability` says why one is skipped.

* ``python_loop``   -- per-row Python loop over MuJoCo's five stage functions
                       on a scratch MjData (what backends used before).
* ``mjbatch_uni``   -- mjbatch-uni ``Batch.refresh_sensor_ranges``.
* ``mujoco_batch``  -- MuJoCo >= 4.0 ``mujoco.batch.Batch.forward(stage=mjSTAGE_VEL)``.
* ``mujoco_uni``    -- mujoco-uni-runtime ``BatchEnvPool.forward`` (a full
                       ``mj_forward`` per row) on the rows' state vectors.
* ``mjrefresh_exact`` / ``mjrefresh_fast`` -- ``mjrefresh.Refresher`` engines.
* ``stage_loop_cpp`` -- single-thread C++ loop over the same five stage
                       functions (``mjrefresh._core.stage_loop``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mujoco
import numpy as np

from mjrefresh.bench.availability import (
    mjbatch_unavailable,
    mjrefresh_unavailable,
    mujoco_batch_unavailable,
    mujoco_uni_unavailable,
)
from mjrefresh.bench.stage_loop import python_stage_loop
from mjrefresh.bench.workloads import Problem
from mjrefresh.outputs import OUTPUTS


def _axes(mat: np.ndarray) -> np.ndarray:
    """(N, S, 9) row-major rotation matrices as their x, y, z axes (columns),
    the layout of framexaxis/frameyaxis/framezaxis sensors."""
    n, s, _ = mat.shape
    return mat.reshape(n, s, 3, 3).transpose(0, 1, 3, 2).reshape(n, s, 9)


class Unsupported(Exception):
    """Raised by a contender's constructor for a problem it cannot express."""


class Contender:
    """One refresh implementation bound to one problem and thread count.

    Attributes:
      name: short identifier used in tables and JSON.
      description: one line on what is called.
      multithreaded: False for contenders that always run on one thread.
      owns_output: True when the output array is the caller's, so the bench can
        poison it to check that unselected rows and columns are not touched.
    """

    name = ""
    description = ""
    multithreaded = True
    owns_output = True
    internal = False  # shown only in the verbose table
    computes_bodies_as_sensors = True  # False: computes body/site outputs directly

    def __init__(self, problem: Problem, threads: int) -> None:
        self.problem = problem
        self.threads = threads
        sel = problem.selection
        disabled = problem.model.opt.disableflags & int(mujoco.mjtDisableBit.mjDSBL_SENSOR)
        if self.computes_bodies_as_sensors and disabled and sel and (sel.bodies or sel.sites):
            # The appended frame sensors stand for the bodies and sites; with
            # sensors disabled MuJoCo computes none of them, so such a
            # contender has no way to produce those outputs.
            raise Unsupported(
                'the model disables sensors (<flag sensor="disable"/>), so its sensordata '
                "holds no frame sensor for the selected bodies/sites"
            )

    @classmethod
    def unavailable(cls) -> str | None:
        """None when the contender can run here, else the reason it cannot."""
        return None

    @property
    def threads_used(self) -> int:
        """The thread count the implementation reports using."""
        return self.threads if self.multithreaded else 1

    def prepare(self, mask: np.ndarray) -> Callable[[], None]:
        """A zero-argument callable refreshing the rows where ``mask`` is True."""
        raise NotImplementedError

    def sensordata(self) -> np.ndarray:
        """The (N, nsensordata) array the results are read from."""
        raise NotImplementedError

    def poison(self) -> None:
        """Fill the caller-owned output with NaN (only if ``owns_output``)."""
        self.sensordata()[...] = np.nan


# ---------------------------------------------------------------------------
# (a) per-env Python loop
# ---------------------------------------------------------------------------


class PythonLoop(Contender):
    """Per-row Python loop over the five stage functions on a scratch MjData."""

    name = "python_loop"
    description = (
        "per-row Python loop: mj_kinematics, mj_comPos, mj_comVel, mj_sensorPos, "
        "mj_sensorVel on a scratch MjData"
    )
    multithreaded = False

    def __init__(self, problem: Problem, threads: int) -> None:
        super().__init__(problem, threads)
        self.data = mujoco.MjData(problem.model)
        self.out = np.zeros((problem.n, problem.model.nsensordata))

    def prepare(self, mask: np.ndarray) -> Callable[[], None]:
        rows = np.flatnonzero(mask).tolist()
        p = self.problem
        copies = [(slice(a, b), slice(a, b)) for a, b in p.ranges]
        loop = python_stage_loop(p.model, self.data, p.qpos, p.qvel, self.out, copies)
        return lambda: loop(rows)

    def sensordata(self) -> np.ndarray:
        return self.out


# ---------------------------------------------------------------------------
# (b) mjbatch-uni
# ---------------------------------------------------------------------------


class MjbatchUni(Contender):
    """mjbatch-uni's ``Batch.refresh_sensor_ranges``."""

    name = "mjbatch_uni"
    description = "mjbatch.Batch(model, N, num_threads=T).refresh_sensor_ranges(ids, [start, stop])"
    owns_output = False

    @classmethod
    def unavailable(cls) -> str | None:
        return mjbatch_unavailable()

    def __init__(self, problem: Problem, threads: int) -> None:
        super().__init__(problem, threads)
        import mjbatch

        self.batch = mjbatch.Batch(problem.model, problem.n, num_threads=threads)
        self.batch.bind("qpos")[:] = problem.qpos
        self.batch.bind("qvel")[:] = problem.qvel
        self._sensordata = self.batch.bind("sensordata")

    @property
    def threads_used(self) -> int:
        return int(self.batch.num_threads)

    def prepare(self, mask: np.ndarray) -> Callable[[], None]:
        ids = None if mask.all() else np.flatnonzero(mask).astype(np.int64)
        ranges = [c for pair in self.problem.ranges for c in pair]  # flattened (start, stop) pairs
        refresh = self.batch.refresh_sensor_ranges
        return lambda: refresh(ids, ranges)

    def sensordata(self) -> np.ndarray:
        return self._sensordata


# ---------------------------------------------------------------------------
# (c) MuJoCo >= 4.0 mujoco.batch
# ---------------------------------------------------------------------------


class MujocoBatch(Contender):
    """MuJoCo >= 4.0 ``mujoco.batch`` forward to the velocity stage."""

    name = "mujoco_batch"
    description = "mujoco.batch.Batch(model, N, nthread=T).forward(ids, stage=mjSTAGE_VEL)"
    owns_output = False

    @classmethod
    def unavailable(cls) -> str | None:
        return mujoco_batch_unavailable()

    def __init__(self, problem: Problem, threads: int) -> None:
        super().__init__(problem, threads)
        from mujoco import batch

        self.batch = batch.Batch(problem.model, problem.n, nthread=threads)
        self.batch.bind("qpos")[:] = problem.qpos
        self.batch.bind("qvel")[:] = problem.qvel
        self._sensordata = self.batch.bind("sensordata")

    @property
    def threads_used(self) -> int:
        return int(self.batch.nthread)

    def prepare(self, mask: np.ndarray) -> Callable[[], None]:
        ids = None if mask.all() else np.flatnonzero(mask).astype(np.int32)
        forward = self.batch.forward
        stage = mujoco.mjtStage.mjSTAGE_VEL
        return lambda: forward(ids, stage=stage)

    def sensordata(self) -> np.ndarray:
        return self._sensordata


class MujocoUni(Contender):
    """mujoco-uni-runtime's ``BatchEnvPool``: ``mj_forward`` per row on its
    full-physics state vector (what its ``post_step_forward_sensor`` runs)."""

    name = "mujoco_uni"
    description = (
        "mujoco_uni.BatchEnvPool(model, nbatch=N, nthread=T).forward(states) "
        "(reset: .reset(ids, states[ids]))"
    )
    owns_output = False

    @classmethod
    def unavailable(cls) -> str | None:
        return mujoco_uni_unavailable()

    def __init__(self, problem: Problem, threads: int) -> None:
        super().__init__(problem, threads)
        from mujoco_uni import BatchEnvPool

        m = problem.model
        self.pool = BatchEnvPool(m, nbatch=problem.n, nthread=threads)
        spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
        self.states = np.empty((problem.n, mujoco.mj_stateSize(m, spec)))
        d = mujoco.MjData(m)
        for row, q, v in zip(self.states, problem.qpos, problem.qvel, strict=True):
            d.qpos[:], d.qvel[:] = q, v
            mujoco.mj_getState(m, d, row, spec)
        self.out = np.zeros((problem.n, m.nsensordata))

    @property
    def threads_used(self) -> int:
        return int(self.pool.nthread)

    def prepare(self, mask: np.ndarray) -> Callable[[], None]:
        pool, states = self.pool, self.states
        if mask.all():

            def run_all() -> None:  # the runtime returns a new array per call
                self.out = pool.forward(states)

            return run_all
        ids = np.flatnonzero(mask)
        subset = states[ids]

        def run() -> None:
            _, sensordata = pool.reset(ids, subset)
            self.out[ids] = sensordata

        return run

    def sensordata(self) -> np.ndarray:
        return self.out


# ---------------------------------------------------------------------------
# (d) mjrefresh engines
# ---------------------------------------------------------------------------


class _MjrefreshEngine(Contender):
    engine = ""
    computes_bodies_as_sensors = False

    @classmethod
    def unavailable(cls) -> str | None:
        return mjrefresh_unavailable(cls.engine)

    def __init__(self, problem: Problem, threads: int) -> None:
        super().__init__(problem, threads)
        import mjrefresh

        sel = problem.selection
        if self.engine == "fast":
            _refuse_uncovered(problem)
        if sel is None:
            self.refresher = mjrefresh.Refresher(
                problem.model,
                sensor_ranges=list(problem.ranges),
                num_threads=threads,
                engine=self.engine,
            )
        else:  # the user's selection on the user's model, as an application plans it
            self.refresher = mjrefresh.Refresher(
                sel.base_model,
                bodies=sel.bodies,
                sites=sel.sites,
                sensor_ranges=sel.sensor_ranges or None,
                num_threads=threads,
                engine=self.engine,
            )
        self.out = self.refresher.outputs(problem.n)
        # The state every other contender and the mj_forward reference see
        # besides qpos/qvel: a fresh MjData's, i.e. the model's mocap poses
        # and time 0.
        self.inputs: dict[str, Any] = {**mjrefresh.model_mocap(problem.model, problem.n)}
        if self.refresher.plan.needs_time:
            self.inputs["time"] = 0.0

    @property
    def threads_used(self) -> int:
        for obj, attr in (
            (self.refresher, "num_threads"),
            (getattr(self.refresher, "plan", None), "num_threads"),
        ):
            value = getattr(obj, attr, None) if obj is not None else None
            if isinstance(value, int) and value > 0:
                return value
        return self.threads

    def prepare(self, mask: np.ndarray) -> Callable[[], None]:
        r, out, inputs = self.refresher, self.out, self.inputs
        qpos, qvel = self.problem.qpos, self.problem.qvel
        if mask.all():
            rows = mask.copy()

            def run_all() -> None:
                r.refresh(rows, qpos, qvel, out, **inputs)

            return run_all
        dirty = mask.copy()

        def run() -> None:
            np.copyto(dirty, mask)  # refresh_dirty_rows clears the mask it is given
            r.refresh_dirty_rows(dirty, qpos, qvel, out, **inputs)

        return run

    def sensordata(self) -> np.ndarray:
        sel = self.problem.selection
        if sel is None:
            assert self.out.sensordata is not None  # the problem selects columns
            return self.out.sensordata
        # For the check only: the outputs laid out like the problem model's
        # sensordata (the appended frame-sensor block after the user's columns).
        full = np.full((self.problem.n, self.problem.model.nsensordata), np.nan)
        if self.out.sensordata is not None:
            full[:, : sel.block_start] = self.out.sensordata
        # The appended block holds, per body, a frame sensor per world body
        # output and, per site, its position and axes, in the output table's
        # order (Selection); a site's 9-wide matrix is compared as its axes.
        o, n = self.out, self.problem.n
        blocks: list[np.ndarray] = []
        for by, chosen in (("bodies", sel.bodies), ("sites", sel.sites)):
            if not chosen:
                continue
            arrays = [
                _axes(_written(getattr(o, s.name)))
                if s.width == 9
                else _written(getattr(o, s.name))
                for s in OUTPUTS
                if s.indexed_by == by
            ]
            blocks.append(np.concatenate(arrays, axis=2).reshape(n, -1))
        if blocks:
            full[:, sel.block_start :] = np.concatenate(blocks, axis=1)
        return full

    def poison(self) -> None:
        for array in self.out.arrays().values():
            array[...] = np.nan

    def stage_floor(self, mask: np.ndarray) -> float | None:
        """Seconds the planned MuJoCo stage functions alone take for the rows
        of ``mask`` on one thread (timed inside the core, no outputs written),
        or None when the engine has no such hook (only the exact engine)."""
        if self.engine != "exact":
            return None
        bound = self.refresher.bind(self.problem.qpos, self.problem.qvel, self.out, **self.inputs)
        return bound.stage_seconds(np.flatnonzero(mask))


def _refuse_uncovered(problem: Problem) -> None:
    """Raise Unsupported when the fast engine does not cover the problem's
    sensors: ``Refresher(engine='fast')`` refuses such a selection by design
    (a PlanError), which is the engine not applying here, not it failing."""
    from mjrefresh.plan import fast_uncovered

    sel = problem.selection
    model = problem.model if sel is None else sel.base_model
    ranges = problem.ranges if sel is None else sel.sensor_ranges
    adr = np.asarray(model.sensor_adr)
    dim = np.asarray(model.sensor_dim)
    ids = [
        s
        for s in range(model.nsensor)
        if dim[s] and any(a <= adr[s] and adr[s] + dim[s] <= b for a, b in ranges)
    ]
    why = fast_uncovered(model, ids)
    if why is not None:
        raise Unsupported(f"the fast engine does not cover this selection: {why}")


def _written(a: np.ndarray | None) -> np.ndarray:
    """An output the selection writes (never None for a selected output)."""
    assert a is not None
    return a


class MjrefreshExact(_MjrefreshEngine):
    """``mjrefresh.Refresher(engine='exact')``."""

    name = "mjrefresh_exact"
    description = "mjrefresh.Refresher(engine='exact'): refresh() / refresh_dirty_rows()"
    engine = "exact"


class MjrefreshFast(_MjrefreshEngine):
    """``mjrefresh.Refresher(engine='fast')``."""

    name = "mjrefresh_fast"
    description = "mjrefresh.Refresher(engine='fast'): refresh() / refresh_dirty_rows()"
    engine = "fast"


# ---------------------------------------------------------------------------
# (e) single-thread C++ stage loop
# ---------------------------------------------------------------------------


class StageLoopCpp(Contender):
    """Single-thread C++ loop over the five stage functions."""

    name = "stage_loop_cpp"
    description = (
        "mjrefresh._core.stage_loop: one C++ thread, the five stage functions per row "
        "(reset: gathered rows)"
    )
    multithreaded = False
    internal = True

    @classmethod
    def unavailable(cls) -> str | None:
        try:  # only the native module is needed, not the public API
            from mjrefresh import _core
        except Exception as e:  # noqa: BLE001
            return f"import mjrefresh._core failed ({type(e).__name__}: {e})"
        if not hasattr(_core, "stage_loop"):
            return "mjrefresh._core has no stage_loop"
        return None

    def __init__(self, problem: Problem, threads: int) -> None:
        super().__init__(problem, threads)
        if len(problem.ranges) != 1:
            raise Unsupported(
                f"stage_loop takes one column range, the problem has {len(problem.ranges)}"
            )
        from mjrefresh import _core

        self.stage_loop = _core.stage_loop
        self.out = np.zeros((problem.n, problem.model.nsensordata))

    def prepare(self, mask: np.ndarray) -> Callable[[], None]:
        m, out, loop = self.problem.model, self.out, self.stage_loop
        qpos, qvel = self.problem.qpos, self.problem.qvel
        ((start, stop),) = self.problem.ranges
        if mask.all():
            return lambda: loop(m, qpos, qvel, out, start, stop)
        rows = np.flatnonzero(mask)
        sub = np.zeros((rows.size, m.nsensordata))

        def run() -> None:  # gather the dirty rows, run, scatter the columns back
            loop(m, qpos[rows], qvel[rows], sub, start, stop)
            out[rows, start:stop] = sub[:, start:stop]

        return run

    def sensordata(self) -> np.ndarray:
        return self.out


ALL: list[type[Contender]] = [
    PythonLoop,
    MjbatchUni,
    MujocoBatch,
    MujocoUni,
    MjrefreshExact,
    MjrefreshFast,
    StageLoopCpp,
]
BY_NAME: dict[str, type[Contender]] = {c.name: c for c in ALL}


def availability() -> dict[str, str | None]:
    """Contender name -> None if it can run here, else why not."""
    return {c.name: c.unavailable() for c in ALL}
