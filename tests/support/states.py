"""Random non-zero states and per-environment model-field values."""

from __future__ import annotations

from collections.abc import Sequence

import mujoco
import numpy as np

FREE = mujoco.mjtJoint.mjJNT_FREE
BALL = mujoco.mjtJoint.mjJNT_BALL


def random_states(model: mujoco.MjModel, n: int, seed: int = 0) -> dict[str, np.ndarray]:
    """Random non-zero states: qpos around qpos0 with random unit quaternions,
    random qvel, random mocap poses and times."""
    rng = np.random.default_rng(seed)
    qpos = np.tile(model.qpos0, (n, 1)) + rng.normal(scale=0.5, size=(n, model.nq))
    for j in range(model.njnt):
        adr = int(model.jnt_qposadr[j])
        jtype = int(model.jnt_type[j])
        if jtype == FREE:
            q = rng.normal(size=(n, 4))
            qpos[:, adr + 3 : adr + 7] = q / np.linalg.norm(q, axis=1, keepdims=True)
        elif jtype == BALL:
            q = rng.normal(size=(n, 4))
            qpos[:, adr : adr + 4] = q / np.linalg.norm(q, axis=1, keepdims=True)
    qvel = rng.normal(scale=1.5, size=(n, model.nv))
    mocap_pos = rng.normal(size=(n, model.nmocap, 3))
    mq = rng.normal(size=(n, model.nmocap, 4))
    mocap_quat = mq / np.linalg.norm(mq, axis=2, keepdims=True)
    time = rng.uniform(0, 10, size=n)
    return {
        "qpos": qpos,
        "qvel": qvel,
        "mocap_pos": mocap_pos,
        "mocap_quat": mocap_quat,
        "time": time,
    }


def random_states_unnormalised(m: mujoco.MjModel, n: int, seed: int) -> dict[str, np.ndarray]:
    """Random non-zero states whose quaternions in qpos and mocap are NOT unit
    (MuJoCo normalises them, so must the fast engine)."""
    rng = np.random.default_rng(seed)
    qpos = np.tile(m.qpos0, (n, 1)) + rng.normal(0, 0.7, (n, m.nq))
    for j in range(m.njnt):
        adr = m.jnt_qposadr[j]
        if m.jnt_type[j] == FREE:
            adr += 3
        if m.jnt_type[j] in (FREE, BALL):
            q = rng.normal(0, 1, (n, 4))
            qpos[:, adr : adr + 4] = (
                q * rng.uniform(0.5, 2.0, (n, 1)) / np.linalg.norm(q, axis=1, keepdims=True)
            )
    state = {
        "qpos": qpos,
        "qvel": rng.normal(0, 1.5, (n, m.nv)),
        "time": rng.uniform(-1, 1, n),
    }
    if m.nmocap:
        state["mocap_pos"] = rng.normal(0, 1, (n, m.nmocap, 3))
        state["mocap_quat"] = rng.normal(0, 1, (n, m.nmocap, 4))
    return state


def random_state(model: mujoco.MjModel, rng: np.random.Generator, d: mujoco.MjData) -> None:
    """Reset `d` to a random non-zero state (unit quaternions, a free base
    near standing height, non-trivial velocities, random mocap poses)."""
    mujoco.mj_resetData(model, d)
    d.qpos[:] = model.qpos0 + rng.normal(scale=0.2, size=model.nq)
    for j in range(model.njnt):
        adr = model.jnt_qposadr[j]
        if model.jnt_type[j] == FREE:
            d.qpos[adr + 2] = 0.38 + rng.uniform(-0.03, 0.03)
            q = np.array([1.0, 0, 0, 0]) + rng.normal(scale=0.15, size=4)
            d.qpos[adr + 3 : adr + 7] = q / np.linalg.norm(q)
        elif model.jnt_type[j] == BALL:
            q = rng.normal(size=4)
            d.qpos[adr : adr + 4] = q / np.linalg.norm(q)
    d.qvel[:] = rng.normal(scale=1.0, size=model.nv)
    if model.nmocap:
        d.mocap_pos[:] = rng.normal(scale=0.3, size=d.mocap_pos.shape)
        q = rng.normal(size=(model.nmocap, 4))
        d.mocap_quat[:] = q / np.linalg.norm(q, axis=1, keepdims=True)


def state_inputs(states: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The optional state inputs of a refresh of `states` (mocap pose, time),
    as keyword arguments."""
    return dict(mocap_pos=states["mocap_pos"], mocap_quat=states["mocap_quat"], time=states["time"])


def states_of_datas(datas: Sequence[mujoco.MjData]) -> dict[str, np.ndarray]:
    """The state of each MjData, stacked like `random_states`."""
    return {
        "qpos": np.array([d.qpos for d in datas]),
        "qvel": np.array([d.qvel for d in datas]),
        "mocap_pos": np.array([d.mocap_pos for d in datas]),
        "mocap_quat": np.array([d.mocap_quat for d in datas]),
        "time": np.array([d.time for d in datas]),
    }


def random_fields(
    model: mujoco.MjModel, names: Sequence[str], n: int, seed: int
) -> dict[str, np.ndarray]:
    """Per-row values of the model fields `names`: the template's values with
    random perturbations (unit quaternions and axes stay unit; masses and
    inertias stay positive)."""
    rng = np.random.default_rng(seed)
    out = {}
    for name in names:
        base = np.array(getattr(model, name), dtype=np.float64)
        vals = np.repeat(base[None], n, axis=0)
        if name.endswith("quat"):
            vals = vals + rng.normal(scale=0.2, size=vals.shape)
            vals /= np.linalg.norm(vals, axis=-1, keepdims=True)
        elif name == "jnt_axis":
            vals = vals + rng.normal(scale=0.3, size=vals.shape)
            vals /= np.linalg.norm(vals, axis=-1, keepdims=True)
        elif name in ("body_mass", "body_inertia"):
            vals = vals * rng.uniform(0.5, 1.5, size=vals.shape)
        elif name == "sensor_cutoff":
            vals = rng.uniform(0.05, 2.0, size=vals.shape) * (rng.random(vals.shape) < 0.7)
        else:  # positions
            vals = vals + rng.normal(scale=0.05, size=vals.shape)
        out[name] = vals
    return out
