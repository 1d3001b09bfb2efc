"""Embedded example models, built with :class:`mujoco.MjSpec`.

Two robots shaped like the ones the refresh was designed for, built in code so
that no robot files or downloads are needed:

* :func:`quadruped` -- a Go1/Go2-like quadruped: a floating ``base`` and four
  legs (``FL``, ``FR``, ``RL``, ``RR``) of three hinges each (13 moving bodies,
  about 12.7 kg);
* :func:`humanoid` -- a G1-like humanoid: a floating ``pelvis``, 6-hinge legs,
  a 3-hinge waist and 7-hinge arms (30 moving bodies, 29 hinges, about 33 kg).

Both are "materialised" the way a batched RL collector materialises its model:
the authored sensors come first (joint positions and velocities, an IMU, foot
touch sensors, ...), followed by tracking sensors for every moving body, in
contiguous blocks of one kind each, in this order::

    track_pos_w    framepos     of the body frame (xbody), world frame
    track_quat_w   framequat    of the body frame, world frame
    track_linvel_w framelinvel  of the body frame, world frame
    track_angvel_w frameangvel  of the body frame, world frame
    track_pos_b    framepos     relative to the base body frame
    track_quat_b   framequat    relative to the base body frame

Each tracking sensor is named ``f"{kind}/{body_name}"``, e.g.
``track_pos_w/FL_calf``. :func:`tracking_layout` returns the column ranges.

For the quadruped the authored sensors occupy columns 0:68 and the tracking
block columns 68:328 (13 bodies x 20 columns), the layout of a typical
tracking-reward collector on a Go1-class robot (119 sensors: reaching 68
authored columns with 1-column foot touch sensors needs several small ones).

This module imports only numpy, mujoco and the standard library and works with
every supported MuJoCo (3.10 to 4.0).
"""

from __future__ import annotations

from collections.abc import Callable

import mujoco

from .humanoid import humanoid, humanoid_spec
from .quadruped import quadruped, quadruped_spec
from .tracking import TRACKING_KINDS, TrackingLayout, tracking_layout

__all__ = [
    "TRACKING_KINDS",
    "TrackingLayout",
    "quadruped_spec",
    "quadruped",
    "humanoid_spec",
    "humanoid",
    "tracking_layout",
    "MODELS",
]

#: Model builders by name.
MODELS: dict[str, Callable[[], mujoco.MjModel]] = {"quadruped": quadruped, "humanoid": humanoid}
