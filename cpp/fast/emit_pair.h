// The fixed writes of a pair of rows (FastEngine::write_fixed_pair),
// inlined into the pair pass so that it is compiled for each instruction
// set the pass is (fast/kernel_isa.h).
//
// Contract
// - write_fixed_pair(sc, a, b) writes, from the two-lane States of a pair,
//   exactly what write_fixed writes for each row alone: lane 0 to row a's
//   sensordata, lane 1 to row b's (the gathered copies, relative poses,
//   fixed subtree and site sensors). Included by fast_engine.cc only.
#pragma once

#include <cstring>

#include "fast/fast_engine.h"
#include "fast/fast_kernels.h"

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

}  // namespace fast

// The same for a pair of rows, straight from the two-lane states (no split):
// lane 0 goes to row a, lane 1 to row b.
template <class T>
[[gnu::always_inline]] inline void FastEngine::write_fixed_pair(Scratch& sc, T* a, T* b) const {
  using namespace fast;
  const StateT<V2>* st = sc.states2.data();
  V2* sums = sc.sums2.data();
  const V2* sd = reinterpret_cast<const V2*>(st);  // States as V2, same offsets
  for (const Copy& c : gather3_) put_lanes3(a + c.col, b + c.col, sd + c.src);
  for (const Copy& c : gather4_) put_lanes4(a + c.col, b + c.col, sd + c.src);
  for (const Rel& r : pos_rel_) {
    V2 v[3];
    pos_in_frame(v, st[r.obj].pos, st[r.ref].pos, st[r.ref].mat);
    put_lanes3(a + r.col, b + r.col, v);
  }
  for (const Rel& r : quat_rel_) {
    V2 q[4];
    quat_in_frame(q, st[r.obj].quat, st[r.ref].quat);
    put_lanes4(a + r.col, b + r.col, q);
  }
  for (const SubtreeFixed& s : subtree_fixed_) {
    V2 v[3];
    subtree_fixed(st, s, sums, v);
    put_lanes3(a + s.col, b + s.col, v);
  }
  if (!group_.empty()) {
    subtree_group(st, sc.group2.data());
    for (const SubtreeFixed& s : angmom_fixed_) {
      put_lanes3(a + s.col, b + s.col, sc.group2[subtrees_[s.subtree].root].ang);
    }
  }
  for (const SiteFixed& s : site_fixed_) {
    V2 v[4];
    site_fixed(st, s, v);
    if (s.dim == 4) {
      put_lanes4(a + s.col, b + s.col, v);
    } else {
      put_lanes3(a + s.col, b + s.col, v);
    }
  }
}

}  // namespace mjrefresh
