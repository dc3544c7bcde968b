//===- IRCoreTest.cpp - ops, dtypes, values, interning, toposort ----------===//
#include "IR/DType.h"
#include "IR/Ops.h"
#include "IR/Pass.h"
#include "IR/UOp.h"

#include <algorithm>
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <mutex>
#include <thread>

using namespace tgc;

TEST_CASE("ops: names round-trip and groups match tinygrad's GroupOp") {
  for (unsigned i = 0; i < kNumOps; ++i) CHECK(opFromName(opName(Op(i))) == Op(i));
  CHECK(opName(Op::CONTIGUOUS_BACKWARD) == "CONTIGUOUS_BACKWARD");
  CHECK_FALSE(opFromName("FOO").has_value());
  CHECK(group::Commutative.contains(Op::CMPNE));
  CHECK_FALSE(group::Commutative.contains(Op::SUB));
  CHECK(group::Movement.contains(Op::SHRINK));
  CHECK(group::ALU.contains(Op::WHERE));
  CHECK(group::ALU.contains(Op::EXP2));
  CHECK_FALSE(group::ALU.contains(Op::CAST));
  CHECK(group::Elementwise.contains(Op::BITCAST));
  int n = 0;
  group::Reduce.forEach([&](Op) { ++n; });
  CHECK(n == 3);
}

TEST_CASE("dtypes: the promotion table gives a least upper bound of any list") {
  using namespace dtypes;
  // without a common upper bound there is none; nothing added has none either
  CHECK(!leastUpperDType({Void, Int32}));
  CHECK(!leastUpperDType({Int32, DType()}));
  CHECK(!DTypeJoin().result());
  CHECK(leastUpperDType({Void, Void}) == Void);
  CHECK(leastUpperDType({FP8E4M3, FP8E5M2FNUZ}) == Float16);
  CHECK(leastUpperDType({Bool}) == Bool);
  for (DType a : all()) {
    if (a == Void) continue;
    for (DType b : all()) {
      if (b == Void) continue;
      DType ab = leastUpperDType({a, b});
      CAPTURE(a.name());
      CAPTURE(b.name());
      REQUIRE(ab);
      CHECK(ab == leastUpperDType({b, a}));
      CHECK(leastUpperDType({a, ab}) == ab); // above both
      CHECK(leastUpperDType({b, ab}) == ab);
      for (DType c : all()) {
        if (c == Void) continue;
        DTypeJoin join;
        for (DType d : {a, b, c}) join.add(d);
        CHECK(join.result() == leastUpperDType(std::vector<DType>{a, b, c}));
        // the order is no lattice (tinygrad's neither): fp8e4m3 and fp8e5m2 meet at float16, though
        // bfloat16 is above both too; the least upper dtype is the smallest (DType::operator<) common one
        if (leastUpperDType({a, c}) == c && leastUpperDType({b, c}) == c) CHECK(!(c < ab));
      }
    }
  }
}

TEST_CASE("dtypes: promotion follows tinygrad's lattice") {
  using namespace dtypes;
  CHECK(leastUpperDType({Int8, UInt8}) == Int16);
  CHECK(leastUpperDType({Bool, WeakInt}) == WeakInt);
  CHECK(leastUpperDType({WeakInt, Int8}) == Int8);
  CHECK(leastUpperDType({WeakInt, Float16}) == Float16);
  CHECK(leastUpperDType({WeakFloat, Int32}) == WeakFloat); // ints sit below weakfloat
  CHECK(leastUpperDType({WeakFloat, Float16}) == Float16);
  CHECK(leastUpperDType({Int64, UInt64}) == WeakFloat);
  CHECK(leastUpperDType({Float16, BFloat16}) == Float32);
  CHECK(leastUpperDType({UInt32, Int32}) == Int64);
  CHECK(leastUpperDType({Float32, Float64}) == Float64);
  CHECK(leastUpperFloat(WeakInt) == WeakFloat);
  CHECK(leastUpperFloat(Int32) == Float32);
  CHECK(leastUpperFloat(Float16) == Float16);
  CHECK(sumAccDType(UInt8) == UInt32);
  CHECK(sumAccDType(Bool) == Int32);
  CHECK(sumAccDType(Float16) == Float32);
  CHECK(sumAccDType(Float64) == Float64);
  CHECK(strongDType(WeakInt) == Int32);
  CHECK(weakDType(Float16) == WeakFloat);
  CHECK(canLosslessCast(UInt8, Int16));
  CHECK_FALSE(canLosslessCast(Int16, UInt8));
  CHECK(fromName("bfloat16") == BFloat16);
  CHECK_FALSE(fromName("float8"));
  CHECK(Bool.itemsize() == 1);
  CHECK(WeakInt.bitsize() == 800);
  CHECK(Int8.minInt() == -128);
  CHECK(UInt16.maxInt() == 65535);
}

TEST_CASE("values: tinygrad's equality for floats, kinds never mix") {
  CHECK(Value::floating(NAN) == Value::floating(NAN));
  CHECK(Value::floating(0.0) != Value::floating(-0.0));
  CHECK(Value::floating(1.0) != Value::integer(1));
  CHECK(Value::boolean(true) != Value::integer(1));
  CHECK(Value::uinteger(5) == Value::integer(5));
  CHECK(Value::uinteger(std::numeric_limits<uint64_t>::max()).kind() == Value::Kind::UInt);
  Value p = Value::object("ParamArg", {"slot", "dtype"}, {Value::integer(0), Value::dtype(dtypes::Float32)});
  Value q = Value::object("ParamArg", {"slot", "dtype"}, {Value::integer(0), Value::dtype(dtypes::Float32)});
  CHECK(p == q);
  CHECK(p.hash() == q.hash());
  CHECK(p.field("dtype")->getDType() == dtypes::Float32);
  CHECK(p.toString() == "ParamArg(slot=0, dtype=dtypes.float32)");
  CHECK(Value::tuple({Value::integer(1)}).toString() == "(1,)");
  CHECK(Value::tuple({Value::enumMember("Ops", "ADD"), Value::integer(0)}).toString() == "(Ops.ADD, 0)");
  CHECK(Value::string("a\"b\n").toString() == "\"a\\\"b\\n\"");
}

TEST_CASE("values: floats print as Python's repr") {
  CHECK(pyFloatRepr(1.0) == "1.0");
  CHECK(pyFloatRepr(1.4426950408889634) == "1.4426950408889634");
  CHECK(pyFloatRepr(1e-05) == "1e-05");
  CHECK(pyFloatRepr(0.0001) == "0.0001");
  CHECK(pyFloatRepr(1e16) == "1e+16");
  CHECK(pyFloatRepr(123456789012345.0) == "123456789012345.0");
  CHECK(pyFloatRepr(-0.0) == "-0.0");
  CHECK(pyFloatRepr(-2.5e-10) == "-2.5e-10");
  CHECK(pyFloatRepr(INFINITY) == "inf");
  CHECK(pyFloatRepr(-INFINITY) == "-inf");
  CHECK(pyFloatRepr(NAN) == "nan");
  CHECK(pyFloatRepr(0.1) == "0.1");
}

TEST_CASE("uop: hash-consing makes structural equality pointer equality") {
  Context ctx;
  const UOp *a = ctx.constInt(4);
  const UOp *b = ctx.constInt(4);
  CHECK(a == b);
  CHECK(ctx.constInt(4, dtypes::Int32) != a);
  CHECK(ctx.constFloat(0.0) != ctx.constFloat(-0.0));
  CHECK(ctx.constFloat(NAN) == ctx.constFloat(NAN));
  const UOp *add1 = ctx.get(Op::ADD, dtypes::WeakInt, {a, ctx.constInt(1)});
  const UOp *add2 = ctx.get(Op::ADD, dtypes::WeakInt, {ctx.constInt(4), ctx.constInt(1)});
  CHECK(add1 == add2);
  CHECK(add1->withSrc({a, ctx.constInt(1)}) == add1);
  CHECK(add1->withTag(Value::tuple({})) != add1);
  CHECK(add1->withTag(Value::tuple({}))->withTag(Value()) == add1);
  size_t before = ctx.size();
  ctx.get(Op::ADD, dtypes::WeakInt, {a, ctx.constInt(1)});
  CHECK(ctx.size() == before);
}

TEST_CASE("uop: toposort is post-order, sources left to right, and iterative") {
  Context ctx;
  const UOp *x = ctx.constInt(1), *y = ctx.constInt(2);
  const UOp *s = ctx.get(Op::ADD, dtypes::WeakInt, {y, x});
  const UOp *m = ctx.get(Op::MUL, dtypes::WeakInt, {s, x});
  auto order = toposort(m);
  REQUIRE(order.size() == 4);
  CHECK(order[0] == y);
  CHECK(order[1] == x);
  CHECK(order[2] == s);
  CHECK(order[3] == m);
  // gate stops descent below a node but still lists it
  ToposortOptions gated;
  gated.gate = [&](const UOp *u) { return u != s; };
  CHECK(toposort(m, gated).size() == 3);

  // A million-long chain must not overflow the stack.
  const UOp *chain = x;
  for (int i = 0; i < 1000000; ++i) chain = ctx.get(Op::ADD, dtypes::WeakInt, {chain, y});
  CHECK(toposort(chain).size() == 1000002);
  auto kids = children(std::span<const UOp *const>(&chain, 1));
  CHECK(kids.at(y).size() == 1000000);
}

TEST_CASE("uop: substitute replaces verbatim and keeps sharing") {
  Context ctx;
  const UOp *x = ctx.constInt(1), *y = ctx.constInt(2), *z = ctx.constInt(3);
  const UOp *s = ctx.get(Op::ADD, dtypes::WeakInt, {x, x});
  const UOp *root = ctx.get(Op::SINK, dtypes::Void, {s, x});
  const UOp *out = substitute(root, {{x, y}});
  CHECK(out == ctx.get(Op::SINK, dtypes::Void, {ctx.get(Op::ADD, dtypes::WeakInt, {y, y}), y}));
  CHECK(substitute(root, {{z, y}}) == root);
  // a replacement is not itself rewritten (walk semantics)
  CHECK(substitute(root, {{x, s}})->src(1) == s);
}

TEST_CASE("uop: substitute keeps a node its predicate marks unchanged, without walking below it") {
  Context ctx;
  const UOp *x = ctx.constInt(1), *y = ctx.constInt(2);
  const UOp *kept = ctx.get(Op::MUL, dtypes::WeakInt, {x, x});
  const UOp *walked = ctx.get(Op::ADD, dtypes::WeakInt, {x, x});
  const UOp *root = ctx.get(Op::SINK, dtypes::Void, {kept, walked});
  std::vector<const UOp *> asked;
  const UOp *out = substitute(root, {{x, y}}, [&](const UOp *u) {
    asked.push_back(u);
    return u == kept;
  });
  CHECK(out == ctx.get(Op::SINK, dtypes::Void, {kept, ctx.get(Op::ADD, dtypes::WeakInt, {y, y})}));
  // the predicate was asked about the kept node, which stayed as it was
  CHECK(std::find(asked.begin(), asked.end(), kept) != asked.end());
  CHECK(substitute(root, {{x, y}}, [](const UOp *) { return false; }) == substitute(root, {{x, y}}));
}

TEST_CASE("pass: pipelines parse against the registry") {
  registerIRPasses();
  auto ok = parsePipeline("verify, verify");
  REQUIRE(ok.ok());
  CHECK(ok->size() == 2);
  auto bad = parsePipeline("verify,nope");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message.find("unknown pass 'nope'") != std::string::npos);
  CHECK(parsePipeline("").ok());
  CHECK_FALSE(parsePipeline("verify,,verify").ok());
}

TEST_CASE("pass: a preparation runs each pass's prepare once, on another thread, before wait() returns") {
  std::mutex mu;
  std::vector<std::pair<std::string, std::thread::id>> ran;
  auto prepareAs = [&](std::string name) {
    return [&, name] {
      std::lock_guard<std::mutex> lock(mu);
      ran.emplace_back(name, std::this_thread::get_id());
    };
  };
  PassInfo a{"a", "", nullptr, {}, prepareAs("a")};
  PassInfo none{"none", "", nullptr};
  PassInfo b{"b", "", nullptr, {}, prepareAs("b")};
  PassPreparation prep({&a, &none, &b});
  prep.wait();
  std::lock_guard<std::mutex> lock(mu);
  REQUIRE(ran.size() == 2);
  CHECK(ran[0].first == "a");
  CHECK(ran[1].first == "b");
  CHECK(ran[0].second != std::this_thread::get_id());
  prep.wait(); // a second wait is a no-op
}
