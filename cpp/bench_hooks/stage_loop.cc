#include "bench_hooks/stage_loop.h"

#include <memory>
#include <stdexcept>
#include <string>

#include "core/mujoco_error_trap.h"
#include "core/trapped_alloc.h"

namespace mjrefresh {
namespace {

struct LoopJob {
  const mjModel* m;
  mjData* d;
};

void five_stages(void* arg) {
  const LoopJob& job = *static_cast<const LoopJob*>(arg);
  mj_kinematics(job.m, job.d);
  mj_comPos(job.m, job.d);
  mj_comVel(job.m, job.d);
  mj_sensorPos(job.m, job.d);
  mj_sensorVel(job.m, job.d);
}

}  // namespace

void stage_loop(const mjModel* m, const RowView<const double>& qpos,
                const RowView<const double>& qvel, const OutView& sensordata, int col_start,
                int col_stop) {
  // Trapped: a MuJoCo error (or out of memory) raises instead of exiting.
  std::unique_ptr<mjData, void (*)(mjData*)> data(
      make_data_trapped(m, 0, "the stage loop's mjData", "free memory"), &mj_deleteData);
  mjData* d = data.get();
  char message[1024];
  for (int64_t row = 0; row < qpos.rows; ++row) {
    // Plain loops like the exact engine's copy-in (see exact_engine.cc).
    for (int i = 0; i < m->nq; ++i) d->qpos[i] = qpos.row(row)[i];
    for (int i = 0; i < m->nv; ++i) d->qvel[i] = qvel.row(row)[i];
    d->flg_subtreevel = 0;
    d->flg_energypos = 0;
    d->flg_energyvel = 0;
    LoopJob job{m, d};
    if (!trapped_call(&five_stages, &job, message, sizeof(message))) {
      throw std::runtime_error("MuJoCo error in row " + std::to_string(row) + ": " + message);
    }
    store(sensordata.data, sensordata.type, row * sensordata.row_stride + col_start,
          d->sensordata + col_start, col_stop - col_start);
  }
}

}  // namespace mjrefresh
