//===- CorpusJSONTest.cpp - every corpus graph document, read and written -===//
//
// Reads every graph document of every corpus case (graph.json, call.json,
// kernels.json, linear.json), writes it back and reads that again: the second
// read must give the same interned nodes, the second write the same bytes,
// and, since tgc's writer follows the exporter's layout and node order, the
// first write the bytes of the exported file. Every `buffers` entry's .npy
// file must load and match its entry, and no document warns (each names the
// tinygrad tgc follows).
//
//===----------------------------------------------------------------------===//
#include "IR/BufferData.h"
#include "IR/JSON.h"

#include "Runtime/FileIO.h"

#include "CorpusFiles.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>

using namespace tgc;
namespace fs = std::filesystem;

TEST_CASE("corpus: every graph document reads, writes back byte for byte, and reads again") {
  std::vector<fs::path> cases = testing::corpusCases();
  REQUIRE_FALSE(cases.empty());

  size_t docs = 0, nodes = 0, identical = 0, buffers = 0, bufferBytes = 0, textBytes = 0;
  std::chrono::duration<double> readTime{0};
  for (const fs::path &dir : cases) {
    for (const char *name : testing::kCorpusDocuments) {
      fs::path file = dir / name;
      if (!fs::exists(file)) continue;
      CAPTURE(file.string());
      std::string text, error;
      REQUIRE_MESSAGE(rt::readFile(file.string(), text, error), error);

      Context ctx;
      auto t0 = std::chrono::steady_clock::now();
      std::vector<Diagnostic> warnings;
      Result<Graph> g = readGraphJSON(ctx, text, file.string(), &warnings);
      readTime += std::chrono::steady_clock::now() - t0;
      REQUIRE_MESSAGE(g.ok(), (g.ok() ? "" : g.error().str()));
      // Every case names the tinygrad tgc follows.
      CHECK_MESSAGE(warnings.empty(), (warnings.empty() ? "" : warnings[0].str()));
      ++docs;
      nodes += ctx.size();
      textBytes += text.size();

      std::string first = writeGraphJSON(*g, dir.string());
      identical += first == text;
      CHECK_MESSAGE(first == text, "the written document differs from the exported one");

      Result<Graph> again = readGraphJSON(ctx, first, file.string());
      REQUIRE_MESSAGE(again.ok(), (again.ok() ? "" : again.error().str()));
      CHECK(again->roots == g->roots);
      CHECK(again->rootNames == g->rootNames);
      CHECK(again->bufferMap == g->bufferMap);
      CHECK(again->extra == g->extra);
      REQUIRE(again->buffers.size() == g->buffers.size());
      for (size_t i = 0; i < g->buffers.size(); ++i) {
        CHECK(again->buffers[i].node == g->buffers[i].node);
        CHECK(again->buffers[i].file == g->buffers[i].file);
      }
      CHECK(writeGraphJSON(*again, dir.string()) == first);

      for (const BufferFile &b : g->buffers) {
        Result<std::vector<uint8_t>> data = loadBufferFile(*g, b);
        REQUIRE_MESSAGE(data.ok(), (data.ok() ? "" : data.error().str()));
        CHECK(data->size() == size_t(b.numel) * size_t(b.dtype.itemsize()));
        ++buffers;
        bufferBytes += data->size();
      }
    }
  }
  MESSAGE(docs << " documents (" << textBytes / 1024 << " KiB, " << nodes << " nodes) read in " << readTime.count()
               << " s; " << identical << " written back byte-identical; " << buffers << " buffer files ("
               << bufferBytes / 1024 << " KiB) loaded");
  CHECK(identical == docs);
}
