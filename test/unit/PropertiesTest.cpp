//===- PropertiesTest.cpp - shape, device and addrspace of UOps -----------===//
#include "GraphBuild.h"

#include "IR/UOp.h"

#include <doctest/doctest.h>

using namespace tgc;
using namespace tgc::testing;
using enum Op;

namespace {

/// The shape as text, or "none" / "error: ..." so that a CHECK shows what went wrong.
std::string shapeOf(const UOp *u) {
  if (!u->shapeError().empty()) return "error: " + u->shapeError();
  return u->shape() ? shapeStr(*u->shape()) : "none";
}

const DType F32 = dtypes::Float32;

} // namespace

TEST_CASE("shape: leaves and shape operands") {
  Context ctx;
  CHECK(shapeOf(ctx.constFloat(1.5)) == "[]");
  CHECK(shapeOf(buffer(ctx, 0, F32, 4096)) == "[4096]");
  CHECK(shapeOf(param(ctx, 0, F32, {4, 8})) == "[4, 8]");
  CHECK(shapeOf(param(ctx, 0, F32, {})) == "[]"); // STACK() is the empty shape
  CHECK(shapeOf(range(ctx, 16, 0)) == "[]");
  CHECK(shapeOf(ctx.get(SPECIAL, dtypes::WeakInt, {ctx.constInt(4)}, Value::string("gidx0"))) == "[]");
  CHECK(shapeOf(shapeArg(ctx, {8, 16, 32})) == "[3]");
  // A STACK of vectors stacks along a new leading axis.
  const UOp *v = shapeArg(ctx, {1, 2});
  CHECK(shapeOf(ctx.get(STACK, dtypes::WeakInt, {v, v, v})) == "[3, 2]");
  // A float in a shape operand is not a size.
  const UOp *bad = ctx.get(PARAM, F32, {ctx.constFloat(2.0)}, paramArg(0, F32));
  CHECK(bad->shape() == nullptr);
  CHECK(bad->shapeError().find("not an int") != std::string::npos);
}

TEST_CASE("shape: nodes of one shape share it, static sizes included") {
  Context ctx;
  const UOp *a = param(ctx, 0, F32, {4, 8}), *b = param(ctx, 1, F32, {4, 8});
  const UOp *sum = ctx.get(ADD, F32, {a, b});
  REQUIRE(a->shape());
  CHECK(a->shape() == b->shape()); // one copy per distinct shape in a Context
  CHECK(sum->shape() == a->shape());
  REQUIRE(a->staticShape());
  CHECK(*a->staticShape() == std::vector<int64_t>{4, 8});
  CHECK(a->staticShape() == sum->staticShape());
  CHECK(param(ctx, 2, F32, {8, 4})->shape() != a->shape());
  // scalars too, and a shape without every size static has no static sizes
  CHECK(ctx.constFloat(1.0)->shape() == range(ctx, 16, 0)->shape());
  CHECK(ctx.constFloat(1.0)->staticShape()->empty());
  const UOp *n = ctx.get(BUFFER, dtypes::WeakInt, {ctx.get(STACK, dtypes::Void, {})},
                         paramArg(-1, dtypes::WeakInt, "ALU", {}, ints({1, 64}), "n"));
  const UOp *p = ctx.get(PARAM, F32, {ctx.get(STACK, dtypes::WeakInt, {ctx.constInt(4), n})}, paramArg(0, F32));
  REQUIRE(p->shape());
  CHECK(p->staticShape() == nullptr);
}

TEST_CASE("shape: symbolic dims are the UOps of the shape operand") {
  Context ctx;
  const UOp *n = ctx.get(BUFFER, dtypes::WeakInt, {ctx.get(STACK, dtypes::Void, {})},
                         paramArg(-1, dtypes::WeakInt, "ALU", {}, ints({1, 64}), "n"));
  const UOp *p = ctx.get(PARAM, F32, {ctx.get(STACK, dtypes::WeakInt, {ctx.constInt(4), n})}, paramArg(0, F32));
  REQUIRE(p->shape());
  REQUIRE(p->shape()->size() == 2);
  CHECK((*p->shape())[0] == Dim{4, nullptr});
  CHECK((*p->shape())[1].sym == n);
  CHECK(shapeStr(*p->shape()) == "[4, ?]");
  // The same symbol broadcasts with itself and with 1, not with a number.
  const UOp *ones = reshape(ctx, buffer(ctx, 1, F32, 4), {4, 1});
  CHECK(shapeOf(ctx.get(ADD, F32, {p, ones})) == "[4, ?]");
  const UOp *four = reshape(ctx, buffer(ctx, 2, F32, 16), {4, 4});
  CHECK(shapeOf(ctx.get(ADD, F32, {p, four})).starts_with("error: shape mismatch"));
}

TEST_CASE("shape: RESHAPE keeps the element count") {
  Context ctx;
  const UOp *b = buffer(ctx, 0, F32, 32);
  CHECK(shapeOf(reshape(ctx, b, {4, 8})) == "[4, 8]");
  CHECK(shapeOf(reshape(ctx, reshape(ctx, b, {4, 8}), {2, 2, 8})) == "[2, 2, 8]");
  CHECK(shapeOf(reshape(ctx, reshape(ctx, b, {32}), {})) == "error: bad reshape: [32] -> []");
  CHECK(shapeOf(reshape(ctx, b, {3, 8})) == "error: bad reshape: [32] -> [3, 8]");
  CHECK(shapeOf(reshape(ctx, b, {-4, -8})).starts_with("error: shape can't contain negative numbers"));
  CHECK(shapeOf(reshape(ctx, buffer(ctx, 1, F32, 1), {})) == "[]");
}

TEST_CASE("shape: EXPAND prepends, PERMUTE reorders") {
  Context ctx;
  const UOp *x = reshape(ctx, buffer(ctx, 0, F32, 24), {2, 3, 4});
  CHECK(shapeOf(ctx.get(EXPAND, F32, {x, shapeArg(ctx, {5})})) == "[5, 2, 3, 4]");
  CHECK(shapeOf(ctx.get(EXPAND, F32, {x, shapeArg(ctx, {6, 7})})) == "[6, 7, 2, 3, 4]");
  CHECK(shapeOf(ctx.get(PERMUTE, F32, {x}, ints({2, 0, 1}))) == "[4, 2, 3]");
  CHECK(shapeOf(ctx.get(PERMUTE, F32, {x}, ints({0, 0, 1}))) == "error: invalid permutation (0, 0, 1) of len 3");
  CHECK(shapeOf(ctx.get(PERMUTE, F32, {x}, ints({1, 0}))) == "error: invalid permutation (1, 0) of len 3");
  CHECK(shapeOf(ctx.get(PERMUTE, F32, {x}, ints({0, 1, 3}))).starts_with("error: invalid permutation"));
}

TEST_CASE("shape: PAD and SHRINK take (offset, size) per axis") {
  Context ctx;
  const UOp *x = reshape(ctx, buffer(ctx, 0, F32, 32), {4, 8});
  auto pad = [&](std::initializer_list<int64_t> off, std::initializer_list<int64_t> size) {
    return ctx.get(PAD, F32, {x, shapeArg(ctx, off), shapeArg(ctx, size)});
  };
  auto shrink = [&](std::initializer_list<int64_t> off, std::initializer_list<int64_t> size) {
    return ctx.get(SHRINK, F32, {x, shapeArg(ctx, off), shapeArg(ctx, size)});
  };
  CHECK(shapeOf(pad({1, 0}, {6, 10})) == "[6, 10]");
  CHECK(shapeOf(pad({0, 0}, {4, 8})) == "[4, 8]");
  CHECK(shapeOf(pad({3, 0}, {6, 8})).starts_with("error: invalid pad")); // 3 + 4 > 6
  CHECK(shapeOf(pad({1}, {6})).starts_with("error: invalid pad"));       // one axis for two
  CHECK(shapeOf(shrink({1, 2}, {3, 4})) == "[3, 4]");
  CHECK(shapeOf(shrink({0, 6}, {4, 2})) == "[4, 2]");
  CHECK(shapeOf(shrink({0, 6}, {4, 3})).starts_with("error: invalid shrink")); // 6 + 3 > 8
  CHECK(shapeOf(shrink({-1, 0}, {2, 2})).starts_with("error: invalid shrink"));
}

TEST_CASE("shape: FLIP keeps the shape, REDUCE drops leading axes") {
  Context ctx;
  const UOp *x = reshape(ctx, buffer(ctx, 0, F32, 32), {4, 8});
  CHECK(shapeOf(ctx.get(FLIP, F32, {x}, Value::tuple({Value::boolean(true), Value::boolean(false)}))) == "[4, 8]");
  CHECK(shapeOf(ctx.get(FLIP, F32, {x}, Value::tuple({Value::boolean(true)}))).starts_with("error: bad flip"));
  CHECK(shapeOf(ctx.get(FLIP, F32, {x}, ints({1, 0}))).starts_with("error: bad flip"));
  auto reduce = [&](int64_t n) {
    return ctx.get(REDUCE, F32, {x}, Value::tuple({Value::enumMember("Ops", "ADD"), Value::integer(n)}));
  };
  CHECK(shapeOf(reduce(0)) == "[4, 8]");
  CHECK(shapeOf(reduce(1)) == "[8]");
  CHECK(shapeOf(reduce(2)) == "[]");
  CHECK(shapeOf(reduce(3)).starts_with("error: invalid reduce axis count"));
}

TEST_CASE("shape: broadcasting right-aligns and stretches size-1 axes") {
  Context ctx;
  const UOp *a = reshape(ctx, buffer(ctx, 0, F32, 512), {16, 32});
  const UOp *b = buffer(ctx, 1, F32, 32);
  CHECK(shapeOf(ctx.get(ADD, F32, {a, b})) == "[16, 32]");
  CHECK(shapeOf(ctx.get(MUL, F32, {b, a})) == "[16, 32]");
  CHECK(shapeOf(ctx.get(ADD, F32, {a, ctx.constFloat(1.0)})) == "[16, 32]");
  const UOp *col = reshape(ctx, buffer(ctx, 2, F32, 4), {4, 1});
  const UOp *row = reshape(ctx, buffer(ctx, 3, F32, 5), {1, 5});
  CHECK(shapeOf(ctx.get(MAX, F32, {col, row})) == "[4, 5]");
  const UOp *cmp = ctx.get(CMPLT, dtypes::Bool, {col, row});
  CHECK(shapeOf(ctx.get(WHERE, F32, {cmp, b, ctx.constFloat(0.0)})) == "error: shape mismatch: objects cannot be broadcast "
                                                                          "to a single shape: [4, 5], [32], []");
  CHECK(shapeOf(ctx.get(WHERE, F32, {cmp, row, ctx.constFloat(0.0)})) == "[4, 5]");
  const UOp *c3 = buffer(ctx, 4, F32, 3);
  CHECK(shapeOf(ctx.get(ADD, F32, {a, c3})) ==
        "error: shape mismatch: objects cannot be broadcast to a single shape: [16, 32], [3]");
  // An operand without a shape cannot be broadcast.
  const UOp *sink = ctx.get(SINK, dtypes::Void, {a});
  CHECK(shapeOf(ctx.get(ADD, F32, {a, sink})).find("has none") != std::string::npos);
}

TEST_CASE("shape: CAST keeps the shape, BITCAST rescales the last axis") {
  Context ctx;
  const UOp *x = reshape(ctx, buffer(ctx, 0, F32, 16), {2, 8});
  CHECK(shapeOf(ctx.get(CAST, dtypes::Int32, {x}, Value::dtype(dtypes::Int32))) == "[2, 8]");
  CHECK(shapeOf(ctx.get(BITCAST, dtypes::UInt8, {x}, Value::dtype(dtypes::UInt8))) == "[2, 32]");
  CHECK(shapeOf(ctx.get(BITCAST, dtypes::Int32, {x}, Value::dtype(dtypes::Int32))) == "[2, 8]");
  CHECK(shapeOf(ctx.get(BITCAST, dtypes::Float64, {x}, Value::dtype(dtypes::Float64))) == "[2, 4]");
  const UOp *bytes = buffer(ctx, 1, dtypes::UInt8, 6);
  CHECK(shapeOf(ctx.get(BITCAST, F32, {bytes}, Value::dtype(F32))).starts_with("error: unsupported size in bitcast"));
  CHECK(shapeOf(ctx.get(BITCAST, dtypes::Float16, {bytes}, Value::dtype(dtypes::Float16))) == "[3]");
  CHECK(shapeOf(ctx.get(BITCAST, dtypes::Int32, {ctx.constFloat(1.0, F32)}, Value::dtype(dtypes::Int32))) == "[]");
}

TEST_CASE("shape: passthrough ops, INDEX, STAGE, GETTUPLE") {
  Context ctx;
  const UOp *b = buffer(ctx, 0, F32, 8);
  const UOp *v = ctx.get(MUL, F32, {b, ctx.constFloat(2.0)});
  const UOp *st = ctx.get(STORE, dtypes::Void, {b, v});
  CHECK(shapeOf(st) == "[8]");
  CHECK(shapeOf(ctx.get(AFTER, F32, {b, st})) == "[8]");
  for (Op op : {CONTIGUOUS, DETACH, CONTIGUOUS_BACKWARD, NEG, SQRT}) CHECK(shapeOf(ctx.get(op, F32, {v})) == "[8]");
  CHECK(shapeOf(ctx.get(COPY, F32, {v}, Value::string("CPU"))) == "[8]");

  const UOp *p = param(ctx, 0, F32, {4, 8});
  const UOp *i = range(ctx, 4, 0);
  CHECK(shapeOf(ctx.get(INDEX, F32, {p, i})) == "[8]");
  CHECK(shapeOf(ctx.get(INDEX, F32, {p, i, range(ctx, 8, 1)})) == "[]");
  CHECK(shapeOf(ctx.get(INDEX, F32, {p, shapeArg(ctx, {0, 1, 2})})) == "[3, 8]");
  const UOp *end = ctx.get(END, dtypes::Void, {ctx.get(STORE, dtypes::Void, {ctx.get(INDEX, F32, {p, i}), p}), i});
  CHECK(shapeOf(end) == "[8]"); // END and STORE pass their first source's shape through

  CHECK(shapeOf(ctx.get(STAGE, F32, {ctx.constFloat(0.0, F32), range(ctx, 8, 2), range(ctx, 3, 3)})) == "[8, 3]");

  const UOp *x = param(ctx, 0, F32, {2, 3});
  const UOp *tuple = ctx.get(TUPLE, dtypes::Void, {x, ctx.get(SINK, dtypes::Void, {x})});
  const UOp *fn = ctx.get(FUNCTION, dtypes::Void, {tuple, buffer(ctx, 1, F32, 6)}, callInfo());
  CHECK(shapeOf(ctx.get(GETTUPLE, F32, {fn}, Value::integer(0))) == "[2, 3]");
  CHECK(shapeOf(ctx.get(GETTUPLE, dtypes::Void, {fn}, Value::integer(1))) == "none");
  CHECK(shapeOf(ctx.get(GETTUPLE, F32, {fn}, Value::integer(2))).starts_with("error: GETTUPLE index 2"));
}

TEST_CASE("shape: void and structural ops have none") {
  Context ctx;
  const UOp *p = param(ctx, 0, F32, {8});
  const UOp *sink = ctx.get(SINK, dtypes::Void, {p}, kernelInfo());
  const UOp *call = ctx.get(CALL, dtypes::Void, {sink, buffer(ctx, 0, F32, 8)}, callInfo());
  for (const UOp *u : {sink, call, ctx.get(LINEAR, dtypes::Void, {call}), ctx.get(TUPLE, dtypes::Void, {p}),
                       ctx.get(GROUP, dtypes::Void, {})}) {
    CHECK(u->shape() == nullptr);
    CHECK(u->shapeError().empty());
  }
}

TEST_CASE("shape: an error is reported where it happens, users point at it") {
  Context ctx;
  const UOp *bad = reshape(ctx, buffer(ctx, 0, F32, 32), {5});
  const UOp *user = ctx.get(NEG, F32, {bad});
  const UOp *user2 = ctx.get(ADD, F32, {user, ctx.constFloat(1.0)});
  CHECK(bad->shapeError() == "bad reshape: [32] -> [5]");
  CHECK(user->shape() == nullptr);
  CHECK(user->shapeError() == "source 0 (%" + std::to_string(bad->id()) + " RESHAPE) has an invalid shape");
  CHECK(user2->shapeError().starts_with("source 0 (%"));
}

TEST_CASE("shape: nodes that share a source's shape agree with the general rules at the edges") {
  Context ctx;
  const UOp *x = param(ctx, 0, F32, {4, 8}), *y = param(ctx, 1, F32, {4, 8}), *row = param(ctx, 2, F32, {8});
  const UOp *cond = ctx.get(CMPLT, dtypes::Bool, {x, y});
  CHECK(ctx.get(WHERE, F32, {cond, x, y})->shape() == x->shape());
  CHECK(shapeOf(ctx.get(ADD, F32, {x, row})) == "[4, 8]"); // different shapes broadcast
  CHECK(shapeOf(ctx.get(NOOP, F32, {x})) == "[4, 8]");
  CHECK(shapeOf(ctx.get(NOOP, dtypes::Void, {})) == "none");
  CHECK(shapeOf(ctx.get(CAST, dtypes::Int32, {x, y}, Value::dtype(dtypes::Int32))).starts_with("error: CAST must have 1"));
  CHECK(shapeOf(ctx.get(NEG, F32, {x, y})).starts_with("error: NEG must have 1"));
  const UOp *noShape = ctx.get(SINK, dtypes::Void, {x});
  CHECK(shapeOf(ctx.get(ADD, F32, {x, noShape})).find("requires a shape") != std::string::npos);
  CHECK(shapeOf(ctx.get(ADD, F32, {noShape, noShape})).find("requires a shape") != std::string::npos);
  const UOp *bad = reshape(ctx, buffer(ctx, 0, F32, 32), {5});
  CHECK(shapeOf(ctx.get(ADD, F32, {bad, bad})).starts_with("error: source 0 (%"));
  CHECK(shapeOf(ctx.get(CONTIGUOUS, F32, {bad})).starts_with("error: source 0 (%"));
}

TEST_CASE("shape: a million-node chain is computed without deep recursion") {
  Context ctx;
  const UOp *x = buffer(ctx, 0, F32, 3);
  for (int i = 0; i < 1000000; ++i) x = ctx.get(NEG, F32, {x});
  REQUIRE(x->shape());
  CHECK(shapeStr(*x->shape()) == "[3]");
  CHECK(x->device() == Value::string("CPU"));
  CHECK(x->addrspace() == AddrSpace::GLOBAL);
}

TEST_CASE("device: from the arg, else the first source that has one") {
  Context ctx;
  const UOp *b = buffer(ctx, 0, F32, 8, "CPU");
  CHECK(b->device() == Value::string("CPU"));
  CHECK(ctx.constFloat(1.0)->device().isNone());
  CHECK(ctx.get(ADD, F32, {ctx.constFloat(1.0), b})->device() == Value::string("CPU"));
  CHECK(ctx.get(COPY, F32, {b}, Value::string("DISK"))->device() == Value::string("DISK"));
  const UOp *b2 = buffer(ctx, 1, F32, 8, "CPU:1");
  const UOp *ms = ctx.get(MSTACK, F32, {b, b2});
  CHECK(ms->device() == Value::tuple({Value::string("CPU"), Value::string("CPU:1")}));
  CHECK(ctx.get(MSELECT, F32, {ms}, Value::integer(1))->device() == Value::string("CPU:1"));
  CHECK(ctx.get(MSELECT, F32, {ms}, Value::integer(2))->device().isNone());
  CHECK(ctx.get(ALLREDUCE, F32, {ms}, Value::tuple({Value::enumMember("Ops", "ADD"), Value::string("X")}))->device() ==
        Value::string("X"));
  // Kernel-side params carry no device unless the exporter gave one.
  CHECK(param(ctx, 0, F32, {8})->device().isNone());
  // The AFTER of a buffer is on the buffer's device even if its deps are elsewhere.
  const UOp *st = ctx.get(STORE, dtypes::Void, {b2, ctx.get(COPY, F32, {b}, Value::string("CPU:1"))});
  CHECK(ctx.get(AFTER, F32, {b, st})->device() == Value::string("CPU"));
}

TEST_CASE("addrspace: declared by PARAM/BUFFER, ALU for loop values, inherited otherwise") {
  Context ctx;
  const UOp *p = param(ctx, 0, F32, {8});
  const UOp *local = ctx.get(BUFFER, F32, {ctx.constInt(16)}, paramArg(0, F32, "LOCAL"));
  const UOp *var = ctx.get(PARAM, dtypes::WeakInt, {ctx.get(STACK, dtypes::Void, {})},
                           paramArg(-1, dtypes::WeakInt, "ALU", {}, ints({0, 9})));
  const UOp *i = range(ctx, 8, 0);
  CHECK(p->addrspace() == AddrSpace::GLOBAL);
  CHECK(local->addrspace() == AddrSpace::LOCAL);
  CHECK(var->addrspace() == AddrSpace::ALU);
  CHECK(i->addrspace() == AddrSpace::ALU);
  const UOp *idx = ctx.get(INDEX, F32, {p, i});
  CHECK(idx->addrspace() == AddrSpace::GLOBAL);
  CHECK(ctx.get(LOAD, F32, {idx})->addrspace() == AddrSpace::ALU);
  CHECK(ctx.get(RESHAPE, F32, {local, shapeArg(ctx, {4, 4})})->addrspace() == AddrSpace::LOCAL);
  CHECK(ctx.get(ADD, dtypes::WeakInt, {i, ctx.constInt(1)})->addrspace() == AddrSpace::ALU); // CONST has none
  CHECK(ctx.get(ADD, dtypes::WeakInt, {i, var})->addrspace() == AddrSpace::ALU);
  CHECK_FALSE(ctx.get(ADD, F32, {idx, ctx.get(LOAD, F32, {idx})})->addrspace().has_value()); // GLOBAL vs ALU
  CHECK_FALSE(ctx.constInt(3)->addrspace().has_value());
  CHECK_FALSE(ctx.get(SINK, dtypes::Void, {p})->addrspace().has_value());
}
