"""The public Refresher: plan once per model, refresh rows in one native call."""

from __future__ import annotations

import atexit
import sys
import weakref
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import mujoco
import numpy as np

from ._native import core as _core
from .outputs import ITEM_WIDTH, OUTPUT_NAMES, RefreshOutputs, as_array
from .plan import RefreshPlan, build_plan

# Stage name -> bit of the native Stage flag enum (names as in plan.py).
_STAGE_BITS: dict[str, int] = {str(s.name): int(s.value) for s in _core.Stage}


# Refreshers still open at interpreter exit are closed (threads joined) before
# the interpreter tears down, instead of being abandoned mid-finalisation.
_LIVE: weakref.WeakSet[Refresher] = weakref.WeakSet()


@atexit.register
def _close_live_refreshers() -> None:
    for r in list(_LIVE):
        r.close()


class RefreshError(RuntimeError):
    """MuJoCo raised an error while refreshing some rows.

    All other rows of the call were refreshed; the failing rows' outputs were
    left as they were. ``rows`` lists the failing rows (sorted).
    """

    def __init__(self, message: str, rows: Sequence[int]) -> None:
        super().__init__(message)
        self.rows: tuple[int, ...] = tuple(int(r) for r in rows)


def _check_num_threads(num_threads: object) -> int:
    if isinstance(num_threads, bool) or not isinstance(num_threads, (int, np.integer)):
        raise TypeError(f"num_threads: expected an int, got {type(num_threads).__name__}")
    n = int(num_threads)
    if n < 0:
        raise ValueError(f"num_threads: expected >= 0 (0 = all logical CPUs), got {n}")
    return n if n > 0 else int(_core.available_cpus())


def _check_cpu_ids(cpu_ids: object) -> list[int]:
    if cpu_ids is None:
        return []
    if not sys.platform.startswith("linux"):
        raise ValueError(f"cpu_ids: thread pinning is only supported on Linux, not {sys.platform}")
    if isinstance(cpu_ids, (str, bytes)) or not isinstance(cpu_ids, Iterable):
        raise TypeError(f"cpu_ids: expected a sequence of ints, got {type(cpu_ids).__name__}")
    ids = []
    for c in cpu_ids:
        if isinstance(c, bool) or not isinstance(c, (int, np.integer)):
            raise TypeError(f"cpu_ids: expected ints, got {type(c).__name__} {c!r}")
        if not _core.cpu_in_affinity(int(c)):
            raise ValueError(f"cpu_ids: cpu {int(c)} is not in this process's CPU affinity set")
        ids.append(int(c))
    if not ids:
        raise ValueError("cpu_ids: expected at least one cpu id, got an empty sequence")
    return ids


def _rows_from(rows: object, n: int) -> np.ndarray:
    """Row ids (int64, contiguous) from a bool mask or an int array."""
    r = as_array("rows", rows) if not isinstance(rows, (list, tuple, range)) else np.asarray(rows)
    if r.ndim != 1:
        raise ValueError(f"rows: expected a 1-D bool mask or int array, got shape {r.shape}")
    if r.dtype == np.bool_:
        if r.shape[0] != n:
            raise ValueError(
                f"rows: expected a bool mask of length {n} (N), got length {r.shape[0]}"
            )
        return np.flatnonzero(r)
    if r.size == 0:
        return np.empty(0, dtype=np.int64)
    if r.dtype.kind not in "iu":
        raise TypeError(f"rows: expected a bool mask or int32/int64 row ids, got dtype {r.dtype}")
    return np.ascontiguousarray(r, dtype=np.int64)


def _overlaps(a: np.ndarray, b: np.ndarray) -> bool:
    # Cheap bounds test first; an exact test only for interleaved layouts
    # (a backend's state rows often hold qpos, qvel and sensordata side by side).
    if not np.may_share_memory(a, b):
        return False
    try:
        return bool(np.shares_memory(a, b, max_work=100_000))
    except np.exceptions.TooHardError:
        return True


class Refresher:
    """Refreshes position/velocity-derived MuJoCo state for many rows at once.

    Construction plans the refresh once (:attr:`plan`): which outputs are
    written and which MuJoCo stages that needs. Sensors that a refresh cannot
    compute correctly (acceleration-stage, constraint-row, energy, user,
    plugin and delayed/interval sensors) are rejected here with a ValueError
    naming the sensor and the reason.

    The model is copied into the native core (deleting or editing the Python
    ``MjModel`` afterwards does not affect the refresher); the refresher keeps
    a reference only for names and sizes.

    Args:
        model: the ``mujoco.MjModel`` every row shares.
        bodies: bodies (names or ids) whose world pose and velocity are
            written to ``body_pos/body_quat/body_linvel/body_angvel``.
        relative_to: optional body; also write ``body_pos_rel/body_quat_rel``
            (pose of `bodies` in this body's frame).
        sites: sites whose world pose is written to ``site_pos/site_mat``.
        sensors: sensor names or ids whose ``sensordata`` columns are written.
        sensor_ranges: ``(start, stop)`` sensordata column ranges to write
            (adjacent and overlapping ranges are merged).
        num_threads: participants per call, including the calling thread;
            0 means all logical CPUs of this process.
        cpu_ids: optional Linux CPU ids; participant i runs on
            ``cpu_ids[i % len(cpu_ids)]``.
        model_fields: names of mjModel fields whose values differ per
            environment (domain randomisation), e.g. ``("body_pos",
            "body_mass")``; every call then passes them in ``model_fields=``
            as ``(N, ...)`` arrays shaped like the model field (supported:
            :data:`mjrefresh.plan.MODEL_FIELDS`). Values are used as MuJoCo's
            functions read them from a model holding them (flags the compiler
            derived, such as ``body_sameframe``, stay the template's;
            ``body_subtreemass`` follows ``body_mass`` as ``mj_setConst``
            derives it).
        engine: ``"exact"`` (MuJoCo's own stage functions), ``"fast"``
            (fused kernels that visit only the bodies the outputs need;
            PlanError if a selected sensor is not covered) or ``"auto"``
            (``"fast"`` when it covers the selection, else ``"exact"``);
            :attr:`plan` says which runs and why.
    """

    def __init__(
        self,
        model: mujoco.MjModel,
        bodies: Iterable[str | int] = (),
        relative_to: str | int | None = None,
        sites: Iterable[str | int] = (),
        sensors: Iterable[str | int] | None = None,
        sensor_ranges: Sequence[tuple[int, int]] | None = None,
        num_threads: int = 0,
        cpu_ids: Sequence[int] | None = None,
        engine: str = "auto",
        model_fields: Iterable[str] = (),
    ) -> None:
        if not isinstance(model, mujoco.MjModel):
            raise TypeError(f"model: expected mujoco.MjModel, got {type(model).__name__}")
        self._plan: RefreshPlan = build_plan(
            model,
            bodies=bodies,
            relative_to=relative_to,
            sites=sites,
            sensors=sensors,
            sensor_ranges=sensor_ranges,
            engine=engine,
            model_fields=model_fields,
        )
        threads = _check_num_threads(num_threads)
        pins = _check_cpu_ids(cpu_ids)
        stages = 0
        for s in self._plan.stages:
            stages |= _STAGE_BITS[s]
        p = self._plan
        self._model = model
        config = _core.Config()
        config.stages = _core.Stage(stages)
        config.columns = list(p.column_ranges)
        config.sensors = list(p.sensor_ids)
        config.bodies = list(p.body_ids)
        config.relative_to = -1 if p.relative_to_id is None else p.relative_to_id
        config.sites = list(p.site_ids)
        config.model_fields = list(p.model_field_ids)
        config.engine = _core.EngineKind[self._plan.engine]
        config.num_threads = threads
        config.cpu_ids = pins
        self._core = _core.Refresher(model._address, config)
        _LIVE.add(self)

    # ------------------------------------------------------------------ info
    @property
    def plan(self) -> RefreshPlan:
        """What runs per row and why (see :class:`RefreshPlan`)."""
        return self._plan

    @property
    def num_threads(self) -> int:
        """Participants per call, including the calling thread."""
        return int(self._core.num_threads)

    @property
    def model(self) -> mujoco.MjModel:
        """The model this refresher was planned for (names and sizes)."""
        return self._model

    @property
    def closed(self) -> bool:
        """True after :meth:`close`."""
        return bool(self._core.closed)

    # --------------------------------------------------------------- outputs
    def output_shapes(self, num_envs: int) -> dict[str, tuple[int, ...]]:
        """Shapes of the outputs this plan writes, for `num_envs` rows."""
        p = self._plan
        shapes: dict[str, tuple[int, ...]] = {}
        if p.body_ids:
            for name in ("body_pos", "body_quat", "body_linvel", "body_angvel"):
                shapes[name] = (num_envs, len(p.body_ids), ITEM_WIDTH[name])
        if p.relative_to_id is not None:
            for name in ("body_pos_rel", "body_quat_rel"):
                shapes[name] = (num_envs, len(p.body_ids), ITEM_WIDTH[name])
        if p.site_ids:
            for name in ("site_pos", "site_mat"):
                shapes[name] = (num_envs, len(p.site_ids), ITEM_WIDTH[name])
        if p.column_ranges:
            shapes["sensordata"] = (num_envs, self._model.nsensordata)
        return shapes

    def outputs(
        self, num_envs: int, dtype: type | np.dtype = np.float64, **arrays: Any
    ) -> RefreshOutputs:
        """Allocate zeroed outputs for `num_envs` rows (float64 or float32).

        Pass an array by name (for example ``sensordata=backend_view``) to use
        it instead of a new one; it is checked when a refresh uses it.
        """
        if (
            isinstance(num_envs, bool)
            or not isinstance(num_envs, (int, np.integer))
            or num_envs < 0
        ):
            raise ValueError(f"num_envs: expected an int >= 0, got {num_envs!r}")
        dt = np.dtype(dtype)
        if dt not in (np.dtype(np.float64), np.dtype(np.float32)):
            raise TypeError(f"dtype: expected float64 or float32, got {dt}")
        shapes = self.output_shapes(int(num_envs))
        for name in arrays:
            if name not in OUTPUT_NAMES:
                raise ValueError(f"{name}: unknown output; expected one of {OUTPUT_NAMES}")
            if name not in shapes:
                raise ValueError(f"{name}: this plan does not write {name}")
        values = {
            name: (as_array(name, arrays[name]) if name in arrays else np.zeros(shape, dt))
            for name, shape in shapes.items()
        }
        return RefreshOutputs(**values)

    # ----------------------------------------------------------------- calls
    def refresh(
        self,
        rows: Any,
        qpos: Any,
        qvel: Any,
        out: RefreshOutputs,
        mocap_pos: Any = None,
        mocap_quat: Any = None,
        time: Any = None,
        model_fields: Mapping[str, Any] | None = None,
    ) -> int:
        """Refresh `rows` and write their outputs into `out`.

        Args:
            rows: sorted unique int32/int64 row ids, or a bool mask of length N.
            qpos, qvel: ``(N, nq)``/``(N, nv)`` float64 state, last axis
                contiguous, any row stride (read in place).
            out: the arrays to write (see :meth:`outputs`).
            mocap_pos, mocap_quat: ``(N, nmocap, 3|4)`` float64, required when
                the model has mocap bodies.
            time: ``d.time`` per row (scalar or ``(N,)``), required when a
                clock sensor is selected; otherwise 0.
            model_fields: ``{name: (N, ...) float64 array}`` for exactly the
                fields declared at construction (read in place; any row
                stride, each row's values contiguous).

        Returns:
            The number of rows refreshed.

        Raises:
            TypeError, ValueError: a bad argument (nothing was written).
            RefreshError: MuJoCo raised an error in some rows (the others
                were refreshed).
        """
        q = self._qpos_rows(qpos)
        ids = _rows_from(rows, q.shape[0])
        self._run(ids, q, qvel, out, mocap_pos, mocap_quat, time, model_fields)
        return int(ids.shape[0])

    def refresh_dirty_rows(
        self,
        dirty: Any,
        qpos: Any,
        qvel: Any,
        out: RefreshOutputs,
        mocap_pos: Any = None,
        mocap_quat: Any = None,
        time: Any = None,
        model_fields: Mapping[str, Any] | None = None,
    ) -> int:
        """Refresh the rows where `dirty` is true, then clear those entries.

        `dirty` is a writable bool array of length N. Returns the number of
        rows refreshed. On a RefreshError the failing rows stay dirty.
        """
        mask = as_array("dirty", dirty)
        q = self._qpos_rows(qpos)
        if mask.dtype != np.bool_ or mask.ndim != 1:
            raise TypeError(
                f"dirty: expected a 1-D bool array, got dtype {mask.dtype} shape {mask.shape}"
            )
        if mask.shape[0] != q.shape[0]:
            raise ValueError(f"dirty: expected length {q.shape[0]} (N), got {mask.shape[0]}")
        if not mask.flags.writeable:
            raise ValueError("dirty: expected a writable array (its entries are cleared)")
        ids = np.flatnonzero(mask)
        if ids.size == 0:
            return 0
        try:
            self._run(ids, q, qvel, out, mocap_pos, mocap_quat, time, model_fields)
        except RefreshError as exc:
            mask[ids] = False
            mask[list(exc.rows)] = True
            raise
        mask[ids] = False
        return int(ids.shape[0])

    def close(self) -> None:
        """Stop the worker threads and free the scratch state (idempotent)."""
        self._core.close()

    def __enter__(self) -> Refresher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"{self.num_threads} threads"
        work = (
            "fused kernels" if self._plan.engine == "fast" else f"{len(self._plan.stages)} stages"
        )
        return f"<mjrefresh.Refresher {self._plan.engine}, {work}, {state}>"

    # -------------------------------------------------------------- internal
    def _run(
        self,
        ids: np.ndarray,
        qpos: np.ndarray,
        qvel: Any,
        out: RefreshOutputs,
        mocap_pos: Any,
        mocap_quat: Any,
        time: Any,
        model_fields: Mapping[str, Any] | None = None,
    ) -> None:
        if self.closed:
            raise RuntimeError("Refresher is closed")
        if not isinstance(out, RefreshOutputs):
            raise TypeError(f"out: expected mjrefresh.RefreshOutputs, got {type(out).__name__}")
        n = qpos.shape[0]
        inputs = {"qpos": qpos, "qvel": as_array("qvel", qvel)}
        if mocap_pos is not None:
            inputs["mocap_pos"] = as_array("mocap_pos", mocap_pos)
        if mocap_quat is not None:
            inputs["mocap_quat"] = as_array("mocap_quat", mocap_quat)
        if time is not None:
            t = time if isinstance(time, np.ndarray) else np.asarray(time, dtype=np.float64)
            if t.ndim == 0:
                t = np.broadcast_to(t.astype(np.float64), (n,))
            inputs["time"] = t
        elif self._plan.needs_time:
            clocks = [
                name
                for i, name in zip(self._plan.sensor_ids, self._plan.sensor_names, strict=True)
                if int(self._model.sensor_type[i]) == mujoco.mjtSensor.mjSENS_CLOCK
            ]
            raise ValueError(
                f"time: clock sensor {clocks[0]!r} is selected; expected a scalar or an (N,) "
                "float64 array, got None"
            )

        fields = self._model_field_arrays(model_fields, n)
        shapes = self.output_shapes(n)
        written = {}
        for name, arr in out.arrays().items():
            a = as_array(f"out.{name}", arr)
            if name not in shapes:
                raise ValueError(f"out.{name}: this plan does not write {name}")
            if not a.flags.writeable:
                raise ValueError(f"out.{name}: expected a writable array, got a read-only one")
            written[name] = a
        for name, a in written.items():
            for other, b in list(inputs.items()) + [(f"model_fields[{k!r}]", v) for k, v in fields]:
                if _overlaps(a, b):
                    raise ValueError(f"out.{name}: overlaps the input {other} in memory")
        names = list(written)
        for i, name in enumerate(names):
            for other in names[i + 1 :]:
                if _overlaps(written[name], written[other]):
                    raise ValueError(f"out.{name}: overlaps out.{other} in memory")

        if fields:
            inputs["model_fields"] = [a for _, a in fields]
        self._call_core(ids, inputs, written)

    def _qpos_rows(self, qpos: Any) -> np.ndarray:
        """`qpos` as an array with rows (N is its first axis), or ValueError."""
        q = as_array("qpos", qpos)
        if q.ndim != 2:
            raise ValueError(
                f"qpos: expected a 2-D array (N, {self._model.nq}), got shape {q.shape}"
            )
        return q

    def _model_field_arrays(
        self, model_fields: Mapping[str, Any] | None, n: int
    ) -> list[tuple[str, np.ndarray]]:
        """The per-environment field arrays in plan order, checked."""
        declared = self._plan.model_fields
        given = {} if model_fields is None else model_fields
        if not isinstance(given, Mapping):
            raise TypeError(
                f"model_fields: expected a mapping of field name to array, got "
                f"{type(given).__name__}"
            )
        if not declared:
            if given:
                raise ValueError(
                    "model_fields: this Refresher was built without per-environment model "
                    "fields; declare them with Refresher(..., model_fields=(...))"
                )
            return []
        missing = [f for f in declared if f not in given]
        if missing:
            raise ValueError(
                f"model_fields: expected arrays for {', '.join(map(repr, declared))} "
                f"(declared at construction), missing {', '.join(map(repr, missing))}"
            )
        extra = [f for f in given if f not in declared]
        if extra:
            raise ValueError(
                f"model_fields: {', '.join(map(repr, extra))} not declared at construction "
                f"(declared: {', '.join(map(repr, declared))})"
            )
        out = []
        for name in declared:
            a = as_array(f"model_fields[{name!r}]", given[name])
            shape = (n, *self._plan.model_field_shape(self._model, name))
            if a.shape != shape:
                raise ValueError(
                    f"model_fields[{name!r}]: expected shape {shape} (N, like model.{name}), "
                    f"got {a.shape}"
                )
            if a.dtype != np.float64:
                raise TypeError(f"model_fields[{name!r}]: expected dtype float64, got {a.dtype}")
            out.append((name, a))
        return out

    def _call_core(
        self, ids: np.ndarray, inputs: dict[str, np.ndarray], outputs: dict[str, np.ndarray]
    ) -> None:
        """Native call on arrays that :meth:`_run` already validated once.

        Internal fast path for callers that hold the same arrays across calls
        (``mjrefresh.StateCache``). It skips the Python-side checks, including
        the overlap and writability checks, so the caller must have run them
        once through :meth:`refresh` on these very arrays; the native layer
        still checks dtypes, shapes and row ids on every call.
        """
        failed, message = self._core.run(ids, **inputs, **outputs)
        if failed:
            extra = f" ({len(failed) - 1} other rows also failed)" if len(failed) > 1 else ""
            raise RefreshError(
                f"MuJoCo error while refreshing row {failed[0]}: {message}{extra}; "
                "all other rows were refreshed",
                failed,
            )
