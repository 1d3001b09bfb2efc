"""mju_error raised inside a stage function on a worker thread becomes a
RefreshError naming the first failing row; the other rows are refreshed, the
failing rows' outputs are left as they were, the scratch state is restored,
and the mujoco bindings' own error reporting keeps working.

The error source is real (support/failing_rows.py): rows whose state puts
hundreds of contacts in a model with a small arena overflow mj_collision's
stack, as mj_forward does at the same state."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
from support.failing_rows import OVERFLOW_MESSAGE, OVERFLOW_XML, fix_rows, overflow_states
from support.oracle import forward_rows

import mjrefresh

N = 200
BAD = [17, 18, 150]
SENSORS = ["tv", "fp", "adv"]


@pytest.fixture(scope="module")
def m():
    return mujoco.MjModel.from_xml_string(OVERFLOW_XML)


@pytest.mark.parametrize("num_threads", [1, 2, 7])
def test_failing_rows_are_reported_and_the_rest_refreshed(m, num_threads):
    states = overflow_states(N, BAD, seed=11)
    good = np.setdiff1d(np.arange(N), BAD)
    ref = forward_rows(m, states, rows=good)
    r = mjrefresh.Refresher(m, sensors=SENSORS, num_threads=num_threads)
    out = r.outputs(N)
    out.sensordata.fill(-5.0)
    with pytest.raises(
        mjrefresh.RefreshError,
        match=rf"(?s)MuJoCo error while refreshing row 17: {OVERFLOW_MESSAGE}.* \(2 other rows "
        r"also failed\); all other rows were refreshed",
    ) as info:
        r.refresh(np.arange(N), states["qpos"], states["qvel"], out)
    assert info.value.rows == tuple(BAD)
    assert (out.sensordata[BAD] == -5.0).all()
    np.testing.assert_array_equal(out.sensordata[good], ref.sensordata)
    # Scratch state restored: the next call (good states) is exact everywhere.
    fix_rows(states["qpos"], BAD)
    r.refresh(np.arange(N), states["qpos"], states["qvel"], out)
    np.testing.assert_array_equal(out.sensordata, forward_rows(m, states).sensordata)


def test_bindings_error_reporting_still_works(m):
    r = mjrefresh.Refresher(m, sensors=SENSORS, num_threads=2)
    d = mujoco.MjData(m)
    with pytest.raises(mujoco.FatalError, match="stack overflow"):
        mujoco.mj_forward(m, d)  # qpos0: every sphere on every other
    states = overflow_states(N, [5], seed=3)
    with pytest.raises(mjrefresh.RefreshError, match="row 5: mj_stackAlloc"):
        r.refresh(np.arange(N), states["qpos"], states["qvel"], r.outputs(N))
    with pytest.raises(mujoco.FatalError, match="stack overflow"):
        mujoco.mj_forward(m, d)
