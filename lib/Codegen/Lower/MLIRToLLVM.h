//===- MLIRToLLVM.h - MLIR kernels -> LLVM IR -> optimized machine code -*- C++ -*-===//
//
// The back half of codegen (toolchain.md §7): func/scf/arith/math/llvm ->
// LLVM dialect -> LLVM IR, the new-PM O3 pipeline with loop and SLP
// vectorization for the target CPU, and object emission. tinygrad's
// equivalent is its renderer + compiler (clang -O2 on the rendered C).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/Diagnostic.h"

#include <memory>
#include <string>
#include <vector>

namespace llvm {
class LLVMContext;
class Module;
class TargetMachine;
namespace orc {
class JITTargetMachineBuilder;
}
} // namespace llvm
namespace mlir {
class ModuleOp;
}

namespace tgc::codegen {

/// Which machine to generate code for. Empty cpu/features = the host's.
struct TargetOptions {
  std::string triple;   ///< "" = the host's process triple
  std::string cpu;      ///< e.g. "x86-64-v3", "znver5", "host"; "" = the host CPU, or "generic" for another architecture
  std::string features; ///< e.g. "+avx2,-avx512f"; "" = the host's (when cpu is "" too)
  unsigned optLevel = 3;
};

/// The JIT/target-machine builder for `opts` (host detection included).
Result<std::unique_ptr<llvm::orc::JITTargetMachineBuilder>> targetBuilder(const TargetOptions &opts);
Result<std::unique_ptr<llvm::TargetMachine>> createTargetMachine(const TargetOptions &opts);

/// Lowers every func/scf/arith/math op of `module` to the LLVM dialect.
Status lowerToLLVMDialect(mlir::ModuleOp module);

/// Translates an LLVM-dialect module to LLVM IR for `tm` (triple + data layout set).
Result<std::unique_ptr<llvm::Module>> translateToLLVMIR(mlir::ModuleOp module, llvm::LLVMContext &ctx,
                                                      llvm::TargetMachine &tm);

/// Runs the default new-PM pipeline at `optLevel` (0-3) with loop and SLP
/// vectorization on and `tm`'s cost model, then verifies the module.
/// `laneSums`: combine the reassociable vector sums across lanes of a block
/// into trees (LaneSums.h, KernelOptions::combineLaneSums).
Status optimizeModule(llvm::Module &m, llvm::TargetMachine &tm, unsigned optLevel, bool laneSums = true);

/// Machine code for `m` as the bytes of a relocatable object file.
Result<std::string> emitObject(llvm::Module &m, llvm::TargetMachine &tm);

/// The same as target assembly text.
Result<std::string> emitAssembly(llvm::Module &m, llvm::TargetMachine &tm);
/// The ld.lld that joins objects (`ld.lld -r`): LLVM's own, else one on the
/// PATH; empty if there is none.
std::string findRelocatableLinker();
/// One relocatable object of `objects` (in order), linked by `linker` (`-r`).
Result<std::string> joinObjects(const std::vector<std::string> &objects, const std::string &linker);

/// Textual forms, for `tgc compile --emit` and tests.
std::string printMLIR(mlir::ModuleOp module);
std::string printLLVMIR(const llvm::Module &m);

} // namespace tgc::codegen
