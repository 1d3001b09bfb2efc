"""Subtree momenta in the fast engine: sensors whose values come from one
pass over the union of their subtrees (subtreeangmom on the template's
masses and inertias) against mj_forward, for selections that make the union
a forest (disjoint limbs), a nest (a limb inside the whole tree), the world
body's subtree and mixed subtree types, with rows run alone and in SIMD
pairs or quads.
Tolerances as in test_fast_engine (1e-12 positions, 1e-10 velocities and
momenta)."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
from support.engine_models import model
from support.oracle import expected_outputs
from support.states import random_states_unnormalised as random_states

import mjrefresh

pytestmark = pytest.mark.parity

S = mujoco.mjtSensor
POS_TOL = 1e-12
VEL_TOL = 1e-10
NROWS = 2001  # odd: the last row runs alone, the others in quads (AVX2 build) or pairs


def subtree_sensors(m, bodies, types=(S.mjSENS_SUBTREEANGMOM,)):
    """Ids of the zoo's uncut subtree sensors of `types` on `bodies`."""
    out, wanted = [], {int(t) for t in types}
    for i in range(m.nsensor):
        body = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, m.sensor_objid[i])
        if int(m.sensor_type[i]) in wanted and body in bodies and m.sensor_cutoff[i] == 0:
            out.append(i)
    return out


SELECTIONS = {
    "forest": (("arm2", "leg", "pendulum"), (S.mjSENS_SUBTREEANGMOM,)),
    "nest": (("hand", "base", "arm2"), (S.mjSENS_SUBTREEANGMOM,)),
    "world": (("world", "leg"), (S.mjSENS_SUBTREEANGMOM,)),
    "still": (("fixed", "target"), (S.mjSENS_SUBTREEANGMOM,)),
    "mixed": (
        ("leg", "base", "pendulum"),
        (S.mjSENS_SUBTREEANGMOM, S.mjSENS_SUBTREECOM, S.mjSENS_SUBTREELINVEL),
    ),
}


@pytest.mark.parametrize("name", SELECTIONS)
def test_subtree_selections_match_mj_forward(name):
    m = model("zoo")
    bodies, types = SELECTIONS[name]
    sensors = subtree_sensors(m, bodies, types)
    assert len(sensors) == len(bodies) * len(types)
    state = random_states(m, NROWS, seed=3)
    r = mjrefresh.Refresher(m, sensors=sensors, num_threads=1, engine="fast")
    out = r.outputs(NROWS)
    r.refresh(np.arange(NROWS), **state, out=out)
    ref = expected_outputs(m, state)["sensordata"]
    for i in sensors:
        cols = slice(m.sensor_adr[i], m.sensor_adr[i] + m.sensor_dim[i])
        tol = POS_TOL if int(m.sensor_type[i]) == int(S.mjSENS_SUBTREECOM) else VEL_TOL
        err = np.max(np.abs(out.sensordata[:, cols] - ref[:, cols]))
        assert err <= tol, (mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_SENSOR, i), err)
    # a row alone (odd rows one at a time) gives the bits it gets in a pair
    alone = r.outputs(NROWS)
    for row in range(1, NROWS, 2):
        r.refresh(np.array([row]), **state, out=alone)
    np.testing.assert_array_equal(alone.sensordata[1::2], out.sensordata[1::2])
    r.close()
