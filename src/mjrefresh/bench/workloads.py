"""Workloads of the microbenchmark: problems (model, random states, columns),
dirty-row selections and the mj_forward reference."""

from __future__ import annotations

import copy
from dataclasses import dataclass

import mujoco
import numpy as np

from mjrefresh import models
from mjrefresh.bench.states import forward_columns, random_states

#: Workload name -> description. "step": every row dirty (refresh after a
#: vector step); "reset": a few percent of rows dirty (partial reset).
WORKLOADS: dict[str, str] = {
    "step": "all rows dirty (tracked-sensor refresh after a step)",
    "reset": "a few % of rows dirty (refresh after a partial reset)",
}
RESET_FRACTION = 0.03


#: Column selections: the tracking block only, or every position- and
#: velocity-stage sensor column (authored sensors included).
COLUMN_SETS: dict[str, str] = {
    "tracking": "the track_* sensor block",
    "posvel": "every position- and velocity-stage sensor column",
}


@dataclass
class Selection:
    """A user's selection as ``Refresher`` arguments on the user's own model.

    The problem's model is that model with one frame sensor per selected
    output appended (``block_start`` onwards: per body framepos, framequat,
    framelinvel, frameangvel on its xbody; per site framepos and the frame's
    x, y, z axes, i.e. its orientation matrix transposed), so
    that contenders refreshing sensordata columns compute the same values as
    ``Refresher(bodies=..., sites=...)`` writes, and ``mj_forward`` checks both.
    """

    base_model: mujoco.MjModel  # the user's model, what mjrefresh plans on
    bodies: list[int]
    sites: list[int]
    sensor_ranges: list[tuple[int, int]]  # columns of the selected sensors
    block_start: int  # first appended column (= base_model.nsensordata)


@dataclass
class Problem:
    """One model with N random states and the sensordata columns to refresh."""

    name: str
    model: mujoco.MjModel
    qpos: np.ndarray  # (N, nq), C-contiguous
    qvel: np.ndarray  # (N, nv), C-contiguous
    ranges: list[tuple[int, int]]  # disjoint sorted half-open column ranges
    selection: Selection | None = None  # set for a user's bodies/sites selection

    @property
    def n(self) -> int:
        """The number of simulations (rows)."""
        return self.qpos.shape[0]

    @property
    def column_index(self) -> np.ndarray:
        """The selected columns, as one sorted index array."""
        return np.concatenate([np.arange(a, b) for a, b in self.ranges])


def sensor_ranges(model: mujoco.MjModel, sensors: list[int]) -> list[tuple[int, int]]:
    """Merged sorted column ranges of the given sensor ids."""
    ranges: list[tuple[int, int]] = []
    for s in sorted(set(sensors)):
        a = int(model.sensor_adr[s])
        b = a + int(model.sensor_dim[s])
        if ranges and ranges[-1][1] == a:
            ranges[-1] = (ranges[-1][0], b)
        else:
            ranges.append((a, b))
    return ranges


def posvel_ranges(model: mujoco.MjModel) -> list[tuple[int, int]]:
    """Merged column ranges of the sensors that need only the POS or VEL stage."""
    stages = (mujoco.mjtStage.mjSTAGE_POS, mujoco.mjtStage.mjSTAGE_VEL)
    return sensor_ranges(
        model, [s for s in range(model.nsensor) if int(model.sensor_needstage[s]) in stages]
    )


def make_problem(name: str, n: int, seed: int = 0, columns: str = "tracking") -> Problem:
    """Build the embedded model ``name`` with ``n`` random states.

    ``columns`` is a key of :data:`COLUMN_SETS`.
    """
    model = models.MODELS[name]()
    if columns == "tracking":
        layout = models.tracking_layout(model)
        ranges = [(layout.start, layout.stop)]
    elif columns == "posvel":
        ranges = posvel_ranges(model)
    else:
        raise ValueError(f"columns must be one of {sorted(COLUMN_SETS)}, got {columns!r}")
    qpos, qvel = random_states(model, n, seed)
    return Problem(name, model, qpos, qvel, ranges)


def dirty_mask(n: int, workload: str, seed: int = 1) -> np.ndarray:
    """Bool mask of the rows a workload refreshes (all, or RESET_FRACTION of them)."""
    if workload == "step":
        return np.ones(n, dtype=bool)
    if workload == "reset":
        rng = np.random.default_rng(seed)
        k = max(1, int(round(RESET_FRACTION * n)))
        mask = np.zeros(n, dtype=bool)
        mask[rng.choice(n, size=k, replace=False)] = True
        return mask
    raise ValueError(f"workload must be one of {sorted(WORKLOADS)}, got {workload!r}")


def sample_rows(mask: np.ndarray, k: int, seed: int = 2) -> np.ndarray:
    """Up to ``k`` sorted selected rows, always including the first and last."""
    rows = np.flatnonzero(mask)
    if rows.size <= k:
        return rows
    rng = np.random.default_rng(seed)
    picked = rng.choice(rows[1:-1], size=k - 2, replace=False)
    return np.sort(np.concatenate([rows[:1], picked, rows[-1:]]))


def reference(problem: Problem, rows: np.ndarray) -> np.ndarray:
    """The selected sensordata columns that mj_forward computes at each row's state.

    The frame sensors appended for a user's bodies and sites stand for poses
    and velocities a refresh computes whatever the model's sensor flag says,
    so a model that disables sensors (mj_forward then leaves them 0) gets their
    reference from a copy with sensors enabled; the user's own sensor columns
    keep the reference of the model as given (not compared: see
    measure.computed_columns).
    """
    cols = problem.column_index
    qpos, qvel = problem.qpos[rows], problem.qvel[rows]
    sel, model = problem.selection, problem.model
    sensor_bit = int(mujoco.mjtDisableBit.mjDSBL_SENSOR)
    if sel is None or not model.opt.disableflags & sensor_bit:
        return forward_columns(model, qpos, qvel, cols)
    enabled = copy.copy(model)
    enabled.opt.disableflags &= ~sensor_bit
    appended = cols >= sel.block_start
    out = np.empty((rows.size, cols.size))
    out[:, ~appended] = forward_columns(model, qpos, qvel, cols[~appended])
    out[:, appended] = forward_columns(enabled, qpos, qvel, cols[appended])
    return out
