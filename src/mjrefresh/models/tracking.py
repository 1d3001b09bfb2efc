"""The tracking-sensor block of the embedded models and how to locate it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import mujoco

#: Tracking sensor kinds in block order: (kind, mjtSensor type, dim, relative to the base body).
TRACKING_KINDS: tuple[tuple[str, int, int, bool], ...] = (
    ("track_pos_w", int(mujoco.mjtSensor.mjSENS_FRAMEPOS), 3, False),
    ("track_quat_w", int(mujoco.mjtSensor.mjSENS_FRAMEQUAT), 4, False),
    ("track_linvel_w", int(mujoco.mjtSensor.mjSENS_FRAMELINVEL), 3, False),
    ("track_angvel_w", int(mujoco.mjtSensor.mjSENS_FRAMEANGVEL), 3, False),
    ("track_pos_b", int(mujoco.mjtSensor.mjSENS_FRAMEPOS), 3, True),
    ("track_quat_b", int(mujoco.mjtSensor.mjSENS_FRAMEQUAT), 4, True),
)


@dataclass(frozen=True)
class TrackingLayout:
    """Where the tracking sensors of a materialised model live in ``sensordata``.

    Attributes:
      bodies: tracked body names, in block order (the same in every block).
      base: name of the body the ``track_*_b`` sensors are relative to.
      start, stop: the half-open column range of the whole tracking block.
      kinds: per kind (``"track_pos_w"``, ...) its half-open column range.
      sensor_start, sensor_stop: the half-open sensor-id range of the block.
    """

    bodies: tuple[str, ...]
    base: str
    start: int
    stop: int
    kinds: Mapping[str, tuple[int, int]]
    sensor_start: int
    sensor_stop: int

    @property
    def columns(self) -> tuple[int, int]:
        """``(start, stop)``, the form ``sensor_ranges`` takes."""
        return (self.start, self.stop)

    def column(self, kind: str, body: str) -> tuple[int, int]:
        """The half-open column range of one body's sensor of one kind."""
        start, _ = self.kinds[kind]
        dim = next(d for k, _t, d, _r in TRACKING_KINDS if k == kind)
        i = self.bodies.index(body)
        return (start + i * dim, start + (i + 1) * dim)


def tracking_layout(model: mujoco.MjModel) -> TrackingLayout:
    """Locate and validate the tracking blocks of ``model``.

    Raises ValueError if the ``track_*`` sensors are missing, not in the block
    order of :data:`TRACKING_KINDS`, not contiguous, or track different bodies
    in different blocks.
    """
    names = [model.sensor(i).name for i in range(model.nsensor)]
    ids = [i for i, n in enumerate(names) if n.startswith("track_")]
    if not ids:
        raise ValueError("model has no track_* sensors")
    first, last = ids[0], ids[-1]
    if ids != list(range(first, last + 1)):
        raise ValueError("track_* sensors are not contiguous")
    nkind = len(TRACKING_KINDS)
    if len(ids) % nkind:
        raise ValueError(f"expected a multiple of {nkind} track_* sensors, got {len(ids)}")
    nbody = len(ids) // nkind
    bodies = tuple(names[first + i].split("/", 1)[1] for i in range(nbody))
    kinds: dict[str, tuple[int, int]] = {}
    base = ""
    for k, (kind, stype, dim, relative) in enumerate(TRACKING_KINDS):
        block = range(first + k * nbody, first + (k + 1) * nbody)
        for body, sid in zip(bodies, block, strict=True):
            if names[sid] != f"{kind}/{body}":
                raise ValueError(f"sensor {sid} is {names[sid]!r}, expected {kind}/{body!r}")
            if int(model.sensor_type[sid]) != stype or int(model.sensor_dim[sid]) != dim:
                raise ValueError(f"sensor {names[sid]!r} has the wrong type or dim")
            if relative:
                base = model.body(int(model.sensor_refid[sid])).name
        adr0 = int(model.sensor_adr[block[0]])
        kinds[kind] = (adr0, adr0 + nbody * dim)
    start = int(model.sensor_adr[first])
    stop = int(model.sensor_adr[last] + model.sensor_dim[last])
    return TrackingLayout(bodies, base, start, stop, kinds, first, last + 1)
