#include "fast_engine.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <type_traits>

#include "fast_kernels.h"

namespace mjrefresh {
namespace {

using namespace fast;

bool frame_type_ok(int objtype) {
  return objtype == mjOBJ_XBODY || objtype == mjOBJ_BODY || objtype == mjOBJ_GEOM ||
         objtype == mjOBJ_SITE;
}

bool is_vel_sensor(int type) {
  return type == mjSENS_FRAMELINVEL || type == mjSENS_FRAMEANGVEL ||
         type == mjSENS_VELOCIMETER || type == mjSENS_GYRO;
}

std::string sensor_label(const mjModel* m, int i) {
  std::string label = "sensor ";
  const char* name = mj_id2name(m, mjOBJ_SENSOR, i);
  if (name && *name) {
    label.append("'").append(name).append("'");
  } else {
    label.append("#").append(std::to_string(i));
  }
  return label.append(" (type ").append(std::to_string(m->sensor_type[i])).append(")");
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
    default:
      return 0;
  }
}

// mju_clip / mju_min as apply_cutoff uses them: REAL both sides, POSITIVE
// the upper side only, axis/quaternion data never.
double cut(double x, double cutoff, int datatype) {
  if (datatype == mjDATATYPE_REAL) {
    if (x < -cutoff) return -cutoff;
    if (x > cutoff) return cutoff;
    return x;
  }
  if (datatype == mjDATATYPE_POSITIVE) return x < cutoff ? x : cutoff;
  return x;
}


// oa[0..1] = lane 0 of (x, y), ob[0..1] = lane 1: one transposing shuffle
// and a 16-byte store per row for float64 outputs.
inline void put_lanes2(double* oa, double* ob, V2 x, V2 y) {
  const V2 lo = __builtin_shufflevector(x, y, 0, 2);
  const V2 hi = __builtin_shufflevector(x, y, 1, 3);
  std::memcpy(oa, &lo, sizeof(V2));
  std::memcpy(ob, &hi, sizeof(V2));
}
inline void put_lanes2(float* oa, float* ob, V2 x, V2 y) {
  oa[0] = static_cast<float>(x[0]);
  oa[1] = static_cast<float>(y[0]);
  ob[0] = static_cast<float>(x[1]);
  ob[1] = static_cast<float>(y[1]);
}

}  // namespace

// How the pose pass reads the model values it takes per row: the template's
// (inline in Body/Joint) or a row's / a pair's field blocks (KinVals).
struct FastEngine::TemplateKin {
  template <class B>
  static double body_pos(const B& b, int k) { return b.pos[k]; }
  template <class B>
  static double body_quat(const B& b, int k) { return b.quat[k]; }
  template <class J>
  static double jnt_pos(const J& j, int k) { return j.pos[k]; }
  template <class J>
  static double jnt_axis(const J& j, int k) { return j.axis[k]; }
};
template <class A>
struct FastEngine::FieldKin {
  KinVals<A> v;
  template <class B>
  auto body_pos(const B& b, int k) const { return v.body_pos[3 * b.id + k]; }
  template <class B>
  auto body_quat(const B& b, int k) const { return v.body_quat[4 * b.id + k]; }
  template <class J>
  auto jnt_pos(const J& j, int k) const { return v.jnt_pos[3 * j.id + k]; }
  template <class J>
  auto jnt_axis(const J& j, int k) const { return v.jnt_axis[3 * j.id + k]; }
};

std::string fast_uncovered(const mjModel* m, const Selection& sel) {
  // The kernels know MuJoCo's four joint types; anything else (a corrupted
  // model) goes to the exact engine, where MuJoCo itself reports it.
  for (int j = 0; j < m->njnt; ++j) {
    const int type = m->jnt_type[j];
    if (type != mjJNT_FREE && type != mjJNT_BALL && type != mjJNT_SLIDE && type != mjJNT_HINGE) {
      return "joint " + std::to_string(j) + " has unknown type " + std::to_string(type);
    }
  }
  if (sel.sensors.empty()) return {};
  if (m->opt.disableflags & mjDSBL_SENSOR) {
    return "the model disables sensors (mjDSBL_SENSOR); only the exact engine reproduces "
           "what mj_forward leaves in sensordata then";
  }
  for (int i : sel.sensors) {
    const int type = m->sensor_type[i];
    switch (type) {
      case mjSENS_FRAMEPOS:
      case mjSENS_FRAMEQUAT:
      case mjSENS_FRAMEXAXIS:
      case mjSENS_FRAMEYAXIS:
      case mjSENS_FRAMEZAXIS:
      case mjSENS_FRAMELINVEL:
      case mjSENS_FRAMEANGVEL:
        if (!frame_type_ok(m->sensor_objtype[i])) {
          return sensor_label(m, i) + " is attached to an object type the fast engine does "
                                      "not cover (only xbody, body, geom and site)";
        }
        if (m->sensor_refid[i] >= 0 && !frame_type_ok(m->sensor_reftype[i])) {
          return sensor_label(m, i) + " has a reference frame type the fast engine does not "
                                      "cover (only xbody, body, geom and site)";
        }
        break;
      case mjSENS_VELOCIMETER:
      case mjSENS_GYRO:
      case mjSENS_JOINTPOS:
      case mjSENS_JOINTVEL:
      case mjSENS_BALLQUAT:
      case mjSENS_BALLANGVEL:
      case mjSENS_SUBTREECOM:
      case mjSENS_CLOCK:
        break;
      default:
        return sensor_label(m, i) + ": sensor type not covered by the fast engine";
    }
  }
  return {};
}

FastEngine::FastEngine(const mjModel* model, Selection selection, int num_scratch)
    : sel_(std::move(selection)) {
  const mjModel* m = model;
  const std::string why = fast_uncovered(m, sel_);
  if (!why.empty()) throw std::invalid_argument("engine 'fast': " + why);
  // Declared per-row fields: the shortcuts that test their template values
  // are off (see the contract in fast_engine.h).
  bool declared[kNumModelFields] = {};
  for (int f : sel_.model_fields) declared[f] = true;
  kin_fields_ = declared[kBodyPos] || declared[kBodyQuat] || declared[kJntPos] ||
                declared[kJntAxis];

  // Pass 1: mark the bodies that must be visited and which need velocities.
  // Ancestors inherit every mark (a body's pose and velocity are built on
  // its parent's).
  const int nbody = m->nbody;
  std::vector<char> need(nbody, 0), vel_sensor(nbody, 0), vel_body(nbody, 0);
  for (int b : sel_.bodies) need[b] = vel_body[b] = 1;
  if (sel_.relative_to >= 0) need[sel_.relative_to] = 1;
  for (int s : sel_.sites) need[m->site_bodyid[s]] = 1;
  for (int i : sel_.sensors) {
    const int type = m->sensor_type[i];
    const bool vel = is_vel_sensor(type);
    if (type == mjSENS_SUBTREECOM) {
      // subtree_com reads every descendant's inertial position.
      const int root = m->sensor_objid[i];
      for (int b = root; b < nbody; ++b) {
        int a = b;
        while (a > root) a = m->body_parentid[a];
        if (a == root) need[b] = 1;
      }
      continue;
    }
    if (type == mjSENS_JOINTPOS || type == mjSENS_JOINTVEL || type == mjSENS_BALLQUAT ||
        type == mjSENS_BALLANGVEL || type == mjSENS_CLOCK) {
      continue;
    }
    const int ob = body_of(m, m->sensor_objtype[i], m->sensor_objid[i]);
    need[ob] = 1;
    if (vel) vel_sensor[ob] = 1;
    if (m->sensor_refid[i] >= 0) {
      const int rb = body_of(m, m->sensor_reftype[i], m->sensor_refid[i]);
      need[rb] = 1;
      if (vel) vel_sensor[rb] = 1;
    }
    any_vel_sensor_ = any_vel_sensor_ || vel;
  }
  // Body ids are topologically sorted (parent < child): one backward sweep
  // propagates the marks to all ancestors.
  for (int b = nbody - 1; b > 0; --b) {
    const int p = m->body_parentid[b];
    need[p] |= need[b];
    vel_sensor[p] |= vel_sensor[b];
    vel_body[p] |= vel_body[b];
  }

  // Pass 2: slots in breadth-first order (by depth, then id): parents come
  // before children, and consecutive slots are mostly independent of each
  // other (the hips of four legs, then the thighs, ...), so the CPU overlaps
  // their long dependency chains instead of waiting for each body's parent.
  std::vector<int> depth(nbody, 0), order;
  for (int b = 1; b < nbody; ++b) {
    depth[b] = depth[m->body_parentid[b]] + 1;
    if (need[b]) order.push_back(b);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return depth[a] < depth[b]; });
  std::vector<int> slot_of(nbody, -1);
  bodies_.emplace_back();  // slot 0: world
  slot_of[0] = 0;
  for (int b : order) {
    Body body;
    body.id = b;
    body.parent = slot_of[m->body_parentid[b]];
    body.vel_sensor = vel_sensor[b];
    body.vel_body = vel_body[b];
    body.isameframe = m->body_sameframe[b];
    const double* pos = m->body_pos + 3 * b;
    const double* quat = m->body_quat + 4 * b;
    copy3(body.pos, pos);
    copy4(body.quat, quat);
    body.zero_pos = !declared[kBodyPos] && pos[0] == 0 && pos[1] == 0 && pos[2] == 0;
    body.unit_quat = !declared[kBodyQuat] && quat[0] == 1 && quat[1] == 0 && quat[2] == 0 &&
                     quat[3] == 0;
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
    body.jnt_begin = static_cast<int>(joints_.size());
    if (body.kind != Body::kFree) {
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
        jt.centered = !declared[kJntPos] && pos[0] == 0 && pos[1] == 0 && pos[2] == 0;
        jt.unit_axis = -1;
        for (int k = 0; k < 3 && jt.type == mjJNT_HINGE && !declared[kJntAxis]; ++k) {
          if (axis[k] == 1 && axis[(k + 1) % 3] == 0 && axis[(k + 2) % 3] == 0) {
            jt.unit_axis = k;
          }
        }
        joints_.push_back(jt);
      }
    }
    body.jnt_end = static_cast<int>(joints_.size());
    // A centered rotation leaves the origin where it is, so its anchor is the
    // final origin unless a later joint of the body moves the origin.
    bool moves = false;
    for (int j = body.jnt_end - 1; j >= body.jnt_begin; --j) {
      Joint& jt = joints_[j];
      jt.at_origin = jt.type != mjJNT_SLIDE && jt.centered && !moves;
      moves = moves || jt.type == mjJNT_SLIDE || !jt.centered;
    }
    slot_of[b] = static_cast<int>(bodies_.size());
    bodies_.push_back(body);
  }

  // Pass 3: outputs in terms of slots.
  for (int b : sel_.bodies) body_slots_.push_back(slot_of[b]);
  if (sel_.relative_to >= 0) rel_slot_ = slot_of[sel_.relative_to];
  for (int s : sel_.sites) sites_.push_back(make_frame(m, mjOBJ_SITE, s, slot_of));
  // kCopy sources are offsets (in doubles) into the States array.
  static_assert(std::is_standard_layout_v<State> && sizeof(State) % sizeof(double) == 0);
  constexpr int kStateSize = sizeof(State) / sizeof(double);
  for (int i : sel_.sensors) {
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
      case mjSENS_SUBTREECOM: {
        Subtree st;
        const int root = m->sensor_objid[i];
        st.root = slot_of[root];
        for (int b = nbody - 1; b >= root; --b) {  // descending body id
          int a = b;
          while (a > root) a = m->body_parentid[a];
          if (a == root) st.slots.push_back(slot_of[b]);
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
    // Gathered sensors are written without cutoff: a template cutoff sends a
    // sensor to the generic path; per-row cutoffs are applied afterwards, to
    // the sensors a row's cutoff clips (clips_), which keeps the gathered
    // writes when few or no rows have one.
    const bool whole = !(m->sensor_cutoff[i] > 0 && !declared[kSensorCutoff]) &&
                       s.segments.size() == 1 && s.segments[0].second == s.dim;
    const bool clipped = s.datatype == mjDATATYPE_REAL || s.datatype == mjDATATYPE_POSITIVE;
    if (whole && declared[kSensorCutoff] && clipped &&
        (s.op == Sensor::kCopy || s.op == Sensor::kPosRel)) {
      clips_.push_back(s);
    }
    if (whole && s.op == Sensor::kCopy) {
      (s.dim == 3 ? gather3_ : gather4_).push_back({s.adr, s.src});
    } else if (whole && s.op == Sensor::kPosRel) {
      pos_rel_.push_back({s.adr, s.obj.slot, s.ref.slot});
    } else if (whole && s.op == Sensor::kQuatRel) {
      quat_rel_.push_back({s.adr, s.obj.slot, s.ref.slot});
    } else {
      sensors_.push_back(std::move(s));
    }
  }

  for (int j = 0; j < static_cast<int>(joints_.size()); ++j) {
    if (joints_[j].type == mjJNT_HINGE) hinges_.push_back(j);
  }
  model_ = mj_copyModel(nullptr, model);
  for (int f = 0; f < kNumModelFields; ++f) template_vals_.f[f] = field_data(model_, f);
  scratch_.resize(num_scratch);
  for (Scratch& sc : scratch_) {
    sc.states.assign(bodies_.size(), State{});
    State& world = sc.states[0];
    world.quat[0] = 1;
    world.mat[0] = world.mat[4] = world.mat[8] = 1;
    sc.anchors.assign(6 * joints_.size() + 8, 0.0);  // + padding against false sharing
    sc.halfangle.assign(2 * joints_.size() + 8, 0.0);
    sc.subtree.assign(4 * bodies_.size() + 8, 0.0);
    sc.states_b = sc.states;
    sc.states2.assign(bodies_.size(), StateT<V2>{});
    StateT<V2>& world2 = sc.states2[0];
    world2.quat[0] = V2{1, 1};
    world2.mat[0] = world2.mat[4] = world2.mat[8] = V2{1, 1};
    sc.anchors2.assign(6 * joints_.size() + 4, V2{0, 0});
    sc.halfangle2.assign(2 * joints_.size() + 4, V2{0, 0});
  }
}

FastEngine::~FastEngine() { mj_deleteModel(model_); }

FastEngine::Frame FastEngine::make_frame(const mjModel* m, int objtype, int objid,
                                         std::vector<int>& slot_of) {
  Frame f;
  f.slot = slot_of[body_of(m, objtype, objid)];
  if (objtype == mjOBJ_XBODY) {
    f.kind = Frame::kXBody;
  } else if (objtype == mjOBJ_BODY) {
    f.kind = Frame::kInertial;
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

// xipos/ximat as mj_local2Global computes them from body_ipos/iquat.
void FastEngine::inertial_pose(const State* st, int slot, const Vals& v, double pos[3],
                               double mat[9]) const {
  const Body& b = bodies_[slot];
  const State& x = st[slot];
  if (slot == 0) {
    copy3(pos, x.pos);
    std::memcpy(mat, x.mat, sizeof(double) * 9);
    return;
  }
  if (b.isameframe == mjSAMEFRAME_BODY) {
    copy3(pos, x.pos);
  } else {
    mat_vec(pos, x.mat, v.f[kBodyIpos] + 3 * b.id);
    add_to3(pos, x.pos);
  }
  if (!mat) return;
  if (b.isameframe == mjSAMEFRAME_NONE) {
    double q[4];
    mul_quat(q, x.quat, v.f[kBodyIquat] + 4 * b.id);
    quat_mat(mat, q);
  } else {
    std::memcpy(mat, x.mat, sizeof(double) * 9);
  }
}

// World position and rotation matrix of a frame (geom_xpos/site_xpos, ...).
void FastEngine::frame_pose(const State* st, const Frame& f, const Vals& v, double pos[3],
                            double mat[9]) const {
  const State& x = st[f.slot];
  switch (f.kind) {
    case Frame::kXBody:
      copy3(pos, x.pos);
      std::memcpy(mat, x.mat, sizeof(double) * 9);
      return;
    case Frame::kInertial:
      inertial_pose(st, f.slot, v, pos, mat);
      return;
    case Frame::kLocal:
      break;
  }
  const double* fpos = v.f[f.pos_field] + 3 * f.id;
  switch (f.sameframe) {
    case mjSAMEFRAME_BODY:
      copy3(pos, x.pos);
      std::memcpy(mat, x.mat, sizeof(double) * 9);
      return;
    case mjSAMEFRAME_INERTIA:
      inertial_pose(st, f.slot, v, pos, mat);
      return;
    case mjSAMEFRAME_BODYROT:
      mat_vec(pos, x.mat, fpos);
      add_to3(pos, x.pos);
      std::memcpy(mat, x.mat, sizeof(double) * 9);
      return;
    case mjSAMEFRAME_INERTIAROT: {
      double ipos[3];
      inertial_pose(st, f.slot, v, ipos, mat);
      mat_vec(pos, x.mat, fpos);
      add_to3(pos, x.pos);
      return;
    }
    default: {
      mat_vec(pos, x.mat, fpos);
      add_to3(pos, x.pos);
      double q[4];
      mul_quat(q, x.quat, v.f[f.quat_field] + 4 * f.id);
      quat_mat(mat, q);
      return;
    }
  }
}

// Global quaternion of a frame, as get_xquat in engine_sensor.c. MuJoCo
// 3.11 multiplies the body's xquat by the local quaternion (body_iquat,
// geom_quat, site_quat) whatever the frame's sameframe; 4.0 follows
// sameframe like mj_local2Global (measured with per-row quaternions that
// differ from the template's: 4.0 ignores geom_quat of a geom compiled as
// "same frame as the inertia" and uses body_iquat). Build and runtime
// MuJoCo versions always match (checked at import).
#if mjVERSION_HEADER >= 4000000
constexpr bool kQuatFollowsSameframe = true;
#else
constexpr bool kQuatFollowsSameframe = false;
#endif

void FastEngine::frame_quat(const State* st, const Frame& f, const Vals& v,
                            double quat[4]) const {
  const State& x = st[f.slot];
  const double* iquat = v.f[kBodyIquat] + 4 * bodies_[f.slot].id;
  switch (f.kind) {
    case Frame::kXBody:
      copy4(quat, x.quat);
      return;
    case Frame::kInertial:
      if (kQuatFollowsSameframe && bodies_[f.slot].isameframe != mjSAMEFRAME_NONE) {
        copy4(quat, x.quat);  // body sameframe is BODY or BODYROT
      } else {
        mul_quat(quat, x.quat, iquat);
      }
      return;
    case Frame::kLocal:
      if (kQuatFollowsSameframe) {
        switch (f.sameframe) {
          case mjSAMEFRAME_BODY:
          case mjSAMEFRAME_BODYROT:
            copy4(quat, x.quat);
            return;
          case mjSAMEFRAME_INERTIA:
          case mjSAMEFRAME_INERTIAROT:
            mul_quat(quat, x.quat, iquat);
            return;
          default:
            break;
        }
      }
      mul_quat(quat, x.quat, v.f[f.quat_field] + 4 * f.id);
      return;
  }
}

// 6-D velocity of a frame at world point `pos`, world orientation (what
// mj_objectVelocity returns with flg_local=0).
void FastEngine::frame_vel(const State* st, const Frame& f, const double pos[3], double w[3],
                           double v[3]) const {
  const State& x = st[f.slot];
  copy3(w, x.w);
  copy3(v, x.v);
  if (f.kind == Frame::kXBody) return;
  double r[3], c[3];
  sub3(r, pos, x.pos);
  cross(c, x.w, r);
  add_to3(v, c);
}

void FastEngine::compute_sensor(const State* st, const Sensor& s, const Inputs& in, int64_t row,
                                const Vals& mv, double* vals) const {
  switch (s.type) {
    case mjSENS_FRAMEPOS:
    case mjSENS_FRAMEXAXIS:
    case mjSENS_FRAMEYAXIS:
    case mjSENS_FRAMEZAXIS: {
      double pos[3], mat[9];
      frame_pose(st, s.obj, mv, pos, mat);
      double vec[3];
      if (s.type == mjSENS_FRAMEPOS) {
        copy3(vec, pos);
      } else {
        const int k = s.type - mjSENS_FRAMEXAXIS;
        vec[0] = mat[k];
        vec[1] = mat[k + 3];
        vec[2] = mat[k + 6];
      }
      if (!s.has_ref) {
        copy3(vals, vec);
        return;
      }
      double rpos[3], rmat[9];
      frame_pose(st, s.ref, mv, rpos, rmat);
      if (s.type == mjSENS_FRAMEPOS) {
        double r[3];
        sub3(r, pos, rpos);
        mat_t_vec(vals, rmat, r);
      } else {
        mat_t_vec(vals, rmat, vec);
      }
      return;
    }
    case mjSENS_FRAMEQUAT: {
      double q[4];
      frame_quat(st, s.obj, mv, q);
      if (!s.has_ref) {
        copy4(vals, q);
        return;
      }
      double rq[4];
      frame_quat(st, s.ref, mv, rq);
      neg_quat(rq, rq);
      mul_quat(vals, rq, q);
      return;
    }
    case mjSENS_FRAMELINVEL:
    case mjSENS_FRAMEANGVEL: {
      double pos[3], mat[9], w[3], v[3];
      frame_pose(st, s.obj, mv, pos, mat);
      frame_vel(st, s.obj, pos, w, v);
      if (s.has_ref) {
        double rpos[3], rmat[9], rw[3], rv[3];
        frame_pose(st, s.ref, mv, rpos, rmat);
        frame_vel(st, s.ref, rpos, rw, rv);
        double relw[3], relv[3], r[3], c[3];
        sub3(relw, w, rw);
        sub3(relv, v, rv);
        // linear velocity: correction due to the rotating reference frame
        sub3(r, pos, rpos);
        cross(c, r, rw);
        add_to3(relv, c);
        mat_t_vec(w, rmat, relw);
        mat_t_vec(v, rmat, relv);
      }
      copy3(vals, s.type == mjSENS_FRAMELINVEL ? v : w);
      return;
    }
    case mjSENS_VELOCIMETER:
    case mjSENS_GYRO: {
      double pos[3], mat[9], w[3], v[3];
      frame_pose(st, s.obj, mv, pos, mat);
      frame_vel(st, s.obj, pos, w, v);
      mat_t_vec(vals, mat, s.type == mjSENS_VELOCIMETER ? v : w);
      return;
    }
    case mjSENS_JOINTPOS:
      vals[0] = in.qpos.row(row)[s.qadr];
      return;
    case mjSENS_JOINTVEL:
      vals[0] = in.qvel.row(row)[s.dadr];
      return;
    case mjSENS_BALLQUAT:
      // mj_kinematics normalises the quaternions of qpos in place first.
      copy4(vals, in.qpos.row(row) + s.qadr);
      normalize4(vals);
      return;
    case mjSENS_BALLANGVEL:
      copy3(vals, in.qvel.row(row) + s.dadr);
      return;
    case mjSENS_CLOCK:
      vals[0] = in.time.valid() ? *in.time.row(row) : 0.0;
      return;
    case mjSENS_SUBTREECOM:
      break;
  }
}

// The specialised sensor lists: plain copies and relative poses of xbodies
// (all of a tracking workload), with fixed-size writes.
template <class T>
void FastEngine::write_fixed(const State* st, T* dst) const {
  const double* sd = reinterpret_cast<const double*>(st);  // States as doubles
  for (const Copy& c : gather3_) {
    T* o = dst + c.col;
    const double* v = sd + c.src;
    o[0] = static_cast<T>(v[0]);
    o[1] = static_cast<T>(v[1]);
    o[2] = static_cast<T>(v[2]);
  }
  for (const Copy& c : gather4_) {
    T* o = dst + c.col;
    const double* v = sd + c.src;
    o[0] = static_cast<T>(v[0]);
    o[1] = static_cast<T>(v[1]);
    o[2] = static_cast<T>(v[2]);
    o[3] = static_cast<T>(v[3]);
  }
  for (const Rel& r : pos_rel_) {
    double d[3], v[3];
    sub3(d, st[r.obj].pos, st[r.ref].pos);
    mat_t_vec(v, st[r.ref].mat, d);
    T* o = dst + r.col;
    o[0] = static_cast<T>(v[0]);
    o[1] = static_cast<T>(v[1]);
    o[2] = static_cast<T>(v[2]);
  }
  for (const Rel& r : quat_rel_) {
    double rq[4], q[4];
    neg_quat(rq, st[r.ref].quat);
    mul_quat(q, rq, st[r.obj].quat);
    T* o = dst + r.col;
    o[0] = static_cast<T>(q[0]);
    o[1] = static_cast<T>(q[1]);
    o[2] = static_cast<T>(q[2]);
    o[3] = static_cast<T>(q[3]);
  }
}

// The same for a pair of rows, straight from the two-lane states (no split):
// lane 0 goes to row a, lane 1 to row b.
template <class T>
void FastEngine::write_fixed_pair(const StateT<V2>* st, T* a, T* b) const {
  const V2* sd = reinterpret_cast<const V2*>(st);  // States as V2, same offsets
  for (const Copy& c : gather3_) {
    const V2* v = sd + c.src;
    T* oa = a + c.col;
    T* ob = b + c.col;
    put_lanes2(oa, ob, v[0], v[1]);
    oa[2] = static_cast<T>(v[2][0]);
    ob[2] = static_cast<T>(v[2][1]);
  }
  for (const Copy& c : gather4_) {
    const V2* v = sd + c.src;
    T* oa = a + c.col;
    T* ob = b + c.col;
    put_lanes2(oa, ob, v[0], v[1]);
    put_lanes2(oa + 2, ob + 2, v[2], v[3]);
  }
  for (const Rel& r : pos_rel_) {
    V2 d[3], v[3];
    sub3(d, st[r.obj].pos, st[r.ref].pos);
    mat_t_vec(v, st[r.ref].mat, d);
    T* oa = a + r.col;
    T* ob = b + r.col;
    put_lanes2(oa, ob, v[0], v[1]);
    oa[2] = static_cast<T>(v[2][0]);
    ob[2] = static_cast<T>(v[2][1]);
  }
  for (const Rel& r : quat_rel_) {
    V2 rq[4], q[4];
    neg_quat(rq, st[r.ref].quat);
    mul_quat(q, rq, st[r.obj].quat);
    T* oa = a + r.col;
    T* ob = b + r.col;
    put_lanes2(oa, ob, q[0], q[1]);
    put_lanes2(oa + 2, ob + 2, q[2], q[3]);
  }
}

template <class T>
void FastEngine::write_sensors(Scratch& sc, const State* st, const Inputs& in, int64_t row,
                               const Vals& v, T* dst, bool fixed) const {
  const double* sd = reinterpret_cast<const double*>(st);  // States as doubles
  if (fixed) write_fixed(st, dst);
  const double* cutoffs = v.f[kSensorCutoff];
  // Gathered sensors that this row's cutoff clips: written again, clipped
  // (recomputed from the States, so float32 outputs round the clipped value).
  for (const Sensor& s : clips_) {
    const double cutoff = cutoffs[s.id];
    if (!(cutoff > 0)) continue;
    double vals[4];
    if (s.op == Sensor::kCopy) {
      for (int k = 0; k < s.dim; ++k) vals[k] = sd[s.src + k];
    } else {  // kPosRel
      double d[3];
      sub3(d, st[s.obj.slot].pos, st[s.ref.slot].pos);
      mat_t_vec(vals, st[s.ref.slot].mat, d);
    }
    T* out = dst + s.adr;
    for (int k = 0; k < s.dim; ++k) out[k] = static_cast<T>(cut(vals[k], cutoff, s.datatype));
  }
  for (const Sensor& s : sensors_) {
    double vals[4];
    switch (s.op) {
      case Sensor::kCopy:  // only with a cutoff or cut by a range (otherwise gathered)
        for (int k = 0; k < s.dim; ++k) vals[k] = sd[s.src + k];
        break;
      case Sensor::kPosRel: {
        const State& x = st[s.obj.slot];
        const State& r = st[s.ref.slot];
        double d[3];
        sub3(d, x.pos, r.pos);
        mat_t_vec(vals, r.mat, d);
        break;
      }
      case Sensor::kQuatRel: {
        double rq[4];
        neg_quat(rq, st[s.ref.slot].quat);
        mul_quat(vals, rq, st[s.obj.slot].quat);
        break;
      }
      case Sensor::kGeneric:
        if (s.type == mjSENS_SUBTREECOM) {
          subtree_com(sc, st, s, v, vals);
        } else {
          compute_sensor(st, s, in, row, v, vals);
        }
        break;
    }
    const double cutoff = cutoffs[s.id];
    if (cutoff > 0) {
      for (int k = 0; k < s.dim; ++k) vals[k] = cut(vals[k], cutoff, s.datatype);
    }
    T* out = dst + s.adr;
    if (s.segments.size() == 1 && s.segments[0].second == s.dim) {
      for (int k = 0; k < s.dim; ++k) out[k] = static_cast<T>(vals[k]);
    } else {
      for (const auto& [off, count] : s.segments) {
        for (int k = off; k < off + count; ++k) out[k] = static_cast<T>(vals[k]);
      }
    }
  }
}

// subtree_com of one body: mj_comPos's backward pass over the subtree, in
// its order (children, by descending id, before the body's own term).
void FastEngine::subtree_com(Scratch& sc, const State* st, const Sensor& s, const Vals& v,
                             double vals[3]) const {
  const Subtree& tree = subtrees_[s.subtree];
  double* acc = sc.subtree.data();
  const double* mass = v.f[kBodyMass];
  for (int slot : tree.slots) {
    double* a = acc + 4 * slot;
    a[0] = a[1] = a[2] = a[3] = 0;
  }
  for (int slot : tree.slots) {
    double* a = acc + 4 * slot;
    const Body& b = bodies_[slot];
    if (slot) {
      double xipos[3];
      inertial_pose(st, slot, v, xipos, nullptr);
      add_to_scl3(a, xipos, mass[b.id]);
      a[3] += mass[b.id];
    }
    if (slot != tree.root) {
      double* pa = acc + 4 * b.parent;
      add_to3(pa, a);
      pa[3] += a[3];
    }
  }
  const double* a = acc + 4 * tree.root;
  if (a[3] < mjMINVAL) {
    inertial_pose(st, tree.root, v, vals, nullptr);
  } else {
    const double scl = 1.0 / std::max<double>(mjMINVAL, a[3]);
    vals[0] = a[0] * scl;
    vals[1] = a[1] * scl;
    vals[2] = a[2] * scl;
  }
}

// Velocity of visited body `s` (world angular velocity, linear velocity of
// the frame origin): the sum of cdof*qvel along the chain that mj_comPos and
// mj_comVel form, taken at the body origin instead of the subtree CoM. Free
// and ball rotations use the body's final axes; free translations are
// world-frame. Needs the parent's velocity and this body's final pose and
// joint anchors/axes (so it runs right after the body's pose).
template <class T, class R>
void FastEngine::body_velocity(int s, StateT<T>* st, const T* anchors, R qvel) const {
  const Body& b = bodies_[s];
  StateT<T>& x = st[s];
  const StateT<T>& p = st[b.parent];
  T r[3], c[3];
  sub3(r, x.pos, p.pos);
  cross(c, p.w, r);
  copy3(x.w, p.w);
  x.v[0] = p.v[0] + c[0];
  x.v[1] = p.v[1] + c[1];
  x.v[2] = p.v[2] + c[2];
  if (b.kind == Body::kFree) {
    const T lin[3] = {qvel[b.dadr], qvel[b.dadr + 1], qvel[b.dadr + 2]};
    add_to3(x.v, lin);
    for (int k = 0; k < 3; ++k) {
      const T axis[3] = {x.mat[k], x.mat[k + 3], x.mat[k + 6]};
      add_to_scl3(x.w, axis, qvel[b.dadr + 3 + k]);  // anchor = body origin: no linear term
    }
    return;
  }
  for (int j = b.jnt_begin; j < b.jnt_end; ++j) {
    const Joint& jt = joints_[j];
    const T* xanchor = anchors + 6 * j;
    const T* xaxis = xanchor + 3;
    switch (jt.type) {
      case mjJNT_SLIDE:
        add_to_scl3(x.v, xaxis, qvel[jt.dadr]);
        break;
      case mjJNT_HINGE: {
        const T qd = qvel[jt.dadr];
        add_to_scl3(x.w, xaxis, qd);
        if (jt.at_origin) break;  // x.pos - xanchor is exactly 0
        sub3(r, x.pos, xanchor);
        cross(c, xaxis, r);
        add_to_scl3(x.v, c, qd);
        break;
      }
      case mjJNT_BALL:
        if (!jt.at_origin) sub3(r, x.pos, xanchor);
        for (int k = 0; k < 3; ++k) {
          const T qd = qvel[jt.dadr + k];
          const T axis[3] = {x.mat[k], x.mat[k + 3], x.mat[k + 6]};
          add_to_scl3(x.w, axis, qd);
          if (jt.at_origin) continue;
          cross(c, axis, r);
          add_to_scl3(x.v, c, qd);
        }
        break;
      default:  // a free joint among several joints cannot be compiled
        break;
    }
  }
}

// Poses (mj_kinematics restricted to the visited bodies) and, where needed,
// velocities, in one pass from parents to children. R reads row data: one
// row (T = double) or two rows into the two lanes (T = V2).
// kv reads the model values: TemplateKin, or FieldKin over one row's field
// blocks (double) or a pair's, lane by lane (V2).
template <class T, class R, class K>
void FastEngine::kinematics(StateT<T>* st, T* anchors, T* half, R qpos, R qvel, R mocap_pos,
                            R mocap_quat, const K& kv, bool want_vel,
                            bool want_body_vel) const {
  using U = std::decay_t<decltype(kv.body_pos(bodies_[0], 0))>;  // double, or V2 per lane
  // Half-angle cos/sin of every visited hinge (mju_axisAngle2Quat's terms),
  // up front: they depend on qpos only, so the CPU overlaps them instead of
  // waiting for each on a body's dependency chain.
  for (int j : hinges_) {
    const Joint& jt = joints_[j];
    const T angle = qpos[jt.qadr] - jt.qpos0;
    T sn, cs;
    if constexpr (std::is_same_v<T, double>) {
      sn = 0, cs = 1;  // angle 0: exactly the unit quaternion
      if (angle != 0) sin_cos(angle * 0.5, &sn, &cs);
    } else {
      sin_cos(angle * 0.5, &sn, &cs);  // sin_cos(0) is exactly (0, 1)
    }
    half[2 * j] = cs;
    half[2 * j + 1] = sn;
  }

  const int nslot = static_cast<int>(bodies_.size());
  for (int s = 1; s < nslot; ++s) {
    const Body& b = bodies_[s];
    StateT<T>& x = st[s];
    if (b.kind == Body::kFree) {
      for (int k = 0; k < 3; ++k) x.pos[k] = qpos[b.qadr + k];
      for (int k = 0; k < 4; ++k) x.quat[k] = qpos[b.qadr + 3 + k];
      normalize4(x.quat);  // mj_normalizeQuat on qpos
    } else {
      const StateT<T>& p = st[b.parent];
      if (b.kind == Body::kMocap) {
        const T mpos[3] = {mocap_pos[3 * b.mocap], mocap_pos[3 * b.mocap + 1],
                           mocap_pos[3 * b.mocap + 2]};
        T mquat[4] = {mocap_quat[4 * b.mocap], mocap_quat[4 * b.mocap + 1],
                      mocap_quat[4 * b.mocap + 2], mocap_quat[4 * b.mocap + 3]};
        normalize4(mquat);
        T vec[3];
        mat_vec(vec, p.mat, mpos);
        x.pos[0] = p.pos[0] + vec[0];
        x.pos[1] = p.pos[1] + vec[1];
        x.pos[2] = p.pos[2] + vec[2];
        mul_quat(x.quat, p.quat, mquat);
      } else {
        // A zero offset or a unit rotation gives the parent's values exactly
        // (for finite input); skipping them saves a third of a body's work.
        if (b.zero_pos) {
          copy3(x.pos, p.pos);
        } else {
          const U bpos[3] = {kv.body_pos(b, 0), kv.body_pos(b, 1), kv.body_pos(b, 2)};
          T vec[3];
          mat_vec(vec, p.mat, bpos);
          x.pos[0] = p.pos[0] + vec[0];
          x.pos[1] = p.pos[1] + vec[1];
          x.pos[2] = p.pos[2] + vec[2];
        }
        if (b.unit_quat) {
          copy4(x.quat, p.quat);
        } else {
          const U bquat[4] = {kv.body_quat(b, 0), kv.body_quat(b, 1), kv.body_quat(b, 2),
                              kv.body_quat(b, 3)};
          mul_quat(x.quat, p.quat, bquat);
        }
      }
      // xaxis is only read by the velocities (and slides).
      const bool vel = want_vel && (b.vel_sensor || (b.vel_body && want_body_vel));
      for (int j = b.jnt_begin; j < b.jnt_end; ++j) {
        const Joint& jt = joints_[j];
        T* xanchor = anchors + 6 * j;
        T* xaxis = xanchor + 3;
        const U jaxis[3] = {kv.jnt_axis(jt, 0), kv.jnt_axis(jt, 1), kv.jnt_axis(jt, 2)};
        if (jt.type == mjJNT_SLIDE || vel) rot_vec_quat(xaxis, jaxis, x.quat);
        if (jt.centered) {
          copy3(xanchor, x.pos);  // rot_vec_quat(0) + pos, exactly
        } else {
          const U jpos[3] = {kv.jnt_pos(jt, 0), kv.jnt_pos(jt, 1), kv.jnt_pos(jt, 2)};
          rot_vec_quat(xanchor, jpos, x.quat);
          add_to3(xanchor, x.pos);
        }
        if (jt.type == mjJNT_SLIDE) {
          add_to_scl3(x.pos, xaxis, qpos[jt.qadr] - jt.qpos0);
          continue;
        }
        if (jt.type == mjJNT_BALL) {
          T qloc[4] = {qpos[jt.qadr], qpos[jt.qadr + 1], qpos[jt.qadr + 2], qpos[jt.qadr + 3]};
          normalize4(qloc);
          mul_quat(x.quat, x.quat, qloc);
        } else if (jt.unit_axis >= 0) {
          mul_quat_axis(x.quat, jt.unit_axis, half[2 * j], half[2 * j + 1]);
        } else {
          // mju_axisAngle2Quat with the precomputed half-angle terms
          const T sn = half[2 * j + 1];
          const T qloc[4] = {half[2 * j], jaxis[0] * sn, jaxis[1] * sn, jaxis[2] * sn};
          mul_quat(x.quat, x.quat, qloc);
        }
        // correct for off-center rotation (exactly zero for a centered joint)
        if (!jt.centered) {
          const U jpos[3] = {kv.jnt_pos(jt, 0), kv.jnt_pos(jt, 1), kv.jnt_pos(jt, 2)};
          T v0[3], v1[3];
          sub3(v0, xanchor, x.pos);
          rot_vec_quat(v1, jpos, x.quat);
          x.pos[0] += (v0[0] - v1[0]);
          x.pos[1] += (v0[1] - v1[1]);
          x.pos[2] += (v0[2] - v1[2]);
        }
      }
    }
    normalize4(x.quat);
    quat_mat(x.mat, x.quat);
    if (want_vel && (b.vel_sensor || (b.vel_body && want_body_vel))) {
      body_velocity(s, st, anchors, qvel);
    }
  }
}

namespace {

// Row data for the kinematics: one row, or two rows read into V2 lanes.
struct Row1 {
  const double* p;
  double operator[](int i) const { return p[i]; }
};
struct Row2 {
  const double* a;
  const double* b;
  V2 operator[](int i) const { return V2{a[i], b[i]}; }
};

const double* row_or_null(const RowView<const double>& v, int64_t row) {
  return v.valid() ? v.row(row) : nullptr;
}

}  // namespace

// The template's value arrays with the row's blocks for the declared fields.
FastEngine::Vals FastEngine::row_vals(const Inputs& in, int64_t row) const {
  Vals v = template_vals_;
  for (int f : sel_.model_fields) v.f[f] = in.fields[f].row(row);
  return v;
}

bool FastEngine::refresh_row(int t, int64_t row, const Inputs& in, const Outputs& out,
                             char* message, std::size_t message_size) {
  Scratch& sc = scratch_[t];
  const bool want_body_vel = out.body_linvel.valid() || out.body_angvel.valid();
  const bool want_vel = any_vel_sensor_ || want_body_vel;
  const Row1 qpos{in.qpos.row(row)}, qvel{in.qvel.row(row)};
  const Row1 mpos{row_or_null(in.mocap_pos, row)}, mquat{row_or_null(in.mocap_quat, row)};
  if (sel_.model_fields.empty()) {
    kinematics(sc.states.data(), sc.anchors.data(), sc.halfangle.data(), qpos, qvel, mpos,
               mquat, TemplateKin{}, want_vel, want_body_vel);
    emit(sc, sc.states.data(), row, in, template_vals_, out, true);
    return true;
  }
  const Vals v = row_vals(in, row);
  if (kin_fields_) {
    const FieldKin<const double*> kv{
        {v.f[kBodyPos], v.f[kBodyQuat], v.f[kJntPos], v.f[kJntAxis]}};
    kinematics(sc.states.data(), sc.anchors.data(), sc.halfangle.data(), qpos, qvel, mpos,
               mquat, kv, want_vel, want_body_vel);
  } else {
    kinematics(sc.states.data(), sc.anchors.data(), sc.halfangle.data(), qpos, qvel, mpos,
               mquat, TemplateKin{}, want_vel, want_body_vel);
  }
  emit(sc, sc.states.data(), row, in, v, out, true);
  return true;
}

void FastEngine::refresh_pair(int t, int64_t row_a, int64_t row_b, const Inputs& in,
                              const Outputs& out) {
  Scratch& sc = scratch_[t];
  const bool want_body_vel = out.body_linvel.valid() || out.body_angvel.valid();
  const bool want_vel = any_vel_sensor_ || want_body_vel;
  const bool fields = !sel_.model_fields.empty();
  const Vals va = fields ? row_vals(in, row_a) : template_vals_;
  const Vals vb = fields ? row_vals(in, row_b) : template_vals_;
  const Row2 qpos{in.qpos.row(row_a), in.qpos.row(row_b)};
  const Row2 qvel{in.qvel.row(row_a), in.qvel.row(row_b)};
  const Row2 mpos{row_or_null(in.mocap_pos, row_a), row_or_null(in.mocap_pos, row_b)};
  const Row2 mquat{row_or_null(in.mocap_quat, row_a), row_or_null(in.mocap_quat, row_b)};
  if (kin_fields_) {
    // Each lane reads its own row's values. Measured on the quadruped
    // tracking refresh with body_pos, body_quat, jnt_axis per row: see
    // pairs() in fast_engine.h for why pairs stay on.
    const FieldKin<Row2> kv{{{va.f[kBodyPos], vb.f[kBodyPos]},
                             {va.f[kBodyQuat], vb.f[kBodyQuat]},
                             {va.f[kJntPos], vb.f[kJntPos]},
                             {va.f[kJntAxis], vb.f[kJntAxis]}}};
    kinematics(sc.states2.data(), sc.anchors2.data(), sc.halfangle2.data(), qpos, qvel, mpos,
               mquat, kv, want_vel, want_body_vel);
  } else {
    kinematics(sc.states2.data(), sc.anchors2.data(), sc.halfangle2.data(), qpos, qvel, mpos,
               mquat, TemplateKin{}, want_vel, want_body_vel);
  }
  if (out.sensordata.valid()) {
    const int64_t a = row_a * out.sensordata.row_stride, b = row_b * out.sensordata.row_stride;
    if (out.sensordata.type == OutType::kFloat64) {
      double* d = static_cast<double*>(out.sensordata.data);
      write_fixed_pair(sc.states2.data(), d + a, d + b);
    } else {
      float* d = static_cast<float*>(out.sensordata.data);
      write_fixed_pair(sc.states2.data(), d + a, d + b);
    }
  }
  // Everything else reads one row's scalar States: split the lanes, unless
  // nothing else is written (a sensors-only tracking selection).
  const bool generic = out.sensordata.valid() &&
                       (!sensors_.empty() || any_clip(va) || any_clip(vb));
  const bool bodies = !body_slots_.empty() &&
                      (out.body_pos.valid() || out.body_quat.valid() || want_body_vel ||
                       out.body_pos_rel.valid() || out.body_quat_rel.valid());
  const bool sites = !sites_.empty() && (out.site_pos.valid() || out.site_mat.valid());
  if (!generic && !bodies && !sites) return;
  constexpr int kFields = sizeof(State) / sizeof(double);
  const int nslot = static_cast<int>(bodies_.size());
  for (int s = 1; s < nslot; ++s) {
    const V2* v = reinterpret_cast<const V2*>(&sc.states2[s]);
    double* a = reinterpret_cast<double*>(&sc.states[s]);
    double* b = reinterpret_cast<double*>(&sc.states_b[s]);
    for (int k = 0; k < kFields; ++k) {
      a[k] = v[k][0];
      b[k] = v[k][1];
    }
  }
  emit(sc, sc.states.data(), row_a, in, va, out, false);
  emit(sc, sc.states_b.data(), row_b, in, vb, out, false);
}

// Whether this row's sensor_cutoff clips a gathered sensor.
bool FastEngine::any_clip(const Vals& v) const {
  const double* cutoffs = v.f[kSensorCutoff];
  for (const Sensor& s : clips_) {
    if (cutoffs[s.id] > 0) return true;
  }
  return false;
}

// Writes the selected outputs of one row from its visited bodies' states.
void FastEngine::emit(Scratch& sc, const State* st, int64_t row, const Inputs& in,
                      const Vals& v, const Outputs& out, bool fixed) const {
  // Sensors, written straight into the caller's row.
  if (out.sensordata.valid()) {
    const int64_t base = row * out.sensordata.row_stride;
    if (out.sensordata.type == OutType::kFloat64) {
      write_sensors(sc, st, in, row, v, static_cast<double*>(out.sensordata.data) + base,
                    fixed);
    } else {
      write_sensors(sc, st, in, row, v, static_cast<float*>(out.sensordata.data) + base, fixed);
    }
  }

  // Body and site outputs.
  for (int64_t k = 0; k < static_cast<int64_t>(body_slots_.size()); ++k) {
    const State& x = st[body_slots_[k]];
    if (out.body_pos.valid()) store_item(out.body_pos, row, k, x.pos);
    if (out.body_quat.valid()) store_item(out.body_quat, row, k, x.quat);
    if (out.body_angvel.valid()) store_item(out.body_angvel, row, k, x.w);
    if (out.body_linvel.valid()) store_item(out.body_linvel, row, k, x.v);
    if (rel_slot_ >= 0) {
      const State& r = st[rel_slot_];
      if (out.body_pos_rel.valid()) {
        double d[3], pos[3];
        sub3(d, x.pos, r.pos);
        mat_t_vec(pos, r.mat, d);
        store_item(out.body_pos_rel, row, k, pos);
      }
      if (out.body_quat_rel.valid()) {
        double rq[4], q[4];
        neg_quat(rq, r.quat);
        mul_quat(q, rq, x.quat);
        store_item(out.body_quat_rel, row, k, q);
      }
    }
  }
  if (out.site_pos.valid() || out.site_mat.valid()) {
    for (int64_t k = 0; k < static_cast<int64_t>(sites_.size()); ++k) {
      double pos[3], mat[9];
      frame_pose(st, sites_[k], v, pos, mat);
      if (out.site_pos.valid()) store_item(out.site_pos, row, k, pos);
      if (out.site_mat.valid()) store_item(out.site_mat, row, k, mat);
    }
  }
}

}  // namespace mjrefresh
