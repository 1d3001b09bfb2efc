"""States and the arguments of a valid call: random states, the optional
state keywords, sentinel-filled outputs, valid refresh arguments; long
(tiled) and sleeping states, and degenerate values written into them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import mujoco
import numpy as np

import mjrefresh
from support.states import random_states

SENTINEL = -1234.5  # exact in float16/32/64: an untouched output still holds it


def make_states(model: mujoco.MjModel, n: int, seed: int) -> dict[str, np.ndarray]:
    """Random states (unit quaternions), C-contiguous float64: qpos, qvel,
    mocap_pos, mocap_quat, time."""
    st = random_states(model, max(n, 1), seed=seed)
    return {k: np.ascontiguousarray(v[:n]) for k, v in st.items()}


def state_kwargs(
    model: mujoco.MjModel, states: Mapping[str, np.ndarray], time: bool = False
) -> dict[str, Any]:
    """The optional state keywords of a refresh: mocap arrays where the model
    has mocap bodies, time when asked."""
    kw: dict[str, Any] = {}
    if model.nmocap:
        kw["mocap_pos"] = states["mocap_pos"]
        kw["mocap_quat"] = states["mocap_quat"]
    if time:
        kw["time"] = states["time"]
    return kw


def sentinel_outputs(
    r: mjrefresh.Refresher, n: int, dtype: Any = np.float64, **arrays: Any
) -> mjrefresh.RefreshOutputs:
    """`r.outputs(n, dtype, **arrays)` with every array filled with SENTINEL."""
    out = r.outputs(n, dtype=dtype, **arrays)
    for a in out.arrays().values():
        a[...] = SENTINEL
    return out


def valid_args(
    r: mjrefresh.Refresher, states: Mapping[str, np.ndarray], n: int, dtype: Any = np.float64
) -> dict[str, Any]:
    """Valid keyword arguments of a refresh of all `n` rows (sentinel outputs)."""
    model = r.model
    args: dict[str, Any] = {
        "rows": np.arange(n),
        "qpos": states["qpos"],
        "qvel": states["qvel"],
        "out": sentinel_outputs(r, n, dtype),
    }
    args.update(state_kwargs(model, states, time=r.plan.needs_time))
    if r.plan.model_fields:  # the template's values in every row
        args["model_fields"] = {
            f: np.repeat(np.asarray(getattr(model, f))[None], n, axis=0)
            for f in r.plan.model_fields
        }
    return args


def tiled_states(states: Mapping[str, np.ndarray], reps: int) -> dict[str, np.ndarray]:
    """`states` repeated `reps` times along the rows (a long call, cheaply)."""
    return {
        k: np.ascontiguousarray(np.tile(v, (reps,) + (1,) * (v.ndim - 1)))
        for k, v in states.items()
    }


def sleeping_states(model: mujoco.MjModel, n: int, seed: int) -> dict[str, np.ndarray]:
    """States of a sleep-enabled model after random numbers of physics steps
    (some trees asleep), then non-zero velocities written into half the rows."""
    rng = np.random.default_rng(seed)
    st = make_states(model, n, seed)
    d = mujoco.MjData(model)
    for i in range(n):
        mujoco.mj_resetData(model, d)
        d.qvel[:] = rng.normal(scale=0.05, size=model.nv)
        for _ in range(int(rng.integers(0, 400))):
            mujoco.mj_step(model, d)
        st["qpos"][i] = d.qpos
        st["qvel"][i] = d.qvel
        if i % 2:
            st["qvel"][i] += rng.normal(scale=1.0, size=model.nv)
    return st


def set_quaternions(
    model: mujoco.MjModel, args: dict[str, Any], row: int, q: Sequence[float]
) -> None:
    """Write `q` into every free/ball joint quaternion (and mocap quaternion) of
    `row` of the arrays in `args` (copies them first)."""
    qpos = args["qpos"] = np.array(args["qpos"])
    for j in range(model.njnt):
        adr = int(model.jnt_qposadr[j])
        if int(model.jnt_type[j]) == mujoco.mjtJoint.mjJNT_FREE:
            qpos[row, adr + 3 : adr + 7] = q
        elif int(model.jnt_type[j]) == mujoco.mjtJoint.mjJNT_BALL:
            qpos[row, adr : adr + 4] = q
    if model.nmocap and args.get("mocap_quat") is not None:
        mq = args["mocap_quat"] = np.array(args["mocap_quat"])
        mq[row] = q


def degenerate_field_row(fields: dict[str, np.ndarray], row: int, scale: float) -> None:
    """Row `row` of every per-environment field scaled by `scale` (zero or
    tiny or huge quaternions, masses, axes and offsets; finite)."""
    for k, v in fields.items():
        fields[k] = np.array(v)
        fields[k][row] *= scale
