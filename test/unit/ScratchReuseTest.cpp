//===- ScratchReuseTest.cpp - pooled traversal state (NodeTable.h) ---------===//
//
// graphRewrite and toposort keep their per-node state in pooled tables
// indexed by node id. These tests pin down what reuse could break: a rewrite
// or sort nested inside another (from a rule callback or a gate), a rewrite
// after one that failed midway, and tables moving between Contexts whose ids
// overlap.
//
//===----------------------------------------------------------------------===//
#include "IR/GraphRewrite.h"
#include "IR/NodeTable.h"
#include "IR/SymbolicUtil.h"

#include <doctest/doctest.h>

#include <unordered_map>

using namespace tgc;

namespace {
const UOp *range(Context &c, int64_t axis) {
  return c.get(Op::RANGE, dtypes::WeakInt, {c.constInt(4)}, Value::tuple({Value::integer(axis)}));
}
const UOp *add(Context &c, const UOp *x, const UOp *y) { return c.get(Op::ADD, dtypes::WeakInt, {x, y}); }
const UOp *mul(Context &c, const UOp *x, const UOp *y) { return c.get(Op::MUL, dtypes::WeakInt, {x, y}); }

const PatternMatcher &identities() {
  static const PatternMatcher pm({
      rule(var("x") + 0, [](Match &m) { return m["x"]; }),
      rule(var("x") * 1, [](Match &m) { return m["x"]; }),
  });
  return pm;
}

using SubMap = std::unordered_map<const UOp *, const UOp *>;
const PatternMatcher &substitution() {
  static const PatternMatcher pm({rule(UPat().named("x"), [](Match &m) -> const UOp * {
    auto &map = m.ctx<SubMap>();
    auto it = map.find(m["x"]);
    return it == map.end() ? nullptr : it->second;
  })});
  return pm;
}

// What the nested-rewrite rule below reads: the expression to rewrite again
// from scratch, and what the inner rewrite substitutes in it.
struct Nested {
  const UOp *outerRoot;
  const UOp *original;
  SubMap inner;
  const UOp *innerResult = nullptr;
};
} // namespace

TEST_CASE("scratch reuse: a rewrite nested in a callback has its own state") {
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

TEST_CASE("scratch reuse: a failed nested rewrite leaves the outer one intact") {
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

TEST_CASE("scratch reuse: a rewrite after a failed one starts clean") {
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

TEST_CASE("scratch reuse: tables move between Contexts whose ids overlap") {
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

TEST_CASE("scratch reuse: a toposort nested in a gate does not disturb the outer one") {
  Context c;
  const UOp *x = range(c, 0);
  const UOp *s = add(c, x, c.constInt(2));
  const UOp *m = mul(c, s, add(c, s, x));
  ToposortOptions gated;
  std::vector<size_t> innerSizes;
  gated.gate = [&](const UOp *u) {
    innerSizes.push_back(toposort(u).size()); // sorts nodes the outer sort has visited
    return true;
  };
  auto order = toposort(m, gated);
  CHECK(order == toposort(m));
  CHECK(order.size() == 6);
  CHECK(innerSizes.size() == 6);
  CHECK(innerSizes.front() == 6);
}

TEST_CASE("scratch reuse: NodeTable resets in O(1) and grows past the context size") {
  Context c;
  const UOp *x = range(c, 0);
  NodeTable<int> t;
  t.reset(c);
  t[x] = 7;
  CHECK(*t.find(x) == 7);
  const UOp *later = add(c, x, c.constInt(5)); // created after reset: an id past the table
  CHECK_FALSE(t.contains(later));
  t[later] = 3;
  CHECK(*t.find(later) == 3);
  t.reset(c);
  CHECK_FALSE(t.contains(x));
  CHECK_FALSE(t.contains(later));
  bool inserted = false;
  CHECK(t.get(x, inserted) == 0); // value-initialized again, not the stale 7
  CHECK(inserted);

  struct Pooled {
    int uses = 0;
  };
  size_t idle = ScratchPool<Pooled>::idle();
  {
    ScratchPool<Pooled>::Lease outer;
    outer->uses++;
    {
      ScratchPool<Pooled>::Lease inner; // nested: another object
      CHECK(&*inner != &*outer);
    }
    CHECK(ScratchPool<Pooled>::idle() == idle + 1);
  }
  CHECK(ScratchPool<Pooled>::idle() == idle + 2);
  ScratchPool<Pooled>::Lease again;
  CHECK(again->uses == 1); // the last one returned (outer) is the first reused, buffers and all
}

TEST_CASE("scratch reuse: backward-slice queries, pruned by creation order") {
  Context c;
  const UOp *x = range(c, 0), *y = range(c, 1);
  const UOp *sx = add(c, x, c.constInt(1));
  const UOp *u = mul(c, sx, add(c, sx, y)); // sx is shared: seen once
  CHECK(sym::inBackwardSliceWithSelf(x, u));
  CHECK(sym::inBackwardSliceWithSelf(u, u));
  CHECK(sym::inBackwardSliceWithSelf(sx, u));
  CHECK_FALSE(sym::inBackwardSliceWithSelf(u, sx));               // a user is never below its src
  const UOp *later = range(c, 2);                                 // made after u
  CHECK_FALSE(sym::inBackwardSliceWithSelf(later, u));
  const UOp *z = c.constInt(7);                                   // older than u, not below it
  CHECK_FALSE(sym::inBackwardSliceWithSelf(z, u));
  CHECK(sym::inBackwardSliceWithSelf(c.constInt(4), u));          // the RANGEs' end, made first
  CHECK(sym::backwardSliceSize(u) == 6);                          // x, y, their end 4, 1, sx, sx+y
  CHECK(sym::opInBackwardSliceWithSelf(u, OpSet{Op::RANGE}));
  CHECK_FALSE(sym::opInBackwardSliceWithSelf(sx, OpSet{Op::MUL}));
  // a query inside a toposort's gate keeps both walks apart
  ToposortOptions gated;
  bool allBelow = true;
  gated.gate = [&](const UOp *n) {
    allBelow &= sym::inBackwardSliceWithSelf(n, u);
    return true;
  };
  toposort(u, gated);
  CHECK(allBelow);
}
