// nanobind module mjrefresh._core: the private native layer. Each part is
// registered by its own file (bindings/register.h):
// - register_contract.cc: the Python<->C++ contract (Stage, EngineKind,
//   MODEL_FIELDS, INPUTS, OUTPUTS, fast_uncovered) and version/CPU queries;
// - register_refresher.cc: Config, Refresher and Bound (bound.cc), the
//   arrays parsed by looping over the tables (parse.cc, arrays.cc);
// - run_mjdata.cc: the MjData-list binding (mjdata_rows, bind_mjdata);
// - register_bench.cc: benchmark-only hooks (stage_loop).
//
// Contract
// - Validation happens here, once, for every path (Refresher.bind, which
//   Refresher.refresh and every backend binding use, and bind_mjdata):
//   every array argument is checked while holding the GIL, before any row
//   is touched (dtype, ndim, shape against the model and the selection,
//   contiguous last axis, alignment, writability, memory overlaps, row
//   order). A bad argument raises TypeError/ValueError naming it, with
//   expected vs got and the fix; nothing is written.
// - No copies: arrays are viewed in place (numpy, DLPack, buffer protocol),
//   so a view that does not fit is rejected instead of silently copied (a
//   copied output would never reach the caller).
// - GIL: released only around Refresher::run (which also takes the call
//   lock, so a second Python thread waits without holding the GIL).
// - Errors from worker threads (a MuJoCo error in a row) come back from
//   Bound.run as a (failed_rows, message) tuple, not as an exception; the
//   other rows are refreshed. A closed refresher raises RuntimeError.
#include <nanobind/nanobind.h>

#include "bindings/register.h"
#include "core/trapped_alloc.h"

NB_MODULE(_core, m) {
  using namespace mjrefresh::bind;
  m.doc() = "Private native core of mjrefresh (use the public mjrefresh API instead).";
  // Allocation failure while building a refresher (core/trapped_alloc.h):
  // MemoryError with the message naming the bytes and the remedy.
  nanobind::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const mjrefresh::OutOfMemory& e) {
      PyErr_SetString(PyExc_MemoryError, e.what());
    }
  });
  // nanobind reports instances still alive at interpreter exit as leaks.
  // Ours are, whenever another extension keeps a reference to the caller's
  // objects past its own teardown (a Python function left in a MuJoCo
  // global callback holds its module's globals, refreshers included): the
  // report would blame mjrefresh for memory the process is about to drop.
  nanobind::set_leak_warnings(false);
  register_contract(m);
  nanobind::class_<PyRefresher> refresher = register_refresher(m);
  register_mjdata_rows(m, refresher);
  register_bench(m);
}
