// Which instruction set the fast engine's pair kernels run with.
//
// Contract
// - The pair pass (FastEngine::refresh_pair: the pose/velocity pass of two
//   rows in SSE2 lanes and their fixed writes) is compiled twice in
//   fast_engine.cc where MJREFRESH_FAST_AVX2 is defined (GCC or clang on
//   x86-64): for the baseline x86-64 and for AVX2; the quad pass
//   (refresh_quad: the same template, four rows in AVX2 lanes) for AVX2
//   only. kernel_isa() says which one a FastEngine built now uses: "avx2"
//   (quads, then a pair and a single row for the rest of a chunk) when the
//   build has it and the CPU runs it, "sse2" (pairs) otherwise, or what the MJREFRESH_FAST_ISA
//   environment variable asks for ("sse2" or "avx2"; read when an engine
//   is built). Any other value of it throws std::invalid_argument naming
//   the variable, as does "avx2" where the build or the CPU has no AVX2.
// - Both variants give the same bits: the fast sources are compiled with
//   -ffp-contract=off (no fused multiply-adds, which round differently), so
//   the AVX2 variant changes the instructions (three-operand VEX forms,
//   fewer register copies; the hinges' half-angle sin_cos four lanes at a
//   time, kernels_avx2.h), not the operations each lane does. A test
//   compares the two on every embedded model and the sensor-zoo models
//   (tests/test_fast_isa.py).
// - Why: measured on the quadruped tracking refresh (N=1024, 1 thread,
//   callgrind inside Refresher::run, 2-vCPU AMD EPYC VM), the AVX2 build
//   runs 2051 instructions per row against the baseline's 4298 (pairs in
//   AVX2, before the quads: 3512); humanoid 4506 against 9710 (python -m
//   bench.research.instructions, once with MJREFRESH_FAST_ISA=sse2). In
//   time, 0.57-0.72x the baseline build (python -m bench.research.threads,
//   its fast-sse2 line, five runs).
#pragma once

#include <string>

#if defined(__x86_64__) && defined(__GNUC__)
#define MJREFRESH_FAST_AVX2 1
#endif

namespace mjrefresh {

// "avx2" or "sse2" (see the contract above); throws std::invalid_argument
// for a value of MJREFRESH_FAST_ISA it cannot honour.
std::string kernel_isa();

}  // namespace mjrefresh
