// The fast engine's pose/velocity pass (mj_kinematics + the cdof*qvel
// velocity chain restricted to the visited bodies), as member templates of
// FastEngine.
//
// Contract
// - Header-only on purpose: the pass is instantiated for one row (double)
//   and for two rows in SSE2 lanes (V2), with the template's or per-row model
//   values, and must be inlined into refresh_row/refresh_pair (one TU,
//   fast_engine.cc, the only includer): out of line it is measurably slower.
//   GCC left the per-row-fields pair instantiation and body_velocity out of
//   line on its own (+17% per row with fields on the 2-vCPU AMD EPYC VM;
//   re-measure: python -m bench.research.model_fields), hence always_inline.
// - Reads only the engine's plan (bodies_, joints_, hinges_, declared_) and
//   the given row data; writes only the given scratch arrays. Same
//   operations per lane (where a lane's values decide, as in
//   mat_axis_lanes, both results are computed and each lane keeps its own).
#pragma once

#include <type_traits>

#include "fast/fast_engine.h"
#include "fast/fast_kernels.h"
#include "fast/kernels_avx2.h"
#include "fast/lanes.h"

namespace mjrefresh {

// How the pose pass reads the model values it takes per row: the template's
// (inline in Body/Joint) or a row's / a pair's field blocks (KinVals).
struct FastEngine::TemplateKin {
  template <class B>
  static double body_pos(const B& b, int k) {
    return b.pos[k];
  }
  template <class B>
  static double body_quat(const B& b, int k) {
    return b.quat[k];
  }
  template <class J>
  static double jnt_pos(const J& j, int k) {
    return j.pos[k];
  }
  template <class J>
  static double jnt_axis(const J& j, int k) {
    return j.axis[k];
  }
};
template <class A>
struct FastEngine::FieldKin {
  KinVals<A> v;
  template <class B>
  auto body_pos(const B& b, int k) const {
    return v.body_pos[3 * b.id + k];
  }
  template <class B>
  auto body_quat(const B& b, int k) const {
    return v.body_quat[4 * b.id + k];
  }
  // q[k] = body_quat(b, k) for k < 4; a quad's four rows by one transpose.
  template <class B, class U>
  [[gnu::always_inline]] void body_quat4(const B& b, U q[4]) const {
    if constexpr (requires { v.body_quat.transposed4(0, q); }) {
      v.body_quat.transposed4(4 * b.id, q);
    } else {
      for (int k = 0; k < 4; ++k) q[k] = body_quat(b, k);
    }
  }
  template <class J>
  auto jnt_pos(const J& j, int k) const {
    return v.jnt_pos[3 * j.id + k];
  }
  template <class J>
  auto jnt_axis(const J& j, int k) const {
    return v.jnt_axis[3 * j.id + k];
  }
};

// Velocity of visited body `s` (world angular velocity, linear velocity of
// the frame origin): the sum of cdof*qvel along the chain that mj_comPos and
// mj_comVel form, taken at the body origin instead of the subtree CoM. Free
// and ball rotations use the body's final axes; free translations are
// world-frame. Needs the parent's velocity and this body's final pose and
// joint anchors/axes (so it runs right after the body's pose).
template <class T, class R>
[[gnu::always_inline]] inline void FastEngine::body_velocity(int s, StateT<T>* st, const T* anchors,
                                                             const T* half, bool check_lanes,
                                                             R qvel) const {
  using namespace fast;
  const Body& b = bodies_[s];
  StateT<T>& x = st[s];
  const StateT<T>& p = st[b.parent];
  if (b.still) {  // mj_objectVelocity's quick return (Body::still)
    const T zero{};
    x.v[0] = x.v[1] = x.v[2] = x.w[0] = x.w[1] = x.w[2] = zero;
    return;
  }
  velocity_at(x.v, p.v, p.w, x.pos, p.pos);
  copy3(x.w, p.w);
  if (b.hinge_axis >= 0) {  // the hinge case below, for the common link
    const int c = b.hinge_axis, j = b.jnt_begin;
    T axis[3];
    mat_column(axis, x.mat, c);
    if (check_lanes) {
      const auto ok = mat_axis_lanes(j, half, T{} == T{});  // hinge_axis: the template's quat
      if (!all_lanes(ok)) keep_lanes(axis, anchors + 6 * j + 3, ok);
    }
    add_to_scl3(x.w, axis, qvel[joints_[j].dadr]);
    return;
  }
  if (b.kind == Body::kFree) {
    const T lin[3] = {qvel[b.dadr], qvel[b.dadr + 1], qvel[b.dadr + 2]};
    add_to3(x.v, lin);
    for (int k = 0; k < 3; ++k) {
      T axis[3];
      mat_column(axis, x.mat, k);
      add_to_scl3(x.w, axis, qvel[b.dadr + 3 + k]);  // anchor = body origin: no linear term
    }
    return;
  }
  T r[3], c[3];
  for (int j = b.jnt_begin; j < b.jnt_end; ++j) {
    const Joint& jt = joints_[j];
    const T* xanchor = anchors + 6 * j;
    const T* xaxis = xanchor + 3;
    switch (jt.type) {
      case mjJNT_SLIDE:
        add_to_scl3(x.v, xaxis, qvel[jt.dadr]);
        break;
      case mjJNT_HINGE: {
        const T qd = qvel[jt.dadr];
        add_to_scl3(x.w, xaxis, qd);
        if (jt.at_origin) break;  // x.pos - xanchor is exactly 0
        sub3(r, x.pos, xanchor);
        cross(c, xaxis, r);
        add_to_scl3(x.v, c, qd);
        break;
      }
      case mjJNT_BALL:
        if (!jt.at_origin) sub3(r, x.pos, xanchor);
        for (int k = 0; k < 3; ++k) {
          const T qd = qvel[jt.dadr + k];
          T axis[3];
          mat_column(axis, x.mat, k);
          add_to_scl3(x.w, axis, qd);
          if (jt.at_origin) continue;
          cross(c, axis, r);
          add_to_scl3(x.v, c, qd);
        }
        break;
      default:  // a free joint among several joints cannot be compiled
        break;
    }
  }
}

// Per lane (a bool for one row, all ones per lane for a pair or quad):
// whether a body's own body_quat q (given per row; U = double or the lanes'
// vector) is unit to kUnitQuatTol.
template <class T, class U>
[[gnu::always_inline]] inline auto FastEngine::unit_quat_lanes(const U q[4]) {
  using namespace fast;
  const U sq = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3] - 1.0;
  auto unit = T{} == T{};
  if constexpr (std::is_same_v<U, double>) {
    if (!(std::fabs(sq) < kUnitQuatTol)) unit = !unit;
  } else {
    unit = (sq < kUnitQuatTol) & (sq > -kUnitQuatTol);
  }
  return unit;
}

// World axes of body s's hinges that take them from its final rotation
// (Joint::axis_from_mat), into anchors: xmat's column for a unit axis, xmat
// times the axis otherwise (the same bits for a unit axis and finite xmat).
// Lanes that may not (mat_axis_lanes) keep the quaternion rotation the
// joint loop wrote for them.
template <class T, class M, class K>
[[gnu::always_inline]] inline void FastEngine::axes_from_mat(int s, const StateT<T>& x, T* anchors,
                                                             const T* half, bool check_lanes,
                                                             M unit_q, const K& kv) const {
  using namespace fast;
  using U = std::decay_t<decltype(kv.body_pos(bodies_[0], 0))>;  // double, or V2 per lane
  const Body& b = bodies_[s];
  for (int j = b.jnt_begin; j < b.jnt_end; ++j) {
    const Joint& jt = joints_[j];
    if (!jt.axis_from_mat) continue;
    T* xaxis = anchors + 6 * j + 3;
    T axis[3];
    if (jt.unit_axis >= 0) {
      mat_column(axis, x.mat, jt.unit_axis);
    } else {
      const U jaxis[3] = {kv.jnt_axis(jt, 0), kv.jnt_axis(jt, 1), kv.jnt_axis(jt, 2)};
      mat_vec(axis, x.mat, jaxis);
    }
    if (check_lanes) {
      const auto ok = mat_axis_lanes(j, half, unit_q);
      if (!all_lanes(ok)) keep_lanes(axis, xaxis, ok);
    }
    copy3(xaxis, axis);
  }
}

// Half-angle cos/sin of every visited hinge (mju_axisAngle2Quat's terms)
// into half (cos at 2j, sin at 2j+1 for joint j), before the pose pass:
// they depend on qpos only, so the CPU overlaps them instead of waiting for
// each on a body's dependency chain. Returns whether every angle is finite
// in every lane. The AVX2 pair pass computes the same values four at a
// time instead (half_angles_avx2, fast_engine.cc); the quad pass, four
// lanes per hinge, is this template with T = V4.
template <class T, class R>
[[gnu::always_inline]] inline bool FastEngine::half_angles(R qpos, T* half) const {
  using namespace fast;
  auto finite = T{} == T{};  // per lane: every hinge angle so far finite
  for (int j : hinges_) finite = finite & half_angle(j, qpos, half);
  return all_lanes(finite);
}

// half_angles for hinge j alone; per lane: whether its angle is finite.
template <class T, class R>
[[gnu::always_inline]] inline auto FastEngine::half_angle(int j, R qpos, T* half) const {
  using namespace fast;
  const Joint& jt = joints_[j];
  const T angle = qpos[jt.qadr] - jt.qpos0;
  T sn, cs;
  if constexpr (std::is_same_v<T, double>) {
    sn = 0, cs = 1;  // angle 0: exactly the unit quaternion
    if (angle != 0) sin_cos(angle * 0.5, &sn, &cs);
  } else {
    sin_cos(angle * 0.5, &sn, &cs);  // sin_cos(0) is exactly (0, 1)
  }
  half[2 * j] = cs;
  half[2 * j + 1] = sn;
  return cs == cs;
}

// Poses (mj_kinematics restricted to the visited bodies) and, where needed,
// velocities, in one pass from parents to children. R reads row data: one
// row (T = double) or two rows into the two lanes (T = V2).
// kv reads the model values: TemplateKin, or FieldKin over one row's field
// blocks (double) or a pair's, lane by lane (V2). half holds the hinges'
// half-angle terms (half_angles), finite what half_angles returned.
template <class T, class R, class K>
[[gnu::always_inline]] inline void FastEngine::kinematics(StateT<T>* st, T* anchors, const T* half,
                                                          bool finite, R qpos, R qvel, R mocap_pos,
                                                          R mocap_quat, const K& kv, bool want_vel,
                                                          bool want_body_vel) const {
  using namespace fast;
  using U = std::decay_t<decltype(kv.body_pos(bodies_[0], 0))>;  // double, or V2 per lane
  const bool check_any = !finite || declared_[kBodyQuat];        // some body may need check_lanes
  const int nslot = static_cast<int>(bodies_.size());
  for (int s = 1; s < nslot; ++s) {
    const Body& b = bodies_[s];
    StateT<T>& x = st[s];
    // Per row (FieldKin), the body's own quaternion is read once for the
    // unit check and the pose: each read gathers the lanes' rows, and the
    // compiler cannot merge two reads across the stores between them. The
    // quadruped tracking refresh with body_pos, body_quat and jnt_axis per
    // row went from 3401 to 3271 instructions per row (callgrind, AVX2
    // quads; python -m bench.research.instructions --fields). The
    // template's values (TemplateKin) are read where used, as before.
    constexpr bool per_row = !std::is_same_v<K, TemplateKin>;
    U bquat[4];
    if constexpr (per_row) {
      if (declared_[kBodyQuat] ||
          (b.kind != Body::kFree && b.kind != Body::kMocap && (b.parent == 0 || !b.unit_quat))) {
        kv.body_quat4(b, bquat);
      } else {
        // Not read: set only so that no path reads it unset (zeroing it for
        // every body instead cost 65 instructions per row).
        for (int k = 0; k < 4; ++k) bquat[k] = U{};
      }
    }
    const auto own_quat = [&](int k) {
      if constexpr (per_row) {
        return bquat[k];
      } else {
        return kv.body_quat(b, k);
      }
    };
    auto unit_q = T{} == T{};  // per lane: this body's quaternion unit (the template's: planned)
    // Whether a lane may not take one of this body's hinge axes from xmat
    // (mat_axis_lanes), asked per hinge only then: some angle is not finite,
    // or this body's per-row quaternion is not unit in some lane. Decided
    // per body, not for every body once body_quat is per row: without the
    // per-hinge lane masks of unit rows, the quadruped tracking refresh with
    // body_pos, body_quat and jnt_axis per row went from 3285 to 3231
    // instructions per row (callgrind, AVX2 quads; python -m
    // bench.research.instructions --fields).
    bool check_lanes = check_any;
    if constexpr (per_row) {
      if (declared_[kBodyQuat]) {
        unit_q = unit_quat_lanes<T>(bquat);
        check_lanes = !finite || !all_lanes(unit_q);
      }
    }
    if (b.kind == Body::kFree) {
      for (int k = 0; k < 3; ++k) x.pos[k] = qpos[b.qadr + k];
      for (int k = 0; k < 4; ++k) x.quat[k] = qpos[b.qadr + 3 + k];
      normalize4(x.quat);  // mj_normalizeQuat on qpos
    } else {
      const StateT<T>& p = st[b.parent];
      if (b.kind == Body::kMocap) {
        const T mpos[3] = {mocap_pos[3 * b.mocap], mocap_pos[3 * b.mocap + 1],
                           mocap_pos[3 * b.mocap + 2]};
        T mquat[4] = {mocap_quat[4 * b.mocap], mocap_quat[4 * b.mocap + 1],
                      mocap_quat[4 * b.mocap + 2], mocap_quat[4 * b.mocap + 3]};
        normalize4(mquat);
        if (b.parent == 0) {  // mj_kinematics copies: a non-finite component stays alone
          copy3(x.pos, mpos);
          copy4(x.quat, mquat);
        } else {
          T vec[3];
          mat_vec(vec, p.mat, mpos);
          x.pos[0] = p.pos[0] + vec[0];
          x.pos[1] = p.pos[1] + vec[1];
          x.pos[2] = p.pos[2] + vec[2];
          mul_quat(x.quat, p.quat, mquat);
        }
      } else if (b.parent == 0) {
        // Parent is the world: mj_kinematics copies body_pos/body_quat.
        for (int k = 0; k < 3; ++k) x.pos[k] = T{} + kv.body_pos(b, k);
        for (int k = 0; k < 4; ++k) x.quat[k] = T{} + own_quat(k);
      } else {
        // A zero offset or a unit rotation gives the parent's values exactly
        // (for finite input); skipping them saves a third of a body's work.
        if (b.zero_pos) {
          copy3(x.pos, p.pos);
        } else {
          const U bpos[3] = {kv.body_pos(b, 0), kv.body_pos(b, 1), kv.body_pos(b, 2)};
          T vec[3];
          mat_vec(vec, p.mat, bpos);
          x.pos[0] = p.pos[0] + vec[0];
          x.pos[1] = p.pos[1] + vec[1];
          x.pos[2] = p.pos[2] + vec[2];
        }
        if (b.unit_quat) {
          copy4(x.quat, p.quat);
        } else {
          const U q[4] = {own_quat(0), own_quat(1), own_quat(2), own_quat(3)};
          mul_quat(x.quat, p.quat, q);
        }
      }
      // xaxis is only read by the velocities (and slides).
      const bool vel = want_vel && (b.vel_sensor || (b.vel_body && want_body_vel));
      if (b.hinge_axis >= 0) {  // the loop's hinge case for the common link
        const int j = b.jnt_begin;
        if (vel && check_lanes && !all_lanes(mat_axis_lanes(j, half, unit_q))) {
          const double* axis = joints_[j].axis;  // the template's (Body::hinge_axis)
          rot_vec_quat(anchors + 6 * j + 3, axis, x.quat);
        }
        mul_quat_axis(x.quat, b.hinge_axis, half[2 * j], half[2 * j + 1]);
      }
      for (int j = b.jnt_begin; j < b.jnt_end && b.hinge_axis < 0; ++j) {
        const Joint& jt = joints_[j];
        T* xanchor = anchors + 6 * j;
        T* xaxis = xanchor + 3;
        const U jaxis[3] = {kv.jnt_axis(jt, 0), kv.jnt_axis(jt, 1), kv.jnt_axis(jt, 2)};
        // The quaternion rotation of the axis, unless axes_from_mat takes it
        // from xmat in every lane.
        if (jt.type == mjJNT_SLIDE ||
            (vel &&
             (!jt.axis_from_mat || (check_lanes && !all_lanes(mat_axis_lanes(j, half, unit_q)))))) {
          rot_vec_quat(xaxis, jaxis, x.quat);
        }
        if (jt.centered) {
          copy3(xanchor, x.pos);  // rot_vec_quat(0) + pos, exactly
        } else {
          const U jpos[3] = {kv.jnt_pos(jt, 0), kv.jnt_pos(jt, 1), kv.jnt_pos(jt, 2)};
          rot_vec_quat(xanchor, jpos, x.quat);
          add_to3(xanchor, x.pos);
        }
        if (jt.type == mjJNT_SLIDE) {
          add_to_scl3(x.pos, xaxis, qpos[jt.qadr] - jt.qpos0);
          continue;
        }
        if (jt.type == mjJNT_BALL) {
          T qloc[4] = {qpos[jt.qadr], qpos[jt.qadr + 1], qpos[jt.qadr + 2], qpos[jt.qadr + 3]};
          normalize4(qloc);
          mul_quat(x.quat, x.quat, qloc);
        } else if (jt.unit_axis >= 0) {
          mul_quat_axis(x.quat, jt.unit_axis, half[2 * j], half[2 * j + 1]);
        } else {
          // mju_axisAngle2Quat with the precomputed half-angle terms. Its zero
          // angle gives the unit quaternion whatever the axis (a non-finite
          // per-row jnt_axis included); sn == 0 exactly when the angle is 0.
          const T sn = half[2 * j + 1];
          T qloc[4] = {half[2 * j], jaxis[0] * sn, jaxis[1] * sn, jaxis[2] * sn};
          if constexpr (std::is_same_v<T, double>) {
            if (sn == 0) qloc[1] = qloc[2] = qloc[3] = 0;  // cs is exactly 1
          } else {
            const auto zero_angle = sn == 0;  // per lane: all ones where the angle is 0
            for (int k = 1; k < 4; ++k) qloc[k] = from_bits(bits_of(qloc[k]) & ~zero_angle);
          }
          mul_quat(x.quat, x.quat, qloc);
        }
        // correct for off-center rotation (exactly zero for a centered
        // joint): xpos = xanchor - rot(jnt_pos, xquat), as mj_kinematics.
        // Not xpos + ((xanchor - xpos) - rot): an infinite position gave
        // inf - inf = NaN there where MuJoCo keeps inf (and then clips it
        // to a sensor's cutoff).
        if (!jt.centered) {
          const U jpos[3] = {kv.jnt_pos(jt, 0), kv.jnt_pos(jt, 1), kv.jnt_pos(jt, 2)};
          T rotated[3];
          rot_vec_quat(rotated, jpos, x.quat);
          sub3(x.pos, xanchor, rotated);
        }
      }
      if (b.rotates) {
        // mj_kinematics corrects the position after every rotational joint
        // by rotVecQuat(jnt_pos, xquat), which is NaN for a non-finite
        // rotation even when jnt_pos is 0 (the skipped centered case). A
        // product with a non-finite factor has a non-finite w; 0 * w is
        // exactly 0 otherwise.
        const T w0 = x.quat[0] * 0.0;
        x.pos[0] += w0;
        x.pos[1] += w0;
        x.pos[2] += w0;
      }
    }
    normalize4(x.quat);
    quat_mat(x.mat, x.quat);
    if (want_vel && (b.vel_sensor || (b.vel_body && want_body_vel))) {
      if (b.axes_from_mat) axes_from_mat(s, x, anchors, half, check_lanes, unit_q, kv);
      body_velocity(s, st, anchors, half, check_lanes, qvel);
    }
  }
}

}  // namespace mjrefresh
