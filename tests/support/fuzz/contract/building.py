"""Building a refresher (`check_build`), a full refresh of a built one, and
`Refresher.outputs` (`check_outputs_call`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import mujoco
import numpy as np

import mjrefresh
from support.fuzz.contract.calls import check_call, names_argument
from support.fuzz.contract.states import make_states, valid_args
from support.fuzz.contract.violations import _describe, _tb, violation


def check_build(
    model: mujoco.MjModel,
    kwargs: Mapping[str, Any],
    *,
    broken: Iterable[str] = (),
    maybe: Iterable[str] = (),
    mentions: Iterable[str] = (),
    resources: bool = False,
    callbacks: bool = False,
) -> mjrefresh.Refresher | None:
    """Build `Refresher(model, **kwargs)` and assert the outcome.

    `broken`/`maybe` as for `check_call`; a PlanError may instead mention one
    of `mentions` (the refused sensor's name); `resources`: MemoryError or a
    RuntimeError naming the thread count is allowed. Returns the refresher,
    or None if it was (rightly) refused.
    """
    broken, maybe = set(broken), set(maybe)
    try:
        r = mjrefresh.Refresher(model, **kwargs)
    except (TypeError, ValueError, RuntimeError) as exc:
        if callbacks and "mjcb" in str(exc):
            return None
        if isinstance(exc, RuntimeError):
            threads = str(kwargs.get("num_threads", ""))
            if resources and (threads in str(exc) or "thread" in str(exc)):
                return None
            raise violation(f"unexpected {_describe(exc)}\n{_tb(exc)}") from exc
        allowed = broken | maybe
        if not allowed:
            raise violation(f"a valid selection was refused: {_describe(exc)}\n{_tb(exc)}") from exc
        named = names_argument(str(exc), allowed) or (
            isinstance(exc, mjrefresh.PlanError) and any(m in str(exc) for m in mentions)
        )
        if not named:
            raise violation(
                f"refusal does not name the offending argument (one of {sorted(allowed)}): "
                f"{_describe(exc)}"
            ) from exc
        return None
    except MemoryError as exc:
        threads = str(kwargs.get("num_threads", ""))
        if resources and (threads in str(exc) or "thread" in str(exc)):
            return None
        raise violation(f"unexpected {_describe(exc)}\n{_tb(exc)}") from exc
    except Exception as exc:  # noqa: BLE001
        raise violation(f"unexpected {_describe(exc)} from Refresher(...)\n{_tb(exc)}") from exc
    if broken:
        r.close()
        raise violation(f"an invalid selection was accepted: {sorted(broken)} {dict(kwargs)!r}")
    return r


def check_full_refresh(
    r: mjrefresh.Refresher, n: int, seed: int, dtype: Any = np.float64, note: str = ""
) -> None:
    """A valid refresh of every row of fresh random states is correct."""
    states = make_states(r.model, n, seed)
    args = valid_args(r, states, n, dtype)
    check_call(r, "refresh", args, note=note)


def check_outputs_call(
    r: mjrefresh.Refresher,
    num_envs: Any,
    dtype: Any = np.float64,
    arrays: Mapping[str, Any] | None = None,
    *,
    broken: Iterable[str] = (),
    maybe: Iterable[str] = (),
) -> str:
    """`r.outputs(num_envs, dtype, **arrays)`: zeroed arrays of the plan's
    shapes (the given arrays as they are), or a rejection naming the argument."""
    broken, maybe = set(broken), set(maybe)
    arrays = dict(arrays or {})
    try:
        out = r.outputs(num_envs, dtype, **arrays)
    except (TypeError, ValueError) as exc:
        allowed = broken | maybe
        if not allowed:
            raise violation(f"a valid outputs() call was rejected: {_describe(exc)}") from exc
        if not names_argument(str(exc), allowed):
            raise violation(
                f"outputs() rejection does not name one of {sorted(allowed)}: {_describe(exc)}"
            ) from exc
        return "rejected"
    except Exception as exc:  # noqa: BLE001
        raise violation(f"unexpected {_describe(exc)} from outputs()\n{_tb(exc)}") from exc
    if broken:
        raise violation(f"an invalid outputs() call was accepted: {sorted(broken)}")
    shapes = r.output_shapes(int(num_envs))
    got = out.arrays()
    if set(got) != set(shapes):
        raise violation(f"outputs() gave {sorted(got)}, the plan writes {sorted(shapes)}")
    for name, a in got.items():
        if name in arrays:
            if a is not arrays[name] and not np.shares_memory(a, np.asarray(arrays[name])):
                raise violation(f"outputs() copied the given {name} array")
            continue
        if a.shape != shapes[name] or a.dtype != np.dtype(dtype) or a.any():
            raise violation(
                f"outputs().{name}: {a.dtype}{a.shape}, expected zeroed "
                f"{np.dtype(dtype)}{shapes[name]}"
            )
    return "ok"
