#include <nanobind/stl/optional.h>
#include <nanobind/stl/vector.h>

#include <stdexcept>

#include "bench_hooks/stage_loop.h"
#include "bench_hooks/stage_seconds.h"
#include "bindings/callback_guard.h"
#include "bindings/register.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace mjrefresh::bind {
namespace {

double py_stage_seconds(PyRefresher& self, const RowsArray& rows, const InArray& qpos,
                        const InArray& qvel, const std::optional<InArray>& mocap_pos,
                        const std::optional<InArray>& mocap_quat,
                        const std::optional<InArray>& time,
                        const std::vector<InArray>& model_fields) {
  if (self.closed()) throw std::runtime_error("Refresher is closed");
  const Inputs in = self.parse_inputs(qpos, qvel, mocap_pos, mocap_quat, time, model_fields);
  const std::vector<int64_t> ids = checked_rows(rows, in.qpos.rows);
  check_no_callbacks(self.impl().engine().stage_functions());
  nb::gil_scoped_release release;
  return stage_seconds(self.impl(), ids.data(), static_cast<int64_t>(ids.size()), in);
}

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

void register_bench(nb::module_& m, nb::class_<PyRefresher>& refresher) {
  refresher.def("stage_seconds", &py_stage_seconds, "rows"_a, "qpos"_a.noconvert(),
                "qvel"_a.noconvert(), "mocap_pos"_a.noconvert().none() = nb::none(),
                "mocap_quat"_a.noconvert().none() = nb::none(),
                "time"_a.noconvert().none() = nb::none(), "model_fields"_a = std::vector<InArray>(),
                "Benchmark hook: seconds spent inside the planned MuJoCo stage functions for "
                "`rows` (exact engine, one thread, no outputs written).");
  m.def("stage_loop", &py_stage_loop, "model"_a, "qpos"_a.noconvert(), "qvel"_a.noconvert(),
        "sensordata"_a.noconvert(), "col_start"_a, "col_stop"_a,
        "Benchmark floor: single-thread C++ loop over kinematics, comPos, comVel, sensorPos, "
        "sensorVel; writes sensordata[:, col_start:col_stop].");
}

}  // namespace mjrefresh::bind
