//===- BenchLimitsTest.cpp - perf_bench's plausibility checks of its limits ===//
#include "MachineLimits.h"

#include <doctest/doctest.h>

#include <cmath>

using namespace tgc::bench;

namespace {
// This machine when idle: 2 cores of 2 512-bit FMA pipes at ~3.5 GHz, 225 GFLOPS each.
Limits idleMachine() {
  Limits l;
  l.fma1 = 225, l.fmaAll = 440, l.triad1 = 35, l.triadAll = 70, l.cores = 2, l.clockGHz = 3.5;
  return l;
}

bool mentions(const std::vector<std::string> &problems, const char *word) {
  for (const std::string &p : problems)
    if (p.find(word) != std::string::npos) return true;
  return false;
}
} // namespace

TEST_CASE("limitProblems: a peak the core can reach at its clock passes") {
  CHECK(limitProblems(idleMachine()).empty());
  Limits onePipe = idleMachine(); // one 512-bit FMA a cycle (Zen 4, Intel client cores)
  onePipe.fma1 = 3.5 * 32, onePipe.fmaAll = 2 * 3.5 * 32;
  CHECK(limitProblems(onePipe).empty());
  Limits noClock = idleMachine(); // --no-limits: machine.json's values, no clock to check them against
  noClock.clockGHz = 0;
  CHECK(limitProblems(noClock).empty());
}

TEST_CASE("limitProblems: a peak beyond two FMA pipes at the measured clock is flagged") {
  Limits l = idleMachine();
  l.clockGHz = 2.0; // 225 GFLOPS would take 3.5 FMAs a cycle
  std::vector<std::string> p = limitProblems(l);
  REQUIRE(p.size() == 1);
  CHECK(mentions(p, "measured wrong"));
}

TEST_CASE("limitProblems: a peak measured under load is flagged, on one core and on all") {
  Limits l = idleMachine();
  l.fma1 = 60, l.fmaAll = 120; // 0.54 FMAs a cycle at 3.5 GHz
  CHECK(mentions(limitProblems(l), "too low"));
  Limits shared = idleMachine();
  shared.fmaAll = 230; // the second core was busy with other work: barely more than one core's peak
  std::vector<std::string> p = limitProblems(shared);
  REQUIRE(p.size() == 1);
  CHECK(mentions(p, "not all free"));
  Limits more = idleMachine();
  more.fmaAll = 600; // more than 2 x the 1-thread peak
  CHECK(mentions(limitProblems(more), "exceeds"));
}

TEST_CASE("limitPercent: above 100% of a limit is flagged, never printed as a result") {
  CHECK(limitPercent(0.87) == "87%");
  CHECK(limitPercent(1.0) == "100%");
  CHECK(limitPercent(2.04) == "BAD LIMIT (204%)");
  CHECK(limitPercent(1.006) == "BAD LIMIT (101%)");
  CHECK(limitPercent(NAN) == "-");
  CHECK(limitPercent(0) == "-");
  CHECK_FALSE(overLimit(1.0));
  CHECK(overLimit(1.001));
  CHECK_FALSE(overLimit(INFINITY));
}
