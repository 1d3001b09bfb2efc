"""Benchmark: refresh of tracked sensor columns for N simulations.

Compares, in one process and only where installed, a per-row Python loop over
MuJoCo's stage functions, mjbatch-uni's ``refresh_sensor_ranges``, MuJoCo 4's
``mujoco.batch`` forward to the velocity stage, the ``mjrefresh`` engines and a
single-thread C++ stage loop, on the embedded models of ``mjrefresh.models``.

Every contender's output is checked against ``mj_forward`` on a sample of rows;
the error is printed next to its time. Timing: warm-up, then interleaved
repetitions (A B C A B C ...); the median with min-max is reported.

  python bench/run.py                      # full run
  python bench/run.py --quick              # < 2 min on 2 cores
  python bench/run.py --json out.json --plot out.png
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import contenders  # noqa: E402
import envinfo  # noqa: E402
import numpy as np  # noqa: E402
import report  # noqa: E402
import timing  # noqa: E402
from workloads import (
    COLUMN_SETS,
    WORKLOADS,
    dirty_mask,
    load_models_module,
    make_problem,
    reference,
    sample_rows,
)  # noqa: E402


def default_threads(cores: int) -> list[int]:
    """1, 2, 4, ... up to and including ``cores``."""
    out, t = [], 1
    while t < cores:
        out.append(t)
        t *= 2
    out.append(cores)
    return out


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    cores = envinfo.usable_cores()
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="small run: N=1024, threads {1, all}, 5 repeats (< 2 min on 2 cores)",
    )
    p.add_argument(
        "--models",
        nargs="+",
        choices=sorted(load_models_module().MODELS),
        default=None,
        help="embedded models (default: all)",
    )
    p.add_argument(
        "--n", nargs="+", type=int, default=None, help="numbers of simulations (default: 1024 4096)"
    )
    p.add_argument(
        "--threads",
        nargs="+",
        type=int,
        default=None,
        help=f"thread counts (default: powers of two below {cores}, and {cores})",
    )
    p.add_argument(
        "--repeats", type=int, default=None, help="timed samples per contender (default 9, quick 5)"
    )
    p.add_argument(
        "--workloads", nargs="+", choices=sorted(WORKLOADS), default=sorted(WORKLOADS, reverse=True)
    )
    p.add_argument(
        "--columns",
        choices=sorted(COLUMN_SETS),
        default="tracking",
        help="sensordata columns to refresh: the tracking block (default) or every pos/vel-stage sensor",
    )
    p.add_argument(
        "--contenders",
        nargs="+",
        choices=list(contenders.BY_NAME),
        default=None,
        help="subset to run",
    )
    p.add_argument(
        "--min-sample",
        type=float,
        default=None,
        help="seconds per timed sample (default 0.02, quick 0.005)",
    )
    p.add_argument(
        "--warmup", type=int, default=2, help="untimed calls per contender before timing"
    )
    p.add_argument(
        "--check-rows", type=int, default=64, help="rows compared with mj_forward per measurement"
    )
    p.add_argument(
        "--tol", type=float, default=1e-9, help="max abs error for a result to count as correct"
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--json", type=Path, default=None, help="write every raw sample and the environment here"
    )
    p.add_argument(
        "--plot", type=Path, default=None, help="write a PNG plot here (needs matplotlib)"
    )
    p.add_argument(
        "--readme",
        type=Path,
        default=None,
        help="rewrite the results section of this README (e.g. bench/README.md) with the table",
    )
    p.add_argument(
        "--readme-section", default=None, help="section marker name (default: mujoco-<version>)"
    )
    args = p.parse_args(argv)
    args.models = args.models or list(load_models_module().MODELS)
    args.n = args.n or ([1024] if args.quick else [1024, 4096])
    args.threads = sorted(
        set(args.threads or ([1, cores] if args.quick else default_threads(cores)))
    )
    args.repeats = args.repeats or (5 if args.quick else 9)
    args.min_sample = (
        args.min_sample if args.min_sample is not None else (0.005 if args.quick else 0.02)
    )
    if min(args.n) < 1 or min(args.threads) < 1 or args.repeats < 1:
        p.error("--n, --threads and --repeats must be positive")
    return args


def progress(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


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


def measure(
    args: argparse.Namespace, chosen: list[type], skipped: list[dict[str, Any]]
) -> list[dict[str, Any]]:
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
                                {
                                    "contender": cls.name,
                                    "model": model_name,
                                    "n": n,
                                    "threads": threads,
                                    "workload": workload,
                                    "reason": str(e),
                                }
                            )
                            continue
                        except Exception as e:  # noqa: BLE001 - a contender failing must not stop the others
                            reason = f"{type(e).__name__}: {e}"
                            progress(
                                f"  {cls.name} failed on {model_name} N={n} T={threads} {workload}: {reason}"
                            )
                            skipped.append(
                                {
                                    "contender": cls.name,
                                    "model": model_name,
                                    "n": n,
                                    "threads": threads,
                                    "workload": workload,
                                    "reason": reason,
                                }
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


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    env = envinfo.collect()
    env["threads_requested"] = args.threads
    progress(
        f"{env['cpu_model']}, {env['usable_cpus']} usable CPUs; mujoco {env['mujoco']}, mjbatch-uni {env['mjbatch_uni']}"
    )
    avail = contenders.availability()
    skipped: list[dict[str, Any]] = []
    chosen = []
    for cls in contenders.ALL:
        if args.contenders is not None and cls.name not in args.contenders:
            continue
        reason = avail[cls.name]
        if reason is None:
            chosen.append(cls)
        else:
            progress(f"skipping {cls.name}: {reason}")
            skipped.append({"contender": cls.name, "reason": reason})

    t0 = time.perf_counter()
    results = measure(args, chosen, skipped)
    elapsed = time.perf_counter() - t0
    report.derive(results)
    try:
        env["loadavg_at_end"] = list(os.getloadavg())
    except OSError:
        env["loadavg_at_end"] = None

    print(report.table(results))
    for s in skipped:
        where = (
            ""
            if "model" not in s
            else f" ({s['model']} N={s['n']} T={s['threads']} {s['workload']})"
        )
        print(f"skipped {s['contender']}{where}: {s['reason']}")
    for name in sorted({r["contender"] for r in results if not r["correct"]}):
        sensors: dict[str, float] = {}
        untouched_violated = False
        for r in results:
            if r["contender"] == name and not r["correct"]:
                untouched_violated |= r["untouched_ok"] is False
                for sensor, e in r["wrong_sensors"].items():
                    if e > args.tol:
                        sensors[sensor] = max(sensors.get(sensor, 0.0), e)
        worst = sorted(sensors.items(), key=lambda kv: -kv[1])
        detail = ", ".join(f"{s} {e:.2g}" for s, e in worst[:8]) + (
            f", ... ({len(worst)} sensors)" if len(worst) > 8 else ""
        )
        if untouched_violated:
            detail += ("; " if detail else "") + "wrote outputs that were not selected"
        print(f"WRONG: {name} differs from mj_forward (tol {args.tol:g}): {detail}")
    progress(f"done in {elapsed:.1f} s")

    if args.json:
        config = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}
        report.write_json(
            args.json,
            {
                "env": env,
                "config": config,
                "workloads": WORKLOADS,
                "column_sets": COLUMN_SETS,
                "contenders": {c.name: c.description for c in contenders.ALL},
                "available": avail,
                "skipped": skipped,
                "elapsed_s": elapsed,
                "results": results,
            },
        )
        progress(f"wrote {args.json}")
    if args.plot and report.plot(results, args.plot):
        progress(f"wrote {args.plot}")
    if args.readme:
        section = args.readme_section or f"mujoco-{env['mujoco']}"
        command = "python bench/run.py " + " ".join(argv if argv is not None else sys.argv[1:])
        report.update_readme(
            args.readme, section, report.markdown_section(results, env, command.strip())
        )
        progress(f"updated section {section!r} of {args.readme}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
