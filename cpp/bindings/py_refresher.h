// _core.Refresher: the Python face of core/refresher.h.
//
// Contract
// - Construction: PyRefresher(model_address, Config); the address is a
//   mujoco.MjModel's _address (an mjModel* of the libmujoco this module
//   links). Bad arguments raise ValueError naming them.
// - run(): validates every array while holding the GIL (bindings/arrays.h)
//   before any row is touched, then releases the GIL around Refresher::run.
//   Errors from worker threads come back as a (failed_rows, message) tuple;
//   a closed refresher raises RuntimeError.
// - mjdata_rows()/run_mjdata(): run() over rows kept in separate mjData:
//   pointer tables built once from their addresses (validated by the Python
//   binding, which keeps the MjData alive), inputs read and outputs written
//   through them, each refreshed row copied into its mjData (run_mjdata.cc).
// - parse_inputs(): the input half of run()'s checks, shared with the
//   benchmark hooks (register_bench.cc).
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bindings/arrays.h"
#include "core/mjdata_rows.h"
#include "core/refresher.h"

namespace mjrefresh::bind {

class PyRefresher {
 public:
  PyRefresher(uintptr_t model_address, const Config& config);

  // Returns (failed_rows, message): empty on success; otherwise the sorted
  // rows whose refresh raised a MuJoCo error (all other rows were refreshed)
  // and MuJoCo's message for the first of them.
  std::pair<std::vector<int64_t>, std::string> run(
      const RowsArray& rows, const InArray& qpos, const InArray& qvel,
      const std::optional<InArray>& mocap_pos, const std::optional<InArray>& mocap_quat,
      const std::optional<InArray>& time, const std::optional<OutArray>& sensordata,
      const std::optional<OutArray>& body_pos, const std::optional<OutArray>& body_quat,
      const std::optional<OutArray>& body_linvel, const std::optional<OutArray>& body_angvel,
      const std::optional<OutArray>& body_pos_rel, const std::optional<OutArray>& body_quat_rel,
      const std::optional<OutArray>& site_pos, const std::optional<OutArray>& site_mat,
      const std::vector<InArray>& model_fields, const std::optional<MaskArray>& dirty);

  // mjData addresses, one per row (MjData._address values).
  using AddressArray = nb::ndarray<const int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
  // Pointer tables over these mjData (checked non-null; the caller checked
  // the rest and keeps them alive while the tables are used).
  std::unique_ptr<MjDataRows> mjdata_rows(const AddressArray& datas) const;
  std::pair<std::vector<int64_t>, std::string> run_mjdata(
      const RowsArray& rows, const MjDataRows& datas, bool with_time, bool poses,
      const std::optional<OutArray>& sensordata, const std::optional<OutArray>& body_pos,
      const std::optional<OutArray>& body_quat, const std::optional<OutArray>& body_linvel,
      const std::optional<OutArray>& body_angvel, const std::optional<OutArray>& body_pos_rel,
      const std::optional<OutArray>& body_quat_rel, const std::optional<OutArray>& site_pos,
      const std::optional<OutArray>& site_mat, const std::optional<MaskArray>& dirty);

  Inputs parse_inputs(const InArray& qpos, const InArray& qvel,
                      const std::optional<InArray>& mocap_pos,
                      const std::optional<InArray>& mocap_quat, const std::optional<InArray>& time,
                      const std::vector<InArray>& model_fields) const;

  // The output half of run()'s checks (shared with run_mjdata).
  Outputs parse_outputs(
      int64_t n, const std::optional<OutArray>& sensordata, const std::optional<OutArray>& body_pos,
      const std::optional<OutArray>& body_quat, const std::optional<OutArray>& body_linvel,
      const std::optional<OutArray>& body_angvel, const std::optional<OutArray>& body_pos_rel,
      const std::optional<OutArray>& body_quat_rel, const std::optional<OutArray>& site_pos,
      const std::optional<OutArray>& site_mat) const;

  void close();
  bool closed() const { return impl_->closed(); }
  int num_threads() const { return impl_->num_threads(); }
  int last_participants() const { return impl_->last_participants(); }
  int64_t min_rows_per_thread() const { return impl_->engine().min_rows_per_thread(); }
  int64_t memory_bytes() const { return impl_->memory_bytes(); }
  int64_t participant_bytes() const { return impl_->participant_bytes(); }
  Refresher& impl() { return *impl_; }

 private:
  std::unique_ptr<Refresher> impl_;
  int64_t nq_ = 0, nv_ = 0, nmocap_ = 0, nsensordata_ = 0, nbodies_ = 0, nsites_ = 0;
  bool has_rel_ = false;
  std::vector<std::pair<int, int64_t>> field_sizes_;  // (ModelField, doubles per row)
};

}  // namespace mjrefresh::bind
