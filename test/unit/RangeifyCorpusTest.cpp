// Corpus tests for callify and rangeify against tinygrad's own intermediates:
// for each case, graph.json -> callify is compared with call.json, and
// kernels.json's rangeify_in[0] -> get_kernel_graph with its kernel_graph[0]
// (the kernel count first, then every kernel body). The documents are read
// into one Context, so equal graphs are the same interned nodes.
#include "IR/JSON.h"
#include "IR/TextFormat.h"
#include "Schedule/Callify.h"
#include "Schedule/RangeifyPasses.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

using namespace tgc;

namespace {

std::string corpusDir() { return TGC_CORPUS_DIR; }

bool haveCase(const std::string &name) { return std::filesystem::exists(corpusDir() + "/" + name + "/kernels.json"); }

std::vector<const UOp *> callsOf(const UOp *kernelGraph) {
  ToposortOptions o;
  o.enterCalls = false;
  std::vector<const UOp *> out;
  for (const UOp *u : toposort(kernelGraph, o))
    if (u->is(Op::CALL)) out.push_back(u);
  return out;
}

std::string show(const UOp *root) {
  Graph g;
  g.roots = {root};
  g.rootNames = {"x"};
  return printText(g);
}

struct KernelResult {
  size_t expectedCalls = 0, gotCalls = 0;
  size_t bodiesMatched = 0;
  bool graphEqual = false;
  std::string error;
};

KernelResult runKernelGraph(const std::string &name) {
  KernelResult res;
  Context ctx;
  Result<Graph> g = readGraphJSONFile(ctx, corpusDir() + "/" + name + "/kernels.json");
  if (!g) {
    res.error = g.error().str();
    return res;
  }
  const UOp *in = g->root("rangeify_in[0]"), *want = g->root("kernel_graph[0]");
  if (!in || !want) {
    res.error = "kernels.json lacks rangeify_in[0] or kernel_graph[0]";
    return res;
  }
  res.expectedCalls = callsOf(want).size();
  try {
    const UOp *got = rangeify::kernelGraph(in);
    std::vector<const UOp *> gc = callsOf(got), wc = callsOf(want);
    res.gotCalls = gc.size();
    std::set<const UOp *> wantBodies;
    for (const UOp *c : wc) wantBodies.insert(c->src(0));
    for (const UOp *c : gc) res.bodiesMatched += wantBodies.count(c->src(0));
    res.graphEqual = got == want;
    if (!res.graphEqual) MESSAGE(name << ": kernel graph differs\n--- got\n" << show(got) << "--- want\n" << show(want));
  } catch (const rangeify::ScheduleError &e) {
    res.error = e.diag.str();
  }
  return res;
}

int64_t metaKernelCount(const std::string &name) {
  std::ifstream f(corpusDir() + "/" + name + "/meta.json");
  nlohmann::json j = nlohmann::json::parse(f);
  return j.value("kernel_count", int64_t(-1));
}

} // namespace

// The cases whose whole kernel graph tgc reproduces node for node.
static const char *const kExactCases[] = {
    "a1_ew_broadcast_chain",
};

TEST_CASE("rangeify corpus: kernel graphs equal tinygrad's") {
  for (const char *name : kExactCases) {
    if (!haveCase(name)) continue;
    CAPTURE(name);
    KernelResult r = runKernelGraph(name);
    CHECK(r.error == "");
    CHECK(r.gotCalls == r.expectedCalls);
    CHECK(int64_t(r.gotCalls) == metaKernelCount(name));
    CHECK(r.bodiesMatched == r.gotCalls);
    CHECK(r.graphEqual);
  }
}

TEST_CASE("callify corpus: call.json") {
  for (const char *name : {"a1_ew_broadcast_chain", "j01_assign_copy"}) {
    if (!haveCase(name)) continue;
    CAPTURE(name);
    Context ctx;
    Result<Graph> g = readGraphJSONFile(ctx, corpusDir() + "/" + name + "/graph.json");
    Result<Graph> want = readGraphJSONFile(ctx, corpusDir() + "/" + name + "/call.json");
    REQUIRE(g.ok());
    REQUIRE(want.ok());
    Result<CallifyResult> r = callify(g->roots[0], firstFreeBufferSlot(g->roots));
    REQUIRE(r.ok());
    CHECK(r->call == want->roots[0]);
    if (r->call != want->roots[0]) MESSAGE("--- got\n" << show(r->call) << "--- want\n" << show(want->roots[0]));
    std::set<std::pair<const UOp *, const UOp *>> gotMap(r->bufferMap.begin(), r->bufferMap.end()),
        wantMap(want->bufferMap.begin(), want->bufferMap.end());
    CHECK(gotMap == wantMap);
  }
}
