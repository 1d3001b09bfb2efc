"""Which arguments of a call must be rejected and which may be
(`expectation`), and `check`: `check_call` with that expectation."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

import mjrefresh
from support.fuzz.contract.calls import check_call

# What README "Use"/"Guarantees" promise about arguments, as a predicate on
# the arrays a case built: `broken` arguments must be rejected, `maybe` ones
# (where the README leaves it open) may be either, everything else must work.
_F64 = np.dtype(np.float64)
_OUT_DTYPES = (np.dtype(np.float64), np.dtype(np.float32))


def _last_contiguous(a: np.ndarray) -> bool:
    # an empty array has no layout to speak of (numpy may give it zero strides)
    return a.size == 0 or a.ndim == 0 or a.shape[-1] <= 1 or a.strides[-1] == a.itemsize


def _rows_contiguous(a: np.ndarray) -> bool:
    """Each row's values (the trailing axes) form one C-contiguous block."""
    if a.size == 0:
        return True
    expect = a.itemsize
    for k in range(a.ndim - 1, 0, -1):
        if a.shape[k] > 1 and a.strides[k] != expect:
            return False
        expect *= a.shape[k]
    return True


def _shares(a: np.ndarray, b: np.ndarray) -> bool:
    try:
        return bool(np.shares_memory(a, b, max_work=10**6))
    except np.exceptions.TooHardError:
        return True


def _is_scalar_number(v: Any) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(
        v, (bool, np.bool_)
    )


def expectation(
    r: mjrefresh.Refresher, method: str, args: Mapping[str, Any]
) -> tuple[set[str], set[str]]:
    """(broken, maybe) argument names of a call with `args` (see check_call)."""
    model, plan = r.model, r.plan
    broken: set[str] = set()
    maybe: set[str] = set()
    q = args.get("qpos")
    n: int | None = None
    if isinstance(q, np.ndarray) and q.ndim == 2:
        n = q.shape[0]
    else:
        broken.add("qpos")
    inputs: list[tuple[str, np.ndarray]] = []

    def state(name: str, a: Any, width: tuple[int, ...], items: bool = False) -> None:
        if not isinstance(a, np.ndarray):
            broken.add(name)
            return
        inputs.append((name, a))
        if a.dtype.kind == "f" and a.itemsize == 8 and not a.dtype.isnative:
            maybe.add(name)  # float64 in the other byte order: README is silent
            if n is None or a.shape != (n, *width) or not _last_contiguous(a):
                broken.add(name)
        elif n is None or a.dtype != _F64 or a.shape != (n, *width) or not _last_contiguous(a):
            broken.add(name)
        elif items and a.size and a.shape[1] > 1 and a.strides[1] != a.shape[2] * a.itemsize:
            maybe.add(name)  # README: "last axis contiguous; any row stride"
        if not a.flags.aligned:
            maybe.add(name)  # README is silent on alignment

    state("qpos", q, (model.nq,))
    state("qvel", args.get("qvel"), (model.nv,))
    for name, w in (("mocap_pos", 3), ("mocap_quat", 4)):
        a = args.get(name)
        if model.nmocap:
            if a is None:
                broken.add(name)
            else:
                state(name, a, (model.nmocap, w), items=True)
        elif a is not None:
            maybe.add(name)  # arrays for a model without mocap bodies
            if isinstance(a, np.ndarray):
                inputs.append((name, a))
    t = args.get("time")
    if t is None:
        if plan.needs_time:
            broken.add("time")
    elif isinstance(t, (bool, np.bool_)):
        maybe.add("time")
    elif _is_scalar_number(t):
        pass
    elif isinstance(t, np.ndarray):
        inputs.append(("time", t))
        if t.ndim == 0:
            if t.dtype != _F64:
                (maybe if t.dtype.kind in "iuf" else broken).add("time")
        elif t.dtype.kind == "f" and t.itemsize == 8 and not t.dtype.isnative:
            maybe.add("time")
        elif t.dtype != _F64 or t.shape != (n,):
            broken.add("time")
    elif isinstance(t, str):
        try:
            float(t)
            maybe.add("time")  # a numeric string: numpy converts it
        except ValueError:
            broken.add("time")
    elif isinstance(t, (list, tuple)):
        # per-row times as a list would be a copy (a bound call would read a
        # snapshot of them): refused with the np.asarray fix, as for every input
        broken.add("time")
    else:
        broken.add("time")

    fields = args.get("model_fields")
    declared = plan.model_fields
    if fields is None or (isinstance(fields, Mapping) and not fields):
        if declared:
            broken.add("model_fields")
    elif not isinstance(fields, Mapping):
        broken.add("model_fields")
    else:
        if set(fields) != set(declared):
            broken.add("model_fields")
        for name, a in fields.items():
            key = f"model_fields[{name!r}]"
            if not isinstance(a, np.ndarray):
                broken.add("model_fields")
                continue
            inputs.append((key, a))
            if name in declared and n is not None:
                shape = (n, *plan.model_field_shape(model, name))
                if a.dtype != _F64 or a.shape != shape or not _rows_contiguous(a):
                    broken.add("model_fields")

    out = args.get("out")
    written: list[tuple[str, np.ndarray]] = []
    if not isinstance(out, mjrefresh.RefreshOutputs):
        broken.add("out")
    else:
        shapes = r.output_shapes(n) if n is not None else {}
        for name, a in out.arrays().items():
            full = f"out.{name}"
            if not isinstance(a, np.ndarray):
                broken.add(full)
                continue
            written.append((full, a))
            if not a.flags.aligned:
                maybe.add(full)  # README is silent on alignment
            if n is None:
                continue
            if a.dtype.kind == "f" and a.itemsize in (4, 8) and not a.dtype.isnative:
                maybe.add(full)  # float64/32 in the other byte order
                if name not in shapes or a.shape != shapes[name]:
                    broken.add(full)
                continue
            if (
                name not in shapes
                or a.dtype not in _OUT_DTYPES
                or a.shape != shapes[name]
                or not _last_contiguous(a)
                or not a.flags.writeable
                or (a.size and a.shape[0] > 1 and a.strides[0] == 0)
                or (
                    a.size
                    and a.ndim == 3
                    and a.shape[1] > 1
                    and abs(a.strides[1]) < a.shape[2] * a.itemsize
                )
            ):
                broken.add(full)
    for i, (name, a) in enumerate(written):
        for other, b in inputs:
            if _shares(a, b):
                broken.update((name, other.split("[")[0] if other.startswith("model_f") else other))
        for other, b in written[i + 1 :]:
            if _shares(a, b):
                broken.update((name, other))

    def aliases_io(a: np.ndarray) -> tuple[bool, bool]:
        return (any(_shares(a, b) for _, b in written), any(_shares(a, b) for _, b in inputs))

    if method in ("refresh", "bound", "bound_call"):
        sel = args.get("rows")
        if isinstance(sel, (int, np.integer)) and not isinstance(sel, (bool, np.bool_)):
            if n is None or not 0 <= int(sel) < n:  # one row id
                broken.add("rows")
        elif isinstance(sel, slice):
            if sel.step == 0:
                broken.add("rows")
        elif not isinstance(sel, (np.ndarray, list, tuple, range)):
            broken.add("rows")
        else:
            try:
                a = np.asarray(sel)
            except (TypeError, ValueError):
                a = None
            if a is None or a.ndim != 1:
                broken.add("rows")
            elif a.dtype == np.bool_:
                if a.shape[0] != n:
                    broken.add("rows")
            elif a.size == 0:
                pass
            elif a.dtype.kind not in "iu":
                broken.add("rows")
            else:
                v = [int(x) for x in a.tolist()]
                if (
                    n is None
                    or min(v) < 0
                    or max(v) >= n
                    or any(y <= x for x, y in zip(v, v[1:], strict=False))
                ):
                    broken.add("rows")
            if isinstance(sel, np.ndarray) and aliases_io(sel)[0]:
                maybe.add("rows")  # README is silent on row ids inside an output
    else:
        d = args.get("dirty")
        if (
            not isinstance(d, np.ndarray)
            or d.dtype != np.bool_
            or d.ndim != 1
            or d.shape[0] != n
            or not d.flags.writeable
        ):
            broken.add("dirty")
        elif any(aliases_io(d)):
            maybe.add("dirty")
    return broken, maybe - broken


def check(r: mjrefresh.Refresher, method: str, args: Mapping[str, Any], **kw: Any) -> str:
    """`check_call` with the expectation `expectation` derives from the arrays
    (extra `broken`/`maybe` names may be given)."""
    broken, maybe = expectation(r, method, args)
    broken |= set(kw.pop("broken", ()))
    maybe = (maybe | set(kw.pop("maybe", ()))) - broken
    note = kw.pop("note", "")
    what = f"expected: reject naming one of {sorted(broken)}" if broken else "expected: success"
    if maybe:
        what += f" (or a rejection naming one of {sorted(maybe)})"
    return check_call(
        r, method, args, broken=broken, maybe=maybe, note=f"{note}; {what}" if note else what, **kw
    )
