//===- Jit.cpp - run compiled kernels in-process (ORC LLJIT) --------------===//
#include "Codegen/Exec/Jit.h"
#include "Runtime/Parallel.h"

#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/AbsoluteSymbols.h"
#include "llvm/ExecutionEngine/Orc/ThreadSafeModule.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/MemoryBuffer.h"

namespace tgc::codegen {

static Diagnostic jitError(std::string msg) {
  Location loc;
  loc.file = "codegen";
  return Diagnostic(std::move(loc), "jit: " + std::move(msg));
}

Jit::~Jit() = default;

// A Jit for `opts`' target, nothing added yet: its main dylib resolves the process's symbols and tgc's runtime.
Result<std::unique_ptr<Jit>> Jit::empty(const TargetOptions &opts) {
  auto jtmb = targetBuilder(opts);
  if (!jtmb) return jtmb.error();
  auto built = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(**jtmb)).create();
  if (!built) return jitError(llvm::toString(built.takeError()));
  llvm::orc::LLJIT &j = **built;
  auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(j.getDataLayout().getGlobalPrefix());
  if (!process) return jitError(llvm::toString(process.takeError()));
  j.getMainJITDylib().addGenerator(std::move(*process));
  // The runtime entry points generated code calls, defined explicitly: the
  // linker need not export them from the executable for the process search.
  llvm::orc::SymbolMap runtime;
  auto flags = llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable;
  runtime[j.mangleAndIntern("tgc_parallel_for")] = {llvm::orc::ExecutorAddr::fromPtr(&tgc_parallel_for), flags};
  if (auto err = j.getMainJITDylib().define(llvm::orc::absoluteSymbols(std::move(runtime))))
    return jitError(llvm::toString(std::move(err)));
  std::unique_ptr<Jit> jit(new Jit());
  jit->jit_ = std::move(*built);
  return jit;
}

Result<std::unique_ptr<Jit>> Jit::create(std::unique_ptr<llvm::Module> m, std::unique_ptr<llvm::LLVMContext> ctx,
                                         const TargetOptions &opts) {
  auto jit = empty(opts);
  if (!jit) return jit;
  llvm::orc::LLJIT &j = *(*jit)->jit_;
  if (m->getDataLayout() != j.getDataLayout()) return jitError("module data layout does not match the JIT's target");
  if (auto err = j.addIRModule(llvm::orc::ThreadSafeModule(std::move(m), std::move(ctx))))
    return jitError(llvm::toString(std::move(err)));
  return jit;
}

Result<std::unique_ptr<Jit>> Jit::create(const std::vector<std::string> &objects, const TargetOptions &opts) {
  auto jit = empty(opts);
  if (!jit) return jit;
  for (size_t i = 0; i < objects.size(); ++i)
    if (auto err = (*jit)->jit_->addObjectFile(
            llvm::MemoryBuffer::getMemBufferCopy(objects[i], "kernel-group-" + std::to_string(i) + ".o")))
      return jitError(llvm::toString(std::move(err)));
  return jit;
}

Result<void *> Jit::lookup(const std::string &symbol) {
  auto addr = jit_->lookup(symbol);
  if (!addr) return jitError("no symbol " + symbol + ": " + llvm::toString(addr.takeError()));
  return addr->toPtr<void *>();
}

} // namespace tgc::codegen
