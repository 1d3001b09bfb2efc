"""mjrefresh as the tracked-body refresh of unisim-core's MuJoCo backend:
:func:`attach_unisim`.

unisim-core's MuJoCo backend (``unisim.create_backend("mujoco", ...,
body_state_required=True, tracked_body_names=[...])``) injects frame sensors
for its tracked bodies and, after physics steps, brings their sensordata
columns up to date in ``_sync_tracked_body_state`` with one call to its
mjbatch-uni batch's ``refresh_sensor_ranges(rows, ranges)``. It keeps its
own dirty mask and clears it itself (after steps, resets, state writes).
:func:`attach_unisim` replaces that one call with
:class:`~mjrefresh.MjbatchSensorRefresher` on the same batch, so every
public read of the backend (tracked body poses and velocities, sensor views,
packed tensor reads) gets mjrefresh's values, in the backend's dtype
(float32 by default, float64 with ``np_dtype=np.float64``), while unisim's
dirty logic stays as it is.

unisim-core has no public hook for this: the binding reaches the batch
through the backend's private ``_pool`` attribute (checked on unisim-core
2.2). Upstream, a public accessor of the batch, or an injectable refresh
callable, would make it a public-API binding.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ._optional import require_mjbatch
from .mjbatch import MjbatchSensorRefresher


def attach_unisim(
    backend: Any,
    num_threads: int = 0,
    cpu_ids: Sequence[int] | None = None,
    model_fields: Sequence[str] | None = None,
) -> MjbatchSensorRefresher:
    """Make a materialized unisim MuJoCo backend refresh with mjrefresh.

    Args:
        backend: a ``unisim.backend.mujoco.MuJoCoBackend`` (from
            ``unisim.create_backend("mujoco", ...)``), after ``materialize()``.
        num_threads, cpu_ids: the refresh's threads (see
            :class:`~mjrefresh.Refresher`).
        model_fields: model fields the backend randomises per environment
            (expanded in its batch), read per row (see
            :class:`~mjrefresh.MjbatchSensorRefresher`).

    Returns:
        The :class:`~mjrefresh.MjbatchSensorRefresher` now serving the
        backend's batch; :meth:`~mjrefresh.MjbatchSensorRefresher.close` it
        when done (the backend's ``close()`` does not stop its threads).

    Raises:
        TypeError: not a unisim MuJoCo backend.
        RuntimeError: not materialized yet, closed, or a unisim-core whose
            backend no longer keeps its batch in ``_pool``.
    """
    require_mjbatch()
    kind = type(backend)
    if not any(c.__module__.startswith("unisim.backend.mujoco") for c in kind.__mro__):
        raise TypeError(
            f"backend: expected a unisim MuJoCo backend (unisim.create_backend('mujoco', ...)), "
            f"got {kind.__name__}"
        )
    if not hasattr(backend, "_pool"):
        raise RuntimeError(
            "backend: this unisim-core keeps no mjbatch-uni batch in _pool (attach_unisim "
            "was checked on unisim-core 2.2); refresh with mjrefresh.Refresher directly"
        )
    if getattr(backend, "_entity_closed", False):  # close() also empties _pool
        raise RuntimeError("backend: it is closed; attach_unisim needs a backend not closed yet")
    batch = backend._pool
    if batch is None:
        raise RuntimeError("backend: call backend.materialize() before attach_unisim(backend)")
    drop_in = MjbatchSensorRefresher(
        batch, num_threads=num_threads, cpu_ids=cpu_ids, model_fields=model_fields
    )
    # The one call _sync_tracked_body_state makes, served by mjrefresh.
    batch.refresh_sensor_ranges = drop_in.refresh_sensor_ranges
    return drop_in
