#include "fast/fast_engine.h"

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "fast/emit_pair.h"
#include "fast/fast_kernels.h"
#include "fast/kernel_isa.h"
#include "fast/kernels_avx2.h"
#include "fast/kinematics.h"

namespace mjrefresh {
namespace {

using namespace fast;

const double* row_or_null(const RowView<const double>& v, int64_t row) {
  return v.valid() ? v.row(row) : nullptr;
}

}  // namespace

// The template's value arrays with the row's blocks for the declared fields.
FastEngine::Vals FastEngine::row_vals(const Inputs& in, int64_t row) const {
  Vals v = template_vals_;
  for (int f : sel_.model_fields) v.f[f] = in.fields[f].row(row);
  return v;
}

// Never fails, so the message buffer is never written.
bool FastEngine::refresh_row(int t, int64_t row, const Inputs& in, const Outputs& out,
                             char* /*message*/, std::size_t /*message_size*/) {
  Scratch& sc = scratch_[t];
  const bool want_body_vel = out[kOutBodyLinvel].valid() || out[kOutBodyAngvel].valid();
  const bool want_vel = any_vel_sensor_ || want_body_vel;
  const Row1 qpos{in[kInQpos].row(row)}, qvel{in[kInQvel].row(row)};
  const Row1 mpos{row_or_null(in[kInMocapPos], row)}, mquat{row_or_null(in[kInMocapQuat], row)};
  const bool finite = half_angles(qpos, sc.halfangle.data());
  if (sel_.model_fields.empty()) {
    kinematics(sc.states.data(), sc.anchors.data(), sc.halfangle.data(), finite, qpos, qvel, mpos,
               mquat, TemplateKin{}, want_vel, want_body_vel);
    emit(sc, sc.states.data(), row, in, template_vals_, out, true);
    return true;
  }
  const Vals v = row_vals(in, row);
  if (kin_fields_) {
    const FieldKin<const double*> kv{{v.f[kBodyPos], v.f[kBodyQuat], v.f[kJntPos], v.f[kJntAxis]}};
    kinematics(sc.states.data(), sc.anchors.data(), sc.halfangle.data(), finite, qpos, qvel, mpos,
               mquat, kv, want_vel, want_body_vel);
  } else {
    kinematics(sc.states.data(), sc.anchors.data(), sc.halfangle.data(), finite, qpos, qvel, mpos,
               mquat, TemplateKin{}, want_vel, want_body_vel);
  }
  emit(sc, sc.states.data(), row, in, v, out, true);
  return true;
}

std::string kernel_isa() {
#ifdef MJREFRESH_FAST_AVX2
  const bool cpu = __builtin_cpu_supports("avx2");
#else
  const bool cpu = false;
#endif
  const char* env = std::getenv("MJREFRESH_FAST_ISA");
  const std::string asked = env ? env : "";
  if (asked.empty()) return cpu ? "avx2" : "sse2";
  if (asked == "sse2") return asked;
  if (asked == "avx2" && cpu) return asked;
  if (asked == "avx2") {
    throw std::invalid_argument(
        "MJREFRESH_FAST_ISA: 'avx2' asked for, but this core or CPU has no AVX2 variant of the "
        "fast engine; unset it or set it to 'sse2'");
  }
  throw std::invalid_argument("MJREFRESH_FAST_ISA: expected 'sse2', 'avx2' or unset, got '" +
                              asked + "'");
}

template <bool Avx2>
[[gnu::always_inline]] inline void FastEngine::pair_pass(int t, int64_t row_a, int64_t row_b,
                                                         const Inputs& in, const Outputs& out) {
  Scratch& sc = scratch_[t];
  const bool want_body_vel = out[kOutBodyLinvel].valid() || out[kOutBodyAngvel].valid();
  const bool want_vel = any_vel_sensor_ || want_body_vel;
  const bool fields = !sel_.model_fields.empty();
  const Vals va = fields ? row_vals(in, row_a) : template_vals_;
  const Vals vb = fields ? row_vals(in, row_b) : template_vals_;
  const Row2 qpos{in[kInQpos].row(row_a), in[kInQpos].row(row_b)};
  const Row2 qvel{in[kInQvel].row(row_a), in[kInQvel].row(row_b)};
  const Row2 mpos{row_or_null(in[kInMocapPos], row_a), row_or_null(in[kInMocapPos], row_b)};
  const Row2 mquat{row_or_null(in[kInMocapQuat], row_a), row_or_null(in[kInMocapQuat], row_b)};
  bool finite;
  if constexpr (Avx2) {
    finite = half_angles_avx2(qpos.a, qpos.b, sc.halfangle2.data());
  } else {
    finite = half_angles(qpos, sc.halfangle2.data());
  }
  if (kin_fields_) {
    // Each lane reads its own row's values. Measured on the quadruped
    // tracking refresh with body_pos, body_quat, jnt_axis per row: see
    // pairs() in fast_engine.h for why pairs stay on.
    const FieldKin<Row2> kv{{{va.f[kBodyPos], vb.f[kBodyPos]},
                             {va.f[kBodyQuat], vb.f[kBodyQuat]},
                             {va.f[kJntPos], vb.f[kJntPos]},
                             {va.f[kJntAxis], vb.f[kJntAxis]}}};
    kinematics(sc.states2.data(), sc.anchors2.data(), sc.halfangle2.data(), finite, qpos, qvel,
               mpos, mquat, kv, want_vel, want_body_vel);
  } else {
    kinematics(sc.states2.data(), sc.anchors2.data(), sc.halfangle2.data(), finite, qpos, qvel,
               mpos, mquat, TemplateKin{}, want_vel, want_body_vel);
  }
  if (out[kOutSensordata].valid()) {
    void* a = out[kOutSensordata].row_base(row_a);
    void* b = out[kOutSensordata].row_base(row_b);
    if (out[kOutSensordata].type == OutType::kFloat64) {
      double* da = static_cast<double*>(a);
      double* db = static_cast<double*>(b);
      write_fixed_pair(sc, da, db);
      write_joint_copies(in, row_a, da);
      write_joint_copies(in, row_b, db);
    } else {
      float* fa = static_cast<float*>(a);
      float* fb = static_cast<float*>(b);
      write_fixed_pair(sc, fa, fb);
      write_joint_copies(in, row_a, fa);
      write_joint_copies(in, row_b, fb);
    }
  }
  // Everything else reads one row's scalar States: split the lanes, unless
  // nothing else is written (a sensors-only tracking selection).
  const bool generic =
      out[kOutSensordata].valid() && (!sensors_.empty() || any_clip(va) || any_clip(vb));
  const bool bodies = !body_slots_.empty() &&
                      (out[kOutBodyPos].valid() || out[kOutBodyQuat].valid() || want_body_vel ||
                       out[kOutBodyPosRel].valid() || out[kOutBodyQuatRel].valid());
  const bool sites = !sites_.empty() && (out[kOutSitePos].valid() || out[kOutSiteMat].valid());
  if (!generic && !bodies && !sites) return;
  constexpr int kFields = sizeof(State) / sizeof(double);
  const int nslot = static_cast<int>(bodies_.size());
  for (int s = 1; s < nslot; ++s) {
    const V2* v = reinterpret_cast<const V2*>(&sc.states2[s]);
    double* a = reinterpret_cast<double*>(&sc.states[s]);
    double* b = reinterpret_cast<double*>(&sc.states_b[s]);
    // two values per step: one transposing shuffle pair, 16-byte stores
    int k = 0;
    for (; k + 1 < kFields; k += 2) {
      const V2 lo = __builtin_shufflevector(v[k], v[k + 1], 0, 2);
      const V2 hi = __builtin_shufflevector(v[k], v[k + 1], 1, 3);
      std::memcpy(a + k, &lo, sizeof(V2));
      std::memcpy(b + k, &hi, sizeof(V2));
    }
    if (k < kFields) {
      a[k] = v[k][0];
      b[k] = v[k][1];
    }
  }
  emit(sc, sc.states.data(), row_a, in, va, out, false);
  emit(sc, sc.states_b.data(), row_b, in, vb, out, false);
}

// The pair pass, compiled for the baseline and (MJREFRESH_FAST_AVX2) for
// AVX2: the same source, so the same operations (fast/kernel_isa.h).
void FastEngine::refresh_pair(int t, int64_t row_a, int64_t row_b, const Inputs& in,
                              const Outputs& out) {
#ifdef MJREFRESH_FAST_AVX2
  if (avx2_) {
    refresh_pair_avx2(t, row_a, row_b, in, out);
    return;
  }
#endif
  pair_pass<false>(t, row_a, row_b, in, out);
}

#ifdef MJREFRESH_FAST_AVX2
[[gnu::target("avx2")]] void FastEngine::refresh_pair_avx2(int t, int64_t row_a, int64_t row_b,
                                                           const Inputs& in, const Outputs& out) {
  pair_pass<true>(t, row_a, row_b, in, out);
}

// half_angles for a pair, four lanes (two hinges of both rows) per
// sin_cos: the same operations per lane, so the same values (the pair
// pass's sin_cos was 14% of its instructions; quadruped tracking,
// callgrind).
[[gnu::target("avx2")]] bool FastEngine::half_angles_avx2(const double* qpos_a,
                                                          const double* qpos_b, V2* half) const {
  const int nh = static_cast<int>(hinges_.size());
  V4i finite = V4i{} == V4i{};
  int i = 0;
  for (; i + 1 < nh; i += 2) {
    const int j0 = hinges_[i], j1 = hinges_[i + 1];
    const Joint& h0 = joints_[j0];
    const Joint& h1 = joints_[j1];
    const V4 angle = {qpos_a[h0.qadr] - h0.qpos0, qpos_b[h0.qadr] - h0.qpos0,
                      qpos_a[h1.qadr] - h1.qpos0, qpos_b[h1.qadr] - h1.qpos0};
    V4 sn, cs;
    sin_cos(angle * 0.5, &sn, &cs);
    half[2 * j0] = V2{cs[0], cs[1]};
    half[2 * j0 + 1] = V2{sn[0], sn[1]};
    half[2 * j1] = V2{cs[2], cs[3]};
    half[2 * j1 + 1] = V2{sn[2], sn[3]};
    finite &= cs == cs;
  }
  bool all = (finite[0] & finite[1] & finite[2] & finite[3]) != 0;
  if (i < nh) {  // an odd hinge: two lanes, as half_angles
    const int j = hinges_[i];
    const Joint& h = joints_[j];
    const V2 angle = V2{qpos_a[h.qadr], qpos_b[h.qadr]} - h.qpos0;
    V2 sn, cs;
    sin_cos(angle * 0.5, &sn, &cs);
    half[2 * j] = cs;
    half[2 * j + 1] = sn;
    all = all && cs[0] == cs[0] && cs[1] == cs[1];
  }
  return all;
}
#endif

}  // namespace mjrefresh
