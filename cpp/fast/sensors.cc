#include <algorithm>
#include <cstring>
#include <string>

#include "fast/fast_engine.h"
#include "fast/fast_kernels.h"

namespace mjrefresh {

using namespace fast;

// xipos/ximat as mj_local2Global computes them from body_ipos/iquat.
void FastEngine::inertial_pose(const State* st, int slot, const Vals& v, double pos[3],
                               double mat[9]) const {
  const Body& b = bodies_[slot];
  const State& x = st[slot];
  if (slot == 0) {
    copy3(pos, x.pos);
    if (mat) std::memcpy(mat, x.mat, sizeof(double) * 9);
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

// World position and rotation matrix of a frame (geom_xpos/site_xpos, ...);
// mat may be null when only the position is needed (framepos, the object of
// framelinvel/frameangvel): the rotation is then not computed.
void FastEngine::frame_pose(const State* st, const Frame& f, const Vals& v, double pos[3],
                            double mat[9]) const {
  const State& x = st[f.slot];
  switch (f.kind) {
    case Frame::kXBody:
      copy3(pos, x.pos);
      if (mat) std::memcpy(mat, x.mat, sizeof(double) * 9);
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
      if (mat) std::memcpy(mat, x.mat, sizeof(double) * 9);
      return;
    case mjSAMEFRAME_INERTIA:
      inertial_pose(st, f.slot, v, pos, mat);
      return;
    case mjSAMEFRAME_BODYROT:
      mat_vec(pos, x.mat, fpos);
      add_to3(pos, x.pos);
      if (mat) std::memcpy(mat, x.mat, sizeof(double) * 9);
      return;
    case mjSAMEFRAME_INERTIAROT: {
      if (mat) {
        double ipos[3];
        inertial_pose(st, f.slot, v, ipos, mat);
      }
      mat_vec(pos, x.mat, fpos);
      add_to3(pos, x.pos);
      return;
    }
    default: {
      mat_vec(pos, x.mat, fpos);
      add_to3(pos, x.pos);
      if (!mat) return;
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

void FastEngine::frame_quat(const State* st, const Frame& f, const Vals& v, double quat[4]) const {
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

// A SiteFixed sensor for one row (T = double) or a pair (T = V2): the
// operations frame_pose/frame_quat/frame_motion and compute_sensor apply to
// a site with these sameframe values, on the template's offset.
template <class T>
void FastEngine::site_fixed(const StateT<T>* st, const SiteFixed& s, T vals[4]) const {
  const StateT<T>& x = st[s.slot];
  const bool body_rot = s.sameframe != mjSAMEFRAME_NONE;  // BODY or BODYROT
  if (s.type == mjSENS_FRAMEANGVEL) {
    copy3(vals, x.w);
    return;
  }
  if (s.type == mjSENS_FRAMEQUAT) {
    if (kQuatFollowsSameframe && body_rot) {
      copy4(vals, x.quat);
    } else {
      mul_quat(vals, x.quat, s.quat);
    }
    return;
  }
  T pos[3];
  if (s.sameframe == mjSAMEFRAME_BODY) {
    copy3(pos, x.pos);
  } else {
    mat_vec(pos, x.mat, s.pos);
    add_to3(pos, x.pos);
  }
  if (s.type == mjSENS_FRAMEPOS) {
    copy3(vals, pos);
    return;
  }
  T v[3];
  velocity_at(v, x.v, x.w, pos, x.pos);
  if (s.type == mjSENS_FRAMELINVEL) {
    copy3(vals, v);
    return;
  }
  T mat[9];
  if (body_rot) {
    for (int k = 0; k < 9; ++k) mat[k] = x.mat[k];
  } else {
    T q[4];
    mul_quat(q, x.quat, s.quat);
    quat_mat(mat, q);
  }
  mat_t_vec(vals, mat, s.type == mjSENS_GYRO ? x.w : v);
}

template void FastEngine::site_fixed(const State*, const SiteFixed&, double*) const;
template void FastEngine::site_fixed(const StateT<V2>*, const SiteFixed&, V2*) const;
#ifdef MJREFRESH_FAST_AVX2
#pragma GCC push_options
#pragma GCC target("avx2")  // the quad pass's (AVX2 only), as in subtree.cc
template void FastEngine::site_fixed(const StateT<V4>*, const SiteFixed&, V4*) const;
#pragma GCC pop_options
#endif

// World pose of a frame and its 6-D velocity at its origin, world
// orientation (what mj_objectVelocity returns with flg_local=0).
void FastEngine::frame_motion(const State* st, const Frame& f, const Vals& vals, double pos[3],
                              double mat[9], double w[3], double v[3]) const {
  frame_pose(st, f, vals, pos, mat);
  const State& x = st[f.slot];
  copy3(w, x.w);
  if (f.kind == Frame::kXBody || bodies_[f.slot].still) {  // still: x.v = x.w = 0
    copy3(v, x.v);
    return;
  }
  velocity_at(v, x.v, x.w, pos, x.pos);
}

void FastEngine::compute_sensor(const State* st, const Sensor& s, const Inputs& in, int64_t row,
                                const Vals& mv, double* vals) const {
  switch (s.type) {
    case mjSENS_FRAMEPOS:
    case mjSENS_FRAMEXAXIS:
    case mjSENS_FRAMEYAXIS:
    case mjSENS_FRAMEZAXIS: {
      double pos[3], mat[9];
      frame_pose(st, s.obj, mv, pos, s.type == mjSENS_FRAMEPOS ? nullptr : mat);
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
        pos_in_frame(vals, pos, rpos, rmat);
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
      quat_in_frame(vals, q, rq);
      return;
    }
    case mjSENS_FRAMELINVEL:
    case mjSENS_FRAMEANGVEL: {
      double pos[3], w[3], v[3];
      frame_motion(st, s.obj, mv, pos, nullptr, w, v);  // the object's rotation is not read
      if (s.has_ref) {
        double rpos[3], rmat[9], rw[3], rv[3];
        frame_motion(st, s.ref, mv, rpos, rmat, rw, rv);
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
      frame_motion(st, s.obj, mv, pos, mat, w, v);
      if (bodies_[s.obj.slot].still) {  // zeros even where mat is not finite
        vals[0] = vals[1] = vals[2] = 0.0;
        return;
      }
      mat_t_vec(vals, mat, s.type == mjSENS_VELOCIMETER ? v : w);
      return;
    }
    case mjSENS_JOINTPOS:
      vals[0] = in[kInQpos].row(row)[s.qadr];
      return;
    case mjSENS_JOINTVEL:
      vals[0] = in[kInQvel].row(row)[s.dadr];
      return;
    case mjSENS_BALLQUAT:
      // mj_kinematics normalises the quaternions of qpos in place first.
      copy4(vals, in[kInQpos].row(row) + s.qadr);
      normalize4(vals);
      return;
    case mjSENS_BALLANGVEL:
      copy3(vals, in[kInQvel].row(row) + s.dadr);
      return;
    case mjSENS_CLOCK:
      vals[0] = in[kInTime].valid() ? *in[kInTime].row(row) : 0.0;
      return;
    case mjSENS_MAGNETOMETER: {
      // the world's magnetic field in the site's frame
      double pos[3], mat[9];
      frame_pose(st, s.obj, mv, pos, mat);
      mat_t_vec(vals, mat, model_->opt.magnetic);
      return;
    }
    case mjSENS_TENDONPOS:
    case mjSENS_TENDONVEL:
    case mjSENS_ACTUATORPOS:
    case mjSENS_ACTUATORVEL:
      vals[0] = joint_space(s, in[kInQpos].row(row), in[kInQvel].row(row));
      return;
    default:  // subtree sensors: subtree_sensor
      break;
  }
}

namespace {

// Lower-case mjtObj name ("camera"), as Python's mjtObj(t).name would give.
std::string object_type_name(int type) {
  const char* name = mju_type2Str(type);
  return name ? name : "unknown";
}

constexpr const char* kFrames = "xbody, body, geom, site and fixed-camera frames";

// Frames the engine computes: bodies, geoms, sites and cameras that move
// rigidly with their body (mjCAMLIGHT_FIXED; the other modes track targets
// or subtree CoMs in mj_camlight).
bool frame_type_ok(const mjModel* m, int objtype, int objid) {
  if (objtype == mjOBJ_CAMERA) return m->cam_mode[objid] == mjCAMLIGHT_FIXED;
  return objtype == mjOBJ_XBODY || objtype == mjOBJ_BODY || objtype == mjOBJ_GEOM ||
         objtype == mjOBJ_SITE;
}

// Why a frame is not covered: its type, or the mode of a camera.
std::string frame_problem(const mjModel* m, int objtype, int objid) {
  if (objtype == mjOBJ_CAMERA) {
    return "camera in mode " + std::to_string(m->cam_mode[objid]) + " (not 'fixed')";
  }
  return object_type_name(objtype);
}

}  // namespace

// The sensor types this engine computes (the cases of compute_sensor above
// and of the planner), and what each must be attached to.
std::string sensor_type_problem(const mjModel* m, int i) {
  switch (m->sensor_type[i]) {
    case mjSENS_FRAMEPOS:
    case mjSENS_FRAMEQUAT:
    case mjSENS_FRAMEXAXIS:
    case mjSENS_FRAMEYAXIS:
    case mjSENS_FRAMEZAXIS:
    case mjSENS_FRAMELINVEL:
    case mjSENS_FRAMEANGVEL:
      if (!frame_type_ok(m, m->sensor_objtype[i], m->sensor_objid[i])) {
        return ": attached to a " + frame_problem(m, m->sensor_objtype[i], m->sensor_objid[i]) +
               "; the fast engine covers " + kFrames;
      }
      if (m->sensor_refid[i] >= 0 && !frame_type_ok(m, m->sensor_reftype[i], m->sensor_refid[i])) {
        return ": reference frame is a " +
               frame_problem(m, m->sensor_reftype[i], m->sensor_refid[i]) +
               "; the fast engine covers " + kFrames;
      }
      break;
    case mjSENS_TENDONPOS:
    case mjSENS_TENDONVEL:
      if (!fixed_tendon(m, m->sensor_objid[i])) {
        return ": spatial tendon; the fast engine covers fixed (joint) tendons";
      }
      break;
    case mjSENS_ACTUATORPOS:
    case mjSENS_ACTUATORVEL: {
      if (m->opt.disableflags & mjDSBL_ACTUATION) {
        return ": the model disables actuation (mjDSBL_ACTUATION), which zeroes actuator "
               "velocities in mj_forward; the exact engine reproduces that";
      }
      const std::string why = transmission_problem(m, m->sensor_objid[i]);
      if (!why.empty()) return ": " + why;
      break;
    }
    case mjSENS_VELOCIMETER:
    case mjSENS_GYRO:
    case mjSENS_JOINTPOS:
    case mjSENS_JOINTVEL:
    case mjSENS_BALLQUAT:
    case mjSENS_BALLANGVEL:
    case mjSENS_SUBTREECOM:
    case mjSENS_SUBTREELINVEL:
    case mjSENS_SUBTREEANGMOM:
    case mjSENS_MAGNETOMETER:
    case mjSENS_CLOCK:
      break;
    default:
      return ": sensor type not covered by the fast engine";
  }
  return {};
}

}  // namespace mjrefresh
