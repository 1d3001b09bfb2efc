"""One overlap check covers every array a call reads or writes: an array the
refresh writes (an output, the dirty mask it clears) may share no byte with
any other array of the call (rows, state, mocap, time, model fields, the
other outputs), two of its rows may share no byte, and with the MjData-list
binding no output may lie inside one of the MjData. A rejected call raises ValueError naming both and writes
nothing; interleaved but disjoint layouts of one buffer (a backend's state
rows) and stride-0 inputs are refreshed in place.

The verdict is exact: it equals numpy's np.shares_memory on random views of
one buffer (negative and non-contiguous row strides, float32 and float64)."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from support.child import run_child
from support.models import BAD_INPUT_XML as XML
from support.oracle import forward_rows
from support.states import random_states

import mjrefresh

N = 8
SENTINEL = -7.0
MODEL = mujoco.MjModel.from_xml_string(XML)
STATES = random_states(MODEL, N, seed=5)
REF = forward_rows(MODEL, STATES)
REFRESHER = mjrefresh.Refresher(MODEL, bodies=["a", "b"], sensors=["fp", "gyro"], num_threads=2)
COLS = [slice(a, b) for a, b in REFRESHER.plan.column_ranges]


def sentinel_outputs(**arrays):
    out = REFRESHER.outputs(N, **arrays)
    for a in out.arrays().values():
        a.fill(SENTINEL)
    return out


def assert_untouched(out):
    for name, a in out.arrays().items():
        assert (a == SENTINEL).all(), name


def test_rows_aliasing_the_columns_a_refresh_writes_first_are_rejected():
    # The row ids live in the selected columns of row 0, written first: the
    # refresh used to read garbage ids after writing them, and write out of
    # bounds (SIGSEGV, both engines). Child process: a regression would crash.
    res = run_child("""
        import numpy as np, mjrefresh
        m = mjrefresh.models.quadruped()
        for engine in ("exact", "fast"):
            for threads in (1, 2):
                r = mjrefresh.Refresher(m, sensor_ranges=[(68, 328)], engine=engine,
                                        num_threads=threads)
                n = 200
                out = r.outputs(n)
                ids = out.sensordata[0, 68:68 + n].view(np.int64)
                ids[:] = np.arange(n)
                before = out.sensordata.copy()
                try:
                    r.refresh(ids, np.tile(m.qpos0, (n, 1)), np.ones((n, m.nv)), out)
                except ValueError as exc:
                    assert np.array_equal(out.sensordata, before)
                    print(engine, threads, exc)
    """)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert len(lines) == 4, res.stdout
    for line in lines:
        assert line.endswith("rows: overlaps out.sensordata in memory"), line


def test_a_dirty_mask_inside_an_output_or_the_state_is_rejected():
    out = sentinel_outputs()
    # A bool view of bytes of the sensordata rows: clearing it would write
    # into the outputs (and the refresh would write into the mask).
    dirty = out.sensordata.view(np.bool_).reshape(-1)[:N]
    dirty[:] = True
    mask_before = dirty.copy()
    with pytest.raises(ValueError, match=r"dirty: overlaps out.sensordata in memory"):
        REFRESHER.refresh_dirty_rows(dirty, STATES["qpos"], STATES["qvel"], out)
    np.testing.assert_array_equal(dirty, mask_before)
    out.sensordata[:] = SENTINEL
    assert_untouched(out)
    qpos = STATES["qpos"].copy()
    mask = qpos.view(np.bool_)[:, 0]
    mask[:] = True
    with pytest.raises(ValueError, match=r"dirty: overlaps the input qpos in memory"):
        REFRESHER.refresh_dirty_rows(mask, qpos, STATES["qvel"], out)
    assert_untouched(out)
    bound = REFRESHER.bind(qpos, STATES["qvel"], out)
    with pytest.raises(ValueError, match=r"dirty: overlaps the input qpos in memory"):
        bound.refresh_dirty_rows(mask)
    assert_untouched(out)


def test_a_model_field_inside_an_output_is_rejected():
    r = mjrefresh.Refresher(MODEL, bodies=["a", "b"], model_fields=["body_pos"])
    out = r.outputs(N)
    out.body_pos.fill(SENTINEL)
    buf = np.zeros((N, MODEL.nbody * 3 + 6))
    field = buf[:, : MODEL.nbody * 3].reshape(N, MODEL.nbody, 3)
    field[:] = MODEL.body_pos
    out = mjrefresh.RefreshOutputs(body_pos=buf[:, 3 : 3 + 6].reshape(N, 2, 3))
    out.body_pos.fill(SENTINEL)
    with pytest.raises(
        ValueError, match=r"out.body_pos: overlaps the input model_fields\['body_pos'\] in memory"
    ):
        r.refresh(
            np.arange(N), STATES["qpos"], STATES["qvel"], out, model_fields={"body_pos": field}
        )
    assert (out.body_pos == SENTINEL).all()


def test_stride_zero_inputs_and_read_only_aliases_among_inputs_are_refreshed():
    # Inputs may share memory with each other (both are only read), and
    # broadcast (stride-0) values are read in place.
    buf = np.zeros((N, MODEL.nq + 4))
    qpos = buf[:, : MODEL.nq]
    qpos[:] = STATES["qpos"]
    qvel = buf[:, 1 : 1 + MODEL.nv]  # overlaps qpos: fine, both are read
    out = sentinel_outputs()
    REFRESHER.refresh(np.arange(N), qpos, qvel, out)
    want = forward_rows(MODEL, {"qpos": qpos, "qvel": qvel})
    for c in COLS:
        np.testing.assert_allclose(out.sensordata[:, c], want.sensordata[:, c], atol=1e-12)


@st.composite
def views_of_one_buffer(draw):
    """Two views of one float buffer, shaped like qpos (N, nq) and like
    sensordata (N, nsensordata): random row offsets, row steps (negative
    too), column offsets and itemsize."""
    dtype = draw(st.sampled_from([np.float64, np.float32]))
    low = max(MODEL.nsensordata, 2 * MODEL.nq)
    width = draw(st.integers(low, 3 * low))
    rows = 3 * N + 2
    buf = np.zeros((rows, width), dtype=dtype)

    def view(cols, align=1):
        step = draw(st.sampled_from([1, 2, 3, -1, -2]))
        span = (N - 1) * abs(step) + 1
        r0 = draw(st.integers(0, rows - span))
        c0 = align * draw(st.integers(0, (width - cols) // align))
        if step > 0:
            sl = slice(r0, r0 + span, step)
        else:  # from row r0 + span - 1 down to r0
            sl = slice(r0 + span - 1, r0 - 1 if r0 > 0 else None, step)
        return buf[sl, c0 : c0 + cols]

    out = view(MODEL.nsensordata)
    # qpos must be float64: reinterpret the same bytes when the buffer is not
    wide = dtype != np.float64
    qpos = view(2 * MODEL.nq, align=2) if wide else view(MODEL.nq)
    if wide:
        qpos = qpos.view(np.float64)
    return out, qpos


@settings(max_examples=300, deadline=None)
@given(views=views_of_one_buffer())
def test_the_verdict_is_numpys_exact_shares_memory(views):
    sensordata, qpos = views
    assert sensordata.shape[0] == N and qpos.shape == (N, MODEL.nq)
    qpos[:] = STATES["qpos"]
    sensordata_before = sensordata.copy()
    qpos_before = qpos.copy()
    out = mjrefresh.RefreshOutputs(sensordata=sensordata)
    shared = np.shares_memory(sensordata, qpos, max_work=None)
    whole_items = qpos.flags.aligned  # float64 rows of a float32 buffer may start mid-item
    try:
        REFRESHER.refresh(np.arange(N), qpos, STATES["qvel"], out)
    except ValueError as exc:
        event(f"rejected: {'layout' if not whole_items else 'overlap'}")
        if not whole_items:
            assert str(exc).startswith("qpos: expected aligned elements and strides"), exc
            np.testing.assert_array_equal(sensordata, sensordata_before)
            return
        assert shared, exc
        assert str(exc) == "out.sensordata: overlaps the input qpos in memory"
        np.testing.assert_array_equal(sensordata, sensordata_before)
        return
    event("refreshed")
    assert not shared and whole_items
    np.testing.assert_array_equal(qpos, qpos_before)  # the state was not written
    tol = 1e-12 if sensordata.dtype == np.float64 else 1e-5
    for c in COLS:
        np.testing.assert_allclose(sensordata[:, c], REF.sensordata[:, c], rtol=tol, atol=tol)


@st.composite
def strided_body_pos(draw):
    """An (N, 2, 3) body_pos output on one buffer with random row and item
    strides (elements, either sign): rows may share bytes (a row stride
    smaller than what a row spans) or interleave without sharing any (items
    N rows apart: a transposed (2, N, 3) layout)."""
    item = draw(st.sampled_from([3, 4, -3, -5, 3 * N, -3 * N]))
    row = draw(st.integers(-4 * N, 4 * N).filter(lambda s: s != 0))
    offsets = [r * row + i * item for r in (0, N - 1) for i in (0, 1)]
    buf = np.zeros(max(offsets) - min(offsets) + 3)
    return np.lib.stride_tricks.as_strided(
        buf[-min(offsets) :], (N, 2, 3), (8 * row, 8 * item, 8), writeable=True
    )


@settings(max_examples=300, deadline=None)
@given(body_pos=strided_body_pos())
def test_output_rows_sharing_bytes_are_rejected_and_interleaved_rows_refreshed(body_pos):
    # Rows that share bytes would overwrite each other's values: the verdict
    # is numpy's exact shares_memory between every pair of rows.
    shared = any(
        np.shares_memory(body_pos[i], body_pos[j], max_work=None)
        for i in range(N)
        for j in range(i + 1, N)
    )
    body_pos.fill(SENTINEL)
    out = mjrefresh.RefreshOutputs(body_pos=body_pos)
    r = mjrefresh.Refresher(MODEL, bodies=["a", "b"], num_threads=2)
    if shared:
        event("rows share bytes: rejected")
        with pytest.raises(ValueError, match=r"^out.body_pos: rows alias each other \(row stride"):
            r.refresh(np.arange(N), STATES["qpos"], STATES["qvel"], out)
        assert (body_pos == SENTINEL).all()
        return
    event("disjoint rows: refreshed")
    r.refresh(np.arange(N), STATES["qpos"], STATES["qvel"], out)
    np.testing.assert_allclose(body_pos, REF.outputs(bodies=["a", "b"])["body_pos"], atol=1e-12)


def test_sensordata_rows_closer_than_their_width_are_rejected():
    # Each row 3 values after the last: row 0's columns would be row 1's.
    base = np.full(MODEL.nsensordata * N, SENTINEL)
    sd = np.lib.stride_tricks.as_strided(base, (N, MODEL.nsensordata), (24, 8), writeable=True)
    width = 8 * MODEL.nsensordata
    with pytest.raises(
        ValueError,
        match=rf"^out.sensordata: rows alias each other \(row stride 24 bytes, a row spans "
        rf"{width} bytes\); expected every row in its own memory: allocate outputs with "
        r"Refresher.outputs\(N\)$",
    ):
        REFRESHER.refresh(
            np.arange(N), STATES["qpos"], STATES["qvel"], mjrefresh.RefreshOutputs(sensordata=sd)
        )
    assert (base == SENTINEL).all()


def test_an_output_inside_the_mjdata_of_the_list_is_rejected():
    # The MjData-list binding reads each row's state from its MjData and
    # copies results into it: an output viewing that memory (from its qpos
    # on, or its own sensordata) would overwrite the state or race the copy.
    d = mujoco.MjData(MODEL)
    d.qpos[:] = STATES["qpos"][0]
    d.qvel[:] = STATES["qvel"][0]
    state = np.concatenate([d.qpos, d.qvel])
    width = MODEL.nsensordata
    assert MODEL.nq + MODEL.nv >= width  # from qpos on, inside the MjData's buffer
    from_qpos = np.lib.stride_tricks.as_strided(d.qpos, (1, width), (8 * width, 8), writeable=True)
    r = mjrefresh.Refresher(MODEL, sensors=["fp", "gyro"], num_threads=1)
    for inside in (from_qpos, d.sensordata[None]):
        with pytest.raises(
            ValueError,
            match=r"^out.sensordata: overlaps the memory of datas\[0\], an MjData the call reads "
            r"state from and copies results into; pass outputs in their own memory "
            r"\(Refresher.outputs\(N\)\)$",
        ):
            mjrefresh.refresh_mjdata(r, [d], out=mjrefresh.RefreshOutputs(sensordata=inside))
    np.testing.assert_array_equal(np.concatenate([d.qpos, d.qvel]), state)


def test_items_of_a_row_closer_than_their_width_are_rejected():
    buf = np.full(N * 8, SENTINEL)
    body_pos = np.lib.stride_tricks.as_strided(buf, (N, 2, 3), (64, 16, 8), writeable=True)
    with pytest.raises(
        ValueError,
        match=r"^out.body_pos: the items of a row alias each other \(item stride 16 bytes, an "
        r"item is 24 bytes\); expected every item in its own memory",
    ):
        REFRESHER.refresh(
            np.arange(N),
            STATES["qpos"],
            STATES["qvel"],
            mjrefresh.RefreshOutputs(body_pos=body_pos),
        )
    assert (buf == SENTINEL).all()


@pytest.mark.parametrize("reader", ["body_pos", "sensor"])
def test_a_cache_read_whose_env_ids_view_its_own_storage_reads_the_rows_asked(reader):
    # The ids lived in a row the read's refresh writes: the read indexed with
    # the values the refresh left there (row 0 twice for ids [7, 1]).
    r = mjrefresh.Refresher(MODEL, bodies=("b",), sensors=("fp", "gyro"))
    cache = mjrefresh.bind_arrays(r, STATES["qpos"], STATES["qvel"])
    cache.refresh_dirty_rows()
    expected = {"body_pos": cache.body_pos("b")[[7, 1]].copy()}
    expected["sensor"] = cache.sensor("gyro")[[7, 1]].copy()
    ids = cache.storage.body_pos[7, 0, :2].view(np.int64)
    ids[:] = [7, 1]
    cache.mark_stepped()
    read = cache.body_pos if reader == "body_pos" else cache.sensor
    got = read("b" if reader == "body_pos" else "gyro", env_ids=ids)
    np.testing.assert_array_equal(got, expected[reader])
    r.close()
