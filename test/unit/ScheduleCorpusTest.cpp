//===- ScheduleCorpusTest.cpp - access + linearize on tinygrad's exports --===//
//
// For every corpus case, runs the `access` and `linearize` passes on
// kernels.json's kernel_graph[0] and compares with what tinygrad (reference
// revision) did:
//  - status "ok": the LINEAR must be schedule[0], node for node (same CALLs,
//    same bodies after the alias merge, same storage arguments, same order),
//    and each scheduled call's reads/writes must be meta.json's calls[i].ins /
//    outs (the slots the compiled kernel reads and writes);
//  - status "error" raised while scheduling: the same key phrase ("cycle ...",
//    "cannot compute accesses for opaque ...").
// The comparison is exact: what the contract could leave free is fixed by it.
// Any topological order of the dependency graph would be a valid schedule, but
// the contract's Kahn's algorithm (FIFO queue seeded in kernel order, children
// released in kernel order) picks one, and a LIFO queue already reorders 7 of
// the cases. The scheduled CALLs carry a default CallInfo (the kernel graph's
// is not carried over) and their arguments keep the kernel graph's PARAMs,
// tags included. meta.json's ins/outs come from the compiled kernels, after
// codegen; they still agree with the analysis of the pre-codegen bodies.
// The gradient cases' own scheduling errors (meta grad.error) happen on the
// gradient graph, which has no exported kernel graph; kernels.json there is
// the forward pass.
//
//===----------------------------------------------------------------------===//
#include "IR/JSON.h"
#include "Schedule/Access.h"
#include "Schedule/Linearize.h"

#include "CorpusFiles.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>

using namespace tgc;
using namespace tgc::sched;
namespace fs = std::filesystem;

namespace {

std::vector<int64_t> ints(const nlohmann::json &j) {
  std::vector<int64_t> v;
  for (const auto &x : j) v.push_back(x.get<int64_t>());
  return v;
}

} // namespace

TEST_CASE("schedule corpus: access + linearize reproduce tinygrad's schedule[0] and its errors") {
  std::vector<fs::path> cases = testing::corpusCases({"kernels.json", "meta.json"});
  REQUIRE_MESSAGE(!cases.empty(), "no corpus under " TGC_CORPUS_DIR);
  size_t scheduled = 0, rejected = 0, callsChecked = 0;
  for (const fs::path &dir : cases) {
    std::string name = dir.filename().string();
    CAPTURE(name);
    nlohmann::json meta = nlohmann::json::parse(std::ifstream(dir / "meta.json"));
    Context ctx;
    Result<Graph> doc = readGraphJSONFile(ctx, (dir / "kernels.json").string());
    REQUIRE_MESSAGE(doc.ok(), (doc.ok() ? "" : doc.error().str()));
    const UOp *kernelGraph = doc->root("kernel_graph[0]");
    REQUIRE(kernelGraph);

    Graph g;
    g.roots = {kernelGraph};
    AccessPass access;
    LinearizePass linearize;
    Status st = access.run(g);
    if (st.ok()) st = linearize.run(g);

    if (meta["status"] == "error") {
      const auto &err = meta["error"];
      std::string phase = err.value("phase", "");
      if (phase != "create_schedule" && phase != "create_linear_with_vars") continue; // not a scheduling error
      std::string expected = err.value("message", "");
      REQUIRE_FALSE(st.ok());
      CAPTURE(st.error().str());
      // The key phrase: the message up to the first detail tinygrad appends.
      CHECK(st.error().message.find(expected) != std::string::npos);
      ++rejected;
      continue;
    }

    REQUIRE_MESSAGE(st.ok(), (st.ok() ? "" : st.error().str()));
    const UOp *expected = doc->root("schedule[0]");
    REQUIRE(expected);
    const UOp *got = g.roots[0];
    REQUIRE(got->numSrc() == expected->numSrc());
    for (size_t i = 0; i < got->numSrc(); ++i) {
      CAPTURE(i);
      CHECK(got->src(i) == expected->src(i));
    }
    CHECK(got == expected);
    ++scheduled;

    // The analysis must agree with what the compiled kernels touch.
    const auto &calls = meta["calls"];
    REQUIRE(calls.size() == expected->numSrc());
    for (size_t i = 0; i < calls.size(); ++i) {
      CAPTURE(i);
      Result<CallAccess> acc = callAccess(expected->src(i));
      REQUIRE(acc.ok());
      CHECK(acc->ins == ints(calls[i]["ins"]));
      CHECK(acc->outs == ints(calls[i]["outs"]));
      ++callsChecked;
    }
  }
  MESSAGE(scheduled << " schedules and " << callsChecked << " calls' accesses match; " << rejected
                    << " scheduling errors reproduced");
  CHECK(scheduled > 0);
  CHECK(rejected > 0);
}
