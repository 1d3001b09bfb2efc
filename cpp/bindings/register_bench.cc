// Benchmark-only hooks of _core (bench_hooks/): the C++ stage-function loop
// the microbenchmark compares with. (The exact engine's stage-function
// timing is Bound.stage_seconds.)
#include <stdexcept>

#include "bench_hooks/stage_loop.h"
#include "bindings/register.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace mjrefresh::bind {
namespace {

void py_stage_loop(nb::handle model, nb::handle qpos_obj, nb::handle qvel_obj,
                   nb::handle sensordata_obj, int col_start, int col_stop) {
  // `model` is a mujoco.MjModel; its _address is the mjModel* of the same
  // libmujoco this module links against.
  const mjModel* m = reinterpret_cast<const mjModel*>(nb::cast<uintptr_t>(model.attr("_address")));
  const InArray qpos = view_in("qpos", qpos_obj), qvel = view_in("qvel", qvel_obj);
  const OutArray sensordata = view_out("sensordata", sensordata_obj);
  if (qpos.ndim() != 2) value_error("qpos: expected a 2-D array");
  const int64_t n = static_cast<int64_t>(qpos.shape(0));
  check_float64("qpos", qpos);
  check_float64("qvel", qvel);
  check_shape("qpos", qpos, {n, m->nq});
  check_shape("qvel", qvel, {n, m->nv});
  check_shape("sensordata", sensordata, {n, m->nsensordata});
  if (col_start < 0 || col_stop > m->nsensordata || col_start > col_stop) {
    value_error("col_start/col_stop: invalid column range");
  }
  const RowView<const double> q{static_cast<const double*>(qpos.data()), n, m->nq,
                                n ? qpos.stride(0) : 0};
  const RowView<const double> v{static_cast<const double*>(qvel.data()), n, m->nv,
                                n ? qvel.stride(0) : 0};
  OutView s;
  s.data = sensordata.data();
  s.type = out_type("sensordata", sensordata);
  s.rows = n;
  s.items = m->nsensordata;
  s.width = s.item_stride = 1;
  s.row_stride = n ? sensordata.stride(0) : 0;
  without_gil([&] { stage_loop(m, q, v, s, col_start, col_stop); });
}

}  // namespace

void register_bench(nb::module_& m) {
  m.def("stage_loop", &py_stage_loop, "model"_a, "qpos"_a, "qvel"_a, "sensordata"_a, "col_start"_a,
        "col_stop"_a,
        "Benchmark floor: single-thread C++ loop over kinematics, comPos, comVel, sensorPos, "
        "sensorVel; writes sensordata[:, col_start:col_stop].");
}

}  // namespace mjrefresh::bind
