"""bind_mujoco_batch against a real MuJoCo >= 4.0 mujoco.batch.Batch
(skipped with older MuJoCo, which has no mujoco.batch)."""

from __future__ import annotations

import numpy as np
import pytest
from support.backends import MUJOCO_BATCH_MISSING, make_mujoco_batch

import mjrefresh

mujoco_batch = pytest.importorskip("mujoco.batch", reason=MUJOCO_BATCH_MISSING)

N = 5


@pytest.fixture()
def batch(legged_model):
    return make_mujoco_batch(legged_model, N, seed=2)


def test_reads_the_batch_state_in_place(legged_model, legged_refresher, batch):
    # (reads after steps and partial resets: test_backends_common.py)
    cache = mjrefresh.bind_mujoco_batch(batch, legged_refresher)
    assert np.shares_memory(cache._inputs["qpos"], batch.state)


def test_on_demand_reads(legged_model, legged_refresher, batch):
    cache = mjrefresh.bind_mujoco_batch(batch, legged_refresher, dtype=np.float32)
    cache.refresh_dirty_rows()
    batch.step(np.array([0, 3]), nstep=2)
    cache.mark_stepped([0, 3])
    cache.reset_stats()
    cache.body_linvel(["foot"], env_ids=[3])
    cache.body_linvel(["foot"], env_ids=[3])
    assert cache.stats.rows_refreshed == 1 and cache.stats.cached_reads == 1
    np.testing.assert_array_equal(cache.dirty, [True, False, False, False, False])


def test_errors(legged_model, legged_refresher, batch):
    with pytest.raises(TypeError, match="batch: expected mujoco.batch.Batch, got dict"):
        mjrefresh.bind_mujoco_batch({}, legged_refresher)
    b = mujoco_batch.Batch(legged_model, 2, nthread=1)
    b.set_models([legged_model, legged_model])
    with pytest.raises(ValueError, match=r"batch: it runs caller models \(set_models\)"):
        mjrefresh.bind_mujoco_batch(b, legged_refresher)
    b = mujoco_batch.Batch(legged_model, 2, nthread=1)
    b.expand("body_pos")[1, 2, 0] += 0.1
    with pytest.raises(
        ValueError, match="batch: model field body_pos is expanded with per-simulation values"
    ):
        mjrefresh.bind_mujoco_batch(b, legged_refresher)
    b = mujoco_batch.Batch(legged_model, 2, nthread=1)
    b.expand("geom_friction")[:] = 0.5  # does not change what a refresh computes
    mjrefresh.bind_mujoco_batch(b, legged_refresher)
