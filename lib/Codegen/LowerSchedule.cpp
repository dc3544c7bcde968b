//===- LowerSchedule.cpp - every kernel of a plan to one optimized LLVM module ===//
//
// lowerSchedule (ScheduleModule.h). Lowering a kernel through MLIR and
// optimizing it with LLVM does not depend on the other kernels (each is a
// noinline function of its own), so a big schedule is split into groups of
// kernels that are lowered and optimized on threads of their own, each in its
// own MLIRContext, LLVMContext and TargetMachine; the optimized groups are
// linked into the main module, which holds the caller's functions. The tgc
// side of lowering (tiling, KernelToMLIR) builds UOps, and a Context is not
// thread-safe: it stays on the calling thread, only the MLIR and LLVM work runs
// concurrently. A model compiled to an object file emits each group's object
// on its thread too (joined by a relocatable link); otherwise code generation
// of the linked module is serial.
//
//===----------------------------------------------------------------------===//
#include "Codegen/DataInvalid.h"
#include "Codegen/DivmodSplit.h"
#include "Codegen/EpilogueSplit.h"
#include "Codegen/GateSplit.h"
#include "Codegen/GateVersioning.h"
#include "Codegen/HoistInvariant.h"
#include "Codegen/KernelToMLIR.h"
#include "Codegen/MatmulTiling.h"
#include "Codegen/ParallelLoop.h"
#include "Codegen/ReduceLanes.h"
#include "Codegen/ScheduleModule.h"

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
#include <thread>

namespace tgc::codegen {

using namespace mlir;

namespace {

Diagnostic inKernel(Diagnostic d, const ScheduleKernel &k) {
  d.notes.push_back("in kernel " + (k.name.empty() ? std::string("<unnamed>") : k.name) + " (" + k.symbol + ")");
  return d;
}

// A float EXP2, LOG2, SIN or POW: a polynomial unless libm is asked for.
bool isPolynomialOp(const UOp *n) { return isTranscendental(n) && n->dtype().isFloat(); }

// Whether a kernel's loop is bound by the ALU work of each element: it
// evaluates a polynomial transcendental (with `polynomials`) or THREEFRY's 20
// rounds.
bool aluBound(const UOp *sink, bool polynomials) {
  for (const UOp *n : toposort(sink))
    if ((polynomials && isPolynomialOp(n)) || n->is(Op::THREEFRY)) return true;
  return false;
}

// The innermost loop of an elementwise kernel (no REDUCE, one loop nest) in
// which every buffer access steps by 0 or 1 element per iteration, so vectors
// along that loop are plain loads and stores; null for any other kernel. LLVM
// fully unrolls a short innermost loop before it vectorizes, and may then
// vectorize the loop around it with gathers and scatters (a 32x16
// where/compare: 2x slower than the contiguous vectors SLP makes of the
// unrolled body); for such a kernel no gather is ever the better choice.
const UOp *contiguousInnermostLoop(const UOp *sink) {
  const UOp *end = nullptr;
  for (const UOp *n : toposort(sink)) {
    if (n->is(Op::END) && end) return nullptr;
    if (n->is(Op::END)) end = n;
  }
  if (!end || end->numSrc() < 2) return nullptr;
  const UOp *inner = end->src(end->numSrc() - 1);
  return unitStrideAccesses(sink, inner) ? inner : nullptr;
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

// The reduction loop of a kernel of one loop nest whose summand reads memory
// contiguously along it but with a stride along the innermost output loop
// (nn.Linear against W[j, k], K = 32: g1's logits). LLVM unrolls such a short
// reduction completely, then vectorizes the output loop with a gather per
// load and step; kept as a loop it vectorizes along the reduction with plain
// loads (g1 27 -> 7 us). From 32 steps: at 16 (one vector, attention's q.k
// over a head) the horizontal sum per output made k1's scores kernel 2-5x
// slower than the gathers. Null for any other kernel.
const UOp *contiguousShortReduction(const UOp *sink) {
  if (!isPlainLoopNest(sink)) return nullptr;
  const UOp *end = sink->src(0), *inner = end->src(end->numSrc() - 1), *found = nullptr;
  for (const UOp *u : toposort(end->src(0))) {
    if (!u->is(Op::REDUCE)) continue;
    if (found || u->numSrc() != 2) return nullptr; // one reduction over one range
    std::optional<int64_t> n = tripCount(u->src(1));
    if (!n || *n < 32 || *n >= 64 || unitStrideAccesses(u->src(0), u->src(1)) != true ||
        unitStrideAccesses(u->src(0), inner).has_value())
      return nullptr;
    found = u->src(1);
  }
  return found;
}

// Whether llvm.ldexp is an instruction on `tm` for floats and their vectors
// (AVX-512F's vscalef) rather than a libm call per element.
bool hasVectorLdexp(const llvm::TargetMachine &tm) {
  return tm.getTargetTriple().isX86() && tm.getMCSubtargetInfo()->checkFeatures("+avx512f");
}

// The LLVM function attributes a kernel gets, decided from its UOps (on the
// calling thread) and applied to its functions once they are LLVM IR.
struct KernelAttributes {
  int64_t vectorWidth = 0;         ///< prefer-vector-width, 0: LLVM's default
  std::string features;            ///< target features to add ("" = none)
  bool scalarOuterLoops = false;   ///< keepOuterLoopsScalar
  bool libmTranscendentals = false; ///< lower this kernel's transcendentals as libm calls
  bool keepReductionLoop = false;   ///< contiguousShortReduction: no full unroll of the innermost loops

  /// `polyInReduce`: transcendentalInReduce of the tiled kernel.
  KernelAttributes(const UOp *sink, const MatmulTile &tile, bool polyInReduce, const KernelOptions &opts,
                   const llvm::TargetMachine &tm) {
    // The vectors of a register tile are as wide as its rows, up to 512
    // bits (x86's prefer-vector-width; ignored elsewhere, and clamped to what
    // the CPU has): LLVM's default for many AVX-512 CPUs is 256 bits, half
    // the FMA rate of a 512-bit tile row; and a row narrower than the widest
    // vector (8 floats: conv2d's 56 columns) is vectorized one row per vector
    // only when the vectorizers are told that width (at 512 bits SLP joins
    // rows and gathers their operands). A dot-product tile's vectors run
    // along the reduction: the widest. Gathers are made unattractive too
    // (an x86 feature; other targets would warn about it).
    // A loop evaluating a polynomial transcendental per element is bound by
    // its ALU work (some 25 vector ops per EXP2; THREEFRY some 100 per pair of
    // outputs), not by memory: the widest vectors halve that work
    // (KernelOptions::wideVectors).
    const bool tiled = tile.columns > 0;
    if (tiled) vectorWidth = tile.alongReduction ? 512 : std::min<int64_t>(tile.columns * 32, 512);
    else if (opts.wideVectors && aluBound(sink, opts.polyTranscendentals)) vectorWidth = 512;
    // In a register tile a transcendental of the reduction's summand is one
    // scalar per tile row and step: SLP vectorizes the tile's columns and
    // leaves each row's polynomial as scalar code mixed with partial vectors
    // and mask shuffles, 10x slower than a libm call per row (transformer
    // block's attention kernel: 39 -> 3.7 ms).
    // (A dot-product tile's vectors run along the reduction: its polynomials
    // vectorize like an untiled kernel's.)
    libmTranscendentals = tiled && !tile.alongReduction && opts.polyTranscendentals && polyInReduce;
    if (!tm.getTargetTriple().isX86()) return;
    if (tiled) {
      features = "+prefer-no-gather";
    } else if (const UOp *inner = contiguousInnermostLoop(sink)) {
      features = "+prefer-no-gather,+prefer-no-scatter";
      // An unrolled row of at least one vector (8 floats) is SLP's to vectorize.
      std::optional<int64_t> n = tripCount(inner);
      scalarOuterLoops = n && *n >= 8;
    } else {
      keepReductionLoop = opts.reductionLoops && contiguousShortReduction(sink) != nullptr;
    }
  }

  void apply(llvm::Module &m, const ScheduleKernel &k, const llvm::TargetMachine &tm) const {
    for (const std::string &sym : {k.symbol, k.symbol + "_body", k.symbol + "_task"}) // _task inlines _body
      if (llvm::Function *f = m.getFunction(sym)) {
        if (vectorWidth) f->addFnAttr("prefer-vector-width", std::to_string(vectorWidth));
        if (scalarOuterLoops && !f->isDeclaration()) keepOuterLoopsScalar(*f);
        if (keepReductionLoop && !f->isDeclaration()) keepInnerLoopsRolled(*f);
        if (features.empty()) continue;
        std::string fs = tm.getTargetFeatureString().str();
        f->addFnAttr("target-features", fs.empty() ? features : fs + "," + features);
      }
  }
};

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

} // namespace

Result<LoweredSchedule> lowerSchedule(const SchedulePlan &plan, const ScheduleModuleHooks &hooks,
                                      const KernelOptions &kernel, unsigned optLevel, bool keepMLIR,
                                      llvm::TargetMachine &tm) {
  for (const ScheduleCall &c : plan.calls)
    for (const ScheduleArg &a : c.args)
      if (a.byteOffset > INT32_MAX) return Diagnostic::at(c.call, "buffer view offset beyond 2 GiB is not supported");
  KernelOptions kernelOpts = kernel;
  kernelOpts.vectorLdexp = kernel.vectorLdexp && hasVectorLdexp(tm);

  // The tgc side, on this thread: the optimized bodies (tiles, lane maxima) and their attributes.
  std::vector<const UOp *> bodies;
  std::vector<KernelAttributes> attrs;
  std::vector<size_t> sizes;
  std::vector<int64_t> works;
  std::vector<bool> dotTiles;
  size_t total = 0;
  for (const ScheduleKernel &k : plan.kernels) {
    MatmulTile tile;
    const UOp *tiled = tileKernel(splitReduceDivmod(mergeReduceRanges(mergeOutputRanges(resolveDataInvalid(k.sink), kernel), kernel), kernel), kernel, &tile);
    works.push_back(threadsWork(tiled, tile));
    dotTiles.push_back(tile.alongReduction);
    const UOp *body = hoistInvariant(splitGates(unrollQuotient(splitDivmod(tiled, kernel), kernel), kernel), kernel);
    bodies.push_back(splitMaxLanes(splitEpilogue(body, kernel), kernel));
    // (a tile whose transcendental terms went to a table has none left in its summands)
    attrs.emplace_back(k.sink, tile, transcendentalInReduce(tiled), kernel, tm);
    sizes.push_back(toposort(bodies.back()).size());
    total += sizes.back();
  }
  // Two groups whatever the machine, so the code does not depend on its core
  // count (a single core compiles them one after the other); --emit=mlir
  // prints one module, so it is lowered as one.
  size_t numGroups = keepMLIR || total < kParallelMinUOps || plan.kernels.size() < 2 ? 1 : 2;
  bool concurrent = std::thread::hardware_concurrency() >= 2;
  bool splitObjects = numGroups > 1 && !hooks.objectSymbolPrefix.empty();
  std::vector<KernelGroup> groups(numGroups);
  std::vector<std::vector<size_t>> members = groupKernels(sizes, numGroups, hooks.uopsPerCall * plan.calls.size());
  for (size_t g = 0; g < numGroups; ++g) {
    KernelGroup &grp = groups[g];
    grp.kernels = members[g];
    // Each context is single-threaded: the machine's cores are shared and the groups are the parallelism.
    grp.mctx = std::make_unique<MLIRContext>(MLIRContext::Threading::DISABLED);
    loadKernelDialects(*grp.mctx);
    grp.module = ModuleOp::create(UnknownLoc::get(grp.mctx.get()));
    for (size_t i : grp.kernels) {
      const ScheduleKernel &k = plan.kernels[i];
      KernelOptions opts = kernelOpts;
      opts.polyTranscendentals = kernelOpts.polyTranscendentals && !attrs[i].libmTranscendentals;
      std::vector<std::string> vars;
      for (int j : k.vars) vars.push_back(plan.vars[size_t(j)].name);
      Status s = lowerKernelToMLIR(*grp.module, bodies[i], KernelSpec{k.symbol, k.numArgs, vars, k.noalias, opts, works[i], dotTiles[i]});
      if (!s) return inKernel(s.error(), k);
    }
  }
  // The caller's functions call every kernel: the main module declares the other groups' ones.
  {
    ModuleOp main = *groups[0].module;
    OpBuilder b(main.getContext());
    b.setInsertionPointToEnd(main.getBody());
    for (size_t g = 1; g < numGroups; ++g)
      for (size_t i : groups[g].kernels) {
        const ScheduleKernel &k = plan.kernels[i];
        func::FuncOp::create(b, b.getUnknownLoc(), k.symbol, kernelFunctionType(b, k.numArgs, k.vars.size())).setPrivate();
      }
    if (hooks.addMLIR)
      if (Status s = hooks.addMLIR(main); !s) return s.error();
  }
  LoweredSchedule out;
  if (keepMLIR) out.mlirText = printMLIR(*groups[0].module);

  // The MLIR and LLVM side of a group, on any thread. Kernels stay functions
  // of their own: the run function stays a flat call list and a kernel called
  // from many places is optimized and emitted once. A worker group's kernels
  // stay external until they are linked into the main module.
  auto compile = [&](KernelGroup &grp, bool main, llvm::TargetMachine &gtm) -> Status {
    if (Status s = lowerToLLVMDialect(*grp.module); !s) return s;
    grp.ctx = std::make_unique<llvm::LLVMContext>();
    auto m = translateToLLVMIR(*grp.module, *grp.ctx, gtm);
    if (!m) return m.error();
    grp.llvm = std::move(*m);
    for (size_t i : grp.kernels) {
      const ScheduleKernel &k = plan.kernels[i];
      attrs[i].apply(*grp.llvm, k, gtm);
      if (llvm::Function *f = grp.llvm->getFunction(k.symbol)) {
        f->addFnAttr(llvm::Attribute::NoInline);
        if (main) f->setLinkage(llvm::GlobalValue::InternalLinkage);
      }
      if (!hooks.exportEntries)
        if (llvm::Function *f = grp.llvm->getFunction(entrySymbol(k.symbol)))
          f->setLinkage(llvm::GlobalValue::InternalLinkage);
    }
    if (main && hooks.addLLVM)
      if (Status s = hooks.addLLVM(*grp.llvm); !s) return s;
    if (Status s = optimizeModule(*grp.llvm, gtm, optLevel, kernel.combineLaneSums); !s) return s;
    // A threaded kernel's body and task are called from its own group only:
    // local symbols, so that two models' objects link together. (After the
    // optimization, which they would otherwise change.)
    for (size_t i : grp.kernels)
      for (const char *suffix : {"_body", "_task"})
        if (llvm::Function *f = grp.llvm->getFunction(plan.kernels[i].symbol + suffix); f && !f->isDeclaration())
          f->setLinkage(llvm::GlobalValue::InternalLinkage);
    if (splitObjects) {
      // The kernels called across objects: a worker group's own, which the main group declares.
      std::vector<size_t> crossing;
      if (!main) crossing = grp.kernels;
      else
        for (size_t g = 1; g < numGroups; ++g) crossing.insert(crossing.end(), groups[g].kernels.begin(), groups[g].kernels.end());
      for (size_t i : crossing)
        if (llvm::Function *f = grp.llvm->getFunction(plan.kernels[i].symbol)) {
          f->setName(hooks.objectSymbolPrefix + plan.kernels[i].symbol);
          f->setVisibility(llvm::GlobalValue::HiddenVisibility);
        }
      auto obj = emitObject(*grp.llvm, gtm);
      if (!obj) return obj.error();
      grp.object = std::move(*obj);
      grp.llvm.reset();
      grp.ctx.reset();
    } else if (!main) {
      llvm::raw_string_ostream os(grp.bitcode);
      llvm::WriteBitcodeToFile(*grp.llvm, os);
      grp.llvm.reset();
      grp.ctx.reset();
    }
    grp.module = nullptr; // free the MLIR on the thread that used it
    return Status::success();
  };
  auto compileWorker = [&](size_t g) {
    std::unique_ptr<llvm::TargetMachine> wtm = cloneTargetMachine(tm);
    if (Status s = compile(groups[g], false, *wtm); !s) groups[g].error = s.error();
  };
  std::vector<std::thread> workers;
  for (size_t g = 1; g < numGroups; ++g) {
    if (concurrent) workers.emplace_back(compileWorker, g);
    else compileWorker(g);
  }
  Status mainStatus = compile(groups[0], true, tm);
  for (std::thread &t : workers) t.join();
  if (!mainStatus) return mainStatus.error();
  for (KernelGroup &grp : groups)
    if (grp.error) return *grp.error;

  if (splitObjects) {
    for (KernelGroup &grp : groups) out.objects.push_back(std::move(grp.object));
    return out;
  }
  out.ctx = std::move(groups[0].ctx);
  out.module = std::move(groups[0].llvm);
  for (size_t g = 1; g < numGroups; ++g) {
    auto buffer = llvm::MemoryBuffer::getMemBuffer(groups[g].bitcode, "kernels", /*RequiresNullTerminator=*/false);
    auto part = llvm::parseBitcodeFile(buffer->getMemBufferRef(), *out.ctx);
    if (!part) return Diagnostic(tgc::Location(), "codegen: cannot read back a kernel group: " + llvm::toString(part.takeError()));
    if (llvm::Linker::linkModules(*out.module, std::move(*part)))
      return Diagnostic(tgc::Location(), "codegen: cannot link a kernel group into the schedule's module");
    for (size_t i : groups[g].kernels)
      if (llvm::Function *f = out.module->getFunction(plan.kernels[i].symbol))
        f->setLinkage(llvm::GlobalValue::InternalLinkage);
  }
  return out;
}

} // namespace tgc::codegen
