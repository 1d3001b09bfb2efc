// Joint-space sensors of the fast engine: tendonpos/tendonvel of fixed
// tendons (mj_tendon, mj_fwdVelocity) and actuatorpos/actuatorvel of joint,
// jointinparent and fixed-tendon transmissions (mj_transmission). They read
// qpos/qvel only: no body is visited for them.
#include <algorithm>
#include <map>

#include "fast/fast_engine.h"
#include "fast/fast_kernels.h"

namespace mjrefresh {
namespace {

using Terms = std::vector<FastEngine::Term>;

// A fixed tendon's length terms (coefficient, qpos address) in wrap order,
// and its Jacobian row (coefficient per dof, increasing dof) as
// mju_combineSparseInc accumulates it (a joint listed twice sums).
void fixed_tendon_terms(const mjModel* m, int tendon, Terms* length, Terms* jac) {
  std::map<int, double> row;
  const int adr = m->tendon_adr[tendon];
  for (int w = adr; w < adr + m->tendon_num[tendon]; ++w) {
    const int j = m->wrap_objid[w];
    const double prm = m->wrap_prm[w];
    length->push_back({m->jnt_qposadr[j], prm});
    auto [it, fresh] = row.try_emplace(m->jnt_dofadr[j], prm * 1.0);
    if (!fresh) it->second = it->second + prm * 1.0;
  }
  for (const auto& [dof, coef] : row) jac->push_back({dof, coef});
}

}  // namespace

// The plan of a tendon or actuator sensor: length = scale * sum(coef *
// qpos[adr]) and velocity = sum(coef * qvel[adr]) (the moment row times
// qvel), or the ball/free joint formulas of mj_transmission.
void FastEngine::plan_joint_space(const mjModel* m, Sensor& s) {
  const int id = m->sensor_objid[s.id];
  if (s.type == mjSENS_TENDONPOS || s.type == mjSENS_TENDONVEL) {
    fixed_tendon_terms(m, id, &s.pos_terms, &s.vel_terms);
    return;
  }
  const int trnid = m->actuator_trnid[2 * id];
#if mjVERSION_HEADER >= 3011000
  // One gear row per force output; coverage.cc admits single-output actuators.
  const int gear_row = m->actuator_outadr[id];
#else
  const int gear_row = id;  // before 3.11: one output, one gear row per actuator
#endif
  const double* gear = m->actuator_gear + 6 * gear_row;
  std::copy(gear, gear + 6, s.gear);
  if (m->actuator_trntype[id] == mjTRN_TENDON) {
    Terms jac;
    fixed_tendon_terms(m, trnid, &s.pos_terms, &jac);
    s.scale = gear[0];
    for (const Term& t : jac) s.vel_terms.push_back({t.adr, t.coef * gear[0]});
    return;
  }
  s.inparent = m->actuator_trntype[id] == mjTRN_JOINTINPARENT;
  s.qadr = m->jnt_qposadr[trnid];
  s.dadr = m->jnt_dofadr[trnid];
  switch (m->jnt_type[trnid]) {
    case mjJNT_BALL:
      s.trn = Sensor::kBall;
      return;
    case mjJNT_FREE:
      s.trn = Sensor::kFree;
      return;
    default:  // hinge, slide: length qpos * gear[0], moment gear[0]
      s.pos_terms.push_back({s.qadr, 1.0});
      s.scale = gear[0];
      s.vel_terms.push_back({s.dadr, gear[0]});
      return;
  }
}

// mj_transmission's moment row of a ball or free joint (gearAxis; for a free
// joint after the translational gear), and the ball joint's length.
void FastEngine::joint_moment(const Sensor& s, const double* qpos, double moment[6],
                              double* length) const {
  double quat[4];
  const double* q = qpos + s.qadr + (s.trn == Sensor::kFree ? 3 : 0);
  mju_copy4(quat, q);
  mju_normalize4(quat);
  double axis[3];
  if (s.trn == Sensor::kBall) mju_quat2Vel(axis, quat, 1);
  double* gear_axis = moment + (s.trn == Sensor::kFree ? 3 : 0);
  const double* gear = s.gear + (s.trn == Sensor::kFree ? 3 : 0);
  if (s.inparent) {
    mju_negQuat(quat, quat);
    mju_rotVecQuat(gear_axis, gear, quat);
  } else {
    mju_copy3(gear_axis, gear);
  }
  if (s.trn == Sensor::kFree) {
    mju_copy3(moment, s.gear);
    *length = 0;  // mj_transmission: no meaningful length
  } else {
    *length = mju_dot3(axis, gear_axis);
  }
}

double FastEngine::joint_space(const Sensor& s, const double* qpos, const double* qvel) const {
  const bool vel = s.type == mjSENS_TENDONVEL || s.type == mjSENS_ACTUATORVEL;
  if (s.trn != Sensor::kLinear) {
    double moment[6], length;
    joint_moment(s, qpos, moment, &length);
    if (!vel) return length;
    double sum = 0;
    for (int k = 0; k < (s.trn == Sensor::kFree ? 6 : 3); ++k) sum += moment[k] * qvel[s.dadr + k];
    return sum;
  }
  double sum = 0;
  if (vel) {
    for (const Term& t : s.vel_terms) sum += t.coef * qvel[t.adr];
    return sum;
  }
  for (const Term& t : s.pos_terms) sum += t.coef * qpos[t.adr];
  return s.type == mjSENS_ACTUATORPOS ? sum * s.scale : sum;
}

}  // namespace mjrefresh
