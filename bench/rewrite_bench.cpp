//===- rewrite_bench.cpp - graph_rewrite and simplify on big graphs --------===//
//
// Times the rewrite engine and the symbolic simplifier on graphs of about
// 10^5 and 10^6 nodes and reports peak memory (getrusage), to show that the
// cost grows linearly with the graph. Two graph shapes:
//   deep: one chain, x' = max(x + ((ra*c + rb)//c)*1 + 0, x), whose every step
//         simplifies (to max(x + ra, x)); the graph is as deep as it is big.
//   wide: a SINK over many independent index expressions of the kind
//         movement ops produce, ((r0*12 + r1*4 + r2)//4)%3 + k, each of which
//         folds to r1 + k.
// Each is rewritten twice: with a three-rule identity matcher (the engine's
// own cost) and with tinygrad's full `symbolic` matcher.
//
// Usage: rewrite_bench [N ...]   (default: 100000 300000 1000000)
// Each size runs in a fresh child process, so that peak memory is per size.
//
//===----------------------------------------------------------------------===//
#include "IR/GraphRewrite.h"
#include "IR/Symbolic.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace tgc;

namespace {

// CPU time of this process: the machine may be shared, wall time is noisy.
double cpuSeconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + 1e-6 * double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

long peakRssKiB() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

const UOp *rangeOf(Context &c, int64_t end, int64_t axis) {
  return c.get(Op::RANGE, dtypes::WeakInt, {c.constInt(end)},
               Value::tuple({Value::integer(axis), Value::enumMember("AxisType", "LOOP")}));
}

// About n nodes: a chain of steps, each adding ~4 fresh nodes.
const UOp *deepGraph(Context &c, size_t n) {
  std::vector<UOpRef> ranges;
  for (int i = 0; i < 16; ++i) ranges.push_back(rangeOf(c, 2 + i, i));
  UOpRef x = rangeOf(c, 100, 16);
  for (size_t i = 0; c.size() < n; ++i) {
    size_t a = i % 16, b = (a + 1 + (i / 16) % 15) % 16; // two different ranges
    UOpRef ra = ranges[a], rb = ranges[b];
    int64_t k = 2 + int64_t(b); // rb < k, so (ra*k + rb)//k is ra
    UOpRef idx = (ra * k + rb) / k;
    x = (x + (idx * 1 + 0)).maximum(x);
  }
  return x;
}

// About n nodes: independent index expressions under one SINK.
const UOp *wideGraph(Context &c, size_t n) {
  UOpRef r0 = rangeOf(c, 2, 0), r1 = rangeOf(c, 3, 1), r2 = rangeOf(c, 4, 2);
  std::vector<const UOp *> roots;
  for (int64_t k = 0; c.size() < n; ++k) roots.push_back(((r0 * 12 + r1 * 4 + r2) / 4) % 3 + k);
  return c.get(Op::SINK, dtypes::Void, std::move(roots));
}

const PatternMatcher &identities() {
  static const PatternMatcher pm({
      rule(var("x") + 0, [](Match &m) { return m["x"]; }),
      rule(var("x") * 1, [](Match &m) { return m["x"]; }),
      rule(var("x") * 0, [](Match &m) { return m["x"].constLike(0); }),
  });
  return pm;
}

int runOne(size_t n) {
  for (const char *shape : {"deep", "wide"}) {
    for (const char *matcher : {"identities", "symbolic"}) {
      Context c;
      double t0 = cpuSeconds();
      const UOp *g = std::string(shape) == "deep" ? deepGraph(c, n) : wideGraph(c, n);
      double build = cpuSeconds() - t0;
      size_t before = c.size();
      t0 = cpuSeconds();
      auto r = graphRewrite(g, std::string(matcher) == "symbolic" ? symbolic() : identities());
      double rewrite = cpuSeconds() - t0;
      if (!r) {
        std::fprintf(stderr, "%s\n", r.error().str().c_str());
        return 1;
      }
      // the simplifier did its work: no MUL/FLOORDIV/FLOORMOD is left
      if (std::string(matcher) == "symbolic")
        for (const UOp *u : toposort(*r))
          if (u->isIn(OpSet{Op::MUL, Op::FLOORDIV, Op::FLOORMOD})) {
            std::fprintf(stderr, "%s: not simplified: %s\n", shape, u->str().c_str());
            return 1;
          }
      std::printf("%-5s %-10s nodes=%8zu  build=%6.2fs  rewrite=%6.2fs cpu  (%6.2f us/node)  new_nodes=%8zu  peak_rss=%7.1f MiB\n",
                  shape, matcher, before, build, rewrite, 1e6 * rewrite / double(before), c.size() - before,
                  double(peakRssKiB()) / 1024.0);
      std::fflush(stdout);
    }
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  std::vector<size_t> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::strtoull(argv[i], nullptr, 10));
  if (sizes.empty()) sizes = {100000, 300000, 1000000};
  if (sizes.size() == 1) return runOne(sizes[0]);
  int rc = 0;
  for (size_t n : sizes) {
    std::fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) _exit(runOne(n));
    int status = 0;
    waitpid(pid, &status, 0);
    rc |= WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  }
  return rc;
}
