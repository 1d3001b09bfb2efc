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
``collector_variants.py``). Each measurement cell (backend x task x N) runs
in ``--procs`` independent processes, the variant order alternating between
them; each process warms every variant up, times a window of ``--steps``
vector steps and then runs ``--check-steps`` untimed steps comparing the
update-state values of sampled rows with values computed from ``mj_forward``.

  python bench/collector.py --quick              # < 2 min on 2 cores
  python bench/collector.py                      # N 1024 4096, 3 processes per cell
  python bench/collector.py --json out.json --readme bench/README.md
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import collector_backends as backends  # noqa: E402
import collector_report as creport  # noqa: E402
import collector_tasks as tasks  # noqa: E402
import collector_variants as variants  # noqa: E402
import envinfo  # noqa: E402
import mujoco  # noqa: E402
import numpy as np  # noqa: E402
import report  # noqa: E402

HERE = Path(__file__).resolve()


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    cores = envinfo.usable_cores()
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="small run: N=1024, 2 processes per cell, short windows (< 2 min on 2 cores)",
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
        "--variants", nargs="+", choices=list(variants.BY_NAME), default=None, help="subset to run"
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
    p.add_argument(
        "--readme",
        type=Path,
        default=None,
        help="rewrite the collector section of this README (e.g. bench/README.md) with the table",
    )
    p.add_argument(
        "--readme-section", default=None, help="section marker (default collector-mujoco-<version>)"
    )
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
    args.variants = args.variants or list(variants.BY_NAME)
    if min(args.n) < 1 or args.procs < 1 or args.steps < 1 or args.threads < 1:
        p.error("--n, --procs, --steps and --threads must be positive")
    if args.warmup < 0 or args.check_steps < 0 or args.preroll < 0:
        p.error("--preroll, --warmup and --check-steps must be >= 0")
    return args


def progress(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------
# one measurement process
# ---------------------------------------------------------------------------


class Replay:
    """A float32 ring buffer of (obs, action, reward, done, next_obs) transitions."""

    def __init__(self, capacity: int, n: int, obs_dim: int, nu: int) -> None:
        cap = max(n, -(-capacity // n) * n)
        self.capacity, self.n, self.ptr, self.size = cap, n, 0, 0
        self.obs = np.zeros((cap, obs_dim), np.float32)
        self.next_obs = np.zeros((cap, obs_dim), np.float32)
        self.action = np.zeros((cap, nu), np.float32)
        self.reward = np.zeros(cap, np.float32)
        self.done = np.zeros(cap, bool)

    def add(self, obs, action, reward, done, next_obs) -> None:
        s = slice(self.ptr, self.ptr + self.n)
        self.obs[s] = obs
        self.action[s] = action
        self.reward[s] = reward
        self.done[s] = done
        self.next_obs[s] = next_obs
        self.ptr = (self.ptr + self.n) % self.capacity
        self.size = min(self.size + self.n, self.capacity)


def reference_block(task: tasks.Task, qpos: np.ndarray, qvel: np.ndarray) -> np.ndarray:
    """The tracking block that mj_forward computes at each row's state (fresh MjData per row)."""
    a, b = task.columns
    out = np.empty((qpos.shape[0], b - a))
    for k in range(qpos.shape[0]):
        d = mujoco.MjData(task.model)
        d.qpos[:] = qpos[k]
        d.qvel[:] = qvel[k]
        mujoco.mj_forward(task.model, d)
        out[k] = d.sensordata[a:b]
    return out


def _maxabs(x: np.ndarray) -> float:
    if x.size == 0:
        return 0.0
    x = np.abs(x)
    return float(x.max()) if np.isfinite(x).all() else float("inf")


def run_variant(
    v: variants.Variant,
    task: tasks.Task,
    backend: backends.Backend,
    replay: Replay,
    sample: np.ndarray,
    start: dict[str, Any],
    args: argparse.Namespace,
) -> dict[str, Any]:
    """Warm-up, timed window and checked steps of one variant, from the same start."""
    n = backend.n
    qpos, qvel, state, ctrl = backend.qpos, backend.qvel, backend.state, backend.ctrl
    decimation = task.spec.decimation
    zeros = np.zeros((n, task.nu))
    perf = time.perf_counter

    # the same start for every variant: the state after the shared pre-roll, all current
    backend.state[...] = start["state"]
    task.restore(start["task"])
    backend.forward()
    v.mark_all_current()
    obs0, _, _ = task.compute(v.tracked(), qpos, qvel, None, zeros)
    carry = {"obs": obs0}
    acc = dict.fromkeys((*creport.PHASES, "refresh_update", "refresh_reset"), 0.0)
    counts = {"reset_rows": 0}
    check = {
        "max_dev_update": 0.0,
        "max_dev_reward": 0.0,
        "max_dev_reset": 0.0,
        "term_mismatch": 0,
        "checked_rows": 0,
        "checked_reset_rows": 0,
    }
    signature: list[np.ndarray] = []

    def vector_step(t: int, checking: bool) -> None:
        c0 = perf()
        action = task.action(t)
        task.ctrl_targets(action, ctrl)
        backend.step(decimation)
        task.advance(action)
        v.mark_stepped()
        c1 = perf()
        r0 = v.refresh_s
        block = v.tracked()
        obs_next, reward, term = task.compute(block, qpos, qvel, None, action)
        c2 = perf()
        r1 = v.refresh_s
        if checking:  # untimed: compare with mj_forward at the same states
            ref = reference_block(task, qpos[sample], qvel[sample])
            o, rw, tm = task.compute(ref, qpos[sample], qvel[sample], sample, action[sample])
            check["max_dev_update"] = max(check["max_dev_update"], _maxabs(obs_next[sample] - o))
            check["max_dev_reward"] = max(check["max_dev_reward"], _maxabs(reward[sample] - rw))
            check["term_mismatch"] += int(np.sum(term[sample] != tm))
            check["checked_rows"] += int(sample.size)
            signature.append(np.concatenate([obs_next[sample].ravel(), reward[sample]]))
        ids = np.flatnonzero(term | task.truncated())
        if ids.size:
            task.reset_state(ids, state, qpos, qvel)
            v.mark_reset(ids)
            blk = v.tracked(ids)
            obs_reset, _, _ = task.compute(blk, qpos[ids], qvel[ids], ids, zeros[: ids.size])
            if checking:
                k = ids[: args.check_rows]
                ref = reference_block(task, qpos[k], qvel[k])
                o, _, _ = task.compute(ref, qpos[k], qvel[k], k, zeros[: k.size])
                check["max_dev_reset"] = max(
                    check["max_dev_reset"], _maxabs(obs_reset[: k.size] - o)
                )
                check["checked_reset_rows"] += int(k.size)
        c3 = perf()
        r2 = v.refresh_s
        replay.add(carry["obs"], action, reward, term, obs_next)
        if ids.size:
            obs_next[ids] = obs_reset
        carry["obs"] = obs_next
        task.finish_step(action, ids)
        c4 = perf()
        if not checking:
            acc["physics"] += c1 - c0
            acc["update_state"] += c2 - c1
            acc["reset"] += c3 - c2
            acc["replay"] += c4 - c3
            acc["refresh_update"] += r1 - r0
            acc["refresh_reset"] += r2 - r1
            counts["reset_rows"] += int(ids.size)

    t = start["t"]
    for _ in range(args.warmup):
        vector_step(t, False)
        t += 1
    for k in acc:
        acc[k] = 0.0
    counts["reset_rows"] = 0
    v.reset_counters()
    gc_was = gc.isenabled()
    gc.disable()
    try:
        w0 = perf()
        for _ in range(args.steps):
            vector_step(t, False)
            t += 1
        wall = perf() - w0
    finally:
        if gc_was:
            gc.enable()
    refreshed = v.refreshed_rows
    for _ in range(args.check_steps):
        vector_step(t, True)
        t += 1
    # the state of the sampled rows at the end (trajectories must match between variants)
    signature.append(np.concatenate([qpos[sample].ravel(), qvel[sample].ravel()]))
    steps = args.steps
    phase_ms = {k: acc[k] / steps * 1e3 for k in creport.PHASES}
    phase_ms["total"] = wall / steps * 1e3
    phase_ms["other"] = phase_ms["total"] - sum(phase_ms[k] for k in creport.PHASES)
    check["max_dev"] = max(check["max_dev_update"], check["max_dev_reward"], check["max_dev_reset"])
    return {
        "variant": v.name,
        "correct_by_design": v.correct,
        "refresh_threads": v.threads_used,
        "steps": steps,
        "warmup": args.warmup,
        "wall_s": wall,
        "transitions_per_s": n * steps / wall,
        "phase_ms": phase_ms,
        "refresh_ms": {
            "update": acc["refresh_update"] / steps * 1e3,
            "reset": acc["refresh_reset"] / steps * 1e3,
        },
        "reset_rows": counts["reset_rows"],
        "refreshed_rows": refreshed,
        "check": check,
        "_signature": np.concatenate(signature) if signature else np.zeros(0),
    }


def preroll(
    task: tasks.Task, backend: backends.Backend, args: argparse.Namespace
) -> dict[str, Any]:
    """Run the collector, untimed, until resets arrive at their steady rate; return
    the state every variant starts from (batch state rows, task state, step index).

    Every row is reset from the seed and spread over its episode, then
    ``--preroll`` vector steps run with correct reads (the batch's own
    mj_forward after each step), terminating and resetting rows as usual. A
    task without terminations or time-outs needs no pre-roll.
    """
    n = backend.n
    a, b = task.columns
    task.start(args.seed)
    task.reset_state(np.arange(n), backend.state, backend.qpos, backend.qvel)
    task.desync()
    resets = 0
    spec = task.spec
    steps = args.preroll if (spec.terminations or spec.episode_steps is not None) else 0
    for t in range(steps):
        action = task.action(t)
        task.ctrl_targets(action, backend.ctrl)
        backend.step(task.spec.decimation)
        task.advance(action)
        backend.forward()
        _, _, term = task.compute(
            backend.sensordata[:, a:b], backend.qpos, backend.qvel, None, action
        )
        ids = np.flatnonzero(term | task.truncated())
        task.reset_state(ids, backend.state, backend.qpos, backend.qvel)
        task.finish_step(action, ids)
        resets += int(ids.size)
    return {
        "state": backend.state.copy(),
        "task": task.snapshot(),
        "t": steps,
        "steps": steps,
        "reset_rows": resets,
    }


def run_worker(args: argparse.Namespace) -> dict[str, Any]:
    (n,) = args.n
    (task_name,) = args.tasks
    (backend_name,) = args.backends
    spec = tasks.TASKS[task_name]
    t_start = time.perf_counter()
    task = tasks.Task(spec, n, seed=args.seed, policy=args.policy)
    backend = backends.BY_NAME[backend_name](task.model, n, args.threads)
    replay = Replay(args.replay_capacity, n, task.obs_dim, task.nu)
    rng = np.random.default_rng(args.seed + 7)
    pick = rng.choice(n, size=min(n, args.check_rows), replace=False)
    sample = np.unique(np.concatenate([[0, n - 1], pick]))  # sorted; first and last included
    out: dict[str, Any] = {
        "backend": backend_name,
        "backend_version": backend.version,
        "task": task_name,
        "n": n,
        "threads": args.threads,
        "threads_used": backend.threads_used,
        "order": args.order,
        "obs_dim": task.obs_dim,
        "nu": task.nu,
        "tracked_columns": list(task.columns),
        "read_bodies": len(task.read),
        "decimation": spec.decimation,
        "timestep": spec.timestep,
        "replay_capacity": replay.capacity,
        "adapter": None,
        "pid": os.getpid(),
        "loadavg_at_start": list(os.getloadavg()),
        "variants": {},
        "skipped": [],
    }
    t0 = time.perf_counter()
    start = preroll(task, backend, args)
    out["preroll_s"] = time.perf_counter() - t0
    out["preroll_steps"] = start["steps"]
    out["preroll_reset_rows"] = start["reset_rows"]
    signatures: dict[str, np.ndarray] = {}
    for name in args.order:
        cls = variants.BY_NAME[name]
        reason = cls.unavailable(backend_name)
        if reason is None:
            try:
                v = cls(backend, task, args.threads)
            except (ValueError, variants.VariantUnavailable) as e:
                reason = f"{type(e).__name__}: {e}"
        if reason is not None:
            progress(f"    skipping {name}: {reason}")
            out["skipped"].append({"variant": name, "reason": reason})
            continue
        if isinstance(v, variants._Mjrefresh):
            out["adapter"] = variants.adapter_name()
        try:
            r = run_variant(v, task, backend, replay, sample, start, args)
        finally:
            v.close()
        signatures[name] = r.pop("_signature")
        out["variants"][name] = r
        progress(
            f"    {backend_name:<12} {task_name:<14} N={n:<5} {name:<15} "
            f"{r['transitions_per_s']:10.0f} trans/s  "
            f"update {r['phase_ms']['update_state']:7.2f} ms  "
            f"resets {r['reset_rows']:5d}  dev {r['check']['max_dev']:.1e}"
        )
    # agreement between variants: same seed and actions, so the correct variants
    # must produce the same values on the sampled rows and end in the same state
    ref_name = next((nm for nm in ("loop", *variants.CORRECT) if nm in signatures), None)
    for name, r in out["variants"].items():
        if ref_name is None or name == ref_name:
            r["agreement"] = None if ref_name is None else {"reference": ref_name, "max_dev": 0.0}
            continue
        a, b = signatures[name], signatures[ref_name]
        dev = _maxabs(a - b) if a.shape == b.shape else float("inf")
        r["agreement"] = {"reference": ref_name, "max_dev": dev}
    out["loadavg_at_end"] = list(os.getloadavg())
    out["elapsed_s"] = time.perf_counter() - t_start
    return out


# ---------------------------------------------------------------------------
# orchestration
# ---------------------------------------------------------------------------


def worker_command(
    args: argparse.Namespace, backend: str, task: str, n: int, order: list[str], out: Path
) -> list[str]:
    return [
        sys.executable,
        str(HERE),
        "--worker",
        "--worker-out",
        str(out),
        "--backends",
        backend,
        "--tasks",
        task,
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


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.worker:
        if len(args.n) != 1 or len(args.tasks) != 1 or not args.backends or len(args.backends) != 1:
            raise SystemExit("--worker needs exactly one --n, --tasks and --backends")
        args.order = args.order or args.variants
        record = run_worker(args)
        args.worker_out.write_text(json.dumps(record), encoding="utf-8")
        return 0

    env = envinfo.collect()
    progress(
        f"{env['cpu_model']}, {env['usable_cpus']} usable CPUs; mujoco {env['mujoco']}, "
        f"mjbatch-uni {env['mjbatch_uni']}, mjrefresh {env['mjrefresh']}"
    )
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
    processes: list[dict[str, Any]] = []
    t0 = time.perf_counter()
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
                proc = subprocess.run(worker_command(args, backend, task, n, seq, out), stdout=2)
                if proc.returncode != 0 or not out.exists():
                    reason = f"worker exited with status {proc.returncode}"
                    progress(f"  {reason}")
                    skipped.append(
                        {"backend": backend, "task": task, "n": n, "process": p, "reason": reason}
                    )
                    continue
                record = json.loads(out.read_text(encoding="utf-8"))
                record["process"] = p
                processes.append(record)
    elapsed = time.perf_counter() - t0

    reasons = {}
    for rec in processes:
        for s in rec["skipped"]:
            reasons.setdefault(s["variant"], s["reason"])
    for name, reason in reasons.items():
        skipped.append({"variant": name, "reason": reason})
    results, checks = creport.aggregate(processes, order, args.tol)
    try:
        env["loadavg_at_end"] = list(os.getloadavg())
    except OSError:
        env["loadavg_at_end"] = None

    print(creport.table(results))
    print()
    for line in creport.agreement_lines(checks, args.tol):
        print(line)
    for s in skipped:
        what = s.get("variant") or s.get("backend")
        print(f"skipped {what}: {s['reason']}")
    progress(f"done in {elapsed:.1f} s")

    if args.json:
        config = {
            k: (str(v) if isinstance(v, Path) else v)
            for k, v in vars(args).items()
            if k not in ("worker", "worker_out", "order")
        }
        report.write_json(
            args.json,
            {
                "schema": creport.SCHEMA,
                "env": env,
                "config": config,
                "tasks": tasks.describe(),
                "variants": variants.describe(),
                "backends": {b.name: b.description for b in backends.ALL},
                "native_refresh": {b.name: b.native_refresh_description for b in backends.ALL},
                "skipped": skipped,
                "elapsed_s": elapsed,
                "processes": processes,
                "results": results,
                "checks": checks,
            },
        )
        progress(f"wrote {args.json}")
    if args.readme:
        section = args.readme_section or f"collector-mujoco-{env['mujoco']}"
        command = "python bench/collector.py " + " ".join(
            argv if argv is not None else sys.argv[1:]
        )
        report.update_readme(
            args.readme,
            section,
            creport.markdown_section(results, checks, env, command.strip(), args.tol),
        )
        progress(f"updated section {section!r} of {args.readme}")
    return 0 if all(c["agree"] for c in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
