"""Measurement of the microbenchmark: each contender is built, checked against
``mj_forward`` on sampled rows and timed with interleaved repetitions."""

from __future__ import annotations

import argparse
from typing import Any

import mujoco
import numpy as np

from mjrefresh.bench import contenders, timing
from mjrefresh.bench.progressbar import ProgressBar
from mjrefresh.bench.selection import Source
from mjrefresh.bench.states import ForwardError
from mjrefresh.bench.workloads import Problem, dirty_mask, reference, sample_rows


def check(
    c: contenders.Contender, mask: np.ndarray, rows: np.ndarray, ref: np.ndarray
) -> dict[str, Any]:
    """Max abs error on the sampled rows and, for caller-owned outputs, whether
    everything outside the selected rows and columns is still the NaN poison."""
    keep = computed_columns(c.problem)
    cols, ref = c.problem.column_index[keep], ref[:, keep]
    sd = np.asarray(c.sensordata())
    diff = np.abs(sd[np.ix_(rows, cols)] - ref)
    err = float(diff.max(initial=0.0)) if np.isfinite(diff).all() else float("inf")
    # per sensor column, the largest error (to name what is wrong)
    col_err = np.where(np.isfinite(diff), diff, np.inf).max(axis=0)
    bad = cols[col_err > 0]
    untouched = None
    if c.owns_output:
        outside = np.ones(sd.shape[1], dtype=bool)
        outside[c.problem.column_index] = False
        untouched = bool(np.isnan(sd[~mask]).all() and np.isnan(sd[mask][:, outside]).all())
    return {
        "max_abs_error": err,
        "untouched_ok": untouched,
        "checked_rows": int(rows.size),
        "wrong_sensors": _sensor_names(c.problem.model, bad, col_err[col_err > 0]),
    }


def computed_columns(problem: Problem) -> np.ndarray:
    """Which selected columns a refresh computes (bool per column of
    ``problem.column_index``): all, except on a model that disables sensors
    the user's own sensor columns, which mj_forward leaves as they were
    (a contender copying its MjData's copies those stale values, the exact
    engine leaves its outputs' as they were): ``check`` compares neither.
    The frame sensors appended for ``--bodies``/``--sites`` stand for poses
    computed whatever the flag."""
    cols, sel = problem.column_index, problem.selection
    if not problem.model.opt.disableflags & int(mujoco.mjtDisableBit.mjDSBL_SENSOR):
        return np.ones(cols.size, dtype=bool)
    return cols >= sel.block_start if sel is not None else np.zeros(cols.size, dtype=bool)


def _sensor_names(
    model: mujoco.MjModel, columns: np.ndarray, errors: np.ndarray
) -> dict[str, float]:
    """Sensor name -> max abs error, for the columns with a nonzero error
    (an unnamed frame sensor, such as those appended for ``--bodies`` and
    ``--sites``, by its object: ``body torso framelinvel``)."""
    out: dict[str, float] = {}
    sensor_of = np.searchsorted(model.sensor_adr, columns, side="right") - 1
    for s, e in zip(sensor_of.tolist(), errors.tolist(), strict=True):
        name = model.sensor(s).name or _unnamed_sensor(model, s)
        out[name] = max(out.get(name, 0.0), e)
    return out


_OBJ_WORD = {
    mujoco.mjtObj.mjOBJ_BODY: "body",
    mujoco.mjtObj.mjOBJ_XBODY: "body",
    mujoco.mjtObj.mjOBJ_SITE: "site",
}


def _unnamed_sensor(model: mujoco.MjModel, s: int) -> str:
    """``body torso framepos`` for an unnamed sensor of a named body or site,
    else ``sensor 7`` (the appended frame sensors have no names of their own)."""
    obj = int(model.sensor_objtype[s])
    word = _OBJ_WORD.get(obj)
    objname = mujoco.mj_id2name(model, obj, int(model.sensor_objid[s])) if word else None
    if not objname:
        return f"sensor {s}"
    stype = mujoco.mjtSensor(int(model.sensor_type[s])).name.removeprefix("mjSENS_").lower()
    return f"{word} {objname} {stype}"


def _skip(
    contender: str, model: str, n: int, threads: int, workload: str, reason: str
) -> dict[str, Any]:
    """The record of a contender skipped in one measurement."""
    return {
        "contender": contender,
        "model": model,
        "n": n,
        "threads": threads,
        "workload": workload,
        "reason": reason,
    }


def _build(
    chosen: list[type[contenders.Contender]],
    problem: Problem,
    threads: int,
    mask: np.ndarray,
    single: bool,
    where: tuple[str, int, int, str],
    skipped: list[dict[str, Any]],
    bar: ProgressBar,
) -> dict[str, tuple[contenders.Contender, Any]]:
    """Build and run once every chosen contender (single-thread ones only when
    ``single``); name -> (contender, timed callable). Failures go to ``skipped``."""
    built = {}
    for cls in chosen:
        if not cls.multithreaded and not single:
            continue
        try:
            c = cls(problem, threads)
            fn = c.prepare(mask)
            if c.owns_output:
                c.poison()
            fn()
        except contenders.Unsupported as e:
            bar.log(f"  skipping {cls.name} on {where[0]}: {e}")
            skipped.append(_skip(cls.name, *where, str(e)))
            continue
        except Exception as e:  # noqa: BLE001 - a contender failing must not stop the others
            reason = f"{type(e).__name__}: {e}"
            bar.log(
                f"  {cls.name} failed on {where[0]} N={where[1]} T={threads} {where[3]}: {reason}"
            )
            skipped.append({**_skip(cls.name, *where, reason), "failed": True})
            continue
        built[cls.name] = (c, fn)
    return built


_FLOOR = "memory floor"  # not a contender name


def memory_floor(problem: Problem) -> Any:
    """A call doing the memory traffic any refresh of every row must do, and
    nothing else: read each row's ``qpos``/``qvel`` and write its selected
    columns into an (N, nsensordata) array (numpy copies of the same bytes).
    The fast engine's cost floor: its time over this one is compute."""
    m = problem.model
    qpos_in = np.empty((problem.n, m.nq))
    qvel_in = np.empty((problem.n, m.nv))
    width = sum(b - a for a, b in problem.ranges)
    block = np.ones((problem.n, width))
    sd = np.zeros((problem.n, m.nsensordata))

    def run() -> None:
        np.copyto(qpos_in, problem.qpos)
        np.copyto(qvel_in, problem.qvel)
        k = 0
        for a, b in problem.ranges:
            np.copyto(sd[:, a:b], block[:, k : k + b - a])
            k += b - a

    return run


def _measure_group(
    args: argparse.Namespace,
    problem: Problem,
    workload: str,
    threads: int,
    built: dict[str, tuple[contenders.Contender, Any]],
    mask: np.ndarray,
    rows: np.ndarray,
    ref: np.ndarray,
) -> list[dict[str, Any]]:
    """Check and time the built contenders of one model, N, workload and thread count."""
    checks = {name: check(c, mask, rows, ref) for name, (c, _) in built.items()}
    fns = {name: fn for name, (_, fn) in built.items()}
    # The memory floor, timed interleaved with the contenders, when every row
    # is refreshed (for a few rows numpy's fixed cost per call would swamp it).
    every = bool(mask.all())
    if every:
        fns[_FLOOR] = memory_floor(problem)
    calls = {name: timing.calibrate(fn, args.min_sample) for name, fn in fns.items()}
    samples = timing.interleaved(fns, calls, args.repeats, warmup=args.warmup)
    mem_floor = {"memory_floor_s": timing.summary(samples[_FLOOR])["median_s"]} if every else {}
    results = []
    for name, (c, _) in built.items():
        chk = checks[name]
        r = {
            "model": problem.name,
            "workload": workload,
            "n": problem.n,
            "threads": threads,
            "threads_used": c.threads_used,
            "contender": name,
            "multithreaded": c.multithreaded,
            "rows_per_call": int(mask.sum()),
            "ranges": [list(r) for r in problem.ranges],
            "calls_per_sample": calls[name],
            "samples_s": samples[name],
            **timing.summary(samples[name]),
            **chk,
            "correct": chk["max_abs_error"] <= args.tol and chk["untouched_ok"] is not False,
            **mem_floor,
        }
        floor = getattr(c, "stage_floor", None)
        if floor is not None and floor(mask) is not None:
            # The cost floor of the exact engine: the same stage
            # functions on one thread, without copy-out or threads.
            fl = sorted(floor(mask) for _ in range(args.repeats))
            r["stage_floor_s"] = fl[len(fl) // 2]
            r["x_stage_floor"] = r["median_s"] * c.threads_used / r["stage_floor_s"]
        results.append(r)
    return results


def _progress_line(r: dict[str, Any]) -> str:
    """One measurement on a progress line: time per row, error, verdict."""
    return (
        f"  {r['model']:<9} {r['workload']:<5} N={r['n']:<5} T={r['threads_used']:<2} "
        f"{r['contender']:<15} {r['median_s'] * 1e6 / r['rows_per_call']:8.2f} µs/row  "
        f"err {r['max_abs_error']:.1e}" + ("" if r["correct"] else "  WRONG")
    )


def _build_problem(source: Source, n: int) -> Problem:
    """``source.build(n)``, or SystemExit naming ``--n`` when the N random
    states do not fit in memory (numpy's MemoryError, a traceback before)."""
    try:
        return source.build(n)
    except MemoryError as e:
        raise SystemExit(
            f"mjrefresh bench: --n {n}: the {source.name} states do not fit in memory ({e}); "
            "give a smaller --n"
        ) from None


def _reference(problem: Problem, rows: np.ndarray, workload: str) -> np.ndarray:
    """:func:`reference`, or SystemExit naming the row where ``mj_forward``
    itself failed (then there is nothing to check the contenders against)."""
    try:
        return reference(problem, rows)
    except ForwardError as e:
        row = int(rows[e.row])
        hint = (
            "; raise <size memory=...> in the MJCF" if "out of memory" in e.mujoco_message else ""
        )
        raise SystemExit(
            f"mjrefresh bench: {problem.name} N={problem.n} {workload}: the mj_forward reference "
            f"failed at row {row} (a random state): {e.mujoco_message}{hint}"
        ) from None


def measure(
    args: argparse.Namespace,
    sources: list[Source],
    chosen: list[type[contenders.Contender]],
    skipped: list[dict[str, Any]],
    bar: ProgressBar,
) -> list[dict[str, Any]]:
    """Build, check and time every chosen contender on every problem source,
    N, workload and thread count of ``args``; one result record per measurement.

    A contender that cannot express a problem or fails is recorded in
    ``skipped`` with the reason and the others go on. ``bar`` advances once
    per model, N, workload and thread count.
    """
    results: list[dict[str, Any]] = []
    t_single = min(args.threads)  # single-thread contenders run once, with this group
    for source in sources:
        for n in args.n:
            problem = _build_problem(source, n)
            for workload in args.workloads:
                mask = dirty_mask(n, workload)
                rows = sample_rows(mask, args.check_rows)
                ref = _reference(problem, rows, workload)
                for threads in args.threads:
                    bar.step(f"{source.name} {workload} N={n} T={threads}")
                    where = (source.name, n, threads, workload)
                    built = _build(
                        chosen, problem, threads, mask, threads == t_single, where, skipped, bar
                    )
                    group = _measure_group(args, problem, workload, threads, built, mask, rows, ref)
                    for r in group:
                        bar.log(_progress_line(r))
                    results += group
                    bar.advance()
    return results
