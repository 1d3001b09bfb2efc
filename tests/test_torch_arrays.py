"""Torch tensors whose values are not their memory's, or that hold no CPU
memory: refused by name with the fix, wherever an array is taken (inputs,
outputs given to Refresher.outputs and to a cache, model fields, the dirty
mask). DLPack exports a tensor's memory as it is, so a lazy negation (torch's
neg bit, e.g. ``.imag`` of a ``conj()`` view) was read as the negated state,
and written with the negated results, without an error."""

from __future__ import annotations

import numpy as np
import pytest

import mjrefresh

torch = pytest.importorskip("torch", reason="torch is not installed (optional: DLPack arrays)")

N = 4


def lazy_negation(values: np.ndarray) -> torch.Tensor:
    """A tensor equal to `values` whose memory holds ``-values`` (neg bit set),
    made with public torch calls only: the imaginary part of a conj() view."""
    z = torch.zeros(values.shape, dtype=torch.complex128)
    z.imag[:] = torch.from_numpy(-values)
    t = z.conj().imag
    assert t.is_neg() and torch.equal(t, torch.from_numpy(values))
    return t


def neg_message(name: str) -> str:
    return (
        rf"^{name}: the torch.Tensor's is_neg\(\) is True: its values are a lazy negation of its "
        rf"memory, which mjrefresh would read or write as it is; pass its \.resolve_neg\(\) \(a "
        r"resolved copy\) and keep that tensor$"
    )


@pytest.fixture(scope="module")
def slider():
    """One slide joint (nq = nv = 1), so that a lazy negation's strided
    `.imag` view has a last axis of length 1 and passes every layout check."""
    xml = """<mujoco><worldbody><body name="b"><joint name="s" type="slide"/>
      <geom size=".1"/><site name="p"/></body></worldbody>
      <sensor><jointpos joint="s"/></sensor></mujoco>"""
    import mujoco

    model = mujoco.MjModel.from_xml_string(xml)
    with mjrefresh.Refresher(model, bodies=["b"], sensors=[0], num_threads=1) as r:
        yield model, r


def test_a_lazy_negation_is_refused_as_an_input(slider):
    model, r = slider
    qpos = np.linspace(0.1, 0.4, N).reshape(N, 1)
    qvel = np.zeros((N, 1))
    out = r.outputs(N)
    with pytest.raises(TypeError, match=neg_message("qpos")):
        r.refresh(np.arange(N), lazy_negation(qpos), qvel, out)
    with pytest.raises(TypeError, match=neg_message("qvel")):
        mjrefresh.bind_arrays(r, qpos, lazy_negation(qvel))
    assert not out.sensordata.any()  # nothing written
    # the resolved tensor is read in place, as any tensor
    r.refresh(np.arange(N), lazy_negation(qpos).resolve_neg().contiguous(), qvel, out)
    np.testing.assert_array_equal(out.sensordata[:, 0], qpos[:, 0])
    np.testing.assert_array_equal(out.body_pos[:, 0, 2], qpos[:, 0])  # along z


def test_a_lazy_negation_is_refused_as_an_output(slider):
    model, r = slider
    qpos, qvel = np.full((N, 1), 0.3), np.zeros((N, 1))
    sens = lazy_negation(np.zeros((N, 1)))
    with pytest.raises(TypeError, match=neg_message("sensordata")):
        r.outputs(N, sensordata=sens)
    with pytest.raises(TypeError, match=neg_message("sensordata")):
        mjrefresh.bind_arrays(r, qpos, qvel, sensordata=sens)
    out = r.outputs(N)
    out.sensordata = sens  # past outputs()' own check: the native bind refuses it
    with pytest.raises(TypeError, match=neg_message("out.sensordata")):
        r.refresh(np.arange(N), qpos, qvel, out)
    assert not torch.count_nonzero(sens)


def test_a_lazy_negation_is_refused_as_a_model_field_and_a_dirty_mask(slider):
    model, _ = slider
    with mjrefresh.Refresher(model, bodies=["b"], model_fields=["body_mass"], num_threads=1) as r:
        qpos, qvel = np.zeros((N, 1)), np.zeros((N, 1))
        mass = np.tile(model.body_mass, (N, 1))[:, 1:]  # (N, 1): only body 'b'
        with pytest.raises(TypeError, match=neg_message(r"model_fields\['body_mass'\]")):
            r.refresh(
                np.arange(N),
                qpos,
                qvel,
                r.outputs(N),
                model_fields={"body_mass": lazy_negation(mass)},
            )
    r = slider[1]
    with pytest.raises(TypeError, match=r"^dirty: the torch.Tensor's is_neg\(\) is True"):
        r.refresh_dirty_rows(
            lazy_negation(np.zeros(N)), np.zeros((N, 1)), np.zeros((N, 1)), r.outputs(N)
        )


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda: torch.zeros((N, 1), dtype=torch.float64, device="meta"),
            r"^qpos: expected an array in CPU memory, got a torch.Tensor on device 'meta' "
            r"\(move it once with qpos.cpu\(\) and keep that array\)$",
        ),
        (
            lambda: torch.zeros((N, 1), dtype=torch.float64).to_sparse(),
            r"^qpos: expected a dense array, got a torch.Tensor of layout torch.sparse_coo "
            r"\(qpos.to_dense\(\) makes a dense copy\)$",
        ),
        (
            lambda: torch.zeros((N, 1), dtype=torch.bfloat16),
            r"^qpos: expected dtype float64, got bfloat16 ",
        ),
        (
            lambda: torch.zeros((N, 1), dtype=torch.complex128).conj(),
            r"^qpos: the torch.Tensor's is_conj\(\) is True: its values are a lazy conjugation",
        ),
    ],
    ids=["meta", "sparse", "bfloat16", "conj"],
)
def test_tensors_that_are_not_cpu_float64_arrays_are_named(slider, make, message):
    _, r = slider
    with pytest.raises(TypeError, match=message):
        r.refresh(np.arange(N), make(), np.zeros((N, 1)), r.outputs(N))
