//===- KernelBuild.h - hand-built kernel ASTs for the codegen tests -*- C++ -*-===//
//
// Kernel ASTs shaped like linear.json's (RANGE/END/INDEX/STORE/REDUCE/ALU
// over PARAMs), built with Context::get, and a runner that compiles a LINEAR
// with compileLinear and exposes its host buffers by slot.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Codegen/Opt/MatmulTiling.h"
#include "Codegen/Exec/CompiledLinear.h"

#include "GraphBuild.h"

#include <doctest/doctest.h>

#include <cmath>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace tgc::testing {

struct KB {
  Context c;
  const UOp *op(Op o, DType dt, std::vector<const UOp *> src, Value arg = {}) { return c.get(o, dt, std::move(src), std::move(arg)); }
  const UOp *ci(int64_t v, DType dt = dtypes::WeakInt) { return c.constInt(v, dt); }
  const UOp *cf(double v, DType dt = dtypes::WeakFloat) { return c.constFloat(v, dt); }
  const UOp *invalid() { return c.get(Op::CONST, dtypes::WeakInt, {}, Value::invalid()); }
  const UOp *p(int64_t slot, DType dt, int64_t n) { return param(c, slot, dt, {n}); }
  /// A variable (tinygrad's Variable as a kernel sees it): PARAM weakint in the ALU address space.
  const UOp *var(const std::string &name, int64_t lo, int64_t hi) {
    return op(Op::PARAM, dtypes::WeakInt, {op(Op::STACK, dtypes::Void, {})},
              paramArg(-1, dtypes::WeakInt, "ALU", {}, Value::tuple({Value::integer(lo), Value::integer(hi)}), name));
  }
  /// A RANGE over `bound`, a constant or a variable (expression).
  const UOp *rangeTo(const UOp *bound, int64_t axis, const char *kind = "LOOP") {
    return op(Op::RANGE, dtypes::WeakInt, {bound}, Value::tuple({Value::integer(axis), Value::enumMember("AxisType", kind)}));
  }
  const UOp *idx(const UOp *buf, const UOp *i) { return op(Op::INDEX, buf->dtype(), {buf, i}); }
  /// x * stride + y, an index (weakint).
  const UOp *lin(const UOp *x, int64_t stride, const UOp *y) {
    return op(Op::ADD, dtypes::WeakInt, {op(Op::MUL, dtypes::WeakInt, {x, ci(stride)}), y});
  }
  const UOp *store(const UOp *buf, const UOp *i, const UOp *v) { return op(Op::STORE, dtypes::Void, {idx(buf, i), v}); }
  const UOp *end(const UOp *body, std::vector<const UOp *> ranges) {
    ranges.insert(ranges.begin(), body);
    return op(Op::END, dtypes::Void, ranges);
  }
  const UOp *reduce(Op r, const UOp *v, std::vector<const UOp *> ranges) {
    ranges.insert(ranges.begin(), v);
    return op(Op::REDUCE, v->dtype(), ranges, Value::tuple({Value::enumMember("Ops", std::string(opName(r))), Value::integer(0)}));
  }
  const UOp *sink(std::vector<const UOp *> effects) { return op(Op::SINK, dtypes::Void, std::move(effects), kernelInfo("k")); }
  const UOp *call(const UOp *body, std::vector<const UOp *> args) {
    args.insert(args.begin(), body);
    return op(Op::CALL, dtypes::Void, args, callInfo());
  }
  const UOp *linear(std::vector<const UOp *> calls) { return op(Op::LINEAR, dtypes::Void, std::move(calls)); }
};

/// Compiles `linear`, fills buffer `slot` i from inputs, runs it, and gives access to every buffer by slot.
struct Run {
  std::unique_ptr<CompiledSchedule> cs;
  std::unique_ptr<HostBuffers> bufs;
  explicit Run(const UOp *linear, const CodegenOptions &opts = {}) {
    auto r = compileLinear(linear, opts);
    REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().str()));
    cs = std::move(*r);
    auto hb = HostBuffers::allocate(cs->plan());
    REQUIRE(hb.ok());
    bufs = std::make_unique<HostBuffers>(std::move(*hb));
  }
  template <typename T> T *at(int64_t slot) {
    int i = cs->plan().indexOfSlot(slot);
    REQUIRE(i >= 0);
    return static_cast<T *>(bufs->data(size_t(i)));
  }
  void go(std::span<const int64_t> vars = {}) {
    Status s = cs->run(bufs->pointers(), vars);
    REQUIRE_MESSAGE(s.ok(), (s.ok() ? "" : s.error().str()));
  }
};

/// The kernel optimization configs a kernel test compares with a reference:
/// every optimization on, each one off, every kernel threaded, strict fp,
/// libm transcendentals, and none at all.
inline std::vector<std::pair<const char *, CodegenOptions>> optimizationConfigs() {
  std::vector<std::pair<const char *, CodegenOptions>> out;
  CodegenOptions all;
  out.push_back({"default", all});
  auto without = [&](const char *name, bool codegen::KernelOptions::*opt) {
    CodegenOptions o = all;
    o.kernel.*opt = false;
    out.push_back({name, o});
  };
  without("no gate versions", &codegen::KernelOptions::versionGates);
  without("no panel packing", &codegen::KernelOptions::packMatmulPanel);
  without("no wide panels", &codegen::KernelOptions::widePanels);
  without("no reduce blocks", &codegen::KernelOptions::reduceBlocks);
  without("no tiling", &codegen::KernelOptions::tileMatmul);
  without("no hoisting", &codegen::KernelOptions::hoistInvariant);
  without("no epilogue split", &codegen::KernelOptions::splitEpilogue);
  without("short reductions unrolled", &codegen::KernelOptions::reductionLoops);
  without("no gate split", &codegen::KernelOptions::splitGates);
  without("no divmod split", &codegen::KernelOptions::splitDivmod);
  without("quotient not unrolled", &codegen::KernelOptions::unrollQuotient);
  without("no reduce divmod split", &codegen::KernelOptions::splitReduceDivmod);
  without("no lane-sum trees", &codegen::KernelOptions::combineLaneSums);
  without("no merged reduce ranges", &codegen::KernelOptions::mergeReduceRanges);
  without("no merged output ranges", &codegen::KernelOptions::mergeOutputRanges);
  without("no overlapping tiles", &codegen::KernelOptions::overlapTiles);
  without("no dot-product tiles", &codegen::KernelOptions::dotTiles);
  without("libm transcendentals", &codegen::KernelOptions::polyTranscendentals);
  without("no packed rows", &codegen::KernelOptions::packRows);
  without("sums keep their factors", &codegen::KernelOptions::factorSums);
  CodegenOptions threaded = all;
  threaded.kernel.threadMinWork = 0;
  out.push_back({"every kernel threaded", threaded});
  CodegenOptions strict = all;
  strict.kernel.strictFP = true;
  out.push_back({"strict fp", strict});
  CodegenOptions none;
  none.kernel = codegen::KernelOptions::none();
  out.push_back({"none", none});
  return out;
}

/// The sizes of a kernel's LOCAL PARAMs (its kernel-local tables and rows).
inline std::vector<int64_t> localBufferSizes(const UOp *sink) {
  std::vector<int64_t> out;
  for (const UOp *u : toposort(sink))
    if (u->is(Op::PARAM) && codegen::isLocalBuffer(u)) out.push_back(u->src(0)->arg().getInt());
  return out;
}
/// The last REDUCE of a kernel in toposort order (its only one in most tests), or nullptr.
inline const UOp *lastReduce(const UOp *kernel) {
  const UOp *red = nullptr;
  for (const UOp *u : toposort(kernel))
    if (u->is(Op::REDUCE)) red = u;
  return red;
}
/// How many nodes of op `o` are in `root`'s graph.
inline int countOps(const UOp *root, Op o) {
  int n = 0;
  for (const UOp *u : toposort(root)) n += u->is(o);
  return n;
}

/// Deterministic test data in [-0.5, 0.5): element i of the input numbered `salt`.
inline float testInput(int64_t i, int64_t salt) { return float((i * 7919 + salt * 104729) % 97) / 97.0f - 0.5f; }

/// The double-precision reference of out[i, j] = init(i, j) + sum_r term(i, j, r)
/// over i < m, j < n, r < kk (row-major), and each element's bound for
/// checkClose: the sum of the magnitudes of its init and terms.
struct Reference {
  std::vector<double> value, bound;
};
template <typename Init, typename Term>
Reference sumReference(int64_t m, int64_t n, int64_t kk, Init init, Term term) {
  Reference out{std::vector<double>(size_t(m * n)), std::vector<double>(size_t(m * n))};
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = init(i, j), mag = std::fabs(acc);
      for (int64_t r = 0; r < kk; ++r) {
        double v = term(i, j, r);
        acc += v, mag += std::fabs(v);
      }
      out.value[size_t(i * n + j)] = acc, out.bound[size_t(i * n + j)] = mag;
    }
  return out;
}

/// Every element of `got` within 1e-5 of the sum of its terms' magnitudes
/// (`bound`) of the double-precision `ref`; reports the first few that are not.
inline void checkClose(const float *got, const std::vector<double> &ref, const std::vector<double> &bound) {
  int64_t bad = 0;
  for (size_t x = 0; x < ref.size(); ++x)
    if (!(std::fabs(double(got[x]) - ref[x]) <= 1e-5 * bound[x] + 1e-6)) {
      if (bad++ < 4) CHECK_MESSAGE(false, "element " << x << ": " << got[x] << " vs " << ref[x]);
    }
  CHECK(bad == 0);
}
inline void checkClose(const float *got, const Reference &ref) { checkClose(got, ref.value, ref.bound); }

} // namespace tgc::testing
