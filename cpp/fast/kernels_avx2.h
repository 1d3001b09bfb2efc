// Four-lane kernels for the AVX2 build of the fast engine's pair pass
// (kernel_isa.h): two hinges of both rows of a pair per sin_cos.
//
// Contract
// - Lane by lane, the same operations as the one- and two-lane kernels of
//   fast_kernels.h (sin_cos_kernel is the same template), so the same bits.
// - Only for functions compiled for AVX2 (fast_engine.cc's
//   half_angles_avx2, its only includer), into which they are always
//   inlined: their out-of-line ABI, which GCC warns about (-Wpsabi, off for
//   the fast sources in CMakeLists.txt), never applies.
#pragma once

#include <cstdint>

#include "fast/fast_kernels.h"

namespace mjrefresh::fast {

// V4, V4i: declared in fast_kernels.h (which sin_cos_kernel needs).
[[gnu::always_inline]] inline V4i bits_of(V4 x) { return __builtin_bit_cast(V4i, x); }
[[gnu::always_inline]] inline V4 from_bits(V4i b) { return __builtin_bit_cast(V4, b); }

// sin_cos for four lanes (sin_cos_lanes, as the two-lane version).
[[gnu::always_inline]] inline void sin_cos(V4 x, V4* sn, V4* cs) { sin_cos_lanes<4>(x, sn, cs); }

}  // namespace mjrefresh::fast
