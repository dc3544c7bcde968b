//===- Jit.h - run compiled kernels in-process (ORC LLJIT) ------*- C++ -*-===//
//
// Holds an optimized LLVM module compiled by ORC's LLJIT for the host (or
// objects compiled for it) and hands out the addresses of its functions.
// Unresolved symbols (libm's exp2f, sinf, memcpy, ...) resolve against the
// current process.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Codegen/Lower/MLIRToLLVM.h"

#include <memory>
#include <string>
#include <vector>

namespace llvm::orc {
class LLJIT;
}

namespace tgc::codegen {

class Jit {
public:
  /// Compiles `m` (already optimized; its data layout must match `opts`' target).
  static Result<std::unique_ptr<Jit>> create(std::unique_ptr<llvm::Module> m, std::unique_ptr<llvm::LLVMContext> ctx,
                                             const TargetOptions &opts);
  /// Links relocatable objects already compiled for `opts`' target (a
  /// schedule's kernel groups, LoweredSchedule::objects) into one JIT dylib,
  /// where they see each other's hidden symbols.
  static Result<std::unique_ptr<Jit>> create(const std::vector<std::string> &objects, const TargetOptions &opts);
  ~Jit();
  /// The address of function `symbol`.
  Result<void *> lookup(const std::string &symbol);

private:
  Jit() = default;
  static Result<std::unique_ptr<Jit>> empty(const TargetOptions &opts);
  std::unique_ptr<llvm::orc::LLJIT> jit_;
};

} // namespace tgc::codegen
