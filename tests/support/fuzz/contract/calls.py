"""One call of a refresh entry point (`run_call`) and the contract for its
outcome (`check_call`): correct rows and nothing else written, a rejection
naming the offending argument (`names_argument`), "Refresher is closed", or
a RefreshError for the failing rows."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

import mjrefresh
from support.fuzz.contract.comparison import _as_state, assert_rows_match, written_columns
from support.fuzz.contract.memory import Memory
from support.fuzz.contract.violations import _describe, _tb, violation


def _arrays_of(value: Any) -> list[np.ndarray]:
    if isinstance(value, np.ndarray):
        return [value]
    if isinstance(value, mjrefresh.RefreshOutputs):
        return [a for a in value.arrays().values() if isinstance(a, np.ndarray)]
    if isinstance(value, Mapping):
        return [a for v in value.values() for a in _arrays_of(v)]
    if isinstance(value, (list, tuple)):
        return [a for v in value for a in _arrays_of(v)]
    return []


def _allow_outputs(mem: Memory, r: mjrefresh.Refresher, out: Any, ids: np.ndarray) -> None:
    if not isinstance(out, mjrefresh.RefreshOutputs) or ids.size == 0:
        return
    cols = written_columns(r)
    for name, a in out.arrays().items():
        if not isinstance(a, np.ndarray) or a.ndim < 2 or ids.max() >= a.shape[0]:
            continue
        if name == "sensordata":
            if cols.size and cols.max() < a.shape[1]:
                mem.allow(a, np.ix_(ids, cols))
        else:
            mem.allow(a, ids)


def _aliases(arg: str) -> list[str]:
    if arg.startswith("out."):
        return [arg, arg[4:]]
    return [arg]


def names_argument(message: str, args: Iterable[str]) -> bool:
    """Whether the text before the first colon of `message` names one of `args`
    ("qpos", "out.sensordata"/"sensordata", "sensor_ranges[0]", "a/b", ...)."""
    head = message.split(":", 1)[0].strip()
    parts = [p.removeprefix("out.") for p in re.split(r"[/ ]", head)]
    heads = (head, head.removeprefix("out."))
    for arg in args:
        for alias in _aliases(arg):
            if any(h.startswith(alias) for h in heads) or any(
                p == alias or p.startswith(alias + "[") for p in parts
            ):
                return True
    return False


CLOSED = "Refresher is closed"


def run_call(r: mjrefresh.Refresher, method: str, args: Mapping[str, Any]) -> Any:
    """Call `method` of `r` ("refresh", "refresh_dirty_rows", "bound",
    "bound_dirty", "bound_call") with keyword `args`."""
    kw = {k: v for k, v in args.items() if k not in ("rows", "dirty", "qpos", "qvel", "out")}
    if method == "refresh":
        return r.refresh(args["rows"], args["qpos"], args["qvel"], args["out"], **kw)
    if method == "refresh_dirty_rows":
        return r.refresh_dirty_rows(args["dirty"], args["qpos"], args["qvel"], args["out"], **kw)
    kw.pop("bound", None)
    bound = args.get("bound") or r.bind(args["qpos"], args["qvel"], args["out"], **kw)
    if method == "bound":
        return bound.refresh(args["rows"])
    if method == "bound_call":
        return bound(args["rows"])
    if method == "bound_dirty":
        return bound.refresh_dirty_rows(args["dirty"])
    raise ValueError(f"unknown method {method!r}")


def _intended_ids(method: str, args: Mapping[str, Any]) -> np.ndarray | None:
    """The row ids a valid call selects, read before the call."""
    key = "dirty" if method.endswith("dirty") or method == "refresh_dirty_rows" else "rows"
    sel = args.get(key)
    if isinstance(sel, slice) and sel.step != 0:  # a valid call's n rows are qpos's
        start, stop, step = sel.indices(len(args["qpos"]))
        return np.sort(np.arange(start, stop, step, dtype=np.int64))
    try:
        a = np.array(sel)
        if a.ndim == 0 and a.dtype.kind in "iu":
            a = a.reshape(1)  # one row id
    except Exception:  # noqa: BLE001 - an unparsable selection is never valid
        return None
    if a.ndim != 1:
        return None
    if a.dtype == np.bool_:
        return np.flatnonzero(a)
    if a.size == 0:
        return np.empty(0, dtype=np.int64)
    if a.dtype.kind not in "iu":
        return None
    return a.astype(np.int64)


def check_call(
    r: mjrefresh.Refresher,
    method: str,
    args: Mapping[str, Any],
    states: Mapping[str, Any] | None = None,
    *,
    broken: Iterable[str] = (),
    maybe: Iterable[str] = (),
    closed: bool = False,
    refresh_errors: bool = False,
    callbacks: bool = False,
    lenient_fast: bool = False,
    note: str = "",
) -> str:
    """Make the call and assert the contract for its outcome.

    Args:
        r, method, args: see `run_call`.
        states: the state the oracle uses (default: the call's own inputs,
            read before the call).
        broken: arguments this case made invalid: the call must be rejected,
            naming one of them.
        maybe: arguments whose validity the README leaves open: success must
            then be correct, a rejection must name one of them.
        closed: the refresher is closed: RuntimeError("Refresher is closed").
        refresh_errors: MuJoCo errors in rows (RefreshError) are allowed.
        callbacks: MuJoCo global callbacks are installed: a clean refusal
            (ValueError/RuntimeError naming the ``mjcb_`` callback, nothing
            written) is allowed besides a correct success.
        lenient_fast: see `assert_rows_match`.

    Returns:
        "ok", "rejected", "closed" or "refresh-error".
    """
    broken, maybe = set(broken), set(maybe)
    label = f" [{note}]" if note else ""
    arrays = [a for v in args.values() for a in _arrays_of(v)]
    mem = Memory(arrays)
    ids = _intended_ids(method, args)
    n_rows = None
    q = args.get("qpos")
    if isinstance(q, np.ndarray) and q.ndim == 2:
        n_rows = q.shape[0]
    if states is None:
        states = {
            "qpos": _as_state(args.get("qpos"), 0),
            "qvel": _as_state(args.get("qvel"), 0),
            "mocap_pos": _as_state(args.get("mocap_pos"), 0),
            "mocap_quat": _as_state(args.get("mocap_quat"), 0),
            "time": _as_state(args.get("time"), n_rows or 0),
        }
    else:
        states = {k: _as_state(v, n_rows or 0) for k, v in states.items()}
    fields = args.get("model_fields")
    fields_copy = (
        {k: np.array(v, dtype=np.float64) for k, v in fields.items()}
        if isinstance(fields, Mapping) and not broken and not maybe
        else fields
    )
    dirty = args.get("dirty") if "dirty" in method or method == "refresh_dirty_rows" else None
    try:
        result = run_call(r, method, args)
    except mjrefresh.RefreshError as exc:
        if not refresh_errors:
            raise violation(f"unexpected RefreshError{label}: {exc}") from exc
        _check_refresh_error(r, exc, args, states, ids, mem, dirty, fields_copy, label)
        return "refresh-error"
    except (TypeError, ValueError, RuntimeError) as exc:
        if callbacks and "mjcb" in str(exc) and not mem.changed(allowed=False):
            return "refused-callback"
        if isinstance(exc, RuntimeError) and not isinstance(exc, mjrefresh.RefreshError):
            return _closed_outcome(exc, closed, mem, label)
        if closed:
            raise violation(
                f"call on a closed refresher raised {_describe(exc)}{label}; expected "
                f"RuntimeError({CLOSED!r})"
            ) from exc
        allowed = broken | maybe
        if not allowed:
            raise violation(
                f"a valid call was rejected{label}: {_describe(exc)}\n{_tb(exc)}"
            ) from exc
        if not names_argument(str(exc), allowed):
            raise violation(
                f"rejection does not name the offending argument (one of {sorted(allowed)})"
                f"{label}: {_describe(exc)}"
            ) from exc
        problems = mem.changed(allowed=False)
        if problems:
            raise violation(
                f"a rejected call ({_describe(exc)}) wrote into its arrays{label}: "
                + "; ".join(problems)
            ) from exc
        return "rejected"
    except Exception as exc:  # noqa: BLE001 - anything else escapes the contract
        raise violation(f"unexpected {_describe(exc)}{label}\n{_tb(exc)}") from exc
    if closed:
        raise violation(f"a call on a closed refresher succeeded{label} (returned {result!r})")
    if broken:
        raise violation(
            f"an invalid call was accepted{label}: {sorted(broken)} should have been rejected "
            f"(returned {result!r})"
        )
    assert ids is not None, "a valid call has parsable rows"
    if result != len(ids):
        raise violation(f"returned {result!r}, expected {len(ids)} rows refreshed{label}")
    _allow_outputs(mem, r, args.get("out"), ids)
    if dirty is not None and isinstance(dirty, np.ndarray):
        mem.allow(dirty, ids)
        if dirty.any():
            raise violation(
                f"dirty entries left set after refresh_dirty_rows{label}: "
                f"{np.flatnonzero(dirty).tolist()[:8]}"
            )
    problems = mem.changed(allowed=True)
    if problems:
        raise violation(
            f"the call wrote outside the selected rows' planned outputs{label}: "
            + "; ".join(problems)
        )
    assert_rows_match(r, args["out"], states, ids, fields_copy, label, lenient_fast)
    return "ok"


def _closed_outcome(exc: RuntimeError, closed: bool, mem: Memory, label: str) -> str:
    if closed and str(exc) == CLOSED:
        problems = mem.changed(allowed=False)
        if problems:
            raise violation(f"a call on a closed refresher wrote{label}: {problems}") from exc
        return "closed"
    raise violation(f"unexpected {_describe(exc)}{label}\n{_tb(exc)}") from exc


def _check_refresh_error(r, exc, args, states, ids, mem, dirty, fields, label) -> None:
    failed = list(exc.rows)
    if ids is None or not set(failed) <= {int(i) for i in ids} or failed != sorted(failed):
        raise violation(f"RefreshError rows {failed} are not sorted selected rows{label}")
    if not str(exc).startswith(f"MuJoCo error while refreshing row {failed[0]}"):
        raise violation(f"RefreshError message does not name the first failing row: {exc}")
    good = np.array([i for i in ids if int(i) not in set(failed)], dtype=np.int64)
    _allow_outputs(mem, r, args.get("out"), good)
    if dirty is not None:
        mem.allow(dirty, good)
        still = set(np.flatnonzero(dirty).tolist())
        if still != set(failed):
            raise violation(
                f"after a RefreshError dirty holds {sorted(still)}, "
                f"expected the failing rows {failed}{label}"
            )
    problems = mem.changed(allowed=True)
    if problems:
        raise violation(f"a RefreshError call wrote failing or unselected rows{label}: {problems}")
    assert_rows_match(r, args["out"], states, good, fields, label)
