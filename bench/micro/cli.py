"""Benchmark: refresh of tracked sensor columns for N simulations.

Compares, in one process and only where installed, a per-row Python loop over
MuJoCo's stage functions, mjbatch-uni's ``refresh_sensor_ranges``, MuJoCo 4's
``mujoco.batch`` forward to the velocity stage, the ``mjrefresh`` engines and a
single-thread C++ stage loop, on the embedded models of ``mjrefresh.models``.

Every contender's output is checked against ``mj_forward`` on a sample of rows;
the error is printed next to its time. Timing: warm-up, then interleaved
repetitions (A B C A B C ...); the median with min-max is reported.

  python -m bench.micro                      # full run
  python -m bench.micro --quick              # < 2 min on 2 cores
  python -m bench.micro --json out.json --plot out.png
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.common import envinfo
from bench.common.cli import (
    add_readme_args,
    env_banner,
    loadavg,
    new_parser,
    progress,
    write_readme_section,
    write_record,
)
from bench.common.models import load_models_module
from bench.micro import contenders, report
from bench.micro.measure import measure
from bench.micro.workloads import COLUMN_SETS, WORKLOADS


def default_threads(cores: int) -> list[int]:
    """1, 2, 4, ... up to and including ``cores``."""
    out, t = [], 1
    while t < cores:
        out.append(t)
        t *= 2
    out.append(cores)
    return out


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The options of ``python -m bench.micro``, with the defaults filled in."""
    cores = envinfo.usable_cores()
    p = new_parser(
        "bench.micro",
        __doc__,
        quick="small run: N=1024, threads {1, all}, 5 repeats (< 2 min on 2 cores)",
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
    add_readme_args(p, "results", "section marker name (default: mujoco-<version>)")
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


def choose(args: argparse.Namespace, skipped: list[dict[str, Any]]) -> tuple[list[type], dict]:
    """The contender classes to run (requested and available) and the
    availability of every contender; the unavailable requested ones go to ``skipped``."""
    avail = contenders.availability()
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
    return chosen, avail


def wrong_lines(results: list[dict[str, Any]], tol: float) -> list[str]:
    """One ``WRONG:`` line per contender with an incorrect result, naming the
    worst sensors and whether it wrote outputs that were not selected."""
    lines = []
    for name in sorted({r["contender"] for r in results if not r["correct"]}):
        sensors: dict[str, float] = {}
        untouched_violated = False
        for r in results:
            if r["contender"] == name and not r["correct"]:
                untouched_violated |= r["untouched_ok"] is False
                for sensor, e in r["wrong_sensors"].items():
                    if e > tol:
                        sensors[sensor] = max(sensors.get(sensor, 0.0), e)
        worst = sorted(sensors.items(), key=lambda kv: -kv[1])
        detail = ", ".join(f"{s} {e:.2g}" for s, e in worst[:8]) + (
            f", ... ({len(worst)} sensors)" if len(worst) > 8 else ""
        )
        if untouched_violated:
            detail += ("; " if detail else "") + "wrote outputs that were not selected"
        lines.append(f"WRONG: {name} differs from mj_forward (tol {tol:g}): {detail}")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    """Run the microbenchmark; print the table, write the requested files."""
    args = parse_args(argv)
    env = envinfo.collect()
    env["threads_requested"] = args.threads
    progress(env_banner(env))
    skipped: list[dict[str, Any]] = []
    chosen, avail = choose(args, skipped)

    t0 = time.perf_counter()
    results = measure(args, chosen, skipped)
    elapsed = time.perf_counter() - t0
    report.derive(results)
    env["loadavg_at_end"] = loadavg()

    print(report.table(results))
    for s in skipped:
        where = (
            ""
            if "model" not in s
            else f" ({s['model']} N={s['n']} T={s['threads']} {s['workload']})"
        )
        print(f"skipped {s['contender']}{where}: {s['reason']}")
    for line in wrong_lines(results, args.tol):
        print(line)
    progress(f"done in {elapsed:.1f} s")

    if args.json:
        rest = {
            "workloads": WORKLOADS,
            "column_sets": COLUMN_SETS,
            "contenders": {c.name: c.description for c in contenders.ALL},
            "available": avail,
            "skipped": skipped,
            "elapsed_s": elapsed,
            "results": results,
        }
        write_record(args, report.SCHEMA, env, rest)
    if args.plot and report.plot(results, args.plot):
        progress(f"wrote {args.plot}")
    if args.readme:
        write_readme_section(
            args,
            f"mujoco-{env['mujoco']}",
            "bench.micro",
            argv,
            lambda command: report.markdown_section(results, env, command),
        )
    return 0
