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


RAY_XML = """<mujoco><worldbody><geom type="plane" size="1 1 1"/>
  <body pos="0 0 1"><freejoint/><geom size=".1"/><site name="s" pos=".05 0 0" quat="1 1 0 0"/>
  </body></worldbody><sensor><rangefinder name="rf" site="s"/></sensor></mujoco>"""


@pytest.mark.parametrize("num_threads", [1, 2])
def test_the_message_is_mujocos_own_with_the_function_it_names(num_threads):
    # An error raised with mjERROR names its function apart from the text;
    # the message dropped it ("vector length is too small", not "mj_ray: ...").
    ray = mujoco.MjModel.from_xml_string(RAY_XML)
    ray.site_quat[0] = 0  # a zero rangefinder direction
    d = mujoco.MjData(ray)
    with pytest.raises(mujoco.FatalError) as theirs:
        mujoco.mj_forward(ray, d)
    assert str(theirs.value) == "mj_ray: vector length is too small"
    with mjrefresh.Refresher(ray, sensors=["rf"], num_threads=num_threads) as r:
        with pytest.raises(
            mjrefresh.RefreshError,
            match=r"^MuJoCo error while refreshing row 0: mj_ray: vector length is too small "
            r"\(2 other rows also failed\)",
        ):
            r.refresh(np.arange(3), np.tile(ray.qpos0, (3, 1)), np.zeros((3, ray.nv)), r.outputs(3))
