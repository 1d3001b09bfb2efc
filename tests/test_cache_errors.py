"""A MuJoCo error in some rows of a StateCache refresh: those rows stay dirty
(their outputs untouched), the others are refreshed and marked fresh.

The error is real (support/failing_rows.py): rows whose state puts hundreds
of contacts in a model with a small arena overflow mj_collision's stack on
the worker threads, as mj_forward does at the same state."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
from support.failing_rows import OVERFLOW_XML, fix_rows, overflow_states
from support.oracle import forward_rows

import mjrefresh


def test_failing_rows_stay_dirty_and_the_others_are_fresh():
    m = mujoco.MjModel.from_xml_string(OVERFLOW_XML)
    n = 8
    states = overflow_states(n, [], seed=3)
    qpos, qvel = states["qpos"], states["qvel"]
    with mjrefresh.Refresher(m, bodies=["b"], sensors=["tv", "fp", "adv"], num_threads=2) as r:
        cache = mjrefresh.bind_arrays(r, qpos, qvel)
        bad = [2, 5]
        qpos[bad, 0] = 0.0  # every sphere on every other: the arena overflows
        with pytest.raises(mjrefresh.RefreshError, match="row 2: mj_stackAlloc") as info:
            cache.body_pos()
        assert info.value.rows == (2, 5)
        np.testing.assert_array_equal(cache.dirty, np.isin(np.arange(n), bad))
        assert cache.stats.native_calls == 1 and cache.stats.rows_refreshed == n - 2
        good = [0, 1, 3, 4, 6, 7]
        np.testing.assert_array_equal(cache.storage.body_pos[bad], 0)  # untouched
        exp = forward_rows(m, {"qpos": qpos, "qvel": qvel}, rows=good).sensordata
        np.testing.assert_array_equal(cache.storage.sensordata[good], exp)
        # a read of fresh rows only needs no refresh and does not raise
        cache.body_pos(env_ids=good)
        assert cache.stats.native_calls == 1
        # once the state is fixed, the failing rows are refreshed by the next read
        fix_rows(qpos, bad)
        cache.sensor("tv", env_ids=bad)
        assert cache.num_dirty == 0
        exp = forward_rows(m, {"qpos": qpos, "qvel": qvel}, rows=bad).sensordata
        np.testing.assert_array_equal(cache.storage.sensordata[bad], exp)
