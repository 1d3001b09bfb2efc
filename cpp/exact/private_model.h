// The exact engine's private model: a copy of the caller's model that
// computes exactly the selected sensors and stays a model MuJoCo's own code
// paths (reset, sleep, islands) accept, with an arena sized to the planned
// stages.
//
// Contract
// - make_private_model(model, sel): a trapped copy (core/trapped_alloc.h)
//   in which
//   * every sensor not in sel.sensors has sensor_needstage = mjSTAGE_NONE:
//     mj_sensorPos/Vel/Acc test needstage == POS/VEL/ACC, so NONE is never
//     computed, cut off or passed to mjcb_sensor, and mj_forward / mj_step /
//     mj_resetData on the copy stay valid (an ACC mask made mj_resetData of
//     a sleep="init" model fail in mj_computeSensorAcc);
//   * mjENBL_SLEEP is cleared: mj_resetData then runs no stage function,
//     mj_kinematics computes static bodies every row (per-row body_pos of a
//     static body counts) and no tree sleeps between rows. Selected outputs
//     equal mj_forward on a fresh mjData of the sleep-enabled model (tests).
// - size_arena(model, stages): sets model->narena (copied into every mjData
//   made afterwards) to what the planned stages measurably use, from a dry
//   run of the stages on qpos0, times two plus 16 KiB, never above the
//   declared size. Unchanged when collision or makeConstraint is planned:
//   their arena use depends on the state (contacts, constraint rows), and
//   MuJoCo 3.11's broadphase dereferences NULL when the arena runs out
//   (pushPairArena) instead of raising. A row that still runs out of stack
//   raises mju_error, which the row's trap turns into that row's error.
#pragma once

#include <mujoco/mujoco.h>

#include <cstdint>

#include "core/selection.h"

namespace mjrefresh {

mjModel* make_private_model(const mjModel* model, const Selection& sel);
void size_arena(mjModel* model, uint32_t stages);

}  // namespace mjrefresh
