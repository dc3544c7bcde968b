//===- LimitsTest.cpp - resource bounds: byte sizes, node and buffer limits ===//
#include "IR/Limits.h"

#include "GraphBuild.h"

#include <doctest/doctest.h>

#include <limits>

using namespace tgc;
using namespace tgc::testing;

TEST_CASE("parseByteSize: integers with binary suffixes, nothing else") {
  CHECK(parseByteSize("0") == 0u);
  CHECK(parseByteSize("4096") == 4096u);
  CHECK(parseByteSize("12B") == 12u);
  CHECK(parseByteSize("3K") == 3u * 1024);
  CHECK(parseByteSize("3KiB") == 3u * 1024);
  CHECK(parseByteSize("512MiB") == 512ull << 20);
  CHECK(parseByteSize("64GiB") == 64ull << 30);
  CHECK(parseByteSize("2T") == 2ull << 40);
  CHECK(parseByteSize("18446744073709551615") == std::numeric_limits<uint64_t>::max());
  // Beyond 64 bits, with or without a suffix.
  CHECK_FALSE(parseByteSize("18446744073709551616"));
  CHECK_FALSE(parseByteSize("16777216T"));
  CHECK(parseByteSize("16777215T") == 16777215ull << 40);
  for (const char *bad : {"", "-1", "1.5G", "G", "12X", "12 GiB", "12gib", "0x10", " 1"})
    CHECK_MESSAGE(!parseByteSize(bad), bad);
}

TEST_CASE("bufferBytes: numel * itemsize, overflow saturates, unknown sizes are nullopt") {
  Context ctx;
  CHECK(bufferBytes(buffer(ctx, 0, dtypes::Float32, 16)) == 64u);
  CHECK(bufferBytes(buffer(ctx, 0, dtypes::Float16, 0)) == 0u);
  CHECK(bufferBytes(buffer(ctx, 0, dtypes::Float32, int64_t(1) << 62)) == std::numeric_limits<uint64_t>::max());
  CHECK(bufferBytes(buffer(ctx, 0, dtypes::Int8, int64_t(1) << 62)) == uint64_t(1) << 62);
  CHECK_FALSE(bufferBytes(buffer(ctx, 0, dtypes::Float32, -5))); // ill-formed: the verifier reports it
  // A symbolic size has no static byte count.
  const UOp *n = ctx.get(Op::NOOP, dtypes::WeakInt);
  CHECK_FALSE(bufferBytes(ctx.get(Op::BUFFER, dtypes::Float32, {n}, paramArg(0, dtypes::Float32))));
}

TEST_CASE("checkResourceLimits: node count, summed buffer bytes, located at the largest buffer") {
  Context ctx;
  const UOp *a = buffer(ctx, 0, dtypes::Float32, 16), *b = buffer(ctx, 1, dtypes::Float16, 16);
  ctx.setLocation(a, Location{"g.tgc", 3, 3, -1});
  Graph g;
  g.roots = {ctx.get(Op::SINK, dtypes::Void, {a, b})};
  size_t nodes = ctx.size();

  CHECK(checkResourceLimits(g, ResourceLimits{}).ok());
  CHECK(checkResourceLimits(g, ResourceLimits{nodes, 96}).ok());

  Status tooMany = checkResourceLimits(g, ResourceLimits{nodes - 1, 96});
  REQUIRE_FALSE(tooMany.ok());
  CHECK(tooMany.error().message ==
        "the graph has " + std::to_string(nodes) + " nodes, more than the limit of " + std::to_string(nodes - 1));

  Status tooBig = checkResourceLimits(g, ResourceLimits{nodes, 95});
  REQUIRE_FALSE(tooBig.ok());
  CHECK(tooBig.error().str() ==
        "g.tgc:3:3: error: the graph's buffers need 96 bytes, more than the memory limit of 95 bytes\n"
        "g.tgc:3:3: note: the largest, a BUFFER float32 of shape [16], needs 64 bytes");

  // Buffers named only in the buffer table count too; a sum past 2^64 saturates.
  Graph h;
  h.roots = {ctx.constInt(1)};
  const UOp *huge = buffer(ctx, 2, dtypes::Float64, int64_t(1) << 61);
  h.buffers.push_back(BufferFile{huge, dtypes::Float64, int64_t(1) << 61, "CPU", false, ""});
  Status overflow = checkBufferLimit(h, std::numeric_limits<uint64_t>::max() - 1);
  REQUIRE_FALSE(overflow.ok());
  CHECK(overflow.error().message.find("need at least 2^64 bytes") != std::string::npos);

  // An empty graph has nothing to count.
  CHECK(checkResourceLimits(Graph{}, ResourceLimits{0, 0}).ok());
}
