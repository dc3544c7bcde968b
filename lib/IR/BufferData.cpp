//===- BufferData.cpp - loading and checking input buffer files -----------===//
#include "IR/BufferData.h"

#include "Runtime/Npy.h"

#include <filesystem>

namespace tgc {

std::string npyDescrFor(DType dt) {
  if (!dt) return "";
  switch (dt->kind) {
  case DTypeKind::Bool: return "|b1";
  case DTypeKind::SInt:
  case DTypeKind::UInt: {
    char kind = dt->kind == DTypeKind::SInt ? 'i' : 'u';
    return std::string(dt.itemsize() == 1 ? "|" : "<") + kind + std::to_string(dt.itemsize());
  }
  case DTypeKind::Float:
    // NumPy has float16/32/64 only; the others are stored as their raw bits.
    if (dt == dtypes::Float16 || dt == dtypes::Float32 || dt == dtypes::Float64)
      return "<f" + std::to_string(dt.itemsize());
    return dt.itemsize() == 1 ? "|u1" : "<u" + std::to_string(dt.itemsize());
  case DTypeKind::Void:
  case DTypeKind::WeakInt:
  case DTypeKind::WeakFloat: return "";
  }
  return "";
}

std::string bufferFilePath(const Graph &g, const BufferFile &buf) {
  std::filesystem::path file(buf.file);
  if (file.is_absolute() || g.baseDir.empty()) return file.string();
  return (std::filesystem::path(g.baseDir) / file).string();
}

Result<std::vector<uint8_t>> loadBufferFile(const Graph &g, const BufferFile &buf) {
  std::string what = "BUFFER data";
  auto fail = [&](std::string message) { return Diagnostic::at(buf.node, std::move(message)); };
  if (buf.file.empty()) return fail(what + ": the buffer has no data file");
  std::string descr = npyDescrFor(buf.dtype);
  if (descr.empty()) return fail(what + ": dtype " + std::string(buf.dtype.name()) + " cannot be stored in a buffer");

  std::string path = bufferFilePath(g, buf), error;
  rt::NpyArray array;
  if (!rt::readNpy(path, array, error)) return fail(what + ": " + error);
  if (array.descr != descr && !(descr[0] == '|' && array.descr == "<" + descr.substr(1)))
    return fail(what + ": " + path + " holds '" + array.descr + "' elements, a " + std::string(buf.dtype.name()) +
                " buffer needs '" + descr + "'");
  if (array.numel() != uint64_t(buf.numel))
    return fail(what + ": " + path + " holds " + std::to_string(array.numel()) + " elements, the buffer has " +
                std::to_string(buf.numel));
  uint64_t bytes = uint64_t(buf.numel) * uint64_t(buf.dtype.itemsize());
  if (array.data.size() != bytes)
    return fail(what + ": " + path + " holds " + std::to_string(array.data.size()) + " bytes, the buffer needs " +
                std::to_string(bytes));
  return std::move(array.data);
}

} // namespace tgc
