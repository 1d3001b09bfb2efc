"""One measurement process of the collector benchmark: a native batch, the
shared pre-roll, then per update-state variant a warm-up, a timed window and
checked steps (values compared with ``mj_forward`` on sampled rows)."""

from __future__ import annotations

import argparse
import gc
import os
import time
from typing import Any

import numpy as np

from bench.collector import backends, report, tasks, variants
from mjrefresh.bench.output import progress
from mjrefresh.bench.states import forward_columns


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
    return forward_columns(task.model, qpos, qvel, slice(a, b))


def _maxabs(x: np.ndarray) -> float:
    if x.size == 0:
        return 0.0
    x = np.abs(x)
    return float(x.max()) if np.isfinite(x).all() else float("inf")


def check_update(
    task: tasks.Task,
    qpos: np.ndarray,
    qvel: np.ndarray,
    sample: np.ndarray,
    action: np.ndarray,
    computed: tuple[np.ndarray, np.ndarray, np.ndarray],
    check: dict[str, Any],
) -> None:
    """Compare the update-state values (observations, reward, termination) of
    the ``sample`` rows with those computed from mj_forward; update ``check``."""
    obs_next, reward, term = computed
    ref = reference_block(task, qpos[sample], qvel[sample])
    o, rw, tm = task.compute(ref, qpos[sample], qvel[sample], sample, action[sample])
    check["max_dev_update"] = max(check["max_dev_update"], _maxabs(obs_next[sample] - o))
    check["max_dev_reward"] = max(check["max_dev_reward"], _maxabs(reward[sample] - rw))
    check["term_mismatch"] += int(np.sum(term[sample] != tm))
    check["checked_rows"] += int(sample.size)


def check_reset(
    task: tasks.Task,
    qpos: np.ndarray,
    qvel: np.ndarray,
    k: np.ndarray,
    obs_reset: np.ndarray,
    check: dict[str, Any],
) -> None:
    """Compare the observations of the reset rows ``k`` (the first rows of
    ``obs_reset``) with those computed from mj_forward; update ``check``."""
    ref = reference_block(task, qpos[k], qvel[k])
    o, _, _ = task.compute(ref, qpos[k], qvel[k], k, np.zeros((k.size, task.nu)))
    check["max_dev_reset"] = max(check["max_dev_reset"], _maxabs(obs_reset[: k.size] - o))
    check["checked_reset_rows"] += int(k.size)


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
    # warm_excluded: seconds of the warm repeats (and their bookkeeping), out of the wall time
    timers = (*report.PHASES, "refresh_update", "refresh_reset", "refresh_warm", "warm_excluded")
    acc = dict.fromkeys(timers, 0.0)
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
            check_update(task, qpos, qvel, sample, action, (obs_next, reward, term), check)
            signature.append(np.concatenate([obs_next[sample].ravel(), reward[sample]]))
        else:  # the same refresh again at once, outside the step's phases
            warm = v.repeat_update()
            acc["refresh_warm"] += 0.0 if warm is None else warm
            acc["warm_excluded"] += perf() - c2
            c2 = perf()
        ids = np.flatnonzero(term | task.truncated())
        if ids.size:
            task.reset_state(ids, state, qpos, qvel)
            v.mark_reset(ids)
            blk = v.tracked(ids)
            obs_reset, _, _ = task.compute(blk, qpos[ids], qvel[ids], ids, zeros[: ids.size])
            if checking:
                check_reset(task, qpos, qvel, ids[: args.check_rows], obs_reset, check)
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
        wall = perf() - w0 - acc["warm_excluded"]
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
    phase_ms = {k: acc[k] / steps * 1e3 for k in report.PHASES}
    phase_ms["total"] = wall / steps * 1e3
    phase_ms["other"] = phase_ms["total"] - sum(phase_ms[k] for k in report.PHASES)
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
            "warm": acc["refresh_warm"] / steps * 1e3,
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
    """One measurement process: the record of every variant of one backend, task and N."""
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
