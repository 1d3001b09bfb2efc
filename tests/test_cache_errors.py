"""A MuJoCo error in some rows of a StateCache refresh: those rows stay dirty
(their outputs untouched), the others are refreshed and marked fresh.

The error is real: a passive-force callback compiled from C at test time and
installed in MuJoCo's global ``mjcb_passive``; a refresh that runs
mj_fwdVelocity (for a tendonvel sensor) calls it on the worker threads, and it
calls mju_error for rows whose qpos[0] > 100."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
from support.models import TENDON_VEL_XML as XML
from support.oracle import forward_rows

import mjrefresh


def test_failing_rows_stay_dirty_and_the_others_are_fresh(failing_passive_installed):
    m = mujoco.MjModel.from_xml_string(XML)
    n = 8
    rng = np.random.default_rng(3)
    qpos = np.tile(m.qpos0, (n, 1)) + rng.normal(scale=0.2, size=(n, m.nq))
    qpos[:, 3:7] /= np.linalg.norm(qpos[:, 3:7], axis=1, keepdims=True)
    qvel = rng.normal(size=(n, m.nv))
    with mjrefresh.Refresher(m, bodies=["b"], sensors=["tv", "fp"], num_threads=2) as r:
        cache = mjrefresh.bind_arrays(r, qpos, qvel)
        bad = [2, 5]
        qpos[bad, 0] = 500.0
        with pytest.raises(mjrefresh.RefreshError, match="row 2: .*crafted failure") as info:
            cache.body_pos()
        assert info.value.rows == (2, 5)
        np.testing.assert_array_equal(cache.dirty, np.isin(np.arange(n), bad))
        assert cache.stats.native_calls == 1 and cache.stats.rows_refreshed == n - 2
        good = [0, 1, 3, 4, 6, 7]
        np.testing.assert_array_equal(cache.storage.body_pos[bad], 0)  # untouched
        exp = forward_rows(m, {"qpos": qpos, "qvel": qvel}, rows=good).sensordata
        np.testing.assert_allclose(cache.storage.sensordata[good], exp, rtol=0, atol=1e-12)
        # a read of fresh rows only needs no refresh and does not raise
        cache.body_pos(env_ids=good)
        assert cache.stats.native_calls == 1
        # once the state is fixed, the failing rows are refreshed by the next read
        qpos[bad, 0] = 0.1
        cache.sensor("tv", env_ids=bad)
        assert cache.num_dirty == 0
        exp = forward_rows(m, {"qpos": qpos, "qvel": qvel}, rows=bad).sensordata
        np.testing.assert_allclose(cache.storage.sensordata[bad], exp, rtol=0, atol=1e-12)
