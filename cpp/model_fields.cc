#include "model_fields.h"

namespace mjrefresh {

double* field_data(mjModel* m, int field) {
  switch (field) {
    case kBodyPos: return m->body_pos;
    case kBodyQuat: return m->body_quat;
    case kBodyIpos: return m->body_ipos;
    case kBodyIquat: return m->body_iquat;
    case kBodyMass: return m->body_mass;
    case kBodyInertia: return m->body_inertia;
    case kJntPos: return m->jnt_pos;
    case kJntAxis: return m->jnt_axis;
    case kSitePos: return m->site_pos;
    case kSiteQuat: return m->site_quat;
    case kGeomPos: return m->geom_pos;
    case kGeomQuat: return m->geom_quat;
    case kSensorCutoff: return m->sensor_cutoff;
    default: return nullptr;
  }
}

const double* field_data(const mjModel* m, int field) {
  return field_data(const_cast<mjModel*>(m), field);
}

int64_t field_size(const mjModel* m, int field) {
  switch (field) {
    case kBodyPos: case kBodyIpos: case kBodyInertia: return 3 * int64_t{m->nbody};
    case kBodyQuat: case kBodyIquat: return 4 * int64_t{m->nbody};
    case kBodyMass: return m->nbody;
    case kJntPos: case kJntAxis: return 3 * int64_t{m->njnt};
    case kSitePos: return 3 * int64_t{m->nsite};
    case kSiteQuat: return 4 * int64_t{m->nsite};
    case kGeomPos: return 3 * int64_t{m->ngeom};
    case kGeomQuat: return 4 * int64_t{m->ngeom};
    case kSensorCutoff: return m->nsensor;
    default: return 0;
  }
}

void recompute_subtree_mass(mjModel* m) {
  // Same accumulation as mj_setConst: own mass, then children into parents
  // in decreasing body id (children always have larger ids than parents).
  for (int b = 0; b < m->nbody; ++b) m->body_subtreemass[b] = m->body_mass[b];
  for (int b = m->nbody - 1; b > 0; --b) {
    m->body_subtreemass[m->body_parentid[b]] += m->body_subtreemass[b];
  }
}

}  // namespace mjrefresh
