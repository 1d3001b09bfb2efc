// Fast engine: fused, selective kinematics. Per row it computes the world
// pose and velocity of only the bodies the selected outputs hang on (and
// their ancestors), straight from qpos/qvel/mocap, and derives the selected
// outputs from those. No MuJoCo stage function runs.
//
// Contract
// - Coverage: the constructor accepts body_*/body_*_rel/site_* outputs and
//   the sensors framepos, framequat, frame[xyz]axis, framelinvel,
//   frameangvel (object and reference of type xbody, body, geom, site or a
//   camera in mode fixed: mj_camlight's local2Global of cam_pos/cam_quat),
//   velocimeter, gyro, magnetometer, jointpos, jointvel, ballquat,
//   ballangvel, subtreecom, subtreelinvel, subtreeangmom, clock,
//   tendonpos/tendonvel of fixed tendons and actuatorpos/actuatorvel of
//   single-output joint, jointinparent and fixed-tendon transmissions, on a
//   model without mjDSBL_SENSOR. Anything else (spatial tendons, site/slider-crank/body/
//   SO(3) transmissions, rangefinder, camprojection, tracking cameras, ...)
//   throws std::invalid_argument naming the sensor (fast_uncovered,
//   coverage.cc); the Python planner calls the same function
//   (_core.fast_uncovered) and routes such selections to the exact engine.
// - Files (one class, its members by file): fast_engine.cc (refresh_row,
//   refresh_pair, the per-row values), plan.cc (visit planning,
//   constructor), kinematics.h (pose and velocity pass, header-only so it
//   inlines into fast_engine.cc's refresh_row/refresh_pair; lanes.h, how
//   it reads rows into lanes), sensors.cc (frame sensor maths), subtree.cc
//   (subtree CoM, velocity and momentum: every body of the subtree is
//   visited, with velocities for the momenta), joint_space.cc (tendon and
//   actuator sensors: qpos/qvel only, no body visited), emit.cc (output
//   writing; emit_pair.h: a pair's fixed writes, inlined into the pair
//   pass), coverage.cc (what the engine computes), kernel_isa.h (the pair
//   pass's baseline and AVX2 builds: the same bits; kernels_avx2.h, its
//   four-lane sin_cos).
// - Values: what mj_forward would put in the same fields, to rounding:
//   poses use MuJoCo's own expressions in MuJoCo's order (see
//   fast_kernels.h), except that sin/cos of hinge angles come from an
//   inlined kernel within ~2 ulp of libm's; velocities are the same sums of
//   cdof*qvel but taken at the body origin instead of the subtree CoM.
//   Observed differences from mj_forward are a few 1e-15 (tests bound them
//   by 1e-12 for poses and 1e-10 for velocities and momenta). Subtree,
//   tendon and actuator sums follow MuJoCo's order of summation (a body's
//   own angular momentum is R_b I_b R_b^T w with its body-frame inertia
//   I_b, where MuJoCo rotates by the inertial frame's matrix; tendon
//   and actuator velocities are the moment row times qvel in increasing
//   dof order; ball/free joint transmissions call mju_quat2Vel and
//   friends). MuJoCo's sensor cutoff
//   is applied per datatype. Frame quaternions of geoms, sites and
//   inertial frames follow the get_xquat of the MuJoCo built against (4.0
//   follows sameframe, 3.11 does not). Quaternions in qpos/mocap_quat are
//   normalised on a private copy (the inputs are never written).
// - Model: the structure a row needs (visited bodies, joints, frames, sensor
//   addresses) is planned in the constructor, with the template's values
//   the pose pass reads (body_pos/quat, jnt_pos/axis) copied next to it;
//   the other values are read from a private copy of the model (also kept
//   for model()).
// - Per-row model fields (Selection::model_fields): a row's values replace
//   the template's for exactly the declared fields, as mj_forward sees them
//   on a copy of the model holding those values; compiler-derived flags
//   (body/geom/site sameframe, ...) stay the template's, as MuJoCo's own
//   functions keep them. No copy per row: the kernels read each value
//   through a pointer to the template's array or to the row's block (Vals;
//   blocks are indexed like the mjModel field). The exact-value shortcuts
//   of the planner (zero body offset, unit body rotation, centered joint,
//   coordinate hinge axis) are off for what a declared field can change,
//   so rows holding the template's values give the template's results bit
//   for bit (the full formulas give the shortcuts' bits for finite input);
//   with a per-row sensor_cutoff, sensors written by the gathered copies
//   are written again, clipped, in rows whose cutoff for them is > 0.
//   body_inertia feeds subtreeangmom only; body_mass feeds the subtree
//   sensors, which sum the row's masses themselves in mj_setConst's order
//   (so body_subtreemass follows body_mass as in the exact engine, and
//   equals the template's bit for bit on template values).
// - Cost of fields (quadruped tracking refresh, body_pos + body_quat +
//   jnt_axis per row, N=4096, 1 and 2 threads, 2-vCPU AMD EPYC VM;
//   re-measure: python -m bench.research.model_fields --threads 1 2):
//   with rows in pairs 1.20-1.26x the refresh without fields, made of the
//   arithmetic of non-identity values (a model holding one row's values:
//   1.02-1.06x), reading them through the row's blocks (the same values for
//   every row: 1.03-1.06x more) and bringing ~1.1 KB of values per row in
//   from memory (1.12-1.16x more; prefetching them 4-16 rows ahead did not
//   help). With rows in quads (AVX2) both got faster, the refresh without
//   fields more (it runs at its memory floor): 1.4-2.1x it. A per-row
//   sensor_cutoff adds the test of each gathered sensor's cutoff (+14%
//   when no row sets one) and a split of each pair into rows where one
//   does (2.5x with cutoffs set on half the sensors of every row).
// - Scratch: one block of per-body state per pool participant; participant t
//   only touches block t. Nothing carries over between rows: every visited
//   value is recomputed for every row.
// - Errors: refresh_row() never throws and never fails (returns true); NaN
//   or Inf inputs give NaN/Inf outputs, not a crash. Known differences from
//   mj_forward on non-finite input (audited; matching them would cost the
//   finite path): MuJoCo spreads a NaN over a whole tree's velocities (it
//   works at the tree's subtree CoM), this engine only over the affected
//   chain; coordinate-axis hinge shortcuts may leave some quaternion
//   components finite; an infinite position may become NaN.
// - Pairs and quads: refresh_pair(t, a, b) runs the pose/velocity pass for
//   rows a and b in the two lanes of SSE2 registers (same operations per
//   lane, so each row gets the values refresh_row gives it), writes their
//   fixed outputs from the lanes and the rest row by row; about 1.3x the
//   throughput of two refresh_row calls (see pairs()). Where the AVX2 build
//   runs (kernel_isa.h), refresh_quad does the same for four rows in the
//   four lanes of AVX2 registers (lanes_pass<4>, the same template). With
//   per-row fields that the pose pass reads, each lane reads its own row's
//   values (L-lane parameters), so pairs and quads stay on.
// - Threading: refresh_row/refresh_pair/refresh_quad(t, ...) may run
//   concurrently for distinct t.
#pragma once

#include <mujoco/mujoco.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "core/row_engine.h"
#include "core/selection.h"
#include "fast/fast_kernels.h"
#include "fast/kernel_isa.h"

namespace mjrefresh {

// Storage of V4 lanes, 32-byte aligned: the AVX2 code moves them with
// aligned loads and stores, while std::allocator aligns them to 16 only
// (alignof a 32-byte vector is 16 in code built for the baseline x86-64).
template <class T>
struct Align32 {
  using value_type = T;
  Align32() = default;
  template <class U>
  Align32(const Align32<U>& /*other*/) {}
  T* allocate(std::size_t n) {
    return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{32}));
  }
  void deallocate(T* p, std::size_t /*n*/) { ::operator delete(p, std::align_val_t{32}); }
  friend bool operator==(const Align32& /*a*/, const Align32& /*b*/) { return true; }
};
template <class T>
using Vec32 = std::vector<T, Align32<T>>;

// Empty if the fast engine computes every sensor in `sensors` on `m`;
// otherwise why not, naming the first uncovered sensor (the planner shows
// this text as the engine reason; tests pin parts of it).
std::string fast_uncovered(const mjModel* m, const std::vector<int>& sensors);
// The per-sensor half of fast_uncovered (sensors.cc, next to the code that
// computes each type): "" if the engine computes sensor i, else why not
// (": ..." to follow the sensor's label).
std::string sensor_type_problem(const mjModel* m, int i);
// Whether `tendon` is a fixed (joint) tendon.
bool fixed_tendon(const mjModel* m, int tendon);
// Empty if the engine computes the length and velocity of `actuator`'s
// transmission (joint, jointinparent, fixed tendon); otherwise why not.
std::string transmission_problem(const mjModel* m, int actuator);

class FastEngine final : public RowEngine {
 public:
  FastEngine(const mjModel* model, Selection selection, int num_scratch);
  ~FastEngine() override;
  FastEngine(const FastEngine&) = delete;
  FastEngine& operator=(const FastEngine&) = delete;

  const mjModel* model() const override { return model_; }
  const Selection& selection() const override { return sel_; }
  bool refresh_row(int t, int64_t row, const Inputs& in, const Outputs& out, char* message,
                   std::size_t message_size) override;
  // Two rows at once: the pose/velocity pass runs on both rows in the two
  // lanes of SSE2 registers (same operations per lane as refresh_row), the
  // outputs are then written row by row. Never fails. Also with per-row
  // fields the pose pass reads: each lane then reads its own row's values.
  // Measured on the quadruped tracking refresh with body_pos, body_quat and
  // jnt_axis per row (N=4096, 1 thread, 2-vCPU AMD EPYC VM): 0.41 us/row
  // in per-lane pairs against 0.66 us/row row by row (no fields: 0.35
  // us/row); re-measure: python -m bench.research.model_fields --threads 1,
  // once with pairs() false.
  bool pairs() const override { return true; }
  // Measured on the quadruped tracking refresh (2-vCPU AMD EPYC VM, ~0.3
  // us/row): 256 rows on 2 threads ran at 0.97x of 1 thread, 512 rows at
  // 1.26x (re-measure: python -m bench.micro --contenders mjrefresh_fast
  // --n 256 512 --threads 1 2).
  int64_t min_rows_per_thread() const override { return 256; }
  int64_t memory_bytes() const override;
  int64_t participant_bytes() const override;
  void refresh_pair(int t, int64_t row_a, int64_t row_b, const Inputs& in,
                    const Outputs& out) override;
  // Four rows at once in the four lanes of AVX2 registers, where the AVX2
  // build runs (kernel_isa.h): the pair pass's operations per lane.
  bool quads() const override { return avx2_; }
  // Starts the loads of a row's per-row model field blocks (the refresher
  // calls it for the next quad's rows). Quadruped tracking refresh with
  // body_pos, body_quat, jnt_axis per row (~1.1 KB), N=4096, 2-vCPU AMD
  // EPYC VM, in one process against the same engine without it: 0.91x at 1
  // thread, 1.0x at 2 (with rows in pairs it did not help: 0.97-1.00x).
  // Only with per-row fields: without them the call per row was +1.9%
  // instructions on the tracking refresh (callgrind, 1024 rows).
  bool prefetches() const override { return !sel_.model_fields.empty(); }
  void prefetch(const Inputs& in, int64_t row) const override;
  void refresh_quad(int t, const int64_t rows[4], const Inputs& in, const Outputs& out) override;

  // A frame rigidly attached to a visited body: what sensors and sites read.
  struct Frame {
    enum Kind { kXBody, kInertial, kLocal };  // body frame, inertial frame, geom/site
    int slot = 0;                             // visited body (0: world)
    Kind kind = kXBody;
    int sameframe = 0;  // mjtSameFrame of the geom/site
    // kLocal: offset = (pos_field, quat_field) item `id` (geom or site)
    int id = 0, pos_field = kSitePos, quat_field = kSiteQuat;
  };

  // Where a row's model values live: per ModelField, the template's array
  // (in model_) or the row's block of the caller's field array. Arrays are
  // indexed like the mjModel field (body id, joint id, ...). Two more
  // entries after the ModelFields hold values that are never per row
  // (cam_pos, cam_quat: camera frames are kLocal frames reading them).
  static constexpr int kCamPos = kNumModelFields, kCamQuat = kNumModelFields + 1;
  struct Vals {
    const double* f[kNumModelFields + 2];
  };
  // One term of a joint-space sum: coef * qpos[adr] or coef * qvel[adr].
  struct Term {
    int adr;
    double coef;
  };
  // The values the pose pass reads (body_pos/quat, jnt_pos/axis), from the
  // rows' field blocks: one row (A = const double*) or two rows in lanes (A =
  // a two-row reader). The template's values are read from Body/Joint
  // instead (TemplateKin in kinematics.h), which keeps the no-fields pass
  // as fast as before fields existed.
  template <class A>
  struct KinVals {
    A body_pos, body_quat, jnt_pos, jnt_axis;
  };

 private:
  // Shortcut flags are decided on the template's values and are false when a
  // declared model field can change what they test.
  struct Joint {
    int id, type, qadr, dadr;
    bool centered;   // jnt_pos == 0: the off-center correction is exactly zero
    int unit_axis;   // hinge about +x/+y/+z (0/1/2): cheaper rotation; -1 otherwise
    bool at_origin;  // the anchor is exactly the body's final origin: no linear term
    // Hinge whose world axis the velocity pass takes from the body's final
    // rotation (column unit_axis of xmat, or xmat * axis) instead of
    // rotating the axis by the pre-joint quaternion (see add_joints).
    bool axis_from_mat = false;
    double pos[3], axis[3], qpos0;  // template jnt_pos, jnt_axis
  };
  struct Body {
    enum Kind { kWorld, kFree, kMocap, kJoints };
    int id = 0, parent = 0;  // parent: slot of the parent body
    Kind kind = kWorld;
    int mocap = -1, qadr = 0, dadr = 0;        // kMocap: mocap id; kFree: joint addresses
    int jnt_begin = 0, jnt_end = 0;            // kJoints: range in joints_
    bool zero_pos = false, unit_quat = false;  // body_pos == 0, body_quat == 1
    bool vel_sensor = false;                   // velocity needed by a sensor
    bool vel_body = false;                     // velocity needed by the body velocity outputs
    // Weld root without dofs (world, static or mocap): mj_objectVelocity
    // returns exact zeros for anything on it, before reading its pose, so
    // velocities are 0 even for a non-finite pose (3.11 tests
    // body_weldid == 0, >= 3.12 body_dofnum[body_weldid] == 0: the same set).
    bool still = true;
    // kJoints with exactly one centered hinge about +x/+y/+z whose axis is
    // read from xmat (Joint::axis_from_mat): the common robot link, posed
    // and moved without the joint loop (0/1/2, -1 otherwise).
    int hinge_axis = -1;
    bool axes_from_mat = false;  // otherwise, a joint with Joint::axis_from_mat
    // kJoints with a rotational joint: mj_kinematics's per-joint position
    // correction makes a non-finite rotation's position NaN (kinematics.h).
    bool rotates = false;
    int isameframe = 0;                                 // body_sameframe (inertial frame)
    double pos[3] = {0, 0, 0}, quat[4] = {1, 0, 0, 0};  // template body_pos/body_quat
  };
  // Per-row state of one visited body (T = V2: two rows, one per lane).
  template <class T>
  struct StateT {
    T pos[3], quat[4], mat[9], w[3], v[3];
  };
  using State = StateT<double>;
  struct Sensor {
    // kCopy: the value is `dim` doubles of one visited body's State (world
    // frame sensors on an xbody); kPosRel/kQuatRel: xbody framepos/framequat
    // relative to an xbody; kGeneric: everything else (compute_sensor).
    enum Op { kGeneric, kCopy, kPosRel, kQuatRel };
    Op op = kGeneric;
    int src = 0;  // kCopy: offset in doubles from the States array
    int id = 0, type = 0, adr = 0, dim = 0, datatype = 0;
    Frame obj, ref;
    bool has_ref = false;
    int qadr = 0, dadr = 0;  // joint sensors
    int subtree = -1;        // subtreecom/linvel/angmom: index into subtrees_
    // tendonpos/vel, actuatorpos/vel (joint_space.cc): length = scale *
    // sum(pos_terms), velocity = sum(vel_terms); ball/free joint
    // transmissions use gear (and qadr/dadr) instead.
    enum Trn { kLinear, kBall, kFree };
    Trn trn = kLinear;
    bool inparent = false;  // mjTRN_JOINTINPARENT
    double scale = 1, gear[6] = {};
    std::vector<Term> pos_terms, vel_terms;
    std::vector<std::pair<int, int>> segments;  // (offset, count) of selected columns
  };
  struct Subtree {
    int root = 0;            // slot of the subtree root
    std::vector<int> slots;  // slots of the subtree, descending body id
  };
  struct SubtreeFixed {
    int col, subtree, type;  // sensordata column, index into subtrees_, sensor type
  };
  // World-frame site sensors (framepos/quat/linvel/angvel, gyro,
  // velocimeter) on the template's site offset, sameframe NONE, BODY or
  // BODYROT (no inertial frame), fully selected, without cutoff: computed
  // with the fixed writes, in the two lanes of a pair (site_fixed).
  struct SiteFixed {
    int col, slot, type, dim, sameframe;
    double pos[3], quat[4];  // template site_pos, site_quat
  };
  // Per slot of a subtree pass (subtree.cc): the body's inertial frame
  // position, velocity there, own and subtree mass, subtree CoM, linear
  // momentum (then subtree velocity) and angular momentum.
  struct Node {
    double xipos[3], vel[3], mass, subtree_mass, com[3], lin[3], ang[3];
  };
  // The same for the group pass on the template's masses (subtree_group),
  // one row (T = double) or a pair (T = V2).
  template <class T>
  struct GroupNode {
    T xipos[3], vel[3], com[3], lin[3], ang[3];
  };
  // A slot of the group pass, in descending body id.
  struct GroupSlot {
    int slot;
    bool top;  // its parent is not in the group: nothing is passed up
  };

  // Planning (plan.cc), in constructor order.
  struct Marks {
    std::vector<char> need, vel_sensor, vel_body;  // per body id
  };
  Marks mark_bodies(const mjModel* m);
  std::vector<int> plan_slots(const mjModel* m, const Marks& marks);
  void add_joints(const mjModel* m, Body& body, int jntadr, int jntnum);
  void plan_outputs(const mjModel* m, const std::vector<int>& slot_of);
  Sensor make_sensor(const mjModel* m, int i, const std::vector<int>& slot_of);
  void file_sensor(const mjModel* m, Sensor s);
  void init_scratch(int num_scratch);
  Frame make_frame(const mjModel* m, int objtype, int objid, const std::vector<int>& slot_of);
  struct Scratch;
  struct TemplateKin;
  template <class A>
  struct FieldKin;
  // Pose/velocity pass (kinematics.h) and the row entry points.
  Vals row_vals(const Inputs& in, int64_t row) const;
  template <class T, class R>
  bool half_angles(R qpos, T* half) const;
  template <class T, class R>
  auto half_angle(int j, R qpos, T* half) const;
#ifdef MJREFRESH_FAST_AVX2
  bool half_angles_avx2(const double* qpos_a, const double* qpos_b, fast::V2* half) const;
#endif
  template <class T, class R, class K>
  void kinematics(StateT<T>* st, T* anchors, const T* half, bool finite, R qpos, R qvel,
                  R mocap_pos, R mocap_quat, const K& kv, bool want_vel, bool want_body_vel) const;
  template <class T, class U>
  static auto unit_quat_lanes(const U q[4]);
  template <class T, class M, class K>
  void axes_from_mat(int s, const StateT<T>& x, T* anchors, const T* half, bool check_lanes,
                     M unit_q, const K& kv) const;
  template <class T, class R>
  void body_velocity(int s, StateT<T>* st, const T* anchors, const T* half, bool check_lanes,
                     R qvel) const;
  // Sensor maths (sensors.cc).
  void inertial_pose(const State* st, int slot, const Vals& v, double pos[3], double mat[9]) const;
  void frame_pose(const State* st, const Frame& f, const Vals& v, double pos[3],
                  double mat[9]) const;
  void frame_quat(const State* st, const Frame& f, const Vals& v, double quat[4]) const;
  void frame_motion(const State* st, const Frame& f, const Vals& vals, double pos[3], double mat[9],
                    double w[3], double v[3]) const;
  // Subtree sensors (subtree.cc).
  void subtree_pass(Scratch& sc, const State* st, const Subtree& tree, const Vals& v,
                    int type) const;
  void subtree_momenta(Node* nodes, const Subtree& tree, bool angular) const;
  void subtree_sensor(Scratch& sc, const State* st, const Sensor& s, const Vals& v,
                      double vals[3]) const;
  template <class T>
  void subtree_fixed(const StateT<T>* st, const SubtreeFixed& s, T* sums, T vals[3]) const;
  template <class T>
  void subtree_group(const StateT<T>* st, GroupNode<T>* nodes) const;
  void plan_subtree_group(const mjModel* m);
  template <class T>
  void site_fixed(const StateT<T>* st, const SiteFixed& s, T vals[4]) const;
  bool plan_site_fixed(const mjModel* m, const Sensor& s, bool whole_no_cutoff);
  // Tendon and actuator sensors (joint_space.cc).
  void plan_joint_space(const mjModel* m, Sensor& s);
  void joint_moment(const Sensor& s, const double* qpos, double moment[6], double* length) const;
  double joint_space(const Sensor& s, const double* qpos, const double* qvel) const;
  void compute_sensor(const State* st, const Sensor& s, const Inputs& in, int64_t row,
                      const Vals& v, double* vals) const;
  template <class T>
  void write_sensors(Scratch& sc, const State* st, const Inputs& in, int64_t row, const Vals& v,
                     T* dst, bool fixed) const;
  // Output writing (emit.cc).
  bool any_clip(const Vals& v) const;
  void emit(Scratch& sc, const State* st, int64_t row, const Inputs& in, const Vals& v,
            const Outputs& out, bool fixed) const;
  template <class T>
  void write_fixed(Scratch& sc, const State* st, T* dst) const;
  template <class T>
  void write_joint_copies(const Inputs& in, int64_t row, T* dst) const;
  template <class V, class T>
  void write_fixed_lanes(const StateT<V>* st, V* sums, GroupNode<V>* group, T* const* d) const;

  mjModel* model_ = nullptr;
  Selection sel_;
  bool declared_[kNumModelFields] = {};  // fields given per row
  Vals template_vals_{};                 // every field from model_
  bool kin_fields_ = false;              // a declared field is read by the pose pass
  std::vector<Body> bodies_;             // slot 0 is the world; parents before children
  std::vector<Joint> joints_;
  std::vector<Sensor> sensors_;  // sensors computed per row (all but gathered copies)
  // With per-row sensor_cutoff: the gathered REAL/POSITIVE sensors, written
  // again clipped in rows whose cutoff for them is > 0.
  std::vector<Sensor> clips_;
  // Sensors whose selected columns are a plain copy of 3 or 4 doubles of a
  // visited body's State (world frame xbody sensors without cutoff, fully
  // selected), in column order. One tight loop writes them all.
  struct Copy {
    int col, src;  // sensordata column, offset in doubles from the States array
  };
  std::vector<Copy> gather3_, gather4_;  // 3- and 4-column sensors
  // xbody framepos/framequat relative to an xbody, fully selected, no cutoff.
  struct Rel {
    int col, obj, ref;  // sensordata column, slots of object and reference
  };
  std::vector<Rel> pos_rel_, quat_rel_;
  // jointpos/jointvel without cutoff: a plain copy of one qpos/qvel value,
  // in column order (a generic sensor each costs a few times more).
  struct JointCopy {
    int col, adr;
  };
  std::vector<JointCopy> joint_pos_, joint_vel_;
  std::vector<Subtree> subtrees_;
  // subtreecom/subtreelinvel on the template's masses and inertial frames,
  // fully selected, without cutoff: computed with the fixed writes, in the
  // two lanes of a pair (subtree_fixed, subtree.cc).
  std::vector<SubtreeFixed> subtree_fixed_;
  // subtreeangmom on the template's masses, inertial frames and inertias,
  // fully selected, without cutoff: one pass over the union of their
  // subtrees (group_) per row or pair, in the fixed writes, each sensor
  // reading its root's node; mj_subtreeVel too gives every body its value
  // in one backward pass. Per body: one inertia rotation and a few cross
  // products (see subtree_group).
  std::vector<SubtreeFixed> angmom_fixed_;
  std::vector<GroupSlot> group_;
  // Per slot whose inertial frame is rotated from the body's (body_sameframe
  // NONE): the template's inertia in the body frame, R(iquat) diag(I) R^T,
  // row-major; other slots' entries are unused.
  std::vector<std::array<double, 9>> inertia_in_body_;
  std::vector<SiteFixed> site_fixed_;
  std::vector<int> body_slots_;  // slot of each selected body
  int rel_slot_ = -1;
  std::vector<Frame> sites_;
  bool any_vel_sensor_ = false;
  // Hinges (indices into joints_) whose half-angle sin/cos are computed up
  // front for a row: independent work the CPU overlaps, instead of a libm-
  // like latency on the pose chain of every body.
  std::vector<int> hinges_;
  // Per participant: nslot States, 6 doubles per joint (xanchor, xaxis),
  // 2 per joint (hinge cos/sin), a Node per slot for subtree sums.
  struct Scratch {
    std::vector<State> states;              // row (a)
    std::vector<State> lane_states[3];      // rows 2-4 of a pair or quad
    std::vector<StateT<fast::V2>> states2;  // a pair, lane by lane
    std::vector<fast::V2> anchors2, halfangle2;
    // a quad, lane by lane (only where the AVX2 build runs: avx2_)
    Vec32<StateT<fast::V4>> states4;
    Vec32<fast::V4> anchors4, halfangle4, sums4;
    Vec32<GroupNode<fast::V4>> group4;
    std::vector<double> anchors;
    std::vector<double> halfangle;            // cos, sin of half of each hinge angle
    std::vector<Node> nodes;                  // per slot, for subtree sensors
    std::vector<double> sums;                 // 3 per slot, for subtree_fixed (one row)
    std::vector<fast::V2> sums2;              // the same for a pair
    std::vector<GroupNode<double>> group;     // per slot, for subtree_group (one row)
    std::vector<GroupNode<fast::V2>> group2;  // the same for a pair
  };
  std::vector<Scratch> scratch_;
  // refresh_pair's body and its AVX2 build (fast/kernel_isa.h); avx2_ is
  // kernel_isa() == "avx2" when the engine was built.
  // The lane pass of L = 2 (pair) or 4 (quad, AVX2 only) rows.
  template <int L, bool Avx2>
  void lanes_pass(int t, const int64_t* rows, const Inputs& in, const Outputs& out);
#ifdef MJREFRESH_FAST_AVX2
  void refresh_pair_avx2(int t, int64_t row_a, int64_t row_b, const Inputs& in, const Outputs& out);
  void refresh_quad_avx2(int t, const int64_t rows[4], const Inputs& in, const Outputs& out);
#endif
  bool avx2_ = false;
};

}  // namespace mjrefresh
