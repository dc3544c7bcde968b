//===- LinearModel.h - a model straight from a memory-planned LINEAR -*- C++ -*-===//
//
// `tgc compile linear.json`: tinygrad's final schedule used as the model, with
// no tensor graph to say which buffers are the interface. The BUFFERs a CALL
// passes whole are the interface (tinygrad's memory planner turned every
// intermediate into a view of an int8 arena; what it left alone are the
// buffers the tensors own); the arenas are intermediates. Roles follow the
// first access in LINEAR order: read first = input ("s<slot>"), and an
// in-out if some call writes it later; written first = output ("out<I>", in
// order of first write). Shapes are flat: a LINEAR knows element counts only.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Codegen/Model/Model.h"

#include <map>
#include <string>

namespace tgc {

/// The model of a LINEAR node (see the file comment); `name` must be a C
/// identifier. tinygrad's arenas are split back into one buffer per region
/// (views that overlap stay one region), so planMemory replans them;
/// `tinygradArena` (if given) receives the arenas' total size. The model's
/// variables are its kernels' (a LINEAR does not say what they are bound
/// to); `bound` gives their default values by name (tinygrad's var_vals),
/// each checked against the variable's range.
Result<Model> modelFromLinear(const UOp *linear, const std::string &name, int64_t *tinygradArena = nullptr,
                              const std::map<std::string, int64_t> &bound = {});

/// Per PARAM slot of a kernel SINK: bit 0 = read, bit 1 = written.
std::vector<unsigned> kernelParamAccess(const UOp *sink, unsigned numArgs);

} // namespace tgc
