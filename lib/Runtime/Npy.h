//===- Npy.h - NumPy .npy files ---------------------------------*- C++ -*-===//
//
// Reads and writes NumPy's .npy format (versions 1.0 and 2.0 read, 1.0
// written): the corpus' input and expected tensors (graph-format §5) and the
// launcher's inputs/outputs. Only what tgc's dtypes need: little-endian
// scalar types, C order. Errors are returned as messages; nothing throws.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tgc::rt {

struct NpyArray {
  std::string descr;           ///< NumPy type string: "<f4", "|u1", "|b1", ...
  std::vector<uint64_t> shape; ///< empty = a scalar (one element)
  std::vector<uint8_t> data;   ///< the elements, C order, little endian

  uint64_t numel() const;
};

/// Bytes per element of a descr tgc supports (bool, (u)int8..64, float16/32/64
/// in little endian or byte-order-free spelling), or 0 for any other descr.
size_t npyItemSize(std::string_view descr);

/// Parses the bytes of a whole .npy file into `out`. On failure returns false
/// and sets `error` (bad magic, unsupported version or descr, fortran order,
/// malformed header, truncated or oversized data).
bool parseNpy(std::span<const uint8_t> bytes, NpyArray &out, std::string &error);
/// Reads and parses a .npy file; errors name the file.
bool readNpy(const std::string &path, NpyArray &out, std::string &error);

/// The .npy (version 1.0) image of `a`, laid out as numpy.save writes it.
/// Fails if the descr is unsupported or the data size does not match the shape.
bool encodeNpy(const NpyArray &a, std::vector<uint8_t> &out, std::string &error);
/// Encodes `a` and writes it to `path` atomically.
bool writeNpy(const std::string &path, const NpyArray &a, std::string &error);

} // namespace tgc::rt
