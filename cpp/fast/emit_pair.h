// The fixed writes of a pair or a quad of rows
// (FastEngine::write_fixed_lanes), inlined into the lane passes so that
// they are compiled for each instruction set the pass is
// (fast/kernel_isa.h).
//
// Contract
// - write_fixed_lanes(st, sums, group, d) writes, from the lane States of a
//   pair (V2) or a quad (V4), exactly what write_fixed writes for each row
//   alone: lane l to row d[l]'s sensordata (the gathered copies, relative
//   poses, fixed subtree and site sensors). Included by fast_engine.cc
//   only.
#pragma once

#include <cstring>

#include "fast/fast_engine.h"
#include "fast/fast_kernels.h"
#include "fast/kernels_avx2.h"

namespace mjrefresh {
namespace fast {

// oa[0..1] = lane 0 of (x, y), ob[0..1] = lane 1: one transposing shuffle
// and a 16-byte store per row for float64 outputs.
[[gnu::always_inline]] inline void put_lanes2(double* oa, double* ob, V2 x, V2 y) {
  const V2 lo = __builtin_shufflevector(x, y, 0, 2);
  const V2 hi = __builtin_shufflevector(x, y, 1, 3);
  std::memcpy(oa, &lo, sizeof(V2));
  std::memcpy(ob, &hi, sizeof(V2));
}
[[gnu::always_inline]] inline void put_lanes2(float* oa, float* ob, V2 x, V2 y) {
  oa[0] = static_cast<float>(x[0]);
  oa[1] = static_cast<float>(y[0]);
  ob[0] = static_cast<float>(x[1]);
  ob[1] = static_cast<float>(y[1]);
}

// 3 or 4 two-lane values: lane 0 to oa, lane 1 to ob.
template <class T>
[[gnu::always_inline]] inline void put_lanes3(T* oa, T* ob, const V2 v[3]) {
  put_lanes2(oa, ob, v[0], v[1]);
  oa[2] = static_cast<T>(v[2][0]);
  ob[2] = static_cast<T>(v[2][1]);
}
template <class T>
[[gnu::always_inline]] inline void put_lanes4(T* oa, T* ob, const V2 v[4]) {
  put_lanes2(oa, ob, v[0], v[1]);
  put_lanes2(oa + 2, ob + 2, v[2], v[3]);
}

// N values of the lanes' rows at column col of each row d[l]: a pair...
template <int N, class T>
[[gnu::always_inline]] inline void put_lanes(T* const* d, int col, const V2 v[N]) {
  if constexpr (N == 3) {
    put_lanes3(d[0] + col, d[1] + col, v);
  } else {
    put_lanes4(d[0] + col, d[1] + col, v);
  }
}
// ... or a quad (AVX2 build only): lane l to row d[l], by transposing
// shuffles and one store per row and pair of values (float64; float32: a
// conversion per value, then 4x4 float shuffles), not 4N scalar stores
// (which made the fixed writes 2.9x the pair pass's; callgrind).
typedef float F4 __attribute__((vector_size(16)));
template <class T, class W>
[[gnu::always_inline]] inline void store_to(T* p, W w, std::size_t bytes) {
  std::memcpy(p, &w, bytes);
}
template <int N>
[[gnu::always_inline]] inline void put_lanes(double* const* d, int col, const V4 v[N]) {
  double *p0 = d[0] + col, *p1 = d[1] + col, *p2 = d[2] + col, *p3 = d[3] + col;
  const V4 xy0 = __builtin_shufflevector(v[0], v[1], 0, 4, 2, 6);  // x0 y0 x2 y2
  const V4 xy1 = __builtin_shufflevector(v[0], v[1], 1, 5, 3, 7);  // x1 y1 x3 y3
  if constexpr (N == 4) {
    const V4 zw0 = __builtin_shufflevector(v[2], v[3], 0, 4, 2, 6);
    const V4 zw1 = __builtin_shufflevector(v[2], v[3], 1, 5, 3, 7);
    store_to(p0, __builtin_shufflevector(xy0, zw0, 0, 1, 4, 5), sizeof(V4));
    store_to(p1, __builtin_shufflevector(xy1, zw1, 0, 1, 4, 5), sizeof(V4));
    store_to(p2, __builtin_shufflevector(xy0, zw0, 2, 3, 6, 7), sizeof(V4));
    store_to(p3, __builtin_shufflevector(xy1, zw1, 2, 3, 6, 7), sizeof(V4));
  } else {
    store_to(p0, __builtin_shufflevector(xy0, xy0, 0, 1), sizeof(V2));
    store_to(p1, __builtin_shufflevector(xy1, xy1, 0, 1), sizeof(V2));
    store_to(p2, __builtin_shufflevector(xy0, xy0, 2, 3), sizeof(V2));
    store_to(p3, __builtin_shufflevector(xy1, xy1, 2, 3), sizeof(V2));
    const V4 z = v[2];
    p0[2] = z[0], p1[2] = z[1], p2[2] = z[2], p3[2] = z[3];
  }
}
template <int N>
[[gnu::always_inline]] inline void put_lanes(float* const* d, int col, const V4 v[N]) {
  const F4 a = __builtin_convertvector(v[0], F4), b = __builtin_convertvector(v[1], F4);
  const F4 c = __builtin_convertvector(v[2], F4);
  const F4 e = N == 4 ? __builtin_convertvector(v[N - 1], F4) : c;  // (N = 3: not stored)
  const F4 ab0 = __builtin_shufflevector(a, b, 0, 4, 1, 5);         // a0 b0 a1 b1
  const F4 ab1 = __builtin_shufflevector(a, b, 2, 6, 3, 7);         // a2 b2 a3 b3
  const F4 ce0 = __builtin_shufflevector(c, e, 0, 4, 1, 5);
  const F4 ce1 = __builtin_shufflevector(c, e, 2, 6, 3, 7);
  store_to(d[0] + col, __builtin_shufflevector(ab0, ce0, 0, 1, 4, 5), N * sizeof(float));
  store_to(d[1] + col, __builtin_shufflevector(ab0, ce0, 2, 3, 6, 7), N * sizeof(float));
  store_to(d[2] + col, __builtin_shufflevector(ab1, ce1, 0, 1, 4, 5), N * sizeof(float));
  store_to(d[3] + col, __builtin_shufflevector(ab1, ce1, 2, 3, 6, 7), N * sizeof(float));
}

}  // namespace fast

// The fixed writes of the rows of a pair (V = V2) or a quad (V = V4),
// straight from their lane states (no split): lane l goes to row d[l].
template <class V, class T>
[[gnu::always_inline]] inline void FastEngine::write_fixed_lanes(const StateT<V>* st, V* sums,
                                                                 GroupNode<V>* group,
                                                                 T* const* d) const {
  using namespace fast;
  const V* sd = reinterpret_cast<const V*>(st);  // States as V, same offsets
  for (const Copy& c : gather3_) put_lanes<3>(d, c.col, sd + c.src);
  for (const Copy& c : gather4_) put_lanes<4>(d, c.col, sd + c.src);
  for (const Rel& r : pos_rel_) {
    V v[3];
    pos_in_frame(v, st[r.obj].pos, st[r.ref].pos, st[r.ref].mat);
    put_lanes<3>(d, r.col, v);
  }
  for (const Rel& r : quat_rel_) {
    V q[4];
    quat_in_frame(q, st[r.obj].quat, st[r.ref].quat);
    put_lanes<4>(d, r.col, q);
  }
  for (const SubtreeFixed& s : subtree_fixed_) {
    V v[3];
    subtree_fixed(st, s, sums, v);
    put_lanes<3>(d, s.col, v);
  }
  if (!group_.empty()) {
    subtree_group(st, group);
    for (const SubtreeFixed& s : angmom_fixed_) {
      put_lanes<3>(d, s.col, group[subtrees_[s.subtree].root].ang);
    }
  }
  for (const SiteFixed& s : site_fixed_) {
    V v[4];
    site_fixed(st, s, v);
    if (s.dim == 4) {
      put_lanes<4>(d, s.col, v);
    } else {
      put_lanes<3>(d, s.col, v);
    }
  }
}

}  // namespace mjrefresh
