"""Per-row cost of refreshing a list of MjData natively, next to bind_arrays and a Python loop.

On the embedded quadruped tracking selection (``mjrefresh.models.quadruped()``,
all moving bodies, ``relative_to="base"``, ``sensor_ranges=[(68, 328)]``),
each repeat times, interleaved so that machine noise hits all alike:

* ``arrays``: ``bind_arrays(r, qpos, qvel)``; ``mark_stepped()`` then
  ``refresh_dirty_rows()`` (one native call over N rows);
* ``mjdata_list``: ``bind_mjdata_list(r, datas)``, the same two calls (one
  native call reading each row from its MjData and writing the selected
  sensordata columns back into it);
* ``mjdata_poses``: ``bind_mjdata_list(r, datas, write_poses=True)``: also
  the selected body and site poses into each MjData;
* ``python_loop`` (1 thread only): per MjData ``mj_kinematics``,
  ``mj_comPos``, ``mj_comVel``, ``mj_sensorPos``, ``mj_sensorVel``.

Prints microseconds per row: median (min-max) over the repeats, and the
ratios of the medians. With one thread, all work runs on the calling thread,
so the caller's CPU time per row (``time.thread_time``) is printed too: on a
shared machine it leaves out the time the thread waited for a core.

Usage: python -m bench.research.mjdata_list [--envs 1024 4096] [--threads 1 2] [--repeat 15]
       [--readme bench/README.md]
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import mujoco
import numpy as np

import mjrefresh
from bench.common.cli import new_parser
from bench.common.output import print_table


def _states(m: mujoco.MjModel, n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    qpos = np.tile(m.qpos0, (n, 1)) + rng.normal(scale=0.1, size=(n, m.nq))
    qpos[:, 3:7] /= np.linalg.norm(qpos[:, 3:7], axis=1, keepdims=True)
    return qpos, rng.normal(size=(n, m.nv))


def _python_loop(m: mujoco.MjModel, datas: list[mujoco.MjData]) -> Callable[[], None]:
    def run() -> None:
        for d in datas:
            mujoco.mj_kinematics(m, d)
            mujoco.mj_comPos(m, d)
            mujoco.mj_comVel(m, d)
            mujoco.mj_sensorPos(m, d)
            mujoco.mj_sensorVel(m, d)

    return run


def _summary(us: list[float]) -> str:
    return f"{statistics.median(us):6.3f} ({min(us):.3f}-{max(us):.3f})"


def measure(
    n: int, threads: int, repeat: int, loop: bool
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Wall and calling-thread CPU microseconds per row of each contender, one
    value per repeat."""
    m = mjrefresh.models.quadruped()
    bodies = list(mjrefresh.models.tracking_layout(m).bodies)
    qpos, qvel = _states(m, n)
    # One list of MjData per contender: a contender run right after another
    # on the same MjData would find them in cache.
    lists = {}
    for name in ("mjdata_list", "mjdata_poses", "python_loop"):
        lists[name] = [mujoco.MjData(m) for _ in range(n)]
        for d, q, v in zip(lists[name], qpos, qvel, strict=True):
            d.qpos[:], d.qvel[:] = q, v
    with mjrefresh.Refresher(
        m, bodies=bodies, relative_to="base", sensor_ranges=[(68, 328)], num_threads=threads
    ) as r:
        caches = {
            "arrays": mjrefresh.bind_arrays(r, qpos, qvel),
            "mjdata_list": mjrefresh.bind_mjdata_list(r, lists["mjdata_list"]),
            "mjdata_poses": mjrefresh.bind_mjdata_list(r, lists["mjdata_poses"], write_poses=True),
        }
        runs: dict[str, Callable[[], object]] = {}
        for name, cache in caches.items():

            def refresh(c: mjrefresh.StateCache = cache) -> None:
                c.mark_stepped()
                c.refresh_dirty_rows()

            runs[name] = refresh
        if loop:
            runs["python_loop"] = _python_loop(m, lists["python_loop"])
        times: dict[str, list[float]] = {k: [] for k in runs}
        cpu: dict[str, list[float]] = {k: [] for k in runs}
        for fn in runs.values():
            fn()  # warm up
        for _ in range(repeat):
            for name, fn in runs.items():
                c0, t0 = time.thread_time(), time.perf_counter()
                fn()
                times[name].append((time.perf_counter() - t0) / n * 1e6)
                cpu[name].append((time.thread_time() - c0) / n * 1e6)
    return times, cpu


def main(argv: list[str] | None = None) -> int:
    """Print the per-row table; with ``--readme``, write it into that README."""
    ap = new_parser("bench.research.mjdata_list", __doc__)
    ap.add_argument("--envs", type=int, nargs="+", default=[1024, 4096])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--readme", type=Path, default=None)
    args = ap.parse_args(argv)
    lines = [
        "quadruped tracking cache (13 bodies relative_to base, columns 68:328, fast engine), "
        f"MuJoCo {mujoco.__version__}; us/row, median (min-max) of {args.repeat} repeats"
    ]
    for n in args.envs:
        for t in args.threads:
            lines.append(f"N={n}, threads={t}:")
            times, cpu = measure(n, t, args.repeat, loop=t == min(args.threads))
            for name, us in times.items():
                extra = f"   cpu {_summary(cpu[name])}" if t == 1 else ""
                lines.append(f"  {name:12s} {_summary(us)}{extra}")
            lines.append(_ratios(times, "wall"))
            if t == 1:
                lines.append(_ratios(cpu, "cpu"))
    command = "python -m bench.research.mjdata_list --repeat " + str(args.repeat)
    print_table(lines, args.readme, "mjdata-list", command)
    return 0


def _ratios(times: dict[str, list[float]], what: str) -> str:
    base = statistics.median(times["arrays"])
    ml = statistics.median(times["mjdata_list"])
    poses = statistics.median(times["mjdata_poses"])
    line = (
        f"  {what}: mjdata_list / arrays = {ml / base:.2f}x, "
        f"mjdata_poses / arrays = {poses / base:.2f}x"
    )
    if "python_loop" in times:
        loop_us = statistics.median(times["python_loop"])
        line += f"; python_loop / mjdata_list = {loop_us / ml:.1f}x"
    return line


if __name__ == "__main__":
    sys.exit(main())
