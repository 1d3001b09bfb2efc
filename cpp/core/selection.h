// What one Refresher computes: the validated selection handed over by the
// Python planner (src/mjrefresh/plan.py), and the row-level inputs/outputs.
//
// Contract
// - Python<->C++ contract table: kStages (exported as the flag enum
//   _core.Stage, member names = plan.py's stage names, in mj_forward order).
//   The input and output tables are in core/io_tables.h.
// - Ownership: plain values; the arrays behind Inputs/Outputs belong to the
//   caller and outlive the call.
// - Validity: Selection is checked against the model by Refresher's
//   constructor (ids in range, column ranges sorted, merged and in bounds);
//   Inputs/Outputs are checked by the binding layer before any row runs.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "core/io_tables.h"

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

// Items per row of output `o` (kOutputs) that `sel` writes (its middle
// axis; sensordata: nsensordata columns), or -1 if the selection writes
// none of it.
inline int64_t output_items(int64_t nsensordata, const Selection& sel, int o) {
  const int64_t bodies = static_cast<int64_t>(sel.bodies.size());
  switch (kOutputs[o].indexed_by) {
    case IndexedBy::kBodies:
      return bodies > 0 ? bodies : -1;
    case IndexedBy::kRelative:
      return bodies > 0 && sel.relative_to >= 0 ? bodies : -1;
    case IndexedBy::kSites:
      return sel.sites.empty() ? -1 : static_cast<int64_t>(sel.sites.size());
    case IndexedBy::kSensordata:
      return sel.columns.empty() ? -1 : nsensordata;
  }
  return -1;
}

}  // namespace mjrefresh
