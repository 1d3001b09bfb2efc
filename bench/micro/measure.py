"""Measurement of the microbenchmark: each contender is built, checked against
``mj_forward`` on sampled rows and timed with interleaved repetitions."""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

from bench.common import timing
from bench.common.cli import progress
from bench.micro import contenders
from bench.micro.workloads import dirty_mask, make_problem, reference, sample_rows


def check(
    c: contenders.Contender, mask: np.ndarray, rows: np.ndarray, ref: np.ndarray
) -> dict[str, Any]:
    """Max abs error on the sampled rows and, for caller-owned outputs, whether
    everything outside the selected rows and columns is still the NaN poison."""
    cols = c.problem.column_index
    sd = np.asarray(c.sensordata())
    diff = np.abs(sd[np.ix_(rows, cols)] - ref)
    err = float(diff.max()) if np.isfinite(diff).all() else float("inf")
    # per sensor column, the largest error (to name what is wrong)
    col_err = np.where(np.isfinite(diff), diff, np.inf).max(axis=0)
    bad = cols[col_err > 0]
    untouched = None
    if c.owns_output:
        outside = np.ones(sd.shape[1], dtype=bool)
        outside[cols] = False
        untouched = bool(np.isnan(sd[~mask]).all() and np.isnan(sd[mask][:, outside]).all())
    return {
        "max_abs_error": err,
        "untouched_ok": untouched,
        "checked_rows": int(rows.size),
        "wrong_sensors": _sensor_names(c.problem.model, bad, col_err[col_err > 0]),
    }


def _sensor_names(model, columns: np.ndarray, errors: np.ndarray) -> dict[str, float]:
    """Sensor name -> max abs error, for the columns with a nonzero error."""
    out: dict[str, float] = {}
    sensor_of = np.searchsorted(model.sensor_adr, columns, side="right") - 1
    for s, e in zip(sensor_of.tolist(), errors.tolist(), strict=True):
        name = model.sensor(s).name or f"sensor {s}"
        out[name] = max(out.get(name, 0.0), e)
    return out


def _skip(contender: str, model: str, n: int, threads: int, workload: str, reason: str) -> dict:
    """The record of a contender skipped in one measurement."""
    return {
        "contender": contender,
        "model": model,
        "n": n,
        "threads": threads,
        "workload": workload,
        "reason": reason,
    }


def measure(
    args: argparse.Namespace, chosen: list[type], skipped: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Build, check and time every chosen contender on every model, N, workload
    and thread count of ``args``; one result record per measurement.

    A contender that cannot express a problem or fails is recorded in
    ``skipped`` with the reason and the others go on.
    """
    results: list[dict[str, Any]] = []
    t_single = min(args.threads)  # single-thread contenders run once, with this group
    for model_name in args.models:
        for n in args.n:
            t0 = time.perf_counter()
            problem = make_problem(model_name, n, seed=args.seed, columns=args.columns)
            for workload in args.workloads:
                mask = dirty_mask(n, workload)
                rows = sample_rows(mask, args.check_rows)
                ref = reference(problem, rows)
                for threads in args.threads:
                    built: dict[str, contenders.Contender] = {}
                    fns = {}
                    checks = {}
                    for cls in chosen:
                        if not cls.multithreaded and threads != t_single:
                            continue
                        try:
                            c = cls(problem, threads)
                            fn = c.prepare(mask)
                            if c.owns_output:
                                c.poison()
                            fn()
                        except contenders.Unsupported as e:
                            progress(f"  skipping {cls.name} on {model_name}: {e}")
                            skipped.append(
                                _skip(cls.name, model_name, n, threads, workload, str(e))
                            )
                            continue
                        except Exception as e:  # noqa: BLE001 - a contender failing must not stop the others
                            reason = f"{type(e).__name__}: {e}"
                            progress(
                                f"  {cls.name} failed on {model_name} N={n} T={threads} {workload}: {reason}"
                            )
                            skipped.append(
                                _skip(cls.name, model_name, n, threads, workload, reason)
                            )
                            continue
                        built[cls.name], fns[cls.name], checks[cls.name] = (
                            c,
                            fn,
                            check(c, mask, rows, ref),
                        )
                    calls = {
                        name: timing.calibrate(fn, args.min_sample) for name, fn in fns.items()
                    }
                    samples = timing.interleaved(fns, calls, args.repeats, warmup=args.warmup)
                    for name, c in built.items():
                        chk = checks[name]
                        r = {
                            "model": model_name,
                            "workload": workload,
                            "n": n,
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
                            "correct": chk["max_abs_error"] <= args.tol
                            and chk["untouched_ok"] is not False,
                        }
                        floor = getattr(c, "stage_floor", None)
                        if floor is not None and floor(mask) is not None:
                            # The cost floor of the exact engine: the same stage
                            # functions on one thread, without copy-out or threads.
                            fl = sorted(floor(mask) for _ in range(args.repeats))
                            r["stage_floor_s"] = fl[len(fl) // 2]
                            r["x_stage_floor"] = r["median_s"] * c.threads_used / r["stage_floor_s"]
                        results.append(r)
                        progress(
                            f"  {model_name:<9} {workload:<5} N={n:<5} T={c.threads_used:<2} {name:<15} "
                            f"{r['median_s'] * 1e6 / r['rows_per_call']:8.2f} us/row  err {chk['max_abs_error']:.1e}"
                            + ("" if r["correct"] else "  WRONG")
                        )
            progress(f"{model_name} N={n}: {time.perf_counter() - t0:.1f} s")
    return results
