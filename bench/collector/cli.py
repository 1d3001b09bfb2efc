"""Collector-shaped benchmark: environment transitions per second of an
off-policy collector's active window, with its phase breakdown.

Per vector step, on a real native batch (mjbatch-uni ``Batch`` or MuJoCo >= 4.0
``mujoco.batch.Batch``, whichever is installed):

1. physics -- write the policy's actions as position targets to ``ctrl`` and
   step every simulation ``decimation`` substeps natively;
2. update-state -- bring the tracked bodies current (the *variant*), read what a
   manager-based task reads (base velocities in the base frame, projected
   gravity, joint positions/velocities, world and base-relative pose and
   velocity of the tracked bodies, reference comparison) and compute the
   observations, a reward and a termination;
3. reset -- rows that terminated get a new state written into their state rows
   and are brought current (the variant again), and their observations are
   recomputed;
4. replay -- (obs, action, reward, done, next obs) of every row into a
   float32 replay ring buffer.

Variants of the update-state phase (same seed, same actions): ``stale``,
``loop``, ``native-ranges``, ``mjrefresh-exact``, ``mjrefresh-fast`` (see
``bench/collector/variants.py``). Each measurement cell (backend x task x N) runs
in ``--procs`` independent processes, the variant order alternating between
them; each process warms every variant up, times a window of ``--steps``
vector steps and then runs ``--check-steps`` untimed steps comparing the
update-state values of sampled rows with values computed from ``mj_forward``.

With ``--client unisim`` the client is unisim-core's own MuJoCo backend
instead (see ``bench/collector/unisim.py``): update-state ms per vector step
and its share of the step for unisim's per-env loop, its mjbatch-uni path and
mjrefresh.

  python -m bench.collector --quick              # < 2 min on 2 cores
  python -m bench.collector                      # N 1024 4096, 3 processes per cell
  python -m bench.collector --json out.json --readme bench/README.md
  python -m bench.collector --client unisim --readme bench/README.md
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import mujoco

from bench.collector import backends, report, tasks, unisim, variants
from bench.collector.worker import run_worker
from bench.common.cli import add_readme_args, check_readme, new_parser, write_readme_section
from mjrefresh.bench import envinfo
from mjrefresh.bench.envinfo import env_banner, loadavg
from mjrefresh.bench.output import progress, unwritable, write_record

#: The directory holding the ``bench`` package: the workers run there, so
#: that ``python -m bench.collector`` finds it wherever the parent was started.
ROOT = Path(__file__).resolve().parents[2]


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The options of ``python -m bench.collector``, with the defaults filled in."""
    cores = envinfo.usable_cores()
    p = new_parser(
        "bench.collector",
        __doc__,
        quick="small run: N=1024, 2 processes per cell, short windows (< 2 min on 2 cores)",
    )
    p.add_argument(
        "--client",
        choices=("batch", "unisim"),
        default="batch",
        help="batch: a collector on a native batch (default); unisim: unisim-core's MuJoCo "
        "backend, its update-state variants",
    )
    p.add_argument("--tasks", nargs="+", choices=list(tasks.TASKS), default=None)
    p.add_argument(
        "--n", nargs="+", type=int, default=None, help="environments (default: 1024 4096)"
    )
    p.add_argument(
        "--backends",
        nargs="+",
        choices=list(backends.BY_NAME),
        default=None,
        help="physics backends (default: every installed one)",
    )
    p.add_argument(
        "--variants",
        nargs="+",
        choices=[*variants.BY_NAME, *unisim.VARIANTS],
        default=None,
        help="subset to run",
    )
    p.add_argument(
        "--threads",
        type=int,
        default=cores,
        help=f"threads of the batch and of mjrefresh (default: usable CPUs, {cores})",
    )
    p.add_argument(
        "--procs", type=int, default=None, help="processes per cell (default 3, quick 2)"
    )
    p.add_argument(
        "--preroll",
        type=int,
        default=None,
        help="untimed vector steps run once per process so that terminations reach their "
        "steady rate; every variant starts from its end (default 60, quick 30)",
    )
    p.add_argument(
        "--warmup",
        type=int,
        default=None,
        help="untimed vector steps per variant (default 10, quick 2)",
    )
    p.add_argument(
        "--steps", type=int, default=None, help="timed vector steps (default 100, quick 10)"
    )
    p.add_argument(
        "--check-steps",
        type=int,
        default=None,
        help="untimed checked steps after the window (default 3, quick 2)",
    )
    p.add_argument("--check-rows", type=int, default=32, help="rows checked per check step")
    p.add_argument("--tol", type=float, default=1e-9, help="max deviation for correct variants")
    p.add_argument("--policy", choices=("random", "zero"), default="random")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--replay-capacity",
        type=int,
        default=32768,
        help="replay ring size in transitions (rounded up to a multiple of N)",
    )
    p.add_argument("--json", type=Path, default=None, help="write every process record here")
    add_readme_args(p, "collector", "section marker (default collector-mujoco-<version>)")
    # internal: one measurement process
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--worker-out", type=Path, default=None, help=argparse.SUPPRESS)
    p.add_argument("--order", nargs="+", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    args.tasks = args.tasks or list(tasks.TASKS)
    args.n = args.n or ([1024] if args.quick else [1024, 4096])
    args.procs = args.procs or (2 if args.quick else 3)
    args.preroll = args.preroll if args.preroll is not None else (30 if args.quick else 60)
    args.warmup = args.warmup if args.warmup is not None else (2 if args.quick else 10)
    args.steps = args.steps or (10 if args.quick else 100)
    args.check_steps = (
        args.check_steps if args.check_steps is not None else (2 if args.quick else 3)
    )
    own = list(unisim.VARIANTS if args.client == "unisim" else variants.BY_NAME)
    if args.variants and not set(args.variants) <= set(own):
        p.error(f"--client {args.client} runs the variants {', '.join(own)}")
    args.variants = args.variants or own
    if min(args.n) < 1 or args.procs < 1 or args.steps < 1 or args.threads < 1:
        p.error("--n, --procs, --steps and --threads must be positive")
    if args.warmup < 0 or args.preroll < 0:
        p.error("--preroll and --warmup must be >= 0")
    if args.check_steps < 1:
        # with no checked step nothing is compared, and AGREE would claim it was
        p.error(
            f"--check-steps must be at least 1 (the variants are compared with mj_forward "
            f"only in the checked steps), got {args.check_steps}"
        )
    if args.check_rows < 1:
        p.error(f"--check-rows must be at least 1, got {args.check_rows}")
    if not args.tol >= 0:  # NaN too
        p.error(f"--tol must be a max deviation >= 0, got {args.tol}")
    if args.seed < 0:  # numpy's generators take only non-negative seeds
        p.error(f"--seed must be >= 0, got {args.seed}")
    problem = None if args.json is None or args.worker else unwritable(args.json)
    if problem is not None:  # found now, not after the whole run
        p.error(f"--json: {problem}; give a writable file path such as out.json")
    client = "collector-unisim" if args.client == "unisim" else "collector"
    check_readme(p, args, f"{client}-mujoco-{mujoco.__version__}")  # the section main() writes
    return args


def worker_command(
    args: argparse.Namespace, backend: str, task: str, n: int, order: list[str], out: Path
) -> list[str]:
    """The command line of one measurement process (run from :data:`ROOT`)."""
    return [
        sys.executable,
        "-m",
        "bench.collector",
        "--worker",
        "--client",
        args.client,
        "--worker-out",
        str(out),
        *(["--backends", backend, "--tasks", task] if args.client == "batch" else []),
        "--n",
        str(n),
        "--order",
        *order,
        "--threads",
        str(args.threads),
        "--preroll",
        str(args.preroll),
        "--warmup",
        str(args.warmup),
        "--steps",
        str(args.steps),
        "--check-steps",
        str(args.check_steps),
        "--check-rows",
        str(args.check_rows),
        "--policy",
        args.policy,
        "--seed",
        str(args.seed),
        "--replay-capacity",
        str(args.replay_capacity),
    ]


def run_processes(
    args: argparse.Namespace,
    cells: list[tuple[str, str, int]],
    order: list[str],
    skipped: list[dict[str, Any]],
) -> list[dict[str, Any]]:
    """Run ``--procs`` measurement processes per cell, one after the other, the
    variant order alternating between them; their records, in run order. A
    process that fails is recorded in ``skipped``."""
    processes: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="collector-") as tmp:
        for p in range(args.procs):
            for backend, task, n in cells:
                # alternate the variant order between processes
                seq = order if p % 2 == 0 else order[::-1]
                out = Path(tmp) / f"{p}-{backend}-{task}-{n}.json"
                progress(
                    f"process {p + 1}/{args.procs}: {backend} {task} N={n} order {' '.join(seq)}"
                )
                # the worker's stdout (e.g. an editable install's rebuild messages) goes to
                # stderr, so that stdout holds only the table
                proc = subprocess.run(
                    worker_command(args, backend, task, n, seq, out), stdout=2, cwd=ROOT
                )
                if proc.returncode != 0 or not out.exists():
                    # an installed backend's process crashing is a failure of
                    # the run, not a skip (its traceback is on stderr above)
                    reason = f"worker exited with status {proc.returncode}"
                    progress(f"  {reason}")
                    skipped.append(
                        {
                            "backend": backend,
                            "task": task,
                            "n": n,
                            "process": p,
                            "reason": reason,
                            "failed": True,
                        }
                    )
                    continue
                record = json.loads(out.read_text(encoding="utf-8"))
                record["process"] = p
                processes.append(record)
    return processes


def main(argv: Sequence[str] | None = None) -> int:
    """Run the collector benchmark (or, with ``--worker``, one measurement
    process); 1 when the correct variants disagree or a measurement process
    failed, else 0."""
    args = parse_args(argv)
    if args.worker:
        batch = args.client == "batch"
        if len(args.n) != 1 or batch and (len(args.tasks) != 1 or len(args.backends or ()) != 1):
            raise SystemExit("--worker needs exactly one --n (and --tasks and --backends)")
        args.order = args.order or args.variants
        record = (unisim.run_worker if args.client == "unisim" else run_worker)(args)
        args.worker_out.write_text(json.dumps(record), encoding="utf-8")
        return 0
    if args.client == "unisim":
        return main_unisim(args, argv)

    env = envinfo.collect()
    progress(env_banner(env, mjrefresh=True))
    load = env.get("loadavg_at_start")
    if load and load[0] > 0.5 * env["usable_cpus"]:
        progress(
            f"note: 1-minute load average {load[0]:.1f} on {env['usable_cpus']} CPUs: "
            "other work is running, timings will be noisy"
        )
    skipped: list[dict[str, Any]] = []
    avail = backends.availability()
    chosen = []
    for name in args.backends or list(backends.BY_NAME):
        if avail[name] is None:
            chosen.append(name)
        else:
            progress(f"skipping backend {name}: {avail[name]}")
            skipped.append({"backend": name, "reason": avail[name]})
    order = [v for v in variants.BY_NAME if v in args.variants]
    cells = [(b, t, n) for b in chosen for t in args.tasks for n in args.n]
    t0 = time.perf_counter()
    processes = run_processes(args, cells, order, skipped)
    elapsed = time.perf_counter() - t0

    reasons = {}
    for rec in processes:
        for s in rec["skipped"]:
            reasons.setdefault(s["variant"], s["reason"])
    for name, reason in reasons.items():
        skipped.append({"variant": name, "reason": reason})
    results, checks = report.aggregate(processes, order, args.tol)
    env["loadavg_at_end"] = loadavg()

    print(report.table(results))
    print()
    for line in report.agreement_lines(checks, args.tol):
        print(line)
    for s in skipped:
        what = s.get("variant") or s.get("backend")
        if s.get("failed"):
            print(f"FAILED {what} ({s['task']} N={s['n']} process {s['process']}): {s['reason']}")
        else:
            print(f"skipped {what}: {s['reason']}")
    failed = any(s.get("failed") for s in skipped)
    if not checks and not failed:
        # only when no requested backend is installed: a skip, like the
        # unisim client's, not a failure of the run
        print("nothing was measured: no requested backend is installed here")
    progress(f"done in {elapsed:.1f} s")

    if args.json:
        rest = {
            "tasks": tasks.describe(),
            "variants": variants.describe(),
            "backends": {b.name: b.description for b in backends.ALL},
            "native_refresh": {b.name: b.native_refresh_description for b in backends.ALL},
            "skipped": skipped,
            "elapsed_s": elapsed,
            "processes": processes,
            "results": results,
            "checks": checks,
        }
        write_record(args, report.SCHEMA, env, rest, internal=("worker", "worker_out", "order"))
    if args.readme:
        write_readme_section(
            args,
            f"collector-mujoco-{env['mujoco']}",
            "bench.collector",
            argv,
            lambda command: report.markdown_section(results, checks, env, command, args.tol),
        )
    return 0 if not failed and all(c["agree"] for c in checks) else 1


def main_unisim(args: argparse.Namespace, argv: Sequence[str] | None) -> int:
    """``--client unisim``: the unisim variants at every ``--n``; 1 when a
    variant reading the native state is off ``mj_forward``'s by more than
    float32 rounding (or a process failed), else 0."""
    env = envinfo.collect()
    progress(env_banner(env, mjrefresh=True))
    reason = unisim.unavailable()
    if reason is not None:
        progress(f"skipping the unisim client: {reason}")
        return 0
    skipped: list[dict[str, Any]] = []
    cells = [("unisim", unisim.TASK, n) for n in args.n]
    t0 = time.perf_counter()
    processes = run_processes(args, cells, list(args.variants), skipped)
    results = unisim.aggregate(processes, list(args.variants))
    env["loadavg_at_end"] = loadavg()
    print(unisim.table(results))
    for s in skipped:
        print(f"skipped unisim N={s['n']} process {s['process']}: {s['reason']}")
    progress(f"done in {time.perf_counter() - t0:.1f} s")
    if args.json:
        rest = {"variants": unisim.VARIANTS, "processes": processes, "results": results}
        write_record(args, unisim.SCHEMA, env, rest, internal=("worker", "worker_out", "order"))
    if args.readme:
        write_readme_section(
            args,
            f"collector-unisim-mujoco-{env['mujoco']}",
            "bench.collector",
            argv,
            lambda command: unisim.markdown_section(results, env, command),
        )
    ok = all(r["max_dev"] <= unisim.F32_TOL for r in results if r["variant"] in unisim.NATIVE_STATE)
    return 0 if ok and not skipped else 1
