// The MjData-list binding: Refresher.mjdata_rows (pointer tables over
// separate mjData) and Refresher.bind_mjdata (a Bound whose inputs are read
// from each row's mjData and whose refreshed rows are copied into it).
//
// The Python side (src/mjrefresh/backends/mjdata_rows.py) validates the
// mjData once when it binds them (type, model sizes, no duplicates), builds
// their pointer tables once and keeps the MjData objects alive as long as
// the tables; the outputs are parsed here once, like any binding's
// (bindings/parse.h).
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>

#include <memory>
#include <string>

#include "bindings/py_refresher.h"
#include "bindings/register.h"
#include "core/mjdata_rows.h"

namespace mjrefresh::bind {

using namespace nb::literals;

std::unique_ptr<MjDataRows> PyRefresher::mjdata_rows(const AddressArray& datas) const {
  const int64_t n = static_cast<int64_t>(datas.shape(0));
  if (n < 1) value_error("datas: expected at least one mjData address, got none");
  mjData* const* ptrs = reinterpret_cast<mjData* const*>(datas.data());
  for (int64_t r = 0; r < n; ++r) {
    if (ptrs[r] == nullptr) value_error("datas[" + std::to_string(r) + "]: null mjData address");
  }
  return std::make_unique<MjDataRows>(model(), ptrs, n);
}

void register_mjdata_rows(nb::module_& m, nb::class_<PyRefresher>& refresher) {
  nb::class_<MjDataRows>(m, "MjDataRows",
                         "Per-row pointer tables over a list of mjData (Refresher.mjdata_rows).")
      .def_prop_ro("size", &MjDataRows::size);
  refresher.def("mjdata_rows", &PyRefresher::mjdata_rows, "datas"_a.noconvert(),
                "Pointer tables over mjData (`datas`: their addresses, int64, one per row, "
                "already validated by the caller, who keeps them alive while the tables are "
                "used).");
  refresher.def(
      "bind_mjdata",
      [](nb::handle self, nb::handle datas, nb::handle outputs, bool with_time, bool poses) {
        PyRefresher& r = nb::cast<PyRefresher&>(self);
        const mjModel* model = r.model();  // raises if closed
        const MjDataRows& rows = nb::cast<const MjDataRows&>(datas);
        return Bound(nb::borrow(self),
                     parse_mjdata_outputs(model, r.selection(), outputs, rows, poses),
                     nb::borrow(datas), with_time, poses);
      },
      "datas"_a, "outputs"_a, "with_time"_a, "poses"_a,
      "A Bound over rows kept in separate mjData (`datas`: from mjdata_rows): state is read "
      "from each mjData, `outputs` (names to arrays) are written, and the selected sensordata "
      "columns (with `poses` also the body and site poses) are copied into each mjData.");
}

}  // namespace mjrefresh::bind
