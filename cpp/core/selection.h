// What one Refresher computes: the validated selection handed over by the
// Python planner (src/mjrefresh/plan.py), and the row-level inputs/outputs.
//
// Contract
// - Python<->C++ contract tables: kStages (exported as the flag enum
//   _core.Stage, member names = plan.py's stage names, in mj_forward order)
//   and kOutputs (exported as _core.OUTPUTS; outputs.py derives its widths
//   and names from it).
// - Ownership: plain values; the arrays behind Inputs/Outputs belong to the
//   caller and outlive the call.
// - Validity: Selection is checked against the model by Refresher's
//   constructor (ids in range, column ranges sorted, merged and in bounds);
//   Inputs/Outputs are checked by the binding layer before any row runs.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "core/array_view.h"
#include "core/model_fields.h"

namespace mjrefresh {

// MuJoCo stage functions, in the order the exact engine calls them (the same
// order as mj_forward). Names (kStages) are part of the Python<->C++
// contract; Python reads the bit values by name (_core.Stage).
enum Stage : uint32_t {
  kKinematics = 1u << 0,      // mj_kinematics
  kComPos = 1u << 1,          // mj_comPos
  kCamLight = 1u << 2,        // mj_camlight
  kFlex = 1u << 3,            // mj_flex
  kTendon = 1u << 4,          // mj_tendon
  kMakeM = 1u << 5,           // mj_makeM (crb + tendon armature: the mass matrix)
  kFactorM = 1u << 6,         // mj_factorM
  kCollision = 1u << 7,       // mj_collision (contacts; uses the arena)
  kMakeConstraint = 1u << 8,  // mj_makeConstraint (efc rows; uses the arena)
  kTransmission = 1u << 9,    // mj_transmission
  kSensorPos = 1u << 10,      // mj_sensorPos (mj_energyPos/Vel lazily)
  kComVel = 1u << 11,         // mj_comVel
  kFwdVelocity = 1u << 12,    // mj_fwdVelocity (ten/actuator velocity, comVel, efc_vel)
  kSensorVel = 1u << 13,      // mj_sensorVel (calls mj_subtreeVel lazily)
  kAllStages = (1u << 14) - 1,
};

struct StageInfo {
  Stage bit;
  const char* name;  // as the Python planner names the stage
};
inline constexpr StageInfo kStages[] = {
    {kKinematics, "kinematics"},
    {kComPos, "comPos"},
    {kCamLight, "camlight"},
    {kFlex, "flex"},
    {kTendon, "tendon"},
    {kMakeM, "makeM"},
    {kFactorM, "factorM"},
    {kCollision, "collision"},
    {kMakeConstraint, "makeConstraint"},
    {kTransmission, "transmission"},
    {kSensorPos, "sensorPos"},
    {kComVel, "comVel"},
    {kFwdVelocity, "fwdVelocity"},
    {kSensorVel, "sensorVel"},
};

struct Selection {
  Stage stages = Stage{};                    // OR of the stage functions to run
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

// The outputs a refresh writes, in Outputs' order: name, what the middle
// axis is indexed by ("bodies": Selection::bodies, "relative": the same
// bodies in the relative_to frame, "sites": Selection::sites, "sensordata":
// no middle axis, the columns of mjData.sensordata) and values per item.
struct OutputInfo {
  const char* name;
  const char* indexed_by;
  int width;  // values per item; sensordata: 1 per column (nsensordata columns)
};
inline constexpr OutputInfo kOutputs[] = {
    {"body_pos", "bodies", 3},    {"body_quat", "bodies", 4},      {"body_linvel", "bodies", 3},
    {"body_angvel", "bodies", 3}, {"body_pos_rel", "relative", 3}, {"body_quat_rel", "relative", 4},
    {"site_pos", "sites", 3},     {"site_mat", "sites", 9},        {"sensordata", "sensordata", 1},
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
static_assert(sizeof(kOutputs) / sizeof(kOutputs[0]) == kNumOutputs);

struct Outputs {
  OutMatrix sensordata;                  // (N, nsensordata)
  OutItems body_pos, body_quat;          // (N, B, 3), (N, B, 4)
  OutItems body_linvel, body_angvel;     // (N, B, 3)
  OutItems body_pos_rel, body_quat_rel;  // (N, B, 3), (N, B, 4)
  OutItems site_pos, site_mat;           // (N, S, 3), (N, S, 9)
};

}  // namespace mjrefresh
