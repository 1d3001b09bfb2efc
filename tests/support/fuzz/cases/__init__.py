"""The case generator: a seed and a case count give the same cases, each a
self-contained Python script that asserts the contract (support.fuzz.contract).

Each family (`FAMILIES`) draws its cases from its own `random.Random`,
seeded from the suite's seed, the family's name and the case index, so a
family's cases do not change when another family or the count changes. The
drawn values are rendered into the script as literals: the script, not the
generator, is the reproducer.

The package: `suite` (`Case`, the family registry and `generate`), `draws`
(what the generators share) and the families' generators by subject:
`arrays`, `aliasing`, `rows`, `values`, `construction`, `concurrency`,
`processes`, `mujoco_features` and `bindings`.
"""

from __future__ import annotations

from support.fuzz.cases import (  # noqa: F401 - importing a module registers its families
    aliasing,
    arrays,
    bindings,
    concurrency,
    construction,
    mujoco_features,
    processes,
    rows,
    values,
)
from support.fuzz.cases.suite import (
    DEFAULT_SEED,
    FAMILIES,
    HEADER,
    ORDER,
    TESTS_DIR,
    UNAVAILABLE,
    Case,
    case_seed,
    family,
    generate,
)

__all__ = [
    "DEFAULT_SEED",
    "FAMILIES",
    "HEADER",
    "ORDER",
    "TESTS_DIR",
    "UNAVAILABLE",
    "Case",
    "case_seed",
    "family",
    "generate",
]
