"""Task shapes of the collector benchmark: what a manager-based task reads per step.

Three tasks on the embedded models of ``mjrefresh.models``:

* ``quadruped-walk`` -- flat velocity-command walking, no terminations (so no
  resets); reads the base and the four calves (feet).
* ``humanoid-walk`` -- velocity-command walking with terminations (the pelvis
  drops below 0.5 m or tilts by more than 60 degrees) and resets; reads the
  pelvis, torso, ankles and wrists.
* ``humanoid-track`` -- motion tracking of a reference clip: every moving body
  (30) is read and compared with the reference pose (base-relative position and
  orientation, world velocities), terminations when the pelvis or an
  end-effector height leaves the reference by more than 0.25 m, resets to a
  random frame of the clip (reference state initialisation).

Per vector step a task computes, from the tracked sensor block (world and
base-relative pose and velocity of the bodies), ``qpos`` and ``qvel``:
base linear and angular velocity in the base frame, projected gravity, joint
positions (relative to the default pose) and velocities, the last action, the
read bodies' pose and velocity relative to the base, task terms (command or
reference comparison), a reward and a termination flag. :meth:`Task.compute`
is a pure function of its inputs and the task's per-row state (command, last
action, clip phase), so the benchmark can recompute it from ``mj_forward``
values to check a variant.

Only numpy, mujoco and ``mjrefresh.models`` are needed.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from mjrefresh import models

INTEGRATION = mujoco.mjtState.mjSTATE_INTEGRATION


#: Frames of the tracking task's reference clip (one per vector step).
CLIP_FRAMES = 200


@dataclass(frozen=True)
class TaskSpec:
    """Static description of a task shape."""

    name: str
    model: str  # key of mjrefresh.models.MODELS
    description: str
    read_bodies: tuple[str, ...] | None  # None: every tracked body
    terminations: bool
    tracking: bool
    timestep: float = 0.005
    decimation: int = 4
    action_scale: float = 0.25
    episode_steps: int | None = None  # time-out (truncation) after this many vector steps


TASKS: dict[str, TaskSpec] = {
    s.name: s
    for s in (
        TaskSpec(
            "quadruped-walk",
            "quadruped",
            "quadruped flat velocity walking, no terminations/resets; reads base + 4 calves",
            ("base", "FL_calf", "FR_calf", "RL_calf", "RR_calf"),
            terminations=False,
            tracking=False,
        ),
        TaskSpec(
            "humanoid-walk",
            "humanoid",
            "humanoid velocity walking with fall terminations and partial resets; "
            "reads pelvis, torso, ankles, wrists",
            (
                "pelvis",
                "torso_link",
                "left_ankle_roll_link",
                "right_ankle_roll_link",
                "left_wrist_yaw_link",
                "right_wrist_yaw_link",
            ),
            terminations=True,
            tracking=False,
            episode_steps=1000,
        ),
        TaskSpec(
            "humanoid-track",
            "humanoid",
            "humanoid motion tracking: all 30 bodies vs a reference clip, "
            "tracking-error terminations, resets to random clip frames",
            None,
            terminations=True,
            tracking=True,
            episode_steps=CLIP_FRAMES - 1,  # reset at the last frame of the clip
        ),
    )
}

#: Bodies whose world height is compared with the reference (tracking termination).
_END_EFFECTORS = (
    "left_ankle_roll_link",
    "right_ankle_roll_link",
    "left_wrist_yaw_link",
    "right_wrist_yaw_link",
)
GRAVITY_DOWN = np.array([0.0, 0.0, -1.0])


# ----------------------------------------------------------------------------
# quaternion helpers (w, x, y, z), vectorised over leading axes
# ----------------------------------------------------------------------------


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """np.cross over the last axis (3), without np.cross's axis juggling."""
    ax, ay, az = a[..., 0], a[..., 1], a[..., 2]
    bx, by, bz = b[..., 0], b[..., 1], b[..., 2]
    return np.stack((ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx), axis=-1)


def quat_rotate_inverse(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate ``v`` by the inverse of unit quaternion ``q`` (world -> body frame)."""
    w = q[..., :1]
    u = q[..., 1:]
    t = 2.0 * _cross(u, v)
    return v - w * t + _cross(u, t)


def quat_to_mat(q: np.ndarray) -> np.ndarray:
    """Rotation matrices (..., 3, 3) of unit quaternions (..., 4)."""
    w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    m = np.empty(q.shape[:-1] + (3, 3))
    m[..., 0, 0] = 1 - 2 * (y * y + z * z)
    m[..., 0, 1] = 2 * (x * y - w * z)
    m[..., 0, 2] = 2 * (x * z + w * y)
    m[..., 1, 0] = 2 * (x * y + w * z)
    m[..., 1, 1] = 1 - 2 * (x * x + z * z)
    m[..., 1, 2] = 2 * (y * z - w * x)
    m[..., 2, 0] = 2 * (x * z - w * y)
    m[..., 2, 1] = 2 * (y * z + w * x)
    m[..., 2, 2] = 1 - 2 * (x * x + y * y)
    return m


def quat_angle_error(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Rotation angle between unit quaternions ``a`` and ``b`` (radians)."""
    dot = np.abs(np.sum(a * b, axis=-1))
    return 2.0 * np.arccos(np.clip(dot, 0.0, 1.0))


# ----------------------------------------------------------------------------
# the task
# ----------------------------------------------------------------------------


class Task:
    """One task shape on ``n`` environments: per-row state, reads, resets.

    Attributes:
      spec: the :class:`TaskSpec`.
      model: the compiled model (``opt.timestep`` set from the spec).
      layout: its :class:`mjrefresh.models.TrackingLayout`.
      columns: ``(start, stop)`` of the tracking block in ``sensordata``.
      obs_dim, nu: observation and action sizes.
    """

    def __init__(self, spec: TaskSpec, n: int, seed: int = 0, policy: str = "random") -> None:
        self.spec = spec
        self.n = n
        self.model = models.MODELS[spec.model]()
        self.model.opt.timestep = spec.timestep
        self.layout = models.tracking_layout(self.model)
        self.columns = self.layout.columns
        lay = self.layout
        self.nbody = len(lay.bodies)
        self.base = lay.bodies.index(lay.base)
        names = lay.bodies if spec.read_bodies is None else spec.read_bodies
        self.read = np.array([lay.bodies.index(b) for b in names])
        # every body, in order: a slice reads a view instead of gathering a copy
        self._read = slice(None) if self.read.tolist() == list(range(self.nbody)) else self.read
        # column offsets of each kind inside the block
        self._kind = {k: (a - lay.start, b - lay.start) for k, (a, b) in lay.kinds.items()}
        self.nu = self.model.nu
        self.nj = self.model.nq - 7  # hinges after the free joint
        key = self.model.key("home").id
        data = mujoco.MjData(self.model)
        mujoco.mj_resetDataKeyframe(self.model, data, key)
        self.home_qpos = data.qpos.copy()
        self.default_joint = data.qpos[7:].copy()
        self.nstate = mujoco.mj_stateSize(self.model, INTEGRATION)
        self.home_state = np.empty(self.nstate)
        mujoco.mj_getState(self.model, data, self.home_state, INTEGRATION)
        self.policy = policy
        self.seed = seed
        self._ee = np.array([lay.bodies.index(b) for b in _END_EFFECTORS if b in lay.bodies])
        self._feet = np.array(
            [b for b in self.read if "calf" in lay.bodies[b] or "ankle" in lay.bodies[b]]
        )
        if spec.tracking:
            self._build_clip()
        self.obs_dim = self.compute(
            np.zeros((1, lay.stop - lay.start)),
            self.home_qpos[None],
            np.zeros((1, self.model.nv)),
            rows=np.zeros(1, dtype=np.int64),
            action=np.zeros((1, self.nu)),
            _probe=True,
        )[0].shape[1]
        self.start(seed)

    # ------------------------------------------------------------ per-run state
    def start(self, seed: int) -> None:
        """(Re)initialise the per-row task state and RNGs (same seed: same run)."""
        self.rng = np.random.default_rng(seed)
        self.command = np.zeros((self.n, 3))
        self.last_action = np.zeros((self.n, self.nu))
        self.phase = np.zeros(self.n, dtype=np.int64)
        self.episode = np.zeros(self.n, dtype=np.int64)
        self.step_count = 0
        arng = np.random.default_rng(seed + 1)
        period = 16
        if self.policy == "zero":
            self._actions = np.zeros((1, self.n, self.nu))
        else:  # a fixed random (open-loop) policy: the same actions for every variant
            self._actions = np.clip(0.6 * arng.standard_normal((period, self.n, self.nu)), -1, 1)

    def snapshot(self) -> dict[str, object]:
        """The per-row task state and RNG, to start every variant from the same point."""
        return {
            "rng": self.rng.bit_generator.state,
            "command": self.command.copy(),
            "last_action": self.last_action.copy(),
            "phase": self.phase.copy(),
            "episode": self.episode.copy(),
            "step_count": self.step_count,
        }

    def restore(self, snap: dict[str, object]) -> None:
        self.rng.bit_generator.state = snap["rng"]
        self.command[...] = snap["command"]
        self.last_action[...] = snap["last_action"]
        self.phase[...] = snap["phase"]
        self.episode[...] = snap["episode"]
        self.step_count = snap["step_count"]

    def action(self, t: int) -> np.ndarray:
        """The policy's action for vector step ``t`` (N, nu), in [-1, 1]."""
        return self._actions[t % self._actions.shape[0]]

    def ctrl_targets(self, action: np.ndarray, out: np.ndarray) -> None:
        """Write position targets ``default + scale * action`` into ``out`` (the ctrl view)."""
        np.multiply(action, self.spec.action_scale, out=out)
        out += self.default_joint

    def desync(self) -> None:
        """Spread the rows over their episodes (random progress), so that time-outs
        arrive at a steady rate from the first step, as in a running collector."""
        if self.spec.tracking:
            return  # the rows start at random clip frames: already spread
        if self.spec.episode_steps is not None:
            self.episode[:] = self.rng.integers(0, self.spec.episode_steps, size=self.n)

    def advance(self, action: np.ndarray) -> None:
        """Bookkeeping after the physics of one vector step."""
        self.step_count += 1
        self.episode += 1
        if self.spec.tracking:
            self.phase += 1
            np.minimum(self.phase, CLIP_FRAMES - 1, out=self.phase)

    def truncated(self) -> np.ndarray:
        """Rows whose episode timed out (the clip ended, for tracking)."""
        if self.spec.episode_steps is None:
            return np.zeros(self.n, dtype=bool)
        return self.episode >= self.spec.episode_steps

    def finish_step(self, action: np.ndarray, reset_ids: np.ndarray) -> None:
        """After reset and replay: remember the action (zero for reset rows)."""
        self.last_action[...] = action
        if reset_ids.size:
            self.last_action[reset_ids] = 0.0

    # ------------------------------------------------------------------ resets
    def reset_state(
        self, ids: np.ndarray, state: np.ndarray, qpos: np.ndarray, qvel: np.ndarray
    ) -> None:
        """Write the reset state of rows ``ids`` into the backend's state views.

        Whole integration-state rows are written from the ``home`` keyframe
        (time, warm-start, ctrl, ... reset), then ``qpos``/``qvel`` are
        randomised: joint offsets, yaw and small velocities for walking; a
        random clip frame plus noise for tracking. Also resamples the command
        (walking) or the clip phase (tracking) and zeroes the last action.
        """
        k = ids.size
        if k == 0:
            return
        rng = self.rng
        state[ids] = self.home_state
        if self.spec.tracking:
            phase = rng.integers(0, CLIP_FRAMES - 1, size=k)
            self.phase[ids] = phase
            self.episode[ids] = phase
            q = self.clip_qpos[phase].copy()
            q[:, 7:] += rng.uniform(-0.05, 0.05, size=(k, self.nj))
            v = self.clip_qvel[phase] + 0.05 * rng.standard_normal((k, self.model.nv))
        else:
            q = np.broadcast_to(self.home_qpos, (k, self.model.nq)).copy()
            q[:, 7:] += rng.uniform(-0.1, 0.1, size=(k, self.nj))
            yaw = rng.uniform(-np.pi, np.pi, size=k)
            q[:, 3] = np.cos(yaw / 2)
            q[:, 4:6] = 0.0
            q[:, 6] = np.sin(yaw / 2)
            v = 0.1 * rng.standard_normal((k, self.model.nv))
            cmd = rng.uniform((-1.0, -0.5, -1.0), (1.0, 0.5, 1.0), size=(k, 3))
            self.command[ids] = cmd
        qpos[ids] = q
        qvel[ids] = v
        self.last_action[ids] = 0.0
        if not self.spec.tracking:
            self.episode[ids] = 0

    # ---------------------------------------------------------- reference clip
    def _build_clip(self) -> None:
        """A synthetic reference motion (sinusoidal joints, forward pelvis drift),
        with its tracking-sensor values from mj_forward at every frame."""
        m = self.model
        dt = self.spec.timestep * self.spec.decimation
        t = np.arange(CLIP_FRAMES) * dt
        rng = np.random.default_rng(1234)
        amp = rng.uniform(0.05, 0.35, self.nj)
        freq = rng.uniform(0.5, 1.5, self.nj)
        phi = rng.uniform(0, 2 * np.pi, self.nj)
        qpos = np.tile(self.home_qpos, (CLIP_FRAMES, 1))
        qpos[:, 7:] += amp * np.sin(2 * np.pi * freq * t[:, None] + phi)
        lo, hi = m.jnt_range[1:, 0], m.jnt_range[1:, 1]
        qpos[:, 7:] = np.clip(qpos[:, 7:], lo + 0.01, hi - 0.01)
        qpos[:, 0] = 0.4 * t
        qpos[:, 2] += 0.02 * np.sin(4 * np.pi * t)
        yaw = 0.2 * np.sin(np.pi * t)
        qpos[:, 3] = np.cos(yaw / 2)
        qpos[:, 6] = np.sin(yaw / 2)
        qvel = np.zeros((CLIP_FRAMES, m.nv))
        for i in range(CLIP_FRAMES):
            j = (i + 1) % CLIP_FRAMES
            if j == 0:
                qvel[i] = qvel[i - 1]
                continue
            mujoco.mj_differentiatePos(m, qvel[i], dt, qpos[i], qpos[j])
        a, b = self.columns
        track = np.empty((CLIP_FRAMES, b - a))
        data = mujoco.MjData(m)
        for i in range(CLIP_FRAMES):
            data.qpos[:] = qpos[i]
            data.qvel[:] = qvel[i]
            mujoco.mj_forward(m, data)
            track[i] = data.sensordata[a:b]
        self.clip_qpos, self.clip_qvel = qpos, qvel
        ref = self.split(track)
        self.clip_pos_b = ref["pos_b"]
        self.clip_quat_b = ref["quat_b"]
        self.clip_linvel_w = ref["linvel_w"]
        self.clip_angvel_w = ref["angvel_w"]
        self.clip_z = ref["pos_w"][..., 2]

    # ------------------------------------------------------------ the reads
    def split(self, block: np.ndarray) -> dict[str, np.ndarray]:
        """Per-kind (rows, bodies, dim) views of a tracking block (rows, ncols)."""
        out = {}
        rows = block.shape[0]
        for kind, key in (
            ("track_pos_w", "pos_w"),
            ("track_quat_w", "quat_w"),
            ("track_linvel_w", "linvel_w"),
            ("track_angvel_w", "angvel_w"),
            ("track_pos_b", "pos_b"),
            ("track_quat_b", "quat_b"),
        ):
            a, b = self._kind[kind]
            out[key] = block[:, a:b].reshape(rows, self.nbody, -1)
        return out

    def compute(
        self,
        block: np.ndarray,
        qpos: np.ndarray,
        qvel: np.ndarray,
        rows: np.ndarray | None,
        action: np.ndarray,
        _probe: bool = False,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Observations, reward and termination of ``rows`` (None: all rows).

        ``block`` is the tracking sensor block of those rows (rows, ncols),
        ``qpos``/``qvel`` their state, ``action`` the action just applied.
        Reads only; the task state is not changed.
        """
        sel = slice(None) if rows is None else rows
        s = self.split(block)
        base, read = self.base, self._read
        qb = s["quat_w"][:, base]
        v_w = s["linvel_w"]
        w_w = s["angvel_w"]
        lin_b = quat_rotate_inverse(qb, v_w[:, base])
        ang_b = quat_rotate_inverse(qb, w_w[:, base])
        grav_b = quat_rotate_inverse(qb, np.broadcast_to(GRAVITY_DOWN, lin_b.shape))
        joint_pos = qpos[:, 7:] - self.default_joint
        joint_vel = qvel[:, 6:]
        rot_b = quat_to_mat(qb)  # (rows, 3, 3); v @ R == R^T v per body: world -> base frame
        pos_b = s["pos_b"][:, read]
        quat_b = s["quat_b"][:, read]
        rel_linvel_b = (v_w[:, read] - v_w[:, base : base + 1]) @ rot_b
        rel_angvel_b = (w_w[:, read] - w_w[:, base : base + 1]) @ rot_b
        last_action = np.zeros_like(action) if _probe else self.last_action[sel]
        n = qb.shape[0]
        parts = [lin_b, ang_b, grav_b, joint_pos, joint_vel, action]
        action_rate = np.sum((action - last_action) ** 2, axis=1)
        if self.spec.tracking:
            phase = np.zeros(n, dtype=np.int64) if _probe else self.phase[sel]
            ref_pos_b = self.clip_pos_b[phase]
            ref_quat_b = self.clip_quat_b[phase]
            pos_err = pos_b - ref_pos_b
            quat_err = quat_angle_error(quat_b, ref_quat_b)
            lin_err = np.sum((v_w - self.clip_linvel_w[phase]) ** 2, axis=2).mean(axis=1)
            ang_err = np.sum((w_w - self.clip_angvel_w[phase]) ** 2, axis=2).mean(axis=1)
            parts += [
                self.clip_qpos[phase, 7:] - self.default_joint,
                pos_err.reshape(n, -1),
                quat_b.reshape(n, -1),
                rel_linvel_b.reshape(n, -1),
                rel_angvel_b.reshape(n, -1),
            ]
            reward = (
                np.exp(-np.sum(pos_err**2, axis=2).mean(axis=1) / 0.09)
                + np.exp(-(quat_err**2).mean(axis=1) / 0.16)
                + np.exp(-lin_err / 1.0)
                + np.exp(-ang_err / 9.87)
                - 0.01 * action_rate
            )
            z = s["pos_w"][..., 2]
            ref_z = self.clip_z[phase]
            anchor = np.abs(z[:, base] - ref_z[:, base]) > 0.25
            ee = np.abs(z[:, self._ee] - ref_z[:, self._ee]).max(axis=1) > 0.25
            terminated = anchor | ee
        else:
            command = np.zeros((n, 3)) if _probe else self.command[sel]
            feet = self._feet
            foot_z = s["pos_w"][:, feet, 2]
            foot_vxy = np.linalg.norm(v_w[:, feet, :2], axis=2)
            parts += [
                command,
                pos_b.reshape(n, -1),
                rel_linvel_b.reshape(n, -1),
                rel_angvel_b.reshape(n, -1),
            ]
            reward = (
                np.exp(-np.sum((command[:, :2] - lin_b[:, :2]) ** 2, axis=1) / 0.25)
                + 0.5 * np.exp(-((command[:, 2] - ang_b[:, 2]) ** 2) / 0.25)
                - 2.0 * lin_b[:, 2] ** 2
                - 0.05 * np.sum(ang_b[:, :2] ** 2, axis=1)
                - 0.1 * np.sum((foot_z - 0.08) ** 2 * foot_vxy, axis=1)
                - 0.01 * action_rate
            )
            if self.spec.terminations:
                pelvis_z = s["pos_w"][:, base, 2]
                terminated = (pelvis_z < 0.5) | (grav_b[:, 2] > -0.5)
            else:
                terminated = np.zeros(n, dtype=bool)
        obs = np.concatenate(parts, axis=1)
        return obs, reward, terminated


def describe() -> dict[str, str]:
    """Task name -> one-line description."""
    return {name: s.description for name, s in TASKS.items()}
