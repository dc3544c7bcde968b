//===- LinearizeDifferentialTest.cpp - linearize against the contract ----===//
//
// sched::linearize answers the contract's set questions (pipeline-schedule.md
// §5.3) without building the sets. On random kernel graphs with every hazard
// (outdated reads, AFTER-on-AFTER ordering, an AFTER dep that depends on its
// own kernel, unused and reshaped arguments) it must give exactly what the
// literal transcription in ReferenceLinearize.h gives: the same LINEAR, or the
// same diagnostic with the same notes. Ancestry::reaches is checked against
// plain toposort membership.
//
//===----------------------------------------------------------------------===//
#include "ReferenceLinearize.h"
#include "SyntheticKernelGraph.h"

#include "Schedule/Ancestry.h"
#include "Schedule/Linearize.h"
#include "Schedule/Storage.h"

#include <doctest/doctest.h>

#include <unordered_set>

using namespace tgc;
using namespace tgc::sched;
using tgc::testing::KG;
using tgc::testing::SyntheticOptions;

namespace {

SyntheticOptions hazardous(size_t kernels, uint64_t seed) {
  SyntheticOptions o;
  o.kernels = kernels;
  o.persistent = 3 + seed % 5;
  o.assignRate = 0.3;
  o.window = 6;
  o.staleRate = (seed % 3) * 0.04;
  o.staleWriteRate = seed % 2 == 0 ? 0.15 : 0;
  o.orderRate = 0.15;
  o.unusedRate = 0.1;
  o.reshapeRate = 0.1;
  o.seed = seed;
  return o;
}

/// The verdict and the number of blocked kernels (the start of the first note).
std::string verdict(const Diagnostic &d) {
  std::string s = d.message;
  if (!d.notes.empty()) s += ": " + d.notes[0].substr(0, d.notes[0].find(" kernels cannot be ordered"));
  return s;
}

} // namespace

TEST_CASE("linearize differential: random kernel graphs schedule exactly as the contract's sets say") {
  size_t scheduled = 0, cycles = 0;
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    CAPTURE(seed);
    KG k;
    const UOp *root = testing::buildSyntheticKernelGraph(k, hazardous(10 + seed % 90, seed));
    Result<const UOp *> got = linearize(root);
    Result<const UOp *> want = testing::reference::linearize(root);
    REQUIRE(got.ok() == want.ok());
    if (got.ok()) {
      CHECK(*got == *want);
      ++scheduled;
    } else {
      CHECK(verdict(got.error()) == verdict(want.error()));
      cycles += got.error().message == "cycle detected in assign graph";
    }
  }
  MESSAGE(scheduled << " graphs scheduled, " << cycles << " cycles reported");
  // Both outcomes must occur, or the comparison proves little.
  CHECK(scheduled >= 50);
  CHECK(cycles >= 50);
}

TEST_CASE("linearize differential: valid sequential programs of a few thousand kernels") {
  for (uint64_t seed : {7, 8}) {
    KG k;
    SyntheticOptions o;
    o.kernels = 3000;
    o.orderRate = 0.05;
    o.unusedRate = 0.05;
    o.reshapeRate = 0.05;
    o.seed = seed;
    const UOp *root = testing::buildSyntheticKernelGraph(k, o);
    Result<const UOp *> got = linearize(root);
    REQUIRE(got.ok());
    CHECK((*got)->numSrc() == o.kernels);
    Result<const UOp *> want = testing::reference::linearize(root);
    REQUIRE(want.ok());
    CHECK(*got == *want);
  }
}

TEST_CASE("ancestry: reaches(x, t) is t in toposort(x) without entering call bodies") {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    CAPTURE(seed);
    KG k;
    const UOp *root = testing::buildSyntheticKernelGraph(k, hazardous(40, seed));
    Ancestry anc(std::span<const UOp *const>(&root, 1));
    ToposortOptions opts;
    opts.enterCalls = false;
    size_t yes = 0, no = 0;
    for (const UOp *x : anc.nodes()) {
      std::vector<const UOp *> below = toposort(x, opts);
      std::unordered_set<const UOp *> set(below.begin(), below.end());
      for (const UOp *t : anc.nodes()) {
        bool expected = set.count(t) > 0;
        if (anc.reaches(x, t) != expected) {
          CAPTURE(x->str());
          CAPTURE(t->str());
          CHECK(anc.reaches(x, t) == expected);
        }
        (expected ? yes : no)++;
      }
    }
    CHECK(yes > 0);
    CHECK(no > 0);
  }
}

TEST_CASE("ancestry: toposortGraph lists what toposort lists, in its order") {
  KG k;
  const UOp *root = testing::buildSyntheticKernelGraph(k, hazardous(60, 5));
  // A COPY body is entered unless calls are skipped; kernel SINKs are gated.
  const UOp *x = k.param(0), *y = k.param(1);
  const UOp *copy = k.call(k.ctx.get(Op::COPY, dtypes::Float32, {x}, Value::string("CPU")), {y, x});
  const UOp *roots[] = {root, k.after(y, {copy})};
  auto gate = [](const UOp *u) { return !(u->is(Op::SINK) && u->arg().isObj("KernelInfo")); };
  for (bool enterCalls : {false, true})
    for (bool gated : {false, true}) {
      CAPTURE(enterCalls);
      CAPTURE(gated);
      ToposortOptions opts;
      opts.enterCalls = enterCalls;
      if (gated) opts.gate = gate;
      std::vector<const UOp *> want = toposort(roots, opts);
      CHECK(toposortGraph(roots, enterCalls, gated ? +gate : nullptr) == want);
      CHECK(want.size() > 100);
    }
}

TEST_CASE("storage: BufUopCache answers as bufUop, whatever the order of the questions") {
  KG k;
  testing::SyntheticOptions o = hazardous(200, 3);
  o.persistent = 2; // long assign chains
  const UOp *root = testing::buildSyntheticKernelGraph(k, o);
  ToposortOptions opts;
  opts.enterCalls = false;
  std::vector<const UOp *> nodes = toposort(root, opts);
  BufUopCache cache;
  size_t afters = 0;
  for (size_t i = nodes.size(); i-- > 0;) { // users first: long walks, then hits
    CHECK(cache(nodes[i]) == bufUop(nodes[i]));
    afters += nodes[i]->is(Op::AFTER);
  }
  for (const UOp *u : nodes) CHECK(cache(u) == bufUop(u));
  CHECK(afters > 100);
}
