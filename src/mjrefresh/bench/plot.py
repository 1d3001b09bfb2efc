"""The PNG of a microbenchmark run: per model and workload, time per row
against threads, against N (when several were measured) and each
contender's best time as bars. Needs matplotlib (optional)."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

from mjrefresh.bench.contenders import ALL, BY_NAME

Result = dict[str, Any]


def _at_threads(
    ax: Any, rs: list[Result], names: list[str], colors: dict[str, str], title: str
) -> None:
    """µs/row against threads at the largest N (single-thread contenders as level lines)."""
    n_max = max(r["n"] for r in rs)
    for name in names:
        mine = sorted(
            (r["threads_used"], r["us_per_row"])
            for r in rs
            if r["contender"] == name and r["n"] == n_max
        )
        multi = any(r["multithreaded"] for r in rs if r["contender"] == name)
        if mine and multi:
            ax.plot(*zip(*mine, strict=True), color=colors[name], marker="o", label=name)
        elif mine:
            ax.axhline(mine[0][1], color=colors[name], linestyle="--", label=name)
    ax.set(title=f"{title}N={n_max}, vs threads", xlabel="threads")
    ax.set_xticks(sorted({r["threads_used"] for r in rs}))


def _at_n(ax: Any, rs: list[Result], names: list[str], colors: dict[str, str], title: str) -> None:
    """µs/row against N, each contender at its largest thread count."""
    for name in names:
        best: dict[int, Result] = {}
        for r in rs:
            if r["contender"] == name:
                prev = best.get(r["n"])
                if prev is None or r["threads_used"] > prev["threads_used"]:
                    best[r["n"]] = r
        if best:
            pts = sorted((n, r["us_per_row"]) for n, r in best.items())
            style = "-" if any(r["multithreaded"] for r in best.values()) else "--"
            ax.plot(*zip(*pts, strict=True), color=colors[name], marker="o", linestyle=style)
    ax.set(title=f"{title}vs N (most threads)", xlabel="N (simulations)")
    ax.set_xscale("log", base=2)
    ax.set_xticks(sorted({r["n"] for r in rs}))
    ax.xaxis.set_major_formatter("{x:.0f}")


def _bars(ax: Any, rs: list[Result], names: list[str], colors: dict[str, str], title: str) -> None:
    """Each contender's best µs/row at the largest N, labelled with its thread count."""
    n_max = max(r["n"] for r in rs)
    best = []
    for name in names:
        mine = [r for r in rs if r["contender"] == name and r["n"] == n_max]
        if mine:
            best.append(min(mine, key=lambda r: r["us_per_row"]))
    best.sort(key=lambda r: -r["us_per_row"])
    y = range(len(best))
    ax.barh(y, [r["us_per_row"] for r in best], color=[colors[r["contender"]] for r in best])
    ax.set_yticks(list(y), [r["contender"] for r in best], fontsize=8)
    for i, r in enumerate(best):
        label = f" {r['us_per_row']:.2f} (T={r['threads_used']})" + (
            "" if r["correct"] else " WRONG"
        )
        ax.text(r["us_per_row"], i, label, va="center", fontsize=8)
    _style_log(ax, "x")
    lo = min(r["us_per_row"] for r in best)
    hi = max(r["us_per_row"] for r in best)
    ax.set_xlim(lo / 2, hi * 6)  # room for the labels
    ax.set(title=f"{title}N={n_max}: each contender's best", xlabel="µs per refreshed row")


def _minor_label(value: float, _pos: object = None) -> str:
    """Label the 2 and 5 minor ticks of a log axis (``0.2``, ``5``, ``20``), not the others."""
    lead = round(value / 10 ** math.floor(math.log10(value))) if value > 0 else 0
    return f"{value:g}" if lead in (2, 5) else ""


def _style_log(axis: Any, which: str) -> None:
    """Plain-number labels (``0.5``, ``1``, ``20``) on a log ``which`` ("x"/"y") axis."""
    import matplotlib.ticker as ticker

    axis.set_xscale("log") if which == "x" else axis.set_yscale("log")
    ax = axis.xaxis if which == "x" else axis.yaxis
    ax.set_major_formatter(ticker.FuncFormatter(lambda v, _p: f"{v:g}"))
    ax.set_minor_formatter(ticker.FuncFormatter(_minor_label))
    axis.tick_params(axis=which, which="both", labelsize=8)
    axis.grid(True, axis=which, which="both", alpha=0.3)


def plot(results: list[Result], path: Path, env: dict[str, Any]) -> bool:
    """Write a PNG of ``results``, titled with the CPU, its usable cores and
    the MuJoCo release. Returns False (with a message on stderr) if
    matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(
            "--plot: matplotlib is not installed (pip install matplotlib); no plot written",
            file=sys.stderr,
        )
        return False
    panels = sorted({(r["model"], r["workload"]) for r in results})
    names = sorted({r["contender"] for r in results})
    # one color per contender in every environment's plot, so that PNGs compare
    order = [c.name for c in ALL] + [n for n in names if n not in BY_NAME]
    colors = {name: f"C{i % 10}" for i, name in enumerate(order)}
    several_n = len({r["n"] for r in results}) > 1
    ncols = 3 if several_n else 2
    fig, axes = plt.subplots(
        len(panels), ncols, figsize=(5.2 * ncols, 3.4 * len(panels) + 0.8), squeeze=False
    )
    for (model, workload), row in zip(panels, axes, strict=True):
        rs = [r for r in results if r["model"] == model and r["workload"] == workload]
        title = f"{model}, {workload}: "
        _at_threads(row[0], rs, names, colors, title)
        if several_n:
            _at_n(row[1], rs, names, colors, title)
        _bars(row[-1], rs, names, colors, title)
        for ax in row[:-1]:
            _style_log(ax, "y")
            ax.set_ylabel("µs per refreshed row")
    by_label: dict[str, Any] = {}
    for row in axes:
        for h, label in zip(*row[0].get_legend_handles_labels(), strict=True):
            by_label.setdefault(label, h)
    labels = sorted(by_label)
    handles = [by_label[label] for label in labels]
    fig.legend(
        handles,
        labels,
        loc="center left",
        bbox_to_anchor=(1.0, 0.5),
        fontsize=9,
        title="contender (dashed: one thread)",
    )
    fig.suptitle(
        f"mjrefresh bench on {env['cpu_model']}, {env['usable_cpus']} usable cores, "
        f"MuJoCo {env['mujoco']}",
        fontsize=11,
    )
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110, format="png", bbox_inches="tight")
    plt.close(fig)
    return True
