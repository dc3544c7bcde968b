//===- CorpusTextTest.cpp - every corpus document through the text form ---===//
//
// JSON -> text -> parse must give back the same graph: the same interned
// roots (in one Context), root names, buffers, buffer_map, per-node keys and
// document keys, hence the same JSON when written again; and every node of
// the parsed graph is located in the text.
//
//===----------------------------------------------------------------------===//
#include "IR/JSON.h"
#include "IR/TextFormat.h"

#include "CorpusFiles.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>

using namespace tgc;
namespace fs = std::filesystem;

TEST_CASE("corpus: every graph document survives JSON -> text -> JSON") {
  std::vector<fs::path> cases = testing::corpusCases();
  REQUIRE_FALSE(cases.empty());

  size_t docs = 0, lines = 0;
  for (const fs::path &dir : cases) {
    for (const char *name : testing::kCorpusDocuments) {
      fs::path file = dir / name;
      if (!fs::exists(file)) continue;
      CAPTURE(file.string());
      Context ctx;
      Result<Graph> g = readGraphJSONFile(ctx, file.string());
      REQUIRE_MESSAGE(g.ok(), (g.ok() ? "" : g.error().str()));

      std::string text = printText(*g);
      // Same folder as the JSON, so relative buffer paths mean the same files.
      std::string textPath = (dir / (std::string(name) + ".tgc")).string();
      Result<Graph> back = parseText(ctx, text, textPath);
      REQUIRE_MESSAGE(back.ok(), (back.ok() ? "" : back.error().str()));
      ++docs;
      lines += size_t(std::count(text.begin(), text.end(), '\n'));

      CHECK(back->roots == g->roots);
      CHECK(back->rootNames == g->rootNames);
      CHECK(back->bufferMap == g->bufferMap);
      CHECK(back->nodeExtra == g->nodeExtra);
      CHECK(back->extra == g->extra);
      REQUIRE(back->buffers.size() == g->buffers.size());
      for (size_t i = 0; i < g->buffers.size(); ++i) {
        CHECK(back->buffers[i].node == g->buffers[i].node);
        CHECK(back->buffers[i].dtype == g->buffers[i].dtype);
        CHECK(back->buffers[i].numel == g->buffers[i].numel);
        CHECK(back->buffers[i].device == g->buffers[i].device);
        CHECK(back->buffers[i].allocated == g->buffers[i].allocated);
        CHECK(back->buffers[i].file == g->buffers[i].file);
      }
      CHECK(writeGraphJSON(*back, dir.string()) == writeGraphJSON(*g, dir.string()));
      CHECK(printText(*back) == text);

      ToposortOptions opts;
      opts.argRefs = true;
      size_t located = 0, nodes = 0;
      for (const UOp *u : toposort(back->roots, opts)) {
        const Location *loc = ctx.location(u);
        located += loc && loc->file == textPath && loc->line > 0;
        ++nodes;
      }
      CHECK(located == nodes);
    }
  }
  MESSAGE(docs << " documents, " << lines << " lines of text");
  CHECK(docs > 0);
}
