#include "fast/fast_engine.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
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

void FastEngine::prefetch(const Inputs& in, int64_t row) const {
  for (int f : sel_.model_fields) {
    // Every 64-byte line the block touches: a block that does not start on
    // a line ends in one more line than its bytes / 64 (stepping 64 bytes
    // from its start missed that last line).
    const double* block = in.fields[f].row(row);
    const auto first = reinterpret_cast<uintptr_t>(block) & ~uintptr_t{63};
    const auto last = reinterpret_cast<uintptr_t>(block + in.fields[f].cols - 1);
    for (uintptr_t line = first; line <= last; line += 64) {
      __builtin_prefetch(reinterpret_cast<const char*>(line));
    }
  }
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

// The pass of L rows in L lanes: a pair (V2; the baseline and the AVX2
// build) or a quad (V4; AVX2 only).
template <int L, bool Avx2>
[[gnu::always_inline]] inline void FastEngine::lanes_pass(int t, const int64_t* rows,
                                                          const Inputs& in, const Outputs& out) {
  using R = RowL<L>;
  using V = typename R::V;
  Scratch& sc = scratch_[t];
  StateT<V>* st;
  V *anchors, *half, *sums;
  GroupNode<V>* group;
  if constexpr (L == 2) {
    st = sc.states2.data(), anchors = sc.anchors2.data(), half = sc.halfangle2.data();
    sums = sc.sums2.data(), group = sc.group2.data();
  } else {
    st = sc.states4.data(), anchors = sc.anchors4.data(), half = sc.halfangle4.data();
    sums = sc.sums4.data(), group = sc.group4.data();
  }
  const bool want_body_vel = out[kOutBodyLinvel].valid() || out[kOutBodyAngvel].valid();
  const bool want_vel = any_vel_sensor_ || want_body_vel;
  const bool fields = !sel_.model_fields.empty();
  Vals v[L];
  R qpos, qvel, mpos, mquat;
  for (int l = 0; l < L; ++l) {
    v[l] = fields ? row_vals(in, rows[l]) : template_vals_;
    qpos.p[l] = in[kInQpos].row(rows[l]);
    qvel.p[l] = in[kInQvel].row(rows[l]);
    mpos.p[l] = row_or_null(in[kInMocapPos], rows[l]);
    mquat.p[l] = row_or_null(in[kInMocapQuat], rows[l]);
  }
  bool finite;
  if constexpr (L == 2 && Avx2) {
    finite = half_angles_avx2(qpos.p[0], qpos.p[1], half);
  } else {
    finite = half_angles(qpos, half);
  }
  if (kin_fields_) {
    // Each lane reads its own row's values. Measured on the quadruped
    // tracking refresh with body_pos, body_quat, jnt_axis per row: see
    // pairs() in fast_engine.h for why pairs stay on.
    FieldKin<R> kv;
    for (int l = 0; l < L; ++l) {
      kv.v.body_pos.p[l] = v[l].f[kBodyPos];
      kv.v.body_quat.p[l] = v[l].f[kBodyQuat];
      kv.v.jnt_pos.p[l] = v[l].f[kJntPos];
      kv.v.jnt_axis.p[l] = v[l].f[kJntAxis];
    }
    kinematics(st, anchors, half, finite, qpos, qvel, mpos, mquat, kv, want_vel, want_body_vel);
  } else {
    kinematics(st, anchors, half, finite, qpos, qvel, mpos, mquat, TemplateKin{}, want_vel,
               want_body_vel);
  }
  const OutView& sd = out[kOutSensordata];
  if (sd.valid()) {
    if (sd.type == OutType::kFloat64) {
      double* d[L];
      for (int l = 0; l < L; ++l) d[l] = static_cast<double*>(sd.row_base(rows[l]));
      write_fixed_lanes(st, sums, group, d);
      for (int l = 0; l < L; ++l) write_joint_copies(in, rows[l], d[l]);
    } else {
      float* d[L];
      for (int l = 0; l < L; ++l) d[l] = static_cast<float*>(sd.row_base(rows[l]));
      write_fixed_lanes(st, sums, group, d);
      for (int l = 0; l < L; ++l) write_joint_copies(in, rows[l], d[l]);
    }
  }
  // Everything else reads one row's scalar States: split the lanes, unless
  // nothing else is written (a sensors-only tracking selection).
  bool clip = false;
  for (int l = 0; l < L; ++l) clip = clip || any_clip(v[l]);
  const bool generic = sd.valid() && (!sensors_.empty() || clip);
  const bool bodies = !body_slots_.empty() &&
                      (out[kOutBodyPos].valid() || out[kOutBodyQuat].valid() || want_body_vel ||
                       out[kOutBodyPosRel].valid() || out[kOutBodyQuatRel].valid());
  const bool sites = !sites_.empty() && (out[kOutSitePos].valid() || out[kOutSiteMat].valid());
  if (!generic && !bodies && !sites) return;
  constexpr int kFields = sizeof(State) / sizeof(double);
  const int nslot = static_cast<int>(bodies_.size());
  State* split[L];
  split[0] = sc.states.data();
  for (int l = 1; l < L; ++l) split[l] = sc.lane_states[l - 1].data();
  // Four values per step, transposed by the fixed writes' put_lanes
  // (emit_pair.h); the last step overlaps the one before it (kFields = 22),
  // rewriting equal values.
  static_assert(kFields % 4 == 2 && kFields > 4);
  for (int s = 1; s < nslot; ++s) {
    const V* x = reinterpret_cast<const V*>(&st[s]);
    double* d[L];
    for (int l = 0; l < L; ++l) d[l] = reinterpret_cast<double*>(&split[l][s]);
    for (int k = 0; k + 4 <= kFields; k += 4) put_lanes<4>(d, k, x + k);
    put_lanes<3>(d, kFields - 3, x + kFields - 3);
  }
  for (int l = 0; l < L; ++l) emit(sc, split[l], rows[l], in, v[l], out, false);
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
  const int64_t rows[2] = {row_a, row_b};
  lanes_pass<2, false>(t, rows, in, out);
}

// Only called where quads() is true, which needs the AVX2 build.
void FastEngine::refresh_quad(int t, const int64_t rows[4], const Inputs& in, const Outputs& out) {
#ifdef MJREFRESH_FAST_AVX2
  refresh_quad_avx2(t, rows, in, out);
#else
  (void)t, (void)rows, (void)in, (void)out;
#endif
}

#ifdef MJREFRESH_FAST_AVX2
[[gnu::target("avx2")]] void FastEngine::refresh_pair_avx2(int t, int64_t row_a, int64_t row_b,
                                                           const Inputs& in, const Outputs& out) {
  const int64_t rows[2] = {row_a, row_b};
  lanes_pass<2, true>(t, rows, in, out);
}

[[gnu::target("avx2")]] void FastEngine::refresh_quad_avx2(int t, const int64_t rows[4],
                                                           const Inputs& in, const Outputs& out) {
  lanes_pass<4, true>(t, rows, in, out);
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
  bool all = all_lanes(finite);
  if (i < nh) {  // an odd hinge: two lanes, as half_angles
    // Computed whatever `all` says: behind `all &&` it was skipped once an
    // earlier angle was not finite in either row, and the pose pass then
    // read the last hinge's terms left by another call (the other row
    // wrong too, not only the row with the non-finite angle).
    const bool last = all_lanes(half_angle(hinges_[i], Row2{{qpos_a, qpos_b}}, half));
    all = all && last;
  }
  return all;
}
#endif

}  // namespace mjrefresh
