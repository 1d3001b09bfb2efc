// The parts of the _core module, registered by bindings/module.cc in order.
//
// Contract
// - register_contract: the Python<->C++ contract tables (Stage, EngineKind,
//   MODEL_FIELDS, INPUTS, OUTPUTS, fast_uncovered) and version/CPU queries.
// - register_refresher: Config, Refresher and Bound; returns the Refresher
//   class so register_mjdata_rows can add the MjData-list binding to it.
// - register_bench: benchmark-only hooks (bench_hooks/), kept in the default
//   build because bench/ and tests use them.
#pragma once

#include <nanobind/nanobind.h>

#include "bindings/py_refresher.h"

namespace mjrefresh::bind {

void register_contract(nanobind::module_& m);
nanobind::class_<PyRefresher> register_refresher(nanobind::module_& m);
// Adds _core.MjDataRows and Refresher.mjdata_rows/bind_mjdata (run_mjdata.cc).
void register_mjdata_rows(nanobind::module_& m, nanobind::class_<PyRefresher>& refresher);
void register_bench(nanobind::module_& m);

}  // namespace mjrefresh::bind
