// Small 3-D math kernels of the fast engine (on top of core/frame_math.h).
//
// Contract
// - Pure inline functions on caller-owned arrays; no state, no allocation,
//   no MuJoCo calls; safe on any thread. NaN/Inf in, NaN/Inf out (never a
//   trap or an error).
// - Each function evaluates the same expressions, in the same order, as the
//   MuJoCo function named in its comment (engine_util_spatial.c /
//   engine_util_blas.c), so the fast engine rounds like mj_kinematics and
//   differs from it by at most a few ulps where the summation order of the
//   velocity terms differs (MuJoCo sums cvel at the subtree CoM and shifts;
//   the fast engine sums at the body origin, with a hinge's world axis
//   taken from its body's final rotation where that is the same axis,
//   FastEngine::Joint::axis_from_mat). Inlining them instead of
//   calling libmujoco is what makes a body visit cost tens of nanoseconds.
// - Output arguments may alias inputs only where stated.
// - Every kernel is always_inline: the pair pass is compiled for AVX2 as
//   well (kernel_isa.h), and a kernel left out of line would run its
//   baseline build there; GCC's size limits also kept sin_cos and
//   normalize4 out of line in the baseline build (inlined: 5% fewer
//   instructions per quadruped tracking row, callgrind).
// - Lanes: the kernels are templates over the value type of row data, T =
//   double (one row), V2 (two rows in the two lanes of an SSE2 register) or
//   V4 (four rows in an AVX2 register: the quad pass, kernels_avx2.h).
//   A V2 kernel computes, lane by lane, exactly what the double kernel
//   computes for that lane's row (same operations in the same order); the
//   data-dependent shortcuts of the double versions (unit quaternion, zero
//   vector) are skipped there because the full formula gives the same
//   values for those inputs when they are finite: the same bits, except the
//   sign of a zero (quat_mat of (1, -0, 0, 0) has -0 off the diagonal where
//   mju_quat2Mat's shortcut, and a row alone, give +0; masking the identity
//   per lane cost +3.5% instructions per quadruped tracking row, callgrind,
//   for a difference no comparison of values sees). Model values (U) are one double
//   for both lanes, or a V2 when each lane's row has its own model values.
#pragma once

#include <mujoco/mujoco.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "core/frame_math.h"

namespace mjrefresh::fast {

// Two rows side by side (GCC/Clang vector extension; SSE2 on x86-64).
typedef double V2 __attribute__((vector_size(16)));

// The plain vector/quaternion kernels are shared with the exact engine.
using math::add_to3;
using math::add_to_scl3;
using math::copy3;
using math::copy4;
using math::cross;
using math::mat_t_vec;
using math::mat_vec;
using math::mul_quat;
using math::neg_quat;
using math::pos_in_frame;
using math::quat_in_frame;
using math::sub3;
using math::velocity_at;

// Range of q.q for which mju_normalize4 leaves q unchanged: sqrt is correctly
// rounded and monotonic, so |sqrt(x) - 1| <= mjMINVAL exactly when
// lo < x < hi for the two thresholds found here by stepping through the
// doubles next to 1 (a few dozen steps, once per process).
struct UnitBand {
  double lo, hi;
  UnitBand() {
    hi = 1;
    while (!(std::sqrt(hi) - 1 > mjMINVAL)) hi = std::nextafter(hi, 2.0);
    lo = 1;
    while (!(1 - std::sqrt(lo) > mjMINVAL)) lo = std::nextafter(lo, 0.0);
  }
};
inline const UnitBand kUnitBand;

// |q.q - 1| below which a model quaternion counts as unit, so that rotating
// by it and by its normalised self agree to rounding (Joint::axis_from_mat).
inline constexpr double kUnitQuatTol = 1e-12;

// mju_normalize4: unit quaternion for a (near) zero one; left alone when the
// norm is already within mjMINVAL of 1 (so a normalised input is unchanged).
// The band test decides "left alone" exactly as MuJoCo does but without the
// sqrt on the critical path of every body (and its branch is almost always
// taken the same way, unlike a test of |q.q - 1| against mjMINVAL).
[[gnu::always_inline]] inline void normalize4(double q[4]) {
  const double sq = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
  if (sq > kUnitBand.lo && sq < kUnitBand.hi) return;
  const double norm = std::sqrt(sq);
  if (norm < mjMINVAL) {
    q[0] = 1;
    q[1] = q[2] = q[3] = 0;
  } else if (std::fabs(norm - 1) > mjMINVAL) {
    const double inv = 1 / norm;
    q[0] *= inv;
    q[1] *= inv;
    q[2] *= inv;
    q[3] *= inv;
  }
}

// L lanes (T = V2 or V4): the common case (every lane in the band) in
// vector form, the rare rest lane by lane with the scalar rule.
template <int L, class T>
[[gnu::always_inline]] inline void normalize4_lanes(T q[4]) {
  const T sq = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
  const auto in_band = (sq > kUnitBand.lo) & (sq < kUnitBand.hi);
  auto all = in_band[0];
  for (int l = 1; l < L; ++l) all &= in_band[l];
  if (all) return;
  for (int l = 0; l < L; ++l) {
    double a[4] = {q[0][l], q[1][l], q[2][l], q[3][l]};
    normalize4(a);
    for (int k = 0; k < 4; ++k) q[k][l] = a[k];
  }
}
[[gnu::always_inline]] inline void normalize4(V2 q[4]) { normalize4_lanes<2>(q); }

// sin and cos of x (the half-angle terms of mju_axisAngle2Quat). For
// |x| <= 1e5: Cody-Waite reduction by pi/2 and the fdlibm kernels
// (__kernel_sin/__kernel_cos coefficients), within ~2 ulp of the correctly
// rounded values libm returns; about 3x cheaper than glibc's sincos, which
// is a sixth of a hinge body's cost (2-vCPU AMD EPYC VM; callgrind:
// python -m bench.research.instructions). Larger or non-finite x go to libm.
// T = V2 computes both lanes at once (the quadrant fix-up per lane).
constexpr double kTwoOverPi = 6.36619772367581382433e-01;
constexpr double kPio2Hi = 1.57079632673412561417e+00;  // first 33 bits of pi/2
constexpr double kPio2Lo = 6.07710050650619224932e-11;  // pi/2 - kPio2Hi
constexpr double kRound = 6755399441055744.0;           // 1.5 * 2^52

// Bits of a double (T = double) or of both lanes (T = V2).
typedef int64_t V2i __attribute__((vector_size(16)));
[[gnu::always_inline]] inline int64_t bits_of(double x) { return std::bit_cast<int64_t>(x); }
[[gnu::always_inline]] inline V2i bits_of(V2 x) { return std::bit_cast<V2i>(x); }
[[gnu::always_inline]] inline double from_bits(int64_t b) { return std::bit_cast<double>(b); }
[[gnu::always_inline]] inline V2 from_bits(V2i b) { return std::bit_cast<V2>(b); }
// Four lanes (V4): defined in kernels_avx2.h, for AVX2 code only.
typedef double V4 __attribute__((vector_size(32)));
typedef int64_t V4i __attribute__((vector_size(32)));
inline V4i bits_of(V4 x);
inline V4 from_bits(V4i b);

template <class T>
[[gnu::always_inline]] inline void sin_cos_kernel(T x, T* sn, T* cs) {
  // Round x * 2/pi to the nearest integer n without a libm call: adding
  // 1.5 * 2^52 leaves n in the low mantissa bits of t (|x * 2/pi| < 2^51).
  const T t = x * kTwoOverPi + kRound;
  const T n = t - kRound;
  const T r = (x - n * kPio2Hi) - n * kPio2Lo;  // |n| < 2^17: n * kPio2Hi is exact
  // The fdlibm polynomials in z = r^2, evaluated by Estrin's scheme (three
  // independent pairs) rather than Horner's, to shorten the dependency chain.
  const T z = r * r;
  const T z2 = z * z;
  const T z4 = z2 * z2;
  const T ps = (-1.66666666666666324348e-01 + z * 8.33333333332248946124e-03) +
               z2 * (-1.98412698298579493134e-04 + z * 2.75573137070700676789e-06) +
               z4 * (-2.50507602534068634195e-08 + z * 1.58969099521155010221e-10);
  const T pc = (4.16666666666666019037e-02 + z * -1.38888888888741095749e-03) +
               z2 * (2.48015872894767294178e-05 + z * -2.75573143513906633035e-07) +
               z4 * (2.08757232129817482790e-09 + z * -1.13596475577881948265e-11);
  const T s = r + z * r * ps;
  const T c = 1 - 0.5 * z + z2 * pc;
  // Quadrant q = n mod 4: (sin, cos) = (s, c), (c, -s), (-s, -c), (-c, s),
  // selected with bit masks rather than branches (q is data, unpredictable).
  const auto q = bits_of(t) & 3;
  const auto swap = -(q & 1);               // all ones for odd q
  const auto sign_s = (q & 2) << 62;        // sign bit for q = 2, 3
  const auto sign_c = ((q + 1) & 2) << 62;  // sign bit for q = 1, 2
  const auto bs = bits_of(s), bc = bits_of(c);
  *sn = from_bits(((swap & bc) | (~swap & bs)) ^ sign_s);
  *cs = from_bits(((swap & bs) | (~swap & bc)) ^ sign_c);
}

[[gnu::always_inline]] inline void sin_cos(double x, double* sn, double* cs) {
  if (!(std::fabs(x) <= 1e5)) {
    *sn = std::sin(x);
    *cs = std::cos(x);
    return;
  }
  sin_cos_kernel(x, sn, cs);
}

// sin_cos of the L lanes of x: the kernel where every lane is in its range,
// the one-lane version (libm out of range) lane by lane otherwise: the same
// values per lane either way.
template <int L, class T>
[[gnu::always_inline]] inline void sin_cos_lanes(T x, T* sn, T* cs) {
  const auto in_range = (x <= 1e5) & (x >= -1e5);  // false for NaN, as sin_cos(double)
  auto all = in_range[0];
  for (int l = 1; l < L; ++l) all &= in_range[l];
  if (!all) {
    for (int l = 0; l < L; ++l) {
      double s, c;
      sin_cos(x[l], &s, &c);
      (*sn)[l] = s;
      (*cs)[l] = c;
    }
    return;
  }
  sin_cos_kernel(x, sn, cs);
}
[[gnu::always_inline]] inline void sin_cos(V2 x, V2* sn, V2* cs) { sin_cos_lanes<2>(x, sn, cs); }

// q = q * (c, s e_k): mul_quat by the rotation about coordinate axis k with
// the terms that are products with an exact zero dropped. For finite input
// this gives the same bits as mul_quat (adding or subtracting a signed zero
// leaves a nonzero sum unchanged), with half the multiplications.
template <class T>
[[gnu::always_inline]] inline void mul_quat_axis(T q[4], int k, T c, T s) {
  const T a0 = q[0], a1 = q[1], a2 = q[2], a3 = q[3];
  switch (k) {
    case 0:
      q[0] = a0 * c - a1 * s;
      q[1] = a0 * s + a1 * c;
      q[2] = a2 * c + a3 * s;
      q[3] = -a2 * s + a3 * c;
      break;
    case 1:
      q[0] = a0 * c - a2 * s;
      q[1] = a1 * c - a3 * s;
      q[2] = a0 * s + a2 * c;
      q[3] = a1 * s + a3 * c;
      break;
    default:
      q[0] = a0 * c - a3 * s;
      q[1] = a1 * c + a2 * s;
      q[2] = -a1 * s + a2 * c;
      q[3] = a0 * s + a3 * c;
      break;
  }
}

// mju_rotVecQuat for a model vector v (joint axis or position): one value
// for all lanes (U = double) or one per lane (U = T = V2, per-row model
// values; no zero shortcut then, the full formula gives +0 for finite q);
// r must not alias v.
template <class T, class U>
[[gnu::always_inline]] inline void rot_vec_quat(T r[3], const U v[3], const T q[4]) {
  if constexpr (std::is_same_v<U, double>) {
    if (v[0] == 0 && v[1] == 0 && v[2] == 0) {
      r[0] = r[1] = r[2] = T{} + 0.0;
      return;
    }
  }
  if constexpr (std::is_same_v<T, double>) {
    if (q[0] == 1 && q[1] == 0 && q[2] == 0 && q[3] == 0) {
      copy3(r, v);
      return;
    }
  }
  // tmp = q_w * v + cross(q_xyz, v)
  const T t0 = q[0] * v[0] + q[2] * v[2] - q[3] * v[1];
  const T t1 = q[0] * v[1] + q[3] * v[0] - q[1] * v[2];
  const T t2 = q[0] * v[2] + q[1] * v[1] - q[2] * v[0];
  // r = v + 2 * cross(q_xyz, tmp)
  r[0] = v[0] + 2 * (q[2] * t2 - q[3] * t1);
  r[1] = v[1] + 2 * (q[3] * t0 - q[1] * t2);
  r[2] = v[2] + 2 * (q[1] * t1 - q[2] * t0);
}

// Column c of a row-major 3x3 matrix: the world direction of a frame's
// c-th axis (free, ball and hinge axes of a body's final rotation).
template <class T>
[[gnu::always_inline]] inline void mat_column(T r[3], const T m[9], int c) {
  r[0] = m[c];
  r[1] = m[c + 3];
  r[2] = m[c + 6];
}

// mju_quat2Mat (row-major).
template <class T>
[[gnu::always_inline]] inline void quat_mat(T r[9], const T q[4]) {
  if constexpr (std::is_same_v<T, double>) {
    if (q[0] == 1 && q[1] == 0 && q[2] == 0 && q[3] == 0) {
      r[0] = r[4] = r[8] = 1;
      r[1] = r[2] = r[3] = r[5] = r[6] = r[7] = 0;
      return;
    }
  }
  const T q00 = q[0] * q[0], q01 = q[0] * q[1], q02 = q[0] * q[2], q03 = q[0] * q[3];
  const T q11 = q[1] * q[1], q12 = q[1] * q[2], q13 = q[1] * q[3];
  const T q22 = q[2] * q[2], q23 = q[2] * q[3], q33 = q[3] * q[3];
  r[0] = q00 + q11 - q22 - q33;
  r[4] = q00 - q11 + q22 - q33;
  r[8] = q00 - q11 - q22 + q33;
  r[1] = 2 * (q12 - q03);
  r[2] = 2 * (q13 + q02);
  r[3] = 2 * (q12 + q03);
  r[5] = 2 * (q23 - q01);
  r[6] = 2 * (q13 - q02);
  r[7] = 2 * (q23 + q01);
}

}  // namespace mjrefresh::fast
