//===- MachineLimits.h - perf_bench's machine limits and their plausibility checks -*- C++ -*-===//
//
// The limits perf_bench measures (FMA peak, streaming triad, streaming read),
// which of them bounds a row, and the checks that keep a wrongly measured limit
// from being printed as a result: a peak the core cannot reach at its measured
// clock, or one well below what it reaches, a read rate out of line with the
// triad, and any row that claims more than 100% of its limit. Header-only and
// free of tgc's libraries, so the unit tests check the logic directly.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <tuple>
#include <vector>

namespace tgc::bench {

/// The limit a row is judged against: the FMA peak (compute-bound), the streaming read (memory-bound kernels
/// that only read: reductions), or the triad (memory-bound kernels that also write).
enum class LimitKind { Fma, Read, Triad };

inline const char *limitName(LimitKind k) { return k == LimitKind::Fma ? "FMA" : k == LimitKind::Read ? "read" : "triad"; }

/// What the run measured (or machine.json's best values with --no-limits).
struct Limits {
  double fma1 = 0, fmaAll = 0, triad1 = 0, triadAll = 0;
  /// Streaming read (GB/s): a sum over a buffer beyond the last-level cache; 0 if unknown.
  double read1 = 0, readAll = 0;
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
  /// Per counted byte the triad moves at least as much over the memory bus as a read (4/3 when its store's line
  /// is read for ownership before the write-back), so reading is at least as fast; where a core's rate is set by
  /// the lines it keeps in flight rather than by the bus (this machine), the two are about equal. The lower bound
  /// is below 1 because alternating trials on a shared host still differ by up to a fifth. A bus as fast at
  /// writing as at reading reads at 4/3 of the triad; twice the triad leaves room for the cost of turning the bus
  /// from writes to reads, not for a read buffer served from cache or a triad measured under load.
  static constexpr double kMinReadOverTriad = 0.75;
  static constexpr double kMaxReadOverTriad = 2;
  /// A kernel that writes at most 1/64 of the bytes it reads is judged against the read bandwidth: even at twice
  /// the cost of a read (read for ownership + write-back) its writes add at most 3% to its traffic.
  static constexpr double kReadOnlyRatio = 64;
  /// A repeated kernel whose working set is up to this size is served partly from this machine's last-level
  /// cache (105 MiB), faster than the limits' buffers (3 x 128 MiB) beyond it.
  static constexpr double kCacheBytes = 128.0 * (1 << 20);

  /// The all-core value of a limit (GFLOPS or GB/s).
  double allCores(LimitKind k) const { return k == LimitKind::Fma ? fmaAll : k == LimitKind::Read ? readAll : triadAll; }

  /// Each rate the higher of two measurements of this machine (the clock with the 1-thread FMA peak it was
  /// measured with): the host's other work only ever lowers a measured peak, so the higher is nearer the truth.
  Limits higher(const Limits &o) const {
    Limits l = *this;
    if (o.fma1 > l.fma1) l.fma1 = o.fma1, l.clockGHz = o.clockGHz;
    for (auto [mine, theirs] : {std::pair{&l.fmaAll, o.fmaAll}, {&l.triad1, o.triad1}, {&l.triadAll, o.triadAll},
                                {&l.read1, o.read1}, {&l.readAll, o.readAll}})
      *mine = std::max(*mine, theirs);
    return l;
  }
};

inline LimitKind limitKindNamed(const std::string &name) {
  return name == "FMA" ? LimitKind::Fma : name == "read" ? LimitKind::Read : LimitKind::Triad;
}

/// The limit of a kernel (or kernels) that reads `bytesRead` and writes `bytesWritten`: compute-bound ones
/// against the FMA peak; memory-bound ones against the read bandwidth when their traffic is (nearly) all reads,
/// else the triad.
inline LimitKind limitKind(bool compute, double bytesRead, double bytesWritten) {
  if (compute) return LimitKind::Fma;
  return bytesRead > 0 && bytesWritten * Limits::kReadOnlyRatio <= bytesRead ? LimitKind::Read : LimitKind::Triad;
}

/// Whether a memory-bound row's repeated kernel keeps its data in cache (its largest kernel's bytes within
/// kCacheBytes): it can exceed a limit measured beyond the cache, and its fraction says little.
inline bool cacheResident(LimitKind k, double largestKernelBytes) {
  return k != LimitKind::Fma && largestKernelBytes > 0 && largestKernelBytes <= Limits::kCacheBytes;
}

/// The read rates against the triad's on 1 thread and on all: reading alone moves no more bus traffic per counted
/// byte than the triad, so it is at least as fast (within kMinReadOverTriad), and at most kMaxReadOverTriad times
/// faster.
inline void readProblems(const Limits &l, std::vector<std::string> &out) {
  char buf[320];
  for (auto [threads, read, triad] : {std::tuple{1, l.read1, l.triad1}, std::tuple{l.cores, l.readAll, l.triadAll}}) {
    if (read <= 0 || triad <= 0) continue;
    if (read < Limits::kMinReadOverTriad * triad)
      std::snprintf(buf, sizeof buf,
                    "the %d-thread read %.1f GB/s is under %.0f%% of the triad's %.1f: reading moves no more traffic "
                    "per byte than the triad, so the read loop was disturbed (load) or cannot keep the memory busy",
                    threads, read, 100 * Limits::kMinReadOverTriad, triad);
    else if (read > Limits::kMaxReadOverTriad * triad)
      std::snprintf(buf, sizeof buf,
                    "the %d-thread read %.1f GB/s is over %.0f x the triad's %.1f: the read buffer was cached or "
                    "the triad was disturbed (load)",
                    threads, read, Limits::kMaxReadOverTriad, triad);
    else
      continue;
    out.push_back(buf);
  }
}

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
  readProblems(l, out);
  return out;
}

/// Whether a row's fraction of its limit is impossible: no kernel beats a limit measured right, so above 1
/// the limit is wrong for the row (measured under load, or not what bounds it: a cache-resident kernel
/// against the triad beyond cache) or the row's work estimate is.
inline bool overLimit(double frac) { return std::isfinite(frac) && frac > 1.0; }

/// A fraction of a limit as the tables print it: "87%", or "BAD LIMIT (204%)" above 100%; "-" when unknown.
/// A cache-resident row says so: "87% cache", "BAD LIMIT (204%, cache)".
inline std::string limitPercent(double frac, bool cache = false) {
  if (!std::isfinite(frac) || frac <= 0) return "-";
  char buf[48];
  if (overLimit(frac))
    std::snprintf(buf, sizeof buf, cache ? "BAD LIMIT (%.0f%%, cache)" : "BAD LIMIT (%.0f%%)", 100 * frac);
  else
    std::snprintf(buf, sizeof buf, cache ? "%.0f%% cache" : "%.0f%%", 100 * frac);
  return buf;
}

} // namespace tgc::bench
