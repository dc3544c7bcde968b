//===- Opt.cpp - `tgc opt`: run passes, print IR (tgc's mlir-opt) ---------===//
#include "Driver.h"
#include "Inspect.h"

#include "IR/JSON.h"
#include "IR/Pass.h"
#include "IR/TextFormat.h"
#include "Runtime/FileIO.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <iostream>
#include <memory>

namespace tgc::driver {
namespace {

struct OptOptions {
  std::string input = "-";
  std::string output = "-";
  std::string emit = "text";
  std::string format = "auto";
  std::string root;
  std::string passes;
  GradOptions grad; ///< --grad/--wrt: a request for the `grad` pass
  std::vector<std::string> printAfter;
  bool printAfterAll = false;
  bool splitInputFile = false;
  bool verifyEach = false;
  bool timePasses = false;
  bool listPasses = false;
  bool noShapes = false;
  bool stats = false;
  ResourceLimits limits;
};

void listPasses() {
  std::cout << "Available passes:\n";
  for (const PassInfo *p : PassRegistry::instance().all())
    std::cout << "  " << p->name << std::string(p->name.size() < 14 ? 14 - p->name.size() : 1, ' ')
              << p->description << "\n";
}

std::string emitGraph(const Graph &g, const OptOptions &o) {
  // Written to a file, buffer data paths are rebased so the output still finds the data.
  std::string outDir;
  if (o.output != "-") outDir = std::filesystem::absolute(o.output).parent_path().string();
  if (o.emit == "json") return writeGraphJSON(g, outDir);
  if (o.emit == "dot") return emitDot(g);
  PrintOptions popts;
  popts.outputDir = outDir;
  popts.shapes = !o.noShapes;
  return printText(g, popts);
}

int runOpt(const OptOptions &o) {
  if (o.listPasses) {
    listPasses();
    return kSuccess;
  }
  Result<std::vector<const PassInfo *>> pipeline = parsePipeline(o.passes);
  if (!pipeline) {
    std::cerr << "tgc opt: error: " << pipeline.error().message << "\n";
    return kUsage;
  }
  // A misspelt --print-after would otherwise print nothing, silently.
  for (const std::string &name : o.printAfter) {
    if (Result<std::vector<const PassInfo *>> known = parsePipeline(name); !known) {
      std::cerr << "tgc opt: error: --print-after: " << known.error().message << "\n";
      return kUsage;
    }
  }
  std::optional<GradRequest> gradReq;
  if (!gradRequest(o.grad, "opt", gradReq)) return kUsage;
  if (gradReq) {
    // the request is for the grad pass: run it first unless the pipeline places it
    const PassInfo *grad = PassRegistry::instance().lookup("grad");
    if (std::find(pipeline->begin(), pipeline->end(), grad) == pipeline->end()) pipeline->insert(pipeline->begin(), grad);
  }
  // the passes' rule tables are built on a thread while the input is read and parsed
  PassPreparation preparation(*pipeline);
  Result<std::string> text = readInput(o.input);
  if (!text) {
    report(text.error());
    return kFailure;
  }
  Format fmt = formatFor(o.format, o.input, *text);
  if (o.splitInputFile && fmt == Format::JSON) {
    std::cerr << "tgc opt: error: --split-input-file applies to the text form only\n";
    return kUsage;
  }

  std::vector<InputChunk> chunks;
  if (o.splitInputFile) {
    for (std::string_view piece : splitInputFile(*text)) {
      unsigned offset = 0;
      for (const char *p = text->data(); p < piece.data(); ++p) offset += *p == '\n';
      chunks.push_back({piece, offset});
    }
  } else {
    chunks.push_back({*text, 0});
  }

  PipelineOptions popts;
  popts.verifyEach = o.verifyEach;
  popts.printAfter = o.printAfter;
  popts.printAfterAll = o.printAfterAll;
  popts.timePasses = o.timePasses;
  popts.timingStream = &std::cerr;
  if (o.stats) popts.statsStream = &std::cerr;
  popts.printer = [&](std::string_view pass, const Graph &g, const Pass &p) {
    PrintOptions printOpts;
    printOpts.shapes = !o.noShapes;
    std::cerr << "// -----// IR Dump After " << pass << " //----- //\n" << printText(g, printOpts);
    std::string analysis = p.analysisText(g);
    if (!analysis.empty()) std::cerr << analysis;
    std::cerr << "\n";
  };

  std::string out;
  bool failed = false;
  for (size_t i = 0; i < chunks.size(); ++i) {
    // Each chunk is independent, as mlir-opt's split inputs are: own context, own errors.
    auto ctx = std::make_unique<Context>();
    Graph g;
    Status st = parseDocument(*ctx, o.input, fmt, chunks[i], o.root, g, o.limits);
    if (st.ok() && gradReq) setGradRequest(g, *gradReq);
    size_t inputNodes = 0;
    if (st.ok() && o.stats) inputNodes = graphNodeCount(g);
    preparation.wait();
    if (st.ok()) st = runPipeline(g, *pipeline, popts);
    if (!st.ok()) {
      report(st.error());
      failed = true;
      continue;
    }
    if (o.stats) std::cerr << formatStats(g, inputNodes);
    if (i) out += o.emit == "dot" ? "\n" : "// -----\n";
    out += emitGraph(g, o);
  }
  // Nothing is written when any input failed: no half-finished output file.
  if (failed) return kFailure;
  std::string error;
  if (!rt::writeFileAtomic(o.output, out, error)) {
    std::cerr << "tgc opt: error: " << error << "\n";
    return kFailure;
  }
  return kSuccess;
}

} // namespace

void addOptCommand(CLI::App &app, int &exitCode) {
  auto o = std::make_shared<OptOptions>();
  CLI::App *cmd = app.add_subcommand("opt", "Read a graph, run passes over it, print the result (tgc's mlir-opt).");
  cmd->add_option("input", o->input, "Input graph: graph-format JSON or tgc text form ('-' = stdin)");
  cmd->add_option("-o,--output", o->output, "Output file ('-' = stdout); written only if every step succeeds");
  cmd->add_option("--emit", o->emit,
                  "Output form: text, json, or dot (Graphviz: the schedule of a LINEAR with RAW/WAR/WAW edges, "
                  "else the kernel graph, else the tensor graph)")->check(CLI::IsMember({"text", "json", "dot"}))->capture_default_str();
  addFormatOption(cmd, o->format);
  cmd->add_option("--root", o->root, "Keep only this root of a multi-root document (name or index), "
                                     "e.g. kernel_graph[0]");
  cmd->add_option("--passes", o->passes, "Comma-separated pass pipeline, e.g. verify,simplify");
  addGradOptions(cmd, o->grad, "the grad pass adds their gradients as outputs (first, unless --passes places it)");
  cmd->add_option("--print-after", o->printAfter, "Print the graph (to stderr) after this pass; repeatable")
      ->delimiter(',');
  cmd->add_flag("--print-after-all", o->printAfterAll, "Print the graph after every pass");
  cmd->add_flag("--split-input-file", o->splitInputFile,
                "Treat '// -----' lines as separators between independent inputs");
  cmd->add_flag("--verify-each", o->verifyEach, "Run the verifier after every pass");
  cmd->add_flag("--time-passes", o->timePasses, "Report the CPU and wall time of each pass (to stderr)");
  cmd->add_flag("--no-shapes", o->noShapes, "Leave out the ': [shape]' annotations in text output");
  cmd->add_flag("--stats", o->stats,
                "Print node, kernel and buffer counts and per-kernel estimated flops and bytes (to stderr)");
  cmd->add_flag("--list-passes", o->listPasses, "List the registered passes and exit");
  addLimitOptions(cmd, o->limits);
  cmd->footer("Examples:\n"
              "  tgc opt graph.json --emit=text\n"
              "  tgc opt graph.json --passes=verify --emit=json -o out.json\n"
              "  tgc opt kernels.json --root=kernel_graph[0] --print-after-all --passes=verify\n"
              "  tgc opt tests.tgc --split-input-file --passes=verify\n"
              "  tgc opt graph.json --grad=out0 --wrt=n12,n40 --passes=grad,schedule\n"
              "  tgc opt graph.json --passes=schedule --stats --emit=dot -o schedule.dot");
  cmd->callback([o, &exitCode] { exitCode = runOpt(*o); });
}

} // namespace tgc::driver
