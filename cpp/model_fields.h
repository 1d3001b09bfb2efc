// Per-environment model fields (domain randomisation): which mjModel fields a
// refresh can take per row, and where they live in an mjModel.
//
// Contract
// - The enum order is part of the Python<->C++ contract (plan.py lists the
//   same names in the same order in MODEL_FIELDS).
// - field_data(m, f) points into `m`; field_size(m, f) is the number of
//   doubles one row supplies (the whole field of one model). Both are pure.
// - recompute_subtree_mass(m): body_subtreemass from body_mass, as
//   mj_setConst derives it; run after a row's body_mass was written.
// - Threading: pure functions on the model they are given; callers give
//   each thread its own model copy.
#pragma once

#include <cstdint>

#include <mujoco/mujoco.h>

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

double* field_data(mjModel* m, int field);
const double* field_data(const mjModel* m, int field);
int64_t field_size(const mjModel* m, int field);
void recompute_subtree_mass(mjModel* m);

}  // namespace mjrefresh
