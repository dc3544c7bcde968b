//===- ArrayCompare.h - compare computed arrays with tinygrad's -*- C++ -*-===//
//
// Shared by the corpus tests that run generated code (CorpusRunTest,
// CorpusModelTest): a dense host array, the element-wise comparison with an
// expected .npy, and the tolerances by op family.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Codegen/Exec/CompiledLinear.h"
#include "IR/DType.h"
#include "Runtime/Npy.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

namespace tgc::testing {

/// A dense host tensor.
struct HostArray {
  DType dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;
};

inline int64_t numelOf(const std::vector<int64_t> &s) {
  return std::accumulate(s.begin(), s.end(), int64_t(1), std::multiplies<>());
}

inline double asDouble(const uint8_t *p, DType dt) {
  if (dt == dtypes::Float32) return std::bit_cast<float>(*reinterpret_cast<const uint32_t *>(p));
  if (dt == dtypes::Float64) return std::bit_cast<double>(*reinterpret_cast<const uint64_t *>(p));
  if (dt == dtypes::Float16) return double(std::bit_cast<_Float16>(*reinterpret_cast<const uint16_t *>(p)));
  if (dt == dtypes::BFloat16) return std::bit_cast<float>(uint32_t(*reinterpret_cast<const uint16_t *>(p)) << 16);
  return 0;
}

struct Compare {
  bool ok = true;
  double maxAbs = 0, maxRel = 0;
  std::string why;
};

/// Ints and bools must match exactly; floats within atol + rtol*|want| (NaN
/// matches NaN, infinities must be equal).
inline Compare compareArrays(const HostArray &got, const rt::NpyArray &want, double rtol, double atol) {
  Compare c;
  size_t item = size_t(got.dtype.itemsize());
  if (want.data.size() != got.data.size()) {
    c.ok = false;
    c.why = "size " + std::to_string(got.data.size()) + " bytes, expected " + std::to_string(want.data.size());
    return c;
  }
  if (!got.dtype.isFloat()) {
    c.ok = got.data == want.data;
    if (!c.ok) c.why = "integer/bool contents differ";
    return c;
  }
  for (size_t i = 0; i < got.data.size(); i += item) {
    double g = asDouble(&got.data[i], got.dtype), w = asDouble(&want.data[i], got.dtype);
    if (std::isnan(w) || std::isnan(g) || std::isinf(w) || std::isinf(g)) {
      if (!((std::isnan(w) && std::isnan(g)) || g == w)) {
        c.ok = false;
        c.why = "element " + std::to_string(i / item) + ": got " + std::to_string(g) + ", expected " + std::to_string(w);
      }
      continue;
    }
    double err = std::fabs(g - w);
    c.maxAbs = std::max(c.maxAbs, err);
    if (w != 0) c.maxRel = std::max(c.maxRel, err / std::fabs(w));
    if (err > atol + rtol * std::fabs(w) && c.ok) {
      c.ok = false;
      c.why = "element " + std::to_string(i / item) + ": got " + std::to_string(g) + ", expected " + std::to_string(w);
    }
  }
  return c;
}

/// Tolerances by op family: libm transcendentals vs tinygrad's polynomials
/// (<= 2 ULP each, amplified through later ops) and FMA contraction in long
/// reductions; everything else rounds identically up to contraction.
struct Tolerance {
  double rtol = 1e-5, atol = 1e-6;
  bool transcendental = false;
};

inline Tolerance toleranceFor(const SchedulePlan &plan) {
  Tolerance t;
  for (const ScheduleKernel &k : plan.kernels)
    for (const UOp *u : toposort(k.sink)) t.transcendental |= u->isIn(OpSet{Op::EXP2, Op::LOG2, Op::SIN, Op::POW});
  if (t.transcendental) t.rtol = 1e-4, t.atol = 1e-5;
  return t;
}

} // namespace tgc::testing
