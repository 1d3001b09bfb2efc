#include <cctype>
#include <string>

#include "fast/fast_engine.h"

namespace mjrefresh {
namespace {

// Lower-case name of an mjtSensor value without its prefix ("framepos"), as
// Python spells mujoco.mjtSensor(t).name.removeprefix("mjSENS_").lower().
std::string sensor_type_name(int type) {
  const char* upper = nullptr;
  switch (type) {
    // clang-format off: a table of cases, one macro per sensor type
#define MJREFRESH_SENSOR_NAME(n) \
  case mjSENS_##n:               \
    upper = #n;                  \
    break;
    MJREFRESH_SENSOR_NAME(TOUCH) MJREFRESH_SENSOR_NAME(ACCELEROMETER)
    MJREFRESH_SENSOR_NAME(VELOCIMETER) MJREFRESH_SENSOR_NAME(GYRO) MJREFRESH_SENSOR_NAME(FORCE)
    MJREFRESH_SENSOR_NAME(TORQUE) MJREFRESH_SENSOR_NAME(MAGNETOMETER)
    MJREFRESH_SENSOR_NAME(RANGEFINDER) MJREFRESH_SENSOR_NAME(CAMPROJECTION)
    MJREFRESH_SENSOR_NAME(JOINTPOS) MJREFRESH_SENSOR_NAME(JOINTVEL)
    MJREFRESH_SENSOR_NAME(TENDONPOS) MJREFRESH_SENSOR_NAME(TENDONVEL)
    MJREFRESH_SENSOR_NAME(ACTUATORPOS) MJREFRESH_SENSOR_NAME(ACTUATORVEL)
    MJREFRESH_SENSOR_NAME(ACTUATORFRC) MJREFRESH_SENSOR_NAME(JOINTACTFRC)
    MJREFRESH_SENSOR_NAME(TENDONACTFRC) MJREFRESH_SENSOR_NAME(BALLQUAT)
    MJREFRESH_SENSOR_NAME(BALLANGVEL) MJREFRESH_SENSOR_NAME(JOINTLIMITPOS)
    MJREFRESH_SENSOR_NAME(JOINTLIMITVEL) MJREFRESH_SENSOR_NAME(JOINTLIMITFRC)
    MJREFRESH_SENSOR_NAME(TENDONLIMITPOS) MJREFRESH_SENSOR_NAME(TENDONLIMITVEL)
    MJREFRESH_SENSOR_NAME(TENDONLIMITFRC) MJREFRESH_SENSOR_NAME(FRAMEPOS)
    MJREFRESH_SENSOR_NAME(FRAMEQUAT) MJREFRESH_SENSOR_NAME(FRAMEXAXIS)
    MJREFRESH_SENSOR_NAME(FRAMEYAXIS) MJREFRESH_SENSOR_NAME(FRAMEZAXIS)
    MJREFRESH_SENSOR_NAME(FRAMELINVEL) MJREFRESH_SENSOR_NAME(FRAMEANGVEL)
    MJREFRESH_SENSOR_NAME(FRAMELINACC) MJREFRESH_SENSOR_NAME(FRAMEANGACC)
    MJREFRESH_SENSOR_NAME(SUBTREECOM) MJREFRESH_SENSOR_NAME(SUBTREELINVEL)
    MJREFRESH_SENSOR_NAME(SUBTREEANGMOM) MJREFRESH_SENSOR_NAME(INSIDESITE)
    MJREFRESH_SENSOR_NAME(GEOMDIST) MJREFRESH_SENSOR_NAME(GEOMNORMAL)
    MJREFRESH_SENSOR_NAME(GEOMFROMTO) MJREFRESH_SENSOR_NAME(CONTACT)
    MJREFRESH_SENSOR_NAME(E_POTENTIAL) MJREFRESH_SENSOR_NAME(E_KINETIC)
    MJREFRESH_SENSOR_NAME(CLOCK) MJREFRESH_SENSOR_NAME(TACTILE) MJREFRESH_SENSOR_NAME(PLUGIN)
    MJREFRESH_SENSOR_NAME(USER)
#undef MJREFRESH_SENSOR_NAME
        // clang-format on
        default : return "type " +
                  std::to_string(type);
  }
  std::string name(upper);
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

// sensor 'name' (framepos); an unnamed sensor is shown as #id.
std::string sensor_label(const mjModel* m, int i) {
  // Built by appending: GCC 12 -O3 flags `"#" + std::to_string(i)` with a
  // false -Wrestrict.
  std::string label = "sensor '";
  const char* name = mj_id2name(m, mjOBJ_SENSOR, i);
  if (name && *name) {
    label.append(name);
  } else {
    label.append("#").append(std::to_string(i));
  }
  return label.append("' (").append(sensor_type_name(m->sensor_type[i])).append(")");
}

}  // namespace

bool fixed_tendon(const mjModel* m, int tendon) {
  return m->tendon_num[tendon] > 0 && m->wrap_type[m->tendon_adr[tendon]] == mjWRAP_JOINT;
}

std::string transmission_problem(const mjModel* m, int actuator) {
  const int trn = m->actuator_trntype[actuator];
  const int id = m->actuator_trnid[2 * actuator];
#if mjVERSION_HEADER >= 3011000
  if (m->actuator_outnum[actuator] != 1) {
    return "its actuator has " + std::to_string(m->actuator_outnum[actuator]) +
           " force outputs; the fast engine covers single-output joint, jointinparent and "
           "fixed-tendon transmissions";
  }
#endif
  if (trn == mjTRN_JOINT || trn == mjTRN_JOINTINPARENT) return {};
  if (trn == mjTRN_TENDON) {
    if (fixed_tendon(m, id)) return {};
    return "its actuator drives a spatial tendon; the fast engine covers joint, "
           "jointinparent and fixed-tendon transmissions";
  }
  return "its actuator's transmission is not covered by the fast engine (covered: joint, "
         "jointinparent and fixed tendon)";
}

std::string fast_uncovered(const mjModel* m, const std::vector<int>& sensors) {
  // The kernels know MuJoCo's four joint types; anything else (a corrupted
  // model) goes to the exact engine, where MuJoCo itself reports it.
  for (int j = 0; j < m->njnt; ++j) {
    const int type = m->jnt_type[j];
    if (type != mjJNT_FREE && type != mjJNT_BALL && type != mjJNT_SLIDE && type != mjJNT_HINGE) {
      return "joint " + std::to_string(j) + " has unknown type " + std::to_string(type);
    }
  }
  if (sensors.empty()) return {};
  if (m->opt.disableflags & mjDSBL_SENSOR) {
    return "the model disables sensors (mjDSBL_SENSOR); the exact engine does what mj_forward "
           "does then: it leaves the sensordata columns as they are";
  }
  for (int i : sensors) {
    const std::string why = sensor_type_problem(m, i);
    if (!why.empty()) return sensor_label(m, i) + why;
  }
  return {};
}

}  // namespace mjrefresh
