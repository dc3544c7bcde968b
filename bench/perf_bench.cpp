//===- perf_bench.cpp - tgc vs tinygrad's recorded times vs machine limits ===//
//
// One command, one table (issue #9): the machine's limits measured in this
// run (streaming triad and read, FMA peak on 1 and all cores); tgc's own kernel cases
// (elementwise from L1 to far beyond the LLC, reductions, matmuls, attention);
// the /work/shared/perf cases under each optimization config beside
// tinygrad's recorded times; every corpus model end to end beside tinygrad's
// run; compile times per graph beside tinygrad's scheduling and codegen; and
// issue #9's four targets, met or not. Every row also goes to a JSON file.
//
//===----------------------------------------------------------------------===//
#include "Sections.h"

#include "Schedule/Passes.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

using namespace tgc;
using namespace tgc::bench;

int main(int argc, char **argv) {
  CLI::App app{"tgc performance suite: machine limits, kernel cases, perf cases and corpus models vs tinygrad's recorded "
               "times, compile times, issue #9's targets"};
  BenchOptions o;
  o.perfDir = TGC_PERF_DIR;
  o.corpusDir = TGC_CORPUS_DIR;
  std::string jsonOut = "perf_bench.json", markdownOut, partsArg;
  bool noLimits = false;
  const std::vector<std::string> allParts{"limits", "kernels", "perf", "corpus", "compile"};
  app.add_option("--parts", partsArg,
                 "comma-separated sections to run: limits,kernels,perf,corpus,compile (default: all; --smoke: all but perf)");
  app.add_option("--perf-dir", o.perfDir, "perf cases");
  app.add_option("--corpus-dir", o.corpusDir, "corpus (models end to end, compile times)");
  app.add_option("--json", jsonOut, "results file");
  app.add_option("--markdown", markdownOut, "also write the results as markdown tables here (docs/results.md)");
  app.add_option("--reps", o.reps, "timed repetitions per measurement (median)");
  app.add_option("--cases", o.filter, "only rows whose case name contains this (a comma list: any of these)");
  app.add_option("--dump-ir", o.dumpDir, "write each perf case's kernel MLIR and optimized LLVM IR per config here");
  app.add_option("--write-cases", o.casesDir, "write each kernel case's graph in the text form here (DIR/<case>.tgc)");
  app.add_option("--max-slow-gflop", o.maxSlowGflop, "perf cases: skip all but the last two configs above this many GFLOP");
  app.add_option("--min-sample-ms", o.minSampleMs, "kernel cases and corpus models: repeat a kernel (a model run) within one sample until it lasts this long");
  app.add_flag("--no-limits", noLimits, "use machine.json's best limits instead of measuring them");
  app.add_flag("--smoke", o.smoke, "tiny kernel sizes, 1 repetition, the 3 smallest corpus graphs: checks the bench runs");
  CLI11_PARSE(app, argc, argv);
  const std::string description = runDescription(argc, argv); // the load before the run, not after
  if (o.smoke && app.count("--reps") == 0) o.reps = 1;

  std::set<std::string> parts;
  if (partsArg.empty()) {
    parts.insert(allParts.begin(), allParts.end());
    if (o.smoke) parts.erase("perf");
  } else {
    std::stringstream ss(partsArg);
    for (std::string p; std::getline(ss, p, ',');) {
      if (std::find(allParts.begin(), allParts.end(), p) == allParts.end()) {
        std::fprintf(stderr, "perf_bench: error: --parts: unknown section '%s' (sections: limits, kernels, perf, corpus, "
                             "compile)\n", p.c_str());
        return 2;
      }
      parts.insert(p);
    }
  }
  if (noLimits) parts.erase("limits");
  for (const std::string &dir : {o.casesDir, o.dumpDir})
    if (!dir.empty()) std::filesystem::create_directories(dir);
  registerSchedulePasses();

  int cores = int(std::max(1u, std::thread::hardware_concurrency()));
  Limits lim; // machine.json's best, or these (its values) if it cannot be read
  lim.fma1 = 225.44, lim.fmaAll = 440.85, lim.triad1 = 35.3, lim.triadAll = 70.13, lim.read1 = 37.36, lim.readAll = 66.16;
  lim.cores = cores;
  nlohmann::json machine = readJson(std::filesystem::path(o.perfDir) / "machine.json");
  if (machine.is_object() && machine.contains("limits")) {
    const auto &l = machine["limits"];
    for (auto [key, value] : {std::pair{"fma_gflops_1t", &lim.fma1}, {"fma_gflops_all", &lim.fmaAll},
                              {"triad_gbs_1t", &lim.triad1}, {"triad_gbs_all", &lim.triadAll},
                              {"read_gbs_1t", &lim.read1}, {"read_gbs_all", &lim.readAll}})
      *value = l.value(key, *value);
  }
  double idleRidge = lim.fmaAll / lim.triadAll;
  bool measured = parts.count("limits");
  const double limitScale = o.smoke ? 0.01 : 1.0;
  if (measured) lim = measureLimits(cores, limitScale);
  lim.idleRidge = idleRidge;
  nlohmann::json out;
  out["smoke"] = o.smoke;
  std::vector<std::string> problems = limitProblems(lim);
  auto limitsJson = [&](const std::vector<std::string> &problems, const char *when) {
    return nlohmann::json{{"fma_gflops_1t", lim.fma1}, {"fma_gflops_all", lim.fmaAll}, {"triad_gbs_1t", lim.triad1},
                          {"triad_gbs_all", lim.triadAll}, {"read_gbs_1t", lim.read1}, {"read_gbs_all", lim.readAll},
                          {"cores", cores}, {"measured", measured}, {"measured_when", when},
                          {"clock_ghz", lim.clockGHz}, {"fma_per_cycle", lim.fmaPerCycle()}, {"problems", problems}};
  };
  out["limits"] = limitsJson(problems, measured ? "before the sections" : "machine.json");
  std::printf("machine (%s): FMA %.1f GFLOPS 1 thread, %.1f on %d; triad %.1f GB/s 1 thread, %.1f on %d; read %.1f GB/s "
              "1 thread, %.1f on %d",
              measured ? "measured now" : "machine.json", lim.fma1, lim.fmaAll, cores, lim.triad1, lim.triadAll, cores,
              lim.read1, lim.readAll, cores);
  if (lim.clockGHz > 0) std::printf("; clock %.2f GHz: %.2f 512-bit FMAs a cycle", lim.clockGHz, lim.fmaPerCycle());
  std::printf("\n");
  for (const std::string &p : problems) std::printf("BAD LIMIT: %s\n", p.c_str());
  if (o.smoke) std::printf("smoke run: tiny sizes, the rates below mean nothing\n");

  // Each section's rows are written as soon as it ends, so a long run interrupted keeps what it measured.
  auto save = [&] { std::ofstream(jsonOut) << out.dump(1) << "\n"; };
  if (parts.count("kernels")) out["kernels"] = runKernelSection(o, lim), save();
  if (parts.count("perf")) out["perf"] = runPerfSection(o, lim), save();
  if (parts.count("corpus")) out["corpus"] = runCorpusSection(o), save();
  if (parts.count("compile")) out["compile"] = runCompileSection(o), save();
  // The host's other work lowers a peak measured during it: measured again after the sections, each limit is the
  // higher of the two, and the rows' fractions are taken of it (they were printed above against the first).
  bool measuredRows = parts.count("kernels") || parts.count("perf");
  if (measured && measuredRows) {
    Limits before = lim;
    lim = lim.higher(measureLimits(cores, limitScale)); // keeps lim's idleRidge
    out["limits"] = limitsJson(limitProblems(lim), "the higher of before and after the sections");
    rebaseLimits(out, {"kernels", "perf"}, lim);
    std::printf("\nmachine, measured again after the sections, the higher of the two: FMA %.1f (was %.1f) GFLOPS on %d; "
                "triad %.1f (%.1f) GB/s; read %.1f (%.1f) GB/s; the JSON's and the markdown's rows are of these\n",
                lim.fmaAll, before.fmaAll, cores, lim.triadAll, before.triadAll, lim.readAll, before.readAll);
  }
  out["targets"] = printTargets(out);
  save();
  if (std::vector<std::string> over = rowsOverLimit(out); !over.empty()) {
    std::printf("\nBAD LIMIT: %zu rows above 100%% of their limit, which therefore does not hold for them:", over.size());
    for (const std::string &r : over) std::printf(" %s;", r.c_str());
    std::printf("\n");
  }
  if (!markdownOut.empty() && !writeMarkdown(out, markdownOut, description)) {
    std::fprintf(stderr, "perf_bench: error: cannot write %s\n", markdownOut.c_str());
    return 1;
  }
  // A row that failed (not one skipped on purpose) fails the run: the smoke test relies on it.
  int failed = 0;
  for (const char *section : {"kernels", "perf", "corpus", "compile"})
    for (const auto &row : out.value(section, nlohmann::json::array())) {
      failed += row.contains("error");
      for (const auto &c : row.value("configs", nlohmann::json::array())) failed += c.contains("error") && c["error"] != "skipped";
    }
  std::printf("\nresults: %s%s%s\n", jsonOut.c_str(), markdownOut.empty() ? "" : (", " + markdownOut).c_str(),
              failed ? (", " + std::to_string(failed) + " rows failed").c_str() : "");
  return failed ? 1 : 0;
}
