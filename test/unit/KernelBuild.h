//===- KernelBuild.h - hand-built kernel ASTs for the codegen tests -*- C++ -*-===//
//
// Kernel ASTs shaped like linear.json's (RANGE/END/INDEX/STORE/REDUCE/ALU
// over PARAMs), built with Context::get, and a runner that compiles a LINEAR
// with compileLinear and exposes its host buffers by slot.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Codegen/Schedule.h"

#include "GraphBuild.h"

#include <doctest/doctest.h>

namespace tgc::testing {

struct KB {
  Context c;
  const UOp *op(Op o, DType dt, std::vector<const UOp *> src, Value arg = {}) { return c.get(o, dt, std::move(src), std::move(arg)); }
  const UOp *ci(int64_t v, DType dt = dtypes::WeakInt) { return c.constInt(v, dt); }
  const UOp *cf(double v, DType dt = dtypes::WeakFloat) { return c.constFloat(v, dt); }
  const UOp *invalid() { return c.get(Op::CONST, dtypes::WeakInt, {}, Value::invalid()); }
  const UOp *p(int64_t slot, DType dt, int64_t n) { return param(c, slot, dt, {n}); }
  const UOp *idx(const UOp *buf, const UOp *i) { return op(Op::INDEX, buf->dtype(), {buf, i}); }
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
  void go() {
    Status s = cs->run(bufs->pointers());
    REQUIRE_MESSAGE(s.ok(), (s.ok() ? "" : s.error().str()));
  }
};

} // namespace tgc::testing
