//===- linearize_bench.cpp - how access + linearize scale -----------------===//
//
// Builds synthetic kernel graphs (SyntheticKernelGraph.h: chains, fan-in and
// fan-out, many buffers, assigns that kernels read before) of 10^3..10^5
// kernels and times, best of a few runs, building the graph apart from the
// `access` and `linearize` passes, with the peak RSS, so the per-kernel
// column shows whether the growth is near-linear. Then times the largest
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

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <memory>

using namespace tgc;
using Clock = std::chrono::steady_clock;

namespace {

double msSince(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

double peakRssMB() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return double(ru.ru_maxrss) / 1024.0; // KiB on Linux
}

struct Timing {
  double access = std::numeric_limits<double>::infinity(), linearize = access, total = access;
  void take(double a, double l) {
    access = std::min(access, a);
    linearize = std::min(linearize, l);
    total = std::min(total, a + l);
  }
};

/// Runs `access` then `linearize` on the graph rooted at `root`; the LINEAR or a failure message.
Result<const UOp *> schedule(const UOp *root, double &accessMs, double &linearizeMs) {
  Graph g;
  g.roots = {root};
  sched::AccessPass access;
  sched::LinearizePass linearize;
  Clock::time_point t0 = Clock::now();
  Status st = access.run(g);
  accessMs = msSince(t0);
  if (!st.ok()) return st.error();
  t0 = Clock::now();
  st = linearize.run(g);
  linearizeMs = msSince(t0);
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
  std::printf("%9s %9s %10s %10s %12s %12s %10s %11s\n", "kernels", "nodes", "build ms", "access ms", "linearize ms",
              "acc+lin ms", "us/kernel", "peak RSS MB");
  for (size_t n : sizes) {
    double build = std::numeric_limits<double>::infinity();
    Timing t;
    size_t nodes = 0;
    for (int r = 0; r < runs; ++r) {
      auto k = std::make_unique<testing::KG>();
      Clock::time_point t0 = Clock::now();
      const UOp *root = testing::buildSyntheticKernelGraph(*k, optionsFor(n, persistent, 1));
      build = std::min(build, msSince(t0));
      nodes = k->ctx.size();
      double a = 0, l = 0;
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
    std::printf("%9zu %9zu %10.1f %10.1f %12.1f %12.1f %10.2f %11.1f\n", n, nodes, build, t.access, t.linearize,
                t.total, 1000.0 * t.total / double(n), peakRssMB());
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
    Timing t;
    const UOp *got = nullptr;
    for (int r = 0; r < runs; ++r) {
      double a = 0, l = 0;
      Result<const UOp *> linear = schedule(root, a, l);
      if (!linear) {
        std::fprintf(stderr, "error: k3_transformer_12l_train: %s\n", linear.error().str().c_str());
        return 1;
      }
      got = *linear;
      t.take(a, l);
    }
    bool same = got == doc->root("schedule[0]");
    std::printf("\nk3_transformer_12l_train kernel_graph[0]: %zu kernels, access %.2f ms, linearize %.2f ms, "
                "acc+lin %.2f ms (%.2f us/kernel); schedule %s tinygrad's schedule[0]\n",
                got->numSrc(), t.access, t.linearize, t.total, 1000.0 * t.total / double(got->numSrc()),
                same ? "matches" : "DIFFERS FROM");
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
    double a = 0, l = 0;
    Result<const UOp *> linear = schedule(root, a, l);
    Clock::time_point t0 = Clock::now();
    Result<const UOp *> ref = testing::reference::linearize(root);
    double refMs = msSince(t0);
    bool same = linear && ref && *linear == *ref;
    std::printf("%9zu kernels: reference linearize %.1f ms; schedules %s\n", n, refMs, same ? "identical" : "DIFFER");
    if (!same) return 1;
  }
  return 0;
}
