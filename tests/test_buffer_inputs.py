"""Buffer-protocol objects (memoryview, ctypes arrays) read and written in place.

A ctypes array exports its buffer without strides (C-contiguous by
definition); the native core once dereferenced the missing strides and the
process died with SIGSEGV. Every entry point that takes an array must view
such an object in place, with values equal to the same call on numpy arrays.
"""

from __future__ import annotations

import array
import ctypes
import gc

import mujoco
import numpy as np
import pytest
from support.states import random_states

import mjrefresh

N = 5
BODIES = ("base", "FL_calf")


@pytest.fixture(scope="module")
def model():
    return mjrefresh.models.quadruped()


@pytest.fixture(scope="module")
def states(model):
    return random_states(model, N, seed=11)


def ctypes_copy(a: np.ndarray, kind=ctypes.c_double):
    """A ctypes array of `a`'s shape holding its values (strides: none)."""
    t = kind
    for d in reversed(a.shape):
        t = t * d
    c = t()
    np.asarray(memoryview(c))[...] = a
    return c


def test_ctypes_state_and_model_field_inputs_are_read_in_place(model, states):
    r = mjrefresh.Refresher(model, bodies=BODIES, model_fields=("body_mass",), num_threads=2)
    mass = np.tile(model.body_mass, (N, 1)) * np.linspace(1.0, 2.0, N)[:, None]
    qpos, qvel = ctypes_copy(states["qpos"]), ctypes_copy(states["qvel"])
    assert memoryview(qpos).strides == (model.nq * 8, 8)  # a memoryview states them
    out_c, out_np = r.outputs(N), r.outputs(N)
    rows = np.arange(N)
    r.refresh(rows, qpos, qvel, out_c, model_fields={"body_mass": ctypes_copy(mass)})
    r.refresh(rows, states["qpos"], states["qvel"], out_np, model_fields={"body_mass": mass})
    for name, value in out_np.arrays().items():
        np.testing.assert_array_equal(out_c.arrays()[name], value, err_msg=name)
    np.asarray(memoryview(qpos))[:, 2] += 1.0  # in place: a bound call sees the write
    r.bind(qpos, qvel, out_c, model_fields={"body_mass": mass})(rows)
    np.testing.assert_array_equal(out_c.body_pos[:, 0, 2], out_np.body_pos[:, 0, 2] + 1.0)
    r.close()


def test_ctypes_outputs_and_dirty_mask_are_written_in_place(model, states):
    r = mjrefresh.Refresher(model, bodies=BODIES, sensor_ranges=[(68, 328)], num_threads=1)
    plain = r.outputs(N)
    r.refresh(np.arange(N), states["qpos"], states["qvel"], plain)
    pos = ctypes_copy(np.zeros_like(plain.body_pos))
    sensordata = ctypes_copy(np.zeros((N, model.nsensordata)))
    out = r.outputs(N, body_pos=pos, sensordata=sensordata)
    dirty = ctypes_copy(np.array([True, False, True, True, False]), ctypes.c_bool)
    bound = r.bind(states["qpos"], states["qvel"], out)
    assert bound.refresh_dirty_rows(dirty) == 3
    assert not np.asarray(memoryview(dirty)).any()  # cleared in the caller's buffer
    got = np.asarray(memoryview(pos))
    np.testing.assert_array_equal(got[[0, 2, 3]], plain.body_pos[[0, 2, 3]])
    assert not got[[1, 4]].any()
    np.testing.assert_array_equal(
        np.asarray(memoryview(sensordata))[[0, 2, 3], 68:328], plain.sensordata[[0, 2, 3], 68:328]
    )
    r.close()


def test_memoryviews_are_taken_by_bind_arrays_and_outputs_alike(model, states):
    r = mjrefresh.Refresher(model, bodies=BODIES, sensor_ranges=[(68, 328)], num_threads=1)
    qpos, qvel = states["qpos"].copy(), states["qvel"].copy()
    buf = np.zeros((N, model.nsensordata))
    cache = mjrefresh.bind_arrays(r, memoryview(qpos), memoryview(qvel), sensordata=memoryview(buf))
    cache.refresh_dirty_rows()
    expected = r.outputs(N)
    r.refresh(np.arange(N), qpos, qvel, expected)
    np.testing.assert_array_equal(cache.body_pos("base"), expected.body_pos[:, 0])
    np.testing.assert_array_equal(buf[:, 68:328], expected.sensordata[:, 68:328])
    again = np.zeros_like(buf)
    r.refresh(np.arange(N), qpos, qvel, r.outputs(N, sensordata=memoryview(again)))
    np.testing.assert_array_equal(again, buf)
    r.close()


def test_a_read_only_buffer_is_refused_as_an_output(model):
    r = mjrefresh.Refresher(model, sensor_ranges=[(68, 328)], num_threads=1)
    frozen = bytes(N * model.nsensordata * 8)
    with pytest.raises(
        ValueError, match=r"sensordata: expected a writable buffer, got a read-only memoryview"
    ):
        r.outputs(N, sensordata=memoryview(frozen).cast("d", (N, model.nsensordata)))
    with pytest.raises(TypeError, match=r"sensordata: expected a numpy array .* got object"):
        r.outputs(N, sensordata=object())
    r.close()


def test_a_bound_buffer_can_be_neither_resized_nor_released_while_bound(model, states):
    # The bind kept only the object: an array.array grown, or a memoryview
    # released and its bytearray grown, left the bound call reading and
    # writing freed memory.
    clock = mujoco.MjModel.from_xml_string(
        '<mujoco><worldbody><body><joint/><geom size=".1"/></body></worldbody>'
        '<sensor><clock name="c"/></sensor></mujoco>'
    )
    with mjrefresh.Refresher(clock, sensors=["c"], num_threads=1) as r:
        t = array.array("d", [1.0, 2.0, 3.0])
        out = r.outputs(3)
        bound = r.bind(np.zeros((3, 1)), np.zeros((3, 1)), out, time=t)
        with pytest.raises(BufferError):
            t.extend([0.0] * 1000)
        t[1] = 20.0  # written in place: the bound call reads it
        bound([0, 1, 2])
        np.testing.assert_array_equal(out.sensordata[:, 0], [1.0, 20.0, 3.0])
        del bound
        gc.collect()
        t.extend([0.0])  # free again once unbound
    r = mjrefresh.Refresher(model, bodies=BODIES, num_threads=2)
    buf = bytearray(states["qpos"].tobytes())
    qpos = memoryview(buf).cast("d", [N, model.nq])
    pos = memoryview(bytearray(8 * N * len(BODIES) * 3)).cast("d", [N, len(BODIES), 3])
    bound = r.bind(qpos, states["qvel"], mjrefresh.RefreshOutputs(body_pos=pos))
    cache = mjrefresh.bind_arrays(r, qpos, states["qvel"])
    for view in (qpos, pos):
        with pytest.raises(BufferError):
            view.release()
    with pytest.raises(BufferError):
        buf.extend(bytes(8))
    bound(np.arange(N))
    expected = r.outputs(N)
    r.refresh(np.arange(N), states["qpos"], states["qvel"], expected)
    np.testing.assert_array_equal(np.asarray(pos), expected.body_pos)
    np.testing.assert_array_equal(cache.body_pos(), expected.body_pos)
    r.close()


def test_buffers_nothing_can_view_in_place_get_the_reason_not_a_type_error(model, states):
    # They were all "expected a numpy array ..., got memoryview", which the
    # other entry points take, with a fix naming model_fields, not its entry.
    r = mjrefresh.Refresher(model, bodies=BODIES, model_fields=("body_mass",), num_threads=1)
    qvel, out = states["qvel"], r.outputs(N)
    big = states["qpos"].astype(">f8")
    be = ctypes_copy(states["qpos"], ctypes.c_double.__ctype_be__)
    for q, got in [
        (memoryview(big), "a memoryview of buffer format '>d'"),
        (be, f"a {type(be).__module__}.{type(be).__qualname__} of buffer format '>d'"),
    ]:
        with pytest.raises(
            TypeError,
            match=rf"^qpos: expected dtype float64 \(native byte order\), got {got} \(.*"
            r"convert once with np\.asarray\(qpos\)\.astype\(np\.float64\)",
        ):
            r.refresh(np.arange(N), q, qvel, out)
    mass = memoryview(np.tile(model.body_mass, (N, 1)).astype(">f8"))
    with pytest.raises(
        TypeError,
        match=r"^model_fields\['body_mass'\]: expected dtype float64 .* buffer format '>d' .*"
        r"np\.asarray\(model_fields\['body_mass'\]\)",
    ):
        r.refresh(np.arange(N), states["qpos"], qvel, out, model_fields={"body_mass": mass})
    raw = np.zeros(N * 160, np.uint8)  # rows 156 bytes apart: not whole float64s
    odd = np.ndarray((N, model.nq), dtype="<f8", buffer=raw, strides=(156, 8))
    with pytest.raises(
        ValueError, match=r"^qpos: expected aligned elements .* got strides \(156, 8\)"
    ):
        r.refresh(np.arange(N), memoryview(odd), qvel, out)
    r.close()
