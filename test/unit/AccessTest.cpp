//===- AccessTest.cpp - per-CALL reads and writes (call_access) -----------===//
//
// The reference's test_call_access.py cases (pipeline-schedule.md §5.7), plus
// the operand forms pm_add_loads does and does not turn into reads.
//
//===----------------------------------------------------------------------===//
#include "KernelGraphBuilder.h"

#include "IR/Graph.h"
#include "Schedule/Access.h"

#include <doctest/doctest.h>

using namespace tgc;
using namespace tgc::sched;
using tgc::testing::KG;

namespace {
using Slots = std::vector<int64_t>;
using Args = std::vector<const UOp *>;

CallAccess accessOf(const UOp *call) {
  Result<CallAccess> r = callAccess(call);
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message));
  return *r;
}

std::string errorOf(const UOp *call) {
  Result<CallAccess> r = callAccess(call);
  REQUIRE_FALSE(r.ok());
  return r.error().message;
}
} // namespace

TEST_CASE("access: computed reads and writes, unused arguments are in neither") {
  KG k;
  const UOp *out = k.param(0), *x = k.param(1), *unused = k.param(2);
  const UOp *call = k.call(k.kernel({k.store(out, k.add(x, k.cf(1)))}), {out, x, unused});
  CallAccess a = accessOf(call);
  CHECK(a.ins == Slots{1});
  CHECK(a.outs == Slots{0});
  CHECK(callArgs(call, a.ins) == Args{x});
  CHECK(callArgs(call, a.outs) == Args{out});
}

TEST_CASE("access: a read-modify-write is in both sets") {
  KG k;
  const UOp *out = k.param(0), *x = k.param(1);
  const UOp *call = k.call(k.kernel({k.store(out, k.add(out, x))}), {out, x});
  CallAccess a = accessOf(call);
  CHECK(callArgs(call, a.ins) == Args{out, x});
  CHECK(callArgs(call, a.outs) == Args{out});
}

TEST_CASE("access: a body that only lists a parameter has no effects") {
  KG k;
  const UOp *x = k.param(0);
  CallAccess a = accessOf(k.call(k.kernel({x}), {x}));
  CHECK(a.ins.empty());
  CHECK(a.outs.empty());
}

TEST_CASE("access: a compiled PROGRAM reports its ProgramInfo") {
  KG k;
  const UOp *out = k.param(0), *x = k.param(1);
  const UOp *sink = k.kernel({k.store(out, k.load(x))});
  SinkAccess s = computeSinkAccess(sink);
  CHECK(s.globals == Slots{0, 1});
  const UOp *call = k.call(k.program(sink, KG::programInfo(s.globals, s.ins, s.outs)), {out, x});
  CallAccess a = accessOf(call);
  CHECK(callArgs(call, a.ins) == Args{x});
  CHECK(callArgs(call, a.outs) == Args{out});
}

TEST_CASE("access: a nested LINEAR maps its calls' slots back to the outer arguments") {
  KG k;
  const UOp *a = k.param(0), *b = k.param(1), *c = k.param(2);
  // inner: slot 0 (bound to b) = slot 1 (bound to a) + 1
  const UOp *inner = k.call(k.kernel({k.store(a, k.add(b, k.cf(1)))}), {b, a});
  const UOp *outer = k.call(k.linear({inner}), {a, b, c});
  CallAccess acc = accessOf(outer);
  CHECK(callArgs(outer, acc.ins) == Args{a});
  CHECK(callArgs(outer, acc.outs) == Args{b});
  // An empty LINEAR touches nothing.
  CallAccess none = accessOf(k.call(k.linear({}), {a}));
  CHECK(none.ins.empty());
  CHECK(none.outs.empty());
}

TEST_CASE("access: COPY reads slot 1 and writes slot 0") {
  KG k;
  const UOp *out = k.param(0), *x = k.param(1, 1, "PYTHON");
  const UOp *copy = k.ctx.get(Op::COPY, dtypes::Float32, {x}, Value::string("CPU"));
  const UOp *call = k.call(copy, {out, x});
  CallAccess a = accessOf(call);
  CHECK(callArgs(call, a.ins) == Args{x});
  CHECK(callArgs(call, a.outs) == Args{out});
  // A COPY call needs both arguments.
  CHECK(errorOf(k.call(copy, {out})) == "invalid CALL access slot");
}

TEST_CASE("access: opaque bodies are rejected, never guessed from the arguments") {
  KG k;
  const UOp *x = k.param(0);
  CHECK(errorOf(k.call(k.program(k.sink({x})), {x})) == "cannot compute accesses for opaque Ops.PROGRAM");
  const UOp *custom =
      k.ctx.get(Op::CUSTOM, dtypes::Void, {x}, Value::tuple({Value::string(""), Value::dtype(dtypes::Void)}));
  CHECK(errorOf(k.call(k.kernel({custom}), {x})) == "cannot compute accesses for opaque Ops.SINK");
  const UOp *fn = k.ctx.get(Op::CUSTOM_FUNCTION, dtypes::Void, {}, Value::string("encdec"));
  CHECK(errorOf(k.call(fn, {x})) == "cannot compute accesses for opaque Ops.CUSTOM_FUNCTION");
  // A SINK that contains a CALL is opaque too.
  const UOp *nested = k.call(k.kernel({k.store(x, k.cf(1))}), {x});
  CHECK(errorOf(k.call(k.sink({nested}), {x})) == "cannot compute accesses for opaque Ops.SINK");
  // A LINEAR fails when one of its calls does.
  CHECK(errorOf(k.call(k.linear({k.call(k.program(k.sink({x})), {x})}), {x})) ==
        "cannot compute accesses for opaque Ops.PROGRAM");
}

TEST_CASE("access: slots outside the arguments or the program's globals are invalid") {
  KG k;
  const UOp *arg = k.param(0);
  for (int64_t slot : {-1, 1}) {
    CAPTURE(slot);
    const UOp *prog = k.program(k.sink({arg}), KG::programInfo({0}, {slot}, {}));
    CHECK(errorOf(k.call(prog, {arg, arg})) == "invalid CALL access slot");
  }
  // A computed body whose PARAM slot has no argument.
  const UOp *out = k.param(0), *x = k.param(3);
  CHECK(errorOf(k.call(k.kernel({k.store(out, k.add(x, k.cf(1)))}), {out, x})) == "invalid CALL access slot");
}

TEST_CASE("access: a compiled program may not write an aliased argument") {
  KG k;
  const UOp *a = k.param(0), *b = k.param(1);
  const UOp *sink = k.kernel({k.store(a, k.load(b))});
  SinkAccess s = computeSinkAccess(sink);
  const UOp *prog = k.program(sink, KG::programInfo(s.globals, s.ins, s.outs));
  CHECK(errorOf(k.call(prog, {a, a})) == "aliased opaque kernel arguments are unsupported");
  // Two versions of one buffer are still one storage.
  const UOp *v = k.after(a, {k.call(k.kernel({k.store(a, k.cf(2))}), {a})});
  CHECK(errorOf(k.call(prog, {v, a})) == "aliased opaque kernel arguments are unsupported");
  // Distinct storage is fine, and so is a computed SINK body with aliased arguments.
  CHECK(callAccess(k.call(prog, {a, b})).ok());
  CHECK(callAccess(k.call(sink, {a, a})).ok());
}

TEST_CASE("access: indexed reads, REDUCE operands and stored values are reads") {
  KG k;
  const UOp *out = k.param(0, 4), *x = k.param(1, 4), *y = k.param(2, 4), *idxOnly = k.param(3, 4);
  const UOp *i = k.range(4);
  const UOp *r = k.range(4, 1);
  // out[i] = sum_r x[r] * y[i]; idxOnly is only INDEXed, never used as a value
  const UOp *red = k.ctx.get(Op::REDUCE, dtypes::Float32, {k.mul(k.index(x, r), k.index(y, i)), r},
                             Value::tuple({Value::enumMember("Ops", "ADD"), Value::integer(0)}));
  const UOp *dead = k.index(idxOnly, i);
  const UOp *body = k.kernel({k.end(k.store(k.index(out, i), red), i), dead});
  CallAccess a = accessOf(k.call(body, {out, x, y, idxOnly}));
  CHECK(a.ins == Slots{1, 2});
  CHECK(a.outs == Slots{0});
  // A copy kernel: the stored value is a buffer, so it is read.
  const UOp *copy = k.kernel({k.end(k.store(k.index(out, i), k.index(x, i)), i)});
  CallAccess c = accessOf(k.call(copy, {out, x}));
  CHECK(c.ins == Slots{1});
  CHECK(c.outs == Slots{0});
}

TEST_CASE("access: only GLOBAL PARAMs count, local scratch and ALU variables do not") {
  KG k;
  const UOp *out = k.param(0), *x = k.param(1);
  const UOp *local = k.ctx.get(Op::BUFFER, dtypes::Float32, {k.cint(1)}, KG::paramArg(0, dtypes::Float32, "", "LOCAL"));
  const UOp *var = k.ctx.get(Op::PARAM, dtypes::Int32, {k.ctx.get(Op::STACK, dtypes::WeakInt, {})},
                             KG::paramArg(-1, dtypes::Int32, "", "ALU"));
  const UOp *fill = k.store(local, k.add(x, k.cf(1)));
  const UOp *body = k.kernel(
      {fill, k.store(out, k.add(local, k.ctx.get(Op::CAST, dtypes::Float32, {var}, Value::dtype(dtypes::Float32))))});
  SinkAccess s = computeSinkAccess(body);
  CHECK(s.ins == Slots{1});
  CHECK(s.outs == Slots{0});
  CHECK(s.globals == Slots{0, 1});
}

TEST_CASE("access: views, casts and AFTERs resolve to the PARAM under them") {
  KG k;
  const UOp *out = k.param(0, 4), *x = k.param(1, 4);
  const UOp *i = k.range(4);
  // out[i] = float(AFTER(x, ...)[i]): the AFTER is ordering inside a body, the read is of x.
  const UOp *xv = k.after(x, {k.store(k.index(x, i), k.cf(0))});
  const UOp *cast = k.ctx.get(Op::CAST, dtypes::Float32, {k.index(xv, i)}, Value::dtype(dtypes::Float32));
  const UOp *reshaped = k.ctx.get(Op::RESHAPE, dtypes::Float32, {out, k.cint(4)});
  CallAccess a = accessOf(k.call(k.kernel({k.end(k.store(k.index(reshaped, i), cast), i)}), {out, x}));
  CHECK(a.ins == Slots{1});
  CHECK(a.outs == Slots{0, 1}); // the inner STORE into x is a real write
}

TEST_CASE("access: the pass lists every call's slots and argument roles, named as in the text dump") {
  KG k;
  const UOp *out = k.param(0), *x = k.param(1);
  const UOp *call = k.call(k.kernel({k.store(out, k.add(x, k.cf(1)))}), {out, x, x});
  Graph g;
  g.roots = {k.sink({k.after(out, {call})})};
  AccessPass pass;
  REQUIRE(pass.run(g).ok());
  // %0 = CONST 1, %1 = out, %2 = x, %3 = 1.0, %4 = ADD, %5 = STORE, %6 = body, %7 = CALL
  CHECK(pass.analysisText(g) == "// access: %7 SINK \"test\" reads [1] writes [0]\n"
                                "//   arg 0 %1 PARAM slot=0: write\n"
                                "//   arg 1 %2 PARAM slot=1: read\n"
                                "//   arg 2 %2 PARAM slot=1: unused\n");
  // A graph with an opaque call fails the pass.
  g.roots = {k.sink({k.after(x, {k.call(k.program(k.sink({x})), {x})})})};
  Status st = pass.run(g);
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().message == "cannot compute accesses for opaque Ops.PROGRAM");
}
