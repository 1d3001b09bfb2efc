#include "exact/stage_runner.h"

#include <chrono>

#include "core/mujoco_error_trap.h"
#include "core/selection.h"
#include "exact/mujoco_internal.h"

namespace mjrefresh {
namespace {

struct StageJob {
  const mjModel* m;
  mjData* d;
  uint32_t stages;
  int64_t* elapsed_ns;  // if set, time spent in the stage functions is added here
};

// mj_fwdVelocity's part that position/velocity sensors read, in its order:
// flex-edge, tendon and actuator velocities (the same sparse products), then
// mj_comVel, and the constraint rows' velocities (mj_referenceConstraint)
// when rows were built. Its passive forces (mj_passive: springs, dampers,
// fluid, mjcb_passive, passive plugins) and bias forces (mj_rne) feed only
// accelerations; its timer calls mjcb_time.
void velocity_stage(const mjModel* m, mjData* d, bool constraint_rows) {
  mju_zero(d->flexedge_velocity, m->nflexedge);
  for (int f = 0; f < m->nflex; f++) {
    if (m->flex_rigid[f] || m->flex_interp[f]) continue;
    const int adr = m->flex_edgeadr[f];
    mju_mulMatVecSparse(d->flexedge_velocity + adr, d->flexedge_J, d->qvel, m->flex_edgenum[f],
                        m->flexedge_J_rownnz + adr, m->flexedge_J_rowadr + adr,
                        m->flexedge_J_colind, nullptr);
  }
  mju_mulMatVecSparse(d->ten_velocity, d->ten_J, d->qvel, m->ntendon, m->ten_J_rownnz,
                      m->ten_J_rowadr, m->ten_J_colind, nullptr);
#if mjVERSION_HEADER >= 3011000
  const int noutputs = m->nout;  // one velocity per force output
#else
  const int noutputs = m->nu;
#endif
  if (!(m->opt.disableflags & mjDSBL_ACTUATION)) {
    mju_mulMatVecSparse(d->actuator_velocity, d->actuator_moment, d->qvel, noutputs,
                        d->moment_rownnz, d->moment_rowadr, d->moment_colind, nullptr);
  } else {
    mju_zero(d->actuator_velocity, noutputs);
  }
  mj_comVel(m, d);
  if (constraint_rows) mj_referenceConstraint(m, d);
}

// The planned stages in mj_forward's order. Stage functions that would call
// a global callback (mjcb_time in mj_makeM/mj_factorM/mj_fwdVelocity's
// timers, mjcb_passive in mj_fwdVelocity) are replaced by the functions
// they are made of, minus the callbacks: the same arithmetic in the same
// order, so the values stay bit-exact. mj_collision (mjcb_contactfilter,
// mjcb_time) has no such decomposition: the binding refuses a call that
// would run it while a callback it would reach is set (bindings/
// callback_guard.h).
void call_stages(const mjModel* m, mjData* d, uint32_t s) {
  if (s & kKinematics) mj_kinematics(m, d);
  if (s & kComPos) mj_comPos(m, d);
  if (s & kCamLight) mj_camlight(m, d);
  if (s & kFlex) mj_flex(m, d);
  if (s & kTendon) mj_tendon(m, d);
  if (s & kMakeM) {  // mj_makeM
    mj_crb(m, d);
    mj_tendonArmature(m, d);
#if mjVERSION_HEADER < 3011000
    mju_scatter(d->qM, d->M, m->mapM2M, m->nC);  // the legacy qM, removed in 3.11
#endif
  }
  if (s & kFactorM) {  // mj_factorM (sleep is off in the private model: every dof)
    mju_copy(d->qLD, d->M, m->nC);
    mj_factorI(d->qLD, d->qLDiagInv, m->nv, m->M_rownnz, m->M_rowadr, m->M_colind, nullptr);
  }
  if (s & kCollision) mj_collision(m, d);
  if (s & kMakeConstraint) mj_makeConstraint(m, d);
  if (s & kTransmission) mj_transmission(m, d);
  if (s & kSensorPos) mj_sensorPos(m, d);
  if (s & kFwdVelocity) {
    velocity_stage(m, d, (s & kMakeConstraint) != 0);  // includes mj_comVel
  } else if (s & kComVel) {
    mj_comVel(m, d);
  }
  if (s & kSensorVel) mj_sensorVel(m, d);
}

// Runs inside trapped_call: plain C calls only (see mujoco_error_trap.h).
void run_stages(void* arg) {
  const StageJob& job = *static_cast<const StageJob*>(arg);
  if (job.elapsed_ns == nullptr) {
    call_stages(job.m, job.d, job.stages);
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  call_stages(job.m, job.d, job.stages);
  const auto stop = std::chrono::steady_clock::now();
  *job.elapsed_ns += std::chrono::duration_cast<std::chrono::nanoseconds>(stop - start).count();
}

}  // namespace

bool run_stages_trapped(const mjModel* m, mjData* d, uint32_t stages, int64_t* elapsed_ns,
                        char* message, std::size_t message_size) {
  StageJob job{m, d, stages, elapsed_ns};
  return trapped_call(&run_stages, &job, message, message_size);
}

}  // namespace mjrefresh
