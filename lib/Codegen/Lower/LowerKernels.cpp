//===- LowerKernels.cpp - every kernel of a plan to one optimized LLVM module ===//
//
// lowerSchedule (LowerKernels.h). Lowering a kernel through MLIR and
// optimizing it with LLVM does not depend on the other kernels (each is a
// noinline function of its own), so a big schedule is split into groups of
// kernels that are lowered and optimized on threads of their own, each in its
// own MLIRContext, LLVMContext and TargetMachine; the optimized groups are
// linked into the main module, which holds the caller's functions. The tgc
// side of lowering (tiling, KernelToMLIR) builds UOps, and a Context is not
// thread-safe: it stays on the calling thread, only the MLIR and LLVM work runs
// concurrently. A model compiled to an object file emits each group's object
// on its thread too (joined by a relocatable link); otherwise code generation
// of the linked module is serial. With a kernel cache every kernel is a group
// of its own, its object looked up first and stored after it is emitted.
//
//===----------------------------------------------------------------------===//
#include "Codegen/Opt/DataInvalid.h"
#include "Codegen/Opt/DivmodSplit.h"
#include "Codegen/Opt/EpilogueSplit.h"
#include "Codegen/Opt/GateSplit.h"
#include "Codegen/Opt/GateVersioning.h"
#include "Codegen/Opt/HoistInvariant.h"
#include "Codegen/Lower/KernelToMLIR.h"
#include "Codegen/Opt/MatmulTiling.h"
#include "Codegen/Opt/ParallelLoop.h"
#include "Codegen/Opt/ReduceLanes.h"
#include "Codegen/Lower/KernelCache.h"
#include "Codegen/Lower/LowerKernels.h"
#include "IR/TextFormat.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Linker/Linker.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Target/TargetMachine.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <set>
#include <thread>

namespace tgc::codegen {

using namespace mlir;

namespace {

Diagnostic inKernel(Diagnostic d, const ScheduleKernel &k) {
  d.notes.push_back("in kernel " + (k.name.empty() ? std::string("<unnamed>") : k.name) + " (" + k.symbol + ")");
  return d;
}

// Marks every loop of `f` that contains another one as not to be vectorized
// (llvm.loop.vectorize.enable = false). LLVM's loop vectorizer only takes
// innermost loops, so this matters when the inner loop was fully unrolled:
// then the outer loop is vectorized across rows, with scalarized loads and
// stores even without gathers (a4's int32 compare kernel: 0.8-1.1 us against
// 0.17-0.23 us when SLP vectorizes the unrolled row instead).
// Sets the loop property `property` on the loops of `f` that are innermost
// (or, with !innermost, on those that contain another loop).
void markLoops(llvm::Function &f, bool innermost, llvm::Metadata *property) {
  llvm::DominatorTree dt(f);
  llvm::LoopInfo loops(dt);
  llvm::LLVMContext &c = f.getContext();
  for (llvm::Loop *l : loops.getLoopsInPreorder()) {
    llvm::BasicBlock *latch = l->getLoopLatch();
    if (l->isInnermost() != innermost || !latch) continue;
    llvm::TempMDTuple self = llvm::MDNode::getTemporary(c, {});
    llvm::MDNode *id = llvm::MDNode::get(c, {self.get(), property});
    id->replaceOperandWith(0, id); // a loop ID refers to itself
    latch->getTerminator()->setMetadata(llvm::LLVMContext::MD_loop, id);
  }
}
void keepOuterLoopsScalar(llvm::Function &f) {
  llvm::LLVMContext &c = f.getContext();
  llvm::Metadata *off[] = {llvm::MDString::get(c, "llvm.loop.vectorize.enable"),
                           llvm::ConstantAsMetadata::get(llvm::ConstantInt::getFalse(c))};
  markLoops(f, /*innermost=*/false, llvm::MDNode::get(c, off));
}
// Keeps LLVM from unrolling the innermost loops of `f` (contiguousShortReduction).
void keepInnerLoopsRolled(llvm::Function &f) {
  llvm::LLVMContext &c = f.getContext();
  markLoops(f, /*innermost=*/true, llvm::MDNode::get(c, {llvm::MDString::get(c, "llvm.loop.unroll.disable")}));
}

// Whether llvm.ldexp is an instruction on `tm` for floats and their vectors
// (AVX-512F's vscalef) rather than a libm call per element.
bool hasVectorLdexp(const llvm::TargetMachine &tm) {
  return tm.getTargetTriple().isX86() && tm.getMCSubtargetInfo()->checkFeatures("+avx512f");
}

// Applies a kernel's decisions that are LLVM function attributes and loop
// metadata to its functions, once they are LLVM IR.
void applyDecisions(llvm::Module &m, const ScheduleKernel &k, const KernelDecisions &d, const llvm::TargetMachine &tm) {
  std::string features = d.preferNoGather ? (d.preferNoScatter ? "+prefer-no-gather,+prefer-no-scatter" : "+prefer-no-gather") : "";
  for (const std::string &sym : {k.symbol, k.symbol + "_body", k.symbol + "_task"}) // _task inlines _body
    if (llvm::Function *f = m.getFunction(sym)) {
      if (d.vectorWidth) f->addFnAttr("prefer-vector-width", std::to_string(d.vectorWidth));
      if (d.scalarOuterLoops && !f->isDeclaration()) keepOuterLoopsScalar(*f);
      if (d.keepReductionLoop && !f->isDeclaration()) keepInnerLoopsRolled(*f);
      if (features.empty()) continue;
      std::string fs = tm.getTargetFeatureString().str();
      f->addFnAttr("target-features", fs.empty() ? features : fs + "," + features);
    }
}

// Kernels that are lowered and optimized together, in a context of their own.
struct KernelGroup {
  std::vector<size_t> kernels;
  std::unique_ptr<MLIRContext> mctx;
  OwningOpRef<ModuleOp> module;
  std::unique_ptr<llvm::LLVMContext> ctx;
  std::unique_ptr<llvm::Module> llvm;
  std::string bitcode; ///< a worker group's optimized module, for the main context
  std::string object;  ///< the group's machine code, when the emission is split
  std::optional<Diagnostic> error;
};

// Below this many kernel UOps (after tiling) in all, one thread is quicker:
// a small schedule compiles in milliseconds (a 12-layer transformer's
// forward pass has ~2400, its training step ~43000).
constexpr size_t kParallelMinUOps = 2000;

// Splits the kernels into groups of about equal size (UOps after tiling, a
// proxy for the MLIR and LLVM work), deterministically: the biggest first, each
// to the group with the least so far. Group 0 is compiled by the calling thread
// and starts with `mainLoad`, the weight of the caller's functions.
std::vector<std::vector<size_t>> groupKernels(const std::vector<size_t> &sizes, size_t groups, size_t mainLoad) {
  std::vector<size_t> order(sizes.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return sizes[a] != sizes[b] ? sizes[a] > sizes[b] : a < b; });
  std::vector<std::vector<size_t>> out(groups);
  std::vector<size_t> load(groups, 0);
  load[0] = mainLoad;
  for (size_t k : order) {
    size_t g = size_t(std::min_element(load.begin(), load.end()) - load.begin());
    out[g].push_back(k);
    load[g] += sizes[k];
  }
  for (auto &g : out) std::sort(g.begin(), g.end()); // kernels keep their order within a group
  return out;
}

// A TargetMachine like `tm`, for another thread (a TargetMachine caches
// subtargets lazily and is not safe to share between threads).
std::unique_ptr<llvm::TargetMachine> cloneTargetMachine(const llvm::TargetMachine &tm) {
  return std::unique_ptr<llvm::TargetMachine>(tm.getTarget().createTargetMachine(
      tm.getTargetTriple(), tm.getTargetCPU(), tm.getTargetFeatureString(), tm.Options, tm.getRelocationModel(),
      tm.getCodeModel(), tm.getOptLevel()));
}

// What a kernel compiles from, besides the options and the target: its
// signature, its decisions and its optimized UOps in the text form.
std::string kernelContent(const SchedulePlan &plan, size_t i, const OptimizedKernel &k) {
  const ScheduleKernel &sk = plan.kernels[i];
  std::string s = "kernel " + sk.name + " args " + std::to_string(sk.numArgs) + (sk.noalias ? " noalias" : "") + " vars";
  for (int j : sk.vars) s += " " + plan.vars[size_t(j)].name;
  Graph body;
  body.roots.push_back(k.body);
  PrintOptions text;
  text.shapes = false;
  return s + "\ndecisions " + k.decisions.str() + "\n" + printText(body, text);
}

// Lowers a schedule's optimized kernels in groups (see the file comment).
class ScheduleLowering {
public:
  ScheduleLowering(const SchedulePlan &plan, const std::vector<OptimizedKernel> &kernels,
                   const ScheduleModuleHooks &hooks, const KernelOptions &opts, unsigned optLevel, bool keepMLIR,
                   llvm::TargetMachine &tm)
      : plan_(plan), kernels_(kernels), hooks_(hooks), opts_(opts), optLevel_(optLevel), keepMLIR_(keepMLIR), tm_(tm),
        cache_(keepMLIR || hooks.objectSymbolPrefix.empty() ? nullptr : hooks.cache) {}

  Result<LoweredSchedule> run() {
    LoweredSchedule out;
    if (cache_) lookUpCache();
    if (Status s = buildGroups(); !s) return s.error();
    if (Status s = addCallerMLIR(); !s) return s.error();
    if (keepMLIR_) out.mlirText = printMLIR(*groups_[0].module);
    if (Status s = compileGroups(); !s) return s.error();
    if (splitObjects_) {
      collectObjects(out);
      return out;
    }
    if (Status s = linkGroups(out); !s) return s.error();
    return out;
  }

private:
  const SchedulePlan &plan_;
  const std::vector<OptimizedKernel> &kernels_;
  const ScheduleModuleHooks &hooks_;
  const KernelOptions &opts_;
  unsigned optLevel_;
  bool keepMLIR_;
  llvm::TargetMachine &tm_;
  KernelCache *cache_;
  std::vector<KernelGroup> groups_;
  bool splitObjects_ = false;
  // With a cache: the kernels by distinct symbol (the first of each), each one's
  // key, and the objects found in the cache by kernel.
  std::string context_; ///< what every key holds: the build, the target, the options
  std::vector<size_t> distinct_;
  std::map<size_t, std::string> keys_, cachedObjects_;
  std::string mainKey_;

  // The key of each distinct kernel, and the objects the cache has for them.
  void lookUpCache() {
    context_ = "tgc kernel cache 1\nbuild " + KernelCache::buildIdentity() + "\ntarget " + tm_.getTargetTriple().str() +
               " " + tm_.getTargetCPU().str() + " " + tm_.getTargetFeatureString().str() + " O" +
               std::to_string(optLevel_) + "\noptions " + opts_.fingerprint() + "\nprefix " +
               hooks_.objectSymbolPrefix + (hooks_.exportEntries ? " entries" : "") + "\n";
    std::set<std::string> seen;
    for (size_t i = 0; i < plan_.kernels.size(); ++i) {
      if (!seen.insert(plan_.kernels[i].symbol).second) continue;
      distinct_.push_back(i);
      const ScheduleKernel &k = plan_.kernels[i];
      std::string content =
          k.contentDigest.empty() ? KernelCache::digest(kernelContent(plan_, i, kernels_[i])) : k.contentDigest;
      keys_[i] = KernelCache::digest(context_ + "symbol " + k.symbol + "\ncontent " + content + "\n");
      if (auto object = cache_->load(keys_[i])) cachedObjects_[i] = std::move(*object);
    }
  }

  // Which kernels each group lowers. Without a cache: two groups of about equal
  // size whatever the machine, so the code does not depend on its core count
  // (a single core compiles them one after the other); --emit=mlir prints one
  // module, so it is lowered as one. With a cache: the caller's functions
  // alone, then every kernel the cache misses on its own.
  std::vector<std::vector<size_t>> groupMembers() {
    if (cache_) {
      std::vector<std::vector<size_t>> members(1);
      for (size_t i : distinct_)
        if (!cachedObjects_.count(i)) members.push_back({i});
      return members;
    }
    std::vector<size_t> sizes;
    size_t total = 0;
    for (const OptimizedKernel &k : kernels_) total += sizes.emplace_back(toposort(k.body).size());
    size_t numGroups = keepMLIR_ || total < kParallelMinUOps || plan_.kernels.size() < 2 ? 1 : 2;
    return groupKernels(sizes, numGroups, hooks_.uopsPerCall * plan_.calls.size());
  }

  // The kernels the main group calls in other objects: a cache's distinct
  // ones, else those of the worker groups.
  std::vector<size_t> externalKernels() const {
    if (cache_) return distinct_;
    std::vector<size_t> out;
    for (size_t g = 1; g < groups_.size(); ++g) out.insert(out.end(), groups_[g].kernels.begin(), groups_[g].kernels.end());
    return out;
  }

  // Every kernel into the MLIR module of its group, on this thread (the tgc
  // side builds UOps, and a Context is not thread-safe).
  Status buildGroups() {
    std::vector<std::vector<size_t>> members = groupMembers();
    size_t numGroups = members.size();
    splitObjects_ = cache_ || (numGroups > 1 && !hooks_.objectSymbolPrefix.empty());
    groups_.resize(numGroups);
    for (size_t g = 0; g < numGroups; ++g) {
      KernelGroup &grp = groups_[g];
      grp.kernels = members[g];
      // Each context is single-threaded: the machine's cores are shared and the groups are the parallelism.
      grp.mctx = std::make_unique<MLIRContext>(MLIRContext::Threading::DISABLED);
      loadKernelDialects(*grp.mctx);
      grp.module = ModuleOp::create(UnknownLoc::get(grp.mctx.get()));
      for (size_t i : grp.kernels)
        if (Status s = lowerKernel(*grp.module, i); !s) return s;
    }
    return Status::success();
  }

  Status lowerKernel(ModuleOp module, size_t i) {
    const ScheduleKernel &k = plan_.kernels[i];
    const KernelDecisions &d = kernels_[i].decisions;
    KernelOptions opts = opts_;
    opts.polyTranscendentals = opts_.polyTranscendentals && !d.libmTranscendentals;
    std::vector<std::string> vars;
    for (int j : k.vars) vars.push_back(plan_.vars[size_t(j)].name);
    KernelSpec spec{k.symbol, k.numArgs, vars, k.noalias, opts, d.threadedLoop, d.tiled && d.tile.alongReduction,
                    d.transposedCopies};
    if (Status s = lowerKernelToMLIR(module, kernels_[i].body, spec); !s) return inKernel(s.error(), k);
    return Status::success();
  }

  // The caller's functions call every kernel: the main module declares the other groups' ones.
  Status addCallerMLIR() {
    ModuleOp main = *groups_[0].module;
    OpBuilder b(main.getContext());
    b.setInsertionPointToEnd(main.getBody());
    for (size_t i : externalKernels()) {
      const ScheduleKernel &k = plan_.kernels[i];
      func::FuncOp::create(b, b.getUnknownLoc(), k.symbol, kernelFunctionType(b, k.numArgs, k.vars.size())).setPrivate();
    }
    return hooks_.addMLIR ? hooks_.addMLIR(main) : Status::success();
  }

  // The worker groups on a pool of threads, one fewer than the cores, each
  // with its own TargetMachine; the main group on this thread, which then
  // helps with the rest.
  Status compileGroups() {
    std::atomic<size_t> next{1};
    auto compileWorkers = [&] {
      std::unique_ptr<llvm::TargetMachine> wtm;
      for (size_t g = next++; g < groups_.size(); g = next++) {
        if (!wtm) wtm = cloneTargetMachine(tm_);
        if (Status s = compileGroup(groups_[g], false, *wtm); !s) groups_[g].error = s.error();
      }
    };
    unsigned cores = std::thread::hardware_concurrency();
    size_t threads = cores >= 2 ? std::min<size_t>(cores - 1, groups_.size() - 1) : 0;
    std::vector<std::thread> workers;
    for (size_t t = 0; t < threads; ++t) workers.emplace_back(compileWorkers);
    Status mainStatus = compileGroup(groups_[0], true, tm_);
    compileWorkers();
    for (std::thread &t : workers) t.join();
    if (!mainStatus) return mainStatus;
    for (KernelGroup &grp : groups_)
      if (grp.error) return *grp.error;
    return Status::success();
  }

  // The MLIR and LLVM side of a group, on any thread. Kernels stay functions
  // of their own: the run function stays a flat call list and a kernel called
  // from many places is optimized and emitted once. A worker group's kernels
  // stay external until they are linked into the main module.
  Status compileGroup(KernelGroup &grp, bool main, llvm::TargetMachine &tm) {
    if (Status s = lowerToLLVMDialect(*grp.module); !s) return s;
    grp.ctx = std::make_unique<llvm::LLVMContext>();
    auto m = translateToLLVMIR(*grp.module, *grp.ctx, tm);
    if (!m) return m.error();
    grp.llvm = std::move(*m);
    for (size_t i : grp.kernels) {
      const ScheduleKernel &k = plan_.kernels[i];
      applyDecisions(*grp.llvm, k, kernels_[i].decisions, tm);
      if (llvm::Function *f = grp.llvm->getFunction(k.symbol)) {
        f->addFnAttr(llvm::Attribute::NoInline);
        if (main) f->setLinkage(llvm::GlobalValue::InternalLinkage);
      }
      if (!hooks_.exportEntries)
        if (llvm::Function *f = grp.llvm->getFunction(entrySymbol(k.symbol)))
          f->setLinkage(llvm::GlobalValue::InternalLinkage);
    }
    if (main && hooks_.addLLVM)
      if (Status s = hooks_.addLLVM(*grp.llvm); !s) return s;
    if (main && cache_ && reuseMainObject(grp)) return Status::success();
    if (Status s = optimizeModule(*grp.llvm, tm, optLevel_, opts_.combineLaneSums); !s) return s;
    // A threaded kernel's body and task are called from its own group only:
    // local symbols, so that two models' objects link together. (After the
    // optimization, which they would otherwise change.)
    for (size_t i : grp.kernels)
      for (const char *suffix : {"_body", "_task"})
        if (llvm::Function *f = grp.llvm->getFunction(plan_.kernels[i].symbol + suffix); f && !f->isDeclaration())
          f->setLinkage(llvm::GlobalValue::InternalLinkage);
    Status s = splitObjects_ ? emitGroupObject(grp, main, tm) : main ? Status::success() : keepGroupBitcode(grp);
    grp.module = nullptr; // free the MLIR on the thread that used it
    return s;
  }

  Status emitGroupObject(KernelGroup &grp, bool main, llvm::TargetMachine &tm) {
    // The kernels called across objects: a worker group's own, which the main group declares.
    for (size_t i : main ? externalKernels() : grp.kernels)
      if (llvm::Function *f = grp.llvm->getFunction(plan_.kernels[i].symbol)) {
        f->setName(hooks_.objectSymbolPrefix + plan_.kernels[i].symbol);
        f->setVisibility(llvm::GlobalValue::HiddenVisibility);
      }
    auto obj = emitObject(*grp.llvm, tm);
    if (!obj) return obj.error();
    grp.object = std::move(*obj);
    grp.llvm.reset();
    grp.ctx.reset();
    if (cache_) cache_->store(main ? mainKey_ : keys_.at(grp.kernels[0]), grp.object);
    return Status::success();
  }

  // The caller's functions are cached too, keyed by their module before it is
  // optimized (its bitcode: a model's entries, metadata and embedded weights).
  bool reuseMainObject(KernelGroup &grp) {
    std::string bitcode;
    llvm::raw_string_ostream os(bitcode);
    llvm::WriteBitcodeToFile(*grp.llvm, os);
    mainKey_ = KernelCache::digest(context_ + "main\n" + bitcode);
    std::optional<std::string> object = cache_->load(mainKey_);
    if (!object) return false;
    grp.object = std::move(*object);
    grp.llvm.reset();
    grp.ctx.reset();
    grp.module = nullptr;
    return true;
  }

  // The main group's object, then each kernel's, from the cache or just compiled.
  void collectObjects(LoweredSchedule &out) {
    out.objects.push_back(std::move(groups_[0].object));
    if (!cache_) {
      for (size_t g = 1; g < groups_.size(); ++g) out.objects.push_back(std::move(groups_[g].object));
      return;
    }
    for (size_t g = 1; g < groups_.size(); ++g) cachedObjects_[groups_[g].kernels[0]] = std::move(groups_[g].object);
    std::string keys = mainKey_;
    for (size_t i : distinct_) {
      out.objects.push_back(std::move(cachedObjects_[i]));
      keys += " " + keys_.at(i);
    }
    out.cacheKey = KernelCache::digest(keys);
    if (groups_.size() > 1) cache_->trim();
  }

  static Status keepGroupBitcode(KernelGroup &grp) {
    llvm::raw_string_ostream os(grp.bitcode);
    llvm::WriteBitcodeToFile(*grp.llvm, os);
    grp.llvm.reset();
    grp.ctx.reset();
    return Status::success();
  }

  // The worker groups' optimized modules linked into the main one.
  Status linkGroups(LoweredSchedule &out) {
    out.ctx = std::move(groups_[0].ctx);
    out.module = std::move(groups_[0].llvm);
    for (size_t g = 1; g < groups_.size(); ++g) {
      auto buffer = llvm::MemoryBuffer::getMemBuffer(groups_[g].bitcode, "kernels", /*RequiresNullTerminator=*/false);
      auto part = llvm::parseBitcodeFile(buffer->getMemBufferRef(), *out.ctx);
      if (!part)
        return Diagnostic(tgc::Location(), "codegen: cannot read back a kernel group: " + llvm::toString(part.takeError()));
      if (llvm::Linker::linkModules(*out.module, std::move(*part)))
        return Diagnostic(tgc::Location(), "codegen: cannot link a kernel group into the schedule's module");
      for (size_t i : groups_[g].kernels)
        if (llvm::Function *f = out.module->getFunction(plan_.kernels[i].symbol))
          f->setLinkage(llvm::GlobalValue::InternalLinkage);
    }
    return Status::success();
  }
};

} // namespace

TargetTraits targetTraits(const llvm::TargetMachine &tm) { return {tm.getTargetTriple().isX86()}; }

void nameKernelsByContent(SchedulePlan &plan, const std::vector<OptimizedKernel> &kernels) {
  // The symbol carries 64 bits of the content's hash; the cache's key holds the whole digest.
  for (size_t i = 0; i < plan.kernels.size(); ++i) {
    ScheduleKernel &k = plan.kernels[i];
    k.contentDigest = KernelCache::digest(kernelContent(plan, i, kernels[i]));
    k.symbol = kernelSymbol(k.contentDigest.substr(0, 16), k.name);
  }
}

std::vector<OptimizedKernel> optimizeKernels(const SchedulePlan &plan, const KernelOptions &opts, const TargetTraits &target) {
  std::vector<OptimizedKernel> out;
  for (const ScheduleKernel &k : plan.kernels) out.push_back(optimizeKernel(k.sink, opts, target));
  return out;
}

Result<LoweredSchedule> lowerSchedule(const SchedulePlan &plan, const std::vector<OptimizedKernel> &kernels,
                                      const ScheduleModuleHooks &hooks, const KernelOptions &opts, unsigned optLevel,
                                      bool keepMLIR, llvm::TargetMachine &tm) {
  for (const ScheduleCall &c : plan.calls)
    for (const ScheduleArg &a : c.args)
      if (a.byteOffset > INT32_MAX) return Diagnostic::at(c.call, "buffer view offset beyond 2 GiB is not supported");
  KernelOptions lowering = opts;
  lowering.vectorLdexp = opts.vectorLdexp && hasVectorLdexp(tm);
  return ScheduleLowering(plan, kernels, hooks, lowering, optLevel, keepMLIR, tm).run();
}

} // namespace tgc::codegen
