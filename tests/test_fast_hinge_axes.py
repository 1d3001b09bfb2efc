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


TWO_HINGES = """<mujoco><worldbody><body name="b" pos="0 0 1">
  <joint name="h1" axis="0 0 1"/><joint name="h2" axis="0 1 0"/><geom size=".1"/>
  <body name="c" pos=".2 0 0"><joint axis="1 0 0"/><joint axis="0 1 1"/><geom size=".05"/>
  </body></body></worldbody></mujoco>"""


@pytest.mark.parametrize("per_row", [False, True])
def test_hinges_after_a_hinge_whose_axis_is_not_unit(per_row):
    # A hinge turns the quaternion by (cos, sin * axis): of norm 1 only for a
    # unit axis, and MuJoCo's later axes of the body are stretched by the
    # squared norm (the final rotation, normalised, is not): angular
    # velocities were off by 0.017 for an axis of length 1.1, by 2.6e-7 for
    # axes normalised in float32 and given per row.
    model = mujoco.MjModel.from_xml_string(TWO_HINGES)
    if per_row:  # the model's axes, normalised in float32 as a torch backend would
        axes = np.random.default_rng(3).normal(size=(N, model.njnt, 3)).astype(np.float32)
        axes /= np.linalg.norm(axes, axis=-1, keepdims=True)
        fields = {"jnt_axis": axes.astype(np.float64)}
    else:
        model.jnt_axis[0] = (0, 0, 1.1)
        model.jnt_axis[2] = (1.05, 0, 0)
        fields = {}
    states = random_states(model, N, seed=43)
    r = mjrefresh.Refresher(
        model, bodies=["b", "c"], num_threads=1, engine="fast", model_fields=tuple(fields)
    )
    out = r.outputs(N)
    extra = {"model_fields": fields} if fields else {}
    r.refresh(np.arange(N), states["qpos"], states["qvel"], out, **extra)
    for row in range(N):
        _, d, vel = forward_with_model_fields(model, states, fields, row)
        np.testing.assert_allclose(out.body_pos[row], d.xpos[1:], rtol=0, atol=1e-12)
        np.testing.assert_allclose(out.body_angvel[row], vel[1:, :3], rtol=0, atol=1e-10)
        np.testing.assert_allclose(out.body_linvel[row], vel[1:, 3:], rtol=0, atol=1e-10)
