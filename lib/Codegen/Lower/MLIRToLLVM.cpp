//===- MLIRToLLVM.cpp - MLIR kernels -> LLVM IR -> optimized machine code ------===//
//
// Only the per-conversion pass headers are included: the umbrella
// mlir/Conversion/Passes.h costs minutes and GBs per TU (toolchain.md §6).
//
//===----------------------------------------------------------------------===//
#include "Codegen/Lower/MLIRToLLVM.h"
#include "Codegen/Lower/LaneSums.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

#include <mutex>

namespace tgc::codegen {

static Diagnostic codegenError(std::string msg) {
  Location loc;
  loc.file = "codegen";
  return Diagnostic(std::move(loc), std::move(msg));
}

static void initNativeTarget() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
  });
}

// Cross compilation (`tgc compile --target`) needs every backend LLVM was built with.
static void initAllTargets() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargets();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllAsmPrinters();
  });
}

Result<std::unique_ptr<llvm::orc::JITTargetMachineBuilder>> targetBuilder(const TargetOptions &opts) {
  initNativeTarget();
  std::unique_ptr<llvm::orc::JITTargetMachineBuilder> jtmb;
  if (opts.triple.empty() && (opts.cpu.empty() || opts.cpu == "host") && opts.features.empty()) {
    auto host = llvm::orc::JITTargetMachineBuilder::detectHost();
    if (!host) return codegenError("cannot detect the host target: " + llvm::toString(host.takeError()));
    jtmb = std::make_unique<llvm::orc::JITTargetMachineBuilder>(std::move(*host));
  } else {
    llvm::Triple host(llvm::sys::getProcessTriple());
    llvm::Triple triple(opts.triple.empty() ? host.str() : llvm::Triple::normalize(opts.triple));
    bool cross = triple.getArch() != host.getArch();
    if (cross) initAllTargets();
    std::string error;
    if (!llvm::TargetRegistry::lookupTarget(triple, error))
      return codegenError("unknown target '" + opts.triple + "': " + error);
    jtmb = std::make_unique<llvm::orc::JITTargetMachineBuilder>(triple);
    // "host" names this machine's CPU; a cross target without one gets the architecture's baseline.
    std::string cpu = opts.cpu == "host" ? std::string(llvm::sys::getHostCPUName()) : opts.cpu;
    if (cpu.empty()) cpu = cross ? "generic" : std::string(llvm::sys::getHostCPUName());
    jtmb->setCPU(cpu);
    // LLVM's generic RISC-V is rv64i, soft float; Linux on RISC-V is rv64gc with
    // the lp64d ABI (derived from +d) that its C libraries are built for.
    if (cross && triple.isRISCV64() && triple.isOSLinux() && cpu == "generic" && opts.features.empty())
      jtmb->addFeatures({"+m", "+a", "+f", "+d", "+c", "+zicsr", "+zifencei"});
    if (!opts.features.empty()) {
      llvm::SubtargetFeatures f(opts.features);
      jtmb->addFeatures(f.getFeatures());
    }
  }
  jtmb->setRelocationModel(llvm::Reloc::PIC_);
  jtmb->setCodeGenOptLevel(opts.optLevel >= 3   ? llvm::CodeGenOptLevel::Aggressive
                           : opts.optLevel == 2 ? llvm::CodeGenOptLevel::Default
                           : opts.optLevel == 1 ? llvm::CodeGenOptLevel::Less
                                                : llvm::CodeGenOptLevel::None);
  return jtmb;
}

Result<std::unique_ptr<llvm::TargetMachine>> createTargetMachine(const TargetOptions &opts) {
  auto jtmb = targetBuilder(opts);
  if (!jtmb) return jtmb.error();
  auto tm = (*jtmb)->createTargetMachine();
  if (!tm) return codegenError("cannot create a target machine: " + llvm::toString(tm.takeError()));
  return std::move(*tm);
}

Status lowerToLLVMDialect(mlir::ModuleOp module) {
  std::string errors;
  mlir::ScopedDiagnosticHandler handler(module.getContext(), [&](mlir::Diagnostic &d) {
    llvm::raw_string_ostream os(errors);
    os << d << "\n";
    return mlir::success();
  });
  if (mlir::failed(mlir::verify(module))) return codegenError("invalid kernel MLIR: " + errors);
  mlir::PassManager pm(module->getName());
  // Without region simplification: merging identical blocks and dropping dead block arguments is
  // super-linear in the values a block carries, and a register-tiled matmul carries dozens of
  // accumulators. It was half of a 12-layer training graph's compile time (k3: 28.6 -> 14.1 s),
  // and the machine code of all 48 corpus and perf graphs is the same without it: LLVM's O-level
  // passes simplify the CFG anyway.
  mlir::GreedyRewriteConfig canonicalize;
  canonicalize.setRegionSimplificationLevel(mlir::GreedySimplifyRegionLevel::Disabled);
  pm.addPass(mlir::createCanonicalizerPass(canonicalize));
  pm.addPass(mlir::createSCFToControlFlowPass());
  pm.addPass(mlir::createArithToLLVMConversionPass());
  pm.addPass(mlir::createConvertMathToLLVMPass());
  pm.addPass(mlir::createConvertControlFlowToLLVMPass());
  pm.addPass(mlir::createConvertFuncToLLVMPass());
  pm.addPass(mlir::createReconcileUnrealizedCastsPass());
  if (mlir::failed(pm.run(module))) return codegenError("lowering to the LLVM dialect failed: " + errors);
  return Status::success();
}

Result<std::unique_ptr<llvm::Module>> translateToLLVMIR(mlir::ModuleOp module, llvm::LLVMContext &ctx,
                                                      llvm::TargetMachine &tm) {
  mlir::MLIRContext *mctx = module.getContext();
  mlir::registerBuiltinDialectTranslation(*mctx);
  mlir::registerLLVMDialectTranslation(*mctx);
  std::string errors;
  mlir::ScopedDiagnosticHandler handler(mctx, [&](mlir::Diagnostic &d) {
    llvm::raw_string_ostream os(errors);
    os << d << "\n";
    return mlir::success();
  });
  std::unique_ptr<llvm::Module> m = mlir::translateModuleToLLVMIR(module, ctx);
  if (!m) return codegenError("translation to LLVM IR failed: " + errors);
  m->setTargetTriple(tm.getTargetTriple());
  m->setDataLayout(tm.createDataLayout());
  return m;
}

Status optimizeModule(llvm::Module &m, llvm::TargetMachine &tm, unsigned optLevel, bool laneSums) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions pto;
  pto.LoopVectorization = pto.SLPVectorization = optLevel >= 2; // SLP is off by default
  llvm::PassBuilder pb(&tm, pto);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  if (laneSums)
    pb.registerVectorizerEndEPCallback(
        [](llvm::FunctionPassManager &fpm, llvm::OptimizationLevel) { fpm.addPass(CombineLaneSumsPass()); });
  llvm::OptimizationLevel level = optLevel >= 3   ? llvm::OptimizationLevel::O3
                                  : optLevel == 2 ? llvm::OptimizationLevel::O2
                                  : optLevel == 1 ? llvm::OptimizationLevel::O1
                                                  : llvm::OptimizationLevel::O0;
  llvm::ModulePassManager mpm = level == llvm::OptimizationLevel::O0 ? pb.buildO0DefaultPipeline(level)
                                                                      : pb.buildPerModuleDefaultPipeline(level);
  mpm.run(m, mam);
  std::string errors;
  llvm::raw_string_ostream os(errors);
  if (llvm::verifyModule(m, &os)) return codegenError("optimized LLVM IR does not verify: " + errors);
  return Status::success();
}

static Result<std::string> emitFile(llvm::Module &m, llvm::TargetMachine &tm, llvm::CodeGenFileType type) {
  std::string bytes;
  {
    llvm::raw_string_ostream os(bytes);
    llvm::buffer_ostream bos(os);
    llvm::legacy::PassManager cg;
    if (tm.addPassesToEmitFile(cg, bos, nullptr, type))
      return codegenError(std::string("the target cannot emit ") +
                          (type == llvm::CodeGenFileType::ObjectFile ? "object files" : "assembly"));
    cg.run(m);
  }
  return bytes;
}

Result<std::string> emitObject(llvm::Module &m, llvm::TargetMachine &tm) {
  return emitFile(m, tm, llvm::CodeGenFileType::ObjectFile);
}

Result<std::string> emitAssembly(llvm::Module &m, llvm::TargetMachine &tm) {
  return emitFile(m, tm, llvm::CodeGenFileType::AssemblyFile);
}

std::string findRelocatableLinker() {
#ifdef TGC_LLD
  if (llvm::sys::fs::can_execute(TGC_LLD)) return TGC_LLD;
#endif
  for (const char *name : {"ld.lld-22", "ld.lld"})
    if (auto path = llvm::sys::findProgramByName(name)) return *path;
  return "";
}

Result<std::string> joinObjects(const std::vector<std::string> &objects, const std::string &linker) {
  // The parts and the result live in temporary files, removed on every path out.
  std::vector<llvm::SmallString<128>> files;
  llvm::scope_exit cleanup([&] {
    for (const auto &f : files) llvm::sys::fs::remove(f);
  });
  auto temp = [&](const char *suffix) -> Result<std::string> {
    llvm::SmallString<128> path;
    if (std::error_code ec = llvm::sys::fs::createTemporaryFile("tgc-part", suffix, path))
      return codegenError("cannot create a temporary object file: " + ec.message());
    files.push_back(path);
    return std::string(path);
  };
  std::vector<std::string> args = {linker, "-r", "-o"};
  auto out = temp("o");
  if (!out) return out.error();
  args.push_back(*out);
  for (const std::string &obj : objects) {
    auto part = temp("o");
    if (!part) return part.error();
    std::error_code ec;
    llvm::raw_fd_ostream os(*part, ec);
    if (!ec) os << obj;
    if (ec || os.has_error()) return codegenError("cannot write a temporary object file " + *part);
    args.push_back(*part);
  }
  auto log = temp("txt"); // the linker's messages, for ours
  if (!log) return log.error();
  std::vector<llvm::StringRef> argv(args.begin(), args.end());
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(*log), llvm::StringRef(*log)};
  std::string message;
  int rc = llvm::sys::ExecuteAndWait(linker, argv, std::nullopt, redirects, 0, 0, &message);
  if (rc != 0) {
    if (auto said = llvm::MemoryBuffer::getFile(*log); said && !(*said)->getBuffer().empty())
      message = (*said)->getBuffer().trim().str();
    return codegenError("joining the kernel objects failed (" + (message.empty() ? "exit " + std::to_string(rc) : message) +
                        "): " + llvm::join(args, " "));
  }
  auto joined = llvm::MemoryBuffer::getFile(*out);
  if (!joined) return codegenError("cannot read the joined object " + *out);
  return (*joined)->getBuffer().str();
}

std::string printMLIR(mlir::ModuleOp module) {
  std::string s;
  llvm::raw_string_ostream os(s);
  module.print(os);
  return s;
}

std::string printLLVMIR(const llvm::Module &m) {
  std::string s;
  llvm::raw_string_ostream os(s);
  m.print(os, nullptr);
  return s;
}

} // namespace tgc::codegen
