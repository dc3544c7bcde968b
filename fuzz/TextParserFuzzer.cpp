//===- TextParserFuzzer.cpp - libFuzzer target: the text-form parser -------===//
//
// Feeds arbitrary bytes to parseText (whole, and split at `// -----` lines as
// tgc opt --split-input-file does). A document that parses must verify
// without crashing and round-trip through both writers (FuzzCommon.h).
//
//===----------------------------------------------------------------------===//
#include "FuzzCommon.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace tgc;
  std::string_view text(reinterpret_cast<const char *>(data), size);
  std::vector<std::string_view> pieces = splitInputFile(text);
  for (std::string_view piece : pieces) {
    Context ctx;
    Result<Graph> g = parseText(ctx, piece, "fuzz.tgc", lineOffsetOf(text, piece));
    if (!g) continue;
    fuzz::checkGraph(ctx, *g);
  }
  return 0;
}
