//===- MachineLimits.h - perf_bench's machine limits and their plausibility checks -*- C++ -*-===//
//
// The limits perf_bench measures (FMA peak, streaming triad) and the checks
// that keep a wrongly measured limit from being printed as a result: a peak
// the core cannot reach at its measured clock, or one well below what it
// reaches, and any row that claims more than 100% of its limit. Header-only
// and free of tgc's libraries, so the unit tests check the logic directly.
//
//===----------------------------------------------------------------------===//
#pragma once
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace tgc::bench {

/// What the run measured (or machine.json's best values with --no-limits).
struct Limits {
  double fma1 = 0, fmaAll = 0, triad1 = 0, triadAll = 0;
  int cores = 1;
  /// The idle machine's ridge (machine.json), 0 if unknown: which side of it a
  /// kernel falls on should not depend on how loaded the machine is right now.
  double idleRidge = 0;
  /// The core clock measured with the FMA peak (GHz), 0 if not measured.
  double clockGHz = 0;
  /// FLOP per byte above which a kernel is compute-bound (the roofline ridge).
  double ridge() const { return idleRidge > 0 ? idleRidge : triadAll > 0 ? fmaAll / triadAll : 0; }
  /// 512-bit FMA instructions per cycle the 1-thread peak implies (0 without a clock).
  double fmaPerCycle() const { return clockGHz > 0 ? fma1 / (clockGHz * kFlopsPerFma512) : 0; }

  /// One 512-bit FMA: 16 floats, a multiply and an add each.
  static constexpr double kFlopsPerFma512 = 32;
  /// No x86 core issues more than two 512-bit FMAs a cycle; every AVX-512 core issues at least one (Intel's
  /// AVX-512 frequency licence can clock the FMA loop somewhat below the clock the integer loop measures).
  static constexpr double kMaxFmaPerCycle = 2, kMinFmaPerCycle = 0.75;
  /// Slack for timer and clock jitter before a measured peak counts as impossible.
  static constexpr double kSlack = 1.08;
};

/// What is implausible about measured limits, one sentence each; empty when they are plausible.
inline std::vector<std::string> limitProblems(const Limits &l) {
  std::vector<std::string> out;
  char buf[320];
  double perCycle = l.fmaPerCycle();
  if (perCycle > Limits::kMaxFmaPerCycle * Limits::kSlack) {
    std::snprintf(buf, sizeof buf,
                  "the 1-thread FMA peak %.1f GFLOPS is %.2f 512-bit FMAs a cycle at the measured %.2f GHz; no x86 "
                  "core issues more than %.0f: the peak or the clock was measured wrong",
                  l.fma1, perCycle, l.clockGHz, Limits::kMaxFmaPerCycle);
    out.push_back(buf);
  } else if (perCycle > 0 && perCycle < Limits::kMinFmaPerCycle) {
    std::snprintf(buf, sizeof buf,
                  "the 1-thread FMA peak %.1f GFLOPS is only %.2f 512-bit FMAs a cycle at the measured %.2f GHz; "
                  "an AVX-512 core issues at least 1: the FMA loop was disturbed (load) and the peak is too low",
                  l.fma1, perCycle, l.clockGHz);
    out.push_back(buf);
  }
  if (l.fma1 > 0 && l.fmaAll > l.fma1 * l.cores * Limits::kSlack) {
    std::snprintf(buf, sizeof buf, "the %d-thread FMA peak %.1f GFLOPS exceeds %d x the 1-thread peak %.1f", l.cores,
                  l.fmaAll, l.cores, l.fma1);
    out.push_back(buf);
  } else if (l.fma1 > 0 && l.fmaAll < 0.75 * l.fma1 * l.cores) {
    std::snprintf(buf, sizeof buf,
                  "the %d-thread FMA peak %.1f GFLOPS is under 75%% of %d x the 1-thread peak %.1f: the cores were "
                  "not all free during the measurement",
                  l.cores, l.fmaAll, l.cores, l.fma1);
    out.push_back(buf);
  }
  return out;
}

/// Whether a row's fraction of its limit is impossible: no kernel beats a limit measured right, so above 1
/// the limit is wrong for the row (measured under load, or not what bounds it: a cache-resident kernel
/// against the triad beyond cache) or the row's work estimate is.
inline bool overLimit(double frac) { return std::isfinite(frac) && frac > 1.0; }

/// A fraction of a limit as the tables print it: "87%", or "BAD LIMIT (204%)" above 100%; "-" when unknown.
inline std::string limitPercent(double frac) {
  if (!std::isfinite(frac) || frac <= 0) return "-";
  char buf[48];
  std::snprintf(buf, sizeof buf, overLimit(frac) ? "BAD LIMIT (%.0f%%)" : "%.0f%%", 100 * frac);
  return buf;
}

} // namespace tgc::bench
