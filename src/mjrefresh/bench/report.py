"""Derived metrics, the stdout table with its legend, the headline, the
busy-machine warning and the README section of the microbenchmark."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from mjrefresh.bench.output import grouped_lines

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


#: Samples of one measurement spreading more than this (max / min) mark a busy machine.
SPREAD_LIMIT = 1.5

CONTENDER_LEGEND = {
    "python_loop": "per-env Python loop over MuJoCo's stage functions (the baseline)",
    "mjbatch_uni": "mjbatch-uni Batch.refresh_sensor_ranges",
    "mujoco_batch": "mujoco.batch Batch.forward to the velocity stage (MuJoCo >= 4)",
    "mujoco_uni": "mujoco-uni-runtime BatchEnvPool.forward: a full mj_forward per state vector",
    "mjrefresh_exact": "mjrefresh engine running MuJoCo's own stage functions",
    "mjrefresh_fast": "mjrefresh engine with fused kernels over the needed bodies only",
    "stage_loop_cpp": "internal: one C++ thread looping over the stage functions",
}


def _fmt(value: float | None, spec: str, none: str = "-") -> str:
    return none if value is None else format(value, spec)


def _rate(value: float) -> str:
    for div, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= div:
            return f"{value / div:.2f}{unit}"
    return f"{value:.0f}"


def _err(value: float) -> str:
    return "inf" if math.isinf(value) else f"{value:.1e}"


def _us(r: dict[str, Any], key: str) -> float:
    return r[key] * 1e6 / r["rows_per_call"]


def _best(r: dict[str, Any]) -> str:
    if r["best_other"] is None:
        return "-"
    return f"{r['speedup_vs_best_other']:.2f} {r['best_other']}"


# (header, right-aligned, cell, legend, verbose only)
_Column = tuple[str, bool, Callable[[dict[str, Any]], str], str, bool]
COLUMNS: list[_Column] = [
    ("model", False, lambda r: r["model"], "the model refreshed", False),
    (
        "work",
        False,
        lambda r: r["workload"],
        "step: every row refreshed (after a vector step); reset: 3% of rows (partial reset)",
        False,
    ),
    ("N", True, lambda r: str(r["n"]), "simulations (rows of qpos/qvel)", False),
    ("T", True, lambda r: str(r["threads_used"]), "threads used", False),
    (
        "contender",
        False,
        lambda r: r["contender"],
        "how the rows are refreshed (list below)",
        False,
    ),
    ("ms/call", True, lambda r: f"{r['median_s'] * 1e3:.3f}", "median wall time per call", True),
    (
        "µs/row",
        True,
        lambda r: f"{_us(r, 'median_s'):.2f}",
        "median wall time per refreshed row",
        False,
    ),
    (
        "(min-max)",
        True,
        lambda r: f"({_us(r, 'min_s'):.2f}-{_us(r, 'max_s'):.2f})",
        "fastest and slowest sample, µs/row",
        False,
    ),
    (
        "µs/row/thr",
        True,
        lambda r: f"{r['us_per_row_per_thread']:.2f}",
        "µs/row x threads: CPU time per row",
        True,
    ),
    ("rows/s", True, lambda r: _rate(r["rows_per_s"]), "refreshed rows per second", True),
    (
        "x py",
        True,
        lambda r: _fmt(r["speedup_vs_python"], ".1f"),
        "speedup over python_loop (same model, work, N)",
        False,
    ),
    (
        "x best other",
        True,
        _best,
        "speedup over the fastest other contender at the same T (or single-threaded)",
        True,
    ),
    (
        "eff",
        True,
        lambda r: _fmt(r["parallel_efficiency"], ".2f"),
        "parallel efficiency t(1) / (T t(T))",
        True,
    ),
    (
        "max|err|",
        True,
        lambda r: _err(r["max_abs_error"]),
        "largest |value - mj_forward's value| on the sampled rows",
        False,
    ),
    (
        "ok",
        True,
        lambda r: "yes" if r["correct"] else "NO",
        "yes: max|err| within the tolerance and nothing outside the selection written",
        False,
    ),
]


def table(results: list[dict[str, Any]], verbose: bool = True) -> str:
    """An aligned table, one line per measurement, grouped by model/workload/N,
    with a legend line per column and the exact engine's overhead over the
    stage functions it runs. Without ``verbose``: fewer columns, and the
    overhead only at the smallest thread count."""
    cols = [c for c in COLUMNS if verbose or not c[4]]
    order = sorted(
        results, key=lambda r: (r["model"], r["workload"], r["n"], r["threads"], r["median_s"])
    )
    cells = [[c[2](r) for c in cols] for r in order]
    width = [max([len(c[0])] + [len(row[i]) for row in cells]) for i, c in enumerate(cols)]

    def fmt(values: list[str]) -> str:
        return " ".join(
            v.rjust(w) if c[1] else v.ljust(w) for v, w, c in zip(values, width, cols, strict=True)
        ).rstrip()

    head = fmt([c[0] for c in cols])
    by_row = {id(r): fmt(row) for r, row in zip(order, cells, strict=True)}
    lines = [head, "-" * len(head)]
    lines += grouped_lines(
        order, lambda r: (r["model"], r["workload"], r["n"]), lambda r: by_row[id(r)]
    )
    lines += ["", *legend(cols, sorted({r["contender"] for r in results}))]
    return "\n".join(lines + floor_lines(order, verbose) + memory_floor_lines(order))


def legend(cols: list[_Column], contenders: list[str]) -> list[str]:
    """One line per column, then one per contender shown."""
    w = max(len(c[0]) for c in cols)
    lines = [f"{c[0]:<{w}}  {c[3]}" for c in cols]
    wc = max((len(n) for n in contenders), default=0)
    lines += [f"  {n:<{wc}}  {CONTENDER_LEGEND.get(n, '')}" for n in contenders]
    return lines


def memory_floor_lines(order: list[dict[str, Any]]) -> list[str]:
    """The fast engine's time (one thread) against the memory-traffic floor."""
    fast = [
        r
        for r in order
        if r["contender"] == "mjrefresh_fast" and r["threads_used"] == 1 and "memory_floor_s" in r
    ]
    if not fast:
        return []
    lines = [
        "",
        "fast engine at one thread, every row refreshed, against the memory floor (each row's",
        "qpos/qvel read and refreshed columns written by numpy copies, timed interleaved):",
    ]
    for r in fast:
        floor = r["memory_floor_s"] * 1e6 / r["rows_per_call"]
        lines.append(
            f"  {r['model']} {r['workload']} N={r['n']}: memory floor {floor:.2f} µs/row, "
            f"fast engine {r['us_per_row']:.2f} µs/row: x{r['us_per_row'] / floor:.1f}"
        )
    return lines


def floor_lines(order: list[dict[str, Any]], verbose: bool) -> list[str]:
    """The exact engine's time against the MuJoCo stage functions it runs."""
    floors = [r for r in order if "x_stage_floor" in r]
    if not verbose:
        t_min = min((r["threads_used"] for r in floors), default=1)
        floors = [r for r in floors if r["threads_used"] == t_min]
    if not floors:
        return []
    lines = [
        "",
        "exact engine overhead over the MuJoCo stage functions it runs (those timed alone, same",
        "rows, one thread; the remainder is copying rows in and out, plus a fixed cost per call):",
    ]
    for r in floors:
        lines.append(
            f"  {r['model']} {r['workload']} N={r['n']} T={r['threads_used']}: stage functions "
            f"{r['stage_floor_s'] * 1e6 / r['rows_per_call']:.2f} µs/row, exact engine "
            f"{r['us_per_row_per_thread']:.2f} µs/row per thread: "
            f"overhead x{r['x_stage_floor']:.2f}"
        )
    return lines


def _speedup(x: float) -> str:
    return f"{x:.0f}x" if x >= 10 else f"{x:.1f}x"


def headline(
    results: list[dict[str, Any]], failed: list[dict[str, Any]] | None = None
) -> list[str]:
    """One summary line per model: the engines' µs/row at the step workload
    and largest N, their speedup over the Python loop, and the verdict
    (`failed`: the records of contenders that raised, which it names)."""
    lines = []
    failed = failed or []
    for model in sorted({r["model"] for r in results} | {f["model"] for f in failed}):
        broken = sorted({f["contender"] for f in failed if f["model"] == model})
        if not any(r["model"] == model for r in results):
            lines.append(f"{model}: FAILED: {', '.join(broken)} (nothing was measured)")
            continue
        rs = [r for r in results if r["model"] == model]
        work = "step" if any(r["workload"] == "step" for r in rs) else rs[0]["workload"]
        n = max(r["n"] for r in rs if r["workload"] == work)
        group = [r for r in rs if r["workload"] == work and r["n"] == n]
        parts: list[str] = []
        for name, label in (("mjrefresh_fast", "fast engine"), ("mjrefresh_exact", "exact engine")):
            mine = sorted((r for r in group if r["contender"] == name), key=lambda r: r["threads"])
            if not mine:
                continue
            one = mine[0]
            text = f"{label} {one['us_per_row']:.2f} µs/row at {one['threads_used']} thread"
            text += "s" if one["threads_used"] > 1 else ""
            if one["speedup_vs_python"]:
                vs = "" if parts else " the per-env Python loop"
                text += f" ({_speedup(one['speedup_vs_python'])}{vs})"
            if len(mine) > 1:
                best = min(mine[1:], key=lambda r: r["us_per_row"])
                text += f", {best['us_per_row']:.2f} at {best['threads_used']} threads"
            parts.append(text)
        if not parts:
            best = min(group, key=lambda r: r["us_per_row"])
            parts.append(f"fastest {best['contender']} {best['us_per_row']:.2f} µs/row")
        wrong = sorted({r["contender"] for r in rs if not r["correct"]})
        parts.append(
            "all outputs match mj_forward"
            if not wrong
            else f"WRONG (differ from mj_forward): {', '.join(wrong)}"
        )
        if broken:
            parts.append(f"FAILED: {', '.join(broken)}")
        lines.append(f"{model}, {work}, N={n}: " + "; ".join(parts))
    return lines


def busy_warning(results: list[dict[str, Any]], env: dict[str, Any]) -> str | None:
    """A warning when the timings are likely noisy: a load average above the
    usable CPUs, or a measurement whose samples spread over SPREAD_LIMIT."""
    cores = env["usable_cpus"]
    loads = [x[0] for x in (env.get("loadavg_at_start"), env.get("loadavg_at_end")) if x]
    reasons = []
    if loads and max(loads) > cores:
        reasons.append(f"load average {max(loads):.1f} above the {cores} usable CPUs")
    timed = [r for r in results if r["min_s"] > 0]
    worst = max(timed, key=lambda r: r["max_s"] / r["min_s"], default=None)
    if worst is not None and worst["max_s"] / worst["min_s"] > SPREAD_LIMIT:
        reasons.append(
            f"samples spread up to {worst['max_s'] / worst['min_s']:.1f}x max/min "
            f"({worst['contender']}, {worst['model']} {worst['workload']} N={worst['n']})"
        )
    if not reasons:
        return None
    return (
        "warning: the machine looks busy (" + "; ".join(reasons) + "): the timings are noisy; "
        "compare contenders within this run, or rerun on an idle machine"
    )
