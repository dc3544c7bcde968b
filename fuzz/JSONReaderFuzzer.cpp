//===- JSONReaderFuzzer.cpp - libFuzzer target: the graph-format reader ----===//
//
// Feeds arbitrary bytes to readGraphJSON. Refusing an input is fine (that is
// a Diagnostic); a crash, a sanitizer report or a hang is not. A document that
// reads must verify without crashing and round-trip through both writers
// (FuzzCommon.h).
//
//===----------------------------------------------------------------------===//
#include "FuzzCommon.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace tgc;
  Context ctx;
  std::string_view text(reinterpret_cast<const char *>(data), size);
  Result<Graph> g = readGraphJSON(ctx, text, "fuzz.json");
  if (!g) return 0;
  fuzz::checkGraph(ctx, *g);
  return 0;
}
