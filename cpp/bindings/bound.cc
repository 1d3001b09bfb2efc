// Bound: a call over arrays parsed once (bindings/py_refresher.h).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <stdexcept>

#include "bench_hooks/stage_seconds.h"
#include "bindings/callback_guard.h"
#include "bindings/py_refresher.h"

namespace mjrefresh::bind {
namespace {

// `t` (the rows or the dirty mask of one call, named first in the error)
// may share no byte with an array the call writes, nor (if `t` is itself
// written, like the mask) with one it reads. The bound arrays were checked
// against each other at bind.
void check_alone(const Touched& t, const CallArrays& a, bool written) {
  for (const Touched& w : a.written) {
    if (overlaps(t.bytes, w.bytes)) value_error(t.name + ": overlaps " + w.name + " in memory");
  }
  if (!written) return;
  for (const Touched& r : a.read) {
    if (overlaps(t.bytes, r.bytes)) {
      value_error(t.name + ": overlaps the input " + r.name + " in memory");
    }
  }
}

}  // namespace

Bound::Bound(nb::object refresher, CallArrays arrays, nb::object datas, bool with_time, bool poses)
    : owner_(std::move(refresher)),
      datas_owner_(std::move(datas)),
      arrays_(std::move(arrays)),
      poses_(poses) {
  in_ = arrays_.in;
  out_ = arrays_.out;
  if (!datas_owner_.is_none()) {
    datas_ = nb::cast<const MjDataRows*>(datas_owner_);
    in_ = datas_->inputs(with_time);
    // The engine writes the row's sensordata into its mjData; the mirror
    // streams it into the caller's array.
    if (arrays_.out[kOutSensordata].valid()) out_[kOutSensordata] = datas_->sensordata();
  }
}

PyRefresher& Bound::refresher() { return nb::cast<PyRefresher&>(owner_); }

RunResult Bound::call(const std::vector<int64_t>& ids) {
  PyRefresher& r = refresher();
  if (r.closed()) throw std::runtime_error(kClosedMessage);
  check_no_callbacks(r.impl().engine().stage_functions());
  const int64_t count = static_cast<int64_t>(ids.size());
  RunResult result = without_gil([&] {
    if (datas_ != nullptr) {
      const MjDataMirror mirror(*datas_, r.impl().engine().selection(), arrays_.out, poses_);
      return r.impl().run(ids.data(), count, in_, out_, &mirror);
    }
    return r.impl().run(ids.data(), count, in_, out_);
  });
  if (result.closed) throw std::runtime_error(kClosedMessage);
  return result;
}

Failures Bound::run(const RowsArray& rows) {
  std::vector<int64_t> ids = checked_rows(rows, arrays_.n);
  check_alone({"rows", footprint_of(rows)}, arrays_, false);
  RunResult result = call(ids);
  return {std::move(result.failed_rows), std::move(result.message)};
}

std::tuple<int64_t, std::vector<int64_t>, std::string> Bound::run_dirty(nb::handle dirty) {
  const MaskArray mask = view_mask(dirty, arrays_.n);
  check_alone({"dirty", footprint_of(mask)}, arrays_, true);
  const std::vector<int64_t> ids = mask_rows(mask);
  if (ids.empty()) return {0, {}, {}};
  RunResult result = call(ids);
  clear_refreshed(mask, ids, result.failed_rows);
  return {static_cast<int64_t>(ids.size()), std::move(result.failed_rows),
          std::move(result.message)};
}

std::optional<double> Bound::stage_seconds(const RowsArray& rows) {
  PyRefresher& r = refresher();
  if (r.closed()) throw std::runtime_error(kClosedMessage);
  if (r.impl().engine().stage_functions() == 0 || datas_ != nullptr) return std::nullopt;
  const std::vector<int64_t> ids = checked_rows(rows, arrays_.n);
  check_no_callbacks(r.impl().engine().stage_functions());
  return without_gil([&] {
    return mjrefresh::stage_seconds(r.impl(), ids.data(), static_cast<int64_t>(ids.size()), in_);
  });
}

nb::list Bound::outputs() const {
  nb::list names;
  for (int o = 0; o < kNumOutputs; ++o) {
    if (arrays_.out.out[o].valid()) names.append(kOutputs[o].name);
  }
  return names;
}

}  // namespace mjrefresh::bind
