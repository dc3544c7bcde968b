// The data structures the scheduler's speed rests on, checked against brute
// force: the Context's interning table and src storage, the per-node RANGE id
// span, PtrMap, cached Value hashes, the Context memo and analyses, and the
// rewrite shortcut (RewriteOptions::unchanged) against the same rewrite
// without it.
#include "IR/GraphRewrite.h"
#include "IR/PtrMap.h"
#include "IR/UOp.h"

#include <doctest/doctest.h>

#include <random>
#include <unordered_map>
#include <unordered_set>

using namespace tgc;

namespace {

const UOp *rangeNode(Context &c, int64_t end, int64_t axis) {
  return c.get(Op::RANGE, dtypes::WeakInt, {c.constInt(end)},
               Value::tuple({Value::integer(axis), Value::enumMember("AxisType", "LOOP")}));
}

// Random integer expressions over a few ranges and constants.
std::vector<const UOp *> randomExprs(Context &c, std::mt19937 &rng, size_t n) {
  std::vector<const UOp *> pool;
  for (int i = 0; i < 4; ++i) pool.push_back(rangeNode(c, 2 + i, i));
  for (int i = 0; i < 4; ++i) pool.push_back(c.constInt(i + 1));
  const Op ops[] = {Op::ADD, Op::MUL, Op::MAX, Op::FLOORMOD};
  while (pool.size() < n) {
    const UOp *a = pool[rng() % pool.size()], *b = pool[rng() % pool.size()];
    pool.push_back(c.get(ops[rng() % 4], dtypes::WeakInt, {a, b}));
  }
  return pool;
}

} // namespace

TEST_CASE("interning: equal nodes are one node, across table growth and long src lists") {
  Context c;
  std::mt19937 rng(7);
  std::vector<const UOp *> nodes = randomExprs(c, rng, 20000);
  size_t before = c.size();
  // rebuilding every node from its parts finds the same node, and makes none
  for (const UOp *u : nodes) {
    std::vector<const UOp *> src(u->src().begin(), u->src().end());
    CHECK(c.get(u->op(), u->dtype(), src, u->arg(), u->tag()) == u);
    CHECK(c.intern(u->op(), u->dtype(), u->src(), u->arg(), u->tag()) == u);
  }
  CHECK(c.size() == before);
  // ids are creation indices, srcs come before their users
  for (size_t i = 0; i < nodes.size(); ++i)
    for (const UOp *s : nodes[i]->src()) CHECK(s->id() < nodes[i]->id());
  // a list longer than a pool block keeps every element
  std::vector<const UOp *> many(5000);
  for (size_t i = 0; i < many.size(); ++i) many[i] = c.constInt(int64_t(i));
  const UOp *sink = c.get(Op::SINK, dtypes::Void, many);
  REQUIRE(sink->numSrc() == many.size());
  for (size_t i = 0; i < many.size(); ++i) CHECK(sink->src(i) == many[i]);
  CHECK(c.get(Op::SINK, dtypes::Void, many) == sink);
  // a tag or an arg makes a different node
  CHECK(sink->withTag(Value::integer(1)) != sink);
  CHECK(c.constInt(3)->withArg(Value::integer(4)) == c.constInt(4));
}

TEST_CASE("interning: reserve() in the middle of a context keeps every node findable") {
  Context c;
  std::mt19937 rng(11);
  std::vector<const UOp *> first = randomExprs(c, rng, 3000);
  c.reserve(64 * c.size()); // rehashes the nodes made so far into a larger table
  c.reserve(10);            // smaller than what is there: nothing changes
  std::vector<const UOp *> second = randomExprs(c, rng, 3000);
  size_t before = c.size();
  for (const auto *list : {&first, &second})
    for (const UOp *u : *list) CHECK(c.intern(u->op(), u->dtype(), u->src(), u->arg(), u->tag()) == u);
  CHECK(c.size() == before);
}

TEST_CASE("interning: rangeIdLo/Hi span exactly the RANGE ids below a node") {
  Context c;
  std::mt19937 rng(11);
  std::vector<const UOp *> nodes = randomExprs(c, rng, 3000);
  for (const UOp *u : nodes) {
    uint32_t lo = UINT32_MAX, hi = 0;
    for (const UOp *x : toposort(u))
      if (x->is(Op::RANGE)) lo = std::min(lo, x->id()), hi = std::max(hi, x->id());
    CHECK(u->rangeIdLo() == lo);
    CHECK(u->rangeIdHi() == hi);
    CHECK(u->hasRangeBelow() == (lo <= hi));
  }
  CHECK_FALSE(c.constInt(1)->hasRangeBelow());
}

TEST_CASE("PtrMap agrees with std::unordered_map") {
  Context c;
  std::vector<const UOp *> keys;
  for (int i = 0; i < 3000; ++i) keys.push_back(c.constInt(i));
  std::mt19937 rng(3);
  PtrMap<int> m;
  std::unordered_map<const UOp *, int> ref;
  for (int step = 0; step < 20000; ++step) {
    const UOp *k = keys[rng() % keys.size()];
    if (rng() % 2) {
      int v = int(rng() % 100);
      m[k] = v;
      ref[k] = v;
    } else {
      const int *got = m.find(k);
      auto it = ref.find(k);
      REQUIRE((got != nullptr) == (it != ref.end()));
      if (got) CHECK(*got == it->second);
    }
  }
  CHECK(m.size() == ref.size());
  PtrSet s;
  CHECK(s.insert(keys[0]));
  CHECK_FALSE(s.insert(keys[0]));
  CHECK(s.contains(keys[0]));
  CHECK_FALSE(s.contains(keys[1]));
}

TEST_CASE("Value: a composite's cached hash follows its contents") {
  Context c;
  const UOp *a = c.constInt(1), *b = c.constInt(2);
  Value ta = Value::tuple({Value::uop(a), Value::string("x")});
  Value tb = Value::tuple({Value::uop(b), Value::string("x")});
  Value mapped = ta.mapUOps([&](const UOp *) { return b; });
  CHECK(mapped == tb);
  CHECK(mapped.hash() == tb.hash());
  CHECK_FALSE(ta == tb);
  Value o1 = Value::object("R", {"f", "g"}, {Value::integer(1), Value::floating(0.5)});
  Value o2 = Value::object("R", {"f", "g"}, {Value::integer(1), Value::floating(0.5)});
  CHECK(o1 == o2);
  CHECK(o1.hash() == o2.hash());
  CHECK_FALSE(o1 == Value::object("R", {"f", "g"}, {Value::integer(1), Value::floating(-0.5)}));
}

namespace {
struct Counter {
  int made = 0;
};
} // namespace

TEST_CASE("Context: memo and analyses live with the context") {
  Context c;
  const UOp *x = c.constInt(5), *y = c.constInt(6);
  static const char fnA = 0, fnB = 0;
  CHECK(c.memo(&fnA, x) == nullptr);
  c.setMemo(&fnA, x, y);
  CHECK(c.memo(&fnA, x) == y);
  CHECK(c.memo(&fnB, x) == nullptr);
  c.analysis<Counter>().made += 2;
  CHECK(c.analysis<Counter>().made == 2);
  Context other;
  CHECK(other.analysis<Counter>().made == 0);
}

TEST_CASE("graph_rewrite: the unchanged shortcut gives the rewrite without it") {
  // substitute some RANGEs (pre-order, to a fixed point) with and without the
  // promise that a subgraph with no substituted RANGE id in it stays as it is
  Context c;
  std::mt19937 rng(5);
  std::vector<const UOp *> nodes = randomExprs(c, rng, 4000);
  const UOp *r0 = nodes[0], *r2 = nodes[2];
  std::unordered_map<const UOp *, const UOp *> map{{r0, c.get(Op::ADD, dtypes::WeakInt, {r2, c.constInt(7)})},
                                                   {r2, c.constInt(9)}};
  struct Subst {
    const std::unordered_map<const UOp *, const UOp *> *map;
  } ctx{&map};
  PatternMatcher pm({rule(UPat().named("x"), [](Match &m) -> const UOp * {
    const auto &mp = *m.ctx<Subst>().map;
    auto it = mp.find(m.root());
    return it == mp.end() ? nullptr : it->second;
  })});
  uint32_t lo = std::min(r0->id(), r2->id()), hi = std::max(r0->id(), r2->id());
  size_t changed = 0;
  for (size_t i = nodes.size() - 200; i < nodes.size(); ++i) {
    RewriteOptions plain;
    plain.bottomUp = true;
    RewriteOptions gated = plain;
    gated.unchanged = [&](const UOp *u) { return u->rangeIdHi() < lo || u->rangeIdLo() > hi; };
    RewriteEnv e1(ctx), e2(ctx);
    auto a = graphRewrite(nodes[i], pm, e1, plain);
    auto b = graphRewrite(nodes[i], pm, e2, gated);
    REQUIRE(a);
    REQUIRE(b);
    CHECK(*a == *b);
    changed += *a != nodes[i];
  }
  CHECK(changed > 0); // the substitution did something to check
}
