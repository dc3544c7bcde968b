//===- Pass.h - named passes and pipelines ----------------------*- C++ -*-===//
//
// Every stage of tgc is a pass registered by name, so `tgc opt --passes=a,b`
// can run, print and time any prefix of the pipeline. A pass transforms a
// Graph in place (replacing its roots) or only analyses it and attaches what
// it found for printing.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/Diagnostic.h"
#include "IR/Graph.h"

#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

namespace tgc {

class Pass {
public:
  virtual ~Pass() = default;
  virtual Status run(Graph &g) = 0;
  /// Extra text a pass prints after the graph with --print-after (e.g. an
  /// analysis result). Empty by default.
  virtual std::string analysisText(const Graph &) const { return ""; }
  /// Counts the pass reports under --stats (e.g. the decisions it made), "" for none.
  virtual std::string statsText() const { return ""; }
};

struct PassInfo {
  std::string name;
  std::string description;
  std::function<std::unique_ptr<Pass>()> create;
  /// A pipeline alias when non-empty: parsePipeline replaces the name by these
  /// passes (recursively), so --print-after and --time-passes see each step.
  std::vector<std::string> steps = {};
  /// Builds what the pass would otherwise build on its first run, its rule
  /// tables (function-local statics), so that a driver can do it on a thread
  /// while it reads the input (PassPreparation). Empty: nothing to build.
  std::function<void()> prepare = {};
};

class PassRegistry {
public:
  static PassRegistry &instance();
  void add(PassInfo info);
  const PassInfo *lookup(std::string_view name) const;
  /// All passes, sorted by name.
  std::vector<const PassInfo *> all() const;

private:
  std::map<std::string, PassInfo, std::less<>> passes_;
};

/// Registers the passes each library provides; the driver calls these once.
void registerIRPasses();

/// A pass defined by a function, for passes that need no state.
class FunctionPass : public Pass {
public:
  explicit FunctionPass(std::function<Status(Graph &)> fn) : fn_(std::move(fn)) {}
  Status run(Graph &g) override { return fn_(g); }

private:
  std::function<Status(Graph &)> fn_;
};

/// Splits "a,b,c" into names, checking each against the registry.
Result<std::vector<const PassInfo *>> parsePipeline(std::string_view spec);

struct PipelineOptions {
  bool verifyEach = false;
  std::vector<std::string> printAfter; ///< pass names
  bool printAfterAll = false;
  bool timePasses = false;
  /// Called to print the graph after a pass: (passName, graph).
  std::function<void(std::string_view, const Graph &, const Pass &)> printer;
  std::ostream *timingStream = nullptr;
  /// Where each pass's statsText goes after it ran (--stats); null: nowhere.
  std::ostream *statsStream = nullptr;
};

/// Runs the `prepare` of each of the passes on a thread, from construction
/// until wait() (or destruction): a first run of the passes then finds their
/// rule tables built (building them is a good part of a small graph's first
/// schedule, and its code and data are cold then). A driver starts one before
/// it reads the input and waits before it runs the pipeline.
class PassPreparation {
public:
  explicit PassPreparation(const std::vector<const PassInfo *> &passes);
  PassPreparation(const PassPreparation &) = delete;
  PassPreparation &operator=(const PassPreparation &) = delete;
  ~PassPreparation() { wait(); }
  void wait() {
    if (thread_.joinable()) thread_.join();
  }

private:
  std::thread thread_;
};

/// Runs the passes in order; stops at the first failing one.
Status runPipeline(Graph &g, const std::vector<const PassInfo *> &passes, const PipelineOptions &opts);

} // namespace tgc
