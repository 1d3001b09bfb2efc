"""The structure docs/architecture.md promises, checked: one contract table
per kind (outputs spelled in few places), every output reachable through
every binding, one-way imports, engines plugged into core only through
row_engine.h, the native refresher touched only by refresher.py, small
files."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import mujoco
import numpy as np
import pytest
from support.backends import BACKENDS
from support.bound import open_backend
from support.models import legged_model
from support.sensors import tracked_sensors

import mjrefresh
from mjrefresh._native import core as _core
from mjrefresh.outputs import OUTPUT_NAMES

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src" / "mjrefresh"
CPP = ROOT / "cpp"


def _sources() -> list[Path]:
    return sorted([*SRC.rglob("*.py"), *CPP.rglob("*.h"), *CPP.rglob("*.cc")])


# body_pos, body_quat, site_pos and sensordata are also mjModel/mjData
# fields, spelled wherever MuJoCo's fields are used: the count is for the
# names that are outputs only.
OUTPUT_ONLY = [
    n for n in OUTPUT_NAMES if n not in ("body_pos", "body_quat", "site_pos", "sensordata")
]


@pytest.mark.parametrize("name", OUTPUT_ONLY)
def test_no_output_name_is_spelled_in_more_than_four_source_files(name):
    word = re.compile(rf"\b{name}\b")
    files = [p.relative_to(ROOT) for p in _sources() if word.search(p.read_text())]
    assert 1 <= len(files) <= 4, files


def _module_imports(path: Path) -> set[str]:
    """Modules of src/mjrefresh that `path` imports when it runs (not under
    `if TYPE_CHECKING:`), as dotted names relative to the package."""
    tree = ast.parse(path.read_text())
    package = path.relative_to(SRC.parent).with_suffix("").parts
    if package[-1] == "__init__":
        package = package[:-1]
    else:
        package = package[:-1]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                for stmt in child.orelse:
                    visit(stmt)
                continue
            if isinstance(child, ast.ImportFrom):
                if child.level:
                    base = ".".join(package[: len(package) - child.level + 1])
                    mod = f"{base}.{child.module}" if child.module else base
                else:
                    mod = child.module or ""
                if mod.startswith("mjrefresh"):
                    found.add(mod)
                    for alias in child.names:  # `from . import models`
                        found.add(f"{mod}.{alias.name}")
            elif isinstance(child, ast.Import):
                found.update(a.name for a in child.names if a.name.startswith("mjrefresh"))
            visit(child)

    visit(tree)
    return found


def test_no_runtime_import_cycle_in_the_package():
    modules = {}
    for path in SRC.rglob("*.py"):
        parts = path.relative_to(SRC.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        modules[name] = path
    graph = {
        name: {m for m in _module_imports(path) if m in modules and m != name}
        for name, path in modules.items()
    }
    # A package's __init__ re-exports its modules: an edge into a package
    # is an edge to the modules its __init__ imports, not a cycle of its own.
    state: dict[str, int] = {}

    def walk(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if nxt.startswith(node + ".") or node.startswith(nxt + "."):
                continue  # a package and its own modules
            if state.get(nxt) == 1:
                cycle = stack[stack.index(nxt) :] + [nxt] if nxt in stack else [node, nxt]
                raise AssertionError(f"import cycle: {' -> '.join(cycle)}")
            if nxt not in state:
                walk(nxt, [*stack, nxt])
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            walk(name, [name])


def test_core_includes_no_engine():
    for path in (CPP / "core").iterdir():
        includes = re.findall(r'#include "([^"]+)"', path.read_text())
        bad = [i for i in includes if i.startswith(("exact/", "fast/", "bindings/"))]
        assert not bad, (path.name, bad)


def test_only_the_refresher_touches_the_native_refresher():
    # _native.py loads the module; refresher.py owns the native Refresher.
    for path in SRC.rglob("*.py"):
        if path.name in ("refresher.py", "_native.py"):
            continue
        text = path.read_text().replace("mjrefresh._core", "")  # the module's name
        assert "._core" not in text, path.relative_to(ROOT)


def test_no_source_file_is_over_500_lines():
    long = {
        str(p.relative_to(ROOT)): n
        for p in [
            *_sources(),
            *ROOT.joinpath("tests").rglob("*.py"),
            *ROOT.joinpath("bench").rglob("*.py"),
        ]
        if (n := len(p.read_text().splitlines())) > 500
    }
    assert not long, long


# ----------------------------------------------------- every output, every binding
N = 6


def _full_refresher(m: mujoco.MjModel) -> mjrefresh.Refresher:
    """A selection that writes every output of the table."""
    return mjrefresh.Refresher(
        m,
        bodies=["base", "thigh"],
        relative_to="base",
        sites=["imu", "foot"],
        sensors=tracked_sensors(m)[:3],
        num_threads=2,
    )


def test_the_table_lists_exactly_what_a_full_selection_writes():
    m = legged_model()
    r = _full_refresher(m)
    assert tuple(r.output_shapes(N)) == OUTPUT_NAMES == tuple(o[0] for o in _core.OUTPUTS)


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_output_reaches_every_binding(backend):
    # Each binding writes every output of the table, with the values the
    # plain-array binding writes (which the parity tests check against
    # mj_forward output by output).
    m = legged_model()
    r = _full_refresher(m)
    be = open_backend(backend, m, r, N)
    be.step()
    be.cache.mark_stepped()
    got = be.cache.outputs()
    st = be.states()
    want = r.outputs(N)
    inputs = {k: st[k] for k in ("mocap_pos", "mocap_quat", "time") if st.get(k) is not None}
    r.refresh(np.arange(N), st["qpos"], st["qvel"], want, **inputs)
    cols = np.concatenate([np.arange(a, b) for a, b in r.plan.column_ranges])
    for name in OUTPUT_NAMES:
        a, b = getattr(got, name), getattr(want, name)
        assert a is not None and b is not None, name
        a, b = np.asarray(a), np.asarray(b)
        if name == "sensordata":
            a, b = a[:, cols], b[:, cols]
        assert np.isfinite(a).all(), name
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12, err_msg=name)
    r.close()
