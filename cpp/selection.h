// What one Refresher computes: the validated selection handed over by the
// Python planner (src/mjrefresh/plan.py), and the row-level inputs/outputs.
//
// Contract
// - Ownership: plain values; the arrays behind Inputs/Outputs belong to the
//   caller and outlive the call.
// - Validity: Selection is checked against the model by Refresher's
//   constructor (ids in range, column ranges sorted, merged and in bounds);
//   Inputs/Outputs are checked by the binding layer before any row runs.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "array_view.h"
#include "model_fields.h"

namespace mjrefresh {

// MuJoCo stage functions, in the order the exact engine calls them (the same
// order as mj_forward). Bit values are part of the Python<->C++ contract.
enum Stage : uint32_t {
  kKinematics = 1u << 0,    // mj_kinematics
  kComPos = 1u << 1,        // mj_comPos
  kCamLight = 1u << 2,      // mj_camlight
  kFlex = 1u << 3,          // mj_flex
  kTendon = 1u << 4,        // mj_tendon
  kTransmission = 1u << 5,  // mj_transmission
  kSensorPos = 1u << 6,     // mj_sensorPos
  kComVel = 1u << 7,        // mj_comVel
  kFwdVelocity = 1u << 8,   // mj_fwdVelocity (ten_velocity, actuator_velocity, comVel)
  kSensorVel = 1u << 9,     // mj_sensorVel (calls mj_subtreeVel lazily)
  kAllStages = (1u << 10) - 1,
};

struct Selection {
  uint32_t stages = 0;
  std::vector<std::pair<int, int>> columns;  // merged sensordata [start, stop)
  std::vector<int> sensors;                  // sensors MuJoCo must compute
  std::vector<int> bodies;                   // body_* outputs, in output order
  int relative_to = -1;                      // body id for *_rel outputs
  std::vector<int> sites;                    // site_* outputs
  std::vector<int> model_fields;             // ModelField values given per row
};

struct Inputs {
  RowView<const double> qpos, qvel, mocap_pos, mocap_quat;
  RowView<const double> time;  // (N, 1) view of a 1-D array; invalid: keep 0
  // Per-row model field values, indexed by ModelField; a row of fields[f]
  // holds field_size(m, f) doubles. Valid exactly for Selection::model_fields.
  RowView<const double> fields[kNumModelFields];
};

struct Outputs {
  OutMatrix sensordata;                 // (N, nsensordata)
  OutItems body_pos, body_quat;         // (N, B, 3), (N, B, 4)
  OutItems body_linvel, body_angvel;    // (N, B, 3)
  OutItems body_pos_rel, body_quat_rel; // (N, B, 3), (N, B, 4)
  OutItems site_pos, site_mat;          // (N, S, 3), (N, S, 9)
};

}  // namespace mjrefresh
