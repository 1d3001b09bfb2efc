"""Refresher.bind: arrays validated once, then calls that only parse rows.

A bound call must write exactly what `Refresher.refresh` writes (checked
against the mj_forward oracle), reject bad arrays when binding (nothing
written), and keep the dirty-mask and closed semantics of the unbound calls.
"""

from __future__ import annotations

import numpy as np
import pytest
from support.oracle import expected_outputs
from support.states import random_states

import mjrefresh

N = 9
BODIES = ("base", "FL_calf", "RR_calf")


@pytest.fixture(scope="module")
def model():
    return mjrefresh.models.quadruped()


@pytest.fixture(scope="module")
def states(model):
    return random_states(model, N, seed=3)


@pytest.mark.parametrize("threads", [1, 2, 16])
def test_bound_call_equals_refresh_and_mj_forward(model, states, threads):
    r = mjrefresh.Refresher(
        model, bodies=BODIES, relative_to="base", sensor_ranges=[(68, 328)], num_threads=threads
    )
    out_bound, out_plain = r.outputs(N), r.outputs(N)
    bound = r.bind(states["qpos"], states["qvel"], out_bound)
    rows = np.array([0, 2, 3, 8])
    assert bound(rows) == 4
    r.refresh(rows, states["qpos"], states["qvel"], out_plain)
    for name, a in out_bound.arrays().items():
        np.testing.assert_array_equal(a, getattr(out_plain, name), err_msg=name)
    want = expected_outputs(model, states, BODIES, "base", rows=rows)
    np.testing.assert_allclose(out_bound.body_pos[rows], want["body_pos"], atol=1e-12)
    np.testing.assert_allclose(out_bound.body_linvel[rows], want["body_linvel"], atol=1e-10)
    # Rows not asked for stay as they were.
    assert not out_bound.body_pos[[1, 4, 5, 6, 7]].any()
    r.close()


def test_bound_dirty_rows_clear_the_mask(model, states):
    r = mjrefresh.Refresher(model, bodies=BODIES, num_threads=2)
    out = r.outputs(N)
    bound = r.bind(states["qpos"], states["qvel"], out)
    dirty = np.zeros(N, dtype=bool)
    dirty[[1, 7]] = True
    assert bound.refresh_dirty_rows(dirty) == 2
    assert not dirty.any()
    assert bound.refresh_dirty_rows(dirty) == 0
    assert out.body_pos[[1, 7]].any() and not out.body_pos[[0, 2]].any()
    r.close()


def test_bad_arrays_are_rejected_when_binding(model, states):
    r = mjrefresh.Refresher(model, bodies=BODIES, num_threads=1)
    out = r.outputs(N)
    with pytest.raises(ValueError, match=r"qvel: expected shape \(9, 18\), got \(9, 17\)"):
        r.bind(states["qpos"], states["qvel"][:, :17], out)
    with pytest.raises(TypeError, match=r"qvel: expected dtype float64, got float32"):
        r.bind(states["qpos"], states["qvel"].astype(np.float32), out)
    assert not out.body_pos.any()
    r.close()


def test_bound_call_after_close_raises(model, states):
    r = mjrefresh.Refresher(model, bodies=BODIES, num_threads=1)
    bound = r.bind(states["qpos"], states["qvel"], r.outputs(N))
    r.close()
    with pytest.raises(RuntimeError, match="Refresher is closed"):
        bound(np.arange(N))


def test_buffer_protocol_inputs_are_read_in_place(model, states):
    # A memoryview of the state (the buffer protocol, no DLPack) was accepted
    # by the native bind and then failed with an AttributeError while the
    # bound call recorded where its memory is; its exporter cannot move the
    # memory while the buffer is held, so nothing is watched.
    r = mjrefresh.Refresher(model, bodies=BODIES, num_threads=2)
    out_view, out_plain = r.outputs(N), r.outputs(N)
    qpos = states["qpos"].copy()
    assert r.refresh(np.arange(N), memoryview(qpos), memoryview(states["qvel"]), out_view) == N
    r.refresh(np.arange(N), qpos, states["qvel"], out_plain)
    np.testing.assert_array_equal(out_view.body_pos, out_plain.body_pos)
    bound = r.bind(memoryview(qpos), states["qvel"], out_view)
    qpos[:, 2] += 1.0  # read in place: the bound call sees the write
    bound(np.arange(N))
    np.testing.assert_array_equal(out_view.body_pos[:, 0, 2], out_plain.body_pos[:, 0, 2] + 1.0)
    r.close()


def test_a_dlpack_exporter_that_fails_is_named(model):
    class BadExport:  # __dlpack__ returns no capsule: numpy's ValueError escaped
        def __dlpack__(self, *args, **kwargs):
            return 5

        def __dlpack_device__(self):
            return (1, 0)

    r = mjrefresh.Refresher(model, bodies=BODIES, num_threads=1)
    with pytest.raises(TypeError, match=r"^body_pos: cannot view BadExport in place \("):
        r.outputs(N, body_pos=BadExport())
    r.close()


class ArrayInterfaceRows:
    """A backend's rows exposed through ``__array_interface__`` only, its
    ``data`` a buffer object (the spec allows it) rather than an address."""

    def __init__(self, values: np.ndarray) -> None:
        self.buffer = bytearray(values.tobytes())
        self.__array_interface__ = {
            "shape": values.shape,
            "typestr": "<f8",
            "data": self.buffer,
            "version": 3,
        }

    def values(self) -> np.ndarray:
        return np.asarray(self)


def test_array_interface_inputs_are_read_in_place_by_every_entry_point(model, states):
    # Refresher.refresh refused them ("expected a numpy array") while
    # bind_arrays took them; a cache over one then took data[0] (the first
    # byte) for its address and called every write in place a move.
    r = mjrefresh.Refresher(model, bodies=BODIES, model_fields=("body_mass",), num_threads=2)
    qpos = ArrayInterfaceRows(states["qpos"])
    qvel = ArrayInterfaceRows(states["qvel"])
    mass = ArrayInterfaceRows(np.tile(model.body_mass, (N, 1)))
    fields = {"body_mass": mass}
    out, plain = r.outputs(N), r.outputs(N)
    assert r.refresh(np.arange(N), qpos, qvel, out, model_fields=fields) == N
    r.refresh(
        np.arange(N),
        states["qpos"],
        states["qvel"],
        plain,
        model_fields={"body_mass": mass.values()},
    )
    np.testing.assert_array_equal(out.body_pos, plain.body_pos)
    cache = mjrefresh.bind_arrays(r, qpos, qvel, model_fields=fields)
    cache.refresh_dirty_rows()
    qpos.values()[0, :3] += 0.1  # the backend writes a row in place
    cache.mark_dirty(0)
    np.testing.assert_allclose(cache.body_pos("base")[0], plain.body_pos[0, 0] + 0.1, atol=1e-12)
    r.close()
