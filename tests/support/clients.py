"""The real client packages the integration tests drive: unisim-core's MuJoCo
backend (built with its public factory) and mujoco-uni-runtime's pools.
Each is optional; the skip reasons say how to install it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mujoco
import numpy as np

from mjrefresh import models

UNISIM_MISSING = (
    "unisim-core is not installed: pip install 'unisim-core[mujoco]==2.2.0' torch==2.13.0 "
    "(CI installs it with MuJoCo 3.11.0)"
)
MUJOCO_UNI_MISSING = (
    "mujoco-uni-runtime is not installed: pip install mujoco-uni-runtime==0.5.0 "
    "(CI installs it with MuJoCo 3.11.0)"
)

#: The quadruped's bodies unisim tracks in the tests (it injects their
#: track_* sensors itself) and the base they are tracked relative to.
TRACKED = ("base", "FL_thigh", "FL_calf", "RR_hip", "RR_calf")
BASE = "base"
INTEGRATION = mujoco.mjtState.mjSTATE_INTEGRATION


def authored_quadruped_file(directory: Path) -> Path:
    """The embedded quadruped with its authored sensors only (unisim adds the
    tracking sensors), written as MJCF for unisim's ``SceneCfg(model_file=)``."""
    path = directory / "quadruped_authored.xml"
    path.write_text(models.quadruped_spec(tracking=False).to_xml())
    return path


def unisim_backend(model_file: Path, num_envs: int, np_dtype: Any) -> Any:
    """unisim's MuJoCo backend from its public factory, tracked bodies on."""
    import unisim
    from unisim.scene import SceneCfg

    backend = unisim.create_backend(
        "mujoco",
        SceneCfg(model_file=str(model_file)),
        num_envs=num_envs,
        sim_dt=0.002,
        body_state_required=True,
        tracked_body_names=list(TRACKED),
        base_name=BASE,
        np_dtype=np_dtype,
    )
    backend.materialize()
    return backend


def forward_sensordata(model: mujoco.MjModel, states: np.ndarray, spec: int) -> np.ndarray:
    """mj_setState + mj_forward on each row of `states` -> sensordata rows."""
    d = mujoco.MjData(model)
    out = np.empty((len(states), model.nsensordata))
    for k, row in enumerate(states):
        mujoco.mj_setState(model, d, row, spec)
        mujoco.mj_forward(model, d)
        out[k] = d.sensordata
    return out


def acc_columns(model: mujoco.MjModel) -> np.ndarray:
    """Mask of the sensordata columns of acceleration-stage sensors."""
    mask = np.zeros(model.nsensordata, dtype=bool)
    for i in range(model.nsensor):
        if model.sensor_needstage[i] == mujoco.mjtStage.mjSTAGE_ACC:
            mask[model.sensor_adr[i] : model.sensor_adr[i] + model.sensor_dim[i]] = True
    return mask
