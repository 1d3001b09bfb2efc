// Exact engine: refreshes a row by running MuJoCo's own stage functions on a
// per-thread scratch mjData, then copies the selected outputs out.
//
// Contract
// - Model: the engine keeps a private copy of the caller's mjModel, made in
//   the constructor (so deleting the Python model later is harmless), in
//   which unselected sensors are masked (needstage NONE) and sleep is off:
//   mj_sensorPos/mj_sensorVel compute exactly the selected sensors with
//   MuJoCo's own code (bit-exact, cutoff included), skip the rest, and the
//   copy stays valid for MuJoCo's reset/sleep code (exact/private_model.h).
// - Construction never ends the process: every MuJoCo call runs under the
//   error trap; allocation failure throws OutOfMemory naming the bytes and
//   the remedy (core/trapped_alloc.h), other MuJoCo errors runtime_error;
//   what was made before the failure is freed.
// - Memory: each scratch mjData's arena is what the planned stages use
//   (size_arena in exact/private_model.h); memory_bytes() is what the
//   engine holds (model copies plus scratch).
// - Per-environment model fields: when the selection has model_fields, each
//   participant also gets its own copy of the (masked) model, and every row
//   writes its values of those fields into that copy before the stages run
//   (plus body_subtreemass when body_mass varies, as mj_setConst derives
//   it). No row sees another row's values; rows pay a copy of only the
//   given fields, never a whole model copy.
// - Scratch: one mjData per participant of the worker pool; participant t
//   only touches scratch t. MuJoCo's lazy flags (flg_subtreevel,
//   flg_energypos/vel, flg_rnepost) are cleared for every row so no value is
//   carried over from the previous row.
// - Sensors disabled (mjDSBL_SENSOR): mj_forward leaves sensordata as it
//   was, and the engine leaves the selected sensordata columns unwritten.
// - Errors: refresh_row() never throws. An mju_error inside a stage returns
//   false with MuJoCo's message; that row's outputs are not written and the
//   scratch mjData is reset so the next row is correct.
// - Threading: refresh_row(t, ...) may run concurrently for distinct t.
#pragma once

#include <mujoco/mujoco.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/row_engine.h"
#include "core/selection.h"

namespace mjrefresh {

class ExactEngine final : public RowEngine {
 public:
  ExactEngine(const mjModel* model, Selection selection, int num_scratch);
  ~ExactEngine() override;
  ExactEngine(const ExactEngine&) = delete;
  ExactEngine& operator=(const ExactEngine&) = delete;

  const mjModel* model() const override { return model_; }
  const Selection& selection() const override { return sel_; }
  bool refresh_row(int t, int64_t row, const Inputs& in, const Outputs& out, char* message,
                   std::size_t message_size) override;
  void after_fork() override;
  uint32_t stage_functions() const override { return sel_.stages; }
  // Measured on the quadruped tracking refresh (2-vCPU AMD EPYC VM, ~2.3
  // us/row): 16 rows on 2 threads ran at 0.96x of 1 thread, 32 rows at
  // 1.17x (re-measure: python -m bench.micro --contenders mjrefresh_exact
  // --n 16 32 --threads 1 2).
  int64_t min_rows_per_thread() const override { return 16; }

  // Benchmark hook: on scratch 0, load each row and run only the planned
  // stage functions (no outputs); adds the time spent inside the stage
  // functions to *elapsed_ns. The cost floor the engine is compared with.
  // Caller must hold the refresher's call lock. False on a MuJoCo error.
  bool time_stages(const int64_t* rows, int64_t num_rows, const Inputs& in, int64_t* elapsed_ns,
                   char* message, std::size_t message_size);

  int64_t memory_bytes() const override;
  // Bytes one participant holds: its scratch mjData (struct, buffer, arena)
  // and, with model_fields, its model copy.
  int64_t participant_bytes() const override;

 private:
  // Loads row `row` into scratch t (state, and model fields into models_[t]);
  // returns the model the row must run with.
  const mjModel* load_row(int t, int64_t row, const Inputs& in);
  void write_outputs(const mjModel* m, const mjData* d, int64_t row, const Outputs& out) const;
  void release();  // frees everything made so far (destructor, failed constructor)
  static std::string remedy(int num_scratch);

  mjModel* model_ = nullptr;
  Selection sel_;
  std::vector<mjData*> scratch_;
  std::vector<mjModel*> models_;  // per participant; only with model_fields
};

}  // namespace mjrefresh
