"""Derived metrics, the stdout table, the PNG plot and the README section of
the microbenchmark."""

from __future__ import annotations

import math
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench.common.output import grouped_lines, measured_with

SCHEMA = "mjrefresh-bench/1"
BASELINE = "python_loop"

Key = tuple[str, str, int]  # model, workload, n


def derive(results: list[dict[str, Any]]) -> None:
    """Add per-row times, rates, speedups and parallel efficiency in place.

    * ``us_per_row``: median wall time per call / rows refreshed per call.
    * ``us_per_row_per_thread``: ``us_per_row`` x threads used (CPU cost per row).
    * ``speedup_vs_python``: the Python loop's median / this median, same model,
      workload and N.
    * ``speedup_vs_best_other``: the fastest *other* contender's median / this
      median, among contenders run with the same thread count plus the
      single-thread contenders (whose time does not depend on it).
    * ``parallel_efficiency``: (t(T0) * T0) / (t(T) * T) with T0 the smallest
      thread count measured for this contender; None for single-thread ones.
    """
    by_key: dict[Key, list[dict[str, Any]]] = defaultdict(list)
    for r in results:
        rows = r["rows_per_call"]
        r["us_per_row"] = r["median_s"] / rows * 1e6
        r["us_per_row_per_thread"] = r["us_per_row"] * r["threads_used"]
        r["rows_per_s"] = rows / r["median_s"]
        by_key[(r["model"], r["workload"], r["n"])].append(r)

    for group in by_key.values():
        base = next((r for r in group if r["contender"] == BASELINE), None)
        for r in group:
            r["speedup_vs_python"] = base["median_s"] / r["median_s"] if base else None
            others = [
                o
                for o in group
                if o["contender"] != r["contender"]
                and (o["threads"] == r["threads"] or not o["multithreaded"])
            ]
            best = min(others, key=lambda o: o["median_s"], default=None)
            r["best_other"] = best["contender"] if best else None
            r["speedup_vs_best_other"] = best["median_s"] / r["median_s"] if best else None
            if r["multithreaded"]:
                same = [o for o in group if o["contender"] == r["contender"]]
                first = min(same, key=lambda o: o["threads_used"])
                r["parallel_efficiency"] = (first["median_s"] * first["threads_used"]) / (
                    r["median_s"] * r["threads_used"]
                )
            else:
                r["parallel_efficiency"] = None


def _fmt(value: float | None, spec: str, none: str = "-") -> str:
    return none if value is None else format(value, spec)


def _rate(value: float) -> str:
    for div, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= div:
            return f"{value / div:.2f}{unit}"
    return f"{value:.0f}"


def _err(value: float) -> str:
    return "inf" if math.isinf(value) else f"{value:.1e}"


def _line(r: dict[str, Any]) -> str:
    spread = f"({r['min_s'] * 1e3:.3f}-{r['max_s'] * 1e3:.3f})"
    best = "-" if r["best_other"] is None else f"{r['speedup_vs_best_other']:.2f} {r['best_other']}"
    ok = "yes" if r["correct"] else "NO"
    return (
        f"{r['model']:<9} {r['workload']:<5} {r['n']:>5} {r['threads_used']:>2} {r['contender']:<15} "
        f"{r['median_s'] * 1e3:>8.3f} {spread:>17} {r['us_per_row']:>7.2f} {r['us_per_row_per_thread']:>10.2f} "
        f"{_rate(r['rows_per_s']):>7} {_fmt(r['speedup_vs_python'], '.2f'):>6} {best:>22} "
        f"{_fmt(r['parallel_efficiency'], '.2f'):>4} {_err(r['max_abs_error']):>8} {ok:>3}"
    )


def table(results: list[dict[str, Any]]) -> str:
    """A fixed-width table, one line per measurement, grouped by model/workload/N."""
    head = (
        f"{'model':<9} {'work':<5} {'N':>5} {'T':>2} {'contender':<15} {'ms/call':>8} {'(min-max)':>17} "
        f"{'us/row':>7} {'us/row/thr':>10} {'rows/s':>7} {'x py':>6} {'x best other':>22} {'eff':>4} "
        f"{'max|err|':>8} {'ok':>3}"
    )
    order = sorted(
        results, key=lambda r: (r["model"], r["workload"], r["n"], r["threads"], r["median_s"])
    )
    lines = [head, "-" * len(head)]
    lines += grouped_lines(order, lambda r: (r["model"], r["workload"], r["n"]), _line)
    floors = [r for r in order if "x_stage_floor" in r]
    if floors:
        lines += [
            "",
            "exact engine vs the MuJoCo stage functions it calls (one thread, same rows, "
            "timed inside the core; x = engine time x threads / stage time):",
        ]
        for r in floors:
            lines.append(
                f"  {r['model']:<9} {r['workload']:<5} N={r['n']:<5} T={r['threads_used']:<2} "
                f"stage functions {r['stage_floor_s'] * 1e6 / r['rows_per_call']:6.2f} us/row, "
                f"engine {r['us_per_row_per_thread']:6.2f} us/row/thread: x{r['x_stage_floor']:.2f}"
            )
    return "\n".join(lines)


def plot(results: list[dict[str, Any]], path: Path) -> bool:
    """Write a PNG: per model and workload, us/row vs threads and vs N.

    Returns False (with a message on stderr) if matplotlib is not installed.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker
    except ImportError:
        print(
            "--plot: matplotlib is not installed (pip install matplotlib); no plot written",
            file=sys.stderr,
        )
        return False

    panels = sorted({(r["model"], r["workload"]) for r in results})
    names = sorted({r["contender"] for r in results})
    colors = {name: f"C{i}" for i, name in enumerate(names)}
    fig, axes = plt.subplots(len(panels), 2, figsize=(11, 3.6 * max(1, len(panels))), squeeze=False)
    for (model, workload), (ax_t, ax_n) in zip(panels, axes, strict=True):
        rs = [r for r in results if r["model"] == model and r["workload"] == workload]
        n_max = max(r["n"] for r in rs)
        t_max = max(r["threads_used"] for r in rs)
        for name in names:
            mine = [r for r in rs if r["contender"] == name]
            if not mine:
                continue
            style = dict(color=colors[name], label=name, marker="o")
            at_n = sorted((r["threads_used"], r["us_per_row"]) for r in mine if r["n"] == n_max)
            if at_n and mine[0]["multithreaded"]:
                ax_t.plot(*zip(*at_n, strict=True), **style)
            elif at_n:  # single-thread: a level line across the thread axis
                ax_t.axhline(
                    at_n[0][1], color=colors[name], linestyle="--", label=f"{name} (1 thread)"
                )
            best_t = {}
            for r in mine:
                if r["threads_used"] <= t_max:
                    prev = best_t.get(r["n"])
                    if prev is None or r["threads_used"] > prev["threads_used"]:
                        best_t[r["n"]] = r
            by_n = sorted((n, r["us_per_row"]) for n, r in best_t.items())
            ax_n.plot(
                *zip(*by_n, strict=True),
                linestyle="-" if mine[0]["multithreaded"] else "--",
                **style,
            )
        ax_t.set(
            title=f"{model}, {workload}: N={n_max}",
            xlabel="threads",
            ylabel="µs per refreshed row (wall)",
            yscale="log",
        )
        ax_n.set(
            title=f"{model}, {workload}: most threads (≤{t_max})",
            xlabel="N",
            ylabel="µs per refreshed row (wall)",
            yscale="log",
        )
        ax_n.set_xscale("log", base=2)
        ax_t.set_xticks(sorted({r["threads_used"] for r in rs}))
        ax_n.set_xticks(sorted({r["n"] for r in rs}))
        ax_n.xaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
        for ax in (ax_t, ax_n):
            ax.grid(True, which="both", alpha=0.3)
            ax.yaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
            ax.yaxis.set_minor_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
        ax_t.legend(fontsize=7)
        ax_n.legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110, format="png")
    plt.close(fig)
    return True


def markdown_section(results: list[dict[str, Any]], env: dict[str, Any], command: str) -> str:
    """The text written between a README's result markers: environment and table."""
    return f"{measured_with(command, env)}\n\n```\n{table(results)}\n```\n"
