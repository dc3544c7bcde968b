// Corpus tests for callify and rangeify against tinygrad's own intermediates
// (../shared/corpus): for each case, graph.json -> callify is compared with
// call.json, and kernels.json's rangeify_in[0] -> get_kernel_graph with its
// kernel_graph[0]: the kernel count first (also against meta.json), then the
// kernel bodies and the whole kernel graph. The documents are read into one
// Context, so equal graphs are the same interned nodes.
#include "IR/JSON.h"
#include "IR/Pass.h"
#include "IR/TextFormat.h"
#include "Schedule/Callify.h"
#include "Schedule/Passes.h"
#include "Schedule/RangeifyPasses.h"
#include "Schedule/Sugar.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

using namespace tgc;

namespace {

std::string caseDir(const std::string &name) { return std::string(TGC_CORPUS_DIR) + "/" + name; }

/// The registered `schedule` pipeline is what the driver runs; register it once.
void ensureSchedulePasses() {
  static bool registered = [] {
    registerSchedulePasses();
    return true;
  }();
  (void)registered;
}

/// The corpus cases whose name starts with one of `prefixes`, sorted.
std::vector<std::string> casesWith(std::initializer_list<const char *> prefixes) {
  std::vector<std::string> out;
  if (!std::filesystem::exists(TGC_CORPUS_DIR)) return out;
  for (const auto &e : std::filesystem::directory_iterator(TGC_CORPUS_DIR)) {
    std::string n = e.path().filename().string();
    if (!std::filesystem::exists(e.path() / "kernels.json")) continue;
    for (const char *p : prefixes)
      if (n.rfind(p, 0) == 0) out.push_back(n);
  }
  std::sort(out.begin(), out.end());
  return out;
}

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

nlohmann::json meta(const std::string &name) {
  std::ifstream f(caseDir(name) + "/meta.json");
  return nlohmann::json::parse(f);
}

void checkKernelGraph(const std::string &name) {
  CAPTURE(name);
  Context ctx;
  Result<Graph> g = readGraphJSONFile(ctx, caseDir(name) + "/kernels.json");
  REQUIRE(g.ok());
  const UOp *in = g->root("rangeify_in[0]"), *want = g->root("kernel_graph[0]");
  REQUIRE(in);
  REQUIRE(want);
  const UOp *got = nullptr;
  try {
    got = rangeify::kernelGraph(in);
  } catch (const rangeify::ScheduleError &e) {
    FAIL_CHECK(e.diag.str());
    return;
  }
  std::vector<const UOp *> gc = callsOf(got), wc = callsOf(want);
  CHECK(gc.size() == wc.size());
  nlohmann::json m = meta(name);
  if (m.value("status", "") == "ok") CHECK(int64_t(gc.size()) == m.value("kernel_count", int64_t(-1)));
  std::set<const UOp *> wantBodies;
  for (const UOp *c : wc) wantBodies.insert(c->src(0));
  size_t matched = 0;
  for (const UOp *c : gc) matched += wantBodies.count(c->src(0));
  CHECK(matched == gc.size());
  CHECK(got == want);
  if (got != want && gc.size() < 10) MESSAGE("--- got\n" << show(got) << "--- want\n" << show(want));
}

/// The renaming of `a`'s fresh BUFFERs (slots >= firstFree) to `b`'s slots, in
/// slot order: tinygrad's buffer counter runs on across a process, so a fresh
/// slot may differ while the structure is the same.
std::unordered_map<const UOp *, const UOp *> renumberFresh(const UOp *a, const UOp *b, int64_t firstFree) {
  auto fresh = [&](const UOp *root) {
    std::vector<const UOp *> out;
    ToposortOptions o;
    o.argRefs = true;
    for (const UOp *u : toposort(root, o)) {
      if (!u->is(Op::BUFFER)) continue;
      std::optional<rangeify::ParamFields> f = rangeify::ParamFields::from(u->arg());
      if (f && f->slot >= firstFree) out.push_back(u);
    }
    std::sort(out.begin(), out.end(), [](const UOp *x, const UOp *y) {
      return rangeify::paramFields(x).slot < rangeify::paramFields(y).slot;
    });
    return out;
  };
  std::vector<const UOp *> fa = fresh(a), fb = fresh(b);
  std::unordered_map<const UOp *, const UOp *> map;
  if (fa.size() != fb.size()) return map;
  for (size_t i = 0; i < fa.size(); ++i) {
    rangeify::ParamFields f = rangeify::paramFields(fa[i]);
    f.slot = rangeify::paramFields(fb[i]).slot;
    map[fa[i]] = fa[i]->withArg(f.toValue());
  }
  return map;
}

void checkCallify(const std::string &name) {
  CAPTURE(name);
  Context ctx;
  Result<Graph> g = readGraphJSONFile(ctx, caseDir(name) + "/graph.json");
  Result<Graph> want = readGraphJSONFile(ctx, caseDir(name) + "/call.json");
  REQUIRE(g.ok());
  REQUIRE(want.ok());
  int64_t firstFree = firstFreeBufferSlot(g->roots);
  Result<CallifyResult> r = callify(g->roots[0], firstFree);
  REQUIRE(r.ok());
  const UOp *w = want->roots[0];
  std::unordered_map<const UOp *, const UOp *> fresh = renumberFresh(r->call, w, firstFree);
  const UOp *got = substitute(r->call, fresh);
  CHECK(got == w);
  if (got != w) MESSAGE("--- got\n" << show(r->call) << "--- want\n" << show(w));
  std::set<std::pair<const UOp *, const UOp *>> gotMap, wantMap(want->bufferMap.begin(), want->bufferMap.end());
  for (auto [k, v] : r->bufferMap) gotMap.emplace(k, substitute(v, fresh));
  CHECK(gotMap.size() == r->bufferMap.size());
  CHECK(gotMap == wantMap);
}

// graph.json through the registered `schedule` pipeline, compared with
// linear.json (cases tinygrad's memory planner left alone: no arena views).
void checkSchedule(const std::string &name) {
  CAPTURE(name);
  ensureSchedulePasses();
  Context ctx;
  Result<Graph> g = readGraphJSONFile(ctx, caseDir(name) + "/graph.json");
  Result<Graph> want = readGraphJSONFile(ctx, caseDir(name) + "/linear.json");
  REQUIRE(g.ok());
  REQUIRE(want.ok());
  int64_t firstFree = firstFreeBufferSlot(g->roots);
  Result<std::vector<const PassInfo *>> pipeline = parsePipeline("schedule");
  REQUIRE(pipeline.ok());
  Status st = runPipeline(*g, *pipeline, PipelineOptions{});
  if (!st.ok()) {
    FAIL_CHECK(st.error().str());
    return;
  }
  REQUIRE(g->roots.size() == 1);
  const UOp *w = want->root("linear");
  REQUIRE(w);
  const UOp *got = substitute(g->roots[0], renumberFresh(g->roots[0], w, firstFree));
  CHECK(got == w);
  if (got != w) MESSAGE("--- got\n" << show(g->roots[0]) << "--- want\n" << show(w));
}

bool memoryPlanned(const std::string &name) {
  std::ifstream f(caseDir(name) + "/linear.json");
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return text.find("\"BITCAST\"") != std::string::npos;
}

} // namespace

// A case tinygrad fails to schedule fails in tgc's pipeline with tinygrad's message.
void checkScheduleError(const std::string &name) {
  CAPTURE(name);
  ensureSchedulePasses();
  Context ctx;
  Result<Graph> g = readGraphJSONFile(ctx, caseDir(name) + "/graph.json");
  REQUIRE(g.ok());
  Result<std::vector<const PassInfo *>> pipeline = parsePipeline("schedule");
  REQUIRE(pipeline.ok());
  Status st = runPipeline(*g, *pipeline, PipelineOptions{});
  REQUIRE(!st.ok());
  std::string want = meta(name)["error"].value("message", "");
  CHECK(!want.empty());
  CHECK(st.error().message.find(want) != std::string::npos);
}

TEST_CASE("schedule corpus: tinygrad's scheduling errors") {
  for (const std::string &n : casesWith({"j"}))
    if (meta(n).value("status", "") == "error") checkScheduleError(n);
}

TEST_CASE("schedule corpus: graph.json to linear.json") {
  for (const std::string &n : casesWith({"a", "b", "c", "d", "gr", "j"})) {
    if (meta(n).value("status", "") != "ok" || memoryPlanned(n)) continue;
    checkSchedule(n);
  }
}

TEST_CASE("rangeify corpus: a (elementwise)") {
  for (const std::string &n : casesWith({"a"})) checkKernelGraph(n);
}
TEST_CASE("rangeify corpus: b (reductions)") {
  for (const std::string &n : casesWith({"b"})) checkKernelGraph(n);
}
TEST_CASE("rangeify corpus: c (matmul)") {
  for (const std::string &n : casesWith({"c"})) checkKernelGraph(n);
}
TEST_CASE("rangeify corpus: d (mlp)") {
  for (const std::string &n : casesWith({"d"})) checkKernelGraph(n);
}
TEST_CASE("rangeify corpus: j (assigns)") {
  for (const std::string &n : casesWith({"j"})) checkKernelGraph(n);
}
TEST_CASE("rangeify corpus: e-i, gr (models, gradients, kv cache)") {
  for (const std::string &n : casesWith({"e", "f", "g", "h", "i"})) checkKernelGraph(n);
}
TEST_CASE("rangeify corpus: k (12-layer transformers)") {
  for (const std::string &n : casesWith({"k"})) checkKernelGraph(n);
}
TEST_CASE("callify corpus: call.json and buffer_map") {
  for (const std::string &n : casesWith({"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k"})) checkCallify(n);
}
TEST_CASE("rangeify corpus: v (Variables: symbolic shapes, offsets and reduction lengths)") {
  // every member of a family: the kernel graph names its Variable by argument slot, so it is the same graph
  for (const std::string &n : casesWith({"v"})) checkKernelGraph(n);
}
TEST_CASE("callify corpus: v (Variables)") {
  for (const std::string &n : casesWith({"v"})) checkCallify(n);
}
