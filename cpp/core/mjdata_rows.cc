#include "core/mjdata_rows.h"

#include <cstring>

namespace mjrefresh {

MjDataRows::MjDataRows(mjData* const* datas, int64_t n, bool mocap)
    : n_(n), mocap_(mocap), tables_(kNumFields * n, nullptr) {
  for (int64_t r = 0; r < n; ++r) {
    mjData* d = datas[r];
    double* const fields[kNumFields] = {
        d->qpos,
        d->qvel,
        mocap ? d->mocap_pos : nullptr,
        mocap ? d->mocap_quat : nullptr,
        &d->time,
        d->sensordata,
        d->xpos,
        d->xquat,
        d->site_xpos,
        d->site_xmat,
    };
    for (int f = 0; f < kNumFields; ++f) tables_[f * n_ + r] = fields[f];
  }
}

Inputs MjDataRows::inputs(int64_t nq, int64_t nv, int64_t nmocap, bool time) const {
  Inputs in;
  in.qpos = {nullptr, n_, nq, 0, table(kQpos)};
  in.qvel = {nullptr, n_, nv, 0, table(kQvel)};
  if (mocap_) {
    in.mocap_pos = {nullptr, n_, 3 * nmocap, 0, table(kMocapPos)};
    in.mocap_quat = {nullptr, n_, 4 * nmocap, 0, table(kMocapQuat)};
  }
  if (time) in.time = {nullptr, n_, 1, 0, table(kTime)};
  return in;
}

OutMatrix MjDataRows::sensordata(int64_t nsensordata) const {
  OutMatrix m;
  m.type = OutType::kFloat64;
  m.rows = n_;
  m.cols = nsensordata;
  m.table = reinterpret_cast<void* const*>(table(kSensordata));
  return m;
}

namespace {

// dst[ids[k]*w .. +w) = item k of the row, for every selected id.
void copy_items(const OutItems& o, int64_t row, const std::vector<int>& ids, double* dst) {
  if (!o.valid()) return;
  const int64_t w = o.width;
  const double* src = static_cast<const double*>(o.data) + row * o.row_stride;
  for (size_t k = 0; k < ids.size(); ++k) {
    std::memcpy(dst + ids[k] * w, src + static_cast<int64_t>(k) * o.item_stride,
                w * sizeof(double));
  }
}

}  // namespace

void MjDataMirror::copy(int64_t row) const {
  if (arrays_.sensordata.valid()) {
    const double* src = rows_.table(MjDataRows::kSensordata)[row];
    void* dst = arrays_.sensordata.row_base(row);
    for (const auto& [start, stop] : sel_.columns) {
      store_stream(dst, OutType::kFloat64, start, src + start, stop - start);
    }
  }
  if (!poses_) return;
  copy_items(arrays_.body_pos, row, sel_.bodies, rows_.table(MjDataRows::kXpos)[row]);
  copy_items(arrays_.body_quat, row, sel_.bodies, rows_.table(MjDataRows::kXquat)[row]);
  copy_items(arrays_.site_pos, row, sel_.sites, rows_.table(MjDataRows::kSiteXpos)[row]);
  copy_items(arrays_.site_mat, row, sel_.sites, rows_.table(MjDataRows::kSiteXmat)[row]);
}

void MjDataMirror::prefetch(int64_t row) const {
#if defined(__GNUC__)
  // One line per region is enough to start the page walks; the lines after
  // it follow sequentially.
  __builtin_prefetch(rows_.table(MjDataRows::kQpos)[row]);
  __builtin_prefetch(rows_.table(MjDataRows::kQvel)[row]);
  if (arrays_.sensordata.valid() && !sel_.columns.empty()) {
    __builtin_prefetch(rows_.table(MjDataRows::kSensordata)[row] + sel_.columns[0].first, 1);
  }
  if (poses_ && !sel_.bodies.empty()) {
    const int b = sel_.bodies[0];
    if (arrays_.body_pos.valid()) {
      __builtin_prefetch(rows_.table(MjDataRows::kXpos)[row] + 3 * b, 1);
    }
    if (arrays_.body_quat.valid()) {
      __builtin_prefetch(rows_.table(MjDataRows::kXquat)[row] + 4 * b, 1);
    }
  }
  if (poses_ && arrays_.site_pos.valid() && !sel_.sites.empty()) {
    __builtin_prefetch(rows_.table(MjDataRows::kSiteXpos)[row] + 3 * sel_.sites[0], 1);
  }
#else
  (void)row;
#endif
}

}  // namespace mjrefresh
