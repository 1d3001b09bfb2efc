// The bytes a strided array occupies, and an exact test whether two arrays
// share any byte: the one overlap check of a refresh (every array a call
// reads or writes: rows, dirty masks, state, mocap, time, model fields,
// outputs).
//
// Contract
// - Footprint::of(base, itemsize, shape, strides) describes an array of
//   any rank (strides in bytes, any sign, 0 allowed): its first axis is
//   "rows" (count, stride), the other axes are expanded into the byte
//   intervals of one row (relative to the row's start, sorted, merged).
//   Rank 0 is one row of one item. An array with a zero-length axis has no
//   bytes. A row made of more than kMaxIntervals pieces is described by its
//   bounding interval (conservative: it may report an overlap that is not
//   there, never miss one).
// - overlaps(a, b) is exact for the footprints: true iff some byte is in
//   both. Arrays whose bounds do not meet cost a comparison; interleaved
//   layouts (a backend's row holding qpos, qvel and sensordata side by side:
//   the same row stride) are decided in O(pieces^2) with modular
//   arithmetic; different row strides walk the rows of the shorter array.
//   When that walk would exceed kMaxWork steps it answers true (cannot
//   prove them disjoint), like numpy's shares_memory with max_work.
// - rows_overlap(f): whether two different rows of one array share a byte
//   (a row stride of 0, or smaller than what a row spans where the shifted
//   rows meet), decided exactly from the row intervals like overlaps();
//   past kMaxWork interval pairs it answers true.
// - Plain values; no allocation beyond the interval vectors; thread-safe.
#pragma once

#include <cstdint>
#include <vector>

namespace mjrefresh {

struct Footprint {
  struct Interval {
    int64_t lo, hi;  // [lo, hi) bytes from a row's start
  };
  static constexpr int kMaxIntervals = 4096;
  static constexpr int64_t kMaxWork = 1 << 22;

  intptr_t base = 0;       // the first row's start (after normalising a negative row stride)
  int64_t rows = 0;        // 0: the array has no bytes
  int64_t row_stride = 0;  // bytes, >= 0 (0: every row is the same bytes)
  std::vector<Interval> row_bytes;

  static Footprint of(const void* data, int64_t itemsize, int ndim, const int64_t* shape,
                      const int64_t* byte_strides);
  bool empty() const { return rows == 0 || row_bytes.empty(); }
  // [lo, hi) of every byte of the array.
  intptr_t lo() const { return base + row_bytes.front().lo; }
  intptr_t hi() const { return base + (rows - 1) * row_stride + row_bytes.back().hi; }
};

bool overlaps(const Footprint& a, const Footprint& b);
bool rows_overlap(const Footprint& f);

}  // namespace mjrefresh
