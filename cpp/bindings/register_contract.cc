#include <mujoco/mujoco.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <string>
#include <vector>

#include "bindings/arrays.h"
#include "bindings/register.h"
#include "core/model_fields.h"
#include "core/selection.h"
#include "core/worker_pool.h"
#include "fast/fast_engine.h"
#include "fast/kernel_isa.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace mjrefresh::bind {
namespace {

std::optional<std::string> py_fast_uncovered(uintptr_t model_address,
                                             const std::vector<int>& sensor_ids) {
  if (model_address == 0) throw nb::value_error("model: null mjModel address");
  const mjModel* m = reinterpret_cast<const mjModel*>(model_address);
  for (int i : sensor_ids) {
    if (i < 0 || i >= m->nsensor) {
      throw nb::value_error(("sensor_ids: expected ids in [0, " + std::to_string(m->nsensor) +
                             "), got " + std::to_string(i))
                                .c_str());
    }
  }
  std::string why = fast_uncovered(m, sensor_ids);
  if (why.empty()) return std::nullopt;
  return why;
}

// How this module was compiled, from the compiler's own predefined macros
// (so every build path -- source, wheel, sanitizer -- reports itself).
nb::dict build_info() {
  nb::dict info;
#if defined(__clang__)
  info["compiler"] = std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
  info["compiler"] = std::string("gcc ") + __VERSION__;
#else
  info["compiler"] = std::string("unknown compiler");
#endif
#if defined(__OPTIMIZE__)
  info["optimized"] = true;
#else
  info["optimized"] = false;
#endif
#if defined(NDEBUG)
  info["assertions"] = false;
#else
  info["assertions"] = true;
#endif
#if defined(__SANITIZE_ADDRESS__)
  info["sanitizers"] = "address,undefined";
#else
  info["sanitizers"] = "";
#endif
#if defined(__AVX2__)
  info["simd"] = "avx2";
#elif defined(__SSE2__)
  info["simd"] = "sse2";
#else
  info["simd"] = "none";
#endif
  info["mujoco_headers"] = MJREFRESH_MUJOCO_VERSION;
  return info;
}

}  // namespace

void register_contract(nb::module_& m) {
  m.attr("MUJOCO_BUILD_VERSION") = MJREFRESH_MUJOCO_VERSION;
  m.attr("BUILD_INFO") = build_info();
  m.def(
      "mujoco_runtime_version", [] { return std::string(mj_versionString()); },
      "Version string of the libmujoco actually loaded by this process.");
  m.def("fast_kernel_isa", &kernel_isa,
        "Instruction set a fast engine built now runs its pair pass with: 'avx2' or 'sse2' "
        "(MJREFRESH_FAST_ISA chooses; ValueError for a value it cannot honour).");
  m.def("available_cpus", &available_cpus, "Logical CPUs in this process's affinity set.");
  m.def("cpu_in_affinity", &cpu_in_affinity, "cpu"_a,
        "True if `cpu` is in this process's affinity set (always False off Linux).");

  nb::enum_<Stage> stage(m, "Stage", nb::is_flag(), nb::is_arithmetic(),
                         "MuJoCo stage functions a refresh may run, in mj_forward's order.");
  for (const StageInfo& s : kStages) stage.value(s.name, s.bit);

  nb::enum_<EngineKind>(m, "EngineKind", "Engine that refreshes the rows.")
      .value("exact", EngineKind::kExact, "MuJoCo's own stage functions per row.")
      .value("fast", EngineKind::kFast, "Fused kernels over the needed bodies only.");

  nb::list fields;
  for (int f = 0; f < kNumModelFields; ++f) {
    const ModelFieldInfo& info = model_field_info(f);
    fields.append(nb::make_tuple(info.name, info.count, info.width));
  }
  m.attr("MODEL_FIELDS") = nb::tuple(fields);
  nb::list inputs;
  for (const InputInfo& i : kInputs) {
    inputs.append(nb::make_tuple(
        i.name, i.count ? nb::object(nb::str(i.count)) : nb::object(nb::none()), i.width));
  }
  m.attr("INPUTS") = nb::tuple(inputs);
  nb::list outputs;
  for (const OutputInfo& o : kOutputs) {
    outputs.append(nb::make_tuple(
        o.name, indexed_by_name(o.indexed_by), o.width,
        o.mjdata_field ? nb::object(nb::str(o.mjdata_field)) : nb::object(nb::none())));
  }
  m.attr("OUTPUTS") = nb::tuple(outputs);
  m.def("not_an_array", &not_an_array, "name"_a, "type_name"_a, "written"_a,
        "The TypeError text for an argument that is not an array (the one text every layer "
        "uses).");

  m.def("refuse_lazy_view", &refuse_lazy_view, "name"_a, "obj"_a.none(),
        "TypeError if `obj` is a lazy negation or conjugation of its memory (torch's neg/conj "
        "bits), which a DLPack view would read and write as the plain memory.");

  m.def("fast_uncovered", &py_fast_uncovered, "model_address"_a, "sensor_ids"_a,
        "None if the fast engine computes every sensor in `sensor_ids` of the model at "
        "`model_address` (a mujoco.MjModel's _address), else why not.");
}

}  // namespace mjrefresh::bind
