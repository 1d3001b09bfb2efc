// nanobind module mjrefresh._core: the private native layer.
//
// Contract
// - Validation: every array argument is checked here, while holding the GIL,
//   before any row is touched (dtype, ndim, shape against the model and the
//   selection, contiguous last axis, row order). A bad argument raises
//   TypeError/ValueError naming it, with expected vs got; nothing is written.
// - No copies: arrays are passed with noconvert(), so a view that does not
//   fit is rejected instead of silently copied (a copied output would never
//   reach the caller).
// - GIL: released only around Refresher::run (which also takes the call
//   lock, so a second Python thread waits without holding the GIL).
// - Errors from worker threads come back as RuntimeError naming the row.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <mujoco/mujoco.h>

#include "refresher.h"
#include "stage_loop.h"
#include "worker_pool.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace mjrefresh {
namespace {

using InArray = nb::ndarray<nb::ro, nb::device::cpu>;
using OutArray = nb::ndarray<nb::device::cpu>;
using RowsArray = nb::ndarray<const int64_t, nb::ndim<1>, nb::device::cpu>;

template <class A>
std::string shape_of(const A& a) {
  std::ostringstream s;
  s << "(";
  for (size_t i = 0; i < a.ndim(); ++i) s << (i ? ", " : "") << a.shape(i);
  s << (a.ndim() == 1 ? ",)" : ")");
  return s.str();
}

template <class A>
std::string dtype_of(const A& a) {
  const auto dt = a.dtype();
  const char* kind = dt.code == static_cast<uint8_t>(nb::dlpack::dtype_code::Float) ? "float"
                     : dt.code == static_cast<uint8_t>(nb::dlpack::dtype_code::Int) ? "int"
                     : dt.code == static_cast<uint8_t>(nb::dlpack::dtype_code::UInt) ? "uint"
                     : dt.code == static_cast<uint8_t>(nb::dlpack::dtype_code::Bool) ? "bool"
                                                                                   : "other";
  return std::string(kind) + std::to_string(dt.bits);
}

std::string expected_shape(std::initializer_list<int64_t> dims) {
  std::ostringstream s;
  s << "(";
  size_t i = 0;
  for (int64_t d : dims) s << (i++ ? ", " : "") << d;
  s << (dims.size() == 1 ? ",)" : ")");
  return s.str();
}

template <class A>
void check_shape(const char* name, const A& a, std::initializer_list<int64_t> dims) {
  bool ok = a.ndim() == dims.size();
  size_t i = 0;
  for (int64_t d : dims) {
    if (!ok) break;
    ok = static_cast<int64_t>(a.shape(i++)) == d;
  }
  if (!ok) {
    throw nb::value_error((std::string(name) + ": expected shape " + expected_shape(dims) +
                           ", got " + shape_of(a))
                              .c_str());
  }
  // The last axis must be contiguous (unless it has a single element).
  if (a.ndim() >= 1 && a.shape(a.ndim() - 1) > 1 && a.stride(a.ndim() - 1) != 1) {
    throw nb::value_error((std::string(name) + ": the last axis must be contiguous (stride " +
                           std::to_string(a.itemsize()) + " bytes), got stride " +
                           std::to_string(a.stride(a.ndim() - 1) * a.itemsize()) + " bytes")
                              .c_str());
  }
}

RowView<const double> input_rows(const char* name, const InArray& a, int64_t n, int64_t cols) {
  if (a.dtype() != nb::dtype<double>()) {
    throw nb::type_error(
        (std::string(name) + ": expected dtype float64, got " + dtype_of(a)).c_str());
  }
  check_shape(name, a, {n, cols});
  return {static_cast<const double*>(a.data()), n, cols, a.ndim() ? a.stride(0) : 0};
}

OutType out_type(const char* name, const OutArray& a) {
  if (a.dtype() == nb::dtype<double>()) return OutType::kFloat64;
  if (a.dtype() == nb::dtype<float>()) return OutType::kFloat32;
  throw nb::type_error(
      (std::string(name) + ": expected dtype float64 or float32, got " + dtype_of(a)).c_str());
}

OutMatrix out_matrix(const char* name, const std::optional<OutArray>& a, int64_t n,
                     int64_t cols) {
  if (!a) return {};
  OutMatrix m;
  m.type = out_type(name, *a);
  check_shape(name, *a, {n, cols});
  if (n > 1 && a->stride(0) == 0) {
    throw nb::value_error((std::string(name) + ": rows alias each other (row stride 0)").c_str());
  }
  m.data = a->data();
  m.rows = n;
  m.cols = cols;
  m.row_stride = a->stride(0);
  return m;
}

OutItems out_items(const char* name, const std::optional<OutArray>& a, int64_t n, int64_t items,
                   int64_t width) {
  if (!a) return {};
  OutItems o;
  o.type = out_type(name, *a);
  check_shape(name, *a, {n, items, width});
  if ((n > 1 && a->stride(0) == 0) || (items > 1 && a->stride(1) < width && a->stride(1) > -width)) {
    throw nb::value_error((std::string(name) + ": elements alias each other").c_str());
  }
  o.data = a->data();
  o.rows = n;
  o.items = items;
  o.width = width;
  o.row_stride = a->stride(0);
  o.item_stride = a->stride(1);
  return o;
}

void check_rows(const RowsArray& rows, int64_t n) {
  const int64_t* r = rows.data();
  const int64_t count = static_cast<int64_t>(rows.shape(0));
  const int64_t stride = rows.stride(0);
  for (int64_t i = 0; i < count; ++i) {
    const int64_t v = r[i * stride];
    if (v < 0 || v >= n) {
      throw nb::value_error(("rows: expected row ids in [0, " + std::to_string(n) + "), got " +
                             std::to_string(v) + " at position " + std::to_string(i))
                                .c_str());
    }
    if (i > 0 && v <= r[(i - 1) * stride]) {
      throw nb::value_error(("rows: expected sorted unique row ids, got " +
                             std::to_string(r[(i - 1) * stride]) + " then " + std::to_string(v) +
                             " at position " + std::to_string(i))
                                .c_str());
    }
  }
}

class PyRefresher {
 public:
  PyRefresher(uintptr_t model_address, uint32_t stages,
              std::vector<std::pair<int, int>> columns, std::vector<int> sensors,
              std::vector<int> bodies, int relative_to, std::vector<int> sites, int num_threads,
              std::vector<int> cpu_ids, const std::string& engine,
              std::vector<int> model_fields) {
    if (model_address == 0) throw nb::value_error("model: null mjModel address");
    if (num_threads < 1) {
      throw nb::value_error(
          ("num_threads: expected >= 1 after planning, got " + std::to_string(num_threads))
              .c_str());
    }
    if (engine != "exact" && engine != "fast") {
      throw nb::value_error(
          ("engine: expected 'exact' or 'fast', got '" + engine + "'").c_str());
    }
    for (int cpu : cpu_ids) {
      if (!cpu_in_affinity(cpu)) {
        throw nb::value_error(("cpu_ids: cpu " + std::to_string(cpu) +
                               " is not in this process's CPU affinity set")
                                  .c_str());
      }
    }
    const mjModel* m = reinterpret_cast<const mjModel*>(model_address);
    Selection sel;
    sel.stages = stages;
    sel.columns = std::move(columns);
    sel.sensors = std::move(sensors);
    sel.bodies = std::move(bodies);
    sel.relative_to = relative_to;
    sel.sites = std::move(sites);
    sel.model_fields = std::move(model_fields);
    try {
      const EngineKind kind = engine == "fast" ? EngineKind::kFast : EngineKind::kExact;
      impl_ = std::make_unique<Refresher>(m, std::move(sel), kind, num_threads,
                                          std::move(cpu_ids));
    } catch (const std::invalid_argument& e) {
      throw nb::value_error(e.what());
    }
    nq_ = m->nq;
    nv_ = m->nv;
    nmocap_ = m->nmocap;
    nsensordata_ = m->nsensordata;
    nbodies_ = static_cast<int64_t>(impl_->engine().selection().bodies.size());
    nsites_ = static_cast<int64_t>(impl_->engine().selection().sites.size());
    has_rel_ = impl_->engine().selection().relative_to >= 0;
    for (int f : impl_->engine().selection().model_fields) {
      field_sizes_.emplace_back(f, field_size(m, f));
    }
  }

  // Returns (failed_rows, message): empty on success; otherwise the sorted
  // rows whose refresh raised a MuJoCo error (all other rows were refreshed)
  // and MuJoCo's message for the first of them.
  std::pair<std::vector<int64_t>, std::string> run(const RowsArray& rows, const InArray& qpos, const InArray& qvel,
           const std::optional<InArray>& mocap_pos, const std::optional<InArray>& mocap_quat,
           const std::optional<InArray>& time, const std::optional<OutArray>& sensordata,
           const std::optional<OutArray>& body_pos, const std::optional<OutArray>& body_quat,
           const std::optional<OutArray>& body_linvel, const std::optional<OutArray>& body_angvel,
           const std::optional<OutArray>& body_pos_rel,
           const std::optional<OutArray>& body_quat_rel, const std::optional<OutArray>& site_pos,
           const std::optional<OutArray>& site_mat, const std::vector<InArray>& model_fields) {
    if (impl_->closed()) throw std::runtime_error("Refresher is closed");
    const Inputs in = parse_inputs(qpos, qvel, mocap_pos, mocap_quat, time, model_fields);
    const int64_t n = in.qpos.rows;
    Outputs out;
    out.sensordata = out_matrix("sensordata", sensordata, n, nsensordata_);
    out.body_pos = out_items("body_pos", body_pos, n, nbodies_, 3);
    out.body_quat = out_items("body_quat", body_quat, n, nbodies_, 4);
    out.body_linvel = out_items("body_linvel", body_linvel, n, nbodies_, 3);
    out.body_angvel = out_items("body_angvel", body_angvel, n, nbodies_, 3);
    if ((body_pos_rel || body_quat_rel) && !has_rel_) {
      throw nb::value_error("body_pos_rel/body_quat_rel: no relative_to body was selected");
    }
    out.body_pos_rel = out_items("body_pos_rel", body_pos_rel, n, nbodies_, 3);
    out.body_quat_rel = out_items("body_quat_rel", body_quat_rel, n, nbodies_, 4);
    out.site_pos = out_items("site_pos", site_pos, n, nsites_, 3);
    out.site_mat = out_items("site_mat", site_mat, n, nsites_, 9);
    check_rows(rows, n);

    // Rows are read through a contiguous copy of the index list only when the
    // caller passed a strided one (rare; the Python layer passes contiguous).
    std::vector<int64_t> row_copy;
    const int64_t count = static_cast<int64_t>(rows.shape(0));
    const int64_t* row_ptr = rows.data();
    if (count > 1 && rows.stride(0) != 1) {
      row_copy.resize(count);
      for (int64_t i = 0; i < count; ++i) row_copy[i] = row_ptr[i * rows.stride(0)];
      row_ptr = row_copy.data();
    }
    RunResult result;
    {
      nb::gil_scoped_release release;
      result = impl_->run(row_ptr, count, in, out);
    }
    if (result.closed) throw std::runtime_error("Refresher is closed");
    return {std::move(result.failed_rows), std::move(result.message)};
  }

  // Benchmark hook: seconds spent inside the planned MuJoCo stage functions
  // for `rows` (exact engine, one thread, no outputs written).
  double stage_seconds(const RowsArray& rows, const InArray& qpos, const InArray& qvel,
                       const std::optional<InArray>& mocap_pos,
                       const std::optional<InArray>& mocap_quat,
                       const std::optional<InArray>& time,
                       const std::vector<InArray>& model_fields) {
    if (impl_->closed()) throw std::runtime_error("Refresher is closed");
    const Inputs in = parse_inputs(qpos, qvel, mocap_pos, mocap_quat, time, model_fields);
    check_rows(rows, in.qpos.rows);
    if (rows.shape(0) > 1 && rows.stride(0) != 1) throw nb::value_error("rows: expected contiguous");
    nb::gil_scoped_release release;
    return impl_->stage_seconds(rows.data(), static_cast<int64_t>(rows.shape(0)), in);
  }

  void close() {
    nb::gil_scoped_release release;  // close() waits for a running call
    impl_->close();
  }
  bool closed() const { return impl_->closed(); }
  int num_threads() const { return impl_->num_threads(); }
  int last_participants() const { return impl_->last_participants(); }
  int64_t min_rows_per_thread() const { return impl_->engine().min_rows_per_thread(); }

 private:
  Inputs parse_inputs(const InArray& qpos, const InArray& qvel,
                      const std::optional<InArray>& mocap_pos,
                      const std::optional<InArray>& mocap_quat,
                      const std::optional<InArray>& time,
                      const std::vector<InArray>& model_fields) const {
    if (qpos.ndim() != 2) {
      throw nb::value_error(("qpos: expected a 2-D array (N, " + std::to_string(nq_) +
                             "), got shape " + shape_of(qpos))
                                .c_str());
    }
    const int64_t n = static_cast<int64_t>(qpos.shape(0));
    Inputs in;
    in.qpos = input_rows("qpos", qpos, n, nq_);
    in.qvel = input_rows("qvel", qvel, n, nv_);
    if (nmocap_ > 0) {
      if (!mocap_pos || !mocap_quat) {
        throw nb::value_error(("mocap_pos/mocap_quat: the model has " + std::to_string(nmocap_) +
                               " mocap bodies; expected arrays of shape (N, " +
                               std::to_string(nmocap_) + ", 3) and (N, " +
                               std::to_string(nmocap_) + ", 4), got None")
                                  .c_str());
      }
      in.mocap_pos = input_rows_items("mocap_pos", *mocap_pos, n, nmocap_, 3);
      in.mocap_quat = input_rows_items("mocap_quat", *mocap_quat, n, nmocap_, 4);
    }
    if (time) {
      if (time->dtype() != nb::dtype<double>()) {
        throw nb::type_error(("time: expected dtype float64, got " + dtype_of(*time)).c_str());
      }
      if (time->ndim() != 1 || static_cast<int64_t>(time->shape(0)) != n) {
        throw nb::value_error(("time: expected shape " + expected_shape({n}) + ", got " +
                               shape_of(*time))
                                  .c_str());
      }
      in.time = {static_cast<const double*>(time->data()), n, 1, time->stride(0)};
    }
    // Per-environment model fields, in the order the selection declared them;
    // each row's values must be one contiguous block (like the model field).
    if (model_fields.size() != field_sizes_.size()) {
      throw nb::value_error(("model_fields: expected " + std::to_string(field_sizes_.size()) +
                             " arrays (the fields declared at construction), got " +
                             std::to_string(model_fields.size()))
                                .c_str());
    }
    for (size_t k = 0; k < model_fields.size(); ++k) {
      const auto [f, size] = field_sizes_[k];
      const InArray& a = model_fields[k];
      const std::string name = std::string("model_fields[") + std::to_string(k) + "]";
      if (a.dtype() != nb::dtype<double>()) {
        throw nb::type_error((name + ": expected dtype float64, got " + dtype_of(a)).c_str());
      }
      int64_t per_row = 1;
      for (size_t i = 1; i < a.ndim(); ++i) per_row *= static_cast<int64_t>(a.shape(i));
      if (a.ndim() < 1 || static_cast<int64_t>(a.shape(0)) != n || per_row != size) {
        throw nb::value_error((name + ": expected " + std::to_string(size) +
                               " values per row for N = " + std::to_string(n) +
                               " rows, got shape " + shape_of(a))
                                  .c_str());
      }
      // The trailing axes must form one C-contiguous block per row (a field
      // with no items, e.g. jnt_pos of a model without joints, is read never;
      // numpy gives such arrays arbitrary strides).
      int64_t expect = 1;
      for (size_t i = a.ndim(); size > 0 && i-- > 1;) {
        if (a.shape(i) > 1 && a.stride(i) != expect) {
          throw nb::value_error((name + ": each row's values must be contiguous").c_str());
        }
        expect *= static_cast<int64_t>(a.shape(i));
      }
      in.fields[f] = {static_cast<const double*>(a.data()), n, size,
                      a.ndim() ? a.stride(0) : 0};
    }
    return in;
  }

  static RowView<const double> input_rows_items(const char* name, const InArray& a, int64_t n,
                                                int64_t items, int64_t width) {
    if (a.dtype() != nb::dtype<double>()) {
      throw nb::type_error(
          (std::string(name) + ": expected dtype float64, got " + dtype_of(a)).c_str());
    }
    check_shape(name, a, {n, items, width});
    if (items > 1 && a.stride(1) != width) {
      throw nb::value_error(
          (std::string(name) + ": each row must be contiguous (" + std::to_string(items) + "x" +
           std::to_string(width) + " values)")
              .c_str());
    }
    return {static_cast<const double*>(a.data()), n, items * width, a.stride(0)};
  }

  std::unique_ptr<Refresher> impl_;
  int64_t nq_ = 0, nv_ = 0, nmocap_ = 0, nsensordata_ = 0, nbodies_ = 0, nsites_ = 0;
  bool has_rel_ = false;
  std::vector<std::pair<int, int64_t>> field_sizes_;  // (ModelField, doubles per row)
};

void py_stage_loop(nb::handle model, const InArray& qpos, const InArray& qvel,
                   const OutArray& sensordata, int col_start, int col_stop) {
  // `model` is a mujoco.MjModel; its _address is the mjModel* of the same
  // libmujoco this module links against.
  const mjModel* m = reinterpret_cast<const mjModel*>(nb::cast<uintptr_t>(model.attr("_address")));
  if (qpos.ndim() != 2) throw nb::value_error("qpos: expected a 2-D array");
  const int64_t n = static_cast<int64_t>(qpos.shape(0));
  RowView<const double> q = input_rows("qpos", qpos, n, m->nq);
  RowView<const double> v = input_rows("qvel", qvel, n, m->nv);
  OutMatrix s = out_matrix("sensordata", sensordata, n, m->nsensordata);
  if (col_start < 0 || col_stop > m->nsensordata || col_start > col_stop) {
    throw nb::value_error("col_start/col_stop: invalid column range");
  }
  nb::gil_scoped_release release;
  stage_loop(m, q, v, s, col_start, col_stop);
}

}  // namespace
}  // namespace mjrefresh

NB_MODULE(_core, m) {
  using namespace mjrefresh;
  m.doc() = "Private native core of mjrefresh (use the public mjrefresh API instead).";
  m.attr("MUJOCO_BUILD_VERSION") = MJREFRESH_MUJOCO_VERSION;
  m.def("mujoco_runtime_version", [] { return std::string(mj_versionString()); },
        "Version string of the libmujoco actually loaded by this process.");
  m.def("available_cpus", &available_cpus, "Logical CPUs in this process's affinity set.");
  m.def("cpu_in_affinity", &cpu_in_affinity, "cpu"_a,
        "True if `cpu` is in this process's affinity set (always False off Linux).");

  m.attr("STAGE_KINEMATICS") = static_cast<uint32_t>(kKinematics);
  m.attr("STAGE_COMPOS") = static_cast<uint32_t>(kComPos);
  m.attr("STAGE_CAMLIGHT") = static_cast<uint32_t>(kCamLight);
  m.attr("STAGE_FLEX") = static_cast<uint32_t>(kFlex);
  m.attr("STAGE_TENDON") = static_cast<uint32_t>(kTendon);
  m.attr("STAGE_TRANSMISSION") = static_cast<uint32_t>(kTransmission);
  m.attr("STAGE_SENSORPOS") = static_cast<uint32_t>(kSensorPos);
  m.attr("STAGE_COMVEL") = static_cast<uint32_t>(kComVel);
  m.attr("STAGE_FWDVELOCITY") = static_cast<uint32_t>(kFwdVelocity);
  m.attr("STAGE_SENSORVEL") = static_cast<uint32_t>(kSensorVel);

  nb::class_<PyRefresher>(m, "Refresher",
                          "Native refresher: private model copy, scratch state, worker pool.")
      .def(nb::init<uintptr_t, uint32_t, std::vector<std::pair<int, int>>, std::vector<int>,
                    std::vector<int>, int, std::vector<int>, int, std::vector<int>,
                    const std::string&, std::vector<int>>(),
           "model_address"_a, "stages"_a, "columns"_a, "sensors"_a, "bodies"_a,
           "relative_to"_a, "sites"_a, "num_threads"_a, "cpu_ids"_a, "engine"_a,
           "model_fields"_a = std::vector<int>())
      .def("run", &PyRefresher::run, "rows"_a, "qpos"_a.noconvert(), "qvel"_a.noconvert(),
           "mocap_pos"_a.noconvert().none() = nb::none(),
           "mocap_quat"_a.noconvert().none() = nb::none(),
           "time"_a.noconvert().none() = nb::none(),
           "sensordata"_a.noconvert().none() = nb::none(),
           "body_pos"_a.noconvert().none() = nb::none(),
           "body_quat"_a.noconvert().none() = nb::none(),
           "body_linvel"_a.noconvert().none() = nb::none(),
           "body_angvel"_a.noconvert().none() = nb::none(),
           "body_pos_rel"_a.noconvert().none() = nb::none(),
           "body_quat_rel"_a.noconvert().none() = nb::none(),
           "site_pos"_a.noconvert().none() = nb::none(),
           "site_mat"_a.noconvert().none() = nb::none(),
           "model_fields"_a = std::vector<InArray>(),
           "Refresh `rows` (sorted unique int64). Validates everything before writing. "
           "Returns (failed_rows, message); failed_rows is empty on success.")
      .def("stage_seconds", &PyRefresher::stage_seconds, "rows"_a, "qpos"_a.noconvert(),
           "qvel"_a.noconvert(), "mocap_pos"_a.noconvert().none() = nb::none(),
           "mocap_quat"_a.noconvert().none() = nb::none(),
           "time"_a.noconvert().none() = nb::none(),
           "model_fields"_a = std::vector<InArray>(),
           "Benchmark hook: seconds spent inside the planned MuJoCo stage functions for "
           "`rows` (exact engine, one thread, no outputs written).")
      .def("close", &PyRefresher::close, "Join the worker threads and free scratch state.")
      .def_prop_ro("closed", &PyRefresher::closed)
      .def_prop_ro("num_threads", &PyRefresher::num_threads)
      .def_prop_ro("last_participants", &PyRefresher::last_participants,
                   "Threads (caller included) the last call woke up.")
      .def_prop_ro("min_rows_per_thread", &PyRefresher::min_rows_per_thread,
                   "Rows per woken thread below which a call wakes fewer threads.");

  m.def("stage_loop", &py_stage_loop, "model"_a, "qpos"_a.noconvert(),
        "qvel"_a.noconvert(), "sensordata"_a.noconvert(), "col_start"_a, "col_stop"_a,
        "Benchmark floor: single-thread C++ loop over kinematics, comPos, comVel, sensorPos, "
        "sensorVel; writes sensordata[:, col_start:col_stop].");
}
