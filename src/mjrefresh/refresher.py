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
from ._not_copyable import NotCopyable
from .bound_refresh import BoundRefresh
from .bound_refresh import RefreshError as RefreshError  # importable from here too
from .model_reads import copy_values
from .outputs import INPUT_NAMES, OUTPUT_NAMES, RefreshOutputs, as_array
from .plan import RefreshPlan, build_plan
from .sensor_rules import require_model

# Stage name -> bit of the native Stage flag enum (names as in plan.py).
_STAGE_BITS: dict[str, int] = {str(s.name): int(s.value) for s in _core.Stage}


# Refreshers still open at interpreter exit are closed (threads joined) before
# the interpreter tears down, instead of being abandoned mid-finalisation.
_LIVE: weakref.WeakSet[Refresher] = weakref.WeakSet()


@atexit.register
def _close_live_refreshers() -> None:
    for r in list(_LIVE):
        r.close()


#: Participants a Refresher may have: far more than any machine has cores
#: (each needs its own scratch state and stack), and an int for the core.
MAX_THREADS = 4096


def check_num_threads(num_threads: object) -> int:
    """The participants per call `num_threads` asks for (0: every logical
    CPU), or TypeError/ValueError naming it."""
    if isinstance(num_threads, bool) or not isinstance(num_threads, (int, np.integer)):
        raise TypeError(f"num_threads: expected an int, got {type(num_threads).__name__}")
    n = int(num_threads)
    if n < 0:
        raise ValueError(f"num_threads: expected >= 0 (0 = all logical CPUs), got {n}")
    if n > MAX_THREADS:
        raise ValueError(f"num_threads: expected at most {MAX_THREADS}, got {n}")
    return n if n > 0 else int(_core.available_cpus())


def check_cpu_ids(cpu_ids: object) -> list[int]:
    """`cpu_ids` as a list of ints ([] for None), or TypeError/ValueError
    naming it."""
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
        if not 0 <= int(c) < 2**31 or not _core.cpu_in_affinity(int(c)):
            raise ValueError(f"cpu_ids: cpu {int(c)} is not in this process's CPU affinity set")
        ids.append(int(c))
    if not ids:
        raise ValueError("cpu_ids: expected at least one cpu id, got an empty sequence")
    return ids


def _optional_inputs(inputs: Mapping[str, Any]) -> dict[str, Any]:
    """`inputs` (keyword arguments), each a name of the native input table
    other than qpos and qvel, or TypeError."""
    allowed = [name for name in INPUT_NAMES if name not in ("qpos", "qvel")]
    for name in inputs:
        if name not in allowed:
            raise TypeError(
                f"{name}: unexpected keyword argument; the inputs besides qpos and qvel are "
                f"{', '.join(allowed)} (and model_fields)"
            )
    return dict(inputs)


def _native_viewable(name: str, obj: Any) -> Any:
    """`obj`, or a numpy view of it when only numpy can view it in place (an
    ``__array_interface__`` exporter without DLPack or the buffer protocol,
    which the native core cannot read); the view remembers `obj`
    (outputs.exporter) so that a bound call notices if its memory moves. A
    real numpy scalar (``np.float32(1.5)`` as a ``time``) is a value like a
    Python float, not an array to read in place: it is passed on as it is
    and the core reads it as a float64 (numpy's bool and complex scalars
    stay 0-d arrays, refused by their dtype)."""
    if isinstance(obj, np.floating) and np.isfinite(obj) and not np.isfinite(np.float64(obj)):
        # a longdouble past float64's range (float() would give inf), refused as
        # the core refuses such a Python int
        raise ValueError(
            f"{name}: expected a value a float64 holds, got a number of type "
            f"{type(obj).__name__} too large for it"
        )
    if (
        isinstance(obj, (np.ndarray, np.floating, np.integer))
        or hasattr(obj, "__dlpack__")
        or not hasattr(obj, "__array_interface__")
    ):
        return obj
    return as_array(name, obj)


class Refresher(NotCopyable):
    """Refreshes position/velocity-derived MuJoCo state for many rows at once.

    Construction plans the refresh once (:attr:`plan`): which outputs are
    written and which MuJoCo stages that needs. Sensors that a refresh cannot
    compute correctly (acceleration-stage, user, plugin and delayed/interval
    sensors; see :func:`mjrefresh.plan.refresh_refusals`) are rejected here
    with a ValueError (:class:`~mjrefresh.PlanError`) naming the sensor and
    the reason.

    The model is copied into the native core (deleting or editing the Python
    ``MjModel`` afterwards does not affect the refresher); the refresher keeps
    a reference only for names and sizes. Bindings compare the model of a
    batch or an ``MjData`` with the values copied at construction.

    Args:
        model: the ``mujoco.MjModel`` every row shares.
        bodies: bodies (names or ids, numpy ints included) whose world pose
            and velocity are written to the body outputs
            (:class:`RefreshOutputs`). None, like ``()``, selects none; so
            for `sites`, `sensors` and `model_fields`.
        relative_to: optional body; also write the relative body outputs
            (pose of `bodies` in this body's frame).
        sites: sites whose world pose is written to the site outputs.
        sensors: sensor names or ids whose ``sensordata`` columns are written.
        sensor_ranges: ``(start, stop)`` sensordata column ranges to write
            (adjacent and overlapping ranges are merged).
        num_threads: participants per call, including the calling thread;
            0 means all logical CPUs of this process.
        cpu_ids: optional Linux CPU ids; participant i runs on
            ``cpu_ids[i % len(cpu_ids)]``: worker threads for their life,
            the calling thread (participant 0) during each call only (its
            own affinity is restored when the call returns).
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

    _instead = "build another with Refresher(model, ...) in the process that uses it"

    def __init__(
        self,
        model: mujoco.MjModel,
        bodies: Iterable[str | int] | None = (),
        relative_to: str | int | None = None,
        sites: Iterable[str | int] | None = (),
        sensors: Iterable[str | int] | None = None,
        sensor_ranges: Sequence[tuple[int, int]] | None = None,
        num_threads: int = 0,
        cpu_ids: Sequence[int] | None = None,
        engine: str = "auto",
        model_fields: Iterable[str] | None = (),
    ) -> None:
        require_model(model)
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
        threads = check_num_threads(num_threads)
        pins = check_cpu_ids(cpu_ids)
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
        # The values of the fields a refresh reads, as the core's copy holds
        # them: what a binding compares another model (a batch's, an
        # MjData's) with. `model` may be edited afterwards (domain
        # randomisation on the caller's model); the core's copy is not.
        self._model_values = copy_values(model, p)
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

    @property
    def memory_bytes(self) -> int:
        """Bytes this refresher holds: its private model copy (copies, with
        per-environment model fields) and every participant's scratch state
        (exact engine: an ``mjData`` whose arena is sized to the planned
        stages). 0 once closed."""
        return int(self._core.memory_bytes)

    @property
    def participant_bytes(self) -> int:
        """The part of :attr:`memory_bytes` each thread (participant) adds."""
        return int(self._core.participant_bytes)

    def describe(self, verbose: bool = False) -> str:
        """:meth:`RefreshPlan.describe` plus the memory this refresher holds."""
        return (
            f"{self._plan.describe(verbose)}\nmemory: {self.memory_bytes} bytes "
            f"({self.participant_bytes} per thread x {self.num_threads} threads)"
        )

    # --------------------------------------------------------------- outputs
    def output_shapes(self, num_envs: int) -> dict[str, tuple[int, ...]]:
        """Shapes of the outputs this plan writes, for `num_envs` rows (from
        the native output table and the selection)."""
        return {
            str(k): tuple(int(d) for d in v) for k, v in self._core.output_shapes(num_envs).items()
        }

    def outputs(
        self, num_envs: int, dtype: type | np.dtype = np.float64, **arrays: Any
    ) -> RefreshOutputs:
        """Allocate zeroed outputs for `num_envs` rows (float64 or float32).

        Pass an array by name (for example ``sensordata=backend_view``) to use
        it instead of a new one (None: allocate it, as if not passed); it is
        checked when a refresh uses it.
        """
        if (
            isinstance(num_envs, bool)
            or not isinstance(num_envs, (int, np.integer))
            or not 0 <= num_envs < 2**62
        ):
            raise ValueError(f"num_envs: expected an int in [0, 2**62), got {num_envs!r}")
        dt = np.dtype(dtype)
        if dt not in (np.dtype(np.float64), np.dtype(np.float32)):
            raise TypeError(f"dtype: expected float64 or float32, got {dt}")
        shapes = self.output_shapes(int(num_envs))
        arrays = {k: v for k, v in arrays.items() if v is not None}  # None: allocate it
        for name in arrays:
            if name not in OUTPUT_NAMES:
                raise ValueError(f"{name}: unknown output; expected one of {OUTPUT_NAMES}")
            if name not in shapes:
                raise ValueError(f"{name}: this plan does not write {name}")
        values = {
            name: (
                as_array(name, arrays[name], written=True)
                if name in arrays
                else np.zeros(shape, dt)
            )
            for name, shape in shapes.items()
        }
        return RefreshOutputs(**values)

    # ----------------------------------------------------------------- calls
    def bind(
        self,
        qpos: Any,
        qvel: Any,
        out: RefreshOutputs,
        *,
        model_fields: Mapping[str, Any] | None = None,
        **inputs: Any,
    ) -> BoundRefresh:
        """Check these arrays once and return a call that refreshes their rows.

        Runs every check of :meth:`refresh` (types, dtypes, shapes, strides,
        writability, memory overlaps, model fields, the clock-sensor time
        rule) now, in the native core, which keeps the arrays: the returned
        :class:`BoundRefresh` only parses rows (the core checks them against
        the bound arrays). For callers that refresh the same arrays many
        times, such as :class:`~mjrefresh.StateCache`.

        Args:
            qpos, qvel, out, model_fields, **inputs: as for :meth:`refresh`;
                kept (not copied) and read or written in place by every call.

        Returns:
            ``bound``: ``bound(rows)``/``bound.refresh(rows)`` and
            ``bound.refresh_dirty_rows(dirty)`` behave as :meth:`refresh` and
            :meth:`refresh_dirty_rows` with these arrays.

        Raises:
            TypeError, ValueError: a bad argument.
            RuntimeError: the refresher is closed.
        """
        given = {"qpos": qpos, "qvel": qvel, **_optional_inputs(inputs)}
        return self._bind(given, out, model_fields)

    def refresh(
        self,
        rows: Any,
        qpos: Any,
        qvel: Any,
        out: RefreshOutputs,
        *,
        model_fields: Mapping[str, Any] | None = None,
        **inputs: Any,
    ) -> int:
        """Refresh `rows` and write their outputs into `out`.

        Args:
            rows: sorted unique row ids of any integer dtype, a slice, an int,
                or a bool mask of length N.
            qpos, qvel: ``(N, nq)``/``(N, nv)`` float64 state, last axis
                contiguous, any row stride (read in place).
            out: the arrays to write (see :meth:`outputs`).
            model_fields: ``{name: (N, ...) float64 array}`` for exactly the
                fields declared at construction (read in place; any row
                stride, each row's values contiguous).
            **inputs: the other inputs of the native table
                (:data:`mjrefresh.outputs.INPUT_NAMES`), by name:
                ``mocap_pos``, ``mocap_quat``: ``(N, nmocap, 3|4)`` float64,
                required when the model has mocap bodies; ``time``: ``d.time``
                per row (a real scalar, a numpy one included, or an ``(N,)``
                float64 array), required when a clock sensor is selected,
                otherwise 0.

        Returns:
            The number of rows refreshed.

        Raises:
            TypeError, ValueError: a bad argument (nothing was written).
            RefreshError: MuJoCo raised an error in some rows (the others
                were refreshed).
        """
        return self.bind(qpos, qvel, out, model_fields=model_fields, **inputs).refresh(rows)

    def refresh_dirty_rows(
        self,
        dirty: Any,
        qpos: Any,
        qvel: Any,
        out: RefreshOutputs,
        *,
        model_fields: Mapping[str, Any] | None = None,
        **inputs: Any,
    ) -> int:
        """Refresh the rows where `dirty` is true, then clear those entries.

        `dirty` is a writable bool array of length N. Returns the number of
        rows refreshed. On a RefreshError the failing rows stay dirty.
        """
        bound = self.bind(qpos, qvel, out, model_fields=model_fields, **inputs)
        return bound.refresh_dirty_rows(dirty)

    def _bind(
        self,
        inputs: Mapping[str, Any],
        out: RefreshOutputs,
        model_fields: Mapping[str, Any] | None,
        num_envs: int | None = None,
    ) -> BoundRefresh:
        """The native bind of `inputs` (names to arrays or None) and `out`
        (N: `num_envs`, or qpos's first axis)."""
        if not isinstance(out, RefreshOutputs):
            raise TypeError(f"out: expected mjrefresh.RefreshOutputs, got {type(out).__name__}")
        given = {k: _native_viewable(k, v) for k, v in inputs.items() if v is not None}
        if isinstance(model_fields, Mapping):
            model_fields = {
                k: _native_viewable(f"model_fields[{k!r}]", v) for k, v in model_fields.items()
            }
        native = self._core.bind({**given, **out.arrays()}, model_fields, num_envs)
        return BoundRefresh(native, given, out, model_fields=dict(model_fields or {}))

    def _bind_mjdata(
        self, datas: Sequence[mujoco.MjData], out: RefreshOutputs, write_poses: bool
    ) -> BoundRefresh:
        """The native bind of rows kept in `datas` (checked by the caller,
        which keeps them alive) and of `out`."""
        if not isinstance(out, RefreshOutputs):
            raise TypeError(f"out: expected mjrefresh.RefreshOutputs, got {type(out).__name__}")
        addresses = np.array([d._address for d in datas], dtype=np.int64)
        tables = self._core.mjdata_rows(addresses)
        native = self._core.bind_mjdata(tables, out.arrays(), self._plan.needs_time, write_poses)
        return BoundRefresh(native, {}, out, keep=list(datas))

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
