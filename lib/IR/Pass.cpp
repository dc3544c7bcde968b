//===- Pass.cpp - registry, pipeline parsing and the pass runner ----------===//
#include "IR/Pass.h"

#include "IR/Symbolic.h"
#include "IR/Verifier.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <system_error>

namespace tgc {

PassRegistry &PassRegistry::instance() {
  static PassRegistry r;
  return r;
}

void PassRegistry::add(PassInfo info) {
  std::string name = info.name;
  passes_.insert_or_assign(std::move(name), std::move(info));
}

const PassInfo *PassRegistry::lookup(std::string_view name) const {
  auto it = passes_.find(name);
  return it == passes_.end() ? nullptr : &it->second;
}

std::vector<const PassInfo *> PassRegistry::all() const {
  std::vector<const PassInfo *> out;
  for (const auto &[_, info] : passes_) out.push_back(&info);
  return out;
}

void registerIRPasses() {
  PassRegistry::instance().add({"verify", "check the graph against tinygrad's spec rules", [] {
                                  return std::make_unique<FunctionPass>([](Graph &g) { return verifyGraph(g); });
                                }});
  PassRegistry::instance().add({"simplify", "tinygrad's symbolic simplifier (UOp.simplify) on every root",
                                [] { return createSimplifyPass(); }});
}

// A pipeline alias stands for its steps; aliases may nest, but not forever.
static Status expandPass(const PassInfo *info, std::vector<const PassInfo *> &out, unsigned depth) {
  if (info->steps.empty()) {
    out.push_back(info);
    return Status::success();
  }
  if (depth > 16) return Diagnostic({}, "pipeline alias '" + info->name + "' nests too deeply");
  for (const std::string &step : info->steps) {
    const PassInfo *s = PassRegistry::instance().lookup(step);
    if (!s) return Diagnostic({}, "pipeline alias '" + info->name + "' names unknown pass '" + step + "'");
    if (Status st = expandPass(s, out, depth + 1); !st.ok()) return st;
  }
  return Status::success();
}

Result<std::vector<const PassInfo *>> parsePipeline(std::string_view spec) {
  std::vector<const PassInfo *> out;
  size_t pos = 0;
  while (pos <= spec.size()) {
    size_t comma = spec.find(',', pos);
    std::string_view name = spec.substr(pos, comma == std::string_view::npos ? spec.size() - pos : comma - pos);
    while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
    while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
    if (name.empty()) {
      if (!spec.empty()) return Diagnostic({}, "empty pass name in pipeline '" + std::string(spec) + "'");
    } else if (const PassInfo *info = PassRegistry::instance().lookup(name)) {
      if (Status st = expandPass(info, out, 0); !st.ok()) return st.error();
    } else {
      std::string known;
      for (const PassInfo *p : PassRegistry::instance().all()) known += (known.empty() ? "" : ", ") + p->name;
      return Diagnostic({}, "unknown pass '" + std::string(name) + "' (known passes: " + known + ")");
    }
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return out;
}

namespace {
// CPU time of the process: on a shared machine the wall time mostly measures the other jobs.
double cpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}
struct PassTiming {
  std::string name;
  double cpu, wall;
  size_t nodes; ///< nodes the pass interned (made new in the graph's Context)
};
size_t contextSize(const Graph &g) { return g.roots.empty() ? 0 : g.roots[0]->context().size(); }
} // namespace

PassPreparation::PassPreparation(const std::vector<const PassInfo *> &passes) {
  std::vector<std::function<void()>> work;
  for (const PassInfo *p : passes)
    if (p->prepare) work.push_back(p->prepare);
  if (work.empty()) return;
  try {
    thread_ = std::thread([work = std::move(work)] {
      // a table whose building throws is built again (and throws there) on first use
      try {
        for (const auto &fn : work) fn();
      } catch (...) {
      }
    });
  } catch (const std::system_error &) {
    // no thread: each pass builds its tables on first use, as it would anyway
  }
}

Status runPipeline(Graph &g, const std::vector<const PassInfo *> &passes, const PipelineOptions &opts) {
  using Clock = std::chrono::steady_clock;
  std::vector<PassTiming> timings;
  auto total0 = Clock::now();
  double cpu0 = cpuSeconds();
  Status result;
  for (const PassInfo *info : passes) {
    std::unique_ptr<Pass> pass = info->create();
    size_t n0 = contextSize(g);
    auto t0 = Clock::now();
    double c0 = cpuSeconds();
    Status st = pass->run(g);
    timings.push_back({info->name, cpuSeconds() - c0, std::chrono::duration<double>(Clock::now() - t0).count(),
                       contextSize(g) - n0});
    if (!st.ok()) {
      Diagnostic d = st.error();
      d.notes.push_back("while running pass '" + info->name + "'");
      result = Status(std::move(d));
      break;
    }
    if (opts.verifyEach && info->name != "verify") {
      if (Status v = verifyGraph(g); !v.ok()) {
        Diagnostic d = v.error();
        d.notes.push_back("the graph is invalid after pass '" + info->name + "'");
        result = Status(std::move(d));
        break;
      }
    }
    bool print = opts.printAfterAll ||
                 std::find(opts.printAfter.begin(), opts.printAfter.end(), info->name) != opts.printAfter.end();
    if (print && opts.printer) opts.printer(info->name, g, *pass);
    if (opts.statsStream) *opts.statsStream << pass->statsText();
  }
  if (opts.timePasses && opts.timingStream) {
    double total = std::chrono::duration<double>(Clock::now() - total0).count();
    double totalCpu = cpuSeconds() - cpu0;
    auto &os = *opts.timingStream;
    char line[200];
    os << "===-------------------------------------------------------------------------===\n"
       << "                         ... Pass execution timing report ...\n"
       << "===-------------------------------------------------------------------------===\n";
    std::snprintf(line, sizeof line,
                  "  Total Execution Time: %.4f seconds (%.4f wall clock)\n\n"
                  "   ---User+System---   ---Wall Time---  ---Nodes---  --- Name ---\n",
                  totalCpu, total);
    os << line;
    auto pct = [](double part, double whole) { return whole > 0 ? 100.0 * part / whole : 0.0; };
    for (const PassTiming &t : timings) {
      std::snprintf(line, sizeof line, "   %.4f (%5.1f%%)   %.4f (%5.1f%%)  %11zu  %s\n", t.cpu, pct(t.cpu, totalCpu),
                    t.wall, pct(t.wall, total), t.nodes, t.name.c_str());
      os << line;
    }
    size_t nodes = 0;
    for (const PassTiming &t : timings) nodes += t.nodes;
    std::snprintf(line, sizeof line, "   %.4f (100.0%%)   %.4f (100.0%%)  %11zu  Total\n", totalCpu, total, nodes);
    os << line;
  }
  return result;
}

} // namespace tgc
