"""Benchmark: the cost of per-environment model fields (domain randomisation).

On the quadruped tracking workload (all 13 moving bodies, the 260 tracking
columns, every row dirty), times each engine, interleaved, in four
configurations, and prints the median with min-max and the ratio to the
first:

* ``template``: no per-environment fields, the embedded model;
* ``perturbed``: no per-environment fields, a model whose body_pos,
  body_quat and jnt_axis hold one environment's randomised values (the same
  arithmetic as a randomised row: non-identity rotations are not free);
* ``per-env``: three per-environment fields (body_pos, body_quat, jnt_axis)
  given as ``(N, ...)`` arrays, a different value set per row;
* ``one-block``: the same per-environment refresh, with every row's values a
  view of row 0's block (numpy stride 0 along the rows): everything
  ``per-env`` does except bringing N rows of values in from memory.

``per-env / perturbed`` is the cost of taking the values per row, made of
``one-block / perturbed`` (reading them through the per-row path) and
``per-env / one-block`` (their memory traffic, ~1.1 KB a row here); the
tool prints both after each thread count. Its floor, timed in the same run:
``floor`` is the ``perturbed`` refresh followed by one pass reading the three
per-environment arrays (numpy sums, the rows split over the threads as in
``refresh_traffic``: the values must come from memory at least once; the
arithmetic of randomised values is the ``perturbed`` refresh's).
``per-env`` at or below ``floor`` reads the values at memory speed.

``perturbed / template`` is the arithmetic floor of the ratio itself: the
same engine on the same randomised values with nothing read per row (each
value a constant of the model, planned once). Randomised values need the
arithmetic the template's shortcuts skip (a zero offset, an identity
rotation, an axis-aligned hinge); per-env does that arithmetic and reads its
values per row besides, so ``per-env / template`` cannot be below it. The
tool prints it per round after each engine's lines.

``packed`` is ``per-env`` with each row's three value blocks side by side in
one (N, 137) array (the fields are strided views into it), where a backend's
expanded arrays lay them out per field: whether packing a row's values next to
each other changes their cost.

The ``memory`` rows are the floor of the ratio itself: only the memory traffic
of a refresh of every row (``bench.common.traffic.refresh_traffic``: each
row's qpos/qvel read, its 260 columns read and written in place), on the same
threads, without the values (``template``) and with each row's three value
blocks read as well (``per-env``). Where the template refresh runs at its
traffic floor (``python -m bench.research.threads``), ``per-env / template``
cannot be below ``memory per-env / memory template``: the line after each
thread count puts the two ratios side by side. With more than one thread the
numpy floor runs on Python threads and may be slower than the template
refresh itself; it bounds nothing then. Both ratios are also given per round
(``per round``: the two configurations timed next to each other in each
interleaved round, median and min-max over the rounds), which a slower phase
of a shared host does not skew the way it can skew a ratio of medians.

  python -m bench.research.model_fields                    # N=4096, threads 1 and all
  python -m bench.research.model_fields --readme bench/README.md
"""

from __future__ import annotations

import sys
from pathlib import Path

import mujoco
import numpy as np

from bench.common.cli import new_parser
from bench.common.output import median_range, print_table
from bench.common.traffic import refresh_traffic, rows_read, sensor_columns
from mjrefresh import models
from mjrefresh.bench import envinfo, timing
from mjrefresh.bench.states import random_states

FIELDS = ("body_pos", "body_quat", "jnt_axis")


def random_fields(model, n: int, seed: int) -> dict[str, np.ndarray]:
    """Template values with small random per-row changes (unit quaternions/axes)."""
    rng = np.random.default_rng(seed)
    out = {}
    for name in FIELDS:
        base = np.asarray(getattr(model, name))
        vals = base[None] + rng.normal(scale=0.02, size=(n, *base.shape))
        if name in ("body_quat", "jnt_axis"):
            vals /= np.linalg.norm(vals, axis=-1, keepdims=True)
        out[name] = vals
    return out


def packed_fields(fields: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The same values with each row's blocks side by side in one (N, W) array;
    each field a strided view into it (no copy)."""
    n = next(iter(fields.values())).shape[0]
    widths = [v[0].size for v in fields.values()]
    packed = np.empty((n, sum(widths)))
    out, start = {}, 0
    for (name, vals), w in zip(fields.items(), widths, strict=True):
        block = packed[:, start : start + w]
        block[...] = vals.reshape(n, w)
        out[name] = block.reshape(vals.shape)
        assert np.shares_memory(out[name], packed), "a view, not a copy"
        start += w
    return out


def field_configs(n: int) -> dict[str, tuple[mujoco.MjModel, dict[str, np.ndarray]]]:
    """The timed configurations of N rows: (model, per-environment fields, empty
    for none), in the order of the table (see the module docstring)."""
    model = models.quadruped()
    fields = random_fields(model, n, seed=1)
    perturbed = models.quadruped()
    for name, vals in fields.items():
        getattr(perturbed, name)[...] = vals[0]
    return {
        "template": (model, {}),
        "perturbed": (perturbed, {}),
        "per-env": (model, fields),
        "one-block": (model, {k: np.broadcast_to(v[:1], v.shape) for k, v in fields.items()}),
        "packed": (model, packed_fields(fields)),
    }


def paired(samples: dict, num: tuple[str, str], den: tuple[str, str]) -> str:
    """num / den per interleaved round (the two timed next to each other, so a
    slower phase of the host cancels), as median (min-max)."""
    return median_range([a / b for a, b in zip(samples[num], samples[den], strict=True)])


def main(argv: list[str] | None = None) -> int:
    """Print the model-fields table; with ``--readme``, write it into that README."""
    import mjrefresh

    cores = envinfo.usable_cores()
    p = new_parser("bench.research.model_fields", __doc__)
    p.add_argument("--n", type=int, default=4096)
    p.add_argument("--threads", nargs="+", type=int, default=sorted({1, cores}))
    p.add_argument("--repeats", type=int, default=11)
    p.add_argument("--min-sample", type=float, default=0.02)
    p.add_argument("--readme", type=Path, default=None)
    args = p.parse_args(argv)

    configs = field_configs(args.n)
    model, fields = configs["template"][0], configs["per-env"][1]
    layout = models.tracking_layout(model)
    qpos, qvel = random_states(model, args.n, seed=0)
    rows = np.arange(args.n)
    columns = sensor_columns(model, args.n, layout.columns)
    lines = [
        f"quadruped tracking, N={args.n}, every row dirty; fields: {', '.join(FIELDS)}",
        f"{'engine':<7} {'T':>2} {'config':<10} {'us/row':>7} {'(min-max)':>15} "
        f"{'x template':>10} {'x perturbed':>11}",
    ]
    for threads in args.threads:
        fns, engines = {}, {}
        read_fields = rows_read(list(fields.values()), threads)
        for engine in ("exact", "fast"):
            for config, (m, values) in configs.items():
                r = mjrefresh.Refresher(
                    m,
                    sensor_ranges=[layout.columns],
                    num_threads=threads,
                    engine=engine,
                    model_fields=FIELDS if values else (),
                )
                out = r.outputs(args.n)
                kw = {"model_fields": values} if values else {}
                engines[(engine, config)] = r
                fns[(engine, config)] = lambda r=r, out=out, kw=kw: r.refresh(
                    rows, qpos, qvel, out, **kw
                )
            perturbed_run = fns[(engine, "perturbed")]
            fns[(engine, "floor")] = lambda run=perturbed_run, read=read_fields: (run(), read())
        fns[("memory", "template")] = refresh_traffic(qpos, qvel, columns, threads)
        fns[("memory", "per-env")] = refresh_traffic(
            qpos, qvel, columns, threads, per_row=list(fields.values())
        )
        calls = {k: timing.calibrate(fn, args.min_sample) for k, fn in fns.items()}
        samples = timing.interleaved(fns, calls, args.repeats, warmup=2)
        med = {k: timing.summary(v)["median_s"] for k, v in samples.items()}
        for (engine, config), s in samples.items():
            st = timing.summary(s)
            perturbed_ratio = (
                f"{st['median_s'] / med[(engine, 'perturbed')]:>11.3f}"
                if (engine, "perturbed") in med
                else f"{'':>11}"
            )
            lines.append(
                f"{engine:<7} {threads:>2} {config:<10} {timing.per_row_text(st, args.n)} "
                f"{st['median_s'] / med[(engine, 'template')]:>10.3f} {perturbed_ratio}"
            )
        floor = med[("memory", "per-env")] / med[("memory", "template")]
        for engine in ("exact", "fast"):
            m = {c: med[(engine, c)] for c in ("perturbed", "one-block", "per-env", "packed")}
            lines.append(
                f"  {engine} T={threads}: per-env / perturbed {m['per-env'] / m['perturbed']:.3f}"
                f" = per-row path {m['one-block'] / m['perturbed']:.3f} (one-block / perturbed)"
                f" x values' traffic {m['per-env'] / m['one-block']:.3f} (per-env / one-block);"
                f" packed / per-env {m['packed'] / m['per-env']:.3f}"
            )
            ratio = med[(engine, "per-env")] / med[(engine, "template")]
            per_round = paired(samples, (engine, "per-env"), (engine, "template"))
            floor_round = paired(samples, ("memory", "per-env"), ("memory", "template"))
            lines.append(
                f"  {engine} T={threads}: per-env / template {ratio:.3f}, per round {per_round};"
                f" its memory floor {floor:.3f}, per round {floor_round}"
                f" (memory per-env / memory template); {ratio / floor:.3f}x that floor"
            )
            arith = med[(engine, "perturbed")] / med[(engine, "template")]
            arith_round = paired(samples, (engine, "perturbed"), (engine, "template"))
            lines.append(
                f"  {engine} T={threads}: arithmetic floor perturbed / template {arith:.3f},"
                f" per round {arith_round} (the randomised values' own arithmetic, nothing read"
                " per row: per-env / template cannot be below it)"
            )
        for r in engines.values():
            r.close()
    print_table(lines, args.readme, "model-fields", "python -m bench.research.model_fields")
    return 0


if __name__ == "__main__":
    sys.exit(main())
