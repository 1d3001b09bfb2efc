"""Per-call cost of small refreshes, where the binding's overhead (argument
parsing, the GIL hand-off, waking no worker) dominates: what a build's ABI
choice can change. For the stable-ABI decision (docs/python-versions.md):
the same core built for CPython's stable ABI and for the running version
alone, each in its own environment, timed in alternation.

Cases (quadruped tracking refresh, 1 thread, fast engine):
  refresh_1    Refresher.refresh(rows, qpos, qvel, out), one row
  bound_1      BoundRefresh(rows) (arrays checked once, at bind), one row
  dirty_8      BoundRefresh.refresh_dirty_rows(mask), 1 dirty row of 8
  cache_read   StateCache.body_pos("base") after mark_stepped(row 3)

  python -m bench.research.call_overhead                    # this environment
  python -m bench.research.call_overhead --compare PY_A PY_B [--repeats 21]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import time
from collections.abc import Callable

CASES = ("refresh_1", "bound_1", "dirty_8", "cache_read")


def cases() -> dict[str, Callable[[], object]]:
    """The timed calls, built once."""
    import numpy as np

    import mjrefresh
    from mjrefresh import models
    from mjrefresh.bench.states import random_states

    model = models.quadruped()
    qpos, qvel = random_states(model, 8, seed=0)
    r = mjrefresh.Refresher(
        model, sensor_ranges=[models.tracking_layout(model).columns], num_threads=1, engine="fast"
    )
    out = r.outputs(8)
    one = np.array([3])
    bound = r.bind(qpos, qvel, out)
    mask = np.zeros(8, dtype=bool)

    def dirty() -> object:
        mask[3] = True
        return bound.refresh_dirty_rows(mask)

    poses = mjrefresh.Refresher(model, bodies=("base",), num_threads=1, engine="fast")
    cache = mjrefresh.bind_arrays(poses, qpos, qvel)

    def read() -> object:
        cache.mark_stepped(one)
        return cache.body_pos("base")

    return {
        "refresh_1": lambda: r.refresh(one, qpos, qvel, out),
        "bound_1": lambda: bound(one),
        "dirty_8": dirty,
        "cache_read": read,
    }


def measure(calls: int, rounds: int) -> dict[str, float]:
    """Median over `rounds` of the mean µs per call of `calls` calls, per case."""
    timed = cases()
    result = {}
    for name, fn in timed.items():
        for _ in range(calls):  # warm-up
            fn()
        samples = []
        for _ in range(rounds):
            t0 = time.perf_counter()
            for _ in range(calls):
                fn()
            samples.append((time.perf_counter() - t0) / calls * 1e6)
        result[name] = statistics.median(samples)
    return result


def version(python: str) -> str:
    code = "import sys, mjrefresh._core as c; print(sys.version.split()[0], c.__file__)"
    return subprocess.run([python, "-c", code], capture_output=True, text=True).stdout.strip()


def compare(pythons: list[str], repeats: int, calls: int) -> None:
    """Run `measure` in each interpreter in turn, `repeats` times, and print
    medians (min-max) per case and the ratios to the first interpreter,
    paired by repeat."""
    for p in pythons:
        print(f"{p}: {version(p)}")
    runs: dict[str, list[dict[str, float]]] = {p: [] for p in pythons}
    for k in range(repeats):
        order = pythons if k % 2 == 0 else pythons[::-1]
        for p in order:
            cmd = [p, "-m", "bench.research.call_overhead", "--json", "--calls", str(calls)]
            out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
            runs[p].append(json.loads(out))
    base = pythons[0]
    print(f"µs per call, median (min-max) over {repeats} alternating processes; ratio to {base}")
    for case in CASES:
        for p in pythons:
            v = [r[case] for r in runs[p]]
            ratio = [a[case] / b[case] for a, b in zip(runs[p], runs[base], strict=True)]
            print(
                f"  {case:<11} {statistics.median(v):7.3f} ({min(v):.3f}-{max(v):.3f})  "
                f"x{statistics.median(ratio):.3f} ({min(ratio):.3f}-{max(ratio):.3f})  {p}"
            )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--compare", nargs="+", metavar="PYTHON", help="interpreters to compare")
    p.add_argument("--repeats", type=int, default=21, help="processes per interpreter")
    p.add_argument("--calls", type=int, default=2000, help="calls per timed round")
    p.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.compare:
        compare(args.compare, args.repeats, args.calls)
        return
    result = measure(args.calls, rounds=5)
    if args.json:
        print(json.dumps(result))
        return
    for name, us in result.items():
        print(f"{name:<11} {us:7.3f} µs/call")


if __name__ == "__main__":
    main()
