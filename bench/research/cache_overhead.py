"""Python overhead of StateCache reads on the embedded quadruped tracking model.

Uses ``mjrefresh.models.quadruped()`` (13 moving bodies, each with
materialised ``track_*`` sensors: world position, orientation and linear and
angular velocity, base-relative position and orientation; plus joint sensors,
an IMU and foot touch sensors), binds a StateCache over (N, nq)/(N, nv)
arrays, and measures:

* the first read after ``mark_stepped()`` (one native call over N rows),
* repeated reads within the same step (no native call), per read kind.

Usage: python -m bench.research.cache_overhead [--envs 4096] [--threads 0] [--repeat 20000]
"""

from __future__ import annotations

import time
from collections.abc import Callable

import mujoco
import numpy as np

import mjrefresh
from bench.common.cli import new_parser


def per_call_us(fn: Callable[[], object], repeat: int) -> float:
    """Best of five: microseconds per call over ``repeat`` back-to-back calls."""
    fn()
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(repeat):
            fn()
        best = min(best, (time.perf_counter() - t0) / repeat)
    return best * 1e6


def main() -> None:
    """Print the first-read and repeated-read costs of a StateCache."""
    ap = new_parser("bench.research.cache_overhead", __doc__)
    ap.add_argument("--envs", type=int, default=4096)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=20000)
    args = ap.parse_args()
    m = mjrefresh.models.quadruped()
    n = args.envs
    layout = mjrefresh.models.tracking_layout(m)
    tracked = [m.sensor(i).name for i in range(m.nsensor) if m.sensor(i).name.startswith("track_")]
    moving = list(layout.bodies)
    print(
        f"MuJoCo {mujoco.__version__}; model: {m.nbody} bodies, {m.nsensor} sensors, "
        f"{m.nsensordata} sensor columns, {m.ngeom} geoms; N={n}"
    )
    rng = np.random.default_rng(0)
    d = mujoco.MjData(m)
    qpos = np.tile(m.qpos0, (n, 1)) + rng.normal(scale=0.1, size=(n, m.nq))
    qpos[:, 3:7] /= np.linalg.norm(qpos[:, 3:7], axis=1, keepdims=True)
    qvel = rng.normal(size=(n, m.nv))
    sensordata = np.zeros((n, m.nsensordata))
    del d
    with mjrefresh.Refresher(
        m, bodies=moving, relative_to="base", sensors=tracked, num_threads=args.threads
    ) as r:
        cache = mjrefresh.bind_arrays(
            r, qpos, qvel, sensordata=sensordata, backend_outputs=("sensordata",)
        )
        print(
            f"threads: {r.num_threads}; plan: {r.plan.num_columns} columns, "
            f"{len(r.plan.body_ids)} bodies"
        )
        # read after a step: one native call over all N rows
        times = []
        for _ in range(5):
            cache.mark_stepped()
            cache.reset_stats()
            t0 = time.perf_counter()
            cache.body_pos()
            times.append(time.perf_counter() - t0)
            assert cache.stats.native_calls == 1 and cache.stats.rows_refreshed == n
        print(
            f"first read after mark_stepped(): {min(times) * 1e3:.2f} ms "
            f"(1 native call, {n} rows; {min(times) / n * 1e6 * r.num_threads:.2f} "
            "us/row/thread)"
        )
        one = np.array([5])

        def one_dirty_row() -> None:
            cache.mark_stepped(one)
            cache.body_pos(env_ids=one)

        print(
            f"mark_stepped([5]) + read of env 5 (1 native call, 1 row): "
            f"{per_call_us(one_dirty_row, max(args.repeat // 10, 100)):.2f} us"
        )
        ids = np.arange(0, n, 7)
        cache.reset_stats()
        reads = {
            "body_pos()": lambda: cache.body_pos(),
            "body_quat()": lambda: cache.body_quat(),
            "body_linvel()": lambda: cache.body_linvel(),
            "body_pos_rel()": lambda: cache.body_pos_rel(),
            "body_pos('base')": lambda: cache.body_pos("base"),
            "sensor('track_pos_w/base')": lambda: cache.sensor("track_pos_w/base"),
            "body_pos(bodies=[4 feet])": lambda: cache.body_pos(
                ["FL_calf", "FR_calf", "RL_calf", "RR_calf"]
            ),
            "body_pos(env_ids=slice)": lambda: cache.body_pos(env_ids=slice(0, 64)),
            f"body_pos(env_ids={ids.size} ids)": lambda: cache.body_pos(env_ids=ids),
            "refresh_dirty_rows() (nothing dirty)": lambda: cache.refresh_dirty_rows(),
        }
        print("repeated reads within one step (no native call):")
        for name, fn in reads.items():
            print(f"  {name:40s} {per_call_us(fn, args.repeat):7.2f} us")
        assert cache.stats.native_calls == 0
        print(f"stats: {cache.stats}")


if __name__ == "__main__":
    main()
