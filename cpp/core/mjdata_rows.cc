#include "core/mjdata_rows.h"

#include <cstring>

namespace mjrefresh {

MjDataRows::MjDataRows(const mjModel* m, mjData* const* datas, int64_t n)
    : n_(n),
      nsensordata_(m->nsensordata),
      tables_(int64_t{kNumInputs + int{kNumOutputs}} * n, nullptr),
      datas_(datas, datas + n) {
  for (int i = 0; i < kNumInputs; ++i) input_size_[i] = input_size(m, i);
  for (int64_t r = 0; r < n; ++r) {
    mjData* d = datas[r];
    for (int i = 0; i < kNumInputs; ++i) {
      if (input_size_[i] > 0) tables_[i * n_ + r] = kInputs[i].in_mjdata(d);
    }
    for (int o = 0; o < kNumOutputs; ++o) {
      if (kOutputs[o].in_mjdata) tables_[(kNumInputs + o) * n_ + r] = kOutputs[o].in_mjdata(d);
    }
  }
}

Inputs MjDataRows::inputs(bool time) const {
  Inputs in;
  for (int i = 0; i < kNumInputs; ++i) {
    if (input_size_[i] == 0 || (i == kInTime && !time)) continue;
    in.in[i] = {nullptr, n_, input_size_[i], 0, input_table(i)};
  }
  return in;
}

OutView MjDataRows::sensordata() const {
  OutView v;
  v.type = OutType::kFloat64;
  v.rows = n_;
  v.items = nsensordata_;
  v.width = 1;
  v.item_stride = 1;
  v.table = reinterpret_cast<void* const*>(output_table(kOutSensordata));
  return v;
}

namespace {

// dst[ids[k]*w .. +w) = item k of the row, for every selected id.
void copy_items(const OutView& o, int64_t row, const std::vector<int>& ids, double* dst) {
  const int64_t w = o.width;
  const double* src = static_cast<const double*>(o.data) + row * o.row_stride;
  for (size_t k = 0; k < ids.size(); ++k) {
    std::memcpy(dst + ids[k] * w, src + static_cast<int64_t>(k) * o.item_stride,
                w * sizeof(double));
  }
}

// The selected ids an output's items stand for (bodies or sites).
const std::vector<int>& item_ids(const Selection& sel, int o) {
  return kOutputs[o].indexed_by == IndexedBy::kSites ? sel.sites : sel.bodies;
}

}  // namespace

void MjDataMirror::copy(int64_t row) const {
  const OutView& sensordata = arrays_[kOutSensordata];
  if (sensordata.valid()) {
    const double* src = rows_.output_table(kOutSensordata)[row];
    void* dst = sensordata.row_base(row);
    for (const auto& [start, stop] : sel_.columns) {
      store_stream(dst, OutType::kFloat64, start, src + start, stop - start);
    }
  }
  if (!poses_) return;
  for (int o = 0; o < kNumOutputs; ++o) {
    if (o == kOutSensordata || !kOutputs[o].in_mjdata || !arrays_.out[o].valid()) continue;
    copy_items(arrays_.out[o], row, item_ids(sel_, o), rows_.output_table(o)[row]);
  }
}

void MjDataMirror::prefetch(int64_t row) const {
#if defined(__GNUC__)
  // One line per region is enough to start the page walks; the lines after
  // it follow sequentially.
  __builtin_prefetch(rows_.input_table(kInQpos)[row]);
  __builtin_prefetch(rows_.input_table(kInQvel)[row]);
  if (arrays_[kOutSensordata].valid() && !sel_.columns.empty()) {
    __builtin_prefetch(rows_.output_table(kOutSensordata)[row] + sel_.columns[0].first, 1);
  }
  if (!poses_) return;
  for (int o = 0; o < kNumOutputs; ++o) {
    if (o == kOutSensordata || !kOutputs[o].in_mjdata || !arrays_.out[o].valid()) continue;
    const std::vector<int>& ids = item_ids(sel_, o);
    if (!ids.empty()) {
      __builtin_prefetch(rows_.output_table(o)[row] + kOutputs[o].width * ids[0], 1);
    }
  }
#else
  (void)row;
#endif
}

}  // namespace mjrefresh
