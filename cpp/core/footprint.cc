#include "core/footprint.h"

#include <algorithm>

namespace mjrefresh {
namespace {

// floor(p / q) and ceil(p / q) for q > 0, any sign of p.
int64_t floor_div(int64_t p, int64_t q) { return p >= 0 ? p / q : -((-p + q - 1) / q); }
int64_t ceil_div(int64_t p, int64_t q) { return -floor_div(-p, q); }

// Whether rows [0, na) of `a` and rows [0, nb) of `b`, both with row stride
// s > 0, share a byte. a_base/b_base: where their row 0 starts.
// `other_rows`: a and b are one array, and only a row meeting a different
// row counts (k != 0 below).
bool same_stride_hit(intptr_t a_base, int64_t na, const std::vector<Footprint::Interval>& ia,
                     intptr_t b_base, int64_t nb, const std::vector<Footprint::Interval>& ib,
                     int64_t s, bool other_rows = false) {
  // Row i of a meets row j of b iff k = i - j satisfies
  // d + y.lo - x.hi < k*s < d + y.hi - x.lo, with d = b_base - a_base.
  const int64_t d = static_cast<int64_t>(b_base - a_base);
  for (const auto& x : ia) {
    for (const auto& y : ib) {
      const int64_t kmin = std::max(floor_div(d + y.lo - x.hi, s) + 1, -(nb - 1));
      const int64_t kmax = std::min(ceil_div(d + y.hi - x.lo, s) - 1, na - 1);
      if (kmin <= kmax && !(other_rows && kmin == 0 && kmax == 0)) return true;
    }
  }
  return false;
}

bool same_bytes_hit(intptr_t a_base, const std::vector<Footprint::Interval>& ia, intptr_t b_base,
                    const std::vector<Footprint::Interval>& ib) {
  for (const auto& x : ia) {
    for (const auto& y : ib) {
      if (a_base + x.lo < b_base + y.hi && b_base + y.lo < a_base + x.hi) return true;
    }
  }
  return false;
}

}  // namespace

Footprint Footprint::of(const void* data, int64_t itemsize, int ndim, const int64_t* shape,
                        const int64_t* byte_strides) {
  Footprint f;
  f.base = reinterpret_cast<intptr_t>(data);
  for (int k = 0; k < ndim; ++k) {
    if (shape[k] == 0) return f;  // no bytes
  }
  if (ndim == 0) {
    f.rows = 1;
    f.row_bytes.push_back({0, itemsize});
    return f;
  }
  f.rows = shape[0];
  f.row_stride = f.rows > 1 ? byte_strides[0] : 0;
  if (f.row_stride < 0) {
    f.base += (f.rows - 1) * f.row_stride;
    f.row_stride = -f.row_stride;
  }
  // One row: the innermost axis as one run when contiguous, the axes in
  // between expanded into run offsets.
  int last = ndim - 1;
  int64_t run = itemsize;
  if (last >= 1 && (shape[last] == 1 || byte_strides[last] == itemsize)) {
    run = shape[last] * itemsize;
    --last;
  }
  int64_t count = 1;
  for (int k = 1; k <= last; ++k) count *= shape[k];
  if (count > kMaxIntervals) {  // bounding interval of the row
    int64_t lo = 0, hi = run;
    for (int k = 1; k <= last; ++k) {
      const int64_t span = (shape[k] - 1) * byte_strides[k];
      (span < 0 ? lo : hi) += span;
    }
    f.row_bytes.push_back({lo, hi});
    return f;
  }
  std::vector<int64_t> offsets{0};
  for (int k = 1; k <= last; ++k) {
    std::vector<int64_t> next;
    next.reserve(offsets.size() * shape[k]);
    for (int64_t o : offsets) {
      for (int64_t i = 0; i < shape[k]; ++i) next.push_back(o + i * byte_strides[k]);
    }
    offsets.swap(next);
  }
  std::sort(offsets.begin(), offsets.end());
  for (int64_t o : offsets) {
    if (!f.row_bytes.empty() && o <= f.row_bytes.back().hi) {
      f.row_bytes.back().hi = std::max(f.row_bytes.back().hi, o + run);
    } else {
      f.row_bytes.push_back({o, o + run});
    }
  }
  return f;
}

bool overlaps(const Footprint& a, const Footprint& b) {
  if (a.empty() || b.empty()) return false;
  if (a.hi() <= b.lo() || b.hi() <= a.lo()) return false;
  const bool a_single = a.rows == 1 || a.row_stride == 0;
  const bool b_single = b.rows == 1 || b.row_stride == 0;
  if (a_single && b_single) return same_bytes_hit(a.base, a.row_bytes, b.base, b.row_bytes);
  // One row against many, or the same row stride: modular arithmetic.
  if (a_single)
    return same_stride_hit(a.base, 1, a.row_bytes, b.base, b.rows, b.row_bytes, b.row_stride);
  if (b_single)
    return same_stride_hit(a.base, a.rows, a.row_bytes, b.base, 1, b.row_bytes, a.row_stride);
  if (a.row_stride == b.row_stride) {
    return same_stride_hit(a.base, a.rows, a.row_bytes, b.base, b.rows, b.row_bytes, a.row_stride);
  }
  // Different row strides: each row of the shorter one against the other.
  const Footprint& few = a.rows <= b.rows ? a : b;
  const Footprint& many = a.rows <= b.rows ? b : a;
  const int64_t work = few.rows * static_cast<int64_t>(few.row_bytes.size()) *
                       static_cast<int64_t>(many.row_bytes.size());
  if (work > Footprint::kMaxWork) return true;  // cannot prove them disjoint cheaply
  for (int64_t i = 0; i < few.rows; ++i) {
    if (same_stride_hit(few.base + i * few.row_stride, 1, few.row_bytes, many.base, many.rows,
                        many.row_bytes, many.row_stride)) {
      return true;
    }
  }
  return false;
}

bool rows_overlap(const Footprint& f) {
  if (f.empty() || f.rows < 2) return false;
  if (f.row_stride == 0) return true;
  const int64_t pieces = static_cast<int64_t>(f.row_bytes.size());
  if (pieces * pieces > Footprint::kMaxWork) return true;  // cannot prove it cheaply
  return same_stride_hit(f.base, f.rows, f.row_bytes, f.base, f.rows, f.row_bytes, f.row_stride,
                         /*other_rows=*/true);
}

}  // namespace mjrefresh
