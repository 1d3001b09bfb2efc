"""Models, random states, dirty-row selections and the mj_forward reference."""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import mujoco
import numpy as np

REPO = Path(__file__).resolve().parents[1]

#: Workload name -> description. "step": every row dirty (refresh after a
#: vector step); "reset": a few percent of rows dirty (partial reset).
WORKLOADS: dict[str, str] = {
    "step": "all rows dirty (tracked-sensor refresh after a step)",
    "reset": "a few % of rows dirty (refresh after a partial reset)",
}
RESET_FRACTION = 0.03


def load_models_module() -> ModuleType:
    """``mjrefresh.models``, from the installed package or else from src/.

    The file is self-contained, so it is loaded directly when the package
    (whose native core may be missing) cannot be imported.
    """
    try:
        from mjrefresh import models  # type: ignore[import-not-found]

        return models
    except Exception:  # noqa: BLE001 - any import failure: fall back to the file
        pass
    name = "_mjrefresh_models_standalone"
    if name in sys.modules:
        return sys.modules[name]
    path = REPO / "src" / "mjrefresh" / "models.py"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


#: Column selections: the tracking block only, or every position- and
#: velocity-stage sensor column (authored sensors included).
COLUMN_SETS: dict[str, str] = {
    "tracking": "the track_* sensor block",
    "posvel": "every position- and velocity-stage sensor column",
}


@dataclass
class Problem:
    """One model with N random states and the sensordata columns to refresh."""

    name: str
    model: mujoco.MjModel
    qpos: np.ndarray  # (N, nq), C-contiguous
    qvel: np.ndarray  # (N, nv), C-contiguous
    ranges: list[tuple[int, int]]  # disjoint sorted half-open column ranges

    @property
    def n(self) -> int:
        return self.qpos.shape[0]

    @property
    def column_index(self) -> np.ndarray:
        """The selected columns, as one sorted index array."""
        return np.concatenate([np.arange(a, b) for a, b in self.ranges])


def posvel_ranges(model: mujoco.MjModel) -> list[tuple[int, int]]:
    """Merged column ranges of the sensors that need only the POS or VEL stage."""
    ranges: list[tuple[int, int]] = []
    for s in range(model.nsensor):
        if int(model.sensor_needstage[s]) not in (
            mujoco.mjtStage.mjSTAGE_POS,
            mujoco.mjtStage.mjSTAGE_VEL,
        ):
            continue
        a = int(model.sensor_adr[s])
        b = a + int(model.sensor_dim[s])
        if ranges and ranges[-1][1] == a:
            ranges[-1] = (ranges[-1][0], b)
        else:
            ranges.append((a, b))
    return ranges


def random_states(model: mujoco.MjModel, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Random non-zero states: qpos around qpos0 with unit quaternions, random qvel."""
    rng = np.random.default_rng(seed)
    qpos = model.qpos0 + 0.3 * rng.standard_normal((n, model.nq))
    for j in range(model.njnt):
        adr = int(model.jnt_qposadr[j])
        jtype = int(model.jnt_type[j])
        if jtype == mujoco.mjtJoint.mjJNT_FREE:
            qpos[:, adr : adr + 3] = model.qpos0[adr : adr + 3] + 0.5 * rng.standard_normal((n, 3))
            quat = slice(adr + 3, adr + 7)
        elif jtype == mujoco.mjtJoint.mjJNT_BALL:
            quat = slice(adr, adr + 4)
        else:
            continue
        qpos[:, quat] = rng.standard_normal((n, 4))
        qpos[:, quat] /= np.linalg.norm(qpos[:, quat], axis=1, keepdims=True)
    qvel = rng.standard_normal((n, model.nv))
    return np.ascontiguousarray(qpos), np.ascontiguousarray(qvel)


def make_problem(name: str, n: int, seed: int = 0, columns: str = "tracking") -> Problem:
    """Build the embedded model ``name`` with ``n`` random states.

    ``columns`` is a key of :data:`COLUMN_SETS`.
    """
    models = load_models_module()
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
    """The selected sensordata columns that mj_forward computes at each row's state
    (a fresh MjData per row, so no cached value can leak between rows)."""
    model = problem.model
    cols = problem.column_index
    out = np.empty((len(rows), cols.size))
    for k, i in enumerate(rows):
        data = mujoco.MjData(model)
        data.qpos[:] = problem.qpos[i]
        data.qvel[:] = problem.qvel[i]
        mujoco.mj_forward(model, data)
        out[k] = data.sensordata[cols]
    return out
