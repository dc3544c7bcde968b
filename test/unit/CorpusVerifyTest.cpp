//===- CorpusVerifyTest.cpp - the corpus against properties and the spec --===//
//
// The corpus is tinygrad's own output, so it is ground truth for "valid":
// every graph document of every case must verify clean, and every graph.json
// node's derived shape must equal the `shape` field the exporter wrote (nodes
// without the field are the ones tinygrad gives no shape).
//
//===----------------------------------------------------------------------===//
#include "IR/JSON.h"
#include "IR/Verifier.h"

#include "CorpusFiles.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>

using namespace tgc;
namespace fs = std::filesystem;

namespace {

/// Every node the document defines: the roots' closure (arg references
/// included) and the buffer nodes it lists besides.
std::vector<const UOp *> documentNodes(const Graph &g) {
  std::vector<const UOp *> roots = g.roots;
  for (const BufferFile &b : g.buffers) roots.push_back(b.node);
  for (const auto &[t, b] : g.bufferMap) roots.insert(roots.end(), {t, b});
  ToposortOptions opts;
  opts.argRefs = true;
  return toposort(roots, opts);
}

} // namespace

/// The first node whose derived shape is not the one the exporter wrote ("" if none); counts what it compared.
std::string shapeMismatch(const Context &ctx, const Graph &g, size_t &compared, size_t &shapeless) {
  for (const UOp *u : documentNodes(g)) {
    const Location *loc = ctx.location(u);
    std::string where = "node " + std::to_string(loc ? loc->nodeId : -1) + " (" + u->str() + "): ";
    auto extra = g.nodeExtra.find(u);
    if (extra == g.nodeExtra.end() || !extra->second.contains("shape")) {
      if (u->shape() != nullptr || u->shapeError() != "") return where + "a shape where the exporter has none";
      ++shapeless;
      continue;
    }
    if (u->shape() == nullptr) return where + "no shape derived: " + u->shapeError();
    // The exporter writes a symbolic dimension (a Variable's) as null.
    std::string want = "[", got = "[";
    for (const auto &d : extra->second["shape"]) want += (want.size() > 1 ? ", " : "") + (d.is_null() ? "?" : d.dump());
    for (const Dim &d : *u->shape()) got += (got.size() > 1 ? ", " : "") + (d.isStatic() ? std::to_string(d.value) : "?");
    if (got + "]" != want + "]") return where + got + "] != " + want + "]";
    ++compared;
  }
  return "";
}

TEST_CASE("corpus: derived shapes equal the exporter's graph.json shapes") {
  std::vector<fs::path> cases = testing::corpusCases();
  REQUIRE_FALSE(cases.empty());
  size_t compared = 0, shapeless = 0;
  for (const fs::path &dir : cases) {
    fs::path file = dir / "graph.json";
    if (!fs::exists(file)) continue;
    Context ctx;
    Result<Graph> g = readGraphJSONFile(ctx, file.string());
    REQUIRE_MESSAGE(g.ok(), (g.ok() ? "" : g.error().str()));
    std::string why = shapeMismatch(ctx, *g, compared, shapeless);
    CHECK_MESSAGE(why.empty(), dir.filename().string() << ": " << why);
  }
  MESSAGE(compared << " shapes compared, " << shapeless << " shapeless nodes");
  CHECK(compared > 1000);
}

TEST_CASE("corpus: every graph document verifies clean") {
  size_t docs = 0;
  for (const fs::path &dir : testing::corpusCases()) {
    std::string all;
    for (const char *name : testing::kCorpusDocuments) {
      fs::path file = dir / name;
      if (!fs::exists(file)) continue;
      CAPTURE(file.string());
      Context ctx;
      Result<Graph> g = readGraphJSONFile(ctx, file.string());
      REQUIRE_MESSAGE(g.ok(), (g.ok() ? "" : g.error().str()));
      for (const Diagnostic &d : verify(g->roots)) all += d.str() + "\n";
      ++docs;
    }
    CHECK_MESSAGE(all.empty(), dir.filename().string() << ": " << all);
  }
  CHECK(docs >= 4 * 30);
}
