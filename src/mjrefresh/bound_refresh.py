"""A refresh bound to arrays validated once: :class:`BoundRefresh`, and :class:`RefreshError`.

:meth:`Refresher.bind <mjrefresh.Refresher.bind>` runs every Python-side
check of a refresh (types, writability, memory overlaps, declared model
fields, the clock-sensor time rule) once and returns a :class:`BoundRefresh`;
its calls only parse the rows and enter the native core, which still checks
dtypes, shapes, strides and row ids on every call. ``Refresher.refresh`` is
a bind followed by one call.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import mujoco
import numpy as np

from ._rows import REFRESH_ROWS, dirty_mask, row_ids
from .outputs import RefreshOutputs, as_array, check_layout

if TYPE_CHECKING:
    from .plan import RefreshPlan
    from .refresher import Refresher

#: The native entry point: ``run(rows, **inputs, **outputs) -> (failed_rows, message)``.
NativeRun = Callable[..., tuple[list[int], str]]


class RefreshError(RuntimeError):
    """MuJoCo raised an error while refreshing some rows.

    All other rows of the call were refreshed; the failing rows' outputs were
    left as they were. ``rows`` lists the failing rows (sorted).
    """

    def __init__(self, message: str, rows: Sequence[int]) -> None:
        super().__init__(message)
        self.rows: tuple[int, ...] = tuple(int(r) for r in rows)


class BoundRefresh:
    """Refreshes rows of arrays that :meth:`Refresher.bind` validated once.

    The arrays are kept, not copied: each call reads the state arrays as they
    are then and writes the outputs in place. Bind again after replacing an
    array (a new object); writing into the bound ones needs no rebind.
    Calling it after the refresher is closed raises ``RuntimeError``.

    ``bound(rows)`` is ``bound.refresh(rows)``.
    """

    __slots__ = ("_inputs", "_n", "_out", "_outputs", "_run")

    def __init__(
        self,
        run: NativeRun,
        num_envs: int,
        inputs: dict[str, Any],
        out: RefreshOutputs,
        outputs: dict[str, np.ndarray],
    ) -> None:
        # Built by Refresher.bind from checked arrays; not for direct use.
        self._run = run
        self._n = num_envs
        self._inputs = inputs
        self._out = out
        self._outputs = outputs

    @property
    def num_envs(self) -> int:
        """N, the number of rows of the bound arrays."""
        return self._n

    @property
    def inputs(self) -> dict[str, np.ndarray]:
        """The bound state arrays by name (``qpos``, ``qvel`` and, when given,
        ``mocap_pos``, ``mocap_quat``, ``time``): the very arrays read, not copies."""
        return {k: v for k, v in self._inputs.items() if k != "model_fields"}

    @property
    def out(self) -> RefreshOutputs:
        """The outputs written."""
        return self._out

    def __call__(self, rows: Any) -> int:
        """Same as :meth:`refresh`."""
        return self.refresh(rows)

    def refresh(self, rows: Any) -> int:
        """Refresh `rows` (sorted unique int ids, or a bool mask of length N).

        Returns:
            The number of rows refreshed.

        Raises:
            TypeError, ValueError: bad `rows` (nothing was written).
            RefreshError: MuJoCo raised an error in some rows (the others
                were refreshed).
        """
        ids = row_ids("rows", rows, self._n, REFRESH_ROWS)
        self._refresh_ids(ids)
        return int(ids.shape[0])

    def refresh_dirty_rows(self, dirty: Any) -> int:
        """Refresh the rows where the writable bool array `dirty` (length N) is
        true, then clear those entries. Returns the number of rows refreshed.
        On a RefreshError the failing rows stay dirty."""
        mask = dirty_mask("dirty", dirty, self._n)
        return self._refresh_dirty_ids(mask, np.flatnonzero(mask))

    def _refresh_ids(self, ids: np.ndarray, dirty: np.ndarray | None = None) -> None:
        """One native call over the contiguous int64 `ids`; with `dirty`, the
        native call also clears the entries of the rows it refreshed."""
        failed, message = self._run(ids, **self._inputs, **self._outputs, dirty=dirty)
        if failed:
            extra = f" ({len(failed) - 1} other rows also failed)" if len(failed) > 1 else ""
            raise RefreshError(
                f"MuJoCo error while refreshing row {failed[0]}: {message}{extra}; "
                "all other rows were refreshed",
                failed,
            )

    def _refresh_dirty_ids(self, mask: np.ndarray, ids: np.ndarray) -> int:
        """Refresh `ids` (the true entries of `mask`) and clear them in `mask`,
        except the rows a RefreshError names (the native call clears them,
        after checking that `mask` shares no memory with any array it reads
        or writes)."""
        if ids.size == 0:
            return 0
        self._refresh_ids(ids, mask)
        return int(ids.shape[0])

    def __repr__(self) -> str:
        return f"<mjrefresh.BoundRefresh N={self._n}, outputs {sorted(self._outputs)}>"


def bind_checked(
    refresher: Refresher,
    run: NativeRun,
    qpos: np.ndarray,
    qvel: Any,
    out: RefreshOutputs,
    mocap_pos: Any,
    mocap_quat: Any,
    time: Any,
    model_fields: Mapping[str, Any] | None,
) -> BoundRefresh:
    """Run the Python-side checks of a refresh on these arrays and bind them.

    `qpos` is already a 2-D array (N is its first axis). Shapes and dtypes
    the native core checks are left to it.
    """
    if refresher.closed:
        raise RuntimeError("Refresher is closed")
    plan = refresher.plan
    if not isinstance(out, RefreshOutputs):
        raise TypeError(f"out: expected mjrefresh.RefreshOutputs, got {type(out).__name__}")
    n = qpos.shape[0]
    inputs: dict[str, Any] = {"qpos": qpos, "qvel": as_array("qvel", qvel)}
    if mocap_pos is not None:
        inputs["mocap_pos"] = as_array("mocap_pos", mocap_pos)
    if mocap_quat is not None:
        inputs["mocap_quat"] = as_array("mocap_quat", mocap_quat)
    if time is not None:
        t = time if isinstance(time, np.ndarray) else np.asarray(time, dtype=np.float64)
        if t.ndim == 0:
            t = np.broadcast_to(t.astype(np.float64), (n,))
        inputs["time"] = t
    elif plan.needs_time:
        raise ValueError(
            f"time: clock sensor {_clock_sensor(refresher)!r} is selected; expected a scalar "
            "or an (N,) float64 array, got None"
        )

    fields = _model_field_arrays(refresher, plan, model_fields, n)
    written = _checked_outputs(refresher, out, n)
    for name, a in (*inputs.items(), *fields, *((f"out.{k}", v) for k, v in written.items())):
        if isinstance(a, np.ndarray):
            check_layout(name, a)
    # Memory overlaps between any two arrays a call touches (rows and dirty
    # masks included) are checked by the native core on every call.

    if fields:
        inputs["model_fields"] = [a for _, a in fields]
    return BoundRefresh(run, n, inputs, out, written)


def _clock_sensor(refresher: Refresher) -> str:
    """Name of the first clock sensor the plan selects (it needs ``time``)."""
    plan, model = refresher.plan, refresher.model
    return next(
        name
        for i, name in zip(plan.sensor_ids, plan.sensor_names, strict=True)
        if int(model.sensor_type[i]) == mujoco.mjtSensor.mjSENS_CLOCK
    )


def _checked_outputs(refresher: Refresher, out: RefreshOutputs, n: int) -> dict[str, np.ndarray]:
    """The arrays of `out` by name, each one the plan writes and writable."""
    shapes = refresher.output_shapes(n)
    written = {}
    for name, arr in out.arrays().items():
        a = as_array(f"out.{name}", arr)
        if name not in shapes:
            raise ValueError(f"out.{name}: this plan does not write {name}")
        if not a.flags.writeable:
            raise ValueError(f"out.{name}: expected a writable array, got a read-only one")
        written[name] = a
    return written


def _model_field_arrays(
    refresher: Refresher, plan: RefreshPlan, model_fields: Mapping[str, Any] | None, n: int
) -> list[tuple[str, np.ndarray]]:
    """The per-environment field arrays in plan order, checked."""
    declared = plan.model_fields
    given = {} if model_fields is None else model_fields
    if not isinstance(given, Mapping):
        raise TypeError(
            f"model_fields: expected a mapping of field name to array, got {type(given).__name__}"
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
    checked = []
    for name in declared:
        a = as_array(f"model_fields[{name!r}]", given[name])
        shape = (n, *plan.model_field_shape(refresher.model, name))
        if a.shape != shape:
            raise ValueError(
                f"model_fields[{name!r}]: expected shape {shape} (N, like model.{name}), "
                f"got {a.shape}"
            )
        if a.dtype != np.float64:
            raise TypeError(f"model_fields[{name!r}]: expected dtype float64, got {a.dtype}")
        checked.append((name, a))
    return checked
