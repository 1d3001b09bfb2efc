// The exact engine's stage runner: MuJoCo's stage functions selected by a
// Stage mask, called in mj_forward's order, under the error trap.
//
// Contract
// - run_stages_trapped(m, d, stages, elapsed_ns, message) calls exactly the
//   stage functions in `stages` (selection.h) on (m, d) in kStages order and
//   returns true, or returns false with MuJoCo's message if one raised
//   mju_error (then d must be reset before reuse). If elapsed_ns is set, the
//   time spent inside the stage functions is added to it.
// - Nothing else runs: no mj_forward and no global callback (mjcb_*).
//   Stages whose MuJoCo function would call one run as the functions they
//   are made of (mj_makeM, mj_factorM, mj_fwdVelocity: the same arithmetic,
//   bit-exact), except mj_collision, which the binding runs only while no
//   callback it would reach is set (bindings/callback_guard.h). Sensor plugins
//   never run: the planner refuses selections whose pass would run one, and
//   user sensors are masked out of the private model (no mjcb_sensor).
#pragma once

#include <mujoco/mujoco.h>

#include <cstddef>
#include <cstdint>

namespace mjrefresh {

bool run_stages_trapped(const mjModel* m, mjData* d, uint32_t stages, int64_t* elapsed_ns,
                        char* message, std::size_t message_size);

}  // namespace mjrefresh
