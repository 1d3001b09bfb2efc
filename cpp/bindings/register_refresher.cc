#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <stdexcept>
#include <tuple>

#include "bindings/callback_guard.h"
#include "bindings/register.h"
#include "core/worker_pool.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace mjrefresh::bind {
namespace {

[[noreturn]] void value_error(const std::string& message) {
  throw nb::value_error(message.c_str());
}

}  // namespace

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
  try {
    impl_ = std::make_unique<Refresher>(m, config);
  } catch (const std::invalid_argument& e) {
    throw nb::value_error(e.what());
  }
  const Selection& sel = impl_->engine().selection();
  nq_ = m->nq;
  nv_ = m->nv;
  nmocap_ = m->nmocap;
  nsensordata_ = m->nsensordata;
  nbodies_ = static_cast<int64_t>(sel.bodies.size());
  nsites_ = static_cast<int64_t>(sel.sites.size());
  has_rel_ = sel.relative_to >= 0;
  for (int f : sel.model_fields) field_sizes_.emplace_back(f, field_size(m, f));
}

std::pair<std::vector<int64_t>, std::string> PyRefresher::run(
    const RowsArray& rows, const InArray& qpos, const InArray& qvel,
    const std::optional<InArray>& mocap_pos, const std::optional<InArray>& mocap_quat,
    const std::optional<InArray>& time, const std::optional<OutArray>& sensordata,
    const std::optional<OutArray>& body_pos, const std::optional<OutArray>& body_quat,
    const std::optional<OutArray>& body_linvel, const std::optional<OutArray>& body_angvel,
    const std::optional<OutArray>& body_pos_rel, const std::optional<OutArray>& body_quat_rel,
    const std::optional<OutArray>& site_pos, const std::optional<OutArray>& site_mat,
    const std::vector<InArray>& model_fields, const std::optional<MaskArray>& dirty) {
  if (impl_->closed()) throw std::runtime_error("Refresher is closed");
  const Inputs in = parse_inputs(qpos, qvel, mocap_pos, mocap_quat, time, model_fields);
  const int64_t n = in.qpos.rows;
  const Outputs out = parse_outputs(n, sensordata, body_pos, body_quat, body_linvel, body_angvel,
                                    body_pos_rel, body_quat_rel, site_pos, site_mat);
  const std::vector<int64_t> ids = checked_rows(rows, n);
  if (dirty) check_mask(*dirty, n);

  // One overlap check over every array the call reads or writes.
  std::vector<Touched> read, written;
  auto touch = [](std::vector<Touched>& v, std::string name, const auto& a) {
    if (a) v.push_back({std::move(name), footprint_of(*a)});
  };
  read.push_back({"rows", footprint_of(rows)});
  read.push_back({"qpos", footprint_of(qpos)});
  read.push_back({"qvel", footprint_of(qvel)});
  touch(read, "mocap_pos", mocap_pos);
  touch(read, "mocap_quat", mocap_quat);
  touch(read, "time", time);
  for (size_t k = 0; k < model_fields.size(); ++k) {
    const char* name = model_field_info(field_sizes_[k].first).name;
    read.push_back({std::string("model_fields['") + name + "']", footprint_of(model_fields[k])});
  }
  touch(written, "dirty", dirty);
  const std::pair<const char*, const std::optional<OutArray>*> outputs[] = {
      {"sensordata", &sensordata},
      {"body_pos", &body_pos},
      {"body_quat", &body_quat},
      {"body_linvel", &body_linvel},
      {"body_angvel", &body_angvel},
      {"body_pos_rel", &body_pos_rel},
      {"body_quat_rel", &body_quat_rel},
      {"site_pos", &site_pos},
      {"site_mat", &site_mat}};
  for (const auto& [name, a] : outputs) touch(written, std::string("out.") + name, *a);
  check_disjoint(read, written);
  check_no_callbacks(impl_->engine().stage_functions());

  RunResult result;
  {
    nb::gil_scoped_release release;
    result = impl_->run(ids.data(), static_cast<int64_t>(ids.size()), in, out);
  }
  if (result.closed) throw std::runtime_error("Refresher is closed");
  if (dirty) clear_refreshed(*dirty, ids, result.failed_rows);
  return {std::move(result.failed_rows), std::move(result.message)};
}

Outputs PyRefresher::parse_outputs(
    int64_t n, const std::optional<OutArray>& sensordata, const std::optional<OutArray>& body_pos,
    const std::optional<OutArray>& body_quat, const std::optional<OutArray>& body_linvel,
    const std::optional<OutArray>& body_angvel, const std::optional<OutArray>& body_pos_rel,
    const std::optional<OutArray>& body_quat_rel, const std::optional<OutArray>& site_pos,
    const std::optional<OutArray>& site_mat) const {
  // Widths come from the contract table (core/selection.h kOutputs).
  auto items = [&](OutputId id, const std::optional<OutArray>& a, int64_t count) {
    return out_items(kOutputs[id].name, a, n, count, kOutputs[id].width);
  };
  Outputs out;
  out.sensordata = out_matrix("sensordata", sensordata, n, nsensordata_);
  out.body_pos = items(kOutBodyPos, body_pos, nbodies_);
  out.body_quat = items(kOutBodyQuat, body_quat, nbodies_);
  out.body_linvel = items(kOutBodyLinvel, body_linvel, nbodies_);
  out.body_angvel = items(kOutBodyAngvel, body_angvel, nbodies_);
  if ((body_pos_rel || body_quat_rel) && !has_rel_) {
    throw nb::value_error("body_pos_rel/body_quat_rel: no relative_to body was selected");
  }
  out.body_pos_rel = items(kOutBodyPosRel, body_pos_rel, nbodies_);
  out.body_quat_rel = items(kOutBodyQuatRel, body_quat_rel, nbodies_);
  out.site_pos = items(kOutSitePos, site_pos, nsites_);
  out.site_mat = items(kOutSiteMat, site_mat, nsites_);
  return out;
}

Inputs PyRefresher::parse_inputs(const InArray& qpos, const InArray& qvel,
                                 const std::optional<InArray>& mocap_pos,
                                 const std::optional<InArray>& mocap_quat,
                                 const std::optional<InArray>& time,
                                 const std::vector<InArray>& model_fields) const {
  if (qpos.ndim() != 2) {
    value_error("qpos: expected a 2-D array (N, " + std::to_string(nq_) + "), got shape " +
                shape_of(qpos));
  }
  const int64_t n = static_cast<int64_t>(qpos.shape(0));
  Inputs in;
  in.qpos = input_rows("qpos", qpos, n, nq_);
  in.qvel = input_rows("qvel", qvel, n, nv_);
  if (nmocap_ > 0) {
    if (!mocap_pos || !mocap_quat) {
      const std::string k = std::to_string(nmocap_);
      value_error("mocap_pos/mocap_quat: the model has " + k +
                  " mocap bodies; expected arrays of shape (N, " + k + ", 3) and (N, " + k +
                  ", 4), got None");
    }
    in.mocap_pos = input_rows_items("mocap_pos", *mocap_pos, n, nmocap_, 3);
    in.mocap_quat = input_rows_items("mocap_quat", *mocap_quat, n, nmocap_, 4);
  }
  if (time) in.time = input_time(*time, n);
  // Per-environment model fields, in the order the selection declared them;
  // each row's values must be one contiguous block (like the model field).
  if (model_fields.size() != field_sizes_.size()) {
    value_error("model_fields: expected " + std::to_string(field_sizes_.size()) +
                " arrays (the fields declared at construction), got " +
                std::to_string(model_fields.size()));
  }
  for (size_t k = 0; k < model_fields.size(); ++k) {
    const auto [f, size] = field_sizes_[k];
    in.fields[f] = input_field("model_fields[" + std::to_string(k) + "]", model_fields[k], n, size);
  }
  return in;
}

void PyRefresher::close() {
  nb::gil_scoped_release release;  // close() waits for a running call
  impl_->close();
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

  nb::class_<PyRefresher> cls(m, "Refresher",
                              "Native refresher: private model copy, scratch state, worker pool.");
  cls.def(nb::init<uintptr_t, const Config&>(), "model_address"_a, "config"_a);
  std::apply(
      [&](auto... outputs) {
        cls.def("run", &PyRefresher::run, "rows"_a, "qpos"_a.noconvert(), "qvel"_a.noconvert(),
                "mocap_pos"_a.noconvert().none() = nb::none(),
                "mocap_quat"_a.noconvert().none() = nb::none(),
                "time"_a.noconvert().none() = nb::none(), outputs...,
                "model_fields"_a = std::vector<InArray>(),
                "dirty"_a.noconvert().none() = nb::none(),
                "Refresh `rows` (sorted unique int64). Validates everything before writing. "
                "With `dirty` (a bool mask of length N), clears the entries of the refreshed "
                "rows. Returns (failed_rows, message); failed_rows is empty on success.");
      },
      output_args());
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
