//===- BenchCommon.h - timing, limits and kernel rates for perf_bench -*- C++ -*-===//
//
// The pieces every section of perf_bench shares: wall-clock medians, the
// machine limits measured in the run, and the time and tinygrad-style
// estimates (Schedule/Estimates.h) of a compiled schedule's kernels under test.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Codegen/Exec/CompiledLinear.h"
#include "MachineLimits.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace tgc::bench {

using Clock = std::chrono::steady_clock;

inline double msSince(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

/// The median of `reps` timed calls of f, in ms. Each sample runs f `inner`
/// times and reports the mean, so microsecond kernels are timed above the
/// clock's resolution.
template <class F> double medianMs(int reps, F &&f, int inner = 1) {
  std::vector<double> t;
  for (int i = 0; i < std::max(reps, 1); ++i) {
    auto t0 = Clock::now();
    for (int k = 0; k < inner; ++k) f();
    t.push_back(msSince(t0) / inner);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

double median(std::vector<double> v);

/// The median time of `run` over `reps` samples; `load` (untimed) runs before
/// each sample, which repeats `run` until it lasts ~minSampleMs (a model that
/// runs in microseconds is timed above the clock's overhead).
template <class Load, class Run> double modelMedianMs(int reps, double minSampleMs, Load &&load, Run &&run) {
  load();
  auto t0 = Clock::now();
  run();
  double first = msSince(t0);
  int inner = first > 0 ? int(std::clamp(minSampleMs / first, 1.0, 10000.0)) : 1;
  std::vector<double> t;
  for (int i = 0; i < std::max(reps, 1); ++i) {
    load();
    auto t1 = Clock::now();
    for (int k = 0; k < inner; ++k) run();
    t.push_back(msSince(t1) / inner);
  }
  return median(t);
}

/// FMA peak (AVX-512, 12 chains), streaming triad (3 x 128 MiB) and streaming
/// read (a sum of 384 MiB), on 1 thread and on `cores`, and the core clock.
/// `scale` < 1 shortens every loop (smoke runs). The FMA loops and the clock
/// are timed by each thread's CPU time, best of many short trials, so time
/// other processes hold a core is not charged to the peak; the bandwidths by
/// the wall clock, as the cores share the memory bus.
Limits measureLimits(int cores, double scale = 1.0);

/// Time and estimated work of the kernels under test of one schedule: the
/// kernels that read a buffer (input generators excluded), as meta.json's
/// `kernel_under_test` of the perf cases.
struct KernelTiming {
  double ms = 0;          ///< sum over those kernels of each one's median time
  int64_t flops = 0;      ///< Estimates.h: tinygrad's `ops`
  int64_t bytes = 0;      ///< Estimates.h: tinygrad's `mem` (read + written)
  int64_t bytesRead = 0, bytesWritten = 0; ///< `bytes`, split
  int kernels = 0;
  std::vector<std::string> names;
  std::vector<double> kernelMs;    ///< each kernel's median, in `names` order
  std::vector<int64_t> kernelBytes; ///< each kernel's estimated bytes
};

/// Whether a kernel body reads a global buffer (a load through an INDEX that is not a STORE target).
bool readsBuffer(const UOp *sink);

/// Runs each kernel under test of `cs` on `hb` (after the whole schedule ran
/// once) `reps` times, repeating it within a sample until a sample lasts ~`minSampleMs`.
KernelTiming timeKernelsUnderTest(const CompiledSchedule &cs, const HostBuffers &hb, int reps, double minSampleMs);

/// Rates and the fraction of the all-core limit that bounds the row, as JSON
/// fields of a row: the FMA peak when `compute`, else the read bandwidth when
/// the kernels under test `kt` (nearly) only read, else the triad (limitKind);
/// and whether the row's largest kernel fits in the cache (cacheResident).
nlohmann::json rateFields(double flops, double bytes, double ms, const Limits &lim, bool compute, const KernelTiming &kt);

/// Every row's (and each of its configs') `limit_value` and `frac_limit` in the `sections` of `out` over
/// `lim`: after the limits were measured again at the end of a run and rose.
void rebaseLimits(nlohmann::json &out, const std::vector<std::string> &sections, const Limits &lim);

/// A row's `frac_limit` as the tables print it, marked when the row is cache-resident (limitPercent).
std::string rowLimitPercent(const nlohmann::json &row);

nlohmann::json readJson(const std::filesystem::path &p);

/// tgc's `schedule` pipeline (tensor graph -> LINEAR) on `g` in place; `ms` = its time.
Status runSchedulePipeline(Graph &g, double &ms);
/// The graph.json of a case folder, read and scheduled (runSchedulePipeline).
Result<Graph> readAndSchedule(Context &ctx, const std::filesystem::path &caseDir, double &ms);

/// The command line, as every section reads it.
struct BenchOptions {
  std::string perfDir, corpusDir;
  std::string filter;       ///< --cases: only rows whose name contains this
  std::string dumpDir;      ///< --dump-ir
  std::string casesDir;     ///< --write-cases: the kernel cases' graphs in the text form
  int reps = 5;
  double maxSlowGflop = 1.0; ///< perf cases: skip the unoptimized configs above this
  double minSampleMs = 2.0;  ///< a kernel sample repeats the kernel until it lasts this long
  bool smoke = false;        ///< tiny sizes, one repetition, few corpus graphs
};

/// Whether `name` passes the --cases filter: a comma-separated list of
/// substrings, any of which may occur in `name` (empty = all).
inline bool selected(const std::string &name, const std::string &filter) {
  if (filter.empty()) return true;
  for (size_t begin = 0; begin <= filter.size();) {
    size_t end = std::min(filter.find(',', begin), filter.size());
    if (end > begin && name.find(filter.substr(begin, end - begin)) != std::string::npos) return true;
    begin = end + 1;
  }
  return false;
}

/// A number for the table, "-" when absent (0 or NaN).
std::string fmt(double v, const char *spec = "%.2f");
/// A ratio for the table ("12.3x"), "-" when absent.
inline std::string ratio(double v) { return fmt(v, v >= 100 ? "%.0fx" : v >= 10 ? "%.1fx" : "%.2fx"); }

} // namespace tgc::bench
