// Row-strided views over caller-owned arrays.
//
// Contract
// - Ownership: a view never owns memory. The caller (the nanobind layer)
//   keeps the underlying Python arrays alive for the duration of the call.
// - Layout: the last axis is contiguous; every other stride is free and is
//   given in elements (not bytes). This is what lets a backend pass its own
//   row-strided state views without a copy.
// - Threading: views are plain values; concurrent reads are fine, concurrent
//   writes to distinct rows are fine (rows never overlap by validation).
// - Per-row tables: a RowView may instead hold one pointer per row (`table`,
//   indexed by row id, e.g. the fields of one mjData per row); row(r) then
//   returns table[r]; OutView likewise (row_base(r)). Engines address rows
//   only through row()/row_base(), so they need not know which layout they
//   are given.
// - Errors: none here; shapes and strides are validated before a view is made.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace mjrefresh {

// (rows, cols) matrix of T with a free row stride, or with a per-row table.
template <class T>
struct RowView {
  T* data = nullptr;
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t row_stride = 0;     // elements between row r and r+1
  T* const* table = nullptr;  // if set: row r starts at table[r] (data unused)

  bool valid() const { return data != nullptr || table != nullptr; }
  T* row(int64_t r) const { return table != nullptr ? table[r] : data + r * row_stride; }
};

// (rows, items, width) array of T: item i of row r starts at
// data + r*row_stride + i*item_stride; the width axis is contiguous.
template <class T>
struct ItemView {
  T* data = nullptr;
  int64_t rows = 0;
  int64_t items = 0;
  int64_t width = 0;
  int64_t row_stride = 0;
  int64_t item_stride = 0;

  bool valid() const { return data != nullptr; }
  T* item(int64_t r, int64_t i) const { return data + r * row_stride + i * item_stride; }
};

// Output arrays may be float64 or float32; the engine writes through this.
enum class OutType { kFloat64, kFloat32 };

// An output: (rows, items, width) of float64 or float32 with the width axis
// contiguous; item i of row r starts at row_base(r) + i*item_stride (in
// elements). (N, C) matrices such as sensordata are C items of width 1.
struct OutView {
  void* data = nullptr;
  OutType type = OutType::kFloat64;
  int64_t rows = 0, items = 0, width = 0, row_stride = 0, item_stride = 0;
  void* const* table = nullptr;  // if set: row r starts at table[r] (data unused)
  bool valid() const { return data != nullptr || table != nullptr; }
  // Where row r starts; engines address a row's items from here.
  void* row_base(int64_t r) const {
    if (table != nullptr) return table[r];
    const int64_t size = type == OutType::kFloat64 ? sizeof(double) : sizeof(float);
    return static_cast<char*>(data) + r * row_stride * size;
  }
};

// Copy `n` doubles to an output location of either precision.
inline void store(void* base, OutType type, int64_t offset, const double* src, int n) {
  if (type == OutType::kFloat64) {
    double* dst = static_cast<double*>(base) + offset;
    for (int i = 0; i < n; ++i) dst[i] = src[i];
  } else {
    float* dst = static_cast<float*>(base) + offset;
    for (int i = 0; i < n; ++i) dst[i] = static_cast<float>(src[i]);
  }
}

// Copy a long run of doubles (a row's sensordata column range) with
// non-temporal stores: outputs of thousands of rows do not fit in cache, and
// streaming stores skip the read-for-ownership of each destination line.
// Measured on the quadruped tracking refresh (260 columns, N=4096, exact
// engine, 1 thread, 2-vCPU AMD EPYC VM): copy-out fell from 0.31 to 0.12
// us/row (re-measure: python -m bench.research.floor, with plain stores).
// Callers must
// issue store_fence() before other threads read the outputs.
inline void store_stream(void* base, OutType type, int64_t offset, const double* src, int n) {
#if defined(__SSE2__)
  if (type == OutType::kFloat64 && n >= 16) {
    double* dst = static_cast<double*>(base) + offset;
    int i = 0;
    if (reinterpret_cast<uintptr_t>(dst) % 16 != 0) {
      dst[0] = src[0];
      i = 1;
    }
    for (; i + 2 <= n; i += 2) _mm_stream_pd(dst + i, _mm_loadu_pd(src + i));
    for (; i < n; ++i) dst[i] = src[i];
    return;
  }
#endif
  store(base, type, offset, src, n);
}

// Orders this thread's non-temporal stores before what follows.
inline void store_fence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

// Item `item` of row `row` (item outputs never use a row table).
inline void store_item(const OutView& o, int64_t row, int64_t item, const double* src) {
  store(o.data, o.type, row * o.row_stride + item * o.item_stride, src, static_cast<int>(o.width));
}

}  // namespace mjrefresh
