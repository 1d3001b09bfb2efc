// Subtree sensors of the fast engine: subtreecom (mj_comPos), subtreelinvel
// and subtreeangmom (mj_subtreeVel), restricted to the sensor's subtree (a
// body's values depend only on its descendants) and summed in MuJoCo's order.
#include <algorithm>

#include "fast/fast_engine.h"
#include "fast/fast_kernels.h"

namespace mjrefresh {

using namespace fast;

namespace {

// The inertia of a body's inertial frame in the body frame, R(iquat)
// diag(inertia) R(iquat)^T, row-major: a body whose inertial frame is
// rotated from its own (body_sameframe NONE) has the world inertia
// R_b I_b R_b^T. The planner (template values) and subtree_pass (a row's
// values) form it with this one function, so template values give the same
// bits on either path.
void inertia_in_body(double r[9], const double iquat[4], const double inertia[3]) {
  double rot[9];
  mju_quat2Mat(rot, iquat);
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      double sum = 0;
      for (int k = 0; k < 3; ++k) sum += rot[3 * i + k] * inertia[k] * rot[3 * j + k];
      r[3 * i + j] = sum;
    }
  }
}

// A body's angular momentum about its CoM in the world frame: R_b I R_b^T w
// with I the body-frame inertia `ib` (9 values), or, when null, the
// diagonal `inertia` (an inertial frame turning with the body).
template <class T>
void spin_momentum(T r[3], const T mat[9], const T w[3], const double* ib, const double* inertia) {
  T local[3], iw[3];
  mat_t_vec(local, mat, w);  // the angular velocity in the body frame
  if (ib) {
    for (int k = 0; k < 3; ++k) {
      iw[k] = ib[3 * k] * local[0] + ib[3 * k + 1] * local[1] + ib[3 * k + 2] * local[2];
    }
  } else {
    for (int k = 0; k < 3; ++k) iw[k] = local[k] * inertia[k];
  }
  mat_vec(r, mat, iw);
}

}  // namespace

// subtree_com of every body of the subtree as mj_comPos computes it: each
// body's mass-weighted inertial position, children added to parents by
// descending id, then divided by the subtree mass. The subtree masses are
// summed from the row's body_mass in mj_setConst's order, so they equal
// body_subtreemass bit for bit (and follow a per-row body_mass).
// With `type` SUBTREELINVEL, mj_subtreeVel's subtree_linvel instead; with
// SUBTREEANGMOM, both and subtree_angmom. Only angmom reads the other
// bodies' CoMs and velocities: the other two divide the root's sums only
// (the same operations on the same sums give the root's value).
void FastEngine::subtree_pass(Scratch& sc, const State* st, const Subtree& tree, const Vals& v,
                              int type) const {
  const bool momenta = type != mjSENS_SUBTREECOM;
  const bool angular = type == mjSENS_SUBTREEANGMOM;
  const bool com = type != mjSENS_SUBTREELINVEL;
  Node* nodes = sc.nodes.data();
  const double* mass = v.f[kBodyMass];
  for (int slot : tree.slots) {
    Node& n = nodes[slot];
    const int id = bodies_[slot].id;
    inertial_pose(st, slot, v, n.xipos, nullptr);
    n.mass = n.subtree_mass = mass[id];
    if (com) {
      for (int k = 0; k < 3; ++k) n.com[k] = n.xipos[k] * mass[id];
    }
    if (!momenta) continue;
    // mj_subtreeVel's bodywise terms: velocity at the inertial frame (world
    // orientation), linear momentum, angular momentum about the body's CoM.
    const State& x = st[slot];
    if (bodies_[slot].still) {  // mj_objectVelocity's quick return: zeros, whatever xipos is
      n.vel[0] = n.vel[1] = n.vel[2] = 0.0;
    } else {
      velocity_at(n.vel, x.v, x.w, n.xipos, x.pos);
    }
    for (int k = 0; k < 3; ++k) n.lin[k] = n.vel[k] * mass[id];
    if (!angular) continue;
    const double* inertia = v.f[kBodyInertia] + 3 * id;
    if (slot != 0 && bodies_[slot].isameframe == mjSAMEFRAME_NONE) {
      double ib[9];
      inertia_in_body(ib, v.f[kBodyIquat] + 4 * id, inertia);
      spin_momentum(n.ang, x.mat, x.w, ib, inertia);
    } else {
      spin_momentum(n.ang, x.mat, x.w, nullptr, inertia);
    }
  }
  for (int slot : tree.slots) {  // descending id: children before parents
    if (slot == tree.root) break;
    const Node& n = nodes[slot];
    Node& p = nodes[bodies_[slot].parent];
    if (com) add_to3(p.com, n.com);
    p.subtree_mass += n.subtree_mass;
  }
  for (int slot : tree.slots) {
    if (!com) break;
    if (!angular && slot != tree.root) continue;
    Node& n = nodes[slot];
    if (n.subtree_mass < mjMINVAL) {
      copy3(n.com, n.xipos);
    } else {
      const double scl = 1.0 / n.subtree_mass;
      for (int k = 0; k < 3; ++k) n.com[k] *= scl;
    }
  }
  if (momenta) subtree_momenta(nodes, tree, angular);
}

// mj_subtreeVel's backward passes over the subtree: linear momenta added to
// parents, then divided by the subtree mass; angular momenta about each
// body's and each subtree's CoM, moved to the parent's.
void FastEngine::subtree_momenta(Node* nodes, const Subtree& tree, bool angular) const {
  for (int slot : tree.slots) {
    Node& n = nodes[slot];
    if (slot != tree.root) add_to3(nodes[bodies_[slot].parent].lin, n.lin);
    if (!angular && slot != tree.root) continue;
    const double scl = 1 / std::max<double>(mjMINVAL, n.subtree_mass);
    for (int k = 0; k < 3; ++k) n.lin[k] *= scl;
  }
  if (!angular) return;
  for (int slot : tree.slots) {
    if (slot == 0) break;  // the world body: mj_subtreeVel's loop stops at 1
    Node& n = nodes[slot];
    // momentum of the body about its subtree's CoM
    double dx[3], dv[3], dp[3], dl[3];
    sub3(dx, n.xipos, n.com);
    sub3(dv, n.vel, n.lin);
    for (int k = 0; k < 3; ++k) dp[k] = dv[k] * n.mass;
    cross(dl, dx, dp);
    add_to3(n.ang, dl);
    if (slot == tree.root) break;
    // the subtree's momentum, then its motion relative to the parent's CoM
    Node& p = nodes[bodies_[slot].parent];
    add_to3(p.ang, n.ang);
    sub3(dx, n.com, p.com);
    sub3(dv, n.lin, p.lin);
    for (int k = 0; k < 3; ++k) dv[k] *= n.subtree_mass;
    cross(dl, dx, dv);
    add_to3(p.ang, dl);
  }
}

// subtreecom or subtreelinvel of a SubtreeFixed sensor, for one row (T =
// double) or a pair (T = V2): the operations of subtree_pass on the root's
// sums, with the template's masses and inertial offsets (so lanes share
// them, and the subtree masses are the template's body_subtreemass).
template <class T>
void FastEngine::subtree_fixed(const StateT<T>* st, const SubtreeFixed& s, T* sums,
                               T vals[3]) const {
  const Subtree& tree = subtrees_[s.subtree];
  const bool com = s.type == mjSENS_SUBTREECOM;
  for (int slot : tree.slots) {
    const Body& b = bodies_[slot];
    const StateT<T>& x = st[slot];
    T xipos[3];
    if (slot == 0 || b.isameframe == mjSAMEFRAME_BODY) {
      copy3(xipos, x.pos);
    } else {
      mat_vec(xipos, x.mat, model_->body_ipos + 3 * b.id);
      add_to3(xipos, x.pos);
    }
    const double mass = model_->body_mass[b.id];
    T* sum = sums + 3 * slot;
    if (com) {
      for (int k = 0; k < 3; ++k) sum[k] = xipos[k] * mass;
    } else {
      T vel[3] = {};  // still bodies: mj_objectVelocity's quick return, zeros
      if (!b.still) velocity_at(vel, x.v, x.w, xipos, x.pos);
      for (int k = 0; k < 3; ++k) sum[k] = vel[k] * mass;
    }
  }
  // children into parents by descending id (tree.slots order), as in
  // subtree_pass; the root is last
  for (int slot : tree.slots) {
    if (slot == tree.root) break;
    add_to3(sums + 3 * bodies_[slot].parent, sums + 3 * slot);
  }
  const double msub = model_->body_subtreemass[bodies_[tree.root].id];
  const T* root = sums + 3 * tree.root;
  if (com && msub < mjMINVAL) {
    // no mass: the root's inertial position (recomputed: cheap and rare)
    const StateT<T>& x = st[tree.root];
    const Body& b = bodies_[tree.root];
    if (tree.root == 0 || b.isameframe == mjSAMEFRAME_BODY) {
      copy3(vals, x.pos);
    } else {
      mat_vec(vals, x.mat, model_->body_ipos + 3 * b.id);
      add_to3(vals, x.pos);
    }
    return;
  }
  const double scl = com ? 1.0 / msub : 1 / std::max<double>(mjMINVAL, msub);
  for (int k = 0; k < 3; ++k) vals[k] = root[k] * scl;
}

template void FastEngine::subtree_fixed(const State*, const SubtreeFixed&, double*, double*) const;
template void FastEngine::subtree_fixed(const StateT<V2>*, const SubtreeFixed&, V2*, V2*) const;

// The group pass of angmom_fixed_ (planned after every sensor is filed):
// the union of their subtrees in descending body id, each slot marked `top`
// when its parent is outside the union, and the body-frame inertia of the
// slots whose inertial frame is rotated from the body's.
void FastEngine::plan_subtree_group(const mjModel* m) {
  if (angmom_fixed_.empty()) return;
  std::vector<char> in_group(bodies_.size(), 0);
  for (const SubtreeFixed& s : angmom_fixed_) {
    for (int slot : subtrees_[s.subtree].slots) in_group[slot] = 1;
  }
  std::vector<int> slot_of_body(m->nbody, -1);
  for (int slot = 0; slot < static_cast<int>(bodies_.size()); ++slot) {
    slot_of_body[bodies_[slot].id] = slot;
  }
  inertia_in_body_.assign(bodies_.size(), {});
  for (int b = m->nbody - 1; b >= 0; --b) {
    const int slot = slot_of_body[b];
    if (slot < 0 || !in_group[slot]) continue;
    group_.push_back({slot, slot == 0 || !in_group[bodies_[slot].parent]});
    if (slot == 0 || bodies_[slot].isameframe != mjSAMEFRAME_NONE) continue;
    inertia_in_body(inertia_in_body_[slot].data(), m->body_iquat + 4 * b, m->body_inertia + 3 * b);
  }
}

// mj_subtreeVel over group_ for one row (T = double) or a pair (T = V2),
// on the template's masses, inertial offsets and inertias: the operations
// of subtree_pass and subtree_momenta (same sums in the same order), with
// the subtree masses read from the template's body_subtreemass (mj_setConst's
// sums: the same bits) and the body-frame inertias planned once. Every node
// of the group holds its subtree's values afterwards.
template <class T>
void FastEngine::subtree_group(const StateT<T>* st, GroupNode<T>* nodes) const {
  const double* mass = model_->body_mass;
  for (const GroupSlot& g : group_) {  // bodywise terms
    const Body& b = bodies_[g.slot];
    const StateT<T>& x = st[g.slot];
    GroupNode<T>& n = nodes[g.slot];
    if (g.slot == 0 || b.isameframe == mjSAMEFRAME_BODY) {
      copy3(n.xipos, x.pos);
    } else {
      mat_vec(n.xipos, x.mat, model_->body_ipos + 3 * b.id);
      add_to3(n.xipos, x.pos);
    }
    const double m = mass[b.id];
    for (int k = 0; k < 3; ++k) n.com[k] = n.xipos[k] * m;
    if (b.still) {  // mj_objectVelocity's quick return: zeros, whatever xipos is
      n.vel[0] = n.vel[1] = n.vel[2] = T{};
    } else {
      velocity_at(n.vel, x.v, x.w, n.xipos, x.pos);
    }
    for (int k = 0; k < 3; ++k) n.lin[k] = n.vel[k] * m;
    const bool rotated = g.slot != 0 && b.isameframe == mjSAMEFRAME_NONE;
    spin_momentum(n.ang, x.mat, x.w, rotated ? inertia_in_body_[g.slot].data() : nullptr,
                  model_->body_inertia + 3 * b.id);
  }
  for (const GroupSlot& g : group_) {  // children into parents, then divided
    GroupNode<T>& n = nodes[g.slot];
    if (!g.top) {
      GroupNode<T>& p = nodes[bodies_[g.slot].parent];
      add_to3(p.com, n.com);
      add_to3(p.lin, n.lin);
    }
    const double msub = model_->body_subtreemass[bodies_[g.slot].id];
    if (msub < mjMINVAL) {
      copy3(n.com, n.xipos);
    } else {
      const double scl = 1.0 / msub;
      for (int k = 0; k < 3; ++k) n.com[k] *= scl;
    }
    const double scl = 1 / std::max<double>(mjMINVAL, msub);
    for (int k = 0; k < 3; ++k) n.lin[k] *= scl;
  }
  for (const GroupSlot& g : group_) {  // angular momenta (subtree_momenta)
    if (g.slot == 0) break;            // the world body: mj_subtreeVel's loop stops at 1
    GroupNode<T>& n = nodes[g.slot];
    const int id = bodies_[g.slot].id;
    T dx[3], dv[3], dp[3], dl[3];
    sub3(dx, n.xipos, n.com);
    sub3(dv, n.vel, n.lin);
    for (int k = 0; k < 3; ++k) dp[k] = dv[k] * mass[id];
    cross(dl, dx, dp);
    add_to3(n.ang, dl);
    if (g.top) continue;
    GroupNode<T>& p = nodes[bodies_[g.slot].parent];
    add_to3(p.ang, n.ang);
    sub3(dx, n.com, p.com);
    sub3(dv, n.lin, p.lin);
    const double msub = model_->body_subtreemass[id];
    for (int k = 0; k < 3; ++k) dv[k] *= msub;
    cross(dl, dx, dv);
    add_to3(p.ang, dl);
  }
}

template void FastEngine::subtree_group(const State*, GroupNode<double>*) const;
template void FastEngine::subtree_group(const StateT<V2>*, GroupNode<V2>*) const;
#ifdef MJREFRESH_FAST_AVX2
// The quad pass's (reached only through it, so only on AVX2 CPUs): compiled
// for AVX2, not as two SSE2 halves per operation (2 subtreeangmom sensors
// with their pose pass: 0.53 -> 0.27-0.34 us/row, 2-vCPU AMD EPYC VM;
// python -m bench.research.sensor_types).
#pragma GCC push_options
#pragma GCC target("avx2")
template void FastEngine::subtree_fixed(const StateT<V4>*, const SubtreeFixed&, V4*, V4*) const;
template void FastEngine::subtree_group(const StateT<V4>*, GroupNode<V4>*) const;
#pragma GCC pop_options
#endif

// A subtree sensor's value: the root's CoM, linear velocity or angular
// momentum.
void FastEngine::subtree_sensor(Scratch& sc, const State* st, const Sensor& s, const Vals& v,
                                double vals[3]) const {
  const Subtree& tree = subtrees_[s.subtree];
  subtree_pass(sc, st, tree, v, s.type);
  const Node& n = sc.nodes[tree.root];
  switch (s.type) {
    case mjSENS_SUBTREECOM:
      copy3(vals, n.com);
      return;
    case mjSENS_SUBTREELINVEL:
      copy3(vals, n.lin);
      return;
    default:
      copy3(vals, n.ang);
      return;
  }
}

}  // namespace mjrefresh
