#include "exact/stage_runner.h"

#include <chrono>

#include "core/mujoco_error_trap.h"
#include "core/selection.h"

namespace mjrefresh {
namespace {

struct StageJob {
  const mjModel* m;
  mjData* d;
  uint32_t stages;
  int64_t* elapsed_ns;  // if set, time spent in the stage functions is added here
};

void call_stages(const mjModel* m, mjData* d, uint32_t s) {
  if (s & kKinematics) mj_kinematics(m, d);
  if (s & kComPos) mj_comPos(m, d);
  if (s & kCamLight) mj_camlight(m, d);
  if (s & kFlex) mj_flex(m, d);
  if (s & kTendon) mj_tendon(m, d);
  if (s & kMakeM) mj_makeM(m, d);
  if (s & kFactorM) mj_factorM(m, d);
  if (s & kCollision) mj_collision(m, d);
  if (s & kMakeConstraint) mj_makeConstraint(m, d);
  if (s & kTransmission) mj_transmission(m, d);
  if (s & kSensorPos) mj_sensorPos(m, d);
  if (s & kFwdVelocity) {
    mj_fwdVelocity(m, d);  // includes mj_comVel
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
