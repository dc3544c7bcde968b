// Unit tests for callify and rangeify: movement ops as index arithmetic,
// realize decisions and kernel counts on small tensor graphs (the kernel
// counts tinygrad gives for them, pipeline-schedule.md §3.4), and the shape
// of the kernels and kernel graph.
#include "IR/Symbolic.h"
#include "IR/TextFormat.h"
#include "Schedule/Callify.h"
#include "Schedule/RangeifyIndexing.h"
#include "Schedule/RangeifyMovement.h"
#include "Schedule/RangeifyPasses.h"
#include "Schedule/Sugar.h"

#include <doctest/doctest.h>

using namespace tgc;
using namespace tgc::rangeify;

namespace {

// A tiny tensor-graph builder in tinygrad's vocabulary.
struct T {
  Context &c;
  int64_t slot = 1;
  Value dev = Value::string("CPU");

  const UOp *buffer(int64_t n, DType dt = dtypes::Float32) { return newBuffer(c, dev, n, dt, slot++); }
  const UOp *tensor(const IShape &s, DType dt = dtypes::Float32) { return reshape(buffer(maxNumel(s), dt), s); }
  const UOp *alu(Op op, const UOp *a, const UOp *b) { return mk(op, {a, b}); }
  const UOp *fconst(double v) { return c.constFloat(v); }
  // tinygrad's _rop over `axes`, keepdim=false
  const UOp *reduce(const UOp *x, const char *op, std::vector<int64_t> axes) {
    IShape s = shapeOf(x), keep;
    std::vector<int64_t> perm = axes;
    for (size_t i = 0; i < s.size(); ++i)
      if (std::find(axes.begin(), axes.end(), int64_t(i)) == axes.end()) {
        perm.push_back(int64_t(i));
        keep.push_back(s[i]);
      }
    const UOp *r = c.get(Op::REDUCE, x->dtype(), {permute(x, perm)},
                         Value::tuple({Value::enumMember("Ops", op), Value::integer(int64_t(axes.size()))}));
    return reshape(r, keep);
  }
  const UOp *sinkOf(std::vector<const UOp *> outs) { return sink(c, outs); }
};

size_t countCalls(const UOp *kernelGraph) {
  ToposortOptions o;
  o.enterCalls = false;
  size_t n = 0;
  for (const UOp *u : toposort(kernelGraph, o)) n += u->is(Op::CALL);
  return n;
}

// callify + get_kernel_graph on a tensor-graph SINK; returns the kernel graph.
const UOp *schedule(const UOp *tensorSink) {
  Result<CallifyResult> r = callify(tensorSink, firstFreeBufferSlot(std::span<const UOp *const>(&tensorSink, 1)));
  REQUIRE(r.ok());
  return kernelGraph(r->call->src(0));
}

} // namespace

TEST_CASE("rangeify: movement ops as index expressions") {
  Context c;
  const UOp *r0 = range(c, 4, 0), *r1 = range(c, 8, 1);
  SUBCASE("permute swaps index expressions") {
    auto in = applyMovement(c, Op::PERMUTE, {8, 4}, {1, 0}, {r0, r1});
    REQUIRE(in.size() == 2);
    CHECK(in[0] == r1);
    CHECK(in[1] == r0);
  }
  SUBCASE("expand drops the new axes") {
    auto in = applyMovement(c, Op::EXPAND, {8}, {4}, {r0, r1});
    REQUIRE(in.size() == 1);
    CHECK(in[0] == r1);
  }
  SUBCASE("shrink offsets, flip mirrors") {
    auto in = applyMovement(c, Op::SHRINK, {10, 8}, {2, 4, 0, 8}, {r0, r1});
    CHECK(in[0] == (UOpRef(r0) + 2).get());
    CHECK(in[1] == r1);
    auto fl = applyMovement(c, Op::FLIP, {4, 8}, {1, 0}, {r0, r1});
    CHECK(fl[0] == (3 - UOpRef(r0)).get());
  }
  SUBCASE("reshape merges back to the ranges") {
    // (4,8) read as (32,) and back: the div/mod of r0*8+r1 folds to r0 and r1
    UOpRef flat = UOpRef(r0) * 8 + r1;
    auto in = applyMovement(c, Op::RESHAPE, {4, 8}, {32}, {flat});
    REQUIRE(in.size() == 2);
    CHECK(in[0] == r0);
    CHECK(in[1] == r1);
  }
  SUBCASE("pad gates the index with a valid") {
    const UOp *r = range(c, 7, 0);
    auto in = applyMovement(c, Op::PAD, {4}, {1, 7}, {r});
    REQUIRE(in.size() == 1);
    CHECK(in[0]->is(Op::WHERE));
    CHECK(isInvalid(in[0]->src(2)));
  }
}

TEST_CASE("rangeify: memoized RESHAPE index lists are what a fresh computation gives") {
  // the memos (per index list, and per PLACEHOLDER sink as tinygrad's
  // _apply_reshape cache) must answer exactly what the computation would
  auto reshapeIn = [](Context &c, int64_t firstAxis) {
    const UOp *r0 = range(c, 6, firstAxis), *r1 = range(c, 4, firstAxis + 1);
    return applyMovement(c, Op::RESHAPE, {2, 3, 4}, {6, 4}, {r0, UOpRef(r1) + 0});
  };
  auto textOf = [](const UOp *u) {
    Graph g;
    g.roots = {u};
    return printText(g);
  };
  Context shared, fresh1, fresh2;
  std::vector<const UOp *> first = reshapeIn(shared, 0);
  CHECK(reshapeIn(shared, 0) == first); // a hit on the index list
  // other ranges of the same sizes: a hit on the PLACEHOLDER form, substituted back to these ranges
  std::vector<const UOp *> other = reshapeIn(shared, 5);
  std::vector<const UOp *> want0 = reshapeIn(fresh1, 0), want5 = reshapeIn(fresh2, 5);
  REQUIRE(first.size() == 3);
  REQUIRE(other.size() == 3);
  for (size_t i = 0; i < 3; ++i) {
    CHECK(textOf(first[i]) == textOf(want0[i]));
    CHECK(textOf(other[i]) == textOf(want5[i]));
  }
  // the ranges of the second list are its own
  CHECK(rangeCache().rangesOf(other) != rangeCache().rangesOf(first));
}

TEST_CASE("rangeify: a RESHAPE of bare ranges skips the simplification and gives the same") {
  // a list of RANGEs and CONSTs is already simplified (its RANGE bounds are at
  // least 2), so reshapeIndex takes it as it is; the same list reached through
  // the simplifier (r + 0 folds to r) must give the same index expressions
  auto textOf = [](const std::vector<const UOp *> &us) {
    Graph g;
    g.roots = us;
    return printText(g);
  };
  auto reshapeIn = [](Context &c, bool throughSimplify) {
    const UOp *r0 = range(c, 6, 0), *r1 = range(c, 4, 1);
    const UOp *b = throughSimplify ? (UOpRef(r1) + 0).get() : r1;
    // a repeated range and a constant axis: one PLACEHOLDER per distinct range, in order
    return applyMovement(c, Op::RESHAPE, {4, 3, 2, 2}, {4, 6, 2, 1}, {b, r0, b, c.constInt(0)});
  };
  Context bare, simplified;
  std::vector<const UOp *> got = reshapeIn(bare, false), want = reshapeIn(simplified, true);
  REQUIRE(got.size() == 4);
  CHECK(textOf(got) == textOf(want));
  // the premise: symbolic leaves such a list alone, but folds a RANGE of bound 1
  Context c;
  const UOp *leaves = sink(c, {range(c, 6, 0), range(c, 2, 1), c.constInt(3)});
  CHECK(symSimplify(leaves) == leaves);
  const UOp *unit = sink(c, {range(c, 1, 2)});
  CHECK(symSimplify(unit) != unit);
}

TEST_CASE("rangeify: a RESHAPE that only adds or drops size-1 axes reads the matching ranges") {
  // the div/mod chain of such a reshape folds to the range of the matching
  // axis (and 0 for a size-1 input axis); reshapeIndex builds that directly
  Context c;
  const UOp *r0 = range(c, 4, 0), *r1 = range(c, 8, 1), *zero = c.constInt(0);
  auto in = applyMovement(c, Op::RESHAPE, {4, 8}, {1, 4, 1, 8}, {zero, r0, zero, r1});
  REQUIRE(in.size() == 2);
  CHECK(in[0] == r0);
  CHECK(in[1] == r1);
  auto wider = applyMovement(c, Op::RESHAPE, {1, 4, 8, 1}, {4, 8}, {r0, r1});
  REQUIRE(wider.size() == 4);
  CHECK(wider[0] == zero);
  CHECK(wider[1] == r0);
  CHECK(wider[2] == r1);
  CHECK(wider[3] == zero);
  // merging axes is a real reshape: the flat index is r0*8+r1 (in tinygrad's operand order)
  auto flat = applyMovement(c, Op::RESHAPE, {32}, {4, 8}, {r0, r1});
  REQUIRE(flat.size() == 1);
  CHECK(flat[0]->is(Op::ADD));
  CHECK(rangeCache().ranges(flat[0]).size() == 2);
}

TEST_CASE("rangeify: kernel counts of small fusions") {
  Context c;
  T t{c};
  const UOp *a = t.tensor({4}), *b = t.tensor({4}), *cc = t.tensor({4, 8});
  const UOp *ab = t.alu(Op::ADD, a, b);
  SUBCASE("broadcast of a cheap elementwise value fuses") {
    CHECK(countCalls(schedule(t.sinkOf({t.alu(Op::MUL, cc, reshape(ab, {4, 1}))}))) == 1);
  }
  SUBCASE("a reduce broadcast back needs its own kernel") {
    const UOp *s = t.reduce(cc, "ADD", {1});
    const UOp *e = mk(Op::EXP2, {t.alu(Op::MUL, s, t.fconst(1.4426950408889634))});
    CHECK(countCalls(schedule(t.sinkOf({t.alu(Op::MUL, cc, reshape(e, {4, 1}))}))) == 2);
  }
  SUBCASE("softmax-style max subtraction is two kernels") {
    const UOp *m = reshape(t.reduce(cc, "MAX", {1}), {4, 1});
    const UOp *d = t.alu(Op::ADD, cc, t.alu(Op::MUL, m, t.fconst(-1.0)));
    CHECK(countCalls(schedule(t.sinkOf({mk(Op::EXP2, {d})}))) == 2);
  }
  SUBCASE("a value used twice with the same index stays fused") {
    const UOp *v = t.alu(Op::ADD, t.alu(Op::MUL, ab, t.fconst(2.0)), mk(Op::SQRT, {ab}));
    CHECK(countCalls(schedule(t.sinkOf({v}))) == 1);
  }
  SUBCASE("nested reduces are one kernel") {
    CHECK(countCalls(schedule(t.sinkOf({t.reduce(t.reduce(cc, "ADD", {1}), "ADD", {0})}))) == 1);
  }
  SUBCASE("matmul is one kernel") {
    const UOp *w = t.tensor({8, 3});
    const UOp *x3 = reshape(cc, {4, 1, 8});
    const UOp *w3 = reshape(permute(w, {1, 0}), {1, 3, 8});
    CHECK(countCalls(schedule(t.sinkOf({t.reduce(t.alu(Op::MUL, x3, w3), "ADD", {2})}))) == 1);
  }
}

TEST_CASE("rangeify: very large reductions are split in two kernels") {
  // x.sum() over 65536 elements: the input/output ratio is past 32768, so
  // tinygrad reduces 256 chunks into a contiguous (256,) buffer first
  Context c;
  T t{c};
  const UOp *x = t.tensor({65536});
  const UOp *kg = schedule(t.sinkOf({t.reduce(x, "ADD", {0})}));
  std::vector<const UOp *> calls;
  ToposortOptions o;
  o.enterCalls = false;
  for (const UOp *u : toposort(kg, o))
    if (u->is(Op::CALL)) calls.push_back(u);
  REQUIRE(calls.size() == 2);
  // the first kernel writes the partial sums: a 256-element intermediate BUFFER
  const UOp *partial = calls[0]->src(1);
  REQUIRE(partial->is(Op::BUFFER));
  CHECK(shapeOf(partial) == IShape{256});
  // a (1024,) sum stays one kernel
  CHECK(countCalls(schedule(t.sinkOf({t.reduce(t.tensor({1024}), "ADD", {0})}))) == 1);
}

TEST_CASE("callify: a contiguous view of a buffer needs no kernel") {
  // CONTIGUOUS of a SHRINK that reads one contiguous run of its buffer becomes
  // a view of that buffer: no store, no kernel
  Context c;
  T t{c};
  const UOp *buf = t.buffer(16);
  const UOp *v = c.get(Op::CONTIGUOUS, dtypes::Float32, {shrink(buf, {{4, 12}})});
  Result<CallifyResult> r = callify(t.sinkOf({v}), 100);
  REQUIRE(r.ok());
  CHECK(r->call->src(0)->numSrc() == 0);
  CHECK(countCalls(kernelGraph(r->call->src(0))) == 0);
  // a permuted view is not contiguous: it is copied by a kernel
  const UOp *p = c.get(Op::CONTIGUOUS, dtypes::Float32, {permute(reshape(buf, {4, 4}), {1, 0})});
  Result<CallifyResult> r2 = callify(t.sinkOf({p}), 100);
  REQUIRE(r2.ok());
  CHECK(countCalls(kernelGraph(r2->call->src(0))) == 1);
}

TEST_CASE("rangeify: the kernel graph of a fused reduce") {
  // out = (a+b).sum(1).reshape(2,2)*2+1 over a, b: (4,8) (pipeline-schedule.md §3.13 A)
  Context c;
  T t{c};
  const UOp *a = t.tensor({4, 8}), *b = t.tensor({4, 8});
  const UOp *s = reshape(t.reduce(t.alu(Op::ADD, a, b), "ADD", {1}), {2, 2});
  const UOp *out = t.alu(Op::ADD, t.alu(Op::MUL, s, t.fconst(2.0)), t.fconst(1.0));
  const UOp *kg = schedule(t.sinkOf({out}));
  REQUIRE(countCalls(kg) == 1);
  // SINK(AFTER(PARAM0 out, CALL(kernel, PARAM0, PARAM1 a, PARAM2 b)))
  REQUIRE(kg->numSrc() == 1);
  const UOp *aft = kg->src(0);
  REQUIRE(aft->is(Op::AFTER));
  const UOp *call = aft->src(1);
  REQUIRE(call->is(Op::CALL));
  CHECK(call->numSrc() == 4);
  CHECK(call->src(1) == aft->src(0));
  const UOp *kernel = call->src(0);
  CHECK(kernel->arg().isObj("KernelInfo"));
  // the body: END(STORE(INDEX(PARAM0, r1*2+r2), ...), r1, r2) with one REDUCE over range 0
  const UOp *endU = kernel->src(0);
  REQUIRE(endU->is(Op::END));
  CHECK(endU->numSrc() == 3);
  size_t reduces = 0, params = 0;
  for (const UOp *u : toposort(kernel)) {
    if (u->is(Op::REDUCE)) {
      ++reduces;
      REQUIRE(u->numSrc() == 2);
      CHECK(rangeAxisType(u->src(1)) == "REDUCE");
      CHECK(rangeAxisId(u->src(1)) == 0);
    }
    params += u->is(Op::PARAM);
  }
  CHECK(reduces == 1);
  CHECK(params == 3);
}

TEST_CASE("split-kernels: every kernel PARAM has the dtype and size of its call argument") {
  // debuf's PARAM views are shared between kernels (memoized per slot, dtype,
  // address space, device and shape): kernels over buffers that differ in one
  // of these must still get their own
  Context c;
  T t{c};
  const UOp *f = t.alu(Op::ADD, t.tensor({4, 8}), t.tensor({4, 8}));
  const UOp *i = t.alu(Op::ADD, t.tensor({4, 8}, dtypes::Int32), t.tensor({4, 8}, dtypes::Int32));
  const UOp *g = t.alu(Op::MUL, t.tensor({32}), t.tensor({32}));
  const UOp *h = t.alu(Op::MUL, t.tensor({5, 3}), t.tensor({5, 3}));
  const UOp *kg = schedule(t.sinkOf({f, i, g, h}));
  ToposortOptions o;
  o.enterCalls = false;
  size_t calls = 0, params = 0;
  for (const UOp *call : toposort(kg, o)) {
    if (!call->is(Op::CALL)) continue;
    ++calls;
    for (const UOp *u : toposort(call->src(0))) {
      if (!u->is(Op::PARAM)) continue;
      ++params;
      ParamFields pf = paramFields(u);
      REQUIRE(pf.slot >= 0);
      REQUIRE(size_t(pf.slot) + 1 < call->numSrc());
      const UOp *arg = call->src(size_t(pf.slot) + 1);
      CHECK(u->dtype() == arg->dtype());
      REQUIRE(u->src(0)->is(Op::CONST));
      CHECK(u->src(0)->arg().getInt() == prod(shapeOf(arg)));
    }
  }
  CHECK(calls == 4);
  CHECK(params == 12);
}

TEST_CASE("rangeify: a SINK's device is the first device among its srcs") {
  // runRangeify asks the output SINK's srcs in turn instead of sink->device()
  // (which would compute the properties of every output): the same answer
  Context c;
  T t{c};
  const UOp *constOnly = t.alu(Op::ADD, t.fconst(1.0), t.fconst(2.0));
  const UOp *cpu = t.tensor({4});
  t.dev = Value::string("DISK");
  const UOp *disk = t.tensor({4});
  CHECK(constOnly->device().isNone());
  CHECK(sink(c, {constOnly, cpu, disk})->device() == Value::string("CPU"));
  CHECK(sink(c, {disk, cpu})->device() == Value::string("DISK"));
  CHECK(sink(c, {constOnly})->device().isNone());
}

TEST_CASE("callify: CONTIGUOUS becomes a store into a fresh buffer") {
  Context c;
  T t{c};
  const UOp *a = t.tensor({4, 8});
  const UOp *v = t.alu(Op::MUL, a, t.fconst(2.0));
  const UOp *s = t.sinkOf({v});
  Result<CallifyResult> r = callify(s, 100);
  REQUIRE(r.ok());
  const UOp *call = r->call;
  REQUIRE(call->is(Op::CALL));
  // args: the fresh output buffer (slot 100), then the input
  REQUIRE(call->numSrc() == 3);
  CHECK(paramFields(call->src(1)).slot == 100);
  CHECK(call->src(2) == base(a));
  // the body stores into PARAM 0 behind an AFTER
  const UOp *body = call->src(0);
  REQUIRE(body->numSrc() == 1);
  CHECK(body->src(0)->is(Op::AFTER));
  CHECK(body->src(0)->src(1)->is(Op::STORE));
  // the buffer map names the realized tensor's storage
  REQUIRE(r->bufferMap.size() == 1);
  CHECK(r->bufferMap[0].first == v);
  CHECK(base(r->bufferMap[0].second) == call->src(1));
  CHECK(shapeOf(r->bufferMap[0].second) == IShape{4, 8});
}

TEST_CASE("rangeify: bad input is a diagnostic") {
  Context c;
  T t{c};
  const UOp *a = t.tensor({4});
  // a REDUCE whose arg is not (op, axes) cannot be scheduled: the passes report it, they do not crash
  const UOp *bad = c.get(Op::REDUCE, dtypes::Float32, {a}, Value::string("nope"));
  const UOp *s = t.sinkOf({mk(Op::ADD, {bad, t.fconst(1.0)})});
  std::string message;
  try {
    Result<CallifyResult> r = callify(s, 10);
    if (!r) message = r.error().message;
    else kernelGraph(r->call->src(0));
  } catch (const ScheduleError &e) {
    message = e.diag.message;
  }
  CHECK(message != "");
}

TEST_CASE("ParamFields: fields in any order, the first of a repeated one, and the slot alone") {
  auto arg = [](std::vector<std::string> names, std::vector<Value> values) {
    return Value::object("ParamArg", std::move(names), std::move(values));
  };
  ParamFields given;
  given.slot = 3;
  given.dtype = dtypes::Float32;
  Value inOrder = given.toValue();
  REQUIRE(ParamFields::from(inOrder));
  CHECK(ParamFields::from(inOrder)->slot == 3);
  CHECK(ParamFields::slotOf(inOrder) == 3);
  Value shuffled = arg({"name", "dtype", "slot", "slot", "volatile"},
                       {Value::string("w"), Value::dtype(dtypes::Int32), Value::integer(7), Value::integer(9),
                        Value::boolean(true)});
  std::optional<ParamFields> f = ParamFields::from(shuffled);
  REQUIRE(f);
  CHECK(f->slot == 7);
  CHECK(f->dtype == dtypes::Int32);
  CHECK(f->name == Value::string("w"));
  CHECK(f->isVolatile);
  CHECK(f->addrspace.isNone()); // not given: None, as tinygrad's record would hold
  CHECK(ParamFields::slotOf(shuffled) == 7);
  Value noDType = arg({"slot"}, {Value::integer(1)});
  CHECK(!ParamFields::from(noDType));
  CHECK(!ParamFields::slotOf(noDType));
  CHECK(!ParamFields::slotOf(Value::object("CallInfo", {"slot", "dtype"}, {Value::integer(1), Value::dtype(dtypes::Int32)})));
}
