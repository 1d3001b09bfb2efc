"""What every backend binding does alike, tested once per backend (plain
arrays, mjbatch-uni, mujoco.batch on MuJoCo >= 4, a list of MjData; the
`bound_backend` fixture skips those not installed): after real physics steps
every read equals mj_forward with one native call, acceleration-stage sensors
keep the physics solve's values, and a partial backend-side reset touches
only its rows. Backend-specific behaviour is in test_cache.py (arrays) and
test_backends_*.py."""

from __future__ import annotations

import numpy as np
from support.checks import ATOL, assert_reads_equal_forward
from support.models import LEGGED_ACC_SENSORS
from support.sensors import sensor_cols, tracked_sensors


def test_reads_equal_mj_forward_after_steps(bound_backend):
    b, cache, model = bound_backend, bound_backend.cache, bound_backend.model
    acc = sensor_cols(model, LEGGED_ACC_SENSORS)
    tracked = sensor_cols(model, tracked_sensors(model))
    foot = sensor_cols(model, ["foot_linvel_w"])
    assert_reads_equal_forward(cache, model, b.states())  # every row dirty after binding
    for _ in range(4):
        b.step(nsub=3)  # random controls, real physics substeps
        stale = b.sensordata()
        cache.mark_stepped()
        cache.reset_stats()
        exp = assert_reads_equal_forward(cache, model, b.states())
        assert cache.stats.native_calls == 1 and cache.stats.rows_refreshed == b.num_envs
        after = b.sensordata()
        # acceleration-stage sensors keep the values of the physics solve
        np.testing.assert_array_equal(after[:, acc], stale[:, acc])
        if b.writes_backend_sensordata:
            np.testing.assert_allclose(
                after[:, tracked], exp["sensordata"][:, tracked], rtol=0, atol=ATOL
            )
        else:
            np.testing.assert_array_equal(after, stale)  # the backend's outputs are not written
        if b.reads_backend_sensordata:
            for name in LEGGED_ACC_SENSORS:  # readable through the cache, never refreshed
                s = model.sensor(name)
                np.testing.assert_array_equal(
                    cache.sensor(name), after[:, s.adr[0] : s.adr[0] + s.dim[0]]
                )
    assert np.abs(stale[:, acc]).max() > 0
    # the refresh did change stale pos/vel columns (else the test proves nothing)
    assert not np.allclose(stale[:, foot], 0)
    assert not np.allclose(stale[:, foot], cache.sensor("foot_linvel_w"))


def test_partial_reset_isolation(bound_backend):
    b, cache, model = bound_backend, bound_backend.cache, bound_backend.model
    b.step(nsub=2)
    cache.mark_stepped()
    cache.refresh_dirty_rows()
    before = {k: v.copy() for k, v in cache.storage.arrays().items()}
    reset, keep = [1, 3], [0, 2, 4, 5]
    b.reset(reset)  # the backend's own reset and forward
    cache.mark_fresh(reset)
    # body outputs belong to the cache: the reset rows still need a refresh
    np.testing.assert_array_equal(cache.dirty, [False, True, False, True, False, False])
    after = cache.storage.arrays()
    for name, arr in after.items():
        np.testing.assert_array_equal(arr[keep], before[name][keep], err_msg=name)
    assert_reads_equal_forward(cache, model, b.states(), rows=reset)
    for name, arr in cache.storage.arrays().items():
        np.testing.assert_array_equal(arr[keep], before[name][keep], err_msg=name)
    assert not np.allclose(after["body_pos"][reset], before["body_pos"][reset])
