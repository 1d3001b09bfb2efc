#include "exact/exact_engine.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "core/frame_math.h"
#include "core/trapped_alloc.h"
#include "exact/private_model.h"
#include "exact/stage_runner.h"

namespace mjrefresh {
namespace {

// The kernel set of core/frame_math.h's compositions as libmujoco's own
// functions: relative outputs then round exactly like mj_forward's
// framepos/framequat sensors on the MuJoCo this module runs with.
struct MujocoKernels {
  static void sub3(mjtNum r[3], const mjtNum a[3], const mjtNum b[3]) { mju_sub3(r, a, b); }
  static void mat_t_vec(mjtNum r[3], const mjtNum m[9], const mjtNum v[3]) {
    mju_mulMatTVec3(r, m, v);
  }
  static void neg_quat(mjtNum r[4], const mjtNum q[4]) { mju_negQuat(r, q); }
  static void mul_quat(mjtNum r[4], const mjtNum a[4], const mjtNum b[4]) { mju_mulQuat(r, a, b); }
};

// A plain loop, not memcpy: glibc's AVX memcpy on these few-hundred-byte
// rows made the MuJoCo stage functions that follow measurably slower (3
// per-environment fields per row: +18% per row with memcpy, +3.5% with this
// loop; quadruped tracking, exact engine, 1 thread).
void copy_row(double* dst, const RowView<const double>& src, int64_t row, int64_t n) {
  const double* s = src.row(row);
  for (int64_t i = 0; i < n; ++i) dst[i] = s[i];
}

}  // namespace

const mjModel* ExactEngine::load_row(int t, int64_t row, const Inputs& in) {
  const mjModel* m = model_;
  mjData* d = scratch_[t];
  if (!models_.empty()) {
    mjModel* mt = models_[t];
    for (int f : sel_.model_fields) {
      copy_row(field_data(mt, f), in.fields[f], row, field_size(mt, f));
      if (f == kBodyMass) recompute_subtree_mass(mt);
    }
    m = mt;
  }
  copy_row(d->qpos, in.qpos, row, m->nq);
  copy_row(d->qvel, in.qvel, row, m->nv);
  if (m->nmocap) {
    copy_row(d->mocap_pos, in.mocap_pos, row, 3 * m->nmocap);
    copy_row(d->mocap_quat, in.mocap_quat, row, 4 * m->nmocap);
  }
  d->time = in.time.valid() ? *in.time.row(row) : 0.0;
  // Lazily computed quantities must be recomputed for this row's state.
  d->flg_subtreevel = 0;
  d->flg_energypos = 0;
  d->flg_energyvel = 0;
  d->flg_rnepost = 0;
  return m;
}

bool ExactEngine::time_stages(const int64_t* rows, int64_t num_rows, const Inputs& in,
                              int64_t* elapsed_ns, char* message, std::size_t message_size) {
  mjData* d = scratch_[0];
  for (int64_t i = 0; i < num_rows; ++i) {
    const mjModel* m = load_row(0, rows[i], in);
    if (!run_stages_trapped(m, d, sel_.stages, elapsed_ns, message, message_size)) {
      mj_resetData(m, d);  // sleep is off in the private model: runs no stage function
      return false;
    }
  }
  return true;
}

ExactEngine::ExactEngine(const mjModel* model, Selection selection, int num_scratch)
    : sel_(std::move(selection)) {
  // Every MuJoCo call here is trapped (core/trapped_alloc.h); on a throw the
  // destructor does not run, so free what was made before rethrowing.
  try {
    model_ = make_private_model(model, sel_);
    declared_arena_ = size_arena(model_, sel_.stages);
    scratch_.reserve(num_scratch);
    int64_t per_data = 0;
    for (int t = 0; t < num_scratch; ++t) {
      const std::string what = "the exact engine's scratch state of participant " +
                               std::to_string(t + 1) + " of " + std::to_string(num_scratch);
      scratch_.push_back(make_data_trapped(model_, per_data, what, remedy(num_scratch)));
      per_data = data_bytes(scratch_.back());
    }
    if (!sel_.model_fields.empty()) {
      for (int t = 0; t < num_scratch; ++t) {
        models_.push_back(copy_model_trapped(
            model_, "a per-participant model copy (per-environment model fields)",
            remedy(num_scratch)));
      }
    }
  } catch (...) {
    release();
    throw;
  }
}

std::string ExactEngine::remedy(int num_scratch) {
  return num_scratch > 1
             ? "free memory or use fewer threads (num_threads=" + std::to_string(num_scratch) +
                   " needs one per thread)"
             : "free memory, or declare a smaller <size memory=...> in the model";
}

int64_t ExactEngine::memory_bytes() const {
  int64_t total = static_cast<int64_t>(mj_sizeModel(model_));
  for (const mjData* d : scratch_) total += data_bytes(d);
  for (const mjModel* m : models_) total += static_cast<int64_t>(mj_sizeModel(m));
  return total;
}

int64_t ExactEngine::participant_bytes() const {
  int64_t bytes = scratch_.empty() ? 0 : data_bytes(scratch_[0]);
  if (!models_.empty()) bytes += static_cast<int64_t>(mj_sizeModel(models_[0]));
  return bytes;
}

void ExactEngine::after_fork() {
  for (mjData* d : scratch_) mj_resetData(model_, d);
}

ExactEngine::~ExactEngine() { release(); }

void ExactEngine::release() {
  for (mjData* d : scratch_) mj_deleteData(d);
  for (mjModel* m : models_) mj_deleteModel(m);
  if (model_ != nullptr) mj_deleteModel(model_);
  scratch_.clear();
  models_.clear();
  model_ = nullptr;
}

bool ExactEngine::refresh_row(int t, int64_t row, const Inputs& in, const Outputs& out,
                              char* message, std::size_t message_size) {
  mjData* d = scratch_[t];
  const mjModel* m = load_row(t, row, in);
  if (!run_stages_trapped(m, d, sel_.stages, nullptr, message, message_size)) {
    mj_resetData(m, d);  // sleep is off in the private model: runs no stage function
    return false;
  }
  write_outputs(m, d, row, out);
  return true;
}

void ExactEngine::write_outputs(const mjModel* m, const mjData* d, int64_t row,
                                const Outputs& out) const {
  if (out.sensordata.valid()) {
    void* base = out.sensordata.row_base(row);
    for (const auto& [start, stop] : sel_.columns) {
      store_stream(base, out.sensordata.type, start, d->sensordata + start, stop - start);
    }
  }
  const bool want_vel = out.body_linvel.valid() || out.body_angvel.valid();
  const bool want_rel = out.body_pos_rel.valid() || out.body_quat_rel.valid();
  const int r = sel_.relative_to;
  for (int64_t k = 0; k < static_cast<int64_t>(sel_.bodies.size()); ++k) {
    const int b = sel_.bodies[k];
    if (out.body_pos.valid()) store_item(out.body_pos, row, k, d->xpos + 3 * b);
    if (out.body_quat.valid()) store_item(out.body_quat, row, k, d->xquat + 4 * b);
    if (want_vel) {
      // Same call as the framelinvel/frameangvel sensors on an xbody.
      mjtNum vel[6];
      mj_objectVelocity(m, d, mjOBJ_XBODY, b, vel, 0);
      if (out.body_angvel.valid()) store_item(out.body_angvel, row, k, vel);
      if (out.body_linvel.valid()) store_item(out.body_linvel, row, k, vel + 3);
    }
    if (want_rel && r >= 0) {
      // Same arithmetic as framepos/framequat with reftype xbody.
      if (out.body_pos_rel.valid()) {
        mjtNum pos[3];
        math::pos_in_frame<MujocoKernels>(pos, d->xpos + 3 * b, d->xpos + 3 * r, d->xmat + 9 * r);
        store_item(out.body_pos_rel, row, k, pos);
      }
      if (out.body_quat_rel.valid()) {
        mjtNum quat[4];
        math::quat_in_frame<MujocoKernels>(quat, d->xquat + 4 * b, d->xquat + 4 * r);
        store_item(out.body_quat_rel, row, k, quat);
      }
    }
  }
  for (int64_t k = 0; k < static_cast<int64_t>(sel_.sites.size()); ++k) {
    const int s = sel_.sites[k];
    if (out.site_pos.valid()) store_item(out.site_pos, row, k, d->site_xpos + 3 * s);
    if (out.site_mat.valid()) store_item(out.site_mat, row, k, d->site_xmat + 9 * s);
  }
}

}  // namespace mjrefresh
