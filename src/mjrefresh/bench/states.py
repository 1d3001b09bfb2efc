"""Random states on a model and the ``mj_forward`` reference the benchmarks
check every refresh against."""

from __future__ import annotations

import mujoco
import numpy as np


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
        try:
            mujoco.mj_forward(model, data)
        except mujoco.FatalError as e:
            raise ForwardError(k, e) from None
        out[k] = data.sensordata[columns]
    return out


class ForwardError(RuntimeError):
    """``mj_forward`` raised MuJoCo's FatalError at row ``row`` of the states
    given (e.g. the model's arena is too small for that state's contacts)."""

    def __init__(self, row: int, error: Exception) -> None:
        self.row = row
        self.mujoco_message = " ".join(str(error).split())  # MuJoCo's lines, on one
        super().__init__(f"mj_forward failed at row {row}: {self.mujoco_message}")
