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

// sin_cos for four lanes: the kernel where every lane is in its range,
// libm per lane otherwise (as the one- and two-lane versions).
[[gnu::always_inline]] inline void sin_cos(V4 x, V4* sn, V4* cs) {
  const V4i in_range = (x <= 1e5) & (x >= -1e5);  // false for NaN, as sin_cos(double)
  if (!(in_range[0] & in_range[1] & in_range[2] & in_range[3])) {
    for (int l = 0; l < 4; ++l) {
      double s, c;
      sin_cos(x[l], &s, &c);
      (*sn)[l] = s;
      (*cs)[l] = c;
    }
    return;
  }
  sin_cos_kernel(x, sn, cs);
}

}  // namespace mjrefresh::fast
