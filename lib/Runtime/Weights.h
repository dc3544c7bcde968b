//===- Weights.h - external weights files: format, writer, reader -*- C++ -*-===//
//
// `tgc compile --weights=external` puts the data of a model's weight tensors
// into one file, STEM.weights, that the deployed program maps at run time
// (docs/deploy.md, "External weights"). Little-endian throughout:
//
//   0   char     magic[8]        "TGCWGHTS"
//   8   uint32   version         kWeightsVersion
//   12  uint32   count           tensors in the table
//   16  uint64   model_id        weightsModelId(name, table)
//   24  uint64   table_offset    64
//   32  uint64   payload_offset  a multiple of 64, after the table
//   40  uint64   payload_size
//   48  uint64   checksum        FNV-1a 64 of bytes [64, file_size): table, padding and payload
//   56  uint64   file_size       payload_offset + payload_size
//   64  count x { char name[40] (NUL-padded); uint32 dtype; uint32 0; uint64 offset; uint64 bytes }
//       zero padding, then the payload: tensor i at payload_offset + offset_i (a multiple of 64)
//
// The C functions (tgc_weights_open/verify/bind, ModelABI.h) read it; the
// C++ ones below write it. Std-only, like the rest of the runtime.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Runtime/ModelABI.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tgc::rt {

inline constexpr char kWeightsMagic[8] = {'T', 'G', 'C', 'W', 'G', 'H', 'T', 'S'};
inline constexpr uint32_t kWeightsVersion = 1;
inline constexpr uint64_t kWeightsHeaderBytes = 64, kWeightsEntryBytes = 64, kWeightsAlignment = 64;
inline constexpr size_t kWeightsNameBytes = 40; ///< names up to 39 bytes

/// FNV-1a, 64 bit (offset basis 0xcbf29ce484222325, prime 0x100000001b3),
/// continuing from `h` so a stream can be hashed in pieces.
uint64_t fnv1a64(const void *data, size_t size, uint64_t h = 0xcbf29ce484222325ull);

/// One tensor of a weights file, with its data (WeightsLayout fills offset).
struct WeightTensor {
  std::string name;
  int32_t dtype = 0; ///< TGC_DTYPE_*
  int32_t itemsize = 0;
  std::string_view data;
  int64_t offset = 0; ///< from the payload start
};

/// Assigns 64-byte aligned payload offsets in table order.
void layoutWeights(std::vector<WeightTensor> &tensors);

/// The identity a model and its weights file share: FNV-1a 64 of the model
/// name and, per tensor, its name, dtype, offset and size. Offsets must be set.
uint64_t weightsModelId(std::string_view modelName, const std::vector<WeightTensor> &tensors);

/// The bytes of the weights file of model `modelName` (offsets must be set).
/// Fails (returns false, `error` set) for a name longer than 39 bytes.
bool buildWeightsFile(std::string_view modelName, const std::vector<WeightTensor> &tensors, std::string &out,
                      std::string &error);

} // namespace tgc::rt
