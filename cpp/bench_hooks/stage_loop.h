// Benchmark floor: a single-thread C++ loop over the same five MuJoCo stage
// functions the per-environment Python loop calls (kinematics, comPos,
// comVel, sensorPos, sensorVel), with no planning, masking or threading.
// It is what the exact engine would cost per row if it did exactly what the
// old loop did, minus Python. Not used by the library itself.
//
// Contract: runs on the calling thread with its own scratch mjData, which it
// creates and frees; writes sensordata[row, col_start:col_stop] for every row.
// Inputs are validated by the caller. Throws std::runtime_error on an
// mju_error (trapped, so the process survives).
#pragma once

#include <mujoco/mujoco.h>

#include "core/array_view.h"

namespace mjrefresh {

void stage_loop(const mjModel* m, const RowView<const double>& qpos,
                const RowView<const double>& qvel, const OutView& sensordata, int col_start,
                int col_stop);

}  // namespace mjrefresh
