"""Aggregation, stdout table, agreement lines and README section of the
collector benchmark."""

from __future__ import annotations

import statistics
from collections import defaultdict
from typing import Any

from mjrefresh.bench.output import grouped_lines, measured_with

SCHEMA = "mjrefresh-collector/1"
PHASES = ("physics", "update_state", "reset", "replay")

Cell = tuple[str, str, int]  # backend, task, n


def _stats(values: list[float]) -> dict[str, float] | None:
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def aggregate(
    processes: list[dict[str, Any]], variant_order: list[str], tol: float
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Per cell and variant: medians over processes and paired changes.

    Returns ``(results, checks)``: one result per (backend, task, n, variant)
    and one agreement check per (backend, task, n).

    Paired changes are computed within each process (the variants of one
    process ran on the same batch, seed and actions, one after the other),
    then summarised over processes:

    * ``vs_loop``: throughput / the ``loop`` variant's throughput - 1;
    * ``of_stale``: throughput / the ``stale`` variant's throughput;
    * ``update_removed``: the share of the loop variant's extra update-state
      cost (over stale) that this variant removes:
      ``1 - (upd - upd_stale) / (upd_loop - upd_stale)``;
    * ``in_situ_over_warm``: the update's refresh right after the physics step
      over the same refresh repeated at once (the rows still in cache).
    """
    by_cell: dict[Cell, list[dict[str, Any]]] = defaultdict(list)
    for p in processes:
        by_cell[(p["backend"], p["task"], p["n"])].append(p)
    results: list[dict[str, Any]] = []
    checks: list[dict[str, Any]] = []
    for (backend, task, n), procs in by_cell.items():
        names = [v for v in variant_order if any(v in p["variants"] for p in procs)]
        for name in names:
            runs = [p["variants"][name] for p in procs if name in p["variants"]]
            thr = [r["transitions_per_s"] for r in runs]
            paired: dict[str, list[float]] = defaultdict(list)
            for p in procs:
                vs = p["variants"]
                if name not in vs:
                    continue
                r = vs[name]
                warm = r["refresh_ms"]["warm"]
                if warm > 0:
                    paired["in_situ_over_warm"].append(r["refresh_ms"]["update"] / warm)
                if "loop" in vs:
                    paired["vs_loop"].append(
                        r["transitions_per_s"] / vs["loop"]["transitions_per_s"] - 1
                    )
                if "stale" in vs:
                    paired["of_stale"].append(
                        r["transitions_per_s"] / vs["stale"]["transitions_per_s"]
                    )
                if "loop" in vs and "stale" in vs:
                    base = vs["stale"]["phase_ms"]["update_state"]
                    extra = vs["loop"]["phase_ms"]["update_state"] - base
                    if extra > 0:
                        paired["update_removed"].append(
                            1 - (r["phase_ms"]["update_state"] - base) / extra
                        )
            phase = {
                k: statistics.median(r["phase_ms"][k] for r in runs)
                for k in (*PHASES, "other", "total")
            }
            refresh = {
                k: statistics.median(r["refresh_ms"][k] for r in runs)
                for k in ("update", "reset", "warm")
            }
            chk = [r["check"] for r in runs]
            results.append(
                {
                    "backend": backend,
                    "task": task,
                    "n": n,
                    "variant": name,
                    "correct_by_design": runs[0]["correct_by_design"],
                    "processes": len(runs),
                    "transitions_per_s_samples": thr,
                    "transitions_per_s": _stats(thr),
                    "vs_loop": _stats(paired["vs_loop"]),
                    "of_stale": _stats(paired["of_stale"]),
                    "update_removed": _stats(paired["update_removed"]),
                    "in_situ_over_warm": _stats(paired["in_situ_over_warm"]),
                    "phase_ms": phase,
                    "refresh_ms": refresh,
                    "reset_rows_per_window": _stats([r["reset_rows"] for r in runs]),
                    "steps": runs[0]["steps"],
                    "max_dev_vs_forward": max(c["max_dev"] for c in chk),
                    "max_dev_update": max(c["max_dev_update"] for c in chk),
                    "max_dev_reset": max(c["max_dev_reset"] for c in chk),
                    "term_mismatch": sum(c["term_mismatch"] for c in chk),
                    "checked_rows": sum(c["checked_rows"] for c in chk),
                    "checked_reset_rows": sum(c["checked_reset_rows"] for c in chk),
                    "max_dev_vs_peers": max(
                        (r["agreement"]["max_dev"] for r in runs if r["agreement"]), default=None
                    ),
                }
            )
        cell = [r for r in results if (r["backend"], r["task"], r["n"]) == (backend, task, n)]
        correct = [r for r in cell if r["correct_by_design"]]
        stale = next((r for r in cell if r["variant"] == "stale"), None)
        worst = max((r["max_dev_vs_forward"] for r in correct), default=0.0)
        peers = max(
            (r["max_dev_vs_peers"] for r in correct if r["max_dev_vs_peers"] is not None),
            default=0.0,
        )
        resets = {r["variant"]: r["reset_rows_per_window"]["median"] for r in correct}
        checks.append(
            {
                "backend": backend,
                "task": task,
                "n": n,
                "correct_variants": [r["variant"] for r in correct],
                "max_dev_vs_forward": worst,
                "max_dev_between_correct": peers,
                "term_mismatch": sum(r["term_mismatch"] for r in correct),
                "reset_rows_agree": len(set(resets.values())) <= 1,
                "agree": worst <= tol
                and peers <= tol
                and len(set(resets.values())) <= 1
                and all(r["term_mismatch"] == 0 for r in correct),
                "stale_dev_vs_forward": None if stale is None else stale["max_dev_vs_forward"],
                "stale_dev_update": None if stale is None else stale["max_dev_update"],
                "stale_term_mismatch": None if stale is None else stale["term_mismatch"],
                "stale_dev_vs_peers": None if stale is None else stale["max_dev_vs_peers"],
            }
        )
    return results, checks


def _rate(value: float) -> str:
    for div, unit in ((1e6, "M"), (1e3, "k")):
        if value >= div:
            return f"{value / div:.1f}{unit}"
    return f"{value:.0f}"


def _pct(s: dict[str, float] | None, signed: bool = True) -> str:
    if s is None:
        return "-"
    f = "+.0f" if signed else ".0f"
    return f"{s['median'] * 100:{f}}%"


def _err(x: float | None) -> str:
    return "-" if x is None else f"{x:.0e}"


def summary_text(s: dict[str, float] | None) -> str:
    """A ``{median, min, max}`` summary as ``median (min-max)``, 2 decimals; ``-`` for None."""
    return "-" if s is None else f"{s['median']:.2f} ({s['min']:.2f}-{s['max']:.2f})"


def _line(r: dict[str, Any]) -> str:
    t = r["transitions_per_s"]
    ph, rf = r["phase_ms"], r["refresh_ms"]
    spread = f"({_rate(t['min'])}-{_rate(t['max'])})"
    warm = f"{rf['warm']:>6.2f}" if rf["warm"] else f"{'-':>6}"
    return (
        f"{r['backend']:<12} {r['task']:<14} {r['n']:>5} {r['variant']:<15} "
        f"{_rate(t['median']):>7} {spread:>13} {_pct(r['vs_loop']):>7} "
        f"{_pct(r['of_stale'], False):>8} {_pct(r['update_removed'], False):>7} "
        f"{ph['physics']:>7.2f} {ph['update_state']:>7.2f} "
        f"{rf['update']:>7.2f} {warm} {summary_text(r['in_situ_over_warm']):>16} "
        f"{ph['reset']:>6.2f} {ph['replay']:>6.2f} {ph['total']:>7.2f} "
        f"{r['reset_rows_per_window']['median']:>6.0f} {_err(r['max_dev_vs_forward']):>6}"
    )


def table(results: list[dict[str, Any]]) -> str:
    """One line per (backend, task, N, variant), grouped by cell."""
    head = (
        f"{'backend':<12} {'task':<14} {'N':>5} {'variant':<15} {'trans/s':>7} {'(min-max)':>13} "
        f"{'vs loop':>7} {'of stale':>8} {'upd cut':>7} {'physics':>7} {'update':>7} {'(refr)':>7} "
        f"{'warm':>6} {'situ/warm':>16} {'reset':>6} {'replay':>6} {'total':>7} "
        f"{'resets':>6} {'dev':>6}"
    )
    lines = [
        "ms per vector step: physics, update (of which refresh), reset, replay, total; "
        "warm: the update's refresh repeated at once (not in total); situ/warm: refresh "
        "after the physics over warm, median (min-max) over processes; "
        "resets: reset rows per window; dev: max |value - mj_forward's| on sampled rows",
        head,
        "-" * len(head),
    ]
    lines += grouped_lines(results, lambda r: (r["backend"], r["task"], r["n"]), _line)
    return "\n".join(lines)


def agreement_lines(checks: list[dict[str, Any]], tol: float) -> list[str]:
    """One AGREE/DISAGREE line per cell, and a STALE line where the stale variant ran."""
    out = []
    for c in checks:
        where = f"{c['backend']} {c['task']} N={c['n']}"
        verdict = "AGREE" if c["agree"] else "DISAGREE"
        line = (
            f"{verdict}: {where}: {', '.join(c['correct_variants']) or 'no correct variant'}: "
            f"max dev vs mj_forward {c['max_dev_vs_forward']:.1e}, between them "
            f"{c['max_dev_between_correct']:.1e} (tol {tol:g}), termination flips "
            f"{c['term_mismatch']}, reset rows {'equal' if c['reset_rows_agree'] else 'DIFFER'}"
        )
        out.append(line)
        if c["stale_dev_vs_forward"] is not None:
            peers = c["stale_dev_vs_peers"]
            out.append(
                f"STALE: {where}: stale deviates from mj_forward by "
                f"{c['stale_dev_vs_forward']:.3g} "
                f"(update-state values {c['stale_dev_update']:.3g}), termination flips "
                f"{c['stale_term_mismatch']}"
                + ("" if peers is None else f", from the correct variants' run by {peers:.3g}")
            )
    return out


def markdown_section(
    results: list[dict[str, Any]],
    checks: list[dict[str, Any]],
    env: dict[str, Any],
    command: str,
    tol: float,
) -> str:
    """The text written between a README's collector markers: environment,
    load average, table and agreement lines."""
    body = table(results) + "\n\n" + "\n".join(agreement_lines(checks, tol))
    return f"{measured_at(command, env)}\n\n```\n{body}\n```\n"


def measured_at(command: str, env: dict[str, Any]) -> str:
    """The sentence heading a collector section: command, machine, libraries
    and the load average at the start and the end of the run."""
    head = measured_with(command, env)
    load = [env.get("loadavg_at_start"), env.get("loadavg_at_end")]
    if all(load):
        head += (
            f" 1-minute load average {load[0][0]:.1f} at the start, {load[1][0]:.1f} at the end."
        )
    return head
