// The arrays a refresh reads (inputs) and writes (outputs): one table each,
// the only place their names, shapes and mjData fields are spelled, and the
// per-call views of the caller's arrays, indexed by InputId / OutputId.
//
// Contract
// - kInputs / kOutputs are the Python<->C++ contract: exported as
//   _core.INPUTS / _core.OUTPUTS; the binding parses a call's arrays by
//   looping over them (bindings/parse.h), Python derives the output fields,
//   shapes, the StateCache readers and the MjData mirror set from them.
// - Adding an output: one row in kOutputs and its OutputId (same order), and
//   the engines' code that computes it. Adding an input: one row in kInputs
//   and its InputId, and the engine code that reads it (the exact engine
//   copies every input into its mjData field by itself).
// - Shapes: an input is (N,) when it has no count, else (N, count) for
//   width 1 or (N, count, width). An output is (N, items, width) with items
//   the selected bodies/sites ("bodies", "relative", "sites"), or
//   (N, nsensordata) ("sensordata": one column per item).
// - Ownership: the views never own memory; the binding keeps the caller's
//   arrays alive while a call (or a bound call) uses them.
#pragma once

#include <mujoco/mujoco.h>

#include <cstdint>

#include "core/array_view.h"
#include "core/model_fields.h"

namespace mjrefresh {

// When an input must be given.
enum class Need {
  kAlways,     // qpos, qvel
  kIfCounted,  // when the model has items of its count (mocap bodies)
  kIfClock,    // when a clock sensor is selected; otherwise optional (0)
};

struct InputInfo {
  const char* name;
  const char* count;                   // mjModel size of the middle axis, or nullptr
  int64_t (*items)(const mjModel* m);  // that size, or nullptr
  int width;                           // values per item
  Need need;
  double* (*in_mjdata)(mjData* d);  // where an mjData keeps it
};

enum InputId : int { kInQpos, kInQvel, kInMocapPos, kInMocapQuat, kInTime, kNumInputs };

inline constexpr InputInfo kInputs[] = {
    {"qpos", "nq", [](const mjModel* m) -> int64_t { return m->nq; }, 1, Need::kAlways,
     [](mjData* d) { return d->qpos; }},
    {"qvel", "nv", [](const mjModel* m) -> int64_t { return m->nv; }, 1, Need::kAlways,
     [](mjData* d) { return d->qvel; }},
    {"mocap_pos", "nmocap", [](const mjModel* m) -> int64_t { return m->nmocap; }, 3,
     Need::kIfCounted, [](mjData* d) { return d->mocap_pos; }},
    {"mocap_quat", "nmocap", [](const mjModel* m) -> int64_t { return m->nmocap; }, 4,
     Need::kIfCounted, [](mjData* d) { return d->mocap_quat; }},
    {"time", nullptr, nullptr, 1, Need::kIfClock, [](mjData* d) { return &d->time; }},
};
static_assert(sizeof(kInputs) / sizeof(kInputs[0]) == kNumInputs);

// Values per row of input `i` for model `m`.
inline int64_t input_size(const mjModel* m, int i) {
  return (kInputs[i].items ? kInputs[i].items(m) : 1) * kInputs[i].width;
}

struct Inputs {
  RowView<const double> in[kNumInputs];
  // Per-row model field values, indexed by ModelField; a row of fields[f]
  // holds field_size(m, f) doubles. Valid exactly for Selection::model_fields.
  RowView<const double> fields[kNumModelFields];
  const RowView<const double>& operator[](InputId i) const { return in[i]; }
  RowView<const double>& operator[](InputId i) { return in[i]; }
};

// What the middle axis of an output is indexed by.
enum class IndexedBy {
  kBodies,      // Selection::bodies
  kRelative,    // the same bodies, in the relative_to body's frame
  kSites,       // Selection::sites
  kSensordata,  // the columns of mjData.sensordata (width 1)
};

struct OutputInfo {
  const char* name;
  IndexedBy indexed_by;
  int width;                        // values per item
  const char* mjdata_field;         // the mjData field it mirrors (MjData lists), or nullptr
  double* (*in_mjdata)(mjData* d);  // that field
};

enum OutputId : int {
  kOutBodyPos,
  kOutBodyQuat,
  kOutBodyLinvel,
  kOutBodyAngvel,
  kOutBodyPosRel,
  kOutBodyQuatRel,
  kOutSitePos,
  kOutSiteMat,
  kOutSensordata,
  kNumOutputs,
};

#define MJREFRESH_MJDATA(field) #field, [](mjData* d) { return d->field; }
inline constexpr OutputInfo kOutputs[] = {
    {"body_pos", IndexedBy::kBodies, 3, MJREFRESH_MJDATA(xpos)},
    {"body_quat", IndexedBy::kBodies, 4, MJREFRESH_MJDATA(xquat)},
    {"body_linvel", IndexedBy::kBodies, 3, nullptr, nullptr},
    {"body_angvel", IndexedBy::kBodies, 3, nullptr, nullptr},
    {"body_pos_rel", IndexedBy::kRelative, 3, nullptr, nullptr},
    {"body_quat_rel", IndexedBy::kRelative, 4, nullptr, nullptr},
    {"site_pos", IndexedBy::kSites, 3, MJREFRESH_MJDATA(site_xpos)},
    {"site_mat", IndexedBy::kSites, 9, MJREFRESH_MJDATA(site_xmat)},
    {"sensordata", IndexedBy::kSensordata, 1, MJREFRESH_MJDATA(sensordata)},
};
#undef MJREFRESH_MJDATA
static_assert(sizeof(kOutputs) / sizeof(kOutputs[0]) == kNumOutputs);

// Names of IndexedBy values, as _core.OUTPUTS spells them.
inline const char* indexed_by_name(IndexedBy by) {
  switch (by) {
    case IndexedBy::kBodies:
      return "bodies";
    case IndexedBy::kRelative:
      return "relative";
    case IndexedBy::kSites:
      return "sites";
    case IndexedBy::kSensordata:
      return "sensordata";
  }
  return "";
}

struct Outputs {
  OutView out[kNumOutputs];
  const OutView& operator[](OutputId o) const { return out[o]; }
  OutView& operator[](OutputId o) { return out[o]; }
};

}  // namespace mjrefresh
