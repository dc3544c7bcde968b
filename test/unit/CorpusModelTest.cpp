//===- CorpusModelTest.cpp - graph.json -> buildModel -> JIT -> run --------===//
//
// What `tgc run` does, on every corpus case: tinygrad's tensor graph
// (graph.json) through buildModel (realize-outputs, the schedule pipeline,
// planLinear, the interface), compileLinear, one run on the case's input
// files, and a comparison of every output out<I> (meta.json `outputs`, I =
// sink_index) and every changed input buffer n<K> (`buffers_after`) with what
// tinygrad computed. Unlike CorpusRunTest this runs tgc's own schedule, not
// tinygrad's linear.json, and reads outputs the way `tgc run` writes them:
// dense, from the model's interface only. Cases tinygrad rejected must be
// rejected with the same message. Gradient cases check their forward outputs
// (the gradient graph is not exported).
//
//===----------------------------------------------------------------------===//
#include "ArrayCompare.h"
#include "CorpusFiles.h"
#include "Pipeline/Pipeline.h"
#include "Codegen/Exec/CompiledLinear.h"
#include "IR/JSON.h"
#include "Runtime/FileIO.h"
#include "Runtime/Npy.h"

#include <doctest/doctest.h>

#include <unistd.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>

using namespace tgc;
using namespace tgc::testing;
namespace fs = std::filesystem;

namespace {

struct CaseResult {
  std::string status = "ok"; ///< meta.json's
  std::string failure;       ///< empty when the case passes
  int compared = 0, skipped = 0;
  double maxAbs = 0, maxRel = 0;
  size_t calls = 0, kernels = 0;
  double seconds = 0;
};

// With a cache, the case is compiled twice through it: the second compile
// must take every kernel from it (and still reproduce tinygrad's outputs).
CaseResult runCase(const fs::path &dir, codegen::KernelCache *cache = nullptr) {
  auto start = std::chrono::steady_clock::now();
  CaseResult r;
  std::string text, err;
  if (!rt::readFile((dir / "meta.json").string(), text, err)) return r.failure = err, r;
  nlohmann::json meta = nlohmann::json::parse(text);
  r.status = meta.value("status", "");

  Context ctx;
  Result<Graph> g = readGraphJSONFile(ctx, (dir / "graph.json").string());
  if (!g) return r.failure = g.error().str(), r;
  Result<Model> model = buildModel(ctx, *g);
  if (r.status != "ok") {
    // tinygrad raised while scheduling: tgc must refuse the graph with the same message.
    std::string want = meta["error"].value("message", "");
    if (model) r.failure = "scheduled a graph tinygrad rejects (" + want + ")";
    else if (model.error().message.find(want) == std::string::npos)
      r.failure = "rejected with '" + model.error().message + "', tinygrad said '" + want + "'";
    return r;
  }
  if (!model) return r.failure = "buildModel: " + model.error().str(), r;
  r.calls = model->plan.calls.size();
  r.kernels = model->plan.kernels.size();

  CodegenOptions copts;
  copts.cache = cache;
  auto compiled = compileModelForRun(*model, copts);
  if (!compiled) return r.failure = "compile: " + compiled.error().str(), r;
  if (cache) {
    unsigned hits = cache->hits(), misses = cache->misses();
    compiled = compileModelForRun(*model, copts);
    if (!compiled) return r.failure = "compile from the cache: " + compiled.error().str(), r;
    if (cache->misses() != misses || cache->hits() == hits)
      return r.failure = "the second compile missed the cache " + std::to_string(cache->misses() - misses) + " times", r;
  }
  auto buffers = HostBuffers::allocate((*compiled)->plan());
  if (!buffers) return r.failure = buffers.error().str(), r;
  for (const ModelTensor &t : model->tensors) {
    if (t.role == ModelTensor::Role::Output) continue;
    if (t.dataFile.empty()) {
      if (t.needsData) return r.failure = t.name + " needs data and the case has none", r;
      continue;
    }
    rt::NpyArray a;
    if (!rt::readNpy(t.dataFile, a, err)) return r.failure = err, r;
    if (a.data.size() != size_t(t.bytes)) return r.failure = t.name + ": " + t.dataFile + " has the wrong size", r;
    std::memcpy(static_cast<uint8_t *>(buffers->data(size_t(t.buffer))) + t.byteOffset, a.data.data(), a.data.size());
  }
  // the variables at the values the graph binds (tgc run's default)
  auto vars = model->varValuesFor((*compiled)->plan());
  if (!vars) return r.failure = "variables: " + vars.error().str(), r;
  if (Status st = (*compiled)->run(buffers->pointers(), *vars); !st.ok()) return r.failure = "run: " + st.error().str(), r;

  Tolerance tol = toleranceFor(model->plan);
  auto check = [&](const std::string &name, const std::string &file) {
    const ModelTensor *t = model->find(name);
    if (!t || t->role == ModelTensor::Role::Input) return void(r.failure += name + ": not an output of the model; ");
    rt::NpyArray want;
    std::string why;
    if (!rt::readNpy((dir / file).string(), want, why)) return void(r.failure += why + "; ");
    HostArray got{t->dtype, t->shape, {}};
    if (t->bytes) {
      const uint8_t *p = static_cast<const uint8_t *>(buffers->data(size_t(t->buffer))) + t->byteOffset;
      got.data.assign(p, p + t->bytes);
    }
    if (want.numel() != uint64_t(numelOf(t->shape))) return void(r.failure += name + ": shape differs; ");
    Compare c = compareArrays(got, want, tol.rtol, tol.atol);
    r.maxAbs = std::max(r.maxAbs, c.maxAbs);
    r.maxRel = std::max(r.maxRel, c.maxRel);
    ++r.compared;
    if (!c.ok) r.failure += name + ": " + c.why + "; ";
  };
  for (const auto &o : meta["outputs"]) {
    if (o["sink_index"].is_null()) {
      ++r.skipped; // not in the SINK: tinygrad scheduled nothing for it
      continue;
    }
    check("out" + std::to_string(o["sink_index"].get<int>()), o["file"].get<std::string>());
  }
  for (const auto &b : meta["buffers_after"]) {
    std::string name = "n" + std::to_string(b["node"].get<int64_t>());
    const ModelTensor *t = model->find(name);
    // A buffer the model never writes keeps its contents: tgc run writes no .after file for it.
    if (!t || t->role == ModelTensor::Role::Input) {
      ++r.skipped;
      continue;
    }
    check(name, b["file"].get<std::string>());
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

/// The corpus cases, the 12-layer transformers (k*, most of the time) apart.
std::vector<fs::path> modelCases(bool large) {
  std::vector<fs::path> cases;
  for (const fs::path &dir : corpusCases({"graph.json", "meta.json"}))
    if ((dir.filename().string().rfind("k", 0) == 0) == large) cases.push_back(dir);
  return cases;
}

void runCases(const std::vector<fs::path> &cases, codegen::KernelCache *cache = nullptr) {
  REQUIRE_FALSE(cases.empty());
  int passed = 0, arrays = 0, rejected = 0;
  std::string table = "case                                         status  calls kernels arrays skipped  max abs   max rel    time\n";
  for (const fs::path &dir : cases) {
    CAPTURE(dir.filename().string());
    CaseResult r = runCase(dir, cache);
    char line[256];
    std::snprintf(line, sizeof line, "%-44s %-6s %6zu %7zu %6d %7d %9.3g %9.3g %6.2fs %s\n", dir.filename().c_str(),
                  r.status.c_str(), r.calls, r.kernels, r.compared, r.skipped, r.maxAbs, r.maxRel, r.seconds,
                  r.failure.empty() ? (r.status == "ok" ? "PASS" : "PASS (rejected)") : "FAIL");
    table += line;
    testing::expectCase(dir, r.failure.empty(), r.failure);
    passed += r.failure.empty();
    arrays += r.compared;
    rejected += r.failure.empty() && r.status != "ok";
  }
  MESSAGE(table << passed << "/" << cases.size() << " corpus cases pass through buildModel + run (" << arrays
                << " arrays compared, " << rejected << " rejected as tinygrad does)");
}

} // namespace

TEST_CASE("corpus model: graph.json -> buildModel -> run reproduces tinygrad's outputs") { runCases(modelCases(false)); }

TEST_CASE("corpus model: the 12-layer transformer cases (k*)") { runCases(modelCases(true)); }

TEST_CASE("corpus model: compiled again from the kernel cache, every case reproduces tinygrad's outputs") {
  fs::path dir = fs::temp_directory_path() / ("tgc-corpus-cache-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  std::unique_ptr<codegen::KernelCache> cache = codegen::KernelCache::open(dir.string(), codegen::KernelCache::kDefaultMaxBytes);
  REQUIRE(cache);
  runCases(modelCases(false), cache.get());
  fs::remove_all(dir);
}
