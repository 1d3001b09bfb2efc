"""``mjrefresh bench``: how fast can your model's selection be refreshed here?

Compares, in one process and only where installed, a per-env Python loop over
MuJoCo's stage functions, mjbatch-uni's ``refresh_sensor_ranges``, MuJoCo 4's
``mujoco.batch`` forward to the velocity stage and the ``mjrefresh`` engines
(and, with ``--verbose``, an internal single-thread C++ stage loop), on your
model (MODEL: an MJCF/MJB file or an embedded model name) or by default on
the embedded models of ``mjrefresh.models``. What is refreshed: --bodies their
world pose and velocity, --sites their world pose, --sensors / --all-posvel
their sensordata columns.

Every contender's output is checked against ``mj_forward`` on a sample of rows;
the error is printed next to its time. Timing: warm-up, then interleaved
repetitions (A B C A B C ...); the median with min-max is reported. Every
contender sees the state of a fresh MjData besides the random qpos/qvel (the
model's mocap poses, time 0). Exit status 1 when an mjrefresh engine's outputs
differ from mj_forward or it raised, or when nothing was measured, else 0.

  mjrefresh bench --quick                        # embedded models, < 2 min on 2 cores
  mjrefresh bench robot.xml --bodies torso foot_l foot_r --sensors imu_gyro
  mjrefresh bench robot.xml --all-posvel --json out.json --plot out.png
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path
from typing import Any

from mjrefresh import models
from mjrefresh.bench import contenders, envinfo, report
from mjrefresh.bench.measure import measure
from mjrefresh.bench.output import progress, unwritable, write_record
from mjrefresh.bench.plot import plot
from mjrefresh.bench.progressbar import ProgressBar
from mjrefresh.bench.selection import Source, sources
from mjrefresh.bench.workloads import COLUMN_SETS, WORKLOADS
from mjrefresh.model_args import add_selection_args

QUICK_HELP = "small run: N=1024, threads {1, all}, 5 repeats (< 2 min on 2 cores)"


def default_threads(cores: int) -> list[int]:
    """1, 2, 4, ... up to and including ``cores``."""
    out, t = [], 1
    while t < cores:
        out.append(t)
        t *= 2
    out.append(cores)
    return out


def _selection_options(p: argparse.ArgumentParser) -> None:
    """MODEL and what to refresh on it (bodies: world pose and velocity; sites:
    world pose; sensors: their sensordata columns)."""
    p.add_argument(
        "model",
        nargs="?",
        default=None,
        help="MJCF (.xml) or MJB file, or an embedded model: "
        + ", ".join(models.MODELS)
        + " (default: every embedded model, see --models)",
    )
    add_selection_args(p, " (default for a file given without a selection)")
    p.add_argument(
        "--models",
        nargs="+",
        choices=sorted(models.MODELS),
        default=None,
        help="embedded models to run without MODEL (default: all)",
    )
    p.add_argument(
        "--columns",
        choices=sorted(COLUMN_SETS),
        default=None,
        help="embedded models: the tracking block (default) or every pos/vel-stage sensor",
    )


def add_options(p: argparse.ArgumentParser, quick: bool = True) -> None:
    """Every option of the benchmark (``--quick`` too unless ``quick`` is False)."""
    cores = envinfo.usable_cores()
    _selection_options(p)
    if quick:
        p.add_argument("--quick", action="store_true", help=QUICK_HELP)
    p.add_argument(
        "--n",
        nargs="+",
        type=int,
        default=None,
        help="numbers of simulations (default: 1024 4096; quick: 1024)",
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
        "--contenders",
        nargs="+",
        choices=list(contenders.BY_NAME),
        default=None,
        help="subset to run (default: every installed one)",
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
        "--verbose",
        "-v",
        action="store_true",
        help="every column, the internal C++ stage loop, the overhead at every T",
    )


def finish_options(args: argparse.Namespace, p: argparse.ArgumentParser) -> argparse.Namespace:
    """Fill in the defaults that depend on ``--quick`` and check the numbers."""
    cores = envinfo.usable_cores()
    _check_model_options(args, p)
    args.columns = args.columns or "tracking"
    # A value given twice would measure the same rows twice (as --threads,
    # which is sorted into a set): each once, in the order given.
    args.models = list(dict.fromkeys(args.models or models.MODELS))
    args.n = list(dict.fromkeys(args.n or ([1024] if args.quick else [1024, 4096])))
    args.workloads = list(dict.fromkeys(args.workloads))
    if args.contenders is not None:
        args.contenders = list(dict.fromkeys(args.contenders))
    args.threads = sorted(
        set(args.threads or ([1, cores] if args.quick else default_threads(cores)))
    )
    if args.repeats is None:
        args.repeats = 5 if args.quick else 9
    args.min_sample = (
        args.min_sample if args.min_sample is not None else (0.005 if args.quick else 0.02)
    )
    if min(args.n) < 1 or min(args.threads) < 1 or args.repeats < 1:
        p.error("--n, --threads and --repeats must be positive")
    if args.check_rows < 2:
        p.error(
            f"--check-rows must be at least 2 (the first and last refreshed rows are always "
            f"checked), got {args.check_rows}"
        )
    if not args.tol >= 0:  # NaN too
        p.error(f"--tol must be a max abs error >= 0, got {args.tol}")
    if not 0 <= args.min_sample < math.inf:  # NaN too; the calibration divides by it
        p.error(
            "--min-sample must be finite seconds >= 0 (0: one call per sample), "
            f"got {args.min_sample}"
        )
    if args.warmup < 0:
        p.error(f"--warmup must be >= 0 untimed calls, got {args.warmup}")
    if args.seed < 0:  # numpy's generators take only non-negative seeds
        p.error(f"--seed must be >= 0, got {args.seed}")
    for option, path, example in (
        ("--json", args.json, "out.json"),
        ("--plot", args.plot, "out.png"),
    ):
        problem = None if path is None else unwritable(path)
        if problem is not None:  # found now, not after the whole run
            p.error(f"{option}: {problem}; give a writable file path such as {example}")
    return args


def _check_model_options(args: argparse.Namespace, p: argparse.ArgumentParser) -> None:
    """``--models`` and ``--columns`` choose what runs without MODEL (or on an
    embedded MODEL without a selection); given where they do not apply, they
    would be silently ignored."""
    if args.model is None:
        return
    if args.models is not None:
        p.error(
            f"--models runs embedded models without MODEL, got MODEL {args.model!r} too; "
            "give either MODEL or --models, not both"
        )
    selected = args.bodies or args.sites or args.sensors or args.all_posvel
    if args.columns is not None and (args.model not in models.MODELS or selected):
        p.error(
            f"--columns {args.columns} applies to an embedded model without a selection, got "
            f"MODEL {args.model!r}"
            + (" with a selection" if selected else "")
            + "; select columns with --all-posvel or --sensors instead"
        )


def choose(args: argparse.Namespace, skipped: list[dict[str, Any]]) -> tuple[list[type], dict]:
    """The contender classes to run (requested and available) and the
    availability of every contender; the unavailable requested ones go to
    ``skipped``. Internal contenders run only with ``--verbose`` or by name."""
    avail = contenders.availability()
    chosen = []
    for cls in contenders.ALL:
        if args.contenders is not None and cls.name not in args.contenders:
            continue
        if args.contenders is None and cls.internal and not args.verbose:
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


def _print_report(
    args: argparse.Namespace, results: list[dict[str, Any]], env: dict[str, Any], skipped: list
) -> list[str]:
    """Table, skips, wrong results, busy warning and headline on stdout;
    returns the headline lines."""
    if results:
        print(report.table(results, verbose=args.verbose))
        print()
    for s in skipped:
        where = (
            ""
            if "model" not in s
            else f" ({s['model']} N={s['n']} T={s['threads']} {s['workload']})"
        )
        print(
            f"{'FAILED' if s.get('failed') else 'skipped'} {s['contender']}{where}: {s['reason']}"
        )
    for line in wrong_lines(results, args.tol):
        print(line)
    warning = report.busy_warning(results, env)
    if warning:
        print(warning)
    env["busy_warning"] = warning
    head = report.headline(results, [s for s in skipped if s.get("failed")])
    if not results and not head:  # every chosen contender skipped: say so, not an empty table
        head = ["nothing was measured: every chosen contender was skipped (reasons above)"]
    print("\n".join(head))
    return head


def exit_status(results: list[dict[str, Any]], skipped: list[dict[str, Any]]) -> int:
    """1 when an mjrefresh engine gave outputs that differ from mj_forward or
    raised, or when nothing was measured, else 0. Another package's contender
    being wrong or raising is reported, not an error of the run: it may not
    support the model (the per-env loop and mjbatch-uni read stale subtree
    velocities)."""
    wrong = any(not r["correct"] and r["contender"].startswith("mjrefresh") for r in results)
    failed = any(s.get("failed") and s["contender"].startswith("mjrefresh") for s in skipped)
    return 1 if wrong or failed or not results else 0


def run(
    args: argparse.Namespace,
) -> tuple[list[dict[str, Any]], dict[str, Any], list[dict[str, Any]]]:
    """Measure what ``args`` asks for, print the report and write ``--json``
    and ``--plot``; returns the results, the environment record and the
    skipped or failed contenders."""
    problem_sources: list[Source] = sources(args)
    env = envinfo.collect()
    env["threads_requested"] = args.threads
    progress(envinfo.env_banner(env, mjrefresh=True))
    for s in problem_sources:
        progress(f"{s.name}: {s.describe}")
    skipped: list[dict[str, Any]] = []
    chosen, avail = choose(args, skipped)
    total = len(problem_sources) * len(args.n) * len(args.workloads) * len(args.threads)
    t0 = time.perf_counter()
    with ProgressBar(total) as bar:
        results = measure(args, problem_sources, chosen, skipped, bar)
    elapsed = time.perf_counter() - t0
    report.derive(results)
    env["loadavg_at_end"] = envinfo.loadavg()
    head = _print_report(args, results, env, skipped)
    progress(f"done in {elapsed:.1f} s")
    if args.json:
        rest = {
            "selection": {s.name: s.describe for s in problem_sources},
            "workloads": WORKLOADS,
            "column_sets": COLUMN_SETS,
            "contenders": {c.name: c.description for c in contenders.ALL},
            "available": avail,
            "skipped": skipped,
            "elapsed_s": elapsed,
            "headline": head,
            "results": results,
        }
        write_record(args, report.SCHEMA, env, rest, internal=("command", "parser"))
    if args.plot and plot(results, args.plot, env):
        progress(f"wrote {args.plot}")
    return results, env, skipped


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``bench`` on the ``mjrefresh`` sub-command parsers."""
    p = sub.add_parser(
        "bench",
        help="benchmark refreshing your model's selection with every installed contender",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_options(p)
    return p


def main(args: argparse.Namespace, p: argparse.ArgumentParser) -> int:
    """Run ``mjrefresh bench`` with parsed ``args`` (``p`` reports option
    errors); the exit status is :func:`exit_status`'s."""
    results, _, skipped = run(finish_options(args, p))
    return exit_status(results, skipped)
