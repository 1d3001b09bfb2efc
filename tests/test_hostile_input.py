"""Property-based hostile input at the public API: random shapes, dtypes,
strides, row ids, read-only and aliasing outputs, NaN/inf state. Each call
either works correctly or raises ValueError/TypeError, and a raising call
writes nothing. (A crash would take the test process down.)"""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from support.models import BAD_INPUT_XML, FREE_BODY_XML
from support.models import HOSTILE_XML as XML
from support.oracle import forward_rows
from support.states import random_states

import mjrefresh

N = 6
SENTINEL = 123.25
MODEL = mujoco.MjModel.from_xml_string(XML)
STATES = random_states(MODEL, N, seed=2)
REF = forward_rows(MODEL, STATES)
R = mjrefresh.Refresher(
    MODEL, bodies=["b", "mc"], sites=["s"], sensor_ranges=[(0, MODEL.nsensordata)], num_threads=3
)
GOOD_SHAPES = {
    "qpos": (N, MODEL.nq),
    "qvel": (N, MODEL.nv),
    "mocap_pos": (N, 1, 3),
    "mocap_quat": (N, 1, 4),
}


VALID_KINDS = ["good", "strided_rows", "readonly", "nan"]
BAD_KINDS = ["shape", "dtype", "last_axis_stride", "empty", "scalar", "fortran", "list"]


@st.composite
def array_variant(draw, name):
    """A (possibly broken) array for input `name`, and whether it is valid.

    Half of the draws are valid variants so the success path (and its
    correctness check) is exercised as often as the rejection path."""
    shape = GOOD_SHAPES[name]
    base = STATES[name].copy()
    kinds = VALID_KINDS if draw(st.booleans()) else VALID_KINDS + BAD_KINDS
    kind = draw(st.sampled_from(kinds))
    if kind == "good":
        return base, True
    if kind == "strided_rows":  # row-strided view into a wider buffer: valid
        wide = np.zeros((shape[0] * 2,) + shape[1:])
        wide[::2] = base
        return wide[::2], True
    if kind == "readonly":  # inputs may be read-only
        base.flags.writeable = False
        return base, True
    if kind == "nan":  # refreshed as MuJoCo computes it
        base[draw(st.integers(0, N - 1))] = draw(st.sampled_from([np.nan, np.inf, -np.inf]))
        return base, "nan"
    if kind == "shape":
        dims = draw(st.lists(st.integers(0, 9), min_size=0, max_size=4))
        if tuple(dims) == shape:  # drawn right: the states the results are checked against
            return base, True
        return np.zeros(dims), False
    if kind == "dtype":
        dt = draw(st.sampled_from([np.float32, np.int64, np.int32, np.bool_, np.complex128]))
        return base.astype(dt), False
    if kind == "last_axis_stride":
        wide = np.repeat(base, 2, axis=-1)
        return wide[..., ::2], shape[-1] == 1
    if kind == "empty":
        return np.zeros((0,) + shape[1:]), False
    if kind == "scalar":
        return np.float64(1.0), False
    if kind == "fortran":
        f = np.asfortranarray(base)
        return f, f.strides[-1] == 8 or shape[-1] == 1
    return base.tolist(), False  # plain list: not an array


def fresh_outputs(dtype):
    out = R.outputs(N, dtype=dtype)
    for a in out.arrays().values():
        a.fill(SENTINEL)
    return out


def snapshot(out):
    return {k: v.copy() for k, v in out.arrays().items()}


rows_strategy = st.one_of(
    st.lists(st.integers(-(2**63), 2**63 - 1), max_size=5).map(
        lambda v: np.array(v, dtype=np.int64)
    ),
    st.lists(st.integers(0, N - 1), unique=True, max_size=N).map(lambda v: np.array(sorted(v))),
    st.lists(st.booleans(), min_size=0, max_size=N + 2).map(lambda v: np.array(v, dtype=bool)),
    st.sampled_from(
        [
            np.arange(N),
            np.arange(N, dtype=np.int32),
            np.array([2, 1]),
            np.array([1, 1]),
            np.array([0.5]),
            np.arange(N).reshape(2, 3),
        ]
    ),
)


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=rows_strategy,
    qpos=array_variant("qpos"),
    qvel=array_variant("qvel"),
    mpos=array_variant("mocap_pos"),
    mquat=array_variant("mocap_quat"),
    dtype=st.sampled_from([np.float64, np.float32]),
    out_kind=st.sampled_from(["own", "own", "readonly", "alias_input", "wrong_dtype", "strided"]),
)
def test_hostile_calls_work_or_raise_cleanly(rows, qpos, qvel, mpos, mquat, dtype, out_kind):
    out = fresh_outputs(dtype)
    (qpos, qpos_ok), (qvel, qvel_ok), (mpos, mpos_ok), (mquat, mquat_ok) = qpos, qvel, mpos, mquat
    out_ok = True
    if out_kind == "readonly":
        out.body_pos.flags.writeable = False
        out_ok = False
    elif (
        out_kind == "alias_input" and isinstance(qpos, np.ndarray) and qpos.size and qpos.ndim == 2
    ):
        out.sensordata = qpos.view(np.float64) if qpos.dtype == np.float64 else out.sensordata
        out_ok = qpos.dtype != np.float64
    elif out_kind == "wrong_dtype":
        out.sensordata = np.full((N, MODEL.nsensordata), 7, dtype=np.int32)
        out_ok = False
    elif out_kind == "strided":
        wide = np.full((N * 3, MODEL.nsensordata), SENTINEL, dtype=dtype)
        out.sensordata = wide[::3]
    before = snapshot(out)
    try:
        R.refresh(rows, qpos, qvel, out, mocap_pos=mpos, mocap_quat=mquat)
        event("refreshed")
    except (ValueError, TypeError):
        event("rejected")
        after = snapshot(out)
        for k in before:
            np.testing.assert_array_equal(
                after[k], before[k], err_msg=f"{k} written by a failing call"
            )
        return
    # It worked: every input must have been acceptable and results correct.
    assert qpos_ok and qvel_ok and mpos_ok and mquat_ok and out_ok
    ids = np.flatnonzero(rows) if rows.dtype == bool else rows
    finite = all(v is True for v in (qpos_ok, qvel_ok, mpos_ok, mquat_ok))
    if finite and len(ids):
        # auto picks the fused kernels here: equal to mj_forward to rounding.
        tol = 1e-12 if dtype == np.float64 else 1e-6
        np.testing.assert_allclose(out.sensordata[ids], REF.sensordata[ids], rtol=0, atol=tol)


def test_another_models_arrays_are_rejected():
    other = mujoco.MjModel.from_xml_string(FREE_BODY_XML)
    st2 = random_states(other, N)
    out = fresh_outputs(np.float64)
    with pytest.raises(ValueError, match=r"qpos: expected shape \(6, 8\), got \(6, 7\)"):
        R.refresh(np.arange(N), st2["qpos"], st2["qvel"], out)
    bad_out = mjrefresh.RefreshOutputs(sensordata=np.zeros((N, 10)))
    with pytest.raises(ValueError, match=r"sensordata: expected shape \(6, 9\), got \(6, 10\)"):
        R.refresh(
            np.arange(N),
            STATES["qpos"],
            STATES["qvel"],
            bad_out,
            mocap_pos=STATES["mocap_pos"],
            mocap_quat=STATES["mocap_quat"],
        )


def test_real_numpy_scalar_times_are_read_as_values():
    # np.float32(1.5) was viewed as a 0-d float32 array and refused by dtype
    # ("convert once with time.astype(np.float64) and keep that array"): a
    # scalar is a value, read like a Python float, whatever its numpy type.
    m = mujoco.MjModel.from_xml_string(BAD_INPUT_XML)
    r = mjrefresh.Refresher(m, sensors=["clock"])
    out = r.outputs(3)
    for t in (np.float32(1.5), np.float16(0.25), np.longdouble(3.5), np.int64(2), np.uint8(7)):
        out.sensordata[:] = -1
        r.refresh(np.arange(3), np.zeros((3, 8)), np.zeros((3, 7)), out, time=t)
        assert (out.sensordata[:, 6] == float(t)).all(), type(t).__name__
    if np.finfo(np.longdouble).max > np.finfo(np.float64).max:  # x86-64: 80-bit
        with pytest.raises(
            ValueError,
            match=r"^time: expected a value a float64 holds, got a number of type longdouble too",
        ):
            r.refresh(
                np.arange(3), np.zeros((3, 8)), np.zeros((3, 7)), out, time=np.longdouble("1e400")
            )
    assert (out.sensordata[:, 6] == 7).all()  # the refused call wrote nothing


def test_scalar_times_that_are_not_real_numbers_are_refused_by_what_they_are():
    # True was "expected a numpy array", an int past float64 "expected a real
    # scalar ... got int"; numpy's complex and bool scalars were read as times.
    m = mujoco.MjModel.from_xml_string(BAD_INPUT_XML)
    r = mjrefresh.Refresher(m, sensors=["clock"])
    out = r.outputs(3)
    r.refresh(np.arange(3), np.zeros((3, 8)), np.zeros((3, 7)), out, time=2.5)
    for t, exc, match in [
        (
            1 + 2j,
            TypeError,
            r"^time: expected a real scalar or an \(N,\) float64 array, got complex$",
        ),
        (np.complex128(1 + 2j), TypeError, r"^time: expected dtype float64, got complex128"),
        (True, TypeError, r"^time: expected a real scalar or an \(N,\) float64 array, got bool$"),
        (np.True_, TypeError, r"^time: expected dtype float64, got bool"),
        (
            10**400,
            ValueError,
            r"^time: expected a value a float64 holds, got a number of type int too large",
        ),
    ]:
        with pytest.raises(exc, match=match):
            r.refresh(np.arange(3), np.zeros((3, 8)), np.zeros((3, 7)), out, time=t)
    assert (out.sensordata[:, 6] == 2.5).all()


def test_zero_width_states_are_checked_like_any_other():
    # A model without joints has nq = nv = 0: its (N, 0) qpos/qvel were not
    # checked at all, so a uint64 or mis-shaped qvel was accepted.
    m = mujoco.MjModel.from_xml_string(
        '<mujoco><worldbody><body pos="0 0 1"><geom size=".1"/><site name="s"/></body>'
        '</worldbody><sensor><framepos objtype="site" objname="s"/></sensor></mujoco>'
    )
    r = mjrefresh.Refresher(m, sensors=[0])
    out = r.outputs(2)
    qpos, qvel = np.zeros((2, 0)), np.zeros((2, 0))
    assert r.refresh(np.arange(2), qpos, qvel, out) == 2
    assert (out.sensordata == [0, 0, 1]).all()
    out.sensordata[:] = -1
    with pytest.raises(TypeError, match=r"^qvel: expected dtype float64, got uint64"):
        r.refresh([], qpos, np.zeros((2, 0), np.uint64), out)
    with pytest.raises(ValueError, match=r"^qpos: expected shape \(2, 0\)"):
        r.refresh(np.arange(2), np.zeros((2, 3)), qvel, out)
    with pytest.raises(TypeError, match=r"^time: expected a numpy array .*got list; convert it"):
        r.refresh(np.arange(2), qpos, qvel, out, time=[0.5, 0.5])
    assert (out.sensordata == -1).all()  # the refused calls wrote nothing
