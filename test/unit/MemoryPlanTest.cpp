//===- MemoryPlanTest.cpp - workspace planning for compiled models --------===//
//
// planMemory on hand-built schedules (lifetimes, sharing, interface tensors,
// copy-in/out) and on every corpus LINEAR: the plan is checked by an
// independent validity check (no two buffers live at the same call share a
// byte; offsets aligned; inside the workspace) and must never be larger than
// tinygrad's own arenas.
//
//===----------------------------------------------------------------------===//
#include "CorpusFiles.h"
#include "Codegen/Model/LinearModel.h"
#include "Pipeline/Pipeline.h"
#include "Codegen/Model/MemoryPlan.h"
#include "IR/JSON.h"
#include "Runtime/FileIO.h"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <set>

using namespace tgc;
namespace fs = std::filesystem;

namespace {

/// A plan of `sizes` float32 buffers and calls over them (buffer indices).
Model handModel(const std::vector<int64_t> &numel, const std::vector<std::vector<int>> &calls) {
  Model m;
  m.name = "m";
  for (int64_t n : numel) {
    ScheduleBuffer b;
    b.dtype = dtypes::fromName("float32");
    b.numel = n;
    m.plan.buffers.push_back(b);
  }
  for (const auto &args : calls) {
    ScheduleCall c;
    for (int a : args) c.args.push_back({a, 0, int64_t(m.plan.buffers[a].bytes())});
    m.plan.calls.push_back(c);
  }
  return m;
}

ModelTensor tensor(const Model &m, ModelTensor::Role role, const std::string &name, int buffer, int64_t off = 0,
                   int64_t bytes = -1) {
  ModelTensor t;
  t.role = role;
  t.name = name;
  t.dtype = m.plan.buffers[buffer].dtype;
  t.buffer = buffer;
  t.byteOffset = off;
  t.bytes = bytes < 0 ? int64_t(m.plan.buffers[buffer].bytes()) : bytes;
  t.shape = {t.bytes / 4};
  return t;
}

/// Independent check: live ranges recomputed here from the calls and tensors.
void checkValid(const Model &m, const MemoryPlan &p) {
  size_t n = m.plan.buffers.size();
  REQUIRE(p.offset.size() == n);
  std::vector<int64_t> first(n, INT64_MAX), last(n, INT64_MIN);
  for (size_t c = 0; c < m.plan.calls.size(); ++c)
    for (const ScheduleArg &a : m.plan.calls[c].args) {
      first[a.buffer] = std::min<int64_t>(first[a.buffer], c);
      last[a.buffer] = std::max<int64_t>(last[a.buffer], c);
    }
  for (size_t t = 0; t < m.tensors.size(); ++t) {
    int b = m.tensors[t].buffer;
    if (p.offset[b] >= 0) { // copied in/out: live from the start / to the end
      first[b] = std::min<int64_t>(first[b], -1);
      last[b] = std::max<int64_t>(last[b], int64_t(m.plan.calls.size()));
    } else {
      CHECK(p.owner[b] >= 0);
    }
  }
  for (size_t a = 0; a < n; ++a) {
    if (p.offset[a] < 0) continue;
    CHECK(p.offset[a] % 64 == 0);
    CHECK(p.offset[a] + int64_t(m.plan.buffers[a].bytes()) <= p.workspaceBytes);
    for (size_t b = a + 1; b < n; ++b) {
      if (p.offset[b] < 0 || first[a] == INT64_MAX || first[b] == INT64_MAX) continue;
      bool liveTogether = first[a] <= last[b] && first[b] <= last[a];
      bool shareBytes = p.offset[a] < p.offset[b] + int64_t(m.plan.buffers[b].bytes()) &&
                        p.offset[b] < p.offset[a] + int64_t(m.plan.buffers[a].bytes());
      if (liveTogether && shareBytes) FAIL("buffers " << a << " and " << b << " are live together and share bytes");
    }
  }
}

/// The corpus cases tinygrad scheduled (status ok), with their documents.
std::vector<fs::path> okCases() {
  std::vector<fs::path> out;
  for (const fs::path &dir : testing::corpusCases({"graph.json", "call.json", "linear.json", "meta.json"})) {
    std::string text, error;
    REQUIRE(rt::readFile((dir / "meta.json").string(), text, error));
    if (nlohmann::json::parse(text).value("status", "") == "ok") out.push_back(dir);
  }
  return out;
}

} // namespace

TEST_CASE("memory plan: a chain reuses the bytes of dead intermediates") {
  // in -> t1 -> t2 -> t3 -> out: t1 and t3 never live together.
  Model m = handModel({16, 100, 100, 100, 16}, {{1, 0}, {2, 1}, {3, 2}, {4, 3}});
  m.tensors = {tensor(m, ModelTensor::Role::Input, "n0", 0), tensor(m, ModelTensor::Role::Output, "out0", 4)};
  auto p = planMemory(m);
  REQUIRE(p);
  checkValid(m, *p);
  CHECK(p->offset[0] == -1);
  CHECK(p->offset[4] == -1);
  CHECK(p->owner[0] == 0);
  CHECK(p->owner[4] == 1);
  // 400 bytes round to 448: two live at a time.
  CHECK(p->workspaceBytes == 2 * 448);
  CHECK(p->unsharedBytes == 3 * 448);
  CHECK(p->offset[1] == p->offset[3]);
}

TEST_CASE("memory plan: no intermediates, no workspace; an empty buffer still gets bytes") {
  Model m = handModel({8, 8}, {{1, 0}});
  m.tensors = {tensor(m, ModelTensor::Role::Input, "n0", 0), tensor(m, ModelTensor::Role::Output, "out0", 1)};
  auto p = planMemory(m);
  REQUIRE(p);
  CHECK(p->workspaceBytes == 0);
  Model e = handModel({8, 0, 8}, {{1, 0}, {2, 1}});
  e.tensors = {tensor(e, ModelTensor::Role::Input, "n0", 0), tensor(e, ModelTensor::Role::Output, "out0", 2)};
  auto pe = planMemory(e);
  REQUIRE(pe);
  CHECK(pe->workspaceBytes == 64);
}

TEST_CASE("memory plan: tensors that do not cover their buffer are copied, and live from start / to end") {
  // Buffer 1 holds the output at an offset, so it is a workspace buffer live
  // to the end; buffer 2 would otherwise share its bytes.
  Model m = handModel({16, 32, 32, 16}, {{1, 0}, {2, 1}, {3, 2}});
  m.tensors = {tensor(m, ModelTensor::Role::Input, "n0", 0), tensor(m, ModelTensor::Role::Output, "out0", 3),
               tensor(m, ModelTensor::Role::Output, "out1", 1, 64, 64)};
  auto p = planMemory(m);
  REQUIRE(p);
  checkValid(m, *p);
  CHECK(p->offset[1] >= 0);
  CHECK(p->owner[1] == -1);
  CHECK(p->workspaceBytes == 2 * 128);
  // Two tensors on one buffer: the first that covers it owns it.
  Model s = handModel({16, 16}, {{1, 0}});
  s.tensors = {tensor(s, ModelTensor::Role::Input, "n0", 0), tensor(s, ModelTensor::Role::Output, "out0", 1),
               tensor(s, ModelTensor::Role::Output, "out1", 0)};
  auto ps = planMemory(s);
  REQUIRE(ps);
  CHECK(ps->owner[0] == 0);
  CHECK(ps->offset[0] == -1);
}

TEST_CASE("memory plan: a tensor outside its buffer is a diagnostic") {
  Model m = handModel({16}, {});
  m.tensors = {tensor(m, ModelTensor::Role::Input, "n0", 0, 32, 64)};
  auto p = planMemory(m);
  REQUIRE_FALSE(p);
  CHECK(p.error().message.find("outside its buffer") != std::string::npos);
  m.tensors[0].buffer = 3;
  CHECK_FALSE(planMemory(m));
}

TEST_CASE("memory plan: every corpus LINEAR, never larger than tinygrad's arenas") {
  int cases = 0;
  int64_t ours = 0, theirs = 0;
  for (const fs::path &dir : okCases()) {
    CAPTURE(dir.filename().string());
    Context ctx;
    auto g = readGraphJSONFile(ctx, (dir / "linear.json").string());
    REQUIRE(g);
    int64_t arena = -1;
    auto m = modelFromLinear(g->root("linear"), "m", &arena);
    REQUIRE(m);
    auto p = planMemory(*m);
    REQUIRE(p);
    checkValid(*m, *p);
    CHECK(p->workspaceBytes <= arena);
    // Every tinygrad-planned byte comes back as an intermediate.
    CHECK((arena == 0) == (p->unsharedBytes == 0));
    ours += p->workspaceBytes;
    theirs += arena;
    ++cases;
  }
  CHECK(cases >= 30);
  MESSAGE("corpus: " << cases << " cases, workspace " << ours << " bytes in total, tinygrad " << theirs);
}

TEST_CASE("memory plan: every corpus graph through buildModel, against tinygrad's plan of the same case") {
  // tinygrad's memory for what is not the model's interface: its arenas plus
  // every other buffer it allocated on its own (held by a Tensor: the copy
  // target of j01, ...), each at least one 64-byte block as any aligned
  // allocation. graph.json, call.json and linear.json read into one Context
  // share their BUFFER nodes.
  int cases = 0;
  int64_t ours = 0, theirs = 0;
  std::string table;
  for (const fs::path &dir : okCases()) {
    CAPTURE(dir.filename().string());
    Context ctx;
    auto g = readGraphJSONFile(ctx, (dir / "graph.json").string());
    REQUIRE(g);
    auto m = buildModel(ctx, *g);
    testing::expectCase(dir, m.ok(), m.ok() ? "" : m.error().str());
    if (!m) continue;
    auto p = planMemory(*m);
    REQUIRE(p);
    checkValid(*m, *p);
    auto lin = readGraphJSONFile(ctx, (dir / "linear.json").string());
    REQUIRE(lin);
    auto tplan = planLinear(lin->root("linear"));
    REQUIRE(tplan);
    // tinygrad's interface buffers: graph.json's BUFFERs and, through
    // call.json's buffer_map, the buffers of the realized outputs.
    auto call = readGraphJSONFile(ctx, (dir / "call.json").string());
    REQUIRE(call);
    std::map<const UOp *, const UOp *> storage(call->bufferMap.begin(), call->bufferMap.end());
    std::set<const UOp *> interface;
    for (const UOp *u : toposort(g->roots))
      if (u->is(Op::BUFFER)) interface.insert(u);
    for (const UOp *out : g->roots[0]->src()) {
      for (int depth = 0; out && depth < 64; ++depth) {
        if (auto it = storage.find(out); it != storage.end()) out = it->second;
        if (out->is(Op::BUFFER)) {
          interface.insert(out);
          break;
        }
        static const OpSet through = {Op::RESHAPE, Op::PERMUTE, Op::EXPAND, Op::SHRINK, Op::PAD, Op::FLIP,
                                      Op::AFTER,   Op::CONTIGUOUS, Op::DETACH};
        out = through.contains(out->op()) && out->numSrc() ? out->src(0) : nullptr;
      }
    }
    int64_t arena = tinygradArenaBytes(*tplan), held = 0;
    std::vector<char> viewed(tplan->buffers.size(), 0);
    for (const ScheduleCall &c : tplan->calls)
      for (size_t i = 0; i < c.args.size(); ++i)
        if (!c.call->src(i + 1)->is(Op::BUFFER)) viewed[c.args[i].buffer] = 1;
    for (size_t b = 0; b < tplan->buffers.size(); ++b)
      if (!viewed[b] && !interface.count(tplan->buffers[b].node))
        held += (std::max<int64_t>(int64_t(tplan->buffers[b].bytes()), 1) + 63) / 64 * 64;
    CHECK(p->workspaceBytes <= arena + held);
    table += "\n  " + dir.filename().string() + ": " + std::to_string(p->workspaceBytes) + " <= " +
             std::to_string(arena) + " + " + std::to_string(held);
    ours += p->workspaceBytes;
    theirs += arena + held;
    ++cases;
  }
  CHECK(cases >= 30);
  MESSAGE("workspace <= tinygrad arenas + other non-interface buffers:" << table << "\ncorpus: " << cases
                                                                         << " cases, workspace " << ours
                                                                         << " bytes in total, tinygrad " << theirs);
}
