// Four-lane kernels for the AVX2 builds of the fast engine's pair and quad
// passes (kernel_isa.h): two hinges of both rows of a pair, or one hinge of
// the four rows of a quad, per sin_cos; a quad's normalize4; shuffle4 for
// transposing four rows' values into a quad's lanes (kinematics.h).
//
// Contract
// - Lane by lane, the same operations as the one- and two-lane kernels of
//   fast_kernels.h (sin_cos_kernel and normalize4_lanes are the same
//   templates), so the same bits.
// - Only for functions compiled for AVX2 (fast_engine.cc's
//   half_angles_avx2 and quad pass; included through kinematics.h and
//   emit_pair.h, which only fast_engine.cc includes), into which they are
//   always inlined: their out-of-line ABI, which GCC warns about (-Wpsabi,
//   off for the fast sources in CMakeLists.txt), never applies. The quad
//   pass's rarer helpers built in other files (subtree_fixed, subtree_group,
//   site_fixed with T = V4) take their lanes through pointers, so no vector
//   is passed by value across builds either.
#pragma once

#include <cstdint>

#include "fast/fast_kernels.h"

namespace mjrefresh::fast {

// V4, V4i: declared in fast_kernels.h (which sin_cos_kernel needs).
[[gnu::always_inline]] inline V4i bits_of(V4 x) { return __builtin_bit_cast(V4i, x); }
[[gnu::always_inline]] inline V4 from_bits(V4i b) { return __builtin_bit_cast(V4, b); }

// Lane k of the result is lane n of (a, b) taken as eight lanes, n the
// k-th of I, J, K, L (0-3: a's, 4-7: b's). GCC 11 has no
// __builtin_shufflevector, clang no __builtin_shuffle.
template <int I, int J, int K, int L>
[[gnu::always_inline]] inline V4 shuffle4(V4 a, V4 b) {
#if defined(__clang__)
  return __builtin_shufflevector(a, b, I, J, K, L);
#else
  return __builtin_shuffle(a, b, V4i{I, J, K, L});
#endif
}

// sin_cos and normalize4 for four lanes (as the two-lane versions).
[[gnu::always_inline]] inline void sin_cos(V4 x, V4* sn, V4* cs) { sin_cos_lanes<4>(x, sn, cs); }
[[gnu::always_inline]] inline void normalize4(V4 q[4]) { normalize4_lanes<4>(q); }

}  // namespace mjrefresh::fast
