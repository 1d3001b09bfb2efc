#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <type_traits>

#include "core/trapped_alloc.h"
#include "fast/fast_engine.h"
#include "fast/fast_kernels.h"
#include "fast/kernel_isa.h"

namespace mjrefresh {
namespace {

using namespace fast;

bool is_vel_sensor(int type) {
  return type == mjSENS_FRAMELINVEL || type == mjSENS_FRAMEANGVEL || type == mjSENS_VELOCIMETER ||
         type == mjSENS_GYRO || type == mjSENS_SUBTREELINVEL || type == mjSENS_SUBTREEANGMOM;
}

bool is_subtree_sensor(int type) {
  return type == mjSENS_SUBTREECOM || type == mjSENS_SUBTREELINVEL || type == mjSENS_SUBTREEANGMOM;
}

// Sensors computed from qpos/qvel/time alone: no body is visited for them.
bool is_joint_space(int type) {
  return type == mjSENS_JOINTPOS || type == mjSENS_JOINTVEL || type == mjSENS_BALLQUAT ||
         type == mjSENS_BALLANGVEL || type == mjSENS_CLOCK || type == mjSENS_TENDONPOS ||
         type == mjSENS_TENDONVEL || type == mjSENS_ACTUATORPOS || type == mjSENS_ACTUATORVEL;
}

// Whether body b is root or one of its descendants.
bool in_subtree(const mjModel* m, int b, int root) {
  while (b > root) b = m->body_parentid[b];
  return b == root;
}

// Body id of an object a frame sensor or site reads.
int body_of(const mjModel* m, int objtype, int objid) {
  switch (objtype) {
    case mjOBJ_XBODY:
    case mjOBJ_BODY:
      return objid;
    case mjOBJ_GEOM:
      return m->geom_bodyid[objid];
    case mjOBJ_SITE:
      return m->site_bodyid[objid];
    case mjOBJ_CAMERA:
      return m->cam_bodyid[objid];
    default:
      return 0;
  }
}

}  // namespace

FastEngine::FastEngine(const mjModel* model, Selection selection, int num_scratch)
    : sel_(std::move(selection)) {
  const mjModel* m = model;
  const std::string why = fast_uncovered(m, sel_.sensors);
  if (!why.empty()) throw std::invalid_argument("engine 'fast': " + why);
  avx2_ = kernel_isa() == "avx2";  // throws for a MJREFRESH_FAST_ISA it cannot honour
  // Declared per-row fields: the shortcuts that test their template values
  // are off (see the contract in fast_engine.h).
  for (int f : sel_.model_fields) declared_[f] = true;
  kin_fields_ =
      declared_[kBodyPos] || declared_[kBodyQuat] || declared_[kJntPos] || declared_[kJntAxis];
  const std::vector<int> slot_of = plan_slots(m, mark_bodies(m));
  plan_outputs(m, slot_of);
  for (int j = 0; j < static_cast<int>(joints_.size()); ++j) {
    if (joints_[j].type == mjJNT_HINGE) hinges_.push_back(j);
  }
  model_ = copy_model_trapped(model, "the fast engine's model copy", "free memory");
  for (int f = 0; f < kNumModelFields; ++f) template_vals_.f[f] = field_data(model_, f);
  template_vals_.f[kCamPos] = model_->cam_pos;
  template_vals_.f[kCamQuat] = model_->cam_quat;
  init_scratch(num_scratch);
}

// Pass 1: mark the bodies that must be visited and which need velocities.
// Ancestors inherit every mark (a body's pose and velocity are built on its
// parent's).
FastEngine::Marks FastEngine::mark_bodies(const mjModel* m) {
  const int nbody = m->nbody;
  Marks marks;
  marks.need.assign(nbody, 0);
  marks.vel_sensor.assign(nbody, 0);
  marks.vel_body.assign(nbody, 0);
  auto& [need, vel_sensor, vel_body] = marks;
  for (int b : sel_.bodies) need[b] = vel_body[b] = 1;
  if (sel_.relative_to >= 0) need[sel_.relative_to] = 1;
  for (int s : sel_.sites) need[m->site_bodyid[s]] = 1;
  for (int i : sel_.sensors) {
    const int type = m->sensor_type[i];
    const bool vel = is_vel_sensor(type);
    any_vel_sensor_ = any_vel_sensor_ || vel;
    if (is_subtree_sensor(type)) {
      // Subtree sensors read every descendant's inertial frame (and, for
      // the momenta, its velocity).
      const int root = m->sensor_objid[i];
      for (int b = root; b < nbody; ++b) {
        if (!in_subtree(m, b, root)) continue;
        need[b] = 1;
        if (vel) vel_sensor[b] = 1;
      }
      continue;
    }
    if (is_joint_space(type)) continue;
    const int ob = body_of(m, m->sensor_objtype[i], m->sensor_objid[i]);
    need[ob] = 1;
    if (vel) vel_sensor[ob] = 1;
    if (m->sensor_refid[i] >= 0) {
      const int rb = body_of(m, m->sensor_reftype[i], m->sensor_refid[i]);
      need[rb] = 1;
      if (vel) vel_sensor[rb] = 1;
    }
  }
  // Body ids are topologically sorted (parent < child): one backward sweep
  // propagates the marks to all ancestors.
  for (int b = nbody - 1; b > 0; --b) {
    const int p = m->body_parentid[b];
    need[p] |= need[b];
    vel_sensor[p] |= vel_sensor[b];
    vel_body[p] |= vel_body[b];
  }
  return marks;
}

// Pass 2: slots in breadth-first order (by depth, then id): parents come
// before children, and consecutive slots are mostly independent of each
// other (the hips of four legs, then the thighs, ...), so the CPU overlaps
// their long dependency chains instead of waiting for each body's parent.
// Returns the slot of each body id (-1: not visited).
std::vector<int> FastEngine::plan_slots(const mjModel* m, const Marks& marks) {
  const int nbody = m->nbody;
  std::vector<int> depth(nbody, 0), order;
  for (int b = 1; b < nbody; ++b) {
    depth[b] = depth[m->body_parentid[b]] + 1;
    if (marks.need[b]) order.push_back(b);
  }
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return depth[a] < depth[b]; });
  std::vector<int> slot_of(nbody, -1);
  bodies_.emplace_back();  // slot 0: world
  slot_of[0] = 0;
  for (int b : order) {
    Body body;
    body.id = b;
    body.parent = slot_of[m->body_parentid[b]];
    body.vel_sensor = marks.vel_sensor[b];
    body.vel_body = marks.vel_body[b];
    body.isameframe = m->body_sameframe[b];
    body.still = m->body_dofnum[m->body_weldid[b]] == 0;
    const double* pos = m->body_pos + 3 * b;
    const double* quat = m->body_quat + 4 * b;
    copy3(body.pos, pos);
    copy4(body.quat, quat);
    body.zero_pos = !declared_[kBodyPos] && pos[0] == 0 && pos[1] == 0 && pos[2] == 0;
    body.unit_quat =
        !declared_[kBodyQuat] && quat[0] == 1 && quat[1] == 0 && quat[2] == 0 && quat[3] == 0;
    const int jntadr = m->body_jntadr[b], jntnum = m->body_jntnum[b];
    if (jntnum == 1 && m->jnt_type[jntadr] == mjJNT_FREE) {
      body.kind = Body::kFree;
      body.qadr = m->jnt_qposadr[jntadr];
      body.dadr = m->jnt_dofadr[jntadr];
    } else if (m->body_mocapid[b] >= 0) {
      body.kind = Body::kMocap;
      body.mocap = m->body_mocapid[b];
    } else {
      body.kind = Body::kJoints;
    }
    add_joints(m, body, jntadr, body.kind == Body::kFree ? 0 : jntnum);
    slot_of[b] = static_cast<int>(bodies_.size());
    bodies_.push_back(body);
  }

  return slot_of;
}

// Pass 3: outputs in terms of slots.
void FastEngine::plan_outputs(const mjModel* m, const std::vector<int>& slot_of) {
  for (int b : sel_.bodies) body_slots_.push_back(slot_of[b]);
  if (sel_.relative_to >= 0) rel_slot_ = slot_of[sel_.relative_to];
  for (int s : sel_.sites) sites_.push_back(make_frame(m, mjOBJ_SITE, s, slot_of));
  for (int i : sel_.sensors) file_sensor(m, make_sensor(m, i, slot_of));
  plan_subtree_group(m);
}

// Sensor i in terms of slots, with the columns of it that are selected.
FastEngine::Sensor FastEngine::make_sensor(const mjModel* m, int i,
                                           const std::vector<int>& slot_of) {
  // kCopy sources are offsets (in doubles) into the States array.
  static_assert(std::is_standard_layout_v<State> && sizeof(State) % sizeof(double) == 0);
  constexpr int kStateSize = sizeof(State) / sizeof(double);
  const int nbody = m->nbody;
  Sensor s;
  s.id = i;
  s.type = m->sensor_type[i];
  s.adr = m->sensor_adr[i];
  s.dim = m->sensor_dim[i];
  s.datatype = m->sensor_datatype[i];
  switch (s.type) {
    case mjSENS_JOINTPOS:
    case mjSENS_JOINTVEL:
    case mjSENS_BALLQUAT:
    case mjSENS_BALLANGVEL:
      s.qadr = m->jnt_qposadr[m->sensor_objid[i]];
      s.dadr = m->jnt_dofadr[m->sensor_objid[i]];
      break;
    case mjSENS_CLOCK:
      break;
    case mjSENS_TENDONPOS:
    case mjSENS_TENDONVEL:
    case mjSENS_ACTUATORPOS:
    case mjSENS_ACTUATORVEL:
      plan_joint_space(m, s);
      break;
    case mjSENS_SUBTREECOM:
    case mjSENS_SUBTREELINVEL:
    case mjSENS_SUBTREEANGMOM: {
      Subtree st;
      const int root = m->sensor_objid[i];
      st.root = slot_of[root];
      for (int b = nbody - 1; b >= root; --b) {  // descending body id
        if (in_subtree(m, b, root)) st.slots.push_back(slot_of[b]);
      }
      s.subtree = static_cast<int>(subtrees_.size());
      subtrees_.push_back(std::move(st));
      break;
    }
    default:
      s.obj = make_frame(m, m->sensor_objtype[i], m->sensor_objid[i], slot_of);
      if (m->sensor_refid[i] >= 0) {
        s.has_ref = true;
        s.ref = make_frame(m, m->sensor_reftype[i], m->sensor_refid[i], slot_of);
      }
  }
  // xbody frame sensors read a visited body's State directly.
  const bool xbody = m->sensor_objtype[i] == mjOBJ_XBODY;
  const bool world = m->sensor_refid[i] < 0;
  const bool xref = !world && m->sensor_reftype[i] == mjOBJ_XBODY;
  auto field = [&](std::size_t offset) {
    return static_cast<int>(offset / sizeof(double)) + s.obj.slot * kStateSize;
  };
  if (xbody && world) {
    if (s.type == mjSENS_FRAMEPOS) s.op = Sensor::kCopy, s.src = field(offsetof(State, pos));
    if (s.type == mjSENS_FRAMEQUAT) s.op = Sensor::kCopy, s.src = field(offsetof(State, quat));
    if (s.type == mjSENS_FRAMELINVEL) s.op = Sensor::kCopy, s.src = field(offsetof(State, v));
    if (s.type == mjSENS_FRAMEANGVEL) s.op = Sensor::kCopy, s.src = field(offsetof(State, w));
  } else if (xbody && xref) {
    if (s.type == mjSENS_FRAMEPOS) s.op = Sensor::kPosRel;
    if (s.type == mjSENS_FRAMEQUAT) s.op = Sensor::kQuatRel;
  }
  // Only the selected columns are written (a range may cut a sensor).
  for (const auto& [start, stop] : sel_.columns) {
    const int lo = std::max(start, s.adr), hi = std::min(stop, s.adr + s.dim);
    if (lo < hi) s.segments.emplace_back(lo - s.adr, hi - lo);
  }
  return s;
}

// Puts a planned sensor in the list that writes it: the fixed-size gathered
// copies and relative poses, or the generic per-sensor path.
void FastEngine::file_sensor(const mjModel* m, Sensor s) {
  // Gathered sensors are written without cutoff: a template cutoff sends a
  // sensor to the generic path; per-row cutoffs are applied afterwards, to
  // the sensors a row's cutoff clips (clips_), which keeps the gathered
  // writes when few or no rows have one.
  const bool whole = !(m->sensor_cutoff[s.id] > 0 && !declared_[kSensorCutoff]) &&
                     s.segments.size() == 1 && s.segments[0].second == s.dim;
  const bool clipped = s.datatype == mjDATATYPE_REAL || s.datatype == mjDATATYPE_POSITIVE;
  if (whole && declared_[kSensorCutoff] && clipped &&
      (s.op == Sensor::kCopy || s.op == Sensor::kPosRel)) {
    clips_.push_back(s);
  }
  const bool no_cutoff = !(m->sensor_cutoff[s.id] > 0) && !declared_[kSensorCutoff];
  const bool template_bodies = !declared_[kBodyMass] && !declared_[kBodyIpos];
  if (plan_site_fixed(m, s, whole && no_cutoff)) {
    // filed in site_fixed_
  } else if (whole && no_cutoff && template_bodies &&
             (s.type == mjSENS_SUBTREECOM || s.type == mjSENS_SUBTREELINVEL)) {
    subtree_fixed_.push_back({s.adr, s.subtree, s.type});
  } else if (whole && no_cutoff && template_bodies && s.type == mjSENS_SUBTREEANGMOM &&
             !declared_[kBodyIquat] && !declared_[kBodyInertia]) {
    angmom_fixed_.push_back({s.adr, s.subtree, s.type});
  } else if (whole && no_cutoff && s.type == mjSENS_JOINTPOS) {
    joint_pos_.push_back({s.adr, s.qadr});
  } else if (whole && no_cutoff && s.type == mjSENS_JOINTVEL) {
    joint_vel_.push_back({s.adr, s.dadr});
  } else if (whole && s.op == Sensor::kCopy) {
    (s.dim == 3 ? gather3_ : gather4_).push_back({s.adr, s.src});
  } else if (whole && s.op == Sensor::kPosRel) {
    pos_rel_.push_back({s.adr, s.obj.slot, s.ref.slot});
  } else if (whole && s.op == Sensor::kQuatRel) {
    quat_rel_.push_back({s.adr, s.obj.slot, s.ref.slot});
  } else {
    sensors_.push_back(std::move(s));
  }
}

// Files a world-frame site sensor in site_fixed_ when it qualifies (see
// SiteFixed); false otherwise.
bool FastEngine::plan_site_fixed(const mjModel* m, const Sensor& s, bool whole_no_cutoff) {
  const int type = s.type;
  const bool kind = type == mjSENS_FRAMEPOS || type == mjSENS_FRAMEQUAT ||
                    type == mjSENS_FRAMELINVEL || type == mjSENS_FRAMEANGVEL ||
                    type == mjSENS_GYRO || type == mjSENS_VELOCIMETER;
  const int sf = s.obj.sameframe;
  if (!whole_no_cutoff || !kind || s.has_ref || m->sensor_objtype[s.id] != mjOBJ_SITE ||
      declared_[kSitePos] || declared_[kSiteQuat] ||
      !(sf == mjSAMEFRAME_NONE || sf == mjSAMEFRAME_BODY || sf == mjSAMEFRAME_BODYROT) ||
      bodies_[s.obj.slot].still) {
    // Sites on dof-less weld roots take the general path, which returns
    // mj_objectVelocity's exact zeros even for a non-finite pose.
    return false;
  }
  SiteFixed f{};
  f.col = s.adr;
  f.slot = s.obj.slot;
  f.type = type;
  f.dim = s.dim;
  f.sameframe = sf;
  copy3(f.pos, m->site_pos + 3 * s.obj.id);
  copy4(f.quat, m->site_quat + 4 * s.obj.id);
  site_fixed_.push_back(f);
  return true;
}

// Per participant: the world's state in slot 0, everything else zero.
int64_t FastEngine::participant_bytes() const {
  if (scratch_.empty()) return 0;
  const Scratch& sc = scratch_[0];
  auto bytes = [](const auto& v) { return static_cast<int64_t>(v.capacity() * sizeof(v[0])); };
  int64_t lanes = 0;
  for (const auto& v : sc.lane_states) lanes += bytes(v);
  return static_cast<int64_t>(sizeof(Scratch)) + bytes(sc.states) + lanes + bytes(sc.states2) +
         bytes(sc.anchors2) + bytes(sc.halfangle2) + bytes(sc.anchors) + bytes(sc.halfangle) +
         bytes(sc.nodes) + bytes(sc.sums) + bytes(sc.sums2) + bytes(sc.group) + bytes(sc.group2) +
         bytes(sc.states4) + bytes(sc.anchors4) + bytes(sc.halfangle4) + bytes(sc.sums4) +
         bytes(sc.group4);
}

int64_t FastEngine::memory_bytes() const {
  return static_cast<int64_t>(mj_sizeModel(model_)) +
         participant_bytes() * static_cast<int64_t>(scratch_.size());
}

void FastEngine::init_scratch(int num_scratch) {
  scratch_.resize(num_scratch);
  for (Scratch& sc : scratch_) {
    sc.states.assign(bodies_.size(), State{});
    State& world = sc.states[0];
    world.quat[0] = 1;
    world.mat[0] = world.mat[4] = world.mat[8] = 1;
    sc.anchors.assign(6 * joints_.size() + 8, 0.0);  // + padding against false sharing
    sc.halfangle.assign(2 * joints_.size() + 8, 0.0);
    sc.nodes.assign(bodies_.size() + 2, Node{});  // + padding against false sharing
    sc.sums.assign(3 * bodies_.size() + 8, 0.0);
    sc.sums2.assign(3 * bodies_.size() + 4, V2{0, 0});
    sc.group.assign(group_.empty() ? 0 : bodies_.size() + 1, GroupNode<double>{});
    sc.group2.assign(group_.empty() ? 0 : bodies_.size() + 1, GroupNode<V2>{});
    for (int l = 0; l < (avx2_ ? 3 : 1); ++l) sc.lane_states[l] = sc.states;
    sc.states2.assign(bodies_.size(), StateT<V2>{});
    StateT<V2>& world2 = sc.states2[0];
    world2.quat[0] = V2{1, 1};
    world2.mat[0] = world2.mat[4] = world2.mat[8] = V2{1, 1};
    sc.anchors2.assign(6 * joints_.size() + 4, V2{0, 0});
    sc.halfangle2.assign(2 * joints_.size() + 4, V2{0, 0});
    if (!avx2_) continue;  // quads: the AVX2 build only
    sc.states4.assign(bodies_.size(), StateT<V4>{});
    StateT<V4>& world4 = sc.states4[0];
    world4.quat[0] = V4{1, 1, 1, 1};
    world4.mat[0] = world4.mat[4] = world4.mat[8] = V4{1, 1, 1, 1};
    sc.anchors4.assign(6 * joints_.size() + 2, V4{});
    sc.halfangle4.assign(2 * joints_.size() + 2, V4{});
    sc.sums4.assign(3 * bodies_.size() + 2, V4{});
    sc.group4.assign(group_.empty() ? 0 : bodies_.size() + 1, GroupNode<V4>{});
  }
}

// The joints of a body (none for a free body), with their shortcut flags,
// appended to joints_.
void FastEngine::add_joints(const mjModel* m, Body& body, int jntadr, int jntnum) {
  body.jnt_begin = static_cast<int>(joints_.size());
  for (int j = jntadr; j < jntadr + jntnum; ++j) {
    Joint jt;
    jt.id = j;
    jt.type = m->jnt_type[j];
    jt.qadr = m->jnt_qposadr[j];
    jt.dadr = m->jnt_dofadr[j];
    const double* pos = m->jnt_pos + 3 * j;
    const double* axis = m->jnt_axis + 3 * j;
    copy3(jt.pos, pos);
    copy3(jt.axis, axis);
    jt.qpos0 = m->qpos0[jt.qadr];
    jt.centered = !declared_[kJntPos] && pos[0] == 0 && pos[1] == 0 && pos[2] == 0;
    jt.unit_axis = -1;
    for (int k = 0; k < 3 && jt.type == mjJNT_HINGE && !declared_[kJntAxis]; ++k) {
      if (axis[k] == 1 && axis[(k + 1) % 3] == 0 && axis[(k + 2) % 3] == 0) {
        jt.unit_axis = k;
      }
    }
    joints_.push_back(jt);
  }
  body.jnt_end = static_cast<int>(joints_.size());
  // The world axis of a hinge is its axis rotated by the body's quaternion
  // before the hinge turns it; turning about that axis leaves it where it
  // is, so when no later joint of the body rotates, it is also the axis
  // rotated by the body's final rotation: a column of xmat (unit axis) or
  // one matrix-vector product, instead of a quaternion rotation per hinge
  // (quadruped tracking: -5% instructions per row, -18% with the
  // single-hinge path below). Only the velocities read it, and they differ
  // from mj_forward's by rounding anyway, as long as the pre-joint
  // quaternion is unit to rounding: the parent's is normalised, earlier
  // joints of the body keep its norm (balls, and hinges with unit axes:
  // `stretched` below), and the body's own quaternion must be unit to
  // kUnitQuatTol (the template's here, a per-row one per row in
  // axes_from_mat).
  const double* bquat = m->body_quat + 4 * body.id;
  const double bsq =
      bquat[0] * bquat[0] + bquat[1] * bquat[1] + bquat[2] * bquat[2] + bquat[3] * bquat[3];
  // A per-row body_quat is checked per row (mat_axis_lanes), the template's here.
  const bool unit_norm = declared_[kBodyQuat] || std::fabs(bsq - 1) < kUnitQuatTol;
  // A hinge turns the quaternion by (cos, sin * axis), of norm 1 only for a
  // unit axis: after a hinge whose axis is not unit (edited, or given per
  // row: a float32-normalised axis is off by ~1e-7) the pre-joint
  // quaternion is not unit either, and mj_kinematics' later world axes are
  // stretched by its squared norm, which the final (normalised) rotation
  // does not have (angular velocities off by that much).
  std::vector<char> stretched(body.jnt_end - body.jnt_begin, 0);
  bool stretching = false;
  for (int j = body.jnt_begin; j < body.jnt_end; ++j) {
    stretched[j - body.jnt_begin] = stretching;
    const double* a = joints_[j].axis;
    const bool unit_axis = std::fabs(a[0] * a[0] + a[1] * a[1] + a[2] * a[2] - 1) < kUnitQuatTol;
    stretching |= joints_[j].type == mjJNT_HINGE && (declared_[kJntAxis] || !unit_axis);
  }
  // A centered rotation leaves the origin where it is, so its anchor is the
  // final origin unless a later joint of the body moves the origin.
  bool rotates_after = false, moves = false;
  for (int j = body.jnt_end - 1; j >= body.jnt_begin; --j) {
    Joint& jt = joints_[j];
    jt.axis_from_mat =
        jt.type == mjJNT_HINGE && !rotates_after && unit_norm && !stretched[j - body.jnt_begin];
    jt.at_origin = jt.type != mjJNT_SLIDE && jt.centered && !moves;
    rotates_after = rotates_after || jt.type != mjJNT_SLIDE;
    moves = moves || jt.type == mjJNT_SLIDE || !jt.centered;
  }
  body.rotates = rotates_after;  // any rotational joint
  // The common robot link: one centered hinge about a coordinate axis, the
  // model's own body_quat (Body::hinge_axis).
  if (body.jnt_end - body.jnt_begin == 1) {
    const Joint& jt = joints_[body.jnt_begin];
    if (jt.axis_from_mat && jt.unit_axis >= 0 && jt.at_origin && !declared_[kBodyQuat]) {
      body.hinge_axis = jt.unit_axis;
    }
  }
  for (int j = body.jnt_begin; j < body.jnt_end && body.hinge_axis < 0; ++j) {
    body.axes_from_mat = body.axes_from_mat || joints_[j].axis_from_mat;
  }
}

FastEngine::~FastEngine() { mj_deleteModel(model_); }

FastEngine::Frame FastEngine::make_frame(const mjModel* m, int objtype, int objid,
                                         const std::vector<int>& slot_of) {
  Frame f;
  f.slot = slot_of[body_of(m, objtype, objid)];
  if (objtype == mjOBJ_XBODY) {
    f.kind = Frame::kXBody;
  } else if (objtype == mjOBJ_BODY) {
    f.kind = Frame::kInertial;
  } else if (objtype == mjOBJ_CAMERA) {
    // mj_camlight of a fixed camera: mj_local2Global with sameframe NONE.
    f.kind = Frame::kLocal;
    f.sameframe = mjSAMEFRAME_NONE;
    f.id = objid;
    f.pos_field = kCamPos;
    f.quat_field = kCamQuat;
  } else {
    const bool geom = objtype == mjOBJ_GEOM;
    f.kind = Frame::kLocal;
    f.sameframe = geom ? m->geom_sameframe[objid] : m->site_sameframe[objid];
    f.id = objid;
    f.pos_field = geom ? kGeomPos : kSitePos;
    f.quat_field = geom ? kGeomQuat : kSiteQuat;
  }
  return f;
}

}  // namespace mjrefresh
