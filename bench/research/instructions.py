"""Instructions per refreshed row, counted by callgrind inside the native
refresh (``mjrefresh::Refresher::run``: the worker pool and the engine, the
same function in every version of the core): a repeatable measure that does
not depend on how busy the machine is. (Counts of the whole process, Python
included, vary by thousands of instructions per row between identical runs:
the collector and the allocator do not repeat themselves.) Build the core
with ``-Ccmake.build-type=RelWithDebInfo``: Release builds are stripped.

For each embedded model's tracking refresh (fast and exact engines, one
thread, N rows, every row refreshed through ``Refresher.bind``), the script
runs itself under ``valgrind --tool=callgrind`` twice, with K and 4K
refreshes, and prints (Ir(4K) - Ir(K)) / (3K N): the instructions one more
refreshed row costs, start-up and warm-up cancelled. K is ``--calls`` at
``--n`` rows; a small-N line (N=8, K scaled up to the same rows) shows the
per-call overhead, which dominates there.

``--fields`` counts the quadruped's fast tracking refresh instead in the
configurations of ``python -m bench.research.model_fields`` (template,
perturbed, per-env, one-block): what taking body_pos, body_quat and jnt_axis
per row costs in instructions, where its time is too noisy to show a few
percent.

  python -m bench.research.instructions [--n 1024] [--calls 4] [--fields]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

CASES = [
    ("quadruped", "fast"),
    ("quadruped", "exact"),
    ("humanoid", "fast"),
]
FIELD_CONFIGS = ("template", "perturbed", "per-env", "one-block")


def run_calls(model_name: str, engine: str, n: int, calls: int) -> None:
    """The measured program: `calls` refreshes of every row of `n`. With
    `model_name` one of FIELD_CONFIGS, the quadruped in that configuration."""
    import numpy as np

    import mjrefresh
    from mjrefresh import models
    from mjrefresh.bench.states import random_states

    fields = {}
    if model_name in FIELD_CONFIGS:
        from bench.research.model_fields import field_configs

        model, fields = field_configs(n)[model_name]
    else:
        model = models.MODELS[model_name]()
    a, b = models.tracking_layout(model).columns
    qpos, qvel = random_states(model, n, seed=0)
    r = mjrefresh.Refresher(
        model, sensor_ranges=[(a, b)], num_threads=1, engine=engine, model_fields=tuple(fields)
    )
    bound = r.bind(qpos, qvel, r.outputs(n), model_fields=fields or None)
    rows = np.arange(n)
    for _ in range(calls):
        bound(rows)


def instructions(model_name: str, engine: str, n: int, calls: int, core: bool) -> int:
    """Instructions callgrind counts for one run of `run_calls`: inside
    Refresher::run only (`core`), or in the whole process."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        cmd = [
            "valgrind",
            "--tool=callgrind",
            # the function itself, not its lambda (whose name starts the same)
            *(["--toggle-collect=mjrefresh::Refresher::run(*MjDataMirror const?)"] if core else []),
            f"--callgrind-out-file={out}",
            sys.executable,
            "-m",
            "bench.research.instructions",
            "--run",
            model_name,
            engine,
            str(n),
            str(calls),
        ]
        env = dict(os.environ, PYTHONHASHSEED="0")
        subprocess.run(cmd, check=True, capture_output=True, env=env)
        summary = re.search(r"^summary:\s+(\d+)", out.read_text(), re.MULTILINE)
        assert summary, "no callgrind summary"
        return int(summary.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1024, help="rows per refresh")
    parser.add_argument("--calls", type=int, default=4, help="K: refreshes of the short run")
    parser.add_argument(
        "--fields", action="store_true", help="per-environment model fields (model_fields configs)"
    )
    parser.add_argument("--run", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run:
        name, engine, n, calls = args.run
        run_calls(name, engine, int(n), int(calls))
        return
    print("instructions per refreshed row (callgrind, 1 thread, K vs 4K refreshes)")
    print("  model     engine     N    K  Refresher::run")
    cases = [(c, "fast") for c in FIELD_CONFIGS] if args.fields else CASES
    for name, engine in cases:
        for n in (args.n, 8):
            k = max(args.calls, args.calls * args.n // n // 8)
            short = instructions(name, engine, n, k, True)
            long = instructions(name, engine, n, 4 * k, True)
            print(f"  {name:9s} {engine:5s} {n:5d} {k:4d} {(long - short) / (3 * k * n):15.0f}")


if __name__ == "__main__":
    main()
