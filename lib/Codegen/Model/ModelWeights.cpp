//===- ModelWeights.cpp - where a compiled model's weights live ------------===//
#include "Codegen/Model/ModelWeights.h"

#include "Runtime/Launcher.h"
#include "Runtime/Npy.h"
#include "Runtime/Weights.h"

namespace tgc {

namespace {

Diagnostic weightsError(std::string msg) { return Diagnostic(Location{}, std::move(msg)); }

std::string mib(int64_t bytes) { return std::to_string(bytes) + " bytes (" + std::to_string(bytes >> 20) + " MiB)"; }

} // namespace

Result<WeightsMode> resolveWeightsMode(WeightsMode requested, int64_t dataBytes, int64_t threshold) {
  switch (requested) {
  case WeightsMode::Pass:
  case WeightsMode::External: return requested;
  case WeightsMode::Auto:
    return dataBytes <= threshold && dataBytes <= kMaxEmbeddedBytes ? WeightsMode::Embed : WeightsMode::External;
  case WeightsMode::Embed:
    if (dataBytes > kMaxEmbeddedBytes)
      return weightsError("--weights=embed: " + mib(dataBytes) + " of weights exceed the " + mib(kMaxEmbeddedBytes) +
                          " an object may embed (the small code model addresses 2 GiB); use --weights=external or "
                          "--weights=auto");
    return requested;
  }
  return requested;
}

std::vector<size_t> weightTensors(const Model &model, int64_t *totalBytes) {
  std::vector<size_t> out;
  int64_t total = 0;
  for (size_t i = 0; i < model.tensors.size(); ++i) {
    const ModelTensor &t = model.tensors[i];
    // The random key is the caller's to set (a seed), not a weight.
    if (t.role != ModelTensor::Role::Input || t.dataFile.empty() || t.bytes == 0 || t.random != ModelTensor::Random::None)
      continue;
    out.push_back(i);
    total += t.bytes;
  }
  if (totalBytes) *totalBytes = total;
  return out;
}

Status placeWeights(const Model &model, const std::vector<size_t> &tensors, WeightsMode mode, ModelWeights &out,
                    std::string &file) {
  const char *flag = mode == WeightsMode::Embed ? "--weights=embed: " : "--weights=external: ";
  std::vector<std::string> data;
  for (size_t i : tensors) {
    const ModelTensor &t = model.tensors[i];
    rt::NpyArray a;
    std::string error;
    if (!rt::readNpy(t.dataFile, a, error)) return weightsError(flag + t.name + ": " + error);
    const char *kind = rt::npyKind(modelDTypeCode(t.dtype));
    if (!kind || a.descr.size() < 3 || a.descr.substr(1) != kind || int64_t(a.data.size()) != t.bytes)
      return weightsError(flag + t.dataFile + " (" + a.descr + ", " + std::to_string(a.data.size()) +
                          " bytes) does not hold " + t.name + " (" + std::string(t.dtype.name()) + ", " +
                          std::to_string(t.bytes) + " bytes)");
    data.emplace_back(a.data.begin(), a.data.end());
  }
  if (mode == WeightsMode::Embed) {
    for (size_t j = 0; j < tensors.size(); ++j) out.embedded.emplace(tensors[j], std::move(data[j]));
    return Status::success();
  }
  std::vector<rt::WeightTensor> table;
  for (size_t j = 0; j < tensors.size(); ++j) {
    const ModelTensor &t = model.tensors[tensors[j]];
    table.push_back(rt::WeightTensor{t.name, modelDTypeCode(t.dtype), int32_t(t.dtype.itemsize()), data[j], 0});
  }
  rt::layoutWeights(table);
  std::string error;
  if (!rt::buildWeightsFile(model.name, table, file, error)) return weightsError(flag + error);
  out.external = tensors;
  for (const rt::WeightTensor &t : table) out.externalOffsets.push_back(t.offset);
  out.externalId = rt::weightsModelId(model.name, table);
  return Status::success();
}

} // namespace tgc
