"""The per-row Python refresh both benchmarks use as their baseline.

For each row: copy ``qpos``/``qvel`` into a scratch ``MjData``, run MuJoCo's
five position/velocity stage functions (``mj_kinematics``, ``mj_comPos``,
``mj_comVel``, ``mj_sensorPos``, ``mj_sensorVel``) and copy sensordata columns
out -- what a backend did before mjrefresh.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import mujoco
import numpy as np

#: One copy-out: (columns of the output row, columns of the scratch sensordata).
Copy = tuple[slice, slice]


def python_stage_loop(
    model: mujoco.MjModel,
    data: mujoco.MjData,
    qpos: np.ndarray,
    qvel: np.ndarray,
    out: np.ndarray,
    copies: Sequence[Copy],
) -> Callable[[Sequence[int]], None]:
    """A function refreshing the given rows of ``out`` from ``qpos``/``qvel``.

    ``out[i, dst] = data.sensordata[src]`` for every ``(dst, src)`` in
    ``copies`` after row ``i``'s stage functions ran on ``data``. The MuJoCo
    functions and arrays are bound once, outside the timed loop.
    """
    kinematics, com_pos, com_vel = mujoco.mj_kinematics, mujoco.mj_comPos, mujoco.mj_comVel
    sensor_pos, sensor_vel = mujoco.mj_sensorPos, mujoco.mj_sensorVel
    sd = data.sensordata
    copies = list(copies)

    def run(rows: Sequence[int]) -> None:
        for i in rows:
            data.qpos[:] = qpos[i]
            data.qvel[:] = qvel[i]
            kinematics(model, data)
            com_pos(model, data)
            com_vel(model, data)
            sensor_pos(model, data)
            sensor_vel(model, data)
            for dst, src in copies:
                out[i, dst] = sd[src]

    return run
