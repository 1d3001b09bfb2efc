#include <dlfcn.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <stdexcept>
#include <thread>
#include <tuple>

#include "bindings/register.h"
#include "core/worker_pool.h"
#include "exact/exact_engine.h"
#include "fast/fast_engine.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace mjrefresh::bind {

bool interpreter_finalizing() {
  using Query = int (*)();
  static const Query query = [] {
    void* f = dlsym(RTLD_DEFAULT, "Py_IsFinalizing");
    if (f == nullptr) f = dlsym(RTLD_DEFAULT, "_Py_IsFinalizing");
    return reinterpret_cast<Query>(f);
  }();
  return query != nullptr && query() != 0;
}

void park_forever() {
  for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
}

void restore_or_park(PyThreadState* state) {
  try {
    PyEval_RestoreThread(state);
  } catch (...) {
    // The only thing that leaves this C function: pthread_exit's forced
    // unwind (take_gil ending a daemon thread once the interpreter is
    // finalizing). Its handler never ends, so it is never rethrown; the
    // GIL was dropped before pthread_exit.
    park_forever();
  }
}

PyRefresher::PyRefresher(uintptr_t model_address, const Config& config) {
  if (model_address == 0) throw nb::value_error("model: null mjModel address");
  if (config.num_threads < 1) {
    value_error("num_threads: expected >= 1 after planning, got " +
                std::to_string(config.num_threads));
  }
  for (int cpu : config.cpu_ids) {
    if (!cpu_in_affinity(cpu)) {
      value_error("cpu_ids: cpu " + std::to_string(cpu) +
                  " is not in this process's CPU affinity set");
    }
  }
  const mjModel* m = reinterpret_cast<const mjModel*>(model_address);
  const int threads = config.num_threads;
  std::unique_ptr<RowEngine> engine;
  try {
    validate_selection(m, config);
    Selection selection = config;  // the engines keep only the selection
    if (config.engine == EngineKind::kFast) {
      engine = std::make_unique<FastEngine>(m, std::move(selection), threads);
    } else {
      engine = std::make_unique<ExactEngine>(m, std::move(selection), threads);
    }
  } catch (const std::invalid_argument& e) {
    throw nb::value_error(e.what());
  }
  impl_ = std::make_unique<Refresher>(std::move(engine), threads, config.cpu_ids);
  sel_ = config;
  nsensordata_ = m->nsensordata;
}

const mjModel* PyRefresher::model() const {
  if (impl_->closed()) throw std::runtime_error(kClosedMessage);
  return impl_->engine().model();
}

const Selection& PyRefresher::selection() const {
  if (impl_->closed()) throw std::runtime_error(kClosedMessage);
  return impl_->engine().selection();
}

nb::dict PyRefresher::output_shapes(int64_t n) const {
  if (n < 0) value_error("num_envs: expected an int >= 0, got " + std::to_string(n));
  return bind::output_shapes(nsensordata_, sel_, n);  // also once closed
}

void PyRefresher::close() {
  without_gil([&] { impl_->close(); });  // close() waits for a running call
}

nb::class_<PyRefresher> register_refresher(nb::module_& m) {
  nb::class_<Config>(m, "Config",
                     "What a native Refresher computes and how (filled by the Python planner).")
      .def(nb::init<>())
      .def_rw("stages", &Config::stages, "Stage flags the exact engine runs.")
      .def_rw("columns", &Config::columns, "Merged sensordata column ranges [start, stop).")
      .def_rw("sensors", &Config::sensors, "Sensor ids MuJoCo must compute.")
      .def_rw("bodies", &Config::bodies, "Body ids of the body_* outputs, in order.")
      .def_rw("relative_to", &Config::relative_to, "Body id of the *_rel frame, or -1.")
      .def_rw("sites", &Config::sites, "Site ids of the site_* outputs, in order.")
      .def_rw("model_fields", &Config::model_fields,
              "Indices into MODEL_FIELDS of the fields given per row.")
      .def_rw("engine", &Config::engine, "EngineKind that runs the rows.")
      .def_rw("num_threads", &Config::num_threads, "Participants, caller included (>= 1).")
      .def_rw("cpu_ids", &Config::cpu_ids, "CPUs to pin participants to (Linux), or empty.");

  nb::class_<Bound>(m, "Bound", "A refresh bound to arrays checked once (Refresher.bind).")
      .def("run", &Bound::run, "rows"_a,
           "Refresh `rows` (sorted unique int64). Returns (failed_rows, message); "
           "failed_rows is empty on success.")
      .def("run_dirty", &Bound::run_dirty, "dirty"_a,
           "Refresh the rows where the bool mask `dirty` (length N) is true and clear them, "
           "except failed rows. Returns (rows refreshed, failed_rows, message).")
      .def("stage_seconds", &Bound::stage_seconds, "rows"_a,
           "Seconds the planned MuJoCo stage functions alone take for `rows` on one thread, "
           "timed inside the core (the exact engine's cost floor); None for the fast engine.")
      .def_prop_ro("num_envs", &Bound::num_envs, "N, the rows of the bound arrays.")
      .def_prop_ro("outputs", &Bound::outputs, "Names of the bound outputs.");

  nb::class_<PyRefresher> cls(m, "Refresher",
                              "Native refresher: private model copy, scratch state, worker pool.");
  cls.def(nb::init<uintptr_t, const Config&>(), "model_address"_a, "config"_a);
  cls.def(
      "bind",
      [](nb::handle self, nb::handle arrays, nb::handle model_fields,
         std::optional<int64_t> num_envs) {
        PyRefresher& r = nb::cast<PyRefresher&>(self);
        const mjModel* model = r.model();  // raises if closed
        return Bound(nb::borrow(self),
                     parse_call(model, r.selection(), arrays, model_fields, num_envs), nb::none(),
                     false, false);
      },
      "arrays"_a, "model_fields"_a = nb::none(), "num_envs"_a = nb::none(),
      "Check `arrays` (input and output names to arrays) and `model_fields` (field names to "
      "(N, ...) arrays) once and return a Bound call over them. N is `num_envs`, or qpos's "
      "first axis.");
  cls.def("output_shapes", &PyRefresher::output_shapes, "num_envs"_a,
          "Shape of each output this plan writes, for `num_envs` rows, by name.");
  cls.def("close", &PyRefresher::close, "Join the worker threads and free scratch state.")
      .def_prop_ro("closed", &PyRefresher::closed)
      .def_prop_ro("num_threads", &PyRefresher::num_threads)
      .def_prop_ro("last_participants", &PyRefresher::last_participants,
                   "Threads (caller included) the last call woke up.")
      .def_prop_ro("min_rows_per_thread", &PyRefresher::min_rows_per_thread,
                   "Rows per woken thread below which a call wakes fewer threads.")
      .def_prop_ro("memory_bytes", &PyRefresher::memory_bytes,
                   "Bytes the engine holds (model copies and scratch state); 0 once closed.")
      .def_prop_ro("participant_bytes", &PyRefresher::participant_bytes,
                   "Bytes of scratch state each participant adds to memory_bytes.");
  return cls;
}

}  // namespace mjrefresh::bind
