//===- GraphRewriteTest.cpp - graph_rewrite drivers ------------------------===//
#include "IR/GraphRewrite.h"

#include <doctest/doctest.h>

#include <unordered_map>

using namespace tgc;

namespace {
struct G {
  Context c;
  const UOp *r(int64_t axis, int64_t end = 4) {
    return c.get(Op::RANGE, dtypes::WeakInt, {c.constInt(end)}, Value::tuple({Value::integer(axis)}));
  }
  const UOp *k(int64_t v) { return c.constInt(v); }
  const UOp *add(const UOp *x, const UOp *y) { return c.get(Op::ADD, dtypes::WeakInt, {x, y}); }
  const UOp *mul(const UOp *x, const UOp *y) { return c.get(Op::MUL, dtypes::WeakInt, {x, y}); }
  const UOp *sink(std::vector<const UOp *> s) { return c.get(Op::SINK, dtypes::Void, std::move(s)); }
};

const PatternMatcher &identities() {
  static const PatternMatcher pm({
      rule(var("x") + 0, [](Match &m) { return m["x"]; }),
      rule(var("x") * 1, [](Match &m) { return m["x"]; }),
      rule(var("x") * 0, [](Match &m) { return m["x"].constLike(0); }),
  });
  return pm;
}

// Substitutes nodes by a map held in the rewrite's context.
using SubMap = std::unordered_map<const UOp *, const UOp *>;
const PatternMatcher &substitution() {
  static const PatternMatcher pm({rule(UPat().named("x"), [](Match &m) -> const UOp * {
    auto &map = m.ctx<SubMap>();
    auto it = map.find(m["x"]);
    return it == map.end() ? nullptr : it->second;
  })});
  return pm;
}
} // namespace

TEST_CASE("graph_rewrite: post-order rules reach a fixed point") {
  G g;
  const UOp *x = g.r(0);
  // ((x*1)+0)*1 + (x*0): every layer folds, and 0 from x*0 makes the outer +0 fold too
  const UOp *e = g.add(g.mul(g.add(g.mul(x, g.k(1)), g.k(0)), g.k(1)), g.mul(x, g.k(0)));
  auto r = graphRewrite(e, identities());
  REQUIRE(r.ok());
  CHECK(*r == x);
}

TEST_CASE("graph_rewrite: rebuilt nodes are matched again") {
  G g;
  const UOp *x = g.r(0);
  // the outer ADD only matches `x + 0` after its src (y*0) became 0
  const UOp *e = g.add(x, g.mul(g.r(1), g.k(0)));
  CHECK(*graphRewrite(e, identities()) == x);
}

TEST_CASE("graph_rewrite: memoized, so shared nodes are rewritten once and sharing survives") {
  G g;
  int calls = 0;
  PatternMatcher pm({rule(UPat(Op::RANGE).named("r"), [&calls](Match &m) -> const UOp * {
    ++calls;
    return m["r"]->arg() == Value::tuple({Value::integer(0)}) ? m.root().ctx().get(Op::RANGE, dtypes::WeakInt, {m["r"]->src(0)}, Value::tuple({Value::integer(9)})) : nullptr;
  })});
  const UOp *x = g.r(0);
  const UOp *shared = g.add(x, g.k(3));
  const UOp *e = g.sink({g.mul(shared, shared), g.add(shared, g.k(1))});
  auto r = graphRewrite(e, pm);
  REQUIRE(r.ok());
  CHECK(calls == 2); // once for RANGE 0, once for the RANGE 9 it became
  const UOp *newShared = (*r)->src(0)->src(0);
  CHECK(newShared->src(0)->arg() == Value::tuple({Value::integer(9)}));
  CHECK((*r)->src(0)->src(1) == newShared);
  CHECK((*r)->src(1)->src(0) == newShared);
}

TEST_CASE("graph_rewrite: pre-order (bottomUp) sees srcs before they are rewritten") {
  G g;
  const UOp *x = g.r(0);
  // this rule needs the unrewritten `x*1` below the ADD
  PatternMatcher pm = identities() + PatternMatcher({rule((var("x") * 1) + var("y"), [](Match &m) { return m["y"]; })});
  const UOp *e = g.add(g.mul(x, g.k(1)), g.r(1));
  // post-order: x*1 -> x first, so the ADD rule never sees its pattern
  CHECK(*graphRewrite(e, pm) == g.add(x, g.r(1)));
  // pre-order: the ADD is rewritten first
  RewriteOptions pre;
  pre.bottomUp = true;
  CHECK(*graphRewrite(e, pm, pre) == g.r(1));
  // an explicit bpm next to a pm: the bpm runs first, then the pm finishes the job
  PatternMatcher only({rule((var("x") * 1) + var("y"), [](Match &m) { return m["x"] + m["y"] * 0; })});
  RewriteOptions both;
  both.bpm = &only;
  CHECK(*graphRewrite(e, identities(), both) == x);
}

TEST_CASE("graph_rewrite: unified substitution follows chains, walk takes results verbatim") {
  G g;
  const UOp *a = g.r(0), *b = g.r(1), *c = g.r(2);
  SubMap map{{a, b}, {b, c}};
  const UOp *e = g.add(a, g.k(5));
  RewriteOptions pre;
  pre.bottomUp = true;
  CHECK(*graphRewrite(e, substitution(), map, pre) == g.add(c, g.k(5)));
  pre.walk = true;
  CHECK(*graphRewrite(e, substitution(), map, pre) == g.add(b, g.k(5)));
  // walk + pm: pm runs once per rebuilt node, its result is not rewritten again
  RewriteOptions walk;
  walk.walk = true;
  const UOp *nested = g.mul(g.add(g.mul(a, g.k(1)), g.k(0)), g.k(1));
  CHECK(*graphRewrite(nested, identities(), walk) == a);
}

TEST_CASE("graph_rewrite: substituteRewrite is the pre-order substitution rule, looked up directly") {
  G g;
  const UOp *a = g.r(0), *b = g.r(1), *c = g.r(2), *d = g.r(3);
  RewriteOptions pre;
  pre.bottomUp = true;
  auto viaRule = [&](const UOp *e, SubMap map) { return *graphRewrite(e, substitution(), map, pre); };
  auto direct = [&](const UOp *e, const SubMap &map) { return *substituteRewrite(e, map); };
  const UOp *e = g.mul(g.add(a, g.k(5)), g.add(b, a));
  for (const SubMap &map : std::vector<SubMap>{
           {{a, b}, {b, c}},                      // chains are followed
           {{a, b}, {g.add(b, g.k(5)), d}},       // a rebuilt node that is a key is replaced too
           {{a, a}, {b, c}},                      // a node mapped to itself is kept
           {{e, g.add(a, g.k(1))}, {a, d}},       // a replacement's srcs are substituted
           {{g.k(5), g.k(7)}},                    // not only ranges
       })
    CHECK(direct(e, map) == viaRule(e, map));
  CHECK(direct(e, {{a, b}, {g.add(b, g.k(5)), d}}) == g.mul(d, g.add(b, b)));
  // only the keys' subgraphs are visited when `unchanged` says the rest is kept
  auto kept = substituteRewrite(e, {{a, c}}, [&](const UOp *u) { return u == b; });
  CHECK(*kept == g.mul(g.add(c, g.k(5)), g.add(b, c)));
  // a cycle is the same diagnostic as the rule's
  auto cyc = substituteRewrite(g.add(a, g.k(2)), {{a, b}, {b, a}});
  REQUIRE_FALSE(cyc.ok());
  CHECK(cyc.error().message.find("infinite loop in fixed_point_rewrite") != std::string::npos);
}

TEST_CASE("graph_rewrite: the context object reaches every rule") {
  G g;
  struct Collect {
    std::vector<int64_t> axes;
  } ctx;
  PatternMatcher pm({rule(UPat(Op::RANGE).named("r"), [](Match &m) -> const UOp * {
    m.ctx<Collect>().axes.push_back(m["r"]->arg()[0].getInt());
    return nullptr;
  })});
  CHECK(graphRewrite(g.sink({g.r(3), g.add(g.r(1), g.r(3))}), pm, ctx).ok());
  CHECK(ctx.axes == std::vector<int64_t>{3, 1});
}

TEST_CASE("graph_rewrite: CALL bodies are entered only with enterCalls") {
  G g;
  const UOp *x = g.r(0);
  const UOp *body = g.sink({g.add(x, g.k(0))});
  const UOp *call = g.c.get(Op::CALL, dtypes::Void, {body, g.add(g.r(1), g.k(0))});
  auto r = graphRewrite(call, identities());
  CHECK((*r)->src(0) == body);     // the body is opaque
  CHECK((*r)->src(1) == g.r(1));  // the call's arguments are rewritten
  RewriteOptions enter;
  enter.enterCalls = true;
  r = graphRewrite(call, identities(), enter);
  CHECK((*r)->src(0) == g.sink({x}));
}

TEST_CASE("graph_rewrite: BottomUpGate keeps a node and stops descent") {
  G g;
  // gate at MUL: nothing below a MUL is rewritten; elsewhere +0 folds
  PatternMatcher pm({
      rule(UPat(Op::MUL), [](Match &m) { return m.gate(); }),
      rule(var("x") + 0, [](Match &m) { return m["x"]; }),
  });
  const UOp *inner = g.add(g.r(0), g.k(0));
  const UOp *e = g.add(g.add(g.mul(inner, g.k(2)), g.k(0)), g.add(g.r(1), g.k(0)));
  RewriteOptions pre;
  pre.bottomUp = true;
  auto r = graphRewrite(e, pm, pre);
  REQUIRE(r.ok());
  CHECK(*r == g.add(g.mul(inner, g.k(2)), g.r(1)));
  // gating from a post-order rule is a programming error: reported, not ignored
  auto bad = graphRewrite(e, pm);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message.find("BottomUpGate") != std::string::npos);
}

TEST_CASE("graph_rewrite: dtypes are re-derived when a node is rebuilt over new srcs") {
  G g;
  const UOp *x32 = g.c.get(Op::CAST, dtypes::Int32, {g.r(0)}, Value::dtype(dtypes::Int32));
  const UOp *e = g.c.get(Op::ADD, dtypes::Int32, {x32, g.k(1)});
  // rewrite the CAST to int64: the ADD is rebuilt as int64
  PatternMatcher pm({rule(UPat(Op::CAST).dtype(dtypes::Int32).src({var("x")}),
                          [](Match &m) { return m["x"].cast(dtypes::Int64); })});
  auto r = graphRewrite(e, pm);
  CHECK((*r)->dtype() == dtypes::Int64);
  CHECK((*r)->src(0)->dtype() == dtypes::Int64);
  // srcs that keep their dtypes keep the node's own dtype
  CHECK(rebuildDType(e, std::vector<const UOp *>{x32, g.k(2)}) == dtypes::Int32);
  // WHERE takes the promotion of its branches, comparisons are bool
  const UOp *cond = g.c.get(Op::CMPLT, dtypes::Bool, {g.r(0), g.k(2)});
  CHECK(dtypeFromUOp(Op::WHERE, std::vector<const UOp *>{cond, x32, g.k(0)}, {}) == dtypes::Int32);
  CHECK(dtypeFromUOp(Op::CMPNE, std::vector<const UOp *>{x32, g.k(0)}, {}) == dtypes::Bool);
  CHECK(dtypeFromUOp(Op::SQRT, std::vector<const UOp *>{x32}, {}) == dtypes::Float32);
  CHECK_FALSE(dtypeFromUOp(Op::WHERE, std::vector<const UOp *>{x32, x32, x32}, {}).has_value());
}

TEST_CASE("graph_rewrite: a non-terminating rewrite is a diagnostic") {
  G g;
  RewriteOptions small;
  small.maxSteps = 10000;
  SUBCASE("a rule that keeps producing new nodes") {
    PatternMatcher grow({rule(cvar("c"), [](Match &m) { return m["c"].constLike(m["c"].val() + 1); })});
    auto r = graphRewrite(g.add(g.r(0), g.k(1)), grow, small);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find("graph_rewrite") != std::string::npos);
  }
  SUBCASE("two rules that undo each other") {
    PatternMatcher flip({
        rule(UPat(Op::ADD).src({var("x"), var("y")}), [](Match &m) { return m["y"] + m["x"]; }),
    });
    auto r = graphRewrite(g.add(g.r(0), g.r(1)), flip, small);
    REQUIRE_FALSE(r.ok());
  }
  SUBCASE("a pre-order cycle") {
    const UOp *a = g.r(0), *b = g.r(1);
    SubMap map{{a, b}, {b, a}};
    RewriteOptions pre;
    pre.bottomUp = true;
    auto r = graphRewrite(g.add(a, g.k(2)), substitution(), map, pre);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find("infinite loop in fixed_point_rewrite") != std::string::npos);
  }
  SUBCASE("a rule whose result contains the node it replaces") {
    PatternMatcher wrap({rule(UPat(Op::RANGE).named("r"), [](Match &m) { return m["r"] + 0; })});
    auto r = graphRewrite(g.mul(g.r(0), g.k(3)), wrap, small);
    REQUIRE_FALSE(r.ok());
  }
}

TEST_CASE("graph_rewrite: a rule's failure stops the rewrite with its diagnostic") {
  G g;
  PatternMatcher pm({rule(var("x") / 0, [](Match &m) { return m.fail("division by zero"); })});
  const UOp *e = g.add(g.c.get(Op::FLOORDIV, dtypes::WeakInt, {g.r(0), g.k(0)}), g.k(1));
  auto r = graphRewrite(e, pm);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message == "division by zero");
}

TEST_CASE("graph_rewrite: deep graphs do not recurse") {
  G g;
  // a chain 300000 deep of (... + 0) * 1 layers
  const UOp *x = g.r(0);
  const UOp *e = x;
  for (int i = 0; i < 150000; ++i) e = g.mul(g.add(e, g.k(0)), g.k(1));
  auto r = graphRewrite(e, identities());
  REQUIRE(r.ok());
  CHECK(*r == x);
  RewriteOptions walk;
  walk.walk = true;
  CHECK(*graphRewrite(e, identities(), walk) == x);
  SubMap map{{x, g.r(1)}};
  RewriteOptions pre;
  pre.bottomUp = true;
  auto sub = graphRewrite(e, substitution(), map, pre);
  REQUIRE(sub.ok());
  CHECK(*graphRewrite(*sub, identities()) == g.r(1));
}

// graphRewrite's state is pooled (NodeTable.h): a rewrite nested in a
// callback, one after a failed one, and tables moving between Contexts whose
// ids overlap must each see only their own.
namespace {
const UOp *range(Context &c, int64_t axis) {
  return c.get(Op::RANGE, dtypes::WeakInt, {c.constInt(4)}, Value::tuple({Value::integer(axis)}));
}
const UOp *add(Context &c, const UOp *x, const UOp *y) { return c.get(Op::ADD, dtypes::WeakInt, {x, y}); }
const UOp *mul(Context &c, const UOp *x, const UOp *y) { return c.get(Op::MUL, dtypes::WeakInt, {x, y}); }

// What the nested-rewrite rule below reads: the expression to rewrite again
// from scratch, and what the inner rewrite substitutes in it.
struct Nested {
  const UOp *outerRoot;
  const UOp *original;
  SubMap inner;
  const UOp *innerResult = nullptr;
};
} // namespace

TEST_CASE("graph_rewrite: a rewrite nested in a callback has its own state") {
  Context c;
  const UOp *x = range(c, 0), *y = range(c, 1);
  const UOp *e = add(c, mul(c, x, c.constInt(1)), c.constInt(0)); // (x*1)+0
  const UOp *root = c.get(Op::SINK, dtypes::Void, {e});
  Nested ctx{root, e, {{x, y}}};
  // At the SINK, after the outer rewrite has memoized e -> x, rewrite the
  // original e again with a substitution: shared state would hand back the
  // outer's results (x) instead of the inner's ((y*1)+0).
  PatternMatcher pm = identities() + PatternMatcher({rule(UPat(Op::SINK).named("s"), [](Match &m) -> const UOp * {
                        auto &n = m.ctx<Nested>();
                        if (n.innerResult) return nullptr;
                        auto r = graphRewrite(n.original, substitution(), n.inner);
                        if (!r) return m.fail(r.error());
                        n.innerResult = *r;
                        return nullptr;
                      })});
  auto r = graphRewrite(root, pm, ctx);
  REQUIRE(r.ok());
  CHECK(*r == c.get(Op::SINK, dtypes::Void, {x}));
  CHECK(ctx.innerResult == add(c, mul(c, y, c.constInt(1)), c.constInt(0)));
}

TEST_CASE("graph_rewrite: a failed nested rewrite leaves the outer one intact") {
  Context c;
  const UOp *x = range(c, 0);
  PatternMatcher failing({rule(UPat(Op::RANGE), [](Match &m) { return m.fail("inner failure"); })});
  bool innerFailed = false;
  PatternMatcher outer = identities() + PatternMatcher({rule(UPat(Op::MUL).named("m"), [&](Match &m) -> const UOp * {
                           // rewrite a subgraph with rules that fail midway, then go on
                           innerFailed |= !graphRewrite(m["m"].get(), failing).ok();
                           return nullptr;
                         })});
  const UOp *e = add(c, mul(c, x, c.constInt(2)), c.constInt(0));
  auto r = graphRewrite(e, outer);
  REQUIRE(r.ok());
  CHECK(innerFailed);
  CHECK(*r == mul(c, x, c.constInt(2)));
}

TEST_CASE("graph_rewrite: a rewrite after a failed one starts clean") {
  Context c;
  const UOp *x = range(c, 0), *y = range(c, 1);
  // fail with nodes parked on waitlists and items left on the stack
  PatternMatcher failAtY({rule(UPat(Op::RANGE).named("r"), [&](Match &m) -> const UOp * {
    return m["r"].get() == y ? m.fail("stop") : nullptr;
  })});
  const UOp *e = add(c, mul(c, x, c.constInt(1)), mul(c, y, c.constInt(1)));
  for (int i = 0; i < 3; ++i) {
    REQUIRE_FALSE(graphRewrite(e, failAtY).ok());
    auto r = graphRewrite(e, identities());
    REQUIRE(r.ok());
    CHECK(*r == add(c, x, y));
  }
}

TEST_CASE("graph_rewrite: tables move between Contexts whose ids overlap") {
  // Two contexts built alike: node i of one has the id of node i of the other.
  Context a, b;
  const UOp *ea = add(a, mul(a, range(a, 0), a.constInt(1)), a.constInt(0));
  const UOp *eb = mul(b, add(b, range(b, 0), b.constInt(0)), b.constInt(3));
  for (int i = 0; i < 2; ++i) {
    CHECK(*graphRewrite(ea, identities()) == range(a, 0));
    CHECK(*graphRewrite(eb, identities()) == mul(b, range(b, 0), b.constInt(3)));
    CHECK(toposort(ea).size() == 6);
    CHECK(toposort(eb).size() == 6);
  }
  // a sort of b's nodes inside a gate of a sort of a's nodes
  ToposortOptions gated;
  size_t innerSize = 0;
  gated.gate = [&](const UOp *) {
    innerSize = toposort(eb).size();
    return true;
  };
  CHECK(toposort(ea, gated).size() == 6);
  CHECK(innerSize == 6);
}
