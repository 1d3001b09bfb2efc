"""Sensor selections and their sensordata columns."""

from __future__ import annotations

from collections.abc import Iterable

import mujoco
import numpy as np

POS = mujoco.mjtStage.mjSTAGE_POS
VEL = mujoco.mjtStage.mjSTAGE_VEL
ACC = mujoco.mjtStage.mjSTAGE_ACC


def pos_vel_sensor_names(model: mujoco.MjModel) -> list[str]:
    """Every position/velocity-stage sensor of `model`, by name."""
    return [
        mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_SENSOR, i)
        for i in range(model.nsensor)
        if int(model.sensor_needstage[i]) in (POS, VEL)
    ]


def non_acc_sensors(model: mujoco.MjModel) -> list[int]:
    """Ids of every sensor a refresh can compute (all but the acceleration stage)."""
    return [i for i in range(model.nsensor) if model.sensor_needstage[i] != ACC]


def tracked_sensors(model: mujoco.MjModel) -> list[str]:
    """`non_acc_sensors`, by name."""
    return [model.sensor(i).name for i in non_acc_sensors(model)]


def sensor_columns(model: mujoco.MjModel, name: str) -> slice:
    """The sensordata columns of one sensor."""
    i = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SENSOR, name)
    adr = int(model.sensor_adr[i])
    return slice(adr, adr + int(model.sensor_dim[i]))


def sensor_cols(model: mujoco.MjModel, names: Iterable[str | int]) -> np.ndarray:
    """The sensordata columns of the sensors `names` (names or ids), in order."""
    cols: list[int] = []
    for name in names:
        s = model.sensor(name)
        cols.extend(range(int(s.adr[0]), int(s.adr[0] + s.dim[0])))
    return np.array(cols, dtype=np.int64)


def stage_columns(model: mujoco.MjModel, names: Iterable[str | int], stage: int) -> np.ndarray:
    """Columns of the sensors `names` (names or ids) that `stage` computes."""
    return sensor_cols(model, [n for n in names if model.sensor(n).needstage[0] == stage])


def pos_vel_columns(
    model: mujoco.MjModel, sensor_ids: Iterable[int]
) -> tuple[np.ndarray, np.ndarray]:
    """(columns of every non-velocity-stage sensor, velocity-stage columns) of
    `sensor_ids`."""
    sensor_ids = list(sensor_ids)
    vel = [i for i in sensor_ids if model.sensor_needstage[i] == VEL]
    pos = [i for i in sensor_ids if model.sensor_needstage[i] != VEL]
    return sensor_cols(model, pos), sensor_cols(model, vel)
