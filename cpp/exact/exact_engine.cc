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
// loop; quadruped tracking, exact engine, 1 thread, 2-vCPU AMD EPYC VM;
// re-measure: python -m bench.research.model_fields).
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
  // Every input into its mjData field; one not given (time without a clock
  // sensor) is 0, as on a fresh mjData.
  for (int i = 0; i < kNumInputs; ++i) {
    double* dst = kInputs[i].in_mjdata(d);
    const int64_t size = input_size(m, i);
    if (in.in[i].valid()) {
      copy_row(dst, in.in[i], row, size);
    } else {
      for (int64_t k = 0; k < size; ++k) dst[k] = 0.0;
    }
  }
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
    size_arena(model_, sel_.stages);
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
  const OutView& sensordata = out[kOutSensordata];
  // With sensors disabled mj_forward leaves sensordata as it was (a
  // backend's MjData keeps its last values): so does a refresh, instead of
  // writing the scratch data's zeros.
  if (sensordata.valid() && !(m->opt.disableflags & mjDSBL_SENSOR)) {
    void* base = sensordata.row_base(row);
    for (const auto& [start, stop] : sel_.columns) {
      store_stream(base, sensordata.type, start, d->sensordata + start, stop - start);
    }
  }
  // Every other output that is an mjData field (kOutputs: body_pos is xpos,
  // ...): item k is the field's entry for the k-th selected body or site.
  mjData* data = const_cast<mjData*>(d);  // in_mjdata only locates the field
  for (int o = 0; o < kNumOutputs; ++o) {
    const OutputInfo& info = kOutputs[o];
    if (o == kOutSensordata || !info.in_mjdata || !out.out[o].valid()) continue;
    const std::vector<int>& ids = info.indexed_by == IndexedBy::kSites ? sel_.sites : sel_.bodies;
    const double* field = info.in_mjdata(data);
    for (size_t k = 0; k < ids.size(); ++k) {
      store_item(out.out[o], row, static_cast<int64_t>(k), field + info.width * ids[k]);
    }
  }
  // The outputs MuJoCo keeps nowhere: body velocities and relative poses.
  const OutView &lin = out[kOutBodyLinvel], &ang = out[kOutBodyAngvel];
  const OutView &pos_rel = out[kOutBodyPosRel], &quat_rel = out[kOutBodyQuatRel];
  const bool want_vel = lin.valid() || ang.valid();
  const bool want_rel = pos_rel.valid() || quat_rel.valid();
  if (!want_vel && !want_rel) return;
  const int r = sel_.relative_to;
  for (int64_t k = 0; k < static_cast<int64_t>(sel_.bodies.size()); ++k) {
    const int b = sel_.bodies[k];
    if (want_vel) {
      // Same call as the framelinvel/frameangvel sensors on an xbody.
      mjtNum vel[6];
      mj_objectVelocity(m, d, mjOBJ_XBODY, b, vel, 0);
      if (ang.valid()) store_item(ang, row, k, vel);
      if (lin.valid()) store_item(lin, row, k, vel + 3);
    }
    if (want_rel && r >= 0) {
      // Same arithmetic as framepos/framequat with reftype xbody.
      if (pos_rel.valid()) {
        mjtNum pos[3];
        math::pos_in_frame<MujocoKernels>(pos, d->xpos + 3 * b, d->xpos + 3 * r, d->xmat + 9 * r);
        store_item(pos_rel, row, k, pos);
      }
      if (quat_rel.valid()) {
        mjtNum quat[4];
        math::quat_in_frame<MujocoKernels>(quat, d->xquat + 4 * b, d->xquat + 4 * r);
        store_item(quat_rel, row, k, quat);
      }
    }
  }
}

}  // namespace mjrefresh
