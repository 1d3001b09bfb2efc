// The check that a refresh reaches no MuJoCo global callback.
//
// Contract
// - The exact engine's stage runner (exact/stage_runner.h) calls no stage
//   function that reaches a callback, except mj_collision: it calls
//   mjcb_contactfilter for every geom pair, and mjcb_time in its timers.
// - check_no_callbacks(stages) raises RuntimeError, naming the callback and
//   the fix, when `stages` (RowEngine::stage_functions) includes collision
//   and a callback it would reach is set: any mjcb_contactfilter (it changes
//   the contacts, so a refresh could not equal mj_forward without running
//   it), or an mjcb_time set through the mujoco bindings
//   (mujoco.set_mjcb_time: a Python function, or a C function handed to
//   them). The bindings' own default timer, which they install with the
//   first MjData, is plain C++ reading a clock and is allowed.
// - Call with the GIL held, before any row runs (the callbacks are set from
//   Python under the GIL).
#pragma once

#include <cstdint>

namespace mjrefresh::bind {

void check_no_callbacks(uint32_t stages);

}  // namespace mjrefresh::bind
