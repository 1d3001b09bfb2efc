"""Benchmark: the cost of per-environment model fields (domain randomisation).

On the quadruped tracking workload (all 13 moving bodies, the 260 tracking
columns, every row dirty), times each engine with no per-environment fields
and with three randomised fields (body_pos, body_quat, jnt_axis), interleaved
(A B C D A B C D ...), and prints the median with min-max and the ratio
"with fields / without" per engine and thread count.

  python bench/model_fields.py                    # N=4096, threads 1 and all
  python bench/model_fields.py --readme bench/README.md
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import envinfo  # noqa: E402
import numpy as np  # noqa: E402
import report  # noqa: E402
import timing  # noqa: E402
from workloads import load_models_module, random_states  # noqa: E402

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


def main(argv: list[str] | None = None) -> int:
    import mjrefresh

    cores = envinfo.usable_cores()
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=4096)
    p.add_argument("--threads", nargs="+", type=int, default=sorted({1, cores}))
    p.add_argument("--repeats", type=int, default=11)
    p.add_argument("--min-sample", type=float, default=0.02)
    p.add_argument("--readme", type=Path, default=None)
    args = p.parse_args(argv)

    models = load_models_module()
    model = models.quadruped()
    layout = models.tracking_layout(model)
    qpos, qvel = random_states(model, args.n, seed=0)
    fields = random_fields(model, args.n, seed=1)
    rows = np.arange(args.n)
    lines = [
        f"quadruped tracking, N={args.n}, every row dirty; fields: {', '.join(FIELDS)}",
        f"{'engine':<7} {'T':>2} {'fields':<7} {'us/row':>7} {'(min-max)':>15} {'x no fields':>11}",
    ]
    for threads in args.threads:
        fns, engines = {}, {}
        for engine in ("exact", "fast"):
            for with_fields in (False, True):
                try:
                    r = mjrefresh.Refresher(
                        model,
                        sensor_ranges=[layout.columns],
                        num_threads=threads,
                        engine=engine,
                        model_fields=FIELDS if with_fields else (),
                    )
                except ValueError as e:
                    print(f"skipped {engine} with fields={with_fields}: {e}", file=sys.stderr)
                    continue
                out = r.outputs(args.n)
                kw = {"model_fields": fields} if with_fields else {}
                key = (engine, with_fields)
                engines[key] = r
                fns[key] = lambda r=r, out=out, kw=kw: r.refresh(rows, qpos, qvel, out, **kw)
        calls = {k: timing.calibrate(fn, args.min_sample) for k, fn in fns.items()}
        samples = timing.interleaved(fns, calls, args.repeats, warmup=2)
        for (engine, with_fields), s in samples.items():
            st = timing.summary(s)
            base = samples.get((engine, False))
            ratio = st["median_s"] / timing.summary(base)["median_s"] if base else float("nan")
            lines.append(
                f"{engine:<7} {threads:>2} {'yes' if with_fields else 'no':<7} "
                f"{st['median_s'] * 1e6 / args.n:>7.3f} "
                f"({st['min_s'] * 1e6 / args.n:.3f}-{st['max_s'] * 1e6 / args.n:.3f}) "
                f"{ratio:>11.3f}"
            )
        for r in engines.values():
            r.close()
    text = "\n".join(lines)
    print(text)
    if args.readme is not None:
        env = envinfo.collect()
        head = (
            f"Measured with `python bench/model_fields.py` on {env['cpu_model']} "
            f"({env['usable_cpus']} usable CPUs), MuJoCo {env['mujoco']}."
        )
        report.update_readme(args.readme, "model-fields", f"{head}\n\n```\n{text}\n```\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
