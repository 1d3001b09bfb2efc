#include "bindings/parse.h"

#include <nanobind/stl/string.h>

#include <cstddef>
#include <string>

namespace mjrefresh::bind {
namespace {

std::string quoted(const char* s) { return std::string("'") + s + "'"; }

// The bytes [p, p + size) as a footprint of one row.
Footprint bytes_at(const void* p, std::size_t size) {
  const int64_t shape[2] = {1, static_cast<int64_t>(size)}, strides[2] = {shape[1], 1};
  return Footprint::of(p, 1, 2, shape, strides);
}

// The value of `name` in the mapping, or an invalid handle for None/missing.
nb::handle lookup(nb::dict d, const char* name) {
  if (!d.contains(name)) return {};
  nb::handle v = d[name];
  return v.is_none() ? nb::handle() : v;
}

// Name of the first selected clock sensor, or "" if none is selected.
std::string clock_sensor(const mjModel* m, const Selection& sel) {
  for (int i : sel.sensors) {
    if (m->sensor_type[i] == mjSENS_CLOCK) {
      if (const char* name = mj_id2name(m, mjOBJ_SENSOR, i)) return name;
      std::string id = std::to_string(i);  // not "#" + ...: GCC 12 -O3 -Werror=restrict
      return id.insert(0, 1, '#');         // false positive (char_traits::copy)
    }
  }
  return "";
}

// A Python or numpy number that is not an array (a bool included: refused
// by name, not as "not an array").
bool is_scalar(nb::handle obj) { return PyNumber_Check(obj.ptr()) && !nb::hasattr(obj, "__len__"); }

void check_known(nb::dict arrays, bool inputs_allowed) {
  for (auto [key, value] : arrays) {
    const std::string name = py_str(key);
    bool known = false;
    for (const InputInfo& i : kInputs) known |= inputs_allowed && name == i.name;
    for (const OutputInfo& o : kOutputs) known |= name == o.name;
    if (known) continue;
    std::string names;
    if (inputs_allowed) {
      for (const InputInfo& i : kInputs) names += std::string(names.empty() ? "" : ", ") + i.name;
    }
    for (const OutputInfo& o : kOutputs) names += std::string(names.empty() ? "" : ", ") + o.name;
    value_error(name + ": unknown array; expected one of " + names);
  }
}

// The view of input `i` (given as `obj`) for n rows.
RowView<const double> input_view(CallArrays& c, const mjModel* m, int i, nb::handle obj,
                                 const char* n_origin) {
  const InputInfo& info = kInputs[i];
  const std::string name = info.name;
  const int64_t n = c.n;
  if (!info.items && is_scalar(obj)) {  // one value for every row (time)
    const std::string expected = name + ": expected a real scalar or an (N,) float64 array, got ";
    if (PyBool_Check(obj.ptr())) type_error(expected + "bool");
    try {
      c.time_value = std::make_unique<double>(nb::cast<double>(nb::float_(obj)));
    } catch (nb::python_error& e) {
      if (!e.matches(PyExc_Exception)) throw;  // KeyboardInterrupt (a signal handler's)
      if (e.matches(PyExc_OverflowError)) {
        value_error(name + ": expected a value a float64 holds, got a number of type " +
                    nb::type_name(obj.type()).c_str() + " too large for it");
      }
      type_error(expected + nb::type_name(obj.type()).c_str());
    }
    return {c.time_value.get(), n, 1, 0};
  }
  const InArray a = view_in(name, obj);
  check_float64(name, a);
  const int64_t stride = a.ndim() ? a.stride(0) : 0;
  c.keep.push_back(nb::borrow(obj));
  c.in_views.push_back(a);
  c.read.push_back({name, footprint_of(a)});
  const auto* data = static_cast<const double*>(a.data());
  if (!info.items) {
    if (a.ndim() == 0) return {data, n, 1, 0};  // a 0-d array: every row
    if (a.ndim() != 1 || static_cast<int64_t>(a.shape(0)) != n) {
      value_error(name + ": expected a scalar or shape " + shape_text({n}) + ", got " +
                  shape_of(a));
    }
    return {data, n, 1, stride};
  }
  const int64_t items = info.items(m);
  if (info.width == 1) {
    check_shape(name, a, {n, items}, n_origin);
    return {data, n, items, stride};
  }
  check_shape(name, a, {n, items, info.width}, n_origin);
  if (a.size() > 0 && items > 1 && a.stride(1) != info.width) {
    value_error(name + ": each row must be contiguous (" + std::to_string(items) + "x" +
                std::to_string(info.width) + " values)");
  }
  return {data, n, items * info.width, stride};
}

void parse_inputs(CallArrays& c, const mjModel* m, const Selection& sel, nb::dict arrays,
                  std::optional<int64_t> num_envs) {
  nb::handle qpos = lookup(arrays, "qpos");
  if (!qpos.is_valid()) value_error("qpos: expected an array of shape (N, nq), got None");
  if (num_envs) {
    c.n = *num_envs;
  } else {
    const InArray q = view_in("qpos", qpos);
    if (q.ndim() != 2) {
      value_error("qpos: expected a 2-D array (N, " + std::to_string(m->nq) + "), got shape " +
                  shape_of(q));
    }
    c.n = static_cast<int64_t>(q.shape(0));
  }
  const std::string clock = clock_sensor(m, sel);
  for (int i = 0; i < kNumInputs; ++i) {
    const InputInfo& info = kInputs[i];
    const int64_t items = info.items ? info.items(m) : 1;
    nb::handle obj = lookup(arrays, info.name);
    if (!obj.is_valid()) {
      const std::string name = info.name;
      if (info.need == Need::kAlways) {
        value_error(name + ": expected an array of shape (N, " + info.count + "), got None");
      }
      if (info.need == Need::kIfCounted && items > 0) {
        value_error(name + ": the model has " + std::to_string(items) + " mocap bodies; " +
                    "expected an array of shape " +
                    shape_text({c.n, items, static_cast<int64_t>(info.width)}) + ", got None");
      }
      if (info.need == Need::kIfClock && !clock.empty()) {
        value_error(name + ": clock sensor " + quoted(clock.c_str()) +
                    " is selected; expected a scalar or an (N,) float64 array, got None");
      }
      continue;
    }
    // Mocap arrays of a model without mocap bodies: unused, not checked.
    if (items == 0 && info.need == Need::kIfCounted) continue;
    const RowView<const double> view = input_view(c, m, i, obj, num_envs ? nullptr : kNFromQpos);
    // A zero-width qpos or qvel (nq or nv 0) is checked like any other (its
    // dtype and shape), then left unset: nothing reads it.
    if (items > 0) c.in.in[i] = view;
  }
}

void parse_outputs(CallArrays& c, const mjModel* m, const Selection& sel, nb::dict arrays,
                   bool mjdata, bool poses, const char* n_origin) {
  for (int o = 0; o < kNumOutputs; ++o) {
    const OutputInfo& info = kOutputs[o];
    nb::handle obj = lookup(arrays, info.name);
    if (!obj.is_valid()) continue;
    const std::string name = info.name;
    const int64_t items = output_items(m->nsensordata, sel, o);
    if (items < 0) value_error("out." + name + ": this plan does not write " + name);
    const OutArray a = view_out(name, obj);
    OutView v;
    v.type = out_type(name, a);
    const bool matrix = info.indexed_by == IndexedBy::kSensordata;
    if (matrix) {
      check_shape(name, a, {c.n, items}, n_origin);
    } else {
      check_shape(name, a, {c.n, items, static_cast<int64_t>(info.width)}, n_origin);
      if (a.size() > 0 && items > 1 && a.stride(1) < info.width && a.stride(1) > -info.width) {
        value_error("out." + name + ": the items of a row alias each other (item stride " +
                    std::to_string(a.stride(1) * static_cast<int64_t>(a.itemsize())) +
                    " bytes, an item is " +
                    std::to_string(info.width * static_cast<int64_t>(a.itemsize())) +
                    " bytes); expected every item in its own memory: allocate outputs with "
                    "Refresher.outputs(N)");
      }
    }
    const Footprint bytes = footprint_of(a);
    if (rows_overlap(bytes)) {
      value_error("out." + name + ": rows alias each other (row stride " +
                  std::to_string(a.stride(0) * static_cast<int64_t>(a.itemsize())) +
                  " bytes, a row spans " +
                  std::to_string(bytes.row_bytes.back().hi - bytes.row_bytes.front().lo) +
                  " bytes); expected every row in its own memory: allocate outputs with "
                  "Refresher.outputs(N)");
    }
    const bool mirrored = mjdata && info.in_mjdata && (matrix || poses);
    if (mirrored && v.type != OutType::kFloat64) {
      type_error("out." + name + ": expected dtype float64 (it is copied into each MjData." +
                 info.mjdata_field + "), got float32");
    }
    v.data = a.data();
    v.rows = c.n;
    v.items = items;
    v.width = info.width;
    v.row_stride = c.n ? a.stride(0) : 0;
    v.item_stride = matrix ? 1 : a.stride(1);
    c.out.out[o] = v;
    c.keep.push_back(nb::borrow(obj));
    c.out_views.push_back(a);
    c.written.push_back({"out." + name, bytes});
  }
}

std::string listed(const std::vector<int>& fields) {
  std::string s;
  for (int f : fields) s += (s.empty() ? "" : ", ") + quoted(model_field_info(f).name);
  return s;
}

void parse_fields(CallArrays& c, const mjModel* m, const Selection& sel, nb::handle given) {
  const std::vector<int>& declared = sel.model_fields;
  const bool none = !given.is_valid() || given.is_none();
  if (!none && !(nb::hasattr(given, "keys") && nb::hasattr(given, "__getitem__"))) {
    type_error(std::string("model_fields: expected a mapping of field name to array, got ") +
               nb::type_name(given.type()).c_str());
  }
  const nb::dict fields =
      none ? nb::dict()
           : nb::borrow<nb::dict>(nb::handle(reinterpret_cast<PyObject*>(&PyDict_Type))(given));
  if (declared.empty()) {
    if (fields.size() > 0) {
      value_error(
          "model_fields: this Refresher was built without per-environment model fields; "
          "declare them with Refresher(..., model_fields=(...))");
    }
    return;
  }
  std::vector<int> missing;
  for (int f : declared) {
    if (!fields.contains(model_field_info(f).name)) missing.push_back(f);
  }
  if (!missing.empty()) {
    value_error("model_fields: expected arrays for " + listed(declared) +
                " (declared at construction), missing " + listed(missing));
  }
  std::string extra;
  for (auto [key, value] : fields) {
    const std::string k = py_str(key);
    bool found = false;
    for (int f : declared) found |= k == model_field_info(f).name;
    if (!found) extra += (extra.empty() ? "'" : ", '") + k + "'";
  }
  if (!extra.empty()) {
    value_error("model_fields: " + extra +
                " not declared at construction (declared: " + listed(declared) + ")");
  }
  for (int f : declared) {
    const ModelFieldInfo& info = model_field_info(f);
    const std::string name = std::string("model_fields['") + info.name + "']";
    nb::handle obj = fields[info.name];
    const InArray a = view_in(name, obj);
    const int64_t size = field_size(m, f);
    std::vector<int64_t> shape{c.n, size / info.width};
    if (info.width > 1) shape.push_back(info.width);
    bool ok = a.ndim() == shape.size();
    for (size_t k = 0; ok && k < shape.size(); ++k)
      ok = static_cast<int64_t>(a.shape(k)) == shape[k];
    if (!ok) {
      value_error(name + ": expected shape " + shape_text(shape) + " (N, like model." + info.name +
                  "), got " + shape_of(a));
    }
    if (a.dtype() != nb::dtype<double>()) {
      type_error(name + ": expected dtype float64, got " + dtype_text(a.dtype()));
    }
    // The trailing axes must form one C-contiguous block per row (a field
    // with no items is never read; numpy gives such arrays any strides).
    int64_t expect = 1;
    for (size_t k = a.ndim(); a.size() > 0 && k-- > 1;) {
      if (a.shape(k) > 1 && a.stride(k) != expect) {
        value_error(name + ": each row's values must be contiguous");
      }
      expect *= static_cast<int64_t>(a.shape(k));
    }
    c.in.fields[f] = {static_cast<const double*>(a.data()), c.n, size, c.n ? a.stride(0) : 0};
    c.keep.push_back(nb::borrow(obj));
    c.in_views.push_back(a);
    c.read.push_back({name, footprint_of(a)});
  }
}

nb::dict as_dict(const char* what, nb::handle arrays) {
  if (!nb::isinstance<nb::dict>(arrays)) {
    type_error(std::string(what) + ": expected a dict of arrays by name, got " +
               nb::type_name(arrays.type()).c_str());
  }
  return nb::borrow<nb::dict>(arrays);
}

}  // namespace

CallArrays parse_call(const mjModel* m, const Selection& sel, nb::handle arrays,
                      nb::handle model_fields, std::optional<int64_t> num_envs) {
  const nb::dict d = as_dict("arrays", arrays);
  check_known(d, true);
  CallArrays c;
  parse_inputs(c, m, sel, d, num_envs);
  parse_outputs(c, m, sel, d, false, false, num_envs ? nullptr : kNFromQpos);
  parse_fields(c, m, sel, model_fields);
  check_disjoint(c.read, c.written);
  return c;
}

CallArrays parse_mjdata_outputs(const mjModel* m, const Selection& sel, nb::handle outputs,
                                const MjDataRows& datas, bool poses) {
  // Rows read from separate mjData take the refresher's model values: an
  // engine asked for per-row fields would read tables no one filled.
  if (!sel.model_fields.empty()) {
    value_error("model_fields: the refresher takes " + listed(sel.model_fields) +
                " per row, which a binding of MjData rows cannot supply (an MjData holds no "
                "model values); use a Refresher without model_fields, or pass the state as "
                "arrays (bind_arrays, bind_state) with model_fields=");
  }
  const nb::dict d = as_dict("outputs", outputs);
  check_known(d, false);
  CallArrays c;
  c.n = datas.size();
  parse_outputs(c, m, sel, d, true, poses, "the number of MjData (len(datas))");
  check_disjoint(c.read, c.written);
  // Each mjData's state and the fields a refresh copies into live in its
  // buffer; its arena holds the rest of what a caller could view.
  for (int64_t r = 0; r < datas.size(); ++r) {
    const mjData* data = datas.data(r);
    const Footprint memory[2] = {bytes_at(data->buffer, data->nbuffer),
                                 bytes_at(data->arena, data->narena)};
    for (const Touched& w : c.written) {
      if (overlaps(w.bytes, memory[0]) || overlaps(w.bytes, memory[1])) {
        value_error(w.name + ": overlaps the memory of datas[" + std::to_string(r) +
                    "], an MjData the call reads state from and copies results into; pass "
                    "outputs in their own memory (Refresher.outputs(N))");
      }
    }
  }
  return c;
}

nb::dict output_shapes(int64_t nsensordata, const Selection& sel, int64_t n) {
  nb::dict shapes;
  for (int o = 0; o < kNumOutputs; ++o) {
    const int64_t items = output_items(nsensordata, sel, o);
    if (items < 0) continue;
    if (kOutputs[o].indexed_by == IndexedBy::kSensordata) {
      shapes[kOutputs[o].name] = nb::make_tuple(n, items);
    } else {
      shapes[kOutputs[o].name] = nb::make_tuple(n, items, kOutputs[o].width);
    }
  }
  return shapes;
}

}  // namespace mjrefresh::bind
