"""A hinge's world axis in the fast engine: MuJoCo rotates the axis by the
body's quaternion before the hinge turns it; the fast engine reads it from
the body's final rotation where that is the same axis (cpp/fast:
Joint::axis_from_mat). It is not the same where the hinge's angle is not
finite: the pose is NaN there, but MuJoCo's axis, and with it the body's
angular velocity, stays finite. (Non-unit body quaternions, the other
case, are in test_model_fields.py.)"""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
from support.oracle import forward_with_model_fields
from support.states import random_states, state_inputs

import mjrefresh
from mjrefresh.models import quadruped

pytestmark = pytest.mark.parity

N = 32  # one call on one thread: rows in SIMD quads (AVX2 build) or pairs (refresher.cc)


@pytest.fixture(params=["quadruped", "rich"])
def model(request, rich_model):
    # quadruped: single centered hinges about coordinate axes (Body::hinge_axis);
    # rich: an off-center hinge, a slide then a hinge on one body (axes_from_mat).
    return quadruped() if request.param == "quadruped" else rich_model


def test_non_finite_hinge_angle_keeps_mujocos_finite_axis(model):
    states = random_states(model, N, seed=41)
    hinges = [j for j in range(model.njnt) if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE]
    nan_rows = [*range(1, N, 2), 4]  # odd lanes NaN, and rows 4 and 5 side by side
    for i, row in enumerate(nan_rows):
        joint = hinges[i % len(hinges)]
        states["qpos"][row, model.jnt_qposadr[joint]] = np.nan if i % 3 else np.inf
    bodies = [model.body(b).name for b in range(1, model.nbody)]
    r = mjrefresh.Refresher(model, bodies=bodies, num_threads=1, engine="fast")
    out = r.outputs(N)
    r.refresh(np.arange(N), states["qpos"], states["qvel"], out, **state_inputs(states))
    finite_on_nan_pose = 0
    for row in range(N):
        _, d, vel = forward_with_model_fields(model, states, {}, row)
        want_ang = vel[1:, :3]
        # NaN where MuJoCo has NaN, equal to its rounding elsewhere. (Not the
        # linear velocities: MuJoCo's are NaN on every body whose subtree
        # holds a NaN pose, shifted from the NaN subtree CoM; the fast
        # engine's, taken at the body origin, only where the origin moves.)
        np.testing.assert_allclose(out.body_angvel[row], want_ang, rtol=0, atol=1e-10)
        np.testing.assert_allclose(out.body_pos[row], d.xpos[1:], rtol=0, atol=1e-12)
        nan_pose = np.isnan(d.xpos[1:]).any(axis=1)
        finite_on_nan_pose += int(np.isfinite(want_ang[nan_pose]).all(axis=1).sum())
    assert finite_on_nan_pose >= len(nan_rows)  # the case at hand: at least one body a row
