// The one parser of a refresh's arrays: a mapping of names to arrays,
// checked by looping over the contract tables (core/io_tables.h kInputs,
// kOutputs; core/model_fields.h) and turned into the engines' views.
// Refresher.bind, and through it every binding and Refresher.refresh, goes
// through it; so does the MjData-list binding for its outputs.
//
// Contract
// - parse_call(m, sel, arrays, model_fields, num_envs): `arrays` maps input
//   and output names (kInputs, kOutputs) to arrays, `model_fields` field
//   names to (N, ...) arrays (None when none are declared). N is num_envs
//   when given, else qpos's first axis. Every array is checked completely
//   (bindings/arrays.h) and so is every pair: nothing the call writes may
//   share a byte with anything else it touches (check_disjoint). Raises
//   TypeError/ValueError naming the argument; nothing is copied.
// - parse_mjdata_outputs(m, sel, outputs, datas, poses): the outputs of a
//   call whose inputs live in separate mjData (datas: one per row); what the
//   call copies into each mjData (sensordata; with `poses` the outputs with
//   an mjData field) must be float64, and no output may share a byte with
//   any of the mjData (their buffer and arena); a selection with per-row
//   model fields is refused (an mjData holds no model values to read).
// - The result keeps a reference to every array it views, and the view
//   (a buffer export): the views stay valid as long as it lives. Call, and
//   destroy it, with the GIL held.
#pragma once

#include <mujoco/mujoco.h>
#include <nanobind/nanobind.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "bindings/arrays.h"
#include "core/mjdata_rows.h"
#include "core/selection.h"

namespace mjrefresh::bind {

struct CallArrays {
  int64_t n = 0;
  Inputs in;
  Outputs out;
  std::vector<Touched> read, written;  // for the per-call checks of rows and masks
  std::vector<nb::object> keep;        // the arrays the views point into
  // The views themselves: one of a buffer-protocol object holds its export
  // (Py_buffer), so the exporter cannot resize or release the memory the
  // views point into while they live (array.array.extend, memoryview.release
  // raise BufferError).
  std::vector<InArray> in_views;
  std::vector<OutArray> out_views;
  std::unique_ptr<double> time_value;  // a scalar time, viewed with row stride 0
};

CallArrays parse_call(const mjModel* m, const Selection& sel, nb::handle arrays,
                      nb::handle model_fields, std::optional<int64_t> num_envs);
CallArrays parse_mjdata_outputs(const mjModel* m, const Selection& sel, nb::handle outputs,
                                const MjDataRows& datas, bool poses);

// The shape of each output `sel` writes, for `n` rows, by name.
nb::dict output_shapes(int64_t nsensordata, const Selection& sel, int64_t n);

}  // namespace mjrefresh::bind
