"""One refresh of every row of given states, for the parity tests."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

import mjrefresh


def refresh_all(
    model,
    states: Mapping[str, np.ndarray],
    engine: str,
    *,
    bodies: Sequence = (),
    rel=None,
    sites: Sequence = (),
    sensors: Sequence = (),
    threads: int = 1,
    dtype: type = np.float64,
    model_fields: Mapping[str, np.ndarray] | None = None,
) -> tuple[mjrefresh.RefreshPlan, mjrefresh.RefreshOutputs]:
    """(plan, outputs) of a new Refresher with this selection, engine and
    thread count after refreshing every row of `states` (qpos, qvel and any
    other input, each (N, ...)), with `model_fields` per row if given; the
    Refresher is closed."""
    r = mjrefresh.Refresher(
        model,
        bodies=bodies,
        relative_to=rel,
        sites=sites,
        sensors=sensors,
        num_threads=threads,
        engine=engine,
        model_fields=tuple(model_fields or ()),
    )
    n = states["qpos"].shape[0]
    out = r.outputs(n, dtype=dtype)
    r.refresh(np.arange(n), **states, out=out, model_fields=model_fields)
    r.close()
    return r.plan, out
