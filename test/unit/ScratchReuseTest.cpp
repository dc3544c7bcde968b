//===- ScratchReuseTest.cpp - pooled traversal state (NodeTable.h) ---------===//
//
// toposort, substitute and the slice queries keep their per-node state in
// pooled tables indexed by node id (graphRewrite too: GraphRewriteTest.cpp).
// These tests pin down what reuse could break: a walk nested inside another
// (from a gate), and the tables themselves.
//
//===----------------------------------------------------------------------===//
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
} // namespace

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
  // a value keeps its address while the table grows (graphRewrite holds one across rule callbacks)
  int &held = t[x];
  held = 9;
  const UOp *far = x;
  for (int i = 0; i < 3000; ++i) far = add(c, far, x); // ids in chunks the table has not made yet
  t[far] = 1;
  CHECK(&t[x] == &held);
  CHECK(*t.find(x) == 9);

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
