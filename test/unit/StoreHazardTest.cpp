// Unit tests for fix_store_hazard's question (Schedule/StoreHazard.h): the
// per-graph bitset index must give the answer of tinygrad's walks for every
// STORE, on hand-made cases with known answers and on random graphs.
#include "Schedule/RangeifyPasses.h"
#include "Schedule/StoreHazard.h"
#include "Schedule/Sugar.h"

#include <doctest/doctest.h>

#include <random>

using namespace tgc;
using namespace tgc::rangeify;

namespace {

struct Builder {
  Context c;
  int64_t slot = 1;
  const UOp *tensor() { return reshape(newBuffer(c, Value::string("CPU"), 16, dtypes::Float32, slot++), {4, 4}); }
  const UOp *add(const UOp *a, const UOp *b) { return mk(Op::ADD, {a, b}); }
  const UOp *transpose(const UOp *x) { return permute(x, {1, 0}); }
  // a CONTIGUOUS even of a buffer view (the sugar would skip it)
  const UOp *contig(const UOp *x) { return c.get(Op::CONTIGUOUS, x->dtype(), {x}); }
  const UOp *top(const UOp *x) { return shrink(x, {{0, 2}, {0, 4}}); }
  const UOp *bottom(const UOp *x) { return shrink(x, {{2, 4}, {0, 4}}); }
};

// The index's answer for every STORE under root, checked against the walk.
std::vector<bool> hazards(const UOp *root) {
  StoreHazardIndex index(root);
  std::vector<bool> out;
  for (const UOp *u : toposort(root)) {
    if (!u->is(Op::STORE)) continue;
    bool walked = storeHazardWalk(u->src(0), u->src(1));
    CHECK(index.hazard(u->src(0), u->src(1)) == walked);
    out.push_back(walked);
  }
  return out;
}

} // namespace

TEST_CASE("store hazard: reordering views of the destination need a temporary") {
  Builder b;
  const UOp *a = b.tensor(), *o = b.tensor();
  CHECK(hazards(store(a, b.add(b.transpose(a), o))) == std::vector<bool>{true});
  CHECK(hazards(store(a, flip(a, {true, false}))) == std::vector<bool>{true});
  // elementwise reads of the destination, or reordered reads of another buffer, are safe
  CHECK(hazards(store(a, b.add(a, b.transpose(o)))) == std::vector<bool>{false});
  // a CONTIGUOUS in between is the temporary already
  CHECK(hazards(store(a, b.transpose(b.contig(a)))) == std::vector<bool>{false});
  CHECK(hazards(store(a, b.contig(b.transpose(a)))) == std::vector<bool>{false});
  // a SHRINK matters only when the destination is shrunk, and not the destination's own view
  CHECK(hazards(store(a, b.add(b.top(a), b.top(o)))) == std::vector<bool>{false});
  CHECK(hazards(store(b.top(a), b.bottom(a))) == std::vector<bool>{true});
  CHECK(hazards(store(b.top(a), b.add(b.top(a), b.top(o)))) == std::vector<bool>{false});
}

TEST_CASE("store hazard: STOREs sharing one upstream get the walk's answers") {
  Builder b;
  const UOp *a = b.tensor(), *o = b.tensor(), *w = b.tensor();
  const UOp *shared = b.add(b.transpose(a), o);
  std::vector<const UOp *> stores{store(a, shared), store(o, shared), store(w, b.add(shared, w))};
  CHECK(hazards(sink(b.c, stores)) == std::vector<bool>{true, false, false});
  // a STORE whose base was not under the index's root falls back to the walk
  StoreHazardIndex index(sink(b.c, {stores[1]}));
  CHECK(index.hazard(w, b.transpose(w)));
  CHECK(!index.hazard(w, b.add(w, shared)));
  // the pass inserts the temporary only for the hazardous store
  const UOp *out = earliestRewritesPass(sink(b.c, stores));
  size_t contiguous = 0;
  for (const UOp *u : toposort(out)) contiguous += u->is(Op::CONTIGUOUS);
  CHECK(contiguous == 1);
}

TEST_CASE("store hazard: random graphs") {
  std::mt19937 rng(7);
  for (int round = 0; round < 40; ++round) {
    Builder b;
    std::vector<const UOp *> bufs{b.tensor(), b.tensor(), b.tensor()}, pool = bufs, stores;
    for (int i = 0; i < 30; ++i) {
      const UOp *x = pool[rng() % pool.size()], *y = pool[rng() % pool.size()];
      switch (rng() % 6) {
      case 0: pool.push_back(b.transpose(x)); break;
      case 1: pool.push_back(flip(x, {false, true})); break;
      case 2: pool.push_back(b.contig(x)); break;
      case 3: pool.push_back(padTo(b.top(x), {4, 4})); break;
      default: pool.push_back(b.add(x, y)); break;
      }
      if (rng() % 4 == 0) {
        const UOp *dst = bufs[rng() % bufs.size()];
        stores.push_back(store(rng() % 3 == 0 ? b.top(dst) : dst, pool.back()));
      }
    }
    if (!stores.empty()) hazards(sink(b.c, stores));
  }
}
