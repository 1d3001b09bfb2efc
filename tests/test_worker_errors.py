"""mju_error raised inside a stage function on a worker thread becomes a
RefreshError naming the first failing row; the other rows are refreshed, the
failing rows' outputs are left as they were, the scratch state is restored,
and the mujoco bindings' own error reporting keeps working.

The error source is real: a passive-force callback compiled from C at test
time and installed in MuJoCo's global ``mjcb_passive`` slot; a refresh that
needs mj_fwdVelocity (a tendonvel sensor) runs it on the worker threads, and
it calls mju_error for rows whose qpos[0] is > 100."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
from support.models import TENDON_VEL_XML as XML
from support.oracle import forward_rows
from support.states import random_states

import mjrefresh


@pytest.fixture(scope="module")
def m():
    return mujoco.MjModel.from_xml_string(XML)


@pytest.fixture(scope="module")
def states(m):
    return random_states(m, 200, seed=11)


@pytest.fixture(scope="module")
def ref(m, states):
    return forward_rows(m, states)  # computed before the callback is installed


@pytest.mark.parametrize("num_threads", [1, 2, 7])
def test_failing_rows_are_reported_and_the_rest_refreshed(
    m, states, ref, failing_passive_installed, num_threads
):
    bad = np.array([17, 18, 150])
    qpos = states["qpos"].copy()
    qpos[bad, 0] = 1000.0 + bad
    r = mjrefresh.Refresher(m, sensors=["tv", "fp"], num_threads=num_threads)
    out = r.outputs(200)
    out.sensordata.fill(-5.0)
    with pytest.raises(
        mjrefresh.RefreshError,
        match=r"MuJoCo error while refreshing row 17: crafted failure at "
        r"qpos\[0\]=1017 \(2 other rows also failed\); all other rows were refreshed",
    ) as info:
        r.refresh(np.arange(200), qpos, states["qvel"], out)
    assert info.value.rows == (17, 18, 150)
    assert (out.sensordata[bad] == -5.0).all()
    good = np.setdiff1d(np.arange(200), bad)
    np.testing.assert_array_equal(out.sensordata[good], ref.sensordata[good])
    # Scratch state restored: the next call (good states) is exact everywhere.
    r.refresh(np.arange(200), states["qpos"], states["qvel"], out)
    np.testing.assert_array_equal(out.sensordata, ref.sensordata)


def test_bindings_error_reporting_still_works(m, states, failing_passive_installed):
    r = mjrefresh.Refresher(m, sensors=["tv"], num_threads=2)
    d = mujoco.MjData(m)
    d.qpos[0] = 500.0
    with pytest.raises(mujoco.FatalError, match="crafted failure"):
        mujoco.mj_forward(m, d)
    qpos = states["qpos"].copy()
    qpos[5, 0] = 500.0
    with pytest.raises(mjrefresh.RefreshError, match="row 5: crafted failure"):
        r.refresh(np.arange(200), qpos, states["qvel"], r.outputs(200))
    with pytest.raises(mujoco.FatalError, match="crafted failure"):
        mujoco.mj_forward(m, d)
