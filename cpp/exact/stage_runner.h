// The exact engine's stage runner: MuJoCo's stage functions selected by a
// Stage mask, called in mj_forward's order, under the error trap.
//
// Contract
// - run_stages_trapped(m, d, stages, elapsed_ns, message) calls exactly the
//   stage functions in `stages` (selection.h) on (m, d) in kStages order and
//   returns true, or returns false with MuJoCo's message if one raised
//   mju_error (then d must be reset before reuse). If elapsed_ns is set, the
//   time spent inside the stage functions is added to it.
// - Nothing else runs: no mj_forward, no callbacks beyond those the named
//   stage functions themselves invoke (mj_fwdVelocity: mjcb_passive and
//   passive plugins; mj_sensorPos/Vel: sensor plugins of that stage).
#pragma once

#include <mujoco/mujoco.h>

#include <cstddef>
#include <cstdint>

namespace mjrefresh {

bool run_stages_trapped(const mjModel* m, mjData* d, uint32_t stages, int64_t* elapsed_ns,
                        char* message, std::size_t message_size);

}  // namespace mjrefresh
