"""The fast engine's two builds (baseline SSE2: rows in pairs; AVX2: rows
in quads, then a pair and a single row; chosen per CPU or by
MJREFRESH_FAST_ISA) give the same bits on every embedded model and the test
models of every covered sensor type, with and without per-row model
fields, into float64 and float32 outputs, including rows with non-finite
state values."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
from support import engine_models
from support.sensors import non_acc_sensors
from support.states import random_fields
from support.states import random_states_unnormalised as random_states

import mjrefresh
from mjrefresh import _core, models

pytestmark = (
    pytest.mark.parity
)  # CI runs it on every release and interpreter (each wheel's compiler)

# One thread takes chunks of 64 rows (refresher.cc), the last one 3: in the
# AVX2 build 16 quads, then a pair and a single row; in the baseline build
# pairs and a single row.
N = 66
FIELDS = ("body_pos", "body_quat", "jnt_axis")


def _outputs(monkeypatch, isa, m, state, dtype, fields):
    monkeypatch.setenv("MJREFRESH_FAST_ISA", isa)
    r = mjrefresh.Refresher(
        m,
        bodies=list(range(1, m.nbody)),
        relative_to=1,
        sites=list(range(m.nsite)),
        sensors=non_acc_sensors(m),
        engine="fast",
        model_fields=tuple(fields) if fields else (),
    )
    assert r.plan.engine == "fast"
    out = r.outputs(N + 1, dtype=dtype)
    kw = {"model_fields": fields} if fields else {}
    r.refresh(np.arange(N + 1), **state, out=out, **kw)
    r.close()
    return out.arrays()


@pytest.fixture
def avx2(monkeypatch):
    monkeypatch.delenv("MJREFRESH_FAST_ISA", raising=False)
    if _core.fast_kernel_isa() != "avx2":
        pytest.skip("this core or CPU has no AVX2 build of the pair pass")


MODELS = {
    **{name: models.MODELS[name] for name in sorted(models.MODELS)},
    # every covered sensor type, frame type and cutoff; a long chain; a robot
    **{name: lambda name=name: engine_models.model(name) for name in ("zoo", "chain", "go1like")},
}


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("with_fields", [False, True])
def test_avx2_and_sse2_builds_give_the_same_bits(avx2, monkeypatch, name, dtype, with_fields):
    m = MODELS[name]()
    state = random_states(m, N + 1, seed=3)
    state["qpos"][5, -1] = np.nan  # a non-finite hinge angle (or coordinate) in a quad
    state["qpos"][7, -2] = 3e5  # beyond the sin_cos kernel's range: libm in that lane
    state["qpos"][11, -3] = -np.inf
    state["qvel"][9, 0] = np.inf
    state["qpos"][65, -1] = np.nan  # in the pair
    hinges = np.flatnonzero(m.jnt_type == mujoco.mjtJoint.mjJNT_HINGE)
    if hinges.size:
        # the pair's first hinge not finite in one row: the AVX2 pair pass
        # then skipped an odd last hinge's terms in both rows (humanoid)
        state["qpos"][64, m.jnt_qposadr[hinges[0]]] = np.inf
    fields = random_fields(m, FIELDS, N + 1, seed=4) if with_fields else None
    a = _outputs(monkeypatch, "sse2", m, state, dtype, fields)
    b = _outputs(monkeypatch, "avx2", m, state, dtype, fields)
    assert a.keys() == b.keys() and a
    for key in a:
        np.testing.assert_array_equal(a[key], b[key], err_msg=key, strict=True)


def test_the_isa_variable_chooses_and_bad_values_are_refused(monkeypatch):
    monkeypatch.setenv("MJREFRESH_FAST_ISA", "sse2")
    assert _core.fast_kernel_isa() == "sse2"
    monkeypatch.setenv("MJREFRESH_FAST_ISA", "avx512")
    with pytest.raises(
        ValueError, match=r"MJREFRESH_FAST_ISA: expected 'sse2', 'avx2' or unset, got 'avx512'"
    ):
        _core.fast_kernel_isa()
    m = models.quadruped()
    with pytest.raises(ValueError, match=r"MJREFRESH_FAST_ISA: expected"):
        mjrefresh.Refresher(m, bodies=[1], engine="fast")
    mjrefresh.Refresher(m, bodies=[1], engine="exact").close()  # the exact engine does not read it
