// Rows that live in separate mjData (one per row): per-row pointer tables for
// the inputs and for the mirrored fields, and the copy of a refreshed row's
// outputs into its mjData.
//
// Contract
// - Ownership: MjDataRows owns only its pointer tables; the mjData belong to
//   the caller (Python MjData objects, which the binding keeps alive for as
//   long as the tables exist) and must outlive every call that uses them.
// - Validity: every mjData was made from a model with the refresher's sizes
//   (nq, nv, nmocap, nsensordata, nbody, nsite) and appears once; the Python
//   side (src/mjrefresh/backends/mjdata_rows.py) checks this when it binds,
//   before the tables are built. The tables are built once, at bind: an
//   mjData's field pointers do not change between mj_makeData and
//   mj_deleteData, and reading them per call would cost one cache miss per
//   row (each mjData struct sits next to its own multi-megabyte arena).
// - Threading: read-only during a call. MjDataMirror::copy(row) writes only
//   row `row`'s mjData and output row, so distinct rows may run concurrently.
// - Mirrored outputs: the engine writes the row's sensordata columns straight
//   into its mjData (the sensordata output is a table view) and body/site
//   outputs into the caller's arrays; copy() then streams the columns into
//   the caller's sensordata array and, only if asked (`poses`), copies the
//   other outputs that have an mjData field (kOutputs: body_pos into xpos,
//   ...) into it.
//   All mirrored outputs are float64 (checked by the binding).
// - Why this order, and why poses are opt-in. Quadruped tracking cache (13
//   bodies, 260 columns), N=4096, per row against bind_arrays, each contender
//   on its own MjData (python -m bench.research.mjdata_list, bench/README.md):
//   x1.35-1.44 without poses, x1.41-1.54 with them (13 more scattered lines
//   written per row) at 1 and 2 threads, MuJoCo 3.11 and 4.0. Tried in one
//   interleaved run against this order (x1.58 there): engine into the
//   caller's array, then streaming the columns into each mjData x1.70; plain
//   stores for the array copy x1.70; prefetching every line a row writes
//   x1.56-1.80. The cost is memory traffic to rows scattered over the heap,
//   not latency.
#pragma once

#include <mujoco/mujoco.h>

#include <cstdint>
#include <vector>

#include "core/selection.h"

namespace mjrefresh {

class MjDataRows {
 public:
  // Tables for datas[0..n) (one mjData* per row id; none null): every input
  // and every output with an mjData field (io_tables.h) that the model has.
  MjDataRows(const mjModel* m, mjData* const* datas, int64_t n);
  int64_t size() const { return n_; }
  // Row r's mjData.
  const mjData* data(int64_t r) const { return datas_[r]; }
  // Inputs whose views read row r from its mjData (time only if `time`).
  Inputs inputs(bool time) const;
  // (n, nsensordata) view writing row r into its mjData's sensordata.
  OutView sensordata() const;
  // Row r's mjData field of input i / output o (nullptr: the model has none).
  double* const* input_table(int i) const { return tables_.data() + i * n_; }
  double* const* output_table(int o) const { return tables_.data() + (kNumInputs + o) * n_; }

 private:
  int64_t n_;
  int64_t input_size_[kNumInputs];
  int64_t nsensordata_;
  std::vector<double*> tables_;  // kNumInputs + kNumOutputs tables of n_ entries
  std::vector<const mjData*> datas_;
};

class MjDataMirror {
 public:
  // `arrays`: the caller's outputs (its sensordata array, not the table view).
  // poses: also copy the body and site poses into each mjData.
  MjDataMirror(const MjDataRows& rows, const Selection& sel, const Outputs& arrays, bool poses)
      : rows_(rows), sel_(sel), arrays_(arrays), poses_(poses) {}
  // Copies row `row`'s mirrored outputs (see the contract above).
  void copy(int64_t row) const;
  // Starts loading what refreshing and copying `row` touches in its mjData:
  // rows are scattered over memory, so each costs misses the hardware
  // prefetcher cannot predict.
  void prefetch(int64_t row) const;

 private:
  const MjDataRows& rows_;
  const Selection& sel_;
  const Outputs& arrays_;
  bool poses_;
};

}  // namespace mjrefresh
