//===- ModelWeights.h - where a compiled model's weights live ---*- C++ -*-===//
//
// `tgc compile --weights=pass|embed|external|auto` (docs/codegen.md,
// "Weights"): which inputs become data (those the graph gives data files),
// whether that data is embedded in the object or written to one external
// weights file (Runtime/Weights.h), and the limits that keep embedding from
// running into object-format or relocation limits.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Codegen/Model/Model.h"
#include "Codegen/Model/ModelCodegen.h"

#include <cstdint>
#include <string>

namespace tgc {

enum class WeightsMode { Pass, Embed, External, Auto };

/// The most data `embed` puts into one object: well below the 2 GiB that
/// x86-64's and AArch64's small code models (and 32-bit ELF relocations)
/// can address, leaving room for the code and other sections.
inline constexpr int64_t kMaxEmbeddedBytes = int64_t(1) << 30;
/// `auto`'s default threshold: more data than this goes to an external file.
inline constexpr int64_t kDefaultWeightsThreshold = int64_t(64) << 20;

/// The mode `requested` resolves to for `dataBytes` of data: Auto becomes
/// Embed up to `threshold` bytes (inclusive) and External above it (and
/// above kMaxEmbeddedBytes whatever the threshold); Embed of more than
/// kMaxEmbeddedBytes is an error naming the sizes and the alternative.
Result<WeightsMode> resolveWeightsMode(WeightsMode requested, int64_t dataBytes, int64_t threshold);

/// The inputs of `model` that get data (an input with a data file and a
/// nonzero size) and their total size.
std::vector<size_t> weightTensors(const Model &model, int64_t *totalBytes = nullptr);

/// Reads each of `tensors`' data files, checked against the tensor (dtype,
/// byte size), and places them as `mode` (Embed or External) says: embedded
/// bytes, or the external layout plus the weights file's bytes in `file`.
Status placeWeights(const Model &model, const std::vector<size_t> &tensors, WeightsMode mode, ModelWeights &out,
                    std::string &file);

} // namespace tgc
