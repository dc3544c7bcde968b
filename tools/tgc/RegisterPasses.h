//===- RegisterPasses.h - every library's passes, in one call ---*- C++ -*-===//
//
// The driver and the pipeline fuzzer (fuzz/) see the same passes: a library
// that adds passes registers them here, and both pick them up.
//
//===----------------------------------------------------------------------===//
#pragma once

namespace tgc::driver {

/// Adds the passes of every library tgc links to the PassRegistry. Idempotent.
void registerAllPasses();

} // namespace tgc::driver
