//===- BenchLimitsTest.cpp - perf_bench's plausibility checks of its limits ===//
#include "MachineLimits.h"

#include <doctest/doctest.h>

#include <cmath>

using namespace tgc::bench;

namespace {
// This machine when idle: 2 cores of 2 512-bit FMA pipes at ~3.5 GHz, 225 GFLOPS each; reading about as fast as
// the triad (machine.json).
Limits idleMachine() {
  Limits l;
  l.fma1 = 225, l.fmaAll = 440, l.triad1 = 35, l.triadAll = 70, l.read1 = 37, l.readAll = 66, l.cores = 2,
  l.clockGHz = 3.5;
  return l;
}

constexpr double kMiB = 1 << 20;

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

TEST_CASE("limitProblems: a read rate in line with the triad passes, one far below or far above it is flagged") {
  Limits bus = idleMachine(); // a bus as fast at writing as at reading: reads at 4/3 of the triad
  bus.read1 = 35 * 4 / 3.0, bus.readAll = 70 * 4 / 3.0;
  CHECK(limitProblems(bus).empty());
  Limits unknown = idleMachine(); // machine.json without read figures
  unknown.read1 = unknown.readAll = 0;
  CHECK(limitProblems(unknown).empty());

  Limits slow = idleMachine();
  slow.read1 = 20; // the read loop lost its core for a while
  std::vector<std::string> p = limitProblems(slow);
  REQUIRE(p.size() == 1);
  CHECK(mentions(p, "1-thread read"));
  CHECK(mentions(p, "disturbed"));

  Limits cached = idleMachine();
  cached.readAll = 150; // over 2 x the triad's 70: a buffer served from cache
  p = limitProblems(cached);
  REQUIRE(p.size() == 1);
  CHECK(mentions(p, "2-thread read"));
  CHECK(mentions(p, "cached"));
}

TEST_CASE("limitKind: compute-bound rows against the FMA peak, read-only ones against the read, the rest the triad") {
  CHECK(limitKind(true, 256 * kMiB, 0) == LimitKind::Fma);
  CHECK(limitKind(false, 256 * kMiB, 4) == LimitKind::Read);                   // a sum to a scalar
  CHECK(limitKind(false, 128 * kMiB, 128 * kMiB / 4096) == LimitKind::Read);   // row statistics over 4096 columns
  CHECK(limitKind(false, 3 * 128 * kMiB, 128 * kMiB) == LimitKind::Triad);    // softmax: writes a quarter
  CHECK(limitKind(false, 2 * 64 * kMiB, 64 * kMiB) == LimitKind::Triad);      // elementwise
  CHECK(limitKind(false, 64 * kMiB, 1 * kMiB) == LimitKind::Read);            // writes 1/64 of what it reads
  CHECK(limitKind(false, 64 * kMiB, 1 * kMiB + 4) == LimitKind::Triad);
  CHECK(limitKind(false, 0, 0) == LimitKind::Triad); // no estimate: the stricter reading of what bounds it
  Limits l = idleMachine();
  CHECK(l.allCores(LimitKind::Fma) == 440);
  CHECK(l.allCores(LimitKind::Read) == 66);
  CHECK(l.allCores(LimitKind::Triad) == 70);
  CHECK(std::string(limitName(LimitKind::Read)) == "read");
}

TEST_CASE("cacheResident: memory-bound rows whose largest kernel fits the last-level cache") {
  CHECK(cacheResident(LimitKind::Read, 64 * kMiB));   // sum of 16M floats
  CHECK(cacheResident(LimitKind::Triad, 8 * 1024));   // 2K-float elementwise
  CHECK_FALSE(cacheResident(LimitKind::Read, 256 * kMiB));
  CHECK_FALSE(cacheResident(LimitKind::Fma, 64 * kMiB)); // the FMA peak does not depend on where the data is
  CHECK_FALSE(cacheResident(LimitKind::Triad, 0));        // no estimate
}

TEST_CASE("limitPercent: a cache-resident row is marked, and still flagged above 100%") {
  CHECK(limitPercent(0.87, true) == "87% cache");
  CHECK(limitPercent(2.04, true) == "BAD LIMIT (204%, cache)");
  CHECK(limitPercent(NAN, true) == "-");
}

TEST_CASE("Limits::higher: each rate the higher of two measurements, the clock the higher 1-thread FMA peak's") {
  Limits before = idleMachine(), after = idleMachine();
  before.fmaAll = 400, before.readAll = 50;          // measured while the host was busy
  after.fma1 = 230, after.clockGHz = 3.6, after.triadAll = 60, after.read1 = 30;
  Limits best = before.higher(after);
  CHECK(best.fma1 == 230);
  CHECK(best.clockGHz == doctest::Approx(3.6));
  CHECK(best.fmaAll == 440);
  CHECK(best.triad1 == 35);
  CHECK(best.triadAll == 70);
  CHECK(best.read1 == 37);
  CHECK(best.readAll == 66);
  CHECK(best.cores == 2);
  // The clock stays with its own peak: the lower 1-thread peak's clock is not taken.
  Limits slowClock = idleMachine();
  slowClock.fma1 = 200, slowClock.clockGHz = 4.0;
  CHECK(idleMachine().higher(slowClock).clockGHz == doctest::Approx(3.5));
}

TEST_CASE("limitKindNamed: the names rows carry map back to their limits") {
  for (LimitKind k : {LimitKind::Fma, LimitKind::Read, LimitKind::Triad}) CHECK(limitKindNamed(limitName(k)) == k);
}
