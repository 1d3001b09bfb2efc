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

namespace mjrefresh::bind {

namespace nb = nanobind;

using InArray = nb::ndarray<nb::ro, nb::device::cpu>;
using OutArray = nb::ndarray<nb::device::cpu>;
using RowsArray = nb::ndarray<const int64_t, nb::ndim<1>, nb::device::cpu>;

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
// Sorted, unique row ids in [0, n).
void check_rows(const RowsArray& rows, int64_t n);
// The row ids as one contiguous array: the caller's, or a copy in `copy`
// when the caller passed a strided view (rare: Python passes contiguous).
const int64_t* contiguous_rows(const RowsArray& rows, std::vector<int64_t>& copy);

}  // namespace mjrefresh::bind
