#include "bindings/arrays.h"

#include <nanobind/stl/string.h>

#include <new>
#include <optional>
#include <sstream>
#include <vector>

#include "core/trapped_alloc.h"

namespace mjrefresh::bind {
namespace {

// What an object's `attr` prints ("cpu", "torch.strided"), or "" when it has
// none or reading it fails with an ordinary error.
std::string attr_text(nb::handle obj, const char* attr) {
  try {
    return nb::hasattr(obj, attr) ? py_str(obj.attr(attr)) : std::string();
  } catch (nb::python_error& e) {
    if (!e.matches(PyExc_Exception)) throw;  // KeyboardInterrupt (a signal handler's)
    return std::string();
  }
}

// Whether `obj` is a numpy.ndarray (or a subclass).
bool is_ndarray(nb::handle obj) {
  // numpy.ndarray, kept for the process (a type outlives every caller).
  static PyTypeObject* const ndarray = reinterpret_cast<PyTypeObject*>(
      nb::object(nb::module_::import_("numpy").attr("ndarray")).release().ptr());
  return PyObject_TypeCheck(obj.ptr(), ndarray);
}

// Whether `obj.method()` exists and returns True (False when it raises an
// ordinary error).
bool method_says_true(nb::handle obj, const char* method) {
  try {
    if (!nb::hasattr(obj, method)) return false;
    const nb::object r = obj.attr(method)();
    return PyBool_Check(r.ptr()) && r.ptr() == Py_True;
  } catch (nb::python_error& e) {
    if (!e.matches(PyExc_Exception)) throw;
    return false;
  }
}

// A numpy-like object nanobind cannot view: its bytes do not form whole,
// aligned items (a view of another dtype's buffer).
bool bad_layout(nb::handle obj, std::string* strides) {
  if (!nb::hasattr(obj, "strides") || !nb::hasattr(obj, "itemsize")) return false;
  try {
    const int64_t itemsize = nb::cast<int64_t>(obj.attr("itemsize"));
    const nb::object s = obj.attr("strides");
    bool bad = !nb::cast<bool>(obj.attr("flags").attr("aligned"));
    for (nb::handle v : s) bad |= itemsize > 0 && nb::cast<int64_t>(v) % itemsize != 0;
    *strides = py_str(s);
    return bad;
  } catch (nb::python_error& e) {
    if (!e.matches(PyExc_Exception)) throw;  // KeyboardInterrupt (a signal handler's)
    return false;
  } catch (const nb::cast_error&) {
    return false;
  }
}

[[noreturn]] void layout_error(const std::string& name, const std::string& strides,
                               int64_t itemsize) {
  const std::string base =
      name.substr(name.rfind('.') == std::string::npos ? 0 : name.rfind('.') + 1);
  value_error(name + ": expected aligned elements and strides that are whole multiples of the " +
              "item size (" + std::to_string(itemsize) + " bytes), got strides " + strides +
              " (a view of another dtype's bytes?); np.ascontiguousarray(" +
              base.substr(0, base.find('[')) + ") makes such a copy");
}

// What `obj`'s buffer says of its items: struct-module format ("<d", ">d",
// "g"), item size and strides; nullopt when it exports no buffer.
struct BufferItems {
  std::string format, strides;
  int64_t itemsize = 0;
};
std::optional<BufferItems> buffer_items(nb::handle obj) {
  if (!PyObject_CheckBuffer(obj.ptr())) return std::nullopt;
  Py_buffer view;
  if (PyObject_GetBuffer(obj.ptr(), &view, PyBUF_RECORDS_RO) != 0) {
    if (!PyErr_ExceptionMatches(PyExc_Exception)) throw nb::python_error();
    PyErr_Clear();
    return std::nullopt;
  }
  BufferItems b;
  b.format = view.format != nullptr ? view.format : "B";
  b.itemsize = view.itemsize;
  std::vector<int64_t> strides;
  for (int i = 0; i < view.ndim; ++i) {
    strides.push_back(view.strides != nullptr ? view.strides[i] : 0);
  }
  PyBuffer_Release(&view);
  b.strides = shape_text(strides);
  return b;
}

// Whether a struct-module format names native items of the `expected` dtypes.
bool native_items(std::string format, const std::string& expected) {
  const bool little = PY_LITTLE_ENDIAN;
  if (!format.empty() &&
      (format[0] == '@' || format[0] == '=' || format[0] == (little ? '<' : '>'))) {
    format.erase(0, 1);
  }
  return (format == "d" && expected.find("float64") != std::string::npos) ||
         (format == "f" && expected.find("float32") != std::string::npos) ||
         (format == "?" && expected == "bool");
}

// `obj` could not be viewed: an array nanobind cannot view (its dtype, byte
// order or layout), or no array at all. `expected`: the dtypes it may have.
[[noreturn]] void not_viewable(const std::string& name, nb::handle obj, bool written,
                               const char* expected) {
  std::string strides;
  if (bad_layout(obj, &strides)) {
    layout_error(name, strides, nb::cast<int64_t>(obj.attr("itemsize")));
  }
  const std::string base = name.substr(name.rfind('.') + 1);
  const std::string device = attr_text(obj, "device");
  if (!device.empty() && device.rfind("cpu", 0) != 0) {
    type_error(name + ": expected an array in CPU memory, got a " +
               nb::type_name(obj.type()).c_str() + " on device '" + device +
               "' (move it once with " + base + ".cpu() and keep that array)");
  }
  const std::string layout = attr_text(obj, "layout");
  if (!layout.empty() && layout != "torch.strided") {
    type_error(name + ": expected a dense array, got a " + nb::type_name(obj.type()).c_str() +
               " of layout " + layout + " (" + base + ".to_dense() makes a dense copy)");
  }
  if (nb::hasattr(obj, "dtype") && nb::hasattr(obj, "shape")) {
    const std::string dtype = py_str(obj.attr("dtype"));
    type_error(name + ": expected dtype " + expected + " (native byte order), got " + dtype +
               " (mjrefresh reads arrays in place and never converts them; convert once with " +
               base + ".astype(...) and keep that array)");
  }
  if (const std::optional<BufferItems> b = buffer_items(obj)) {
    // Items of the right dtype that nanobind could not view: their layout.
    if (native_items(b->format, expected)) layout_error(name, b->strides, b->itemsize);
    const std::string& format = b->format;  // byte order, long double, ...
    const std::string fix =
        written ? "results written into a converted copy would never reach it; pass a "
                  "native-order float64 or float32 array"
                : "mjrefresh reads arrays in place and never converts them; convert once with "
                  "np.asarray(" +
                      base + ").astype(np.float64) and keep that array";
    type_error(name + ": expected dtype " + expected + " (native byte order), got a " +
               nb::type_name(obj.type()).c_str() + " of buffer format '" + format + "' (" + fix +
               ")");
  }
  type_error(not_an_array(name, nb::type_name(obj.type()).c_str(), written));
}

template <class A>
void check_aligned(const std::string& name, const A& a) {
  const auto address = reinterpret_cast<uintptr_t>(a.data());
  if (a.size() > 0 && a.itemsize() > 1 && address % a.itemsize() != 0) {
    std::ostringstream s;
    s << "(";
    for (size_t i = 0; i < a.ndim(); ++i) {
      s << (i ? ", " : "") << a.stride(i) * static_cast<int64_t>(a.itemsize());
    }
    s << (a.ndim() == 1 ? ",)" : ")");
    layout_error(name, s.str(), static_cast<int64_t>(a.itemsize()));
  }
}

// `obj`, or a memoryview of it when it exports a buffer without strides (a
// ctypes array: C-contiguous by definition). nanobind 3.1 reads a buffer's
// strides unchecked (a SIGSEGV on a ctypes array); a memoryview of the same
// memory always states them. Never a copy.
nb::object with_strides(nb::handle obj) {
  if (is_ndarray(obj) || PyMemoryView_Check(obj.ptr()) || !PyObject_CheckBuffer(obj.ptr())) {
    return nb::borrow(obj);
  }
  Py_buffer view;
  if (PyObject_GetBuffer(obj.ptr(), &view, PyBUF_RECORDS_RO) != 0) {
    if (!PyErr_ExceptionMatches(PyExc_Exception)) throw nb::python_error();
    PyErr_Clear();  // refused below with the message naming the argument
    return nb::borrow(obj);
  }
  const bool no_strides = view.ndim > 0 && view.strides == nullptr;
  PyBuffer_Release(&view);
  if (!no_strides) return nb::borrow(obj);
  PyObject* mv = PyMemoryView_FromObject(obj.ptr());
  if (mv == nullptr) throw nb::python_error();
  return nb::steal(mv);
}

}  // namespace

void refuse_lazy_view(const std::string& name, nb::handle obj) {
  if (is_ndarray(obj)) return;  // numpy has no lazy views
  struct Lazy {
    const char *bit, *what, *fix;
  };
  for (const Lazy& l : {Lazy{"is_neg", "negation", ".resolve_neg()"},
                        Lazy{"is_conj", "conjugation", ".resolve_conj()"}}) {
    if (method_says_true(obj, l.bit)) {
      type_error(name + ": the " + nb::type_name(obj.type()).c_str() + "'s " + l.bit +
                 "() is True: its values are a lazy " + l.what +
                 " of its memory, which mjrefresh would read or write as it is; pass its " + l.fix +
                 " (a resolved copy) and keep that tensor");
    }
  }
}

void value_error(const std::string& message) { throw nb::value_error(message.c_str()); }

std::string py_str(nb::handle obj) {
  // A str is read as it is: PyObject_Str first runs pending signal handlers,
  // and a Ctrl-C arriving then became "?: unknown array" (KeyboardInterrupt
  // lost) when the error below was cleared.
  const nb::object s =
      PyUnicode_Check(obj.ptr()) ? nb::borrow(obj) : nb::steal(PyObject_Str(obj.ptr()));
  Py_ssize_t size = 0;
  const char* text = s.is_valid() ? PyUnicode_AsUTF8AndSize(s.ptr(), &size) : nullptr;
  if (text == nullptr) {
    // KeyboardInterrupt, SystemExit (a signal handler's): propagate. An
    // ordinary error (a __str__ that raises, a lone surrogate) only spoils
    // the name in a message being built.
    if (!PyErr_ExceptionMatches(PyExc_Exception)) throw nb::python_error();
    PyErr_Clear();
    return "?";
  }
  return std::string(text, static_cast<std::size_t>(size));
}
void type_error(const std::string& message) { throw nb::type_error(message.c_str()); }

std::string shape_text(const std::vector<int64_t>& dims) {
  std::ostringstream s;
  s << "(";
  for (size_t i = 0; i < dims.size(); ++i) s << (i ? ", " : "") << dims[i];
  s << (dims.size() == 1 ? ",)" : ")");
  return s.str();
}

std::string dtype_text(const nb::dlpack::dtype& dt) {
  using Code = nb::dlpack::dtype_code;
  if (dt.code == static_cast<uint8_t>(Code::Bool)) return "bool";
  if (dt.code == static_cast<uint8_t>(Code::Bfloat)) return "bfloat" + std::to_string(dt.bits);
  const char* kind = dt.code == static_cast<uint8_t>(Code::Float)     ? "float"
                     : dt.code == static_cast<uint8_t>(Code::Int)     ? "int"
                     : dt.code == static_cast<uint8_t>(Code::UInt)    ? "uint"
                     : dt.code == static_cast<uint8_t>(Code::Complex) ? "complex"
                                                                      : "other";
  return std::string(kind) + std::to_string(dt.bits);
}

std::string not_an_array(const std::string& name, const std::string& type_name, bool written) {
  const std::string base = name.substr(name.rfind('.') + 1);  // model_fields['body_pos'] kept
  const std::string fix =
      written ? "keep a numpy array and pass it: results written into a converted copy would "
                "never reach your " +
                    type_name
              : "convert it once with np.asarray(" + base +
                    ", dtype=np.float64) and keep that array (mjrefresh reads arrays in place)";
  return name + ": expected a numpy array (or a CPU array exporting DLPack), got " + type_name +
         "; " + fix;
}

InArray view_in(const std::string& name, nb::handle obj) {
  refuse_lazy_view(name, obj);
  InArray a;
  if (!nb::try_cast(with_strides(obj), a, false)) not_viewable(name, obj, false, "float64");
  check_aligned(name, a);
  return a;
}

OutArray view_out(const std::string& name, nb::handle obj) {
  refuse_lazy_view("out." + name, obj);
  OutArray a;
  if (!nb::try_cast(with_strides(obj), a, false)) {
    InArray ro;
    if (nb::try_cast(with_strides(obj), ro, false)) {
      value_error("out." + name + ": expected a writable array, got a read-only one");
    }
    not_viewable("out." + name, obj, true, "float64 or float32");
  }
  check_aligned("out." + name, a);
  return a;
}

MaskArray view_mask(nb::handle obj, int64_t n) {
  refuse_lazy_view("dirty", obj);
  MaskArray mask;
  if (!nb::try_cast(with_strides(obj), mask, false)) {
    InArray a;
    if (!nb::try_cast(with_strides(obj), a, false)) not_viewable("dirty", obj, true, "bool");
    if (a.dtype() != nb::dtype<bool>() || a.ndim() != 1) {
      type_error("dirty: expected a 1-D bool array, got dtype " + dtype_text(a.dtype()) +
                 " shape " + shape_of(a));
    }
    value_error("dirty: expected a writable array (its entries are cleared)");
  }
  if (static_cast<int64_t>(mask.shape(0)) != n) {
    value_error("dirty: expected length " + std::to_string(n) + " (N), got " +
                std::to_string(mask.shape(0)));
  }
  return mask;
}

void check_float64(const std::string& name, const InArray& a) {
  if (a.dtype() != nb::dtype<double>()) {
    type_error(name + ": expected dtype float64, got " + dtype_text(a.dtype()) +
               " (mjrefresh reads arrays in place and never converts them; convert once with " +
               name + ".astype(np.float64) and keep that array)");
  }
}

template <class A>
void check_shape(const std::string& name, const A& a, std::initializer_list<int64_t> dims,
                 const char* n_origin) {
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
    const std::string origin = name == "qpos" || n_origin == nullptr || !rows_differ
                                   ? ""
                                   : "; N = " + std::to_string(n) + " rows is " + n_origin;
    value_error(name + ": expected shape " + shape_text(dims) + ", got " + shape_of(a) + origin);
  }
  // The last axis must be contiguous (unless it has a single element; an
  // empty array has no layout: numpy gives it any strides, 0 included).
  if (a.size() > 0 && a.ndim() >= 1 && a.shape(a.ndim() - 1) > 1 && a.stride(a.ndim() - 1) != 1) {
    const auto itemsize = static_cast<int64_t>(a.itemsize());
    // A copy of an output would never receive the results: no copy hint there.
    const std::string fix = std::is_same_v<A, OutArray>
                                ? "allocate outputs with Refresher.outputs(N), or pass views "
                                  "whose rows keep each row's values contiguous"
                                : "np.ascontiguousarray(" + name +
                                      ") makes a contiguous copy; a backend's row views must "
                                      "keep each row's values contiguous";
    value_error(name + ": the last axis must be contiguous (stride " + std::to_string(itemsize) +
                " bytes), got stride " + std::to_string(a.stride(a.ndim() - 1) * itemsize) +
                " bytes (" + fix + ")");
  }
}
template void check_shape(const std::string&, const InArray&, std::initializer_list<int64_t>,
                          const char*);
template void check_shape(const std::string&, const OutArray&, std::initializer_list<int64_t>,
                          const char*);

OutType out_type(const std::string& name, const OutArray& a) {
  if (a.dtype() == nb::dtype<double>()) return OutType::kFloat64;
  if (a.dtype() == nb::dtype<float>()) return OutType::kFloat32;
  type_error(name + ": expected dtype float64 or float32, got " + dtype_text(a.dtype()) +
             " (allocate outputs with Refresher.outputs(N, dtype=np.float32 or np.float64))");
}

std::vector<int64_t> checked_rows(const RowsArray& rows, int64_t n) {
  const int64_t* r = rows.data();
  const int64_t count = static_cast<int64_t>(rows.shape(0));
  const int64_t stride = rows.stride(0);
  std::vector<int64_t> ids;
  try {
    ids.resize(count);
  } catch (const std::bad_alloc&) {
    throw OutOfMemory("rows: cannot allocate " + std::to_string(count * 8) +
                      " bytes for the call's copy of " + std::to_string(count) +
                      " row ids; refresh fewer rows per call");
  }
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

std::vector<int64_t> mask_rows(const MaskArray& mask) {
  const bool* m = mask.data();
  const int64_t n = static_cast<int64_t>(mask.shape(0));
  const int64_t stride = mask.stride(0);
  std::vector<int64_t> ids;
  try {
    for (int64_t r = 0; r < n; ++r) {
      if (m[r * stride]) ids.push_back(r);
    }
  } catch (const std::bad_alloc&) {
    throw OutOfMemory("dirty: cannot allocate the row ids of a mask of " + std::to_string(n) +
                      " rows; refresh fewer rows per call");
  }
  return ids;
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
