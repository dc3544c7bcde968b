//===- BufferData.h - the contents of a document's input buffers -*- C++ -*-===//
//
// graph.json's `buffers` entries name .npy files holding the data of the
// realized input BUFFERs (graph-format §5). This loads one and checks it
// against the entry: the .npy descr tinygrad writes for the dtype, the element
// count and the byte size.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/Diagnostic.h"
#include "IR/Graph.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tgc {

/// The .npy descr a buffer of `dt` is stored with ("<f4", "|b1", ...). bfloat16
/// and the fp8 types have no NumPy type: their raw bits are stored as "<u2" /
/// "|u1". Empty for dtypes that cannot be stored (void, weakint, weakfloat).
std::string npyDescrFor(DType dt);

/// Where `buf`'s data file is: its path, relative to the document's directory
/// unless absolute.
std::string bufferFilePath(const Graph &g, const BufferFile &buf);

/// The raw little-endian contents of `buf` (numel * itemsize bytes), read from
/// its .npy file. Errors (located at the BUFFER node) name the file and what
/// does not match.
Result<std::vector<uint8_t>> loadBufferFile(const Graph &g, const BufferFile &buf);

} // namespace tgc
