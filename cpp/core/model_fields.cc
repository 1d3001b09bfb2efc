#include "core/model_fields.h"

#include <mujoco/mjxmacro.h>

#include <cstddef>
#include <string_view>
#include <type_traits>

namespace mjrefresh {
namespace {

// Names of the supported fields, in ModelField order.
constexpr std::string_view kSupported[kNumModelFields] = {
    "body_pos", "body_quat", "body_ipos", "body_iquat", "body_mass", "body_inertia",  "jnt_pos",
    "jnt_axis", "site_pos",  "site_quat", "geom_pos",   "geom_quat", "sensor_cutoff",
};

// Every pointer field of the mjModel sections the supported fields live in,
// as MJMODEL_POINTERS lists them: (type, name, rows count, values per row).
struct PointerField {
  std::string_view name;
  const char* count;
  int width;
  bool is_mjtnum;
  std::size_t data_offset;            // offsetof(mjModel, name)
  int64_t (*rows)(const mjModel* m);  // m->count (int or mjtSize by release)
};

// Column counts of fields we do not support name these per-model sizes
// (MJMODEL_POINTERS_PREAMBLE); any value works for them here.
namespace dims {
[[maybe_unused]] constexpr int nuser_body = 0, nuser_jnt = 0, nuser_geom = 0, nuser_site = 0,
                               nuser_cam = 0, nuser_tendon = 0, nuser_actuator = 0,
                               nuser_sensor = 0, nq = 0, nv = 0, na = 0, nu = 0, nmocap = 0;
}  // namespace dims
using namespace dims;

#define X(type, name, nr, nc)                \
  PointerField{#name,                        \
               #nr,                          \
               static_cast<int>(nc),         \
               std::is_same_v<type, mjtNum>, \
               offsetof(mjModel, name),      \
               [](const mjModel* m) { return static_cast<int64_t>(m->nr); }},
#define XNV X
constexpr PointerField kPointerFields[] = {
    MJMODEL_POINTERS_BODY MJMODEL_POINTERS_JOINT MJMODEL_POINTERS_GEOM MJMODEL_POINTERS_SITE
        MJMODEL_POINTERS_SENSOR};
#undef XNV
#undef X

constexpr const PointerField* find_field(std::string_view name) {
  for (const PointerField& f : kPointerFields) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

constexpr bool all_supported_found() {
  for (std::string_view name : kSupported) {
    const PointerField* f = find_field(name);
    if (f == nullptr || !f->is_mjtnum) return false;
  }
  return true;
}
static_assert(all_supported_found(),
              "mjxmacro.h no longer lists a supported model field as an mjtNum array of "
              "mjModel: update kSupported/ModelField for this MuJoCo release");

struct Table {
  ModelFieldInfo info[kNumModelFields];
  std::size_t data_offset[kNumModelFields];
  int64_t (*rows[kNumModelFields])(const mjModel* m);
};

constexpr Table make_table() {
  Table t{};
  for (int i = 0; i < kNumModelFields; ++i) {
    const PointerField* f = find_field(kSupported[i]);
    t.info[i] = {kSupported[i].data(), f->count, f->width};
    t.data_offset[i] = f->data_offset;
    t.rows[i] = f->rows;
  }
  return t;
}
constexpr Table kTable = make_table();

}  // namespace

const ModelFieldInfo& model_field_info(int field) { return kTable.info[field]; }

double* field_data(mjModel* m, int field) {
  if (field < 0 || field >= kNumModelFields) return nullptr;
  return *reinterpret_cast<double**>(reinterpret_cast<char*>(m) + kTable.data_offset[field]);
}

const double* field_data(const mjModel* m, int field) {
  return field_data(const_cast<mjModel*>(m), field);
}

int64_t field_size(const mjModel* m, int field) {
  if (field < 0 || field >= kNumModelFields) return 0;
  return kTable.info[field].width * kTable.rows[field](m);
}

void recompute_subtree_mass(mjModel* m) {
  // Same accumulation as mj_setConst: own mass, then children into parents
  // in decreasing body id (children always have larger ids than parents).
  for (int b = 0; b < m->nbody; ++b) m->body_subtreemass[b] = m->body_mass[b];
  for (int b = m->nbody - 1; b > 0; --b) {
    m->body_subtreemass[m->body_parentid[b]] += m->body_subtreemass[b];
  }
}

}  // namespace mjrefresh
