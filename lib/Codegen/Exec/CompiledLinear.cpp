//===- CompiledLinear.cpp - compile and run a LINEAR of kernel CALLs -------------===//
//
// Builds one MLIR module per schedule (all kernels plus `tgc_run`, which
// replays the LINEAR), lowers it through MLIRToLLVM.h, and either JITs it or emits
// an object file. Mirrors tinygrad's compile_linear/run_linear for CPU.
//
//===----------------------------------------------------------------------===//
#include "Codegen/Exec/CompiledLinear.h"
#include "Codegen/Opt/PlanRewrite.h"
#include "Codegen/Exec/Jit.h"
#include "Codegen/Lower/KernelToMLIR.h"
#include "Codegen/Lower/LowerKernels.h"
#include "Runtime/Memory.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Target/TargetMachine.h"

#include <chrono>
#include <map>
#include <mutex>
#include <optional>

namespace tgc {

using namespace mlir;

struct CompiledSchedule::Native {
  std::unique_ptr<codegen::Jit> jit;
  void (*run)(void **, const int64_t *) = nullptr;
  std::vector<void (*)(void **)> entries; // per kernel
  // The plan rewrites' scratch for runs given only the LINEAR's buffers: made
  // by the first such run and kept for the next (its kernels write it before
  // they read it). A run that finds it in use by another thread's run makes
  // its own.
  std::mutex scratchInUse;
  std::optional<HostBuffers> scratch;
};

CompiledSchedule::~CompiledSchedule() = default;

namespace {

// func.func @tgc_run(%buffers: !llvm.ptr, %vars: !llvm.ptr): the LINEAR in order.
Status buildRunFunction(ModuleOp module, const SchedulePlan &plan, const std::string &symbol) {
  MLIRContext *ctx = module.getContext();
  OpBuilder b(ctx);
  mlir::Location loc = b.getUnknownLoc();
  Type ptr = LLVM::LLVMPointerType::get(ctx);
  b.setInsertionPointToEnd(module.getBody());
  auto fn = func::FuncOp::create(b, loc, symbol, b.getFunctionType({ptr, ptr}, {}));
  Block *body = fn.addEntryBlock();
  b.setInsertionPointToEnd(body);
  // element i of array argument `arg`, loaded once
  std::map<std::pair<unsigned, int>, mlir::Value> loaded;
  auto element = [&](unsigned arg, int i, Type t) {
    auto [it, inserted] = loaded.try_emplace({arg, i});
    if (inserted) {
      mlir::Value slot = LLVM::GEPOp::create(b, loc, ptr, t, body->getArgument(arg), llvm::ArrayRef<LLVM::GEPArg>{int32_t(i)},
                                             LLVM::GEPNoWrapFlags::inbounds);
      it->second = LLVM::LoadOp::create(b, loc, t, slot);
    }
    return it->second;
  };
  codegen::emitScheduleCalls(
      b, plan, [&](int i) { return element(0, i, ptr); }, [&](int j) { return element(1, j, b.getI64Type()); });
  func::ReturnOp::create(b, loc);
  return Status::success();
}

codegen::ScheduleModuleHooks runHooks(const SchedulePlan &plan, const CodegenOptions &opts) {
  codegen::ScheduleModuleHooks hooks;
  hooks.addMLIR = [&plan, &opts](ModuleOp m) { return buildRunFunction(m, plan, opts.runSymbol); };
  return hooks;
}

} // namespace

namespace codegen {

void emitScheduleCalls(OpBuilder &b, const SchedulePlan &plan, const std::function<mlir::Value(int)> &base,
                       const std::function<mlir::Value(int)> &var, const std::function<void(size_t, bool)> &around) {
  mlir::Location loc = b.getUnknownLoc();
  Type ptr = LLVM::LLVMPointerType::get(b.getContext());
  auto address = [&](const ScheduleArg &a) -> mlir::Value {
    mlir::Value p = base(a.buffer);
    if (a.byteOffset == 0) return p;
    return LLVM::GEPOp::create(b, loc, ptr, b.getI8Type(), p, llvm::ArrayRef<LLVM::GEPArg>{int32_t(a.byteOffset)},
                               LLVM::GEPNoWrapFlags::inbounds);
  };
  for (size_t i = 0; i < plan.calls.size(); ++i) {
    const ScheduleCall &c = plan.calls[i];
    std::vector<mlir::Value> args;
    for (const ScheduleArg &a : c.args) args.push_back(address(a));
    if (c.kind == ScheduleCall::Kind::Kernel)
      for (int j : plan.kernels[c.kernel].vars) args.push_back(var(j));
    if (around) around(i, false);
    if (c.kind == ScheduleCall::Kind::Copy) {
      mlir::Value len = arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(c.args[0].bytes));
      if (c.args[0].buffer == c.args[1].buffer) // views of one buffer may overlap
        LLVM::MemmoveOp::create(b, loc, args[0], args[1], len, /*isVolatile=*/false);
      else
        LLVM::MemcpyOp::create(b, loc, args[0], args[1], len, /*isVolatile=*/false);
    } else {
      func::CallOp::create(b, loc, plan.kernels[c.kernel].symbol, TypeRange{}, args);
    }
    if (around) around(i, true);
  }
}

} // namespace codegen

Result<std::unique_ptr<CompiledSchedule>> compileLinear(const UOp *linear, const CodegenOptions &opts) {
  auto start = std::chrono::steady_clock::now();
  auto plan = planLinear(linear);
  if (!plan) return plan.error();
  size_t linearBuffers = plan->buffers.size();
  *plan = codegen::rewriteSchedulePlan(*plan, opts.kernel);
  auto tm = codegen::createTargetMachine(opts.target);
  if (!tm) return tm.error();
  codegen::ScheduleModuleHooks hooks = runHooks(*plan, opts);
  // A big schedule's kernel groups are emitted as objects on their threads
  // and linked by the JIT, unless the IR is kept (it prints the one module).
  if (!opts.keepIR) hooks.objectSymbolPrefix = "tgc.";
  // (tgc_run's calls weigh nothing next to the kernels: on the 12-layer
  // training step the worker group still took longer with a weight of 0)
  auto optimized = codegen::optimizeKernels(*plan, opts.kernel, codegen::targetTraits(**tm));
  if (opts.cache && !opts.keepIR) {
    codegen::nameKernelsByContent(*plan, optimized);
    hooks.cache = opts.cache;
  }
  auto lowered = codegen::lowerSchedule(*plan, optimized, hooks, opts.kernel, opts.target.optLevel, opts.keepIR, **tm);
  if (!lowered) return lowered.error();

  std::unique_ptr<CompiledSchedule> cs(new CompiledSchedule());
  cs->plan_ = std::move(*plan);
  cs->linearBuffers_ = linearBuffers;
  if (opts.keepIR) {
    cs->mlir_ = std::move(lowered->mlirText);
    cs->llvmIR_ = codegen::printLLVMIR(*lowered->module);
  }
  auto jit = lowered->objects.empty() ? codegen::Jit::create(std::move(lowered->module), std::move(lowered->ctx), opts.target)
                                       : codegen::Jit::create(lowered->objects, opts.target);
  if (!jit) return jit.error();
  cs->native_ = std::make_unique<CompiledSchedule::Native>();
  cs->native_->jit = std::move(*jit);
  auto run = cs->native_->jit->lookup(opts.runSymbol);
  if (!run) return run.error();
  cs->native_->run = reinterpret_cast<void (*)(void **, const int64_t *)>(*run);
  for (const ScheduleKernel &k : cs->plan_.kernels) {
    auto e = cs->native_->jit->lookup(codegen::entrySymbol(k.symbol));
    if (!e) return e.error();
    cs->native_->entries.push_back(reinterpret_cast<void (*)(void **)>(*e));
  }
  cs->compileSeconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return cs;
}

Result<std::unique_ptr<CompiledSchedule>> compileLinear(const Graph &doc, const CodegenOptions &opts) {
  const UOp *linear = doc.root("linear");
  if (!linear && doc.roots.size() == 1) linear = doc.roots[0];
  if (!linear) {
    Location loc;
    loc.file = doc.path;
    return Diagnostic(loc, "document has no root named \"linear\"");
  }
  return compileLinear(linear, opts);
}

Result<std::string> compileLinearToObject(const UOp *linear, const CodegenOptions &opts) {
  auto plan = planLinear(linear);
  if (!plan) return plan.error();
  *plan = codegen::rewriteSchedulePlan(*plan, opts.kernel);
  auto tm = codegen::createTargetMachine(opts.target);
  if (!tm) return tm.error();
  auto optimized = codegen::optimizeKernels(*plan, opts.kernel, codegen::targetTraits(**tm));
  auto lowered = codegen::lowerSchedule(*plan, optimized, runHooks(*plan, opts), opts.kernel, opts.target.optLevel, false, **tm);
  if (!lowered) return lowered.error();
  return codegen::emitObject(*lowered->module, **tm);
}

// Checks variable values against their ranges: out of range, a kernel may
// index outside the buffers, which are sized for the maximum.
static Status checkVars(const SchedulePlan &plan, std::span<const int> which, std::span<const int64_t> values) {
  if (values.size() != which.size())
    return Diagnostic(Location(), "run: " + std::to_string(values.size()) + " variable values given, " +
                                      std::to_string(which.size()) + " expected");
  for (size_t j = 0; j < which.size(); ++j)
    if (Status s = plan.checkVar(plan.vars[size_t(which[j])].name, values[j]); !s) return s;
  return Status::success();
}

Status CompiledSchedule::run(std::span<void *const> data, std::span<const int64_t> vars) const {
  if (data.size() == linearBuffers_ && linearBuffers_ < plan_.buffers.size()) {
    std::unique_lock<std::mutex> kept(native_->scratchInUse, std::try_to_lock);
    std::optional<HostBuffers> own;
    std::optional<HostBuffers> &scratch = kept ? native_->scratch : own;
    if (!scratch) {
      SchedulePlan added;
      added.buffers.assign(plan_.buffers.begin() + long(linearBuffers_), plan_.buffers.end());
      Result<HostBuffers> made = HostBuffers::allocate(added);
      if (!made) return made.error();
      scratch.emplace(std::move(*made));
    }
    std::vector<void *> all(data.begin(), data.end());
    all.insert(all.end(), scratch->pointers().begin(), scratch->pointers().end());
    return run(all, vars);
  }
  if (data.size() != plan_.buffers.size())
    return Diagnostic(Location(), "run: " + std::to_string(data.size()) + " buffers given, the schedule has " +
                                      std::to_string(linearBuffers_));
  for (size_t i = 0; i < data.size(); ++i)
    if (!data[i] && plan_.buffers[i].bytes() > 0) return Diagnostic(Location(), "run: buffer " + std::to_string(i) + " is null");
  std::vector<int> all(plan_.vars.size());
  for (size_t j = 0; j < all.size(); ++j) all[j] = int(j);
  if (Status s = checkVars(plan_, all, vars); !s) return s;
  native_->run(const_cast<void **>(data.data()), vars.data());
  return Status::success();
}

Status CompiledSchedule::runKernel(size_t kernel, std::span<void *const> args, std::span<const int64_t> vars) const {
  if (kernel >= plan_.kernels.size()) return Diagnostic(Location(), "runKernel: no kernel " + std::to_string(kernel));
  const ScheduleKernel &k = plan_.kernels[kernel];
  if (args.size() != k.numArgs)
    return Diagnostic(Location(), "runKernel: kernel " + k.symbol + " takes " + std::to_string(k.numArgs) + " arguments");
  if (Status s = checkVars(plan_, k.vars, vars); !s) return s;
  std::vector<void *> slots(args.begin(), args.end()); // then a pointer to each variable's value
  for (const int64_t &v : vars) slots.push_back(const_cast<int64_t *>(&v));
  native_->entries[kernel](slots.data());
  return Status::success();
}

Result<HostBuffers> HostBuffers::allocate(const SchedulePlan &plan) {
  HostBuffers hb;
  for (const ScheduleBuffer &b : plan.buffers) {
    rt::TensorMemory p = rt::allocTensor(int64_t(b.bytes()));
    if (!p) return Diagnostic::at(b.node, "cannot allocate " + std::to_string(b.bytes()) + " bytes for this buffer");
    hb.ptrs_.push_back(p.get());
    hb.storage_.push_back(std::move(p));
    hb.sizes_.push_back(b.bytes());
  }
  return hb;
}

} // namespace tgc
