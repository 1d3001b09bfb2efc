"""unisim-core's MuJoCo backend as a collector client (``python -m
bench.collector --client unisim``).

The backend is built with unisim's public factory on the embedded quadruped
(authored sensors only; unisim injects the tracking sensors of the 13
tracked bodies itself, 260 columns) and driven as a collector drives it,
through its host-bridge tensor plan: per vector step

1. physics -- ``plan.write_control(actions)``, ``plan.step(decimation)``;
2. update-state -- bring the tracked bodies current (unisim's
   ``_sync_tracked_body_state``, timed on its own as ``refresh``), then the
   packed read of the state, the tracking sensors and the body poses into
   unisim's torch packet (``plan.read_state_sensors()``, timed as ``pack``);
3. reset -- rows that terminated (a seeded draw, the same for every
   variant) get a default state through ``plan.apply_reset``.

Variants of the refresh inside ``_sync_tracked_body_state``, one backend each:
``unisim-loop`` (unisim's per-env loop over five MuJoCo calls, what it runs
when its batch has no native refresh), ``unisim-mjbatch`` (its stock path,
mjbatch-uni ``refresh_sensor_ranges``) and ``unisim-mjrefresh``
(``mjrefresh.attach_unisim``). The variants run in one process after one
another, the order alternating between processes; each warms up, then times
``--steps`` vector steps; then ``--check-steps`` untimed steps compare the
tracked columns with ``mj_forward`` on each row's native float64 state.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import mujoco
import numpy as np

from bench.collector import report
from mjrefresh.bench.output import grouped_lines, progress

SCHEMA = "mjrefresh-collector-unisim/1"
TASK = "quadruped"
VARIANTS = {
    "unisim-loop": "unisim's per-env loop: mj_kinematics, mj_comPos, mj_comVel, mj_sensorPos, "
    "mj_sensorVel per row on a scratch MjData",
    "unisim-mjbatch": "unisim's stock path: mjbatch-uni Batch.refresh_sensor_ranges(rows, ranges)",
    "unisim-mjrefresh": "mjrefresh.attach_unisim(backend): the same call served by mjrefresh",
}
PHASES = ("physics", "refresh", "pack", "reset")
DECIMATION = 4
TIMESTEP = 0.005
#: Share of rows terminating per vector step (a seeded draw, alike for every variant).
RESET_RATE = 0.02
#: Relative float32 rounding of the columns unisim reads back (its default
#: dtype), with a factor 2 of slack: |got - mj_forward's| <= F32_TOL * max(1, |value|).
F32_TOL = 2 * float(np.finfo(np.float32).eps)
#: Variants that read each row's native float64 state (unisim's per-env loop
#: reads its float32 views of qpos/qvel, so its values carry the state's
#: rounding too, a few float32 ulps: reported, not held to F32_TOL).
NATIVE_STATE = ("unisim-mjbatch", "unisim-mjrefresh")


def unavailable() -> str | None:
    """None when unisim-core's MuJoCo backend (and torch, which it needs) import."""
    try:
        import torch  # noqa: F401
        import unisim  # noqa: F401
        from unisim.backend.mujoco import backend  # noqa: F401
    except ImportError as e:
        return (
            f"unisim-core's MuJoCo backend does not import ({e}); "
            "pip install 'unisim-core[mujoco]==2.2.0' torch==2.13.0"
        )
    return None


class Client:
    """One unisim MuJoCo backend of ``n`` rows with ``variant``'s refresh."""

    def __init__(self, model_file: Path, n: int, variant: str, threads: int) -> None:
        import unisim
        from unisim.backend.base import TensorIOSpec
        from unisim.scene import SceneCfg

        import mjrefresh

        spec = mujoco.MjSpec.from_file(str(model_file))
        self.bodies = [b.name for b in spec.worldbody.find_all(mujoco.mjtObj.mjOBJ_BODY)]
        self.backend = b = unisim.create_backend(
            "mujoco",
            SceneCfg(model_file=str(model_file)),
            num_envs=n,
            sim_dt=TIMESTEP,
            body_state_required=True,
            tracked_body_names=self.bodies,
            base_name="base",
        )
        b.materialize()
        self.model = m = b.model
        self.drop_in = None
        if variant == "unisim-loop":
            # What unisim runs when its batch has no refresh_sensor_ranges.
            b._native_tracked_sensor_refresh = False
        elif variant == "unisim-mjrefresh":
            self.drop_in = mjrefresh.attach_unisim(b, num_threads=threads)
        names = (mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_SENSOR, i) for i in range(m.nsensor))
        self.tracked = tuple(s for s in names if s.startswith("track_"))
        io = TensorIOSpec(
            state_fields=("qpos", "qvel"),
            sensor_names=self.tracked,
            body_names=tuple(self.bodies),
            body_fields=("pos_w", "quat_w"),
        )
        self.plan = b.bind_host_bridge_io(io)
        flat = b._tracked_sensor_ranges
        self.columns = [slice(a, z) for a, z in zip(flat[::2], flat[1::2], strict=True)]
        self.q0 = np.asarray(b.get_default_qpos(), dtype=np.float32)

    def close(self) -> None:
        self.plan.close()
        self.backend.close()
        if self.drop_in is not None:
            self.drop_in.close()


def deviation(client: Client, rows: np.ndarray) -> float:
    """Largest |tracked column - mj_forward's| / max(1, |mj_forward's|) over
    ``rows``, after a packed read."""
    m = client.model
    native = client.backend._pool.bind("state")
    got = client.backend._sensor_data
    d = mujoco.MjData(m)
    dev = 0.0
    for r in rows:
        mujoco.mj_setState(m, d, native[r], mujoco.mjtState.mjSTATE_INTEGRATION)
        mujoco.mj_forward(m, d)
        for c in client.columns:
            want = d.sensordata[c]
            err = np.abs(got[r, c] - want) / np.maximum(1.0, np.abs(want))
            dev = max(dev, float(err.max()))
    return dev


def run_variant(client: Client, n: int, args: argparse.Namespace) -> dict[str, Any]:
    """Warm-up, timed window and checked steps of one variant."""
    import torch

    rng = np.random.default_rng(args.seed)
    nu, nv, perf = client.model.nu, client.model.nv, time.perf_counter
    plan, backend = client.plan, client.backend
    acc = dict.fromkeys(PHASES, 0.0)
    resets = 0

    def vector_step() -> int:
        action = torch.as_tensor(rng.uniform(-0.5, 0.5, (n, nu)), dtype=torch.float32)
        done = np.flatnonzero(rng.random(n) < RESET_RATE)
        t0 = perf()
        plan.write_control(action)
        plan.step(DECIMATION)
        t1 = perf()
        backend._sync_tracked_body_state()  # what the packed read runs first
        t2 = perf()
        plan.read_state_sensors()
        t3 = perf()
        if done.size:
            ids = torch.as_tensor(done, dtype=torch.int64)
            q = torch.as_tensor(np.tile(client.q0, (done.size, 1)))
            plan.apply_reset(ids, q, torch.zeros((done.size, nv), dtype=torch.float32))
        t4 = perf()
        for k, dt in zip(PHASES, (t1 - t0, t2 - t1, t3 - t2, t4 - t3), strict=True):
            acc[k] += dt
        return int(done.size)

    for _ in range(args.warmup):
        vector_step()
    acc.update(dict.fromkeys(PHASES, 0.0))
    gc_was = gc.isenabled()
    gc.disable()
    try:
        w0 = perf()
        for _ in range(args.steps):
            resets += vector_step()
        wall = perf() - w0
    finally:
        if gc_was:
            gc.enable()
    phase_ms = {k: acc[k] / args.steps * 1e3 for k in PHASES}
    phase_ms["total"] = wall / args.steps * 1e3
    sample = np.unique(np.r_[0, n - 1, rng.choice(n, min(n, args.check_rows), replace=False)])
    dev = 0.0
    for _ in range(args.check_steps):  # untimed
        vector_step()
        dev = max(dev, deviation(client, sample))
    return {"phase_ms": phase_ms, "reset_rows": resets, "max_dev": dev, "steps": args.steps}


def run_worker(args: argparse.Namespace) -> dict[str, Any]:
    """One measurement process: every variant of ``args.order`` on ``args.n``."""
    import torch

    import mjrefresh

    # unisim's packed reads are torch copies; its default two intra-op threads
    # would compete with the physics and refresh threads on a small machine.
    torch.set_num_threads(1)
    (n,) = args.n
    out: dict[str, Any] = {
        "backend": "unisim",
        "task": TASK,
        "n": n,
        "threads": args.threads,
        "order": args.order,
        "pid": os.getpid(),
        "variants": {},
    }
    with tempfile.TemporaryDirectory() as tmp:
        model_file = Path(tmp) / "quadruped.xml"
        model_file.write_text(mjrefresh.models.quadruped_spec(tracking=False).to_xml())
        for name in args.order:
            client = Client(model_file, n, name, args.threads)
            try:
                r = run_variant(client, n, args)
                r["tracked_columns"] = sum(c.stop - c.start for c in client.columns)
                r["dtype"] = str(client.backend._sensor_data.dtype)
            finally:
                client.close()
            out["variants"][name] = r
            ph = r["phase_ms"]
            progress(
                f"    unisim N={n:<5} {name:<17} physics {ph['physics']:7.2f} ms  "
                f"refresh {ph['refresh']:6.2f} ms  pack {ph['pack']:5.2f} ms  "
                f"dev {r['max_dev']:.1e}"
            )
    return out


def _stats(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def aggregate(processes: list[dict[str, Any]], order: list[str]) -> list[dict[str, Any]]:
    """Per N and variant: medians and ranges over processes of ms per vector
    step, the update-state share of the step, and paired ratios to the loop."""
    results = []
    for n in sorted({p["n"] for p in processes}):
        procs = [p for p in processes if p["n"] == n]
        for name in order:
            runs = [p["variants"][name] for p in procs if name in p["variants"]]
            if not runs:
                continue

            def update(r: dict[str, Any]) -> float:
                return r["phase_ms"]["refresh"] + r["phase_ms"]["pack"]

            loop = [
                (p["variants"][name], p["variants"]["unisim-loop"])
                for p in procs
                if name in p["variants"] and "unisim-loop" in p["variants"]
            ]
            results.append(
                {
                    "n": n,
                    "variant": name,
                    "processes": len(runs),
                    "physics_ms": _stats([r["phase_ms"]["physics"] for r in runs]),
                    "refresh_ms": _stats([r["phase_ms"]["refresh"] for r in runs]),
                    "update_ms": _stats([update(r) for r in runs]),
                    "step_ms": _stats([r["phase_ms"]["total"] for r in runs]),
                    "update_share": _stats([update(r) / r["phase_ms"]["total"] for r in runs]),
                    "refresh_share": _stats(
                        [r["phase_ms"]["refresh"] / r["phase_ms"]["total"] for r in runs]
                    ),
                    "refresh_vs_loop": _stats(
                        [a["phase_ms"]["refresh"] / b["phase_ms"]["refresh"] for a, b in loop]
                    )
                    if loop
                    else None,
                    "max_dev": max(r["max_dev"] for r in runs),
                    "dtype": runs[0]["dtype"],
                }
            )
    return results


def table(results: list[dict[str, Any]]) -> str:
    """One line per (N, variant)."""
    head = (
        f"{'N':>5} {'variant':<17} {'refresh ms (min-max)':>21} {'x loop':>6} "
        f"{'update ms (min-max)':>21} {'share':>6} {'physics':>7} {'step':>7} {'dev':>7}"
    )
    lines = [
        "ms per vector step (medians over processes, min-max): refresh (unisim's "
        "_sync_tracked_body_state), update (refresh + the packed read into unisim's torch "
        "packet), its share of the step, physics, the whole step; x loop: refresh / the "
        "per-env loop's, paired per process; dev: max |tracked column - mj_forward's| / "
        "max(1, |value|) on sampled rows (unisim-loop reads unisim's float32 state views, "
        "the others each row's native float64 state)",
        head,
        "-" * len(head),
    ]

    def line(r: dict[str, Any]) -> str:
        ratio = "-" if r["refresh_vs_loop"] is None else f"{r['refresh_vs_loop']['median']:.3f}"
        return (
            f"{r['n']:>5} {r['variant']:<17} {report.summary_text(r['refresh_ms']):>21} {ratio:>6} "
            f"{report.summary_text(r['update_ms']):>21} {r['update_share']['median'] * 100:>5.1f}% "
            f"{r['physics_ms']['median']:>7.1f} {r['step_ms']['median']:>7.1f} "
            f"{r['max_dev']:>7.1e}"
        )

    lines += grouped_lines(results, lambda r: r["n"], line)
    return "\n".join(lines)


def markdown_section(results: list[dict[str, Any]], env: dict[str, Any], command: str) -> str:
    """The text between a README's ``collector-unisim`` markers."""
    return f"{report.measured_at(command, env)}\n\n```\n{table(results)}\n```\n"
