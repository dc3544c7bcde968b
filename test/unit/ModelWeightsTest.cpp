//===- ModelWeightsTest.cpp - --weights mode resolution --------------------===//
#include "Codegen/Model/ModelWeights.h"

#include <doctest/doctest.h>

using namespace tgc;

TEST_CASE("model weights: auto embeds up to the threshold, embed refuses what an object cannot hold") {
  auto mode = [](WeightsMode m, int64_t bytes, int64_t threshold) {
    Result<WeightsMode> r = resolveWeightsMode(m, bytes, threshold);
    REQUIRE(r);
    return *r;
  };
  CHECK(mode(WeightsMode::Auto, 100, 100) == WeightsMode::Embed);
  CHECK(mode(WeightsMode::Auto, 101, 100) == WeightsMode::External);
  CHECK(mode(WeightsMode::Auto, 0, 0) == WeightsMode::Embed);
  // Past the embedding limit auto externalizes whatever the threshold says.
  CHECK(mode(WeightsMode::Auto, kMaxEmbeddedBytes, INT64_MAX) == WeightsMode::Embed);
  CHECK(mode(WeightsMode::Auto, kMaxEmbeddedBytes + 1, INT64_MAX) == WeightsMode::External);
  CHECK(mode(WeightsMode::Pass, int64_t(1) << 40, 0) == WeightsMode::Pass);
  CHECK(mode(WeightsMode::External, 0, 0) == WeightsMode::External);
  CHECK(mode(WeightsMode::Embed, kMaxEmbeddedBytes, 0) == WeightsMode::Embed);
  Result<WeightsMode> tooBig = resolveWeightsMode(WeightsMode::Embed, kMaxEmbeddedBytes + 1, 0);
  REQUIRE_FALSE(tooBig);
  CHECK(tooBig.error().message.find("--weights=external") != std::string::npos);
  // The limit stays clear of the 2 GiB the small code model can address.
  CHECK(kMaxEmbeddedBytes < (int64_t(1) << 31));
}
