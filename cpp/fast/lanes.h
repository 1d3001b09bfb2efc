// Row readers and lane masks for the fast engine's pose pass
// (kinematics.h): how a pass over one row, a pair (two rows in SSE2 lanes)
// or a quad (four rows in AVX2 lanes) reads its rows' data into its lanes,
// and the per-lane tests that decide where a hinge's world axis may come
// from the body's final rotation.
//
// Contract
// - Header-only, always inlined into the passes that kinematics.h defines
//   (fast_engine.cc, the only includer of kinematics.h, is the only user).
// - A lane reads only its own row: RowL<L>::operator[] and transposed4 give
//   the same values, lane by lane (the transpose only loads them together).
// - The V4 helpers (Row4, all_lanes(V4i)) are only instantiated in AVX2
//   code (kernel_isa.h).
#pragma once

#include <type_traits>

#include "fast/fast_kernels.h"
#include "fast/kernels_avx2.h"

namespace mjrefresh {

namespace fast {

// Row data for the kinematics: one row, or L rows read into the L lanes of
// a V2 (pair) or V4 (quad, AVX2 build only).
struct Row1 {
  const double* p;
  double operator[](int i) const { return p[i]; }
};
template <int L>
struct RowL {
  using V = std::conditional_t<L == 2, V2, V4>;
  const double* p[L];
  [[gnu::always_inline]] V operator[](int i) const {
    if constexpr (L == 2) {
      return V{p[0][i], p[1][i]};
    } else {
      return V{p[0][i], p[1][i], p[2][i], p[3][i]};
    }
  }
  // Quads: out[k] = (*this)[i + k] for k < 4, the same values read as one
  // 32-byte load per row and a 4x4 transpose (12 instructions, not 20).
  // Used for per-row body_quat: 3231 -> 3208 instructions per row on the
  // quadruped tracking refresh with body_pos, body_quat and jnt_axis per row
  // (callgrind; python -m bench.research.instructions --fields). Not for
  // three-value blocks: a 32-byte load would read past a row's last one.
  [[gnu::always_inline]] void transposed4(int i, V out[4]) const
    requires(L == 4)
  {
    // Unaligned 32-byte loads, as the lanes of a V4 (may alias doubles).
    typedef double Load [[gnu::vector_size(32), gnu::aligned(8), gnu::may_alias]];
    const V a = *reinterpret_cast<const Load*>(p[0] + i);
    const V b = *reinterpret_cast<const Load*>(p[1] + i);
    const V c = *reinterpret_cast<const Load*>(p[2] + i);
    const V d = *reinterpret_cast<const Load*>(p[3] + i);
    const V t0 = shuffle4<0, 4, 2, 6>(a, b);  // a0 b0 a2 b2
    const V t1 = shuffle4<1, 5, 3, 7>(a, b);  // a1 b1 a3 b3
    const V t2 = shuffle4<0, 4, 2, 6>(c, d);  // c0 d0 c2 d2
    const V t3 = shuffle4<1, 5, 3, 7>(c, d);  // c1 d1 c3 d3
    out[0] = shuffle4<0, 1, 4, 5>(t0, t2);
    out[1] = shuffle4<0, 1, 4, 5>(t1, t3);
    out[2] = shuffle4<2, 3, 6, 7>(t0, t2);
    out[3] = shuffle4<2, 3, 6, 7>(t1, t3);
  }
};
using Row2 = RowL<2>;
using Row4 = RowL<4>;

// Per lane: whether hinge j may take its world axis from xmat
// (Joint::axis_from_mat) in this row. Not where its angle is not finite:
// xmat is NaN there, while MuJoCo's axis, rotated before the joint turns, is
// not; nor where the body's quaternion is not unit (unit: unit_quat_lanes).
template <class T, class M>
[[gnu::always_inline]] inline M mat_axis_lanes(int j, const T* half, M unit) {
  const T cs = half[2 * j];  // the half-angle terms are NaN exactly for a non-finite angle
  if constexpr (std::is_same_v<T, double>) {
    return cs == cs && unit;
  } else {
    return (cs == cs) & unit;
  }
}

// Whether every lane of a mat_axis_lanes mask is set.
inline bool all_lanes(bool ok) { return ok; }
inline bool all_lanes(V2i ok) {
#ifdef __SSE2__
  return __builtin_ia32_movmskpd(std::bit_cast<V2>(ok)) == 3;  // one instruction, not two extracts
#else
  return ok[0] && ok[1];
#endif
}
[[gnu::always_inline]] inline bool all_lanes(V4i ok) {
  return (ok[0] & ok[1] & ok[2] & ok[3]) != 0;
}

// axis = its own value in the lanes of `ok`, `other`'s elsewhere.
inline void keep_lanes(double axis[3], const double other[3], bool ok) {
  if (!ok) copy3(axis, other);
}
template <class V, class M>
[[gnu::always_inline]] inline void keep_lanes(V axis[3], const V other[3], M ok) {
  for (int k = 0; k < 3; ++k)
    axis[k] = from_bits((bits_of(axis[k]) & ok) | (bits_of(other[k]) & ~ok));
}

}  // namespace fast

}  // namespace mjrefresh
