#include "bindings/arrays.h"

#include <sstream>

namespace mjrefresh::bind {
namespace {

[[noreturn]] void value_error(const std::string& message) {
  throw nb::value_error(message.c_str());
}

[[noreturn]] void type_error(const std::string& message) { throw nb::type_error(message.c_str()); }

template <class A>
void check_float64(const std::string& name, const A& a) {
  if (a.dtype() != nb::dtype<double>()) {
    type_error(name + ": expected dtype float64, got " + dtype_text(a.dtype()) +
               " (mjrefresh reads arrays in place and never converts them; convert once with " +
               name + ".astype(np.float64) and keep that array)");
  }
}

template <class A>
void check_shape(const char* name, const A& a, std::initializer_list<int64_t> dims) {
  bool ok = a.ndim() == dims.size();
  size_t i = 0;
  for (int64_t d : dims) {
    if (!ok) break;
    ok = static_cast<int64_t>(a.shape(i++)) == d;
  }
  if (!ok) {
    // Say where N came from when the rows are what disagree.
    const int64_t n = *dims.begin();
    const bool rows_differ = a.ndim() == 0 || static_cast<int64_t>(a.shape(0)) != n;
    const std::string origin =
        std::string(name) == "qpos" ? ""
        : rows_differ ? "; N = " + std::to_string(n) + " rows is set by qpos (its first axis)"
                      : "";
    value_error(std::string(name) + ": expected shape " + shape_text(dims) + ", got " +
                shape_of(a) + origin);
  }
  // The last axis must be contiguous (unless it has a single element).
  if (a.ndim() >= 1 && a.shape(a.ndim() - 1) > 1 && a.stride(a.ndim() - 1) != 1) {
    value_error(std::string(name) + ": the last axis must be contiguous (stride " +
                std::to_string(a.itemsize()) + " bytes), got stride " +
                std::to_string(a.stride(a.ndim() - 1) * a.itemsize()) +
                " bytes (np.ascontiguousarray(" + name +
                ") makes a contiguous copy; a backend's row views must keep each row's "
                "values contiguous)");
  }
}

OutType out_type(const char* name, const OutArray& a) {
  if (a.dtype() == nb::dtype<double>()) return OutType::kFloat64;
  if (a.dtype() == nb::dtype<float>()) return OutType::kFloat32;
  type_error(std::string(name) + ": expected dtype float64 or float32, got " +
             dtype_text(a.dtype()) +
             " (allocate outputs with Refresher.outputs(N, dtype=np.float32 or np.float64))");
}

}  // namespace

std::string shape_text(const std::vector<int64_t>& dims) {
  std::ostringstream s;
  s << "(";
  for (size_t i = 0; i < dims.size(); ++i) s << (i ? ", " : "") << dims[i];
  s << (dims.size() == 1 ? ",)" : ")");
  return s.str();
}

std::string dtype_text(const nb::dlpack::dtype& dt) {
  const char* kind = dt.code == static_cast<uint8_t>(nb::dlpack::dtype_code::Float)  ? "float"
                     : dt.code == static_cast<uint8_t>(nb::dlpack::dtype_code::Int)  ? "int"
                     : dt.code == static_cast<uint8_t>(nb::dlpack::dtype_code::UInt) ? "uint"
                     : dt.code == static_cast<uint8_t>(nb::dlpack::dtype_code::Bool) ? "bool"
                                                                                     : "other";
  return std::string(kind) + std::to_string(dt.bits);
}

RowView<const double> input_rows(const char* name, const InArray& a, int64_t n, int64_t cols) {
  check_float64(name, a);
  check_shape(name, a, {n, cols});
  return {static_cast<const double*>(a.data()), n, cols, a.ndim() ? a.stride(0) : 0};
}

RowView<const double> input_rows_items(const char* name, const InArray& a, int64_t n, int64_t items,
                                       int64_t width) {
  check_float64(name, a);
  check_shape(name, a, {n, items, width});
  if (items > 1 && a.stride(1) != width) {
    value_error(std::string(name) + ": each row must be contiguous (" + std::to_string(items) +
                "x" + std::to_string(width) + " values)");
  }
  return {static_cast<const double*>(a.data()), n, items * width, a.stride(0)};
}

RowView<const double> input_time(const InArray& a, int64_t n) {
  check_float64("time", a);
  if (a.ndim() != 1 || static_cast<int64_t>(a.shape(0)) != n) {
    value_error("time: expected shape " + shape_text({n}) + ", got " + shape_of(a));
  }
  return {static_cast<const double*>(a.data()), n, 1, a.stride(0)};
}

RowView<const double> input_field(const std::string& name, const InArray& a, int64_t n,
                                  int64_t size) {
  check_float64(name, a);
  int64_t per_row = 1;
  for (size_t i = 1; i < a.ndim(); ++i) per_row *= static_cast<int64_t>(a.shape(i));
  if (a.ndim() < 1 || static_cast<int64_t>(a.shape(0)) != n || per_row != size) {
    value_error(name + ": expected " + std::to_string(size) +
                " values per row for N = " + std::to_string(n) + " rows, got shape " + shape_of(a));
  }
  // The trailing axes must form one C-contiguous block per row (a field
  // with no items, e.g. jnt_pos of a model without joints, is read never;
  // numpy gives such arrays arbitrary strides).
  int64_t expect = 1;
  for (size_t i = a.ndim(); size > 0 && i-- > 1;) {
    if (a.shape(i) > 1 && a.stride(i) != expect) {
      value_error(name + ": each row's values must be contiguous");
    }
    expect *= static_cast<int64_t>(a.shape(i));
  }
  return {static_cast<const double*>(a.data()), n, size, a.ndim() ? a.stride(0) : 0};
}

OutMatrix out_matrix(const char* name, const std::optional<OutArray>& a, int64_t n, int64_t cols) {
  if (!a) return {};
  OutMatrix m;
  m.type = out_type(name, *a);
  check_shape(name, *a, {n, cols});
  if (n > 1 && a->stride(0) == 0) {
    value_error(std::string(name) + ": rows alias each other (row stride 0)");
  }
  m.data = a->data();
  m.rows = n;
  m.cols = cols;
  m.row_stride = a->stride(0);
  return m;
}

OutItems out_items(const char* name, const std::optional<OutArray>& a, int64_t n, int64_t items,
                   int64_t width) {
  if (!a) return {};
  OutItems o;
  o.type = out_type(name, *a);
  check_shape(name, *a, {n, items, width});
  if ((n > 1 && a->stride(0) == 0) ||
      (items > 1 && a->stride(1) < width && a->stride(1) > -width)) {
    value_error(std::string(name) + ": elements alias each other");
  }
  o.data = a->data();
  o.rows = n;
  o.items = items;
  o.width = width;
  o.row_stride = a->stride(0);
  o.item_stride = a->stride(1);
  return o;
}

std::vector<int64_t> checked_rows(const RowsArray& rows, int64_t n) {
  const int64_t* r = rows.data();
  const int64_t count = static_cast<int64_t>(rows.shape(0));
  const int64_t stride = rows.stride(0);
  std::vector<int64_t> ids(count);
  for (int64_t i = 0; i < count; ++i) {
    const int64_t v = r[i * stride];
    if (v < 0 || v >= n) {
      value_error("rows: expected row ids in [0, " + std::to_string(n) + "), got " +
                  std::to_string(v) + " at position " + std::to_string(i));
    }
    if (i > 0 && v <= ids[i - 1]) {
      value_error("rows: expected sorted unique row ids, got " + std::to_string(ids[i - 1]) +
                  " then " + std::to_string(v) + " at position " + std::to_string(i));
    }
    ids[i] = v;
  }
  return ids;
}

void check_mask(const MaskArray& mask, int64_t n) {
  if (static_cast<int64_t>(mask.shape(0)) != n) {
    value_error("dirty: expected length " + std::to_string(n) + " (N), got " +
                std::to_string(mask.shape(0)));
  }
}

void clear_refreshed(const MaskArray& dirty, const std::vector<int64_t>& ids,
                     const std::vector<int64_t>& failed) {
  bool* mask = dirty.data();
  const int64_t stride = dirty.stride(0);
  size_t f = 0;
  for (int64_t row : ids) {
    while (f < failed.size() && failed[f] < row) ++f;
    if (f < failed.size() && failed[f] == row) continue;
    mask[row * stride] = false;
  }
}

void check_disjoint(const std::vector<Touched>& read, const std::vector<Touched>& written) {
  for (size_t i = 0; i < written.size(); ++i) {
    const Touched& w = written[i];
    for (const Touched& r : read) {
      if (overlaps(w.bytes, r.bytes)) {
        value_error(w.name + ": overlaps the input " + r.name + " in memory");
      }
    }
    for (size_t j = i + 1; j < written.size(); ++j) {
      if (overlaps(w.bytes, written[j].bytes)) {
        value_error(w.name + ": overlaps " + written[j].name + " in memory");
      }
    }
  }
}

}  // namespace mjrefresh::bind
