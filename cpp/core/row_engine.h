// Interface shared by the refresh engines (exact: MuJoCo's stage functions;
// fast: fused kernels). An engine refreshes one row at a time on the scratch
// state of one pool participant.
//
// Contract
// - refresh_row(t, row, ...) reads row `row` of the inputs, writes row `row`
//   of the outputs (only the selected columns/items) and returns true; on a
//   MuJoCo error it writes nothing for that row, leaves scratch t usable, puts
//   MuJoCo's message in `message` and returns false. It never throws.
// - Calls with distinct t may run concurrently; one t is never used by two
//   threads at once.
// - The engine owns a private copy of the model (see the implementation).
// - An engine whose pairs() is true may be handed two rows at once through
//   refresh_pair(), which must write exactly what two refresh_row() calls
//   would and cannot fail (the fast engine: both rows in SIMD lanes); one
//   whose quads() is true, four rows through refresh_quad(), likewise.
#pragma once

#include <mujoco/mujoco.h>

#include <cstddef>
#include <cstdint>

#include "core/selection.h"

namespace mjrefresh {

class RowEngine {
 public:
  virtual ~RowEngine() = default;
  virtual const mjModel* model() const = 0;
  virtual const Selection& selection() const = 0;
  virtual bool refresh_row(int t, int64_t row, const Inputs& in, const Outputs& out, char* message,
                           std::size_t message_size) = 0;
  // Rows each woken participant should get at least: waking an idle worker
  // costs the caller about 6 us (2-vCPU AMD EPYC VM) and the row work must
  // outweigh that.
  virtual int64_t min_rows_per_thread() const = 0;
  virtual bool pairs() const { return false; }
  virtual void refresh_pair(int /*t*/, int64_t /*row_a*/, int64_t /*row_b*/, const Inputs& /*in*/,
                            const Outputs& /*out*/) {}
  // The same for four rows (quads() true: the fast engine's AVX2 build).
  virtual bool quads() const { return false; }
  virtual void refresh_quad(int /*t*/, const int64_t* /*rows*/, const Inputs& /*in*/,
                            const Outputs& /*out*/) {}
  // A hint, before refresh_quad reaches `row`: start loading what only
  // this engine knows it will read there. Reads and writes nothing. The
  // refresher calls it only where prefetches() is true (read once per call),
  // so an engine with nothing to load costs no call per row.
  virtual bool prefetches() const { return false; }
  virtual void prefetch(const Inputs& /*in*/, int64_t /*row*/) const {}
  // The MuJoCo stage functions (Stage bits) a refresh calls: the binding
  // checks, before any row runs, that none of them would reach a global
  // callback that is set (bindings/callback_guard.h). The fast engine
  // calls none.
  virtual uint32_t stage_functions() const { return 0; }
  // Called in a forked child before its first refresh: scratch state may have
  // been copied mid-row from a parent thread; make it usable again.
  virtual void after_fork() {}
  // Bytes the engine holds (model copies and scratch state of all
  // participants); exported as Refresher.memory_bytes.
  virtual int64_t memory_bytes() const = 0;
  // The part of memory_bytes() each pool participant adds (its scratch).
  virtual int64_t participant_bytes() const = 0;
};

}  // namespace mjrefresh
