#include <cstring>

#include "fast/fast_engine.h"
#include "fast/fast_kernels.h"

namespace mjrefresh {
namespace {

using namespace fast;

// mju_clip / mju_min as apply_cutoff uses them: REAL both sides, POSITIVE
// the upper side only, axis/quaternion data never.
double cut(double x, double cutoff, int datatype) {
  if (datatype == mjDATATYPE_REAL) {
    if (x < -cutoff) return -cutoff;
    if (x > cutoff) return cutoff;
    return x;
  }
  if (datatype == mjDATATYPE_POSITIVE) return x < cutoff ? x : cutoff;
  return x;
}

// 3 or 4 values of one row (T: the output dtype).
template <class T>
inline void put3(T* o, const double v[3]) {
  o[0] = static_cast<T>(v[0]);
  o[1] = static_cast<T>(v[1]);
  o[2] = static_cast<T>(v[2]);
}
template <class T>
inline void put4(T* o, const double v[4]) {
  put3(o, v);
  o[3] = static_cast<T>(v[3]);
}

}  // namespace

// The specialised sensor lists: plain copies and relative poses of xbodies
// (all of a tracking workload), with fixed-size writes.
template <class T>
void FastEngine::write_fixed(Scratch& sc, const State* st, T* dst) const {
  const double* sd = reinterpret_cast<const double*>(st);  // States as doubles
  double* sums = sc.sums.data();
  for (const Copy& c : gather3_) put3(dst + c.col, sd + c.src);
  for (const Copy& c : gather4_) put4(dst + c.col, sd + c.src);
  for (const Rel& r : pos_rel_) {
    double v[3];
    pos_in_frame(v, st[r.obj].pos, st[r.ref].pos, st[r.ref].mat);
    put3(dst + r.col, v);
  }
  for (const Rel& r : quat_rel_) {
    double q[4];
    quat_in_frame(q, st[r.obj].quat, st[r.ref].quat);
    put4(dst + r.col, q);
  }
  for (const SubtreeFixed& s : subtree_fixed_) {
    double v[3];
    subtree_fixed(st, s, sums, v);
    put3(dst + s.col, v);
  }
  if (!group_.empty()) {
    subtree_group(st, sc.group.data());
    for (const SubtreeFixed& s : angmom_fixed_) {
      put3(dst + s.col, sc.group[subtrees_[s.subtree].root].ang);
    }
  }
  for (const SiteFixed& s : site_fixed_) {
    double v[4];
    site_fixed(st, s, v);
    if (s.dim == 4) {
      put4(dst + s.col, v);
    } else {
      put3(dst + s.col, v);
    }
  }
}

// jointpos/jointvel copies of one row.
template <class T>
void FastEngine::write_joint_copies(const Inputs& in, int64_t row, T* dst) const {
  if (joint_pos_.empty() && joint_vel_.empty()) return;  // e.g. tracking selections
  const double* qpos = in[kInQpos].row(row);
  const double* qvel = in[kInQvel].row(row);
  for (const JointCopy& c : joint_pos_) dst[c.col] = static_cast<T>(qpos[c.adr]);
  for (const JointCopy& c : joint_vel_) dst[c.col] = static_cast<T>(qvel[c.adr]);
}

template void FastEngine::write_joint_copies(const Inputs&, int64_t, double*) const;
template void FastEngine::write_joint_copies(const Inputs&, int64_t, float*) const;

template <class T>
void FastEngine::write_sensors(Scratch& sc, const State* st, const Inputs& in, int64_t row,
                               const Vals& v, T* dst, bool fixed) const {
  const double* sd = reinterpret_cast<const double*>(st);  // States as doubles
  if (fixed) {
    write_fixed(sc, st, dst);
    write_joint_copies(in, row, dst);
  }
  const double* cutoffs = v.f[kSensorCutoff];
  // Gathered sensors that this row's cutoff clips: written again, clipped
  // (recomputed from the States, so float32 outputs round the clipped value).
  for (const Sensor& s : clips_) {
    const double cutoff = cutoffs[s.id];
    if (!(cutoff > 0)) continue;
    double vals[4];
    if (s.op == Sensor::kCopy) {
      for (int k = 0; k < s.dim; ++k) vals[k] = sd[s.src + k];
    } else {  // kPosRel
      pos_in_frame(vals, st[s.obj.slot].pos, st[s.ref.slot].pos, st[s.ref.slot].mat);
    }
    T* out = dst + s.adr;
    for (int k = 0; k < s.dim; ++k) out[k] = static_cast<T>(cut(vals[k], cutoff, s.datatype));
  }
  for (const Sensor& s : sensors_) {
    double vals[4];
    switch (s.op) {
      case Sensor::kCopy:  // only with a cutoff or cut by a range (otherwise gathered)
        for (int k = 0; k < s.dim; ++k) vals[k] = sd[s.src + k];
        break;
      case Sensor::kPosRel: {
        pos_in_frame(vals, st[s.obj.slot].pos, st[s.ref.slot].pos, st[s.ref.slot].mat);
        break;
      }
      case Sensor::kQuatRel: {
        quat_in_frame(vals, st[s.obj.slot].quat, st[s.ref.slot].quat);
        break;
      }
      case Sensor::kGeneric:
        if (s.subtree >= 0) {
          subtree_sensor(sc, st, s, v, vals);
        } else {
          compute_sensor(st, s, in, row, v, vals);
        }
        break;
    }
    const double cutoff = cutoffs[s.id];
    if (cutoff > 0) {
      for (int k = 0; k < s.dim; ++k) vals[k] = cut(vals[k], cutoff, s.datatype);
    }
    T* out = dst + s.adr;
    if (s.segments.size() == 1 && s.segments[0].second == s.dim) {
      for (int k = 0; k < s.dim; ++k) out[k] = static_cast<T>(vals[k]);
    } else {
      for (const auto& [off, count] : s.segments) {
        for (int k = off; k < off + count; ++k) out[k] = static_cast<T>(vals[k]);
      }
    }
  }
}

// Whether this row's sensor_cutoff clips a gathered sensor.
bool FastEngine::any_clip(const Vals& v) const {
  const double* cutoffs = v.f[kSensorCutoff];
  for (const Sensor& s : clips_) {
    if (cutoffs[s.id] > 0) return true;
  }
  return false;
}

// Writes the selected outputs of one row from its visited bodies' states.
void FastEngine::emit(Scratch& sc, const State* st, int64_t row, const Inputs& in, const Vals& v,
                      const Outputs& out, bool fixed) const {
  // Sensors, written straight into the caller's row.
  if (out[kOutSensordata].valid()) {
    void* base = out[kOutSensordata].row_base(row);
    if (out[kOutSensordata].type == OutType::kFloat64) {
      write_sensors(sc, st, in, row, v, static_cast<double*>(base), fixed);
    } else {
      write_sensors(sc, st, in, row, v, static_cast<float*>(base), fixed);
    }
  }

  // Body and site outputs.
  for (int64_t k = 0; k < static_cast<int64_t>(body_slots_.size()); ++k) {
    const State& x = st[body_slots_[k]];
    if (out[kOutBodyPos].valid()) store_item(out[kOutBodyPos], row, k, x.pos);
    if (out[kOutBodyQuat].valid()) store_item(out[kOutBodyQuat], row, k, x.quat);
    if (out[kOutBodyAngvel].valid()) store_item(out[kOutBodyAngvel], row, k, x.w);
    if (out[kOutBodyLinvel].valid()) store_item(out[kOutBodyLinvel], row, k, x.v);
    if (rel_slot_ >= 0) {
      const State& r = st[rel_slot_];
      if (out[kOutBodyPosRel].valid()) {
        double pos[3];
        pos_in_frame(pos, x.pos, r.pos, r.mat);
        store_item(out[kOutBodyPosRel], row, k, pos);
      }
      if (out[kOutBodyQuatRel].valid()) {
        double q[4];
        quat_in_frame(q, x.quat, r.quat);
        store_item(out[kOutBodyQuatRel], row, k, q);
      }
    }
  }
  if (out[kOutSitePos].valid() || out[kOutSiteMat].valid()) {
    for (int64_t k = 0; k < static_cast<int64_t>(sites_.size()); ++k) {
      double pos[3], mat[9];
      frame_pose(st, sites_[k], v, pos, mat);
      if (out[kOutSitePos].valid()) store_item(out[kOutSitePos], row, k, pos);
      if (out[kOutSiteMat].valid()) store_item(out[kOutSiteMat], row, k, mat);
    }
  }
}

}  // namespace mjrefresh
