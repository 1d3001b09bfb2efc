"""StateCache: reads checked against mj_forward (`check_cache_read`),
`bind_arrays` arguments and row marks."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import mujoco
import numpy as np

import mjrefresh
from support.fuzz.contract.calls import _arrays_of, names_argument
from support.fuzz.contract.comparison import (
    POSE_TOL,
    VEL_TOL,
    _as_state,
    _column_tolerances,
    compare,
    oracle,
    written_columns,
)
from support.fuzz.contract.memory import Memory
from support.fuzz.contract.violations import _describe, _tb, violation


def expected_read(
    r: mjrefresh.Refresher, states: Mapping[str, Any], read: str, arg: Any, env_ids: Any, n: int
) -> tuple[np.ndarray, Any]:
    """mj_forward's value of a cache read (`read` = an output name, or
    "sensor" with `arg` the sensor name/id), indexed like the read; also the
    tolerance."""
    plan, model = r.plan, r.model
    rows = list(range(n))
    ref = oracle(model, {k: _as_state(v, n) for k, v in states.items()}, rows)
    exp = ref.outputs(plan.body_ids, plan.relative_to_id, plan.site_ids)
    if read == "sensor":
        s = model.sensor(arg)
        cols = slice(int(s.adr[0]), int(s.adr[0] + s.dim[0]))
        full = exp["sensordata"][:, cols]
        tol: Any = VEL_TOL if int(s.needstage[0]) == mujoco.mjtStage.mjSTAGE_VEL else POSE_TOL
    else:
        full = exp[read]
        tol = VEL_TOL if read in ("body_linvel", "body_angvel") else POSE_TOL
        if arg is not None:
            pos = {bid: k for k, bid in enumerate(plan.body_ids)}

            def col(b: Any) -> int:
                return pos[model.body(b).id]

            idx = col(arg) if isinstance(arg, (str, int, np.integer)) else [col(b) for b in arg]
            full = full[:, idx]
    if env_ids is None:
        return full, tol
    if isinstance(env_ids, (slice, int, np.integer)):
        return full[env_ids], tol
    a = np.asarray(env_ids)
    if a.dtype == np.bool_:
        a = np.flatnonzero(a)
    return full[a.astype(np.int64)], tol


def check_cache_read(
    cache: mjrefresh.StateCache,
    read: str,
    arg: Any,
    env_ids: Any,
    states: Mapping[str, Any],
    *,
    broken: Iterable[str] = (),
    note: str = "",
) -> str:
    """One cache read (`cache.<read>(arg, env_ids=...)`), checked against mj_forward."""
    broken = set(broken)
    label = f" [{note}]" if note else ""
    r, n = cache.refresher, cache.num_envs
    storage = cache.storage.arrays()
    mem = Memory(list(storage.values()))
    dirty_before = cache.dirty.copy()
    try:
        if read == "outputs":
            got = cache.outputs(env_ids=env_ids)
        elif read == "sensor":
            got = cache.sensor(arg, env_ids=env_ids)
        else:
            got = getattr(cache, read)(arg, env_ids=env_ids)
    except (TypeError, ValueError) as exc:
        if not broken:
            raise violation(
                f"a valid cache read was rejected{label}: {_describe(exc)}\n{_tb(exc)}"
            ) from exc
        if not names_argument(str(exc), broken):
            raise violation(
                f"cache read rejection does not name one of {sorted(broken)}"
                f"{label}: {_describe(exc)}"
            ) from exc
        if mem.changed(allowed=False) or not np.array_equal(cache.dirty, dirty_before):
            raise violation(
                f"a rejected cache read refreshed rows{label}: {_describe(exc)}"
            ) from exc
        return "rejected"
    except Exception as exc:  # noqa: BLE001
        raise violation(
            f"unexpected {_describe(exc)} from cache.{read}{label}\n{_tb(exc)}"
        ) from exc
    if broken:
        raise violation(f"an invalid cache read was accepted{label}: {sorted(broken)}")
    engine = r.plan.engine
    if read == "outputs":
        cols = written_columns(r)
        tols = _column_tolerances(r.model, r.plan)
        for name, arr in got.arrays().items():
            exp, tol = expected_read(r, states, name, None, env_ids, n)
            g = np.asarray(arr)
            if name == "sensordata":
                g, exp, tol = g[..., cols], exp[..., cols], tols[cols]
            g2 = g.reshape(1, -1) if g.ndim <= 1 else g.reshape(g.shape[0], -1)
            if g.shape != exp.shape:
                raise violation(
                    f"cache.outputs().{name} has shape {g.shape}, expected {exp.shape}{label}"
                )
            tol2 = np.broadcast_to(tol, exp.shape).reshape(g2.shape)
            compare(
                f"cache.outputs().{name}",
                g2,
                exp.reshape(g2.shape),
                engine,
                tol2,
                np.zeros(g2.shape[0], bool),
                label,
            )
        return "ok"
    exp, tol = expected_read(r, states, read, arg, env_ids, n)
    g = np.asarray(got)
    if g.shape != exp.shape:
        raise violation(f"cache.{read} returned shape {g.shape}, expected {exp.shape}{label}")
    g2 = g.reshape(1, -1) if g.ndim <= 1 else g.reshape(g.shape[0], -1)
    e2 = exp.reshape(g2.shape)
    compare(f"cache.{read}", g2, e2, engine, tol, np.zeros(g2.shape[0], bool), label)
    return "ok"


def check_bind_arrays(
    r: mjrefresh.Refresher, *, broken: Iterable[str] = (), maybe: Iterable[str] = (), **kwargs: Any
) -> mjrefresh.StateCache | None:
    """`mjrefresh.bind_arrays(r, **kwargs)`: a cache, or a rejection naming
    one of `broken` that wrote nothing into the given arrays."""
    broken, maybe = set(broken), set(maybe)
    mem = Memory([a for v in kwargs.values() for a in _arrays_of(v)])
    try:
        cache = mjrefresh.bind_arrays(r, **kwargs)
    except (TypeError, ValueError) as exc:
        allowed = broken | maybe
        if not allowed:
            raise violation(f"valid bind_arrays arguments were rejected: {_describe(exc)}") from exc
        if not names_argument(str(exc), allowed):
            raise violation(
                f"bind_arrays rejection does not name one of {sorted(allowed)}: {_describe(exc)}"
            ) from exc
        if mem.changed(allowed=False):
            raise violation(
                f"a rejected bind_arrays wrote into its arrays: {_describe(exc)}"
            ) from exc
        return None
    except Exception as exc:  # noqa: BLE001
        raise violation(f"unexpected {_describe(exc)} from bind_arrays\n{_tb(exc)}") from exc
    if broken:
        raise violation(f"invalid bind_arrays arguments were accepted: {sorted(broken)}")
    return cache


def check_mark(cache: mjrefresh.StateCache, mark: str, rows: Any, *, broken: bool) -> None:
    """`cache.<mark>(rows)`: marks those rows, or rejects bad rows naming `rows`."""
    before = cache.dirty.copy()
    try:
        getattr(cache, mark)(rows)
    except (TypeError, ValueError) as exc:
        if not broken:
            raise violation(
                f"cache.{mark}({rows!r}) rejected valid rows: {_describe(exc)}"
            ) from exc
        if not names_argument(str(exc), {"rows"}):
            raise violation(f"cache.{mark} rejection does not name rows: {_describe(exc)}") from exc
        if not np.array_equal(cache.dirty, before):
            raise violation(f"a rejected cache.{mark} changed the dirty mask") from exc
        return
    except Exception as exc:  # noqa: BLE001
        raise violation(f"unexpected {_describe(exc)} from cache.{mark}\n{_tb(exc)}") from exc
    if broken:
        raise violation(f"cache.{mark}({rows!r}) accepted invalid rows")
