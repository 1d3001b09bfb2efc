// _core.Refresher and _core.Bound: the Python face of core/refresher.h.
//
// Contract
// - Construction: PyRefresher(model_address, Config); the address is a
//   mujoco.MjModel's _address (an mjModel* of the libmujoco this module
//   links). Bad arguments raise ValueError naming them; refused threads
//   RuntimeError; allocation failure MemoryError.
// - bind(arrays, model_fields, num_envs) parses and checks every array once
//   (bindings/parse.h) and returns a Bound that keeps them alive.
//   bind_mjdata(datas, outputs, with_time, poses) does the same for rows
//   kept in separate mjData (pointer tables from mjdata_rows(); the caller
//   keeps the MjData alive, the Bound keeps the tables).
// - Bound.run(rows) / run_dirty(dirty): checks the rows (or the mask) and
//   that they share no byte with any array the call writes (the mask: with
//   any array at all), checks that no global callback the plan would reach
//   is set, then releases the GIL around Refresher::run only. Errors from
//   worker threads come back as (failed_rows, message); "Refresher is
//   closed" (RuntimeError) is raised here and nowhere else.
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "bindings/parse.h"
#include "core/mjdata_rows.h"
#include "core/refresher.h"

namespace mjrefresh::bind {

using Failures = std::pair<std::vector<int64_t>, std::string>;

// Whether the interpreter is shutting down (Py_IsFinalizing, or its private
// name before 3.13, looked up once; callable without the GIL).
bool interpreter_finalizing();
// Never returns: for a thread that must not take the GIL back because the
// interpreter is shutting down (the process ends around it).
[[noreturn]] void park_forever();
// PyEval_RestoreThread(state), or, for a daemon thread that CPython < 3.14
// ends with pthread_exit because the interpreter started finalizing while it
// waited for the GIL, park_forever() in place of the forced unwind (the thread
// holds no GIL then).
void restore_or_park(PyThreadState* state);

// f() with the GIL released. Not nanobind's gil_scoped_release: at
// interpreter exit, CPython < 3.14 ends a daemon thread that takes the GIL
// back with pthread_exit, whose forced unwind cannot pass nanobind's call
// layer (std::terminate, or a null exception in its translator). A thread
// that comes back from f() during shutdown parks instead, as CPython 3.14
// parks such threads itself; one that finds the interpreter finalizing only
// while it waits for the GIL parks too (restore_or_park).
template <class F>
auto without_gil(F&& f) -> decltype(f()) {
  using R = decltype(f());
  PyThreadState* state = PyEval_SaveThread();
  std::exception_ptr error;
  std::conditional_t<std::is_void_v<R>, bool, std::optional<R>> result{};
  try {
    if constexpr (std::is_void_v<R>) {
      f();
    } else {
      result = f();
    }
  } catch (...) {  // f()'s own exceptions, rethrown with the GIL held
    error = std::current_exception();
  }
  if (interpreter_finalizing()) park_forever();
  restore_or_park(state);
  if (error) std::rethrow_exception(error);
  if constexpr (!std::is_void_v<R>) return std::move(*result);
}

class PyRefresher {
 public:
  PyRefresher(uintptr_t model_address, const Config& config);

  // mjData addresses, one per row (MjData._address values).
  using AddressArray = nb::ndarray<const int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
  // Pointer tables over these mjData (checked non-null; the caller checked
  // the rest and keeps them alive while the tables are used).
  std::unique_ptr<MjDataRows> mjdata_rows(const AddressArray& datas) const;

  nb::dict output_shapes(int64_t n) const;
  void close();
  bool closed() const { return impl_->closed(); }
  int num_threads() const { return impl_->num_threads(); }
  int last_participants() const { return impl_->last_participants(); }
  int64_t min_rows_per_thread() const {
    return closed() ? 0 : impl_->engine().min_rows_per_thread();
  }
  int64_t memory_bytes() const { return impl_->memory_bytes(); }
  int64_t participant_bytes() const { return impl_->participant_bytes(); }
  Refresher& impl() { return *impl_; }
  // The engine's model and selection, for parsing; RuntimeError if closed.
  const mjModel* model() const;
  const Selection& selection() const;

 private:
  std::unique_ptr<Refresher> impl_;
  Selection sel_;  // what the plan writes, kept after close (output_shapes)
  int64_t nsensordata_ = 0;
};

// A call bound to checked arrays: see the contract above.
class Bound {
 public:
  Bound(nb::object refresher, CallArrays arrays, nb::object datas, bool with_time, bool poses);
  Failures run(const RowsArray& rows);
  // (rows refreshed, failed_rows, message); refreshed rows are cleared in `dirty`.
  std::tuple<int64_t, std::vector<int64_t>, std::string> run_dirty(nb::handle dirty);
  // Seconds the planned MuJoCo stage functions alone take for `rows` on one
  // thread (benchmark hook; exact engine only, else None).
  std::optional<double> stage_seconds(const RowsArray& rows);
  int64_t num_envs() const { return arrays_.n; }
  nb::list outputs() const;

 private:
  RunResult call(const std::vector<int64_t>& ids);
  PyRefresher& refresher();

  nb::object owner_;        // the _core.Refresher: alive while this is
  nb::object datas_owner_;  // the _core.MjDataRows of an MjData binding, or None
  CallArrays arrays_;
  const MjDataRows* datas_ = nullptr;
  Inputs in_;    // what the engine reads (the arrays, or the mjData tables)
  Outputs out_;  // what the engine writes (sensordata: into each mjData, for MjData rows)
  bool poses_ = false;
};

}  // namespace mjrefresh::bind
