//===- KernelBench.cpp - perf_bench's own kernel cases ---------------------===//
//
// Each case of cases/KernelCases.h is scheduled by tgc's pipeline, compiled
// with every optimization on (threads on all cores) and its kernels under test
// timed. No tinygrad time exists for these graphs: the row shows tgc's rate,
// from tgc's estimates of tinygrad's `ops` and `mem`, and its fraction of the
// limit measured in the run (FMA above the roofline ridge; below it the read
// bandwidth for kernels that only read, else the triad).
//
//===----------------------------------------------------------------------===//
#include "Sections.h"
#include "cases/KernelCases.h"

#include "IR/TextFormat.h"
#include "Runtime/Parallel.h"

#include <cmath>
#include <cstdio>
#include <fstream>

namespace tgc::bench {

namespace {

nlohmann::json runKernelCase(const KernelCase &c, const BenchOptions &o, const Limits &lim) {
  nlohmann::json row{{"case", c.name}, {"group", c.group}, {"what", c.what}, {"beyond_cache", c.beyondCache}};
  Context ctx;
  Graph g = kernelCaseGraph(ctx, c, o.smoke);
  if (!o.casesDir.empty()) std::ofstream(o.casesDir + "/" + c.name + ".tgc") << printText(g);
  double scheduleMs = 0;
  if (Status s = runSchedulePipeline(g, scheduleMs); !s) return row["error"] = s.error().str(), row;
  row["tgc_schedule_ms"] = scheduleMs;
  tgc_set_num_threads(lim.cores);
  CodegenOptions opts;
  auto cs = compileLinear(g.roots[0], opts);
  if (!cs) return row["error"] = cs.error().str(), row;
  auto hb = HostBuffers::allocate((*cs)->plan());
  if (!hb) return row["error"] = hb.error().str(), row;
  row["compile_s"] = (*cs)->compileSeconds();
  if (Status s = (*cs)->run(hb->pointers()); !s) return row["error"] = s.error().str(), row; // generates the inputs
  KernelTiming kt = timeKernelsUnderTest(**cs, *hb, o.reps, o.smoke ? 0.0 : o.minSampleMs);
  if (kt.kernels == 0) return row["error"] = "no kernel reads a buffer", row;
  // The output's checksum: finite always; in smoke runs equal to the brute-force
  // reference's, so a graph built wrong fails the smoke test rather than making a fast row.
  const ScheduleArg &out = (*cs)->plan().calls.back().args[0];
  double sum = outputChecksum(reinterpret_cast<const float *>(static_cast<char *>(hb->data(out.buffer)) + out.byteOffset),
                              out.bytes / 4);
  row["out_checksum"] = sum;
  if (!std::isfinite(sum)) return row["error"] = "non-finite output", row;
  if (o.smoke) {
    double want = c.reference(c.smokeSizes);
    row["reference_checksum"] = want;
    if (std::fabs(sum - want) > 1e-4 * std::max(1.0, std::fabs(want)))
      return row["error"] = "output checksum " + std::to_string(sum) + ", the reference computes " + std::to_string(want), row;
  }
  row["kernels"] = kt.names;
  row["kernel_ms"] = kt.ms;
  row["kernel_ms_each"] = kt.kernelMs;
  row["kernel_bytes_each"] = kt.kernelBytes;
  row["flops"] = kt.flops;
  row["bytes"] = kt.bytes;
  row.update(rateFields(double(kt.flops), double(kt.bytes), kt.ms, lim, double(kt.flops) > lim.ridge() * double(kt.bytes), kt));
  return row;
}

} // namespace

nlohmann::json runKernelSection(const BenchOptions &o, const Limits &lim) {
  nlohmann::json rows = nlohmann::json::array();
  std::printf("\nkernel cases (tgc's own graphs, all optimizations, %d threads; no tinygrad time exists)\n", lim.cores);
  std::printf("%-22s %-11s %4s %10s %9s %8s %-5s %s\n", "case", "group", "kern", "ms", "GFLOPS", "GB/s", "limit", "lim%");
  for (const KernelCase &c : kernelCases()) {
    if (!selected(c.name, o.filter)) continue;
    nlohmann::json row = runKernelCase(c, o, lim);
    rows.push_back(row);
    if (row.contains("error")) {
      std::printf("%-22s error: %s\n", c.name.c_str(), row["error"].get<std::string>().c_str());
      continue;
    }
    std::printf("%-22s %-11s %4zu %10.4f %9.1f %8.1f %-5s %s\n", c.name.c_str(), c.group.c_str(), row["kernels"].size(),
                row["kernel_ms"].get<double>(), row["gflops"].get<double>(), row["gbs"].get<double>(),
                row["limit"].get<std::string>().c_str(), rowLimitPercent(row).c_str());
    std::fflush(stdout);
  }
  std::printf("columns: kern = kernels under test (those that read a buffer); ms = the sum of their medians; rates from\n"
              "tgc's estimates (tinygrad's ops / mem); limit = what bounds the row: FMA (FLOP/byte above the idle\n"
              "machine's ridge %.1f), read (memory-bound, writes at most 1/%.0f of the bytes read), else triad; lim%% = of\n"
              "that limit on all cores; cache = the largest kernel's bytes fit in the last-level cache, so the row can beat\n"
              "a limit measured beyond it; BAD LIMIT = above 100%%: the limit does not hold for the row.\n",
              lim.ridge(), Limits::kReadOnlyRatio);
  return rows;
}

} // namespace tgc::bench
