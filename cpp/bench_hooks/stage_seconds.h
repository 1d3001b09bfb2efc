// Benchmark hook: the cost floor of the exact engine. Not used by the
// library itself (bench/floor.py and bench/contenders.py read it).
//
// Contract: stage_seconds(refresher, rows, n, in) runs, under the
// refresher's call lock and on the calling thread, only the planned MuJoCo
// stage functions for each row (exact engine, scratch 0, no outputs
// written) and returns the seconds spent inside them. `rows` must be sorted,
// unique and in range and `in` validated. Throws std::runtime_error if the
// refresher is closed, runs the fast engine, or a row raises a MuJoCo error.
#pragma once

#include <cstdint>

#include "core/refresher.h"

namespace mjrefresh {

double stage_seconds(Refresher& refresher, const int64_t* rows, int64_t num_rows, const Inputs& in);

}  // namespace mjrefresh
