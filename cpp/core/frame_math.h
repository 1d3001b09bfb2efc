// Frame arithmetic shared by the exact and the fast engine: small 3-D
// vector/quaternion kernels and the two compositions both engines write
// outputs with (the pose of a frame in another frame, and the velocity of a
// rigid frame at a point).
//
// Contract
// - Pure inline templates on caller-owned arrays; no state, no allocation,
//   no MuJoCo calls; safe on any thread. NaN/Inf in, NaN/Inf out.
// - Each kernel evaluates the same expressions, in the same order, as the
//   MuJoCo 3.11 function named in its comment (engine_util_spatial.c /
//   engine_util_blas.c). MuJoCo 4.0 changed the rounding of some of them
//   (mju_mulQuat), so the compositions (pos_in_frame, quat_in_frame) are
//   templates over the kernel set K: Inline (these kernels, inlinable: the
//   fast engine) or a set calling libmujoco's own functions (the exact
//   engine, whose relative outputs must equal mj_forward's framepos /
//   framequat bit for bit on every MuJoCo version).
// - T is the value type of row data: double, or a vector of lanes (the fast
//   engine's V2, two rows per SSE2 register) computing lane by lane exactly
//   what the double version computes. U (model constants) is double or T.
// - Output arguments may alias inputs only where stated.
// - always_inline: the fast engine's AVX2 build of its pair pass
//   (cpp/fast/kernel_isa.h) must get them compiled for AVX2, not call their
//   baseline build.
#pragma once

namespace mjrefresh::math {

template <class T>
[[gnu::always_inline]] inline void copy3(T r[3], const T a[3]) {
  r[0] = a[0];
  r[1] = a[1];
  r[2] = a[2];
}

template <class T>
[[gnu::always_inline]] inline void copy4(T r[4], const T a[4]) {
  r[0] = a[0];
  r[1] = a[1];
  r[2] = a[2];
  r[3] = a[3];
}

// mju_sub3.
template <class T>
[[gnu::always_inline]] inline void sub3(T r[3], const T a[3], const T b[3]) {
  r[0] = a[0] - b[0];
  r[1] = a[1] - b[1];
  r[2] = a[2] - b[2];
}

// mju_addTo3.
template <class T>
[[gnu::always_inline]] inline void add_to3(T r[3], const T a[3]) {
  r[0] += a[0];
  r[1] += a[1];
  r[2] += a[2];
}

// mju_addToScl3.
template <class T>
[[gnu::always_inline]] inline void add_to_scl3(T r[3], const T a[3], T s) {
  r[0] += a[0] * s;
  r[1] += a[1] * s;
  r[2] += a[2] * s;
}

// mju_cross; r must not alias a or b.
template <class T>
[[gnu::always_inline]] inline void cross(T r[3], const T a[3], const T b[3]) {
  r[0] = a[1] * b[2] - a[2] * b[1];
  r[1] = a[2] * b[0] - a[0] * b[2];
  r[2] = a[0] * b[1] - a[1] * b[0];
}

// mju_mulMatVec3 / mju_rotVecMat: r = M v (row-major 3x3); r must not alias v.
// v may be a model constant (U = double) or row data (U = T).
template <class T, class U>
[[gnu::always_inline]] inline void mat_vec(T r[3], const T m[9], const U v[3]) {
  r[0] = m[0] * v[0] + m[1] * v[1] + m[2] * v[2];
  r[1] = m[3] * v[0] + m[4] * v[1] + m[5] * v[2];
  r[2] = m[6] * v[0] + m[7] * v[1] + m[8] * v[2];
}

// mju_mulMatTVec3 / mju_rotVecMatT: r = M^T v; r must not alias v.
template <class T>
[[gnu::always_inline]] inline void mat_t_vec(T r[3], const T m[9], const T v[3]) {
  r[0] = m[0] * v[0] + m[3] * v[1] + m[6] * v[2];
  r[1] = m[1] * v[0] + m[4] * v[1] + m[7] * v[2];
  r[2] = m[2] * v[0] + m[5] * v[1] + m[8] * v[2];
}

// mju_mulQuat; r may alias a or b.
template <class T, class U>
[[gnu::always_inline]] inline void mul_quat(T r[4], const T a[4], const U b[4]) {
  const T t0 = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
  const T t1 = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
  const T t2 = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
  const T t3 = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
  r[0] = t0;
  r[1] = t1;
  r[2] = t2;
  r[3] = t3;
}

// mju_negQuat; r may alias q.
template <class T>
[[gnu::always_inline]] inline void neg_quat(T r[4], const T q[4]) {
  r[0] = q[0];
  r[1] = -q[1];
  r[2] = -q[2];
  r[3] = -q[3];
}

// The kernels above as a kernel set for the compositions below.
struct Inline {
  template <class T>
  [[gnu::always_inline]] static void sub3(T r[3], const T a[3], const T b[3]) {
    math::sub3(r, a, b);
  }
  template <class T>
  [[gnu::always_inline]] static void mat_t_vec(T r[3], const T m[9], const T v[3]) {
    math::mat_t_vec(r, m, v);
  }
  template <class T>
  [[gnu::always_inline]] static void neg_quat(T r[4], const T q[4]) {
    math::neg_quat(r, q);
  }
  template <class T>
  [[gnu::always_inline]] static void mul_quat(T r[4], const T a[4], const T b[4]) {
    math::mul_quat(r, a, b);
  }
};

// Position of world point `pos` in the frame (ref_pos, ref_mat): framepos
// with a reference frame in mj_sensorPos (mju_sub3, then mju_mulMatTVec3).
template <class K = Inline, class T>
[[gnu::always_inline]] inline void pos_in_frame(T r[3], const T pos[3], const T ref_pos[3],
                                                const T ref_mat[9]) {
  T d[3];
  K::sub3(d, pos, ref_pos);
  K::mat_t_vec(r, ref_mat, d);
}

// Orientation `quat` relative to `ref_quat`: framequat with a reference
// frame in mj_sensorPos (mju_negQuat, then mju_mulQuat). r may alias quat.
template <class K = Inline, class T>
[[gnu::always_inline]] inline void quat_in_frame(T r[4], const T quat[4], const T ref_quat[4]) {
  T rq[4];
  K::neg_quat(rq, ref_quat);
  K::mul_quat(r, rq, quat);
}

// Linear velocity at world point `point` of a rigid frame whose origin
// `origin` moves with linear velocity v and angular velocity w:
// r = v + w x (point - origin), the shift of mju_transformSpatial / the
// cdof chain of mj_comVel. r must not alias w, point or origin.
template <class T>
[[gnu::always_inline]] inline void velocity_at(T r[3], const T v[3], const T w[3], const T point[3],
                                               const T origin[3]) {
  T d[3], c[3];
  sub3(d, point, origin);
  cross(c, w, d);
  r[0] = v[0] + c[0];
  r[1] = v[1] + c[1];
  r[2] = v[2] + c[2];
}

}  // namespace mjrefresh::math
