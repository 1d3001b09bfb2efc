"""Parity on third-party robots this project's own models do not resemble.

Every MuJoCo model gymnasium ships (ant, humanoid, walker, pusher, ...; plus
every XML under ``MJREFRESH_ZOO_DIRS``), with a position/velocity sensor of
each kind a refresh computes on every named body, joint, site, actuator and
tendon (support.zoo), refreshed for every body (relative to body 1), every
site and every non-acceleration sensor at random non-zero states, by both
engines at 1, 2 and more threads than rows: the exact engine equals
mj_forward bit for bit, the fast engine to its tolerances (1e-12 poses,
1e-10 velocities) on the sensors it covers, and names the first one it does
not.
"""

from __future__ import annotations

import numpy as np
import pytest
from support.oracle import expected_outputs
from support.runs import refresh_all
from support.sensors import non_acc_sensors, pos_vel_columns
from support.states import random_states
from support.zoo import (
    BODY_SENSORS,
    GYMNASIUM_MISSING,
    SITE_SENSORS,
    S,
    gymnasium_assets,
    with_sensors,
    zoo_paths,
)

import mjrefresh
from mjrefresh.plan import fast_uncovered

pytestmark = [
    pytest.mark.parity,
    pytest.mark.skipif(gymnasium_assets() is None, reason=GYMNASIUM_MISSING),
]

NROWS = 7
THREADS = (1, 2, NROWS + 2)
POS_TOL = 1e-12
VEL_TOL = 1e-10
PATHS = zoo_paths()


def _label(path) -> str:
    return f"{path.parent.name}/{path.name}"


@pytest.fixture(scope="module", params=PATHS, ids=[_label(p) for p in PATHS])
def robot(request):
    m = with_sensors(request.param)
    if m is None:
        pytest.skip(f"{_label(request.param)} is not a whole model (it does not compile alone)")
    state = random_states(m, NROWS, seed=m.nq + m.nbody)
    bodies, sites = list(range(1, m.nbody)), list(range(m.nsite))
    rel = 1 if m.nbody > 1 else None
    expect = expected_outputs(m, state, bodies, rel, sites)
    return m, state, bodies, rel, sites, expect


def _refresh(m, state, engine, threads, bodies, rel, sites, sensors):
    kw = {"bodies": bodies, "rel": rel, "sites": sites, "sensors": sensors, "threads": threads}
    return refresh_all(m, state, engine, **kw)[1]


@pytest.mark.parametrize("threads", THREADS)
def test_exact_engine_equals_mj_forward_bit_for_bit(robot, threads):
    m, state, bodies, rel, sites, expect = robot
    sensors = non_acc_sensors(m)
    out = _refresh(m, state, "exact", threads, bodies, rel, sites, sensors)
    cols = np.concatenate([np.zeros(0, int), *pos_vel_columns(m, sensors)])
    for key, got in out.arrays().items():
        want = expect[key]
        if key == "sensordata":
            got, want = got[:, cols], want[:, cols]
        np.testing.assert_array_equal(got, want, err_msg=key)


@pytest.mark.parametrize("threads", THREADS)
def test_fast_engine_matches_mj_forward_on_what_it_covers(robot, threads):
    m, state, bodies, rel, sites, expect = robot
    covered = [i for i in non_acc_sensors(m) if fast_uncovered(m, [i]) is None]
    refused = sorted(set(non_acc_sensors(m)) - set(covered))
    if refused:
        label = m.sensor(refused[0]).name or f"#{refused[0]}"
        with pytest.raises(mjrefresh.PlanError, match=f"sensor '{label}'"):
            mjrefresh.Refresher(m, sensors=refused, engine="fast")
    out = _refresh(m, state, "fast", threads, bodies, rel, sites, covered)
    for key, got in out.arrays().items():
        if key != "sensordata":
            tol = VEL_TOL if key in ("body_linvel", "body_angvel") else POS_TOL
            np.testing.assert_allclose(got, expect[key], rtol=0, atol=tol, err_msg=key)
    if not covered:
        return
    pos_cols, vel_cols = pos_vel_columns(m, covered)
    for cols, tol in ((pos_cols, POS_TOL), (vel_cols, VEL_TOL)):
        np.testing.assert_allclose(
            out.sensordata[:, cols], expect["sensordata"][:, cols], rtol=0, atol=tol
        )


def test_the_zoo_is_not_empty():
    """gymnasium's models are found, and the sensors added to them include
    every kind support.zoo adds (ball joints aside: none of them has one),
    so the parity tests above are not vacuous."""
    whole = [m for m in map(with_sensors, PATHS) if m is not None]
    assert len(whole) >= 10, [str(p) for p in PATHS]
    kinds = {int(t) for m in whole for t in m.sensor_type}
    added = {kind for kind, _, _ in BODY_SENSORS} | set(SITE_SENSORS)
    added |= {S.mjSENS_JOINTPOS, S.mjSENS_JOINTVEL, S.mjSENS_ACTUATORPOS, S.mjSENS_ACTUATORVEL}
    added |= {S.mjSENS_TENDONPOS, S.mjSENS_TENDONVEL}
    assert {int(k) for k in added} <= kinds
