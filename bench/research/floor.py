"""Cost floors of the tracking refresh, next to the engines' per-row cost.

For each embedded model's tracking workload (every row dirty, N=4096, one
thread) this times, interleaved:

* ``memory``: the memory traffic every refresh must do and nothing else --
  read each row's ``qpos``/``qvel`` and write the tracking columns of
  ``sensordata`` (numpy copies of the same bytes: the memory floor the
  microbenchmark prints, ``mjrefresh.bench.measure.memory_floor``);
* ``stage functions``: the MuJoCo stage functions the exact engine calls,
  timed inside the core (``BoundRefresh.stage_seconds``);
* the exact and fast engines themselves.

  python -m bench.research.floor [--readme bench/README.md]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from bench.common.cli import new_parser
from bench.common.output import print_table
from mjrefresh import models
from mjrefresh.bench import timing
from mjrefresh.bench.measure import memory_floor
from mjrefresh.bench.states import random_states
from mjrefresh.bench.workloads import Problem


def measure(mjrefresh, models, name: str, n: int, repeats: int) -> list[str]:
    """Table lines for one embedded model."""
    model = models.MODELS[name]()
    a, b = models.tracking_layout(model).columns
    qpos, qvel = random_states(model, n, seed=0)
    rows = np.arange(n)
    engines = {
        e: mjrefresh.Refresher(model, sensor_ranges=[(a, b)], num_threads=1, engine=e)
        for e in ("exact", "fast")
    }
    outs = {e: r.outputs(n) for e, r in engines.items()}
    fns = {
        "memory": memory_floor(Problem(name, model, qpos, qvel, [(a, b)])),
        "exact engine": lambda: engines["exact"].refresh(rows, qpos, qvel, outs["exact"]),
        "fast engine": lambda: engines["fast"].refresh(rows, qpos, qvel, outs["fast"]),
    }
    calls = {k: timing.calibrate(f, 0.02) for k, f in fns.items()}
    samples = timing.interleaved(fns, calls, repeats, warmup=2)
    stage = engines["exact"].bind(qpos, qvel, outs["exact"]).stage_seconds
    samples["stage functions"] = [stage(rows) for _ in range(repeats)]
    lines = []
    for what in ("memory", "stage functions", "exact engine", "fast engine"):
        lines.append(
            f"{name:<10} {what:<16} {timing.per_row_text(timing.summary(samples[what]), n)}"
        )
    for r in engines.values():
        r.close()
    return lines


def main(argv: list[str] | None = None) -> int:
    """Print the floors table; with ``--readme``, write it into that README."""
    import mjrefresh

    p = new_parser("bench.research.floor", __doc__)
    p.add_argument("--n", type=int, default=4096)
    p.add_argument("--repeats", type=int, default=11)
    p.add_argument("--readme", type=Path, default=None)
    args = p.parse_args(argv)
    lines = [
        f"N={args.n}, every row dirty, one thread; us per row (median, min-max)",
        f"{'model':<10} {'what':<16} {'us/row':>7} {'(min-max)':>15}",
    ]
    for name in sorted(models.MODELS):
        lines += measure(mjrefresh, models, name, args.n, args.repeats)
    print_table(lines, args.readme, "floor", "python -m bench.research.floor")
    return 0


if __name__ == "__main__":
    sys.exit(main())
