#include "exact/private_model.h"

#include <algorithm>
#include <vector>

#include "core/trapped_alloc.h"
#include "exact/stage_runner.h"

namespace mjrefresh {
namespace {

constexpr int64_t kDryRunArena = 1 << 20;  // first try: enough for every measured model
constexpr int64_t kArenaSlack = 16 << 10;
constexpr int64_t kArenaAlign = 4 << 10;

const char* kRemedy = "free memory or use fewer threads (num_threads)";

// Arena use of one dry run of `stages` with the arena `narena`; -1 if a
// stage raised (for example a stack overflow).
int64_t dry_run_use(mjModel* model, uint32_t stages, int64_t narena) {
  model->narena = static_cast<mjtSize>(narena);
  mjData* d = make_data_trapped(model, 0, "the exact engine's arena measurement", kRemedy);
  char message[512];
  const bool ok = run_stages_trapped(model, d, stages, nullptr, message, sizeof message);
  const int64_t used = static_cast<int64_t>(d->maxuse_stack + d->maxuse_arena);
  mj_deleteData(d);
  return ok ? used : -1;
}

}  // namespace

mjModel* make_private_model(const mjModel* model, const Selection& sel) {
  mjModel* copy = copy_model_trapped(model, "the exact engine's model copy", kRemedy);
  std::vector<char> keep(copy->nsensor, 0);
  for (int id : sel.sensors) keep[id] = 1;
  for (int i = 0; i < copy->nsensor; ++i) {
    if (!keep[i]) copy->sensor_needstage[i] = mjSTAGE_NONE;
  }
  copy->opt.enableflags &= ~static_cast<int>(mjENBL_SLEEP);
  return copy;
}

void size_arena(mjModel* model, uint32_t stages) {
  const int64_t declared = static_cast<int64_t>(model->narena);
  if (stages & (kCollision | kMakeConstraint)) return;
  int64_t used = -1;
  try {
    if (declared > kDryRunArena) used = dry_run_use(model, stages, kDryRunArena);
    if (used < 0) used = dry_run_use(model, stages, declared);
  } catch (...) {
    model->narena = static_cast<mjtSize>(declared);
    throw;
  }
  if (used < 0) {
    model->narena = static_cast<mjtSize>(declared);  // rows will report the error
    return;
  }
  const int64_t want = (2 * used + kArenaSlack + kArenaAlign - 1) / kArenaAlign * kArenaAlign;
  model->narena = static_cast<mjtSize>(std::min(declared, want));
}

}  // namespace mjrefresh
