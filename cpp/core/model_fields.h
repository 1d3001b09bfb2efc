// Per-environment model fields (domain randomisation): which mjModel fields a
// refresh can take per row, and where they live in an mjModel.
//
// Contract
// - The enum order is part of the Python<->C++ contract: _core.MODEL_FIELDS
//   lists (name, count attribute, values per item) in this order, and the
//   Python planner (plan.py MODEL_FIELDS) reads it from there.
// - Where each field lives (its mjModel member, the mjModel count that gives
//   its rows, its values per row) is generated from MuJoCo's own mjxmacro.h
//   (MJMODEL_POINTERS) at compile time, so a MuJoCo release that renames or
//   reshapes a field fails the build instead of reading the wrong memory.
// - field_data(m, f) points into `m`; field_size(m, f) is the number of
//   doubles one row supplies (the whole field of one model). Both are pure.
// - recompute_subtree_mass(m): body_subtreemass from body_mass, as
//   mj_setConst derives it; run after a row's body_mass was written.
// - Threading: pure functions on the model they are given; callers give
//   each thread its own model copy.
#pragma once

#include <mujoco/mujoco.h>

#include <cstdint>

namespace mjrefresh {

enum ModelField : int {
  kBodyPos,
  kBodyQuat,
  kBodyIpos,
  kBodyIquat,
  kBodyMass,
  kBodyInertia,
  kJntPos,
  kJntAxis,
  kSitePos,
  kSiteQuat,
  kGeomPos,
  kGeomQuat,
  kSensorCutoff,
  kNumModelFields,
};

// One supported field as mjxmacro.h describes it.
struct ModelFieldInfo {
  const char* name;   // mjModel member, e.g. "body_pos"
  const char* count;  // mjModel member counting its items, e.g. "nbody"
  int width;          // values per item
};
const ModelFieldInfo& model_field_info(int field);

double* field_data(mjModel* m, int field);
const double* field_data(const mjModel* m, int field);
int64_t field_size(const mjModel* m, int field);
void recompute_subtree_mass(mjModel* m);

}  // namespace mjrefresh
