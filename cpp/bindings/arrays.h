// Array checks of the nanobind layer: turn caller arrays into the core's
// views (RowView/OutMatrix/OutItems) or raise.
//
// Contract
// - Every function checks one argument completely (dtype, ndim, shape
//   against the model/selection, contiguous last axis, aliasing) and raises
//   TypeError (dtype) or ValueError (anything else) naming the argument, with
//   expected vs got. Nothing is copied: arrays come in with noconvert().
// - Call with the GIL held (they read Python objects' metadata).
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "core/array_view.h"
#include "core/footprint.h"

namespace mjrefresh::bind {

namespace nb = nanobind;

using InArray = nb::ndarray<nb::ro, nb::device::cpu>;
using OutArray = nb::ndarray<nb::device::cpu>;
using RowsArray = nb::ndarray<const int64_t, nb::ndim<1>, nb::device::cpu>;
using MaskArray = nb::ndarray<bool, nb::ndim<1>, nb::device::cpu>;

// "(3, 4)" / "(5,)": the shape of an array or of expected dims.
std::string shape_text(const std::vector<int64_t>& dims);
template <class A>
std::string shape_of(const A& a) {
  std::vector<int64_t> dims;
  for (size_t i = 0; i < a.ndim(); ++i) dims.push_back(static_cast<int64_t>(a.shape(i)));
  return shape_text(dims);
}
std::string dtype_text(const nb::dlpack::dtype& dt);  // "float32", "int64", ...

// (n, cols) float64 rows with a contiguous last axis.
RowView<const double> input_rows(const char* name, const InArray& a, int64_t n, int64_t cols);
// (n, items, width) float64; each row one contiguous block.
RowView<const double> input_rows_items(const char* name, const InArray& a, int64_t n, int64_t items,
                                       int64_t width);
// (n,) float64 (the time of each row), as an (n, 1) view.
RowView<const double> input_time(const InArray& a, int64_t n);
// (n, ...) float64 whose trailing axes hold `size` values per row, each row
// one C-contiguous block (like the mjModel field it replaces).
RowView<const double> input_field(const std::string& name, const InArray& a, int64_t n,
                                  int64_t size);
// Optional outputs: float64 or float32, (n, cols) / (n, items, width).
OutMatrix out_matrix(const char* name, const std::optional<OutArray>& a, int64_t n, int64_t cols);
OutItems out_items(const char* name, const std::optional<OutArray>& a, int64_t n, int64_t items,
                   int64_t width);
// Sorted, unique row ids in [0, n), copied: the call reads its own copy,
// so neither its writes nor another thread can change the ids under it.
std::vector<int64_t> checked_rows(const RowsArray& rows, int64_t n);
// The dirty mask of refresh_dirty_rows: length n; the call clears the
// entries of the rows it refreshed.
void check_mask(const MaskArray& mask, int64_t n);
// dirty[r] = false for the refreshed rows: `ids` except the sorted `failed`.
void clear_refreshed(const MaskArray& dirty, const std::vector<int64_t>& ids,
                     const std::vector<int64_t>& failed);

// The bytes of an array, for the overlap check.
template <class A>
Footprint footprint_of(const A& a) {
  std::vector<int64_t> shape(a.ndim()), strides(a.ndim());
  for (size_t i = 0; i < a.ndim(); ++i) {
    shape[i] = static_cast<int64_t>(a.shape(i));
    strides[i] = a.stride(i) * static_cast<int64_t>(a.itemsize());
  }
  return Footprint::of(a.data(), static_cast<int64_t>(a.itemsize()), static_cast<int>(a.ndim()),
                       shape.data(), strides.data());
}

// Every array one call touches, by the name its errors use.
struct Touched {
  std::string name;
  Footprint bytes;
};
// ValueError if an array the call writes shares a byte with any other array
// it reads or writes ("out.sensordata: overlaps the input qpos in memory").
void check_disjoint(const std::vector<Touched>& read, const std::vector<Touched>& written);

}  // namespace mjrefresh::bind
