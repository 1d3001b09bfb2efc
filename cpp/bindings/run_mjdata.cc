// PyRefresher::run_mjdata: run() over rows that live in separate mjData.
//
// The Python side (src/mjrefresh/backends/mjdata_rows.py) validates the
// mjData once when it binds them (type, model sizes, no duplicates), builds
// their pointer tables once (mjdata_rows) and keeps the MjData objects alive
// as long as the tables; run_mjdata checks the outputs and the rows on every
// call and releases the GIL around the kernel only.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>

#include "bindings/callback_guard.h"
#include "bindings/py_refresher.h"
#include "bindings/register.h"
#include "core/mjdata_rows.h"

namespace mjrefresh::bind {

using namespace nb::literals;

namespace {

// What the mirror copies into each mjData must be float64, like the field.
void check_mirrored_f64(const char* name, OutType type) {
  if (type != OutType::kFloat64) {
    throw nb::type_error((std::string(name) +
                          ": expected dtype float64 (it is copied into each MjData), got float32")
                             .c_str());
  }
}

}  // namespace

std::unique_ptr<MjDataRows> PyRefresher::mjdata_rows(const AddressArray& datas) const {
  const int64_t n = static_cast<int64_t>(datas.shape(0));
  if (n < 1) throw nb::value_error("datas: expected at least one mjData address, got none");
  mjData* const* ptrs = reinterpret_cast<mjData* const*>(datas.data());
  for (int64_t r = 0; r < n; ++r) {
    if (ptrs[r] == nullptr) {
      throw nb::value_error(("datas[" + std::to_string(r) + "]: null mjData address").c_str());
    }
  }
  return std::make_unique<MjDataRows>(ptrs, n, nmocap_ > 0);
}

std::pair<std::vector<int64_t>, std::string> PyRefresher::run_mjdata(
    const RowsArray& rows, const MjDataRows& datas, bool with_time, bool poses,
    const std::optional<OutArray>& sensordata, const std::optional<OutArray>& body_pos,
    const std::optional<OutArray>& body_quat, const std::optional<OutArray>& body_linvel,
    const std::optional<OutArray>& body_angvel, const std::optional<OutArray>& body_pos_rel,
    const std::optional<OutArray>& body_quat_rel, const std::optional<OutArray>& site_pos,
    const std::optional<OutArray>& site_mat, const std::optional<MaskArray>& dirty) {
  if (impl_->closed()) throw std::runtime_error("Refresher is closed");
  const int64_t n = datas.size();
  const Outputs arrays = parse_outputs(n, sensordata, body_pos, body_quat, body_linvel, body_angvel,
                                       body_pos_rel, body_quat_rel, site_pos, site_mat);
  const std::pair<const char*, const OutType*> mirrored[] = {
      {"sensordata", arrays.sensordata.valid() ? &arrays.sensordata.type : nullptr},
      {"body_pos", arrays.body_pos.valid() ? &arrays.body_pos.type : nullptr},
      {"body_quat", arrays.body_quat.valid() ? &arrays.body_quat.type : nullptr},
      {"site_pos", arrays.site_pos.valid() ? &arrays.site_pos.type : nullptr},
      {"site_mat", arrays.site_mat.valid() ? &arrays.site_mat.type : nullptr},
  };
  for (const auto& [name, type] : mirrored) {
    const bool pose = std::string(name) != "sensordata";
    if (type && (poses || !pose)) check_mirrored_f64(name, *type);
  }
  const std::vector<int64_t> ids = checked_rows(rows, n);
  if (dirty) check_mask(*dirty, n);
  std::vector<Touched> written;
  if (dirty) written.push_back({"dirty", footprint_of(*dirty)});
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
  for (const auto& [name, a] : outputs) {
    if (*a) written.push_back({std::string("out.") + name, footprint_of(**a)});
  }
  check_disjoint({{"rows", footprint_of(rows)}}, written);

  // The engine writes sensordata straight into each row's mjData; the mirror
  // then streams those columns into the caller's array.
  Outputs out = arrays;
  if (arrays.sensordata.valid()) out.sensordata = datas.sensordata(nsensordata_);
  const Inputs in = datas.inputs(nq_, nv_, nmocap_, with_time);
  const MjDataMirror mirror(datas, impl_->engine().selection(), arrays, poses);
  check_no_callbacks(impl_->engine().stage_functions());
  RunResult result;
  {
    nb::gil_scoped_release release;
    result = impl_->run(ids.data(), static_cast<int64_t>(ids.size()), in, out, &mirror);
  }
  if (result.closed) throw std::runtime_error("Refresher is closed");
  if (dirty) clear_refreshed(*dirty, ids, result.failed_rows);
  return {std::move(result.failed_rows), std::move(result.message)};
}

void register_mjdata_rows(nb::module_& m, nb::class_<PyRefresher>& refresher) {
  nb::class_<MjDataRows>(m, "MjDataRows",
                         "Per-row pointer tables over a list of mjData (Refresher.mjdata_rows).")
      .def_prop_ro("size", &MjDataRows::size);
  refresher.def("mjdata_rows", &PyRefresher::mjdata_rows, "datas"_a.noconvert(),
                "Pointer tables over mjData (`datas`: their addresses, int64, one per row, "
                "already validated by the caller, who keeps them alive while the tables are "
                "used).");
  std::apply(
      [&](auto... outputs) {
        refresher.def("run_mjdata", &PyRefresher::run_mjdata, "rows"_a, "datas"_a, "with_time"_a,
                      "poses"_a, outputs..., "dirty"_a.noconvert().none() = nb::none(),
                      "Refresh `rows` of separate mjData (`datas`: from mjdata_rows): state is "
                      "read from each mjData, outputs are written to the arrays, the selected "
                      "sensordata columns (and with `poses` the body and site poses) into "
                      "each mjData. Returns (failed_rows, message).");
      },
      output_args());
}

}  // namespace mjrefresh::bind
