// Functions libmujoco exports (MJAPI) without declaring them in its public
// headers, which the exact engine's stage runner calls instead of the public
// stage functions that would also call MuJoCo's global callbacks.
//
// Contract
// - Declarations copy MuJoCo's own (src/engine/engine_core_smooth.h,
//   engine_util_sparse.h and engine_util_misc.h, unchanged from 3.10.0 to
//   3.12.0, the releases whose source is published with them). A release that drops a symbol
//   fails to link its core at build time; one that changed what a function
//   computes fails the bit-exact parity tests against mj_forward, which CI
//   runs on every supported release.
// - Pure numerical functions: no callbacks, no allocation, no mju_error.
#pragma once

#include <mujoco/mujoco.h>

extern "C" {

// mj_makeM's second half: add tendon armature to the mass matrix (d->M).
void mj_tendonArmature(const mjModel* m, mjData* d);

// Sparse L'*D*L factorisation of an inertia-like matrix in place (mj_factorM
// without its timer); index == NULL: every dof.
void mj_factorI(mjtNum* mat, mjtNum* diaginv, int nv, const int* rownnz, const int* rowadr,
                const int* colind, const int* index);

// res = mat * vec for a CSR matrix (rowsuper == NULL: no supernodes), the
// product mj_fwdVelocity computes tendon, actuator and flex-edge velocities
// with.
void mju_mulMatVecSparse(mjtNum* res, const mjtNum* mat, const mjtNum* vec, int nr,
                         const int* rownnz, const int* rowadr, const int* colind,
                         const int* rowsuper);

#if mjVERSION_HEADER < 3011000
// res[ind[i]] = vec[i]: mj_makeM's last step before 3.11, which fills the
// legacy sparse inertia qM from the CSR matrix M (qM was removed in 3.11).
void mju_scatter(mjtNum* res, const mjtNum* vec, const int* ind, int n);
#endif

}  // extern "C"
