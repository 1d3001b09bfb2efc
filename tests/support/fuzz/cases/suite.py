"""The suite: the script header and `Case`, each case's seed, the family
registry (`family`, `FAMILIES`, in the order of `ORDER`) and `generate`."""

from __future__ import annotations

import random
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from support.edge_models import version_at_least

TESTS_DIR = Path(__file__).resolve().parents[3]
DEFAULT_SEED = 20250611

HEADER = """\
# mjrefresh fuzz case {name} (seed {seed}); the contract: README "Guarantees".
# Runs on its own: python this_file.py (exit status 0: the contract held).
import sys
sys.path.insert(0, {tests!r})
import numpy as np
import mujoco
import mjrefresh
from support.fuzz import contract as c

"""


@dataclass(frozen=True)
class Case:
    family: str
    index: int
    seed: int
    body: str
    timeout_factor: float = 1.0

    @property
    def name(self) -> str:
        return f"{self.family}-{self.index:03d}"

    @property
    def source(self) -> str:
        head = HEADER.format(name=self.name, seed=self.seed, tests=str(TESTS_DIR))
        return head + self.body.strip() + "\n"


def case_seed(seed: int, family: str, index: int) -> int:
    return zlib.crc32(f"{seed}/{family}/{index}".encode()) & 0x7FFFFFFF


Gen = Callable[[random.Random], "tuple[str, float] | str"]
#: Every family, in the order the suite generates them (tests/test_fuzz.py
#: runs and lists them in this order), whichever module holds the generator.
ORDER = (
    "parity",
    "dtypes",
    "shapes",
    "strides",
    "alignment",
    "readonly",
    "aliasing",
    "rows",
    "dirty",
    "nonfinite",
    "construction",
    "lifecycle",
    "threads",
    "fork",
    "sigint",
    "callbacks",
    "outputs",
    "thread_limits",
    "multidim",
    "sleep",
    "options",
    "plugins",
    "model_inf",
    "model_fields",
    "bound",
    "cache",
    "exit",
)
FAMILIES: dict[str, tuple[float, Gen]] = {}
#: Families the installed MuJoCo cannot run, with the reason (the feature
#: they exercise came in a later release): `generate` gives them no cases and
#: tests/test_fuzz.py skips them with that reason.
UNAVAILABLE: dict[str, str] = {}


def family(weight: float, since: tuple[int, int, str] | None = None) -> Callable[[Gen], Gen]:
    """Register a generator; `weight` is its share of the case count;
    `since` = (major, minor, feature): the first MuJoCo release with the
    feature the family exercises."""

    def deco(fn: Gen) -> Gen:
        name = fn.__name__.removeprefix("gen_")
        if name not in ORDER:
            raise ValueError(f"the fuzz family {name!r} is not in ORDER")
        FAMILIES[name] = (weight, fn)
        if since is not None and not version_at_least(since[0], since[1]):
            UNAVAILABLE[name] = f"{since[2]} needs MuJoCo >= {since[0]}.{since[1]}"
        for k in sorted(FAMILIES, key=ORDER.index):  # ORDER, not the import order
            FAMILIES[k] = FAMILIES.pop(k)
        return fn

    return deco


def generate(seed: int, total: int, only: set[str] | None = None) -> dict[str, list[Case]]:
    """`total` cases (at least one per family), shared out by weight."""
    weight_sum = sum(w for w, _ in FAMILIES.values())
    out: dict[str, list[Case]] = {}
    for fam, (weight, gen) in FAMILIES.items():
        if only and fam not in only:
            continue
        if fam in UNAVAILABLE:
            out[fam] = []
            continue
        count = max(1, round(total * weight / weight_sum))
        cases = []
        for k in range(count):
            s = case_seed(seed, fam, k)
            made = (
                gen(random.Random(s), k) if gen.__code__.co_argcount > 1 else gen(random.Random(s))
            )
            body, factor = made if isinstance(made, tuple) else (made, 1.0)
            cases.append(Case(fam, k, seed, body, factor))
        out[fam] = cases
    return out
