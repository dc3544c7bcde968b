//===- Passes.h - the scheduling passes -------------------------*- C++ -*-===//
//
// Registers `access` (per-CALL reads and writes, printed with --print-after)
// and `linearize` (kernel graph -> LINEAR of CALLs).
//
//===----------------------------------------------------------------------===//
#pragma once

namespace tgc {

/// Adds the scheduling passes to the PassRegistry; the driver calls it once.
void registerSchedulePasses();

} // namespace tgc
