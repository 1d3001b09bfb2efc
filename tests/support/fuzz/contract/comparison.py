"""The oracle (mj_forward at the refreshed rows) and the comparison of
refreshed values with it, bit for bit or to the engine's tolerance."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

import mujoco
import numpy as np

import mjrefresh
from support.fuzz.contract.violations import violation
from support.oracle import Forward, forward_rows

POSE_TOL = 1e-12
VEL_TOL = 1e-10
HUGE = 1e100  # a state value this large counts as extreme (like NaN/inf)


def _as_state(value: Any, n: int) -> np.ndarray | None:
    if value is None:
        return None
    try:
        a = np.array(value, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    if a.ndim == 0:
        a = np.broadcast_to(a, (n,))
    return a


def oracle(
    model: mujoco.MjModel,
    states: Mapping[str, Any],
    ids: Sequence[int],
    model_fields: Mapping[str, np.ndarray] | None = None,
) -> Forward:
    """mj_forward at rows `ids` (per-row model copies for per-environment fields),
    with every tree awake (README, Guarantees: a row carries no sleep state;
    MuJoCo's own first forward of a fresh MjData leaves the energies of trees
    that start asleep at 0)."""
    if model.opt.enableflags & mujoco.mjtEnableBit.mjENBL_SLEEP:
        model = copy.deepcopy(model)
        model.opt.enableflags &= ~int(mujoco.mjtEnableBit.mjENBL_SLEEP)
    if not model_fields:
        return forward_rows(model, states, rows=list(ids))
    parts = []
    for row in ids:
        m = copy.deepcopy(model)
        for name, vals in model_fields.items():
            getattr(m, name)[...] = vals[row]
        if "body_mass" in model_fields:  # as mj_setConst derives it
            m.body_subtreemass[:] = m.body_mass
            for b in range(m.nbody - 1, 0, -1):
                m.body_subtreemass[m.body_parentid[b]] += m.body_subtreemass[b]
        parts.append(forward_rows(m, states, rows=[row]))
    if not parts:
        return forward_rows(model, states, rows=[])
    fields = {
        k: np.concatenate([getattr(p, k) for p in parts])
        for k in ("sensordata", "xpos", "xquat", "xmat", "vel", "site_xpos", "site_xmat")
    }
    return Forward(model, **fields)


def _column_tolerances(model: mujoco.MjModel, plan: mjrefresh.RefreshPlan) -> np.ndarray:
    tol = np.full(model.nsensordata, POSE_TOL)
    for i in plan.sensor_ids:
        if int(model.sensor_needstage[i]) == mujoco.mjtStage.mjSTAGE_VEL:
            adr = int(model.sensor_adr[i])
            tol[adr : adr + int(model.sensor_dim[i])] = VEL_TOL
    return tol


def planned_columns(plan: mjrefresh.RefreshPlan) -> np.ndarray:
    return np.array([c for a, b in plan.column_ranges for c in range(a, b)], dtype=np.int64)


def written_columns(r: mjrefresh.Refresher) -> np.ndarray:
    """The sensordata columns a refresh writes: the planned ones, or none when
    the model disables sensors (mj_forward then leaves sensordata as it was,
    and so must a refresh: a write there is a violation)."""
    if r.model.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_SENSOR:
        return np.zeros(0, dtype=np.int64)
    return planned_columns(r.plan)


def compare(
    name: str,
    got: np.ndarray,
    exp: np.ndarray,
    engine: str,
    tol: Any,
    extreme: np.ndarray,
    label: str = "",
) -> None:
    """`got` (refreshed rows) against mj_forward's `exp`, row mask `extreme`
    excluded except for the exact engine's float64 outputs."""
    got = np.asarray(got)
    f32 = got.dtype == np.float32
    exp32 = exp.astype(np.float32).astype(np.float64) if f32 else exp
    g = got.astype(np.float64)
    ok_rows = ~extreme
    if engine == "exact":
        bad = ~((g == exp32) | (np.isnan(g) & np.isnan(exp32)))
        if not f32:
            # bit for bit, non-finite rows too (the exact engine gives what
            # the stage functions give)
            bad_rows = bad.reshape(bad.shape[0], -1).any(axis=1)
        else:
            bad_rows = bad.reshape(bad.shape[0], -1).any(axis=1) & ok_rows
    else:
        tol = np.broadcast_to(tol, exp.shape)
        # "to rounding": the absolute bounds, plus ~50 ulp where values are large
        rel = np.abs(exp) * (2.0**-23 if f32 else 1e-14) + (1e-37 if f32 else 0.0)
        finite = np.isfinite(exp)
        bad = finite & ~(np.abs(g - exp) <= tol + rel)  # NaN in got counts as bad
        bad_rows = bad.reshape(bad.shape[0], -1).any(axis=1) & ok_rows
    if bad_rows.any():
        k = int(np.flatnonzero(bad_rows)[0])
        ref = exp32 if engine == "exact" else exp
        gk, ek = g[k].reshape(-1), ref[k].reshape(-1)
        j = int(np.flatnonzero(bad[k].reshape(-1))[0])
        tk = np.broadcast_to(tol, exp.shape)[k].reshape(-1)[j] if engine != "exact" else 0.0
        raise violation(
            f"{name}{label}: refreshed value differs from mj_forward ({engine} engine, "
            f"{got.dtype}) at refreshed row #{k}, flat element {j}: got {gk[j]!r}, "
            f"mj_forward {ek[j]!r} (tolerance {tk:g}; {int(bad_rows.sum())} rows differ)"
        )


def assert_rows_match(
    r: mjrefresh.Refresher,
    out: mjrefresh.RefreshOutputs,
    states: Mapping[str, Any],
    ids: Sequence[int],
    model_fields: Mapping[str, np.ndarray] | None = None,
    label: str = "",
    lenient_fast: bool = False,
) -> None:
    """Each of `ids` in `out` equals mj_forward at that row of `states`.

    `lenient_fast`: the model holds a huge finite value (1e308), so absolute
    tolerances mean nothing for the fast engine's rows (MuJoCo's own values
    then carry rounding errors of order 1e290); only the exact engine is
    compared (bit for bit)."""
    ids = [int(i) for i in ids]
    if not ids:
        return
    model, plan = r.model, r.plan
    n = None
    for v in states.values():
        if v is not None and np.ndim(v) >= 1:
            n = len(v)
            break
    st = {k: _as_state(v, n or 0) for k, v in states.items()}
    ref = oracle(model, st, ids, model_fields)
    exp = ref.outputs(plan.body_ids, plan.relative_to_id, plan.site_ids)
    extreme = np.zeros(len(ids), dtype=bool)
    for k, v in st.items():
        if v is None or k == "time" and not plan.needs_time:
            continue
        rows = np.asarray(v)[ids].reshape(len(ids), -1)
        extreme |= ~np.isfinite(rows).all(axis=1) | (np.abs(rows) > HUGE).any(axis=1)
    for f in (model_fields or {}).values():
        rows = np.asarray(f)[ids].reshape(len(ids), -1)
        extreme |= ~np.isfinite(rows).all(axis=1) | (np.abs(rows) > HUGE).any(axis=1)
    engine = plan.engine
    if lenient_fast and engine == "fast":
        extreme[:] = True
    for name, arr in out.arrays().items():
        got = np.asarray(arr)[ids]
        if name == "sensordata":
            cols = written_columns(r)
            tol = _column_tolerances(model, plan)[cols]
            compare(name, got[:, cols], exp[name][:, cols], engine, tol, extreme, label)
        else:
            tol = VEL_TOL if name in ("body_linvel", "body_angvel") else POSE_TOL
            compare(name, got, exp[name], engine, tol, extreme, label)
