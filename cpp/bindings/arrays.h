// The checks of one array argument of the nanobind layer, and the views they
// produce. Every error text a caller can get for an array is written here or
// in bindings/parse.cc (which loops over the contract tables): nowhere else.
//
// Contract
// - view_in / view_out / view_mask cast a Python object to an ndarray
//   without copying (numpy arrays, DLPack exporters such as torch CPU
//   tensors, the buffer protocol) or raise: TypeError for what is not an
//   array, has the wrong dtype, lives off the CPU, is sparse or is a lazy
//   negation/conjugation (torch's neg and conj bits), ValueError for read-only outputs,
//   misaligned elements and strides that are not whole items.
// - The check_* functions check one property completely and raise
//   TypeError (dtype) or ValueError (anything else) naming the argument,
//   with expected vs got and the fix.
// - Call with the GIL held (they read Python objects).
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstdint>
#include <initializer_list>
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

[[noreturn]] void value_error(const std::string& message);
[[noreturn]] void type_error(const std::string& message);

// "(3, 4)" / "(5,)": the shape of an array or of expected dims.
std::string shape_text(const std::vector<int64_t>& dims);
template <class A>
std::string shape_of(const A& a) {
  std::vector<int64_t> dims;
  for (size_t i = 0; i < a.ndim(); ++i) dims.push_back(static_cast<int64_t>(a.shape(i)));
  return shape_text(dims);
}
std::string dtype_text(const nb::dlpack::dtype& dt);  // "float32", "int64", "bool", ...
// str(obj), or "?" if that raises.
std::string py_str(nb::handle obj);

// The TypeError text for an argument that is not an array (`written`: the
// call writes into it, so a converted copy would lose the results).
std::string not_an_array(const std::string& name, const std::string& type_name, bool written);

// TypeError if `obj` (not a numpy array) says its values are a lazy
// negation or conjugation of its memory (torch's is_neg()/is_conj(), e.g.
// `.imag` of a conj() view): DLPack exports the memory as it is, so a read
// would see, and a write would store, the negated values.
void refuse_lazy_view(const std::string& name, nb::handle obj);

// `obj` viewed as an array the call reads / writes / clears (the dirty mask);
// each first refuses a lazy view (refuse_lazy_view).
InArray view_in(const std::string& name, nb::handle obj);
OutArray view_out(const std::string& name, nb::handle obj);
MaskArray view_mask(nb::handle obj, int64_t n);

void check_float64(const std::string& name, const InArray& a);
// Exactly `dims`, last axis contiguous; `n_origin` ("N = ... rows is
// <n_origin>"): where N came from, said when the rows disagree (nullptr: not
// said).
inline constexpr const char* kNFromQpos = "set by qpos (its first axis)";
template <class A>
void check_shape(const std::string& name, const A& a, std::initializer_list<int64_t> dims,
                 const char* n_origin = kNFromQpos);
extern template void check_shape(const std::string&, const InArray&, std::initializer_list<int64_t>,
                                 const char*);
extern template void check_shape(const std::string&, const OutArray&,
                                 std::initializer_list<int64_t>, const char*);
OutType out_type(const std::string& name, const OutArray& a);

// Sorted, unique row ids in [0, n), copied: the call reads its own copy,
// so neither its writes nor another thread can change the ids under it.
// A copy that cannot be allocated throws OutOfMemory (MemoryError naming
// the bytes), as does mask_rows.
std::vector<int64_t> checked_rows(const RowsArray& rows, int64_t n);
// The rows where `mask` is true.
std::vector<int64_t> mask_rows(const MaskArray& mask);
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
