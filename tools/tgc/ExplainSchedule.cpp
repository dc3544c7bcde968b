//===- ExplainSchedule.cpp - `tgc explain-schedule`: why this kernel order --===//
//
// Schedules a graph (callify and kernel-graph first when it is a tensor
// graph) and says, for each kernel of the LINEAR, which dependency put it
// there: the kernel it waited for and why (it reads what that kernel wrote,
// an AFTER orders it, or it overwrites what that kernel reads), what it reads
// and writes, and whether it waited in the ready queue behind others.
// The order is tinygrad's create_schedule (Schedule/Linearize.h).
//
//===----------------------------------------------------------------------===//
#include "Driver.h"

#include "IR/Pass.h"
#include "Schedule/Access.h"
#include "Schedule/Linearize.h"
#include "Schedule/Storage.h"

#include <iostream>
#include <memory>
#include <sstream>

namespace tgc::driver {
namespace {

struct ExplainOptions {
  std::string input;
  std::string root;
  std::string format = "auto";
  ResourceLimits limits;
};

bool hasKernels(const Graph &g) {
  for (const UOp *u : toposort(std::span<const UOp *const>(g.roots)))
    if (u->is(Op::CALL) && u->numSrc() && u->src(0)->is(Op::SINK) && u->src(0)->arg().isObj("KernelInfo")) return true;
  return false;
}

/// "reads PARAM slot=1; writes BUFFER slot=6" for a CALL of the LINEAR.
std::string accessSummary(const UOp *call) {
  Result<sched::CallAccess> acc = sched::callAccess(call);
  if (!acc) return "accesses unknown: " + acc.error().message;
  auto names = [&](const std::vector<int64_t> &slots) {
    std::string s;
    for (int64_t slot : slots)
      s += (s.empty() ? "" : ", ") + sched::storageName(call->src(size_t(slot) + 1));
    return s.empty() ? std::string("nothing") : s;
  };
  return "reads " + names(acc->ins) + "; writes " + names(acc->outs);
}

std::string explain(const sched::LinearizeTrace &t) {
  std::ostringstream os;
  os << "schedule: " << t.steps.size() << " kernel" << (t.steps.size() == 1 ? "" : "s") << "\n";
  for (size_t p = 0; p < t.steps.size(); ++p) {
    const sched::ScheduleStep &s = t.steps[p];
    os << "[" << p << "] " << s.name << ": " << accessSummary(t.linear->src(p)) << "\n";
    if (s.waitedFor < 0)
      os << "    ready at the start: " << s.why << "\n";
    else
      os << "    ready after [" << s.waitedFor << "]: " << s.why << "\n";
    if (s.queuedBehind)
      os << "    then waited behind " << s.queuedBehind << " kernel" << (s.queuedBehind == 1 ? "" : "s")
         << " that became ready no later (ties go by kernel-graph order)\n";
  }
  return os.str();
}

int runExplain(const ExplainOptions &o) {
  Result<std::string> text = readInput(o.input);
  if (!text) {
    report(text.error());
    return kFailure;
  }
  Format fmt = o.format == "json" ? Format::JSON : o.format == "text" ? Format::Text : detectFormat(o.input, *text);
  auto ctx = std::make_unique<Context>();
  Graph g;
  if (Status st = parseDocument(*ctx, o.input, fmt, InputChunk{*text, 0}, o.root, g, o.limits); !st.ok()) {
    report(st.error());
    return kFailure;
  }
  for (const UOp *r : g.roots)
    if (r->is(Op::LINEAR) || (r->is(Op::CALL) && r->numSrc() && r->src(0)->is(Op::LINEAR))) {
      std::cerr << "tgc explain-schedule: error: the graph is already scheduled (a LINEAR); give the tensor graph or "
                   "the kernel graph\n";
      return kFailure;
    }
  if (!hasKernels(g)) {
    Result<std::vector<const PassInfo *>> pipeline = parsePipeline("callify,kernel-graph");
    if (!pipeline) {
      std::cerr << "tgc explain-schedule: error: " << pipeline.error().message << "\n";
      return kFailure;
    }
    if (Status st = runPipeline(g, *pipeline, PipelineOptions{}); !st.ok()) {
      report(st.error());
      return kFailure;
    }
  }
  std::string out;
  for (size_t i = 0; i < g.roots.size(); ++i) {
    const UOp *r = g.roots[i];
    // A callified function: its body is the kernel graph (as the linearize pass does).
    const UOp *kernelGraph =
        r->is(Op::CALL) && r->numSrc() && r->src(0)->is(Op::SINK) && !r->src(0)->arg().isObj("KernelInfo") ? r->src(0) : r;
    Result<sched::LinearizeTrace> trace = sched::linearizeTraced(kernelGraph);
    if (!trace) {
      report(trace.error());
      return kFailure;
    }
    if (g.roots.size() > 1) out += "root " + (i < g.rootNames.size() ? g.rootNames[i] : std::to_string(i)) + ": ";
    out += explain(*trace);
  }
  std::cout << out;
  return kSuccess;
}

} // namespace

void addExplainScheduleCommand(CLI::App &app, int &exitCode) {
  auto o = std::make_shared<ExplainOptions>();
  CLI::App *cmd = app.add_subcommand("explain-schedule",
                                     "Schedule a graph and say why each kernel runs where it does.");
  cmd->add_option("input", o->input, "A tensor graph (scheduled first) or a kernel graph ('-' = stdin)")->required();
  cmd->add_option("--root", o->root, "Keep only this root of a multi-root document, e.g. kernel_graph[0]");
  cmd->add_option("--format", o->format, "Input form (auto: from the extension, else the content)")
      ->check(CLI::IsMember({"auto", "json", "text"}))
      ->capture_default_str();
  addLimitOptions(cmd, o->limits);
  cmd->footer("For each kernel, in execution order: what it reads and writes, the kernel whose completion made it\n"
              "ready and the dependency on it (it reads a state that kernel produced, an AFTER orders it, or it\n"
              "overwrites storage that kernel reads), and how long it then waited in the ready queue.\n\n"
              "Examples:\n"
              "  tgc explain-schedule graph.json\n"
              "  tgc explain-schedule kernels.json --root=kernel_graph[0]");
  cmd->callback([o, &exitCode] { exitCode = runExplain(*o); });
}

} // namespace tgc::driver
