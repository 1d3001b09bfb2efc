// The parts of the _core module, registered by bindings/module.cc in order.
//
// Contract
// - register_contract: the Python<->C++ contract tables (Stage, EngineKind,
//   MODEL_FIELDS, OUTPUTS, fast_uncovered) and version/CPU queries.
// - register_refresher: Config and Refresher; returns the Refresher class
//   so register_bench can add its benchmark-only method to it.
// - register_bench: benchmark-only hooks (bench_hooks/), kept in the default
//   build because bench/ and tests use them.
#pragma once

#include <nanobind/nanobind.h>

#include <tuple>

#include "bindings/py_refresher.h"

namespace mjrefresh::bind {

void register_contract(nanobind::module_& m);
nanobind::class_<PyRefresher> register_refresher(nanobind::module_& m);
// Adds _core.MjDataRows and Refresher.mjdata_rows/run_mjdata (run_mjdata.cc).
void register_mjdata_rows(nanobind::module_& m, nanobind::class_<PyRefresher>& refresher);
void register_bench(nanobind::module_& m, nanobind::class_<PyRefresher>& refresher);

// The optional output keyword arguments of run() and run_mjdata(), in the
// order of their parameters.
inline auto output_args() {
  auto out = [](const char* name) {
    return nanobind::arg(name).noconvert().none() = nanobind::none();
  };
  return std::make_tuple(out("sensordata"), out("body_pos"), out("body_quat"), out("body_linvel"),
                         out("body_angvel"), out("body_pos_rel"), out("body_quat_rel"),
                         out("site_pos"), out("site_mat"));
}

}  // namespace mjrefresh::bind
