"""Every bad argument raises ValueError/TypeError naming it, with expected vs
got, and writes nothing."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
from support.models import BAD_INPUT_XML as XML
from support.states import random_states

import mjrefresh

SENTINEL = -7.0


@pytest.fixture()
def setup():
    m = mujoco.MjModel.from_xml_string(XML)
    r = mjrefresh.Refresher(m, bodies=["a", "b"], sensors=["fp", "gyro"], num_threads=2)
    st = random_states(m, 8)
    out = r.outputs(8)
    for a in out.arrays().values():
        a.fill(SENTINEL)
    return m, r, st, out


def assert_untouched(out):
    for name, a in out.arrays().items():
        assert (a == SENTINEL).all(), name


@pytest.mark.parametrize(
    "change, exc, match",
    [
        (
            dict(qpos=np.zeros((8, 7), np.float32)),
            TypeError,
            r"qpos: expected dtype float64, got float32",
        ),
        (dict(qpos=np.zeros((8, 6))), ValueError, r"qpos: expected shape \(8, 8\), got \(8, 6\)"),
        (
            dict(qpos=np.zeros(8)),
            ValueError,
            r"qpos: expected a 2-D array \(N, 8\), got shape \(8,\)",
        ),
        (dict(qvel=np.zeros((7, 7))), ValueError, r"qvel: expected shape \(8, 7\), got \(7, 7\)"),
        (
            dict(qvel=np.zeros((8, 14))[:, ::2]),
            ValueError,
            r"qvel: the last axis must be contiguous \(stride 8 bytes\), got stride 16 bytes",
        ),
        (
            dict(qvel=np.zeros((8, 7), np.int64)),
            TypeError,
            r"qvel: expected dtype float64, got int64",
        ),
        (
            dict(rows=np.array([0, 8])),
            ValueError,
            r"rows: expected row ids in \[0, 8\), got 8 at position 1",
        ),
        (dict(rows=np.array([-1])), ValueError, r"rows: expected row ids in \[0, 8\), got -1"),
        (
            dict(rows=np.array([3, 1])),
            ValueError,
            r"rows: expected sorted unique row ids, got 3 then 1",
        ),
        (
            dict(rows=np.array([2, 2])),
            ValueError,
            r"rows: expected sorted unique row ids, got 2 then 2",
        ),
        (
            dict(rows=np.ones(7, bool)),
            ValueError,
            r"rows: expected a bool mask of length 8 \(N\), got length 7",
        ),
        (
            dict(rows=np.array([0.0, 1.0])),
            TypeError,
            r"rows: expected a bool mask or int row ids, got dtype float64",
        ),
        (
            dict(rows=np.zeros((2, 2), np.int64)),
            ValueError,
            r"rows: expected a 1-D bool mask or int array",
        ),
        (dict(qpos="x"), TypeError, r"qpos: expected a numpy array"),
        (
            dict(rows=None),
            TypeError,
            r"^rows: expected int row ids \(a list or an int array\), a slice, an int or a bool "
            r"mask of length N, got NoneType$",
        ),
        (dict(rows={0, 1}), TypeError, r"^rows: expected int row ids .*, got set$"),
        (dict(rows=8), ValueError, r"rows: expected row ids in \[0, 8\), got 8$"),
        # ints past int64 name the argument too (an OverflowError named nothing)
        (dict(rows=2**70), ValueError, rf"rows: expected row ids in \[0, 8\), got {2**70}$"),
        # a bool among ints was read as row 1; ints numpy made float64 of are ids
        (
            dict(rows=[True, 2]),
            TypeError,
            r"^rows: expected a bool mask or int row ids, got a list mixing bools and ints$",
        ),
        (
            dict(rows=[1, 2**64 - 1]),
            ValueError,
            rf"^rows: expected row ids in \[0, 8\), got {2**64 - 1}$",
        ),
        # an object array of in-range ints: the dtype error (was a bare StopIteration)
        (
            dict(rows=np.array([1, 2], dtype=object)),
            TypeError,
            r"^rows: expected a bool mask or int row ids, got dtype object$",
        ),
        (
            dict(rows=np.uint64(2**63)),
            ValueError,
            rf"rows: expected row ids in \[0, 8\), got {2**63}$",
        ),
        (
            dict(rows=[1, -(2**70)]),
            ValueError,
            rf"rows: expected row ids in \[0, 8\), got -{2**70}$",
        ),
    ],
)
def test_bad_call_arguments(setup, change, exc, match):
    m, r, st, out = setup
    kw = dict(rows=np.arange(8), qpos=st["qpos"], qvel=st["qvel"])
    kw.update(change)
    with pytest.raises(exc, match=match):
        r.refresh(kw["rows"], kw["qpos"], kw["qvel"], out)
    assert_untouched(out)


def test_bad_outputs(setup):
    m, r, st, out = setup
    args = (np.arange(8), st["qpos"], st["qvel"])
    bad = mjrefresh.RefreshOutputs(body_pos=np.zeros((8, 3, 3)), sensordata=out.sensordata)
    with pytest.raises(ValueError, match=r"body_pos: expected shape \(8, 2, 3\), got \(8, 3, 3\)"):
        r.refresh(*args, bad)
    ro = np.zeros((8, m.nsensordata))
    ro.flags.writeable = False
    with pytest.raises(
        ValueError, match=r"out.sensordata: expected a writable array, got a read-only one"
    ):
        r.refresh(*args, mjrefresh.RefreshOutputs(sensordata=ro))
    with pytest.raises(
        TypeError, match=r"sensordata: expected dtype float64 or float32, got int32"
    ):
        r.refresh(
            *args, mjrefresh.RefreshOutputs(sensordata=np.zeros((8, m.nsensordata), np.int32))
        )
    with pytest.raises(ValueError, match=r"out.site_pos: this plan does not write site_pos"):
        r.refresh(*args, mjrefresh.RefreshOutputs(site_pos=np.zeros((8, 1, 3))))
    with pytest.raises(TypeError, match=r"out: expected mjrefresh.RefreshOutputs, got dict"):
        r.refresh(*args, {"body_pos": out.body_pos})
    assert_untouched(out)


def test_output_overlapping_input_is_rejected(setup):
    m, r, st, out = setup
    buf = np.zeros((8, m.nsensordata + m.nq))
    qpos = buf[:, : m.nq]
    qpos[:] = st["qpos"]
    overlapping = buf[:, 2 : 2 + m.nsensordata]
    with pytest.raises(ValueError, match=r"out.sensordata: overlaps the input qpos in memory"):
        r.refresh(np.arange(8), qpos, st["qvel"], mjrefresh.RefreshOutputs(sensordata=overlapping))
    # Interleaved but disjoint views of one buffer are fine (backend state rows).
    side = np.zeros((8, m.nq + m.nsensordata))
    side[:, : m.nq] = st["qpos"]
    r.refresh(
        np.arange(8),
        side[:, : m.nq],
        st["qvel"],
        mjrefresh.RefreshOutputs(sensordata=side[:, m.nq :]),
    )


def test_mocap_model_requires_mocap_arrays():
    m = mujoco.MjModel.from_xml_string(
        "<mujoco><worldbody><body name='m' mocap='true'><geom size='.1'/></body>"
        "<body name='f'><freejoint/><geom size='.1'/></body></worldbody></mujoco>"
    )
    r = mjrefresh.Refresher(m, bodies=["m"], num_threads=1)
    out = r.outputs(2)
    with pytest.raises(
        ValueError,
        match=r"mocap_pos: the model has 1 mocap bodies; "
        r"expected an array of shape \(2, 1, 3\), got None",
    ):
        r.refresh(np.arange(2), np.zeros((2, 7)), np.zeros((2, 6)), out)
    with pytest.raises(ValueError, match=r"mocap_quat: expected shape \(2, 1, 4\), got \(2, 4\)"):
        r.refresh(
            np.arange(2),
            np.zeros((2, 7)),
            np.zeros((2, 6)),
            out,
            mocap_pos=np.zeros((2, 1, 3)),
            mocap_quat=np.zeros((2, 4)),
        )


def test_clock_requires_time():
    m = mujoco.MjModel.from_xml_string(XML)
    r = mjrefresh.Refresher(m, sensors=["clock"])
    out = r.outputs(3)
    with pytest.raises(
        ValueError, match=r"time: clock sensor 'clock' is selected; expected a scalar"
    ):
        r.refresh(np.arange(3), np.zeros((3, 8)), np.zeros((3, 7)), out)
    r.refresh(np.arange(3), np.zeros((3, 8)), np.zeros((3, 7)), out, time=2.5)
    assert (out.sensordata[:, 6] == 2.5).all()
    with pytest.raises(ValueError, match=r"time: expected a scalar or shape \(3,\), got \(2,\)"):
        r.refresh(np.arange(3), np.zeros((3, 8)), np.zeros((3, 7)), out, time=np.zeros(2))


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (dict(bodies=["nope"]), ValueError, r"bodies: unknown body name 'nope'"),
        (dict(bodies=[99]), ValueError, r"bodies: body id 99 out of range \[0, 3\)"),
        (dict(bodies=["a", "a"]), ValueError, r"bodies: body 'a' is listed twice"),
        (
            dict(bodies=[1.5]),
            TypeError,
            r"bodies: expected body names \(str\) or ids \(int\), got float",
        ),
        (dict(sites=["x"]), ValueError, r"sites: unknown site name 'x'"),
        (dict(sensors=["x"]), ValueError, r"sensors: unknown sensor name 'x'"),
        (dict(relative_to="zz", bodies=["a"]), ValueError, r"relative_to: unknown body name 'zz'"),
        (dict(relative_to="a"), ValueError, r"relative_to: expected at least one body in `bodies`"),
        (
            dict(sensor_ranges=[(0, 99)]),
            ValueError,
            r"sensor_ranges\[0\]: expected 0 <= start < stop <= 10 \(model.nsensordata\), got \(0, 99\)",
        ),
        (
            dict(sensor_ranges=[(3, 3)]),
            ValueError,
            r"sensor_ranges\[0\]: expected 0 <= start < stop",
        ),
        (
            dict(sensor_ranges=[(0,)]),
            TypeError,
            r"sensor_ranges\[0\]: expected a \(start, stop\) pair",
        ),
        (
            dict(sensor_ranges=5),
            TypeError,
            r"sensor_ranges: expected a sequence of \(start, stop\) pairs",
        ),
        (
            dict(num_threads=-1),
            ValueError,
            r"num_threads: expected >= 0 \(0 = all logical CPUs\), got -1",
        ),
        (dict(num_threads=1.5), TypeError, r"num_threads: expected an int, got float"),
        (
            dict(num_threads=2**31),
            ValueError,
            r"num_threads: expected at most 4096, got 2147483648",
        ),
        (
            dict(sensor_ranges=[(0.5, 3)]),
            TypeError,
            r"sensor_ranges\[0\]: expected a \(start, stop\) pair of ints, got \(0.5, 3\)",
        ),
        (
            dict(engine="turbo"),
            ValueError,
            r"engine: expected one of \('auto', 'exact', 'fast'\), got 'turbo'",
        ),
        (
            dict(cpu_ids=[100000]),
            ValueError,
            r"cpu_ids: cpu 100000 is not in this process's CPU affinity set",
        ),
        (dict(cpu_ids=[]), ValueError, r"cpu_ids: expected at least one cpu id"),
        (
            dict(cpu_ids=[2**70]),
            ValueError,
            r"^cpu_ids: cpu 1180591620717411303424 is not in this process's CPU affinity set$",
        ),
        (
            dict(bodies=3.5),
            TypeError,
            r"^bodies: expected body names \(str\) or ids \(int\), or a sequence of them, "
            r"got float$",
        ),
        (
            dict(model_fields=3),
            TypeError,
            r"^model_fields: expected mjModel field names \(str\), or a sequence of them, got int$",
        ),
    ],
)
def test_bad_construction(kwargs, exc, match):
    m = mujoco.MjModel.from_xml_string(XML)
    with pytest.raises(exc, match=match):
        mjrefresh.Refresher(m, **kwargs)


def test_model_type_is_checked():
    m = mujoco.MjModel.from_xml_string(XML)
    with pytest.raises(
        TypeError, match=r"^model: expected mujoco.MjModel, got MjData \(pass mjdata.model\)$"
    ):
        mjrefresh.Refresher(mujoco.MjData(m))
    with pytest.raises(
        TypeError, match=r"^model: expected mujoco.MjModel, got MjSpec \(compile it"
    ):
        mjrefresh.Refresher(mujoco.MjSpec())
    refresher = mjrefresh.Refresher(m)
    with pytest.raises(
        TypeError, match=r"^model: expected mujoco.MjModel, got Refresher \(pass refresher.model\)$"
    ):
        mjrefresh.Refresher(refresher)

    class Raises:  # an attribute that raises gives no hint, and no other error
        @property
        def model(self):
            raise RuntimeError("boom")

    with pytest.raises(TypeError, match=r"^model: expected mujoco.MjModel, got Raises$"):
        mjrefresh.Refresher(Raises())


def test_arrays_of_another_model_are_rejected(setup):
    m, r, st, out = setup
    other = mujoco.MjModel.from_xml_string(
        "<mujoco><worldbody><body><joint type='ball'/><geom size='.1'/></body></worldbody></mujoco>"
    )
    with pytest.raises(ValueError, match=r"qpos: expected shape \(8, 8\), got \(8, 4\)"):
        r.refresh(np.arange(8), np.zeros((8, other.nq)), np.zeros((8, other.nv)), out)
    assert_untouched(out)


def test_empty_selection_is_cheap_noop(setup):
    m, r, st, out = setup
    assert r.refresh(np.array([], np.int64), st["qpos"], st["qvel"], out) == 0
    assert r.refresh(np.zeros(8, bool), st["qpos"], st["qvel"], out) == 0
    assert_untouched(out)
    empty = mjrefresh.Refresher(m, num_threads=1)
    assert empty.plan.stages == ()
    assert empty.refresh(np.arange(8), st["qpos"], st["qvel"], empty.outputs(8)) == 8


def test_cpu_pinning_runs(setup):
    m, _, st, _ = setup
    r = mjrefresh.Refresher(m, bodies=["b"], num_threads=2, cpu_ids=[0])
    out = r.outputs(8)
    r.refresh(np.arange(8), st["qpos"], st["qvel"], out)
    assert np.isfinite(out.body_pos).all()


@pytest.mark.parametrize(
    "dtype, got", [(object, "object"), (np.longdouble, "float128"), (">f8", ">f8")]
)
def test_arrays_no_core_can_view_name_their_dtype(setup, dtype, got):
    m, r, st, out = setup
    with pytest.raises(
        TypeError, match=rf"qvel: expected dtype float64 \(native byte order\), got {got}"
    ):
        r.refresh(np.arange(8), st["qpos"], st["qvel"].astype(dtype), out)
    with pytest.raises(
        TypeError,
        match=rf"out.sensordata: expected dtype float64 or float32 \(native byte order\), got {got}",
    ):
        r.refresh(
            np.arange(8),
            st["qpos"],
            st["qvel"],
            mjrefresh.RefreshOutputs(sensordata=out.sensordata.astype(dtype)),
        )
    assert_untouched(out)


def test_unsigned_row_ids_beyond_int64_are_out_of_range(setup):
    m, r, st, out = setup
    with pytest.raises(
        ValueError, match=r"rows: expected row ids in \[0, 8\), got 18446744073709551615"
    ):
        r.refresh(np.array([0, 2**64 - 1], np.uint64), st["qpos"], st["qvel"], out)
    with pytest.raises(ValueError, match=rf"rows: expected row ids in \[0, 8\), got {2**64 - 1}$"):
        r.bind(st["qpos"], st["qvel"], out)(2**64 - 1)
    assert_untouched(out)


def test_no_rows_refreshes_nothing_whatever_the_empty_arrays_strides():
    # numpy gives empty arrays zero strides: N=0 has no layout to check.
    m = mujoco.MjModel.from_xml_string(XML)
    r = mjrefresh.Refresher(m, bodies=["a"], sensors=["fp"])
    assert np.zeros((0, m.nq)).strides == (0, 0)
    out = r.outputs(0)
    kw = {"mocap_pos": np.zeros((0, m.nmocap, 3)), "mocap_quat": np.zeros((0, m.nmocap, 4))}
    assert r.refresh(np.arange(0), np.zeros((0, m.nq)), np.zeros((0, m.nv)), out, **kw) == 0


@pytest.mark.parametrize(
    "rows, ids",
    [(slice(2, 7, 2), [2, 4, 6]), (slice(None, None, -3), [1, 4, 7]), (5, [5]), (slice(9, 20), [])],
)
def test_a_slice_or_an_int_refreshes_the_rows_it_names(setup, rows, ids):
    m, r, st, out = setup
    want = r.outputs(8)
    for a in want.arrays().values():
        a.fill(SENTINEL)  # unselected sensordata columns stay as they were
    r.refresh(np.array(ids, dtype=np.int64), st["qpos"], st["qvel"], want)
    assert r.refresh(rows, st["qpos"], st["qvel"], out) == len(ids)
    others = np.setdiff1d(np.arange(8), ids)
    for name, a in out.arrays().items():
        np.testing.assert_array_equal(a[ids], want.arrays()[name][ids])
        assert (a[others] == SENTINEL).all(), name


def test_none_selects_nothing_and_numpy_ints_are_ids():
    m = mujoco.MjModel.from_xml_string(XML)
    plain = mjrefresh.Refresher(m, bodies=[1, 2], relative_to=1, sensors=[0]).plan
    numpy_ids = mjrefresh.Refresher(
        m, bodies=np.array([1, 2]), relative_to=np.int64(1), sensors=[np.int32(0)]
    ).plan
    assert numpy_ids.describe() == plain.describe()
    none = mjrefresh.Refresher(m, bodies=None, sites=None, sensors=["fp"], model_fields=None).plan
    assert none.describe() == mjrefresh.Refresher(m, sensors=["fp"]).plan.describe()


def test_layout_errors_print_signed_strides_and_never_advise_copying_an_output(setup):
    m, r, st, out = setup
    with pytest.raises(
        ValueError,
        match=r"^qpos: the last axis must be contiguous \(stride 8 bytes\), got stride -8 bytes",
    ):
        r.refresh(np.arange(8), st["qpos"][:, ::-1], st["qvel"], out)
    fortran = np.asfortranarray(np.zeros((8, m.nsensordata)))
    with pytest.raises(
        ValueError,
        match=r"^sensordata: the last axis must be contiguous \(stride 8 bytes\), got stride 64 "
        r"bytes \(allocate outputs with Refresher.outputs\(N\), or pass views whose rows keep "
        r"each row's values contiguous\)$",
    ):
        r.refresh(
            np.arange(8), st["qpos"], st["qvel"], mjrefresh.RefreshOutputs(sensordata=fortran)
        )


def test_a_zero_slice_step_is_named():
    m = mujoco.MjModel.from_xml_string(XML)
    r = mjrefresh.Refresher(m, bodies=["a"])
    st = random_states(m, 4)
    with pytest.raises(
        ValueError, match=r"^rows: slice step cannot be zero, got slice\(0, 4, 0\)$"
    ):
        r.refresh(slice(0, 4, 0), st["qpos"], st["qvel"], r.outputs(4))
    cache = mjrefresh.bind_arrays(r, st["qpos"], st["qvel"])
    with pytest.raises(
        ValueError, match=r"^env_ids: slice step cannot be zero, got slice\(0, 4, 0\)$"
    ):
        cache.body_pos("a", env_ids=slice(0, 4, 0))


def test_slices_with_steps_beyond_int64_and_ragged_ids():
    # A step longer than N selects at most one row; it used to overflow
    # int64 arithmetic (OverflowError, only when a selected row was dirty).
    m = mujoco.MjModel.from_xml_string(XML)
    r = mjrefresh.Refresher(m, bodies=["a"])
    st = random_states(m, 4)
    cache = mjrefresh.bind_arrays(r, st["qpos"], st["qvel"])
    want = cache.body_pos("a", env_ids=[0, 3])  # refreshes rows 0 and 3 only
    cache.mark_stepped()
    np.testing.assert_array_equal(cache.body_pos("a", env_ids=slice(None, None, 2**70)), want[:1])
    np.testing.assert_array_equal(
        cache.body_pos("a", env_ids=slice(None, None, -(2**70))), want[1:]
    )
    out = r.outputs(4)
    assert r.refresh(slice(1, None, 2**70), st["qpos"], st["qvel"], out) == 1
    np.testing.assert_array_equal(out.body_pos[1], cache.body_pos(env_ids=1))
    with pytest.raises(
        ValueError,
        match=r"^env_ids: expected a 1-D array of row ids or a bool mask, got a ragged sequence$",
    ):
        cache.body_pos("a", env_ids=[[1], [2, 3]])


def test_a_list_of_ints_of_mixed_numpy_types_is_the_ids_it_holds(setup):
    # numpy promotes int64 with uint64 to float64: the list was refused as
    # "got dtype float64", which the caller never passed.
    m, r, st, out = setup
    assert r.refresh([np.int64(1), np.uint64(3)], st["qpos"], st["qvel"], out) == 2
    written = (out.body_pos != SENTINEL).any(axis=(1, 2))
    np.testing.assert_array_equal(np.flatnonzero(written), [1, 3])
