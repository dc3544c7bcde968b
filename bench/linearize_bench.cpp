//===- linearize_bench.cpp - how access + linearize scale -----------------===//
//
// Builds synthetic kernel graphs (SyntheticKernelGraph.h: chains, fan-in and
// fan-out, many buffers, assigns that kernels read before) of 10^3..10^5
// kernels and times, best of a few runs, building the graph apart from the
// `access` and `linearize` passes, with the peak RSS, so the per-kernel
// column shows whether the growth is near-linear. Times are wall clock
// (steady_clock) and, since a loaded machine stretches long runs more than
// short ones, also the thread's CPU time, which the per-kernel column uses. Then times the largest
// corpus case, checking its schedule against tinygrad's, and finally checks
// the synthetic schedules against the literal (quadratic) contract
// transcription of ReferenceLinearize.h, timing that too.
//
//===----------------------------------------------------------------------===//
#include "ReferenceLinearize.h"
#include "SyntheticKernelGraph.h"

#include "IR/Graph.h"
#include "IR/JSON.h"
#include "Schedule/Access.h"
#include "Schedule/Linearize.h"

#include <CLI/CLI.hpp>

#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <memory>

using namespace tgc;
using Clock = std::chrono::steady_clock;

namespace {

double cpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
}

/// Wall and CPU milliseconds since construction.
struct Stopwatch {
  Clock::time_point wall0 = Clock::now();
  double cpu0 = cpuMs();
  double wall() const { return std::chrono::duration<double, std::milli>(Clock::now() - wall0).count(); }
  double cpu() const { return cpuMs() - cpu0; }
};

struct Ms {
  double wall = 0, cpu = 0;
};
Ms lap(const Stopwatch &w) { return {w.wall(), w.cpu()}; }

double peakRssMB() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return double(ru.ru_maxrss) / 1024.0; // KiB on Linux
}

/// The best (least CPU time) of several runs, per column.
struct Best {
  static constexpr double kInf = std::numeric_limits<double>::infinity();
  Ms build{kInf, kInf}, access{kInf, kInf}, linearize{kInf, kInf}, total{kInf, kInf};
  static void keep(Ms &best, Ms t) {
    best.wall = std::min(best.wall, t.wall);
    best.cpu = std::min(best.cpu, t.cpu);
  }
  void take(Ms a, Ms l) {
    keep(access, a);
    keep(linearize, l);
    keep(total, {a.wall + l.wall, a.cpu + l.cpu});
  }
};

/// Runs `access` then `linearize` on the graph rooted at `root`; the LINEAR or a failure message.
Result<const UOp *> schedule(const UOp *root, Ms &accessMs, Ms &linearizeMs) {
  Graph g;
  g.roots = {root};
  sched::AccessPass access;
  sched::LinearizePass linearize;
  Stopwatch w;
  Status st = access.run(g);
  accessMs = lap(w);
  if (!st.ok()) return st.error();
  w = Stopwatch();
  st = linearize.run(g);
  linearizeMs = lap(w);
  if (!st.ok()) return st.error();
  return g.roots[0];
}

testing::SyntheticOptions optionsFor(size_t kernels, size_t persistent, uint64_t seed) {
  testing::SyntheticOptions o;
  o.kernels = kernels;
  o.persistent = persistent;
  o.orderRate = 0.05;
  o.unusedRate = 0.05;
  o.reshapeRate = 0.05;
  o.seed = seed;
  return o;
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"Times the access + linearize passes on synthetic kernel graphs and the largest corpus case."};
  std::vector<size_t> sizes{1000, 10000, 100000};
  int runs = 3;
  size_t persistent = 0, checkMax = 10000;
  std::string corpus = TGC_CORPUS_DIR;
  app.add_option("--sizes", sizes, "Kernel counts")->delimiter(',');
  app.add_option("--runs", runs, "Runs per size (the best is reported)")->check(CLI::PositiveNumber);
  app.add_option("--persistent", persistent, "Persistent (assigned) buffers; 0 = kernels / 8");
  app.add_option("--check-max", checkMax, "Check against the reference linearizer up to this many kernels");
  app.add_option("--corpus", corpus, "Corpus directory (for k3_transformer_12l_train)");
  CLI11_PARSE(app, argc, argv);

  std::printf("synthetic kernel graphs: %s persistent buffers, best of %d runs\n",
              persistent ? std::to_string(persistent).c_str() : "kernels/8", runs);
  std::printf("CPU ms (wall ms) per phase; us/kernel is access + linearize CPU time per kernel\n");
  std::printf("%8s %8s %18s %16s %18s %18s %9s %8s\n", "kernels", "nodes", "build", "access", "linearize",
              "access+linearize", "us/kernel", "RSS MB");
  auto cell = [](Ms t) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.1f (%.1f)", t.cpu, t.wall);
    return std::string(buf);
  };
  for (size_t n : sizes) {
    Best t;
    size_t nodes = 0;
    for (int r = 0; r < runs; ++r) {
      auto k = std::make_unique<testing::KG>();
      Stopwatch w;
      const UOp *root = testing::buildSyntheticKernelGraph(*k, optionsFor(n, persistent, 1));
      Best::keep(t.build, lap(w));
      nodes = k->ctx.size();
      Ms a, l;
      Result<const UOp *> linear = schedule(root, a, l);
      if (!linear) {
        std::fprintf(stderr, "error: %zu kernels: %s\n", n, linear.error().str().c_str());
        return 1;
      }
      if ((*linear)->numSrc() != n) {
        std::fprintf(stderr, "error: %zu kernels scheduled as %zu calls\n", n, (*linear)->numSrc());
        return 1;
      }
      t.take(a, l);
    }
    std::printf("%8zu %8zu %18s %16s %18s %18s %9.2f %8.1f\n", n, nodes, cell(t.build).c_str(), cell(t.access).c_str(),
                cell(t.linearize).c_str(), cell(t.total).c_str(), 1000.0 * t.total.cpu / double(n), peakRssMB());
  }

  namespace fs = std::filesystem;
  fs::path kernelsJson = fs::path(corpus) / "k3_transformer_12l_train" / "kernels.json";
  if (fs::exists(kernelsJson)) {
    Context ctx;
    Result<Graph> doc = readGraphJSONFile(ctx, kernelsJson.string());
    const UOp *root = doc ? doc->root("kernel_graph[0]") : nullptr;
    if (!root) {
      std::fprintf(stderr, "error: cannot read kernel_graph[0] of %s\n", kernelsJson.c_str());
      return 1;
    }
    Best t;
    const UOp *got = nullptr;
    for (int r = 0; r < runs; ++r) {
      Ms a, l;
      Result<const UOp *> linear = schedule(root, a, l);
      if (!linear) {
        std::fprintf(stderr, "error: k3_transformer_12l_train: %s\n", linear.error().str().c_str());
        return 1;
      }
      got = *linear;
      t.take(a, l);
    }
    bool same = got == doc->root("schedule[0]");
    std::printf("\nk3_transformer_12l_train kernel_graph[0]: %zu kernels; CPU ms (wall ms): access %s, linearize %s, "
                "access+linearize %s (%.2f us/kernel); the schedule %s tinygrad's schedule[0]\n",
                got->numSrc(), cell(t.access).c_str(), cell(t.linearize).c_str(), cell(t.total).c_str(),
                1000.0 * t.total.cpu / double(got->numSrc()), same ? "matches" : "DIFFERS FROM");
    if (!same) return 1;
  } else {
    std::printf("\n(no corpus case at %s)\n", kernelsJson.c_str());
  }

  // Last, as its quadratic memory would dominate the peak RSS above.
  bool checked = false;
  for (size_t n : sizes) {
    if (n > checkMax) continue;
    if (!checked) std::printf("\nreference (contract transcription, bitsets) on the same graphs:\n");
    checked = true;
    testing::KG k;
    const UOp *root = testing::buildSyntheticKernelGraph(k, optionsFor(n, persistent, 1));
    Ms a, l;
    Result<const UOp *> linear = schedule(root, a, l);
    Stopwatch w;
    Result<const UOp *> ref = testing::reference::linearize(root);
    Ms refMs = lap(w);
    bool same = linear && ref && *linear == *ref;
    std::printf("%8zu kernels: reference linearize %s ms, this one %s ms; schedules %s\n", n, cell(refMs).c_str(),
                cell(l).c_str(), same ? "identical" : "DIFFER");
    if (!same) return 1;
  }
  return 0;
}
