"""The embedded models of ``mjrefresh.models`` and random states on them."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import mujoco
import numpy as np

REPO = Path(__file__).resolve().parents[2]


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


def forward_columns(
    model: mujoco.MjModel, qpos: np.ndarray, qvel: np.ndarray, columns: np.ndarray | slice
) -> np.ndarray:
    """The sensordata ``columns`` that mj_forward computes at each row's state
    (a fresh MjData per row, so no cached value can leak between rows)."""
    width = np.zeros(model.nsensordata)[columns].size
    out = np.empty((qpos.shape[0], width))
    for k in range(qpos.shape[0]):
        data = mujoco.MjData(model)
        data.qpos[:] = qpos[k]
        data.qvel[:] = qvel[k]
        mujoco.mj_forward(model, data)
        out[k] = data.sensordata[columns]
    return out
