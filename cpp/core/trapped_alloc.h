// MuJoCo allocations that never end the process: mj_copyModel / mj_makeData
// under the error trap, with an allocation probe first.
//
// Contract
// - copy_model_trapped / make_data_trapped return the new object or throw;
//   they never let MuJoCo's default error handler call exit().
// - Allocation failure throws OutOfMemory (the bindings turn it into Python's
//   MemoryError) whose message names the bytes that could not be allocated,
//   what they were for (`what`) and the remedy. Before calling MuJoCo, the
//   bytes MuJoCo will ask for are probed with one malloc of that size (and
//   freed): MuJoCo's own failure path longjmps out of mj_makeRawData /
//   mj_copyModel with the pieces allocated so far still live, so a failure
//   caught by the probe leaks nothing. Any other MuJoCo error (for example a
//   plugin's init) throws std::runtime_error with MuJoCo's message.
// - data_bytes(d): what one mjData holds (struct + buffer + arena).
// - Thread-safety: call on one thread at a time per object (construction).
#pragma once

#include <mujoco/mujoco.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace mjrefresh {

class OutOfMemory : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// `what` names the purpose in messages ("the exact engine's scratch state
// for participant 2 of 4"); `remedy` is appended ("use fewer threads").
mjModel* copy_model_trapped(const mjModel* model, const std::string& what,
                            const std::string& remedy);
// `expected_bytes`: what the mjData will hold (data_bytes of an earlier one
// from the same model), or 0 when unknown (then only the arena is probed).
mjData* make_data_trapped(const mjModel* model, int64_t expected_bytes, const std::string& what,
                          const std::string& remedy);

inline int64_t data_bytes(const mjData* d) {
  return static_cast<int64_t>(sizeof(mjData) + d->nbuffer + d->narena);
}

}  // namespace mjrefresh
