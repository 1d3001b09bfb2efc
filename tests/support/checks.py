"""Assertions shared by the StateCache and binding tests."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import mujoco
import numpy as np

import mjrefresh
from support.oracle import expected_outputs
from support.sensors import tracked_sensors

ATOL = 1e-12

# cache read method -> the oracle's output it must equal
BODY_READS = {
    "body_pos": "body_pos",
    "body_quat": "body_quat",
    "body_linvel": "body_linvel",
    "body_angvel": "body_angvel",
    "body_pos_rel": "body_pos_rel",
    "body_quat_rel": "body_quat_rel",
}


def assert_reads_equal_forward(
    cache: mjrefresh.StateCache,
    model: mujoco.MjModel,
    states: Mapping[str, np.ndarray],
    rows: Sequence[int] | None = None,
    atol: float = ATOL,
) -> dict[str, np.ndarray]:
    """Every body read (world and relative) and every non-acceleration sensor
    read of `rows` (default all) equals mj_forward at `states` (the cache's
    refresher selects bodies relative to a body). Returns the expected outputs."""
    plan = cache.refresher.plan
    exp = expected_outputs(model, states, plan.body_ids, plan.relative_to_id, rows=rows)
    env_ids = None if rows is None else np.asarray(rows)
    for read, key in BODY_READS.items():
        got = getattr(cache, read)(env_ids=env_ids)
        np.testing.assert_allclose(got, exp[key], rtol=0, atol=atol, err_msg=key)
    for name in tracked_sensors(model):
        s = model.sensor(name)
        cols = slice(int(s.adr[0]), int(s.adr[0] + s.dim[0]))
        np.testing.assert_allclose(
            cache.sensor(name, env_ids=env_ids),
            exp["sensordata"][:, cols],
            rtol=0,
            atol=atol,
            err_msg=name,
        )
    return exp
