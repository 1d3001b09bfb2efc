// Subtree sensors of the fast engine: subtreecom (mj_comPos), subtreelinvel
// and subtreeangmom (mj_subtreeVel), restricted to the sensor's subtree (a
// body's values depend only on its descendants) and summed in MuJoCo's order.
#include <algorithm>

#include "fast/fast_engine.h"
#include "fast/fast_kernels.h"

namespace mjrefresh {

using namespace fast;

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
    double ximat[9];
    inertial_pose(st, slot, v, n.xipos, angular ? ximat : nullptr);
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
    double dv[3];
    mat_t_vec(dv, ximat, x.w);
    const double* inertia = v.f[kBodyInertia] + 3 * id;
    for (int k = 0; k < 3; ++k) dv[k] *= inertia[k];
    mat_vec(n.ang, ximat, dv);
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
