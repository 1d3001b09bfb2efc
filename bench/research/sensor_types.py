"""Cost of each sensor type, fast engine against exact engine: for every
position/velocity sensor type of a model that the fast engine computes, a
refresh of all of that type's sensors (and of them all together), N rows,
interleaved repeats; next to it, the pose and velocity pass every velocity
sensor needs (the world velocity of every moving body, no sensor).

The default model is the embedded quadruped with two subtreeangmom sensors
added (on the base, the whole robot, and on the front-left thigh), as a
robot that reports its angular momentum has.

  python -m bench.research.sensor_types [MODEL] [--n 4096] [--threads 1] [--repeats 11]
  python -m bench.research.sensor_types --readme bench/README.md
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import mujoco
import numpy as np

import mjrefresh
from bench.common.output import median_range, print_table
from mjrefresh import models
from mjrefresh.bench.states import random_states
from mjrefresh.model_args import load_model
from mjrefresh.plan import fast_uncovered

FLOOR = "pose and velocity pass (no sensor)"


def default_model() -> mujoco.MjModel:
    """The quadruped with subtreeangmom sensors on the base and FL_thigh."""
    spec = models.quadruped_spec()
    for body in ("base", "FL_thigh"):
        spec.add_sensor(
            name=f"angmom/{body}",
            type=mujoco.mjtSensor.mjSENS_SUBTREEANGMOM,
            objtype=mujoco.mjtObj.mjOBJ_BODY,
            objname=body,
        )
    return spec.compile()


def by_type(m: mujoco.MjModel) -> dict[str, list[int]]:
    """Sensor ids per type name, for the types the fast engine computes."""
    groups: dict[str, list[int]] = defaultdict(list)
    for i in range(m.nsensor):
        if fast_uncovered(m, [i]) is None:
            groups[mujoco.mjtSensor(m.sensor_type[i]).name.removeprefix("mjSENS_").lower()].append(
                i
            )
    return dict(groups)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model", nargs="?", default=None, help="MJCF/MJB file or embedded model name")
    p.add_argument("--n", type=int, default=4096)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--repeats", type=int, default=11)
    p.add_argument("--readme", type=Path, default=None, help="write the table into this README")
    args = p.parse_args()
    m = default_model() if args.model is None else load_model(args.model)
    n = args.n
    qpos, qvel = random_states(m, n, seed=0)
    rows = np.arange(n)
    groups = by_type(m)
    groups["every covered sensor"] = sorted(i for ids in groups.values() for i in ids)
    calls: dict[tuple[str, str], Callable[[], object]] = {}
    for name, ids in groups.items():
        for engine in ("fast", "exact"):
            r = mjrefresh.Refresher(m, sensors=ids, num_threads=args.threads, engine=engine)
            bound = r.bind(qpos, qvel, r.outputs(n))
            calls[name, engine] = lambda b=bound: b(rows)
    pose = mjrefresh.Refresher(
        m, bodies=tuple(range(1, m.nbody)), num_threads=args.threads, engine="fast"
    )
    # only the world velocities: body_linvel alone
    bodies_out = dataclasses.replace(
        pose.outputs(n), body_pos=None, body_quat=None, body_angvel=None
    )
    pass_only = pose.bind(qpos, qvel, bodies_out)
    calls[FLOOR, "fast"] = lambda: pass_only(rows)
    samples: dict[tuple[str, str], list[float]] = defaultdict(list)
    for fn in calls.values():  # warm-up
        fn()
    items = list(calls.items())
    for k in range(args.repeats):
        for key, fn in items if k % 2 == 0 else items[::-1]:
            t0 = time.perf_counter()
            fn()
            samples[key].append((time.perf_counter() - t0) / n * 1e6)
    lines = [
        f"µs per row, median (min-max) over {args.repeats} interleaved repeats, N={n}, "
        f"{args.threads} thread(s), {m.nsensor} sensors; fast/exact: median (min-max) of the "
        "per-repeat ratios",
        f"  {'sensor type':<38} {'count':>5} {'fast':>22} {'exact':>22} {'fast/exact':>17}",
    ]
    for name, ids in groups.items():
        f, e = samples[name, "fast"], samples[name, "exact"]
        ratio = median_range([a / b for a, b in zip(f, e, strict=True)], 2)
        lines.append(
            f"  {name:<38} {len(ids):>5} {median_range(f):>22} {median_range(e):>22} {ratio:>17}"
        )
    lines.append(f"  {FLOOR:<38} {'':>5} {median_range(samples[FLOOR, 'fast']):>22}")
    command = "python -m bench.research.sensor_types" + (
        "" if args.model is None else f" {args.model}"
    )
    print_table(lines, args.readme, "sensor-types", command)


if __name__ == "__main__":
    main()
