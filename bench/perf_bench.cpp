//===- perf_bench.cpp - tgc vs tinygrad's recorded times vs machine limits ===//
//
// One command, one table (issue #9): the machine's limits measured in this
// run (streaming triad, FMA peak on 1 and all cores), then every perf case
// (/work/shared/perf/<case>/graph.json, inputs generated inside the graph)
// scheduled by tgc's pipeline, compiled under each optimization config and
// timed side by side with tinygrad's recorded times (meta.json), and tgc's
// scheduling time per corpus graph beside tinygrad's. Rates use tinygrad's
// FLOP/byte estimates from meta.json. Results also go to a JSON file.
//
//===----------------------------------------------------------------------===//
#include "Codegen/Schedule.h"
#include "IR/JSON.h"
#include "IR/Pass.h"
#include "Runtime/Parallel.h"
#include "Schedule/Passes.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <immintrin.h>
#include <thread>

using namespace tgc;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

double msSince(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

template <class F> double medianMs(int reps, F &&f) {
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    auto t0 = Clock::now();
    f();
    t.push_back(msSince(t0));
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

template <class F> void onThreads(int n, F &&f) {
  std::vector<std::thread> ts;
  for (int i = 1; i < n; ++i) ts.emplace_back([&, i] { f(i); });
  f(0);
  for (auto &t : ts) t.join();
}

//===--- machine limits -----------------------------------------------------===//

// 12 independent FMA chains of 16 floats: enough to cover FMA latency x ports.
__attribute__((target("avx512f"))) float fmaAvx512(int64_t iters) {
  __m512 acc[12];
  for (int k = 0; k < 12; ++k) acc[k] = _mm512_set1_ps(float(k));
  __m512 m = _mm512_set1_ps(0.999999f), a = _mm512_set1_ps(1e-7f);
  for (int64_t i = 0; i < iters; ++i)
    for (int k = 0; k < 12; ++k) acc[k] = _mm512_fmadd_ps(acc[k], m, a);
  __m512 s = acc[0];
  for (int k = 1; k < 12; ++k) s = _mm512_add_ps(s, acc[k]);
  return _mm512_reduce_add_ps(s);
}

double fmaGflops(int threads) {
  const int64_t iters = 20'000'000;
  double best = 0;
  for (int trial = 0; trial < 3; ++trial) {
    std::vector<float> sink(threads);
    auto t0 = Clock::now();
    onThreads(threads, [&](int i) { sink[i] = fmaAvx512(iters); });
    double s = msSince(t0) / 1e3;
    best = std::max(best, double(iters) * 12 * 16 * 2 * threads / s / 1e9);
  }
  return best;
}

double triadGBs(int threads) {
  const int64_t n = int64_t(1) << 25; // 3 x 128 MiB: far beyond the last-level cache
  std::vector<float> a(n, 1.f), b(n, 2.f), c(n, 0.f);
  double best = 0;
  for (int trial = 0; trial < 5; ++trial) {
    auto t0 = Clock::now();
    onThreads(threads, [&](int t) {
      int64_t lo = n * t / threads, hi = n * (t + 1) / threads;
      for (int64_t i = lo; i < hi; ++i) c[i] = a[i] + 3.f * b[i];
    });
    double s = msSince(t0) / 1e3;
    if (trial > 0) best = std::max(best, 3.0 * 4 * double(n) / s / 1e9); // trial 0 pages the arrays in
  }
  return best;
}

//===--- perf cases -----------------------------------------------------------===//

struct Config {
  std::string name;
  CodegenOptions opts;
  int threads;
};

bool readsBuffer(const UOp *sink) {
  std::vector<const UOp *> nodes = toposort(sink);
  std::set<const UOp *> storeTargets;
  for (const UOp *u : nodes)
    if (u->is(Op::STORE) && u->numSrc() == 2) storeTargets.insert(u->src(0));
  for (const UOp *u : nodes)
    if (u->is(Op::INDEX) && !storeTargets.count(u)) return true;
  return false;
}

Result<Graph> scheduleGraph(Context &ctx, const std::string &path, double &ms) {
  Result<Graph> g = readGraphJSONFile(ctx, path);
  if (!g) return g.error();
  auto pipeline = parsePipeline("schedule");
  if (!pipeline) return pipeline.error();
  auto t0 = Clock::now();
  if (Status s = runPipeline(*g, *pipeline, PipelineOptions{}); !s) return s.error();
  ms = msSince(t0);
  return g;
}

nlohmann::json readJson(const fs::path &p) {
  std::ifstream f(p);
  return nlohmann::json::parse(f, nullptr, /*allow_exceptions=*/false);
}

std::string dumpDir;        // --dump-ir
double maxSlowGflop = 1.0;  // --max-slow-gflop

struct Limits {
  double fma1 = 0, fmaAll = 0, triad1 = 0, triadAll = 0;
};

nlohmann::json runCase(const fs::path &dir, const std::vector<Config> &configs, const Limits &lim, int reps) {
  nlohmann::json row{{"case", dir.filename().string()}};
  nlohmann::json meta = readJson(dir / "meta.json");
  Context ctx;
  double schedMs = 0;
  Result<Graph> g = scheduleGraph(ctx, (dir / "graph.json").string(), schedMs);
  if (!g) return row["error"] = g.error().str(), row;
  row["tgc_schedule_ms"] = schedMs;
  const nlohmann::json &med = meta["median_of_runs"];
  const nlohmann::json &kut = meta["kernel_under_test"];
  double ops = kut.value("ops", 0.0), mem = kut.value("mem", 0.0);
  bool compute = meta.value("bound", "") == "compute";
  row["bound"] = compute ? "compute" : "memory";
  row["tinygrad"] = {{"kernel_ms", med.value("compute_median", 0.0)}, {"exec_ms", med.value("exec_median", 0.0)},
                     {"realize_ms", med.value("realize_median", 0.0)}, {"schedule_cold_ms", med.value("schedule_cold", 0.0)},
                     {"schedule_warm_ms", med.value("schedule_warm_median", 0.0)}};
  double fp = meta["output_fingerprint"].empty() ? NAN : meta["output_fingerprint"][0].value("sum", NAN);
  for (size_t ci = 0; ci < configs.size(); ++ci) {
    const Config &c = configs[ci];
    tgc_set_num_threads(c.threads);
    nlohmann::json r{{"config", c.name}};
    if (ops > maxSlowGflop * 1e9 && !c.opts.kernel.tileMatmul) { // the untiled configs would take minutes
      r["error"] = "skipped";
      row["configs"].push_back(r);
      continue;
    }
    CodegenOptions opts = c.opts;
    opts.keepIR = !dumpDir.empty();
    auto cs = compileLinear(g->roots[0], opts);
    if (cs && opts.keepIR) {
      std::string stem = dumpDir + "/" + dir.filename().string() + "." + c.name;
      std::ofstream(stem + ".mlir") << (*cs)->mlirText();
      std::ofstream(stem + ".ll") << (*cs)->llvmIRText();
    }
    if (!cs) {
      r["error"] = cs.error().str();
      row["configs"].push_back(r);
      continue;
    }
    const SchedulePlan &plan = (*cs)->plan();
    auto hb = HostBuffers::allocate(plan);
    if (!hb) return row["error"] = hb.error().str(), row;
    r["compile_s"] = (*cs)->compileSeconds();
    (void)(*cs)->run(hb->pointers()); // inputs are generated by the first kernels
    double execMs = medianMs(reps, [&] { (void)(*cs)->run(hb->pointers()); });
    double kernelMs = 0;
    for (const ScheduleCall &call : plan.calls) {
      if (call.kind != ScheduleCall::Kind::Kernel || !readsBuffer(plan.kernels[call.kernel].sink)) continue;
      std::vector<void *> args;
      for (const ScheduleArg &a : call.args) args.push_back(static_cast<char *>(hb->data(a.buffer)) + a.byteOffset);
      kernelMs += medianMs(reps, [&] { (void)(*cs)->runKernel(size_t(call.kernel), args); });
    }
    // Fingerprint: the sum of the last call's output (argument 0).
    const ScheduleCall &last = plan.calls.back();
    const ScheduleBuffer &ob = plan.buffers[last.args[0].buffer];
    if (ob.dtype == dtypes::Float32 && !std::isnan(fp)) {
      const float *o = reinterpret_cast<const float *>(static_cast<char *>(hb->data(last.args[0].buffer)) + last.args[0].byteOffset);
      double sum = 0;
      for (int64_t i = 0; i < last.args[0].bytes / 4; ++i) sum += o[i];
      r["sum_rel_err"] = std::fabs(sum - fp) / std::max(1.0, std::fabs(fp));
    }
    r["exec_ms"] = execMs;
    r["kernel_ms"] = kernelMs;
    r["gflops"] = ops / kernelMs / 1e6;
    r["gbs"] = mem / kernelMs / 1e6;
    r["frac_limit"] = compute ? ops / kernelMs / 1e6 / lim.fmaAll : mem / kernelMs / 1e6 / lim.triadAll;
    r["speedup_kernel"] = row["tinygrad"]["kernel_ms"].get<double>() / kernelMs;
    r["speedup_exec"] = row["tinygrad"]["exec_ms"].get<double>() / execMs;
    row["configs"].push_back(r);
  }
  return row;
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"tgc performance suite: perf cases vs tinygrad's recorded times vs this machine's limits"};
  std::string perfDir = TGC_PERF_DIR, corpusDir = TGC_CORPUS_DIR, jsonOut = "perf_bench.json", only;
  int reps = 5;
  bool noLimits = false, noSched = false;
  app.add_option("--perf-dir", perfDir, "perf cases");
  app.add_option("--corpus-dir", corpusDir, "corpus (scheduling times)");
  app.add_option("--json", jsonOut, "results file");
  app.add_option("--reps", reps, "timed repetitions per measurement (median)");
  app.add_option("--cases", only, "only cases whose name contains this");
  app.add_option("--dump-ir", dumpDir, "write each case's kernel MLIR and optimized LLVM IR per config here");
  app.add_option("--max-slow-gflop", maxSlowGflop, "skip all but the last two configs on kernels above this many GFLOP");
  app.add_flag("--no-limits", noLimits, "skip measuring the machine limits");
  app.add_flag("--no-sched", noSched, "skip the corpus scheduling-time table");
  CLI11_PARSE(app, argc, argv);
  registerSchedulePasses();
  int cores = int(std::max(1u, std::thread::hardware_concurrency()));

  Limits lim{225.44, 440.85, 35.3, 70.13}; // machine.json's best, used with --no-limits
  nlohmann::json out;
  if (!noLimits) lim = {fmaGflops(1), fmaGflops(cores), triadGBs(1), triadGBs(cores)};
  out["limits"] = {{"fma_gflops_1t", lim.fma1}, {"fma_gflops_all", lim.fmaAll}, {"triad_gbs_1t", lim.triad1},
                   {"triad_gbs_all", lim.triadAll}, {"measured", !noLimits}};
  std::printf("machine (%s): FMA %.1f GFLOPS 1 thread, %.1f on %d; triad %.1f GB/s 1 thread, %.1f on %d\n\n",
              noLimits ? "machine.json" : "measured now", lim.fma1, lim.fmaAll, cores, lim.triad1, lim.triadAll, cores);

  using codegen::KernelOptions;
  auto cfg = [](std::string name, KernelOptions k, int threads) {
    CodegenOptions o;
    o.kernel = k;
    return Config{std::move(name), o, threads};
  };
  KernelOptions plain = KernelOptions::none(), reassoc = plain, tiled = plain, all;
  reassoc.strictFP = false;
  tiled.strictFP = false, tiled.tileMatmul = true;
  KernelOptions threaded = tiled;
  threaded.threads = true;
  KernelOptions versioned = threaded;
  versioned.versionGates = true;
  std::vector<Config> configs{cfg("plain", plain, 1), cfg("+reassoc", reassoc, 1), cfg("+tile", tiled, 1),
                              cfg("+threads", threaded, cores), cfg("+gates", versioned, cores),
                              cfg("+pack", all, cores)};

  std::vector<fs::path> cases;
  for (const auto &e : fs::directory_iterator(perfDir))
    if (e.is_directory() && fs::exists(e.path() / "graph.json") && e.path().filename().string().find(only) != std::string::npos)
      cases.push_back(e.path());
  std::sort(cases.begin(), cases.end());

  std::printf("%-20s %-7s %9s", "case", "bound", "tg ms");
  for (const Config &c : configs) std::printf(" | %-9s %8s %7s %6s %5s", c.name.c_str(), "ms", "GFLOPS", "GB/s", "lim%");
  std::printf(" | %7s %7s %6s\n", "x tg", "exec x", "err");
  std::vector<double> speedups;
  for (const fs::path &dir : cases) {
    nlohmann::json row = runCase(dir, configs, lim, reps);
    out["cases"].push_back(row);
    if (row.contains("error")) {
      std::printf("%-20s error: %s\n", dir.filename().c_str(), row["error"].get<std::string>().c_str());
      continue;
    }
    std::printf("%-20s %-7s %9.2f", dir.filename().c_str(), row["bound"].get<std::string>().c_str(),
                row["tinygrad"]["kernel_ms"].get<double>());
    for (const auto &r : row["configs"]) {
      if (r.contains("error")) {
        std::printf(" | %-9s %29s", "", r["error"] == "skipped" ? "skipped" : "error");
        continue;
      }
      std::printf(" | %-9s %8.2f %7.1f %6.1f %4.0f%%", "", r["kernel_ms"].get<double>(), r["gflops"].get<double>(),
                  r["gbs"].get<double>(), 100 * r["frac_limit"].get<double>());
    }
    const auto &best = row["configs"].back();
    if (!best.contains("error")) {
      speedups.push_back(best["speedup_exec"].get<double>());
      std::printf(" | %6.1fx %6.1fx %6.0e\n", best["speedup_kernel"].get<double>(), best["speedup_exec"].get<double>(),
                  best.value("sum_rel_err", NAN));
    } else {
      std::printf("\n");
    }
    std::fflush(stdout);
  }
  if (!speedups.empty()) {
    std::sort(speedups.begin(), speedups.end());
    out["median_exec_speedup"] = speedups[speedups.size() / 2];
    std::printf("\nmedian end-to-end (all kernels, generators included) speedup vs tinygrad exec: %.2fx over %zu cases\n",
                speedups[speedups.size() / 2], speedups.size());
  }
  std::printf("columns: tg ms = tinygrad's kernel-under-test time; per config: kernel-under-test ms, rates from tinygrad's\n"
              "estimates, %% of the all-core limit (FMA for compute-bound, triad otherwise); x tg = tinygrad / tgc for the\n"
              "last config; exec x = the same over all kernels; err = |sum - tinygrad's output sum| / max(1, |sum|).\n");

  if (!noSched) {
    std::printf("\n%-44s %8s %10s %10s %8s\n", "scheduling (graph.json -> LINEAR)", "tgc ms", "tg cold ms", "tg warm ms", "x cold");
    std::vector<fs::path> corpus;
    for (const auto &e : fs::directory_iterator(corpusDir))
      if (e.is_directory() && fs::exists(e.path() / "graph.json")) corpus.push_back(e.path());
    for (const fs::path &p : cases) corpus.push_back(p);
    std::sort(corpus.begin(), corpus.end());
    for (const fs::path &dir : corpus) {
      nlohmann::json meta = readJson(dir / "meta.json");
      double cold = 0, warm = 0;
      if (meta.contains("median_of_runs")) {
        cold = meta["median_of_runs"].value("schedule_cold", 0.0);
        warm = meta["median_of_runs"].value("schedule_warm_median", 0.0);
      } else if (meta.contains("timing_ms")) {
        cold = meta["timing_ms"].value("schedule_cold_median", 0.0);
        warm = meta["timing_ms"].value("schedule_warm_median", 0.0);
      }
      if (meta.value("status", "") != "ok" || cold == 0) continue;
      Context ctx;
      double ms = 0;
      if (!scheduleGraph(ctx, (dir / "graph.json").string(), ms)) continue;
      std::printf("%-44s %8.2f %10.2f %10.2f %7.0fx\n", dir.filename().c_str(), ms, cold, warm, cold / ms);
      out["scheduling"].push_back({{"case", dir.filename().string()}, {"tgc_ms", ms}, {"tinygrad_cold_ms", cold},
                                   {"tinygrad_warm_ms", warm}});
    }
  }
  std::ofstream(jsonOut) << out.dump(1) << "\n";
  std::printf("\nresults: %s\n", jsonOut.c_str());
  return 0;
}
