"""The tracking refresh against mjbatch-uni at each thread count, called hot and cold.

On the quadruped tracking workload (the embedded quadruped, its 260 tracking
columns, every row dirty, N=4096 by default), each repeat times, interleaved,
mjrefresh's fast and exact engines and mjbatch-uni's ``refresh_sensor_ranges``
at every thread count, in two ways:

* ``hot``: calls back to back (the pools' workers still spin from the last
  call when the next one starts);
* ``cold``: a 3 ms pause before each call (untimed), so every pool's workers
  have parked and each call pays their wake-up, as a refresh right after a
  physics step whose pool is another one does.

Where the fast engine runs its AVX2 build, ``fast-sse2`` is the same engine
built with ``MJREFRESH_FAST_ISA=sse2`` (baseline kernels, rows in pairs), and
a last line gives the per-repeat ratio of the two.

Prints microseconds per row, median (min-max) over the repeats, the ratio to
mjbatch-uni's call of the same thread count and kind (median and min-max of
the per-repeat ratios), and each contender's speed-up from one thread to the
most. Next to them, ``floor``: the memory traffic a refresh of these rows
cannot avoid, split over the same threads: each row's qpos/qvel read once
and its tracking columns read and written once in place
(``bench.common.traffic.refresh_traffic``), the rows in T contiguous slices.

  python -m bench.research.threads [--n 4096] [--threads 1 2] [--repeats 15]
  python -m bench.research.threads --readme bench/README.md
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import numpy as np

from bench.common.cli import new_parser
from bench.common.output import median_range, print_table
from bench.common.traffic import refresh_traffic, sensor_columns
from mjrefresh import _core
from mjrefresh.bench import contenders, envinfo
from mjrefresh.bench.workloads import Problem, make_problem

PAUSE_S = 0.003  # > the pool's spin before parking (~120 us here, cpp/core/worker_pool.h)


class FastBaseline(contenders.MjrefreshFast):
    """The fast engine built with ``MJREFRESH_FAST_ISA=sse2``: its baseline
    x86-64 kernels (rows in pairs), against which the AVX2 build (rows in
    quads) is measured in the same run."""

    def __init__(self, problem: Problem, threads: int) -> None:
        old = os.environ.get("MJREFRESH_FAST_ISA")
        os.environ["MJREFRESH_FAST_ISA"] = "sse2"  # read when the engine is built
        try:
            super().__init__(problem, threads)
        finally:
            if old is None:
                del os.environ["MJREFRESH_FAST_ISA"]
            else:
                os.environ["MJREFRESH_FAST_ISA"] = old


CONTENDERS: dict[str, type[contenders.Contender]] = {
    "fast": contenders.MjrefreshFast,
    "exact": contenders.MjrefreshExact,
    "mjbatch-uni": contenders.MjbatchUni,
}
if _core.fast_kernel_isa() == "avx2":  # the baseline build, for the A/B line
    CONTENDERS["fast-sse2"] = FastBaseline


def traffic_floor(problem: Problem, threads: int) -> Callable[[], None]:
    """One call doing only the memory traffic of a refresh of every row, on ``threads``
    threads: read each row's qpos/qvel once, write its selected columns once."""
    span, *rest = problem.ranges
    assert not rest, "the tracking workload selects one column range"
    columns = sensor_columns(problem.model, problem.n, span)
    return refresh_traffic(problem.qpos, problem.qvel, columns, threads)


def measure(
    n: int, threads: list[int], repeats: int, calls: int
) -> dict[tuple[str, int, str], list[float]]:
    """µs/row samples per (contender or floor, threads, hot|cold)."""
    problem = make_problem("quadruped", n)
    mask = np.ones(n, dtype=bool)
    fns: dict[tuple[str, int], Callable[[], None]] = {}
    for t in threads:
        for name, cls in CONTENDERS.items():
            fns[name, t] = cls(problem, t).prepare(mask)
        fns["floor", t] = traffic_floor(problem, t)
    samples: dict[tuple[str, int, str], list[float]] = defaultdict(list)
    for fn in fns.values():
        fn()  # warm-up
    items = list(fns.items())
    perf = time.perf_counter
    for k in range(repeats):
        for (name, t), fn in items if k % 2 == 0 else items[::-1]:
            t0 = perf()
            for _ in range(calls):
                fn()
            samples[name, t, "hot"].append((perf() - t0) / calls / n * 1e6)
            cold = 0.0
            for _ in range(calls):
                time.sleep(PAUSE_S)
                t0 = perf()
                fn()
                cold += perf() - t0
            samples[name, t, "cold"].append(cold / calls / n * 1e6)
    return samples


def main(argv: list[str] | None = None) -> int:
    """Print the table; with ``--readme``, write it into that README."""
    p = new_parser("bench.research.threads", __doc__)
    p.add_argument("--n", type=int, default=4096)
    p.add_argument("--threads", type=int, nargs="+", default=sorted({1, envinfo.usable_cores()}))
    p.add_argument("--repeats", type=int, default=15)
    p.add_argument("--calls", type=int, default=5, help="calls per sample (default 5)")
    p.add_argument("--readme", type=Path, default=None)
    args = p.parse_args(argv)
    reason = contenders.MjbatchUni.unavailable()
    if reason is not None:
        print(f"mjbatch-uni is needed: {reason}", file=sys.stderr)
        return 2
    samples = measure(args.n, args.threads, args.repeats, args.calls)
    lines = [
        f"quadruped tracking (260 columns), N={args.n}, every row; µs/row, median (min-max) "
        f"over {args.repeats} interleaved repeats of {args.calls} calls; x mjbatch-uni: "
        "per-repeat ratio to its call of the same T and kind",
        f"{'T':>2} {'call':<4} {'contender':<11} {'µs/row':>22} {'x mjbatch-uni':>17}",
    ]
    for t in args.threads:
        for kind in ("hot", "cold"):
            ref = samples["mjbatch-uni", t, kind]
            for name in (*CONTENDERS, "floor"):
                v = samples[name, t, kind]
                ratio = (
                    median_range([a / b for a, b in zip(v, ref, strict=True)], 3)
                    if v is not ref
                    else ""
                )
                lines.append(f"{t:>2} {kind:<4} {name:<11} {median_range(v):>22} {ratio:>17}")
    lo, hi = min(args.threads), max(args.threads)
    if hi > lo:
        for kind in ("hot", "cold"):
            med = {
                name: [statistics.median(samples[name, t, kind]) for t in (lo, hi)]
                for name in (*CONTENDERS, "floor")
            }
            parts = [f"{name} x{a / b:.2f}" for name, (a, b) in med.items()]
            lines.append(f"speed-up T={lo} -> T={hi}, {kind}: {', '.join(parts)}")
    if "fast-sse2" in CONTENDERS:
        parts = []
        for t in args.threads:
            for kind in ("hot", "cold"):
                pairs = zip(samples["fast", t, kind], samples["fast-sse2", t, kind], strict=True)
                parts.append(f"T={t} {kind} {median_range([a / b for a, b in pairs], 3)}")
        lines.append(f"fast (AVX2, rows in quads) / fast-sse2 (rows in pairs): {', '.join(parts)}")
    print_table(lines, args.readme, "threads", "python -m bench.research.threads")
    return 0


if __name__ == "__main__":
    sys.exit(main())
