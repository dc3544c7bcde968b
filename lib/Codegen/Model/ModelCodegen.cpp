//===- ModelCodegen.cpp - a model as an object file -----------------------===//
//
// Adds the model's entry points to the schedule module (LowerKernels.h) and
// its metadata tables, then emits object code / assembly. tinygrad has no
// counterpart (it runs schedules from Python); the entry is what its
// `run_linear` does for one LINEAR, with the buffers bound once: interface
// tensors are the caller's pointers, intermediates live at their memory-plan
// offsets in one workspace.
//
//   NAME_run_vars(tensors, vars, ws):
//     any tensor pointer NULL (non-empty tensor)  -> TGC_ERR_NULL_TENSOR
//     misaligned tensor / workspace               -> TGC_ERR_MISALIGNED
//     vars == NULL: the variables' defaults, or TGC_ERR_NO_VARS if one has none
//     a variable outside its [min, max]           -> TGC_ERR_VAR_RANGE
//     ws == NULL and a workspace is needed: aligned_alloc, or TGC_ERR_NO_MEMORY
//     copy-in, the calls, copy-out (tensors that do not own their buffer)
//     free what it allocated; return TGC_OK
//   NAME_run_tensors(tensors, ws): NAME_run_vars(tensors, NULL, ws).
//   NAME_run(p0, ..., pN, v0, ..., vM, ws): packs the pointers and the
//     variables' values and calls NAME_run_vars.
//
// Embedded weights (ModelWeights::embedded) are internal read-only globals,
// 64-byte aligned; the entry uses their address as the tensor's. External
// weights are pointers into a weights file, kept in an internal table that
// NAME_bind_weights fills (through the runtime's tgc_weights_bind, which
// checks the file); the entry refuses to run while one is NULL.
//
// Profiling: NAME_set_observer stores a callback in an internal global. The
// entry loads it once; when it is NULL the calls run exactly as without
// profiling, otherwise a second copy of the call sequence calls it around each
// call. So the unobserved hot path costs one load and one branch per run.
//
//===----------------------------------------------------------------------===//
#include "Codegen/Model/ModelCodegen.h"
#include "Codegen/Lower/LowerKernels.h"
#include "Runtime/ModelABI.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/Utils/Cloning.h"

#include <functional>
#include <optional>

namespace tgc {

using namespace mlir;

namespace {

Diagnostic modelError(const Model &m, std::string msg) {
  Location loc;
  loc.file = m.name;
  return Diagnostic(std::move(loc), std::move(msg));
}

/// The read-only global holding embedded tensor i.
std::string weightSymbol(const Model &m, size_t i) { return m.name + "_weight_" + cIdentifier(m.tensors[i].name); }
/// The table of external weight pointers, the observer {fn, ctx}, and the weights spec.
std::string weightPtrsSymbol(const Model &m) { return m.name + "_weight_ptrs"; }
std::string observerSymbol(const Model &m) { return m.name + "_observer"; }
/// The variables' default values (int64_t[]), for NAME_run_vars(tensors, NULL, ws).
std::string varDefaultsSymbol(const Model &m) { return m.name + "_var_defaults"; }

class EntryBuilder {
public:
  EntryBuilder(ModuleOp module, const Model &model, const MemoryPlan &mem, const ModelWeights &weights)
      : module_(module), model_(model), mem_(mem), weights_(weights), b_(module.getContext()),
        loc_(b_.getUnknownLoc()), ptr_(LLVM::LLVMPointerType::get(module.getContext())) {
    exposed_ = exposedTensors(model, weights.placed());
  }

  void build() {
    module_.getContext()->loadDialect<cf::ControlFlowDialect>();
    b_.setInsertionPointToEnd(module_.getBody());
    // Globals declared here get their contents and linkage in LLVM IR (addGlobals).
    for (const auto &[i, bytes] : weights_.embedded)
      LLVM::GlobalOp::create(b_, loc_, LLVM::LLVMArrayType::get(b_.getI8Type(), bytes.size()), /*isConstant=*/true,
                             LLVM::Linkage::External, weightSymbol(model_, i), mlir::Attribute());
    if (!weights_.external.empty())
      LLVM::GlobalOp::create(b_, loc_, LLVM::LLVMArrayType::get(ptr_, weights_.external.size()), /*isConstant=*/false,
                             LLVM::Linkage::External, weightPtrsSymbol(model_), mlir::Attribute());
    LLVM::GlobalOp::create(b_, loc_, LLVM::LLVMArrayType::get(ptr_, 2), /*isConstant=*/false, LLVM::Linkage::External,
                           observerSymbol(model_), mlir::Attribute());
    if (!model_.vars.empty())
      LLVM::GlobalOp::create(b_, loc_, LLVM::LLVMArrayType::get(b_.getI64Type(), model_.vars.size()), /*isConstant=*/true,
                             LLVM::Linkage::External, varDefaultsSymbol(model_), mlir::Attribute());
    buildVarsEntry();
    buildTensorsEntry();
    buildPositionalEntry();
    buildSetObserver();
  }

private:
  mlir::Value i64(int64_t v) { return arith::ConstantOp::create(b_, loc_, b_.getI64IntegerAttr(v)); }
  mlir::Value i32(int32_t v) { return arith::ConstantOp::create(b_, loc_, b_.getI32IntegerAttr(v)); }
  mlir::Value byteAt(mlir::Value base, int64_t off) {
    if (off == 0) return base;
    return LLVM::GEPOp::create(b_, loc_, ptr_, b_.getI8Type(), base, llvm::ArrayRef<LLVM::GEPArg>{int32_t(off)},
                               LLVM::GEPNoWrapFlags::inbounds);
  }
  /// err = cond ? code : err
  mlir::Value failIf(mlir::Value cond, int32_t code, mlir::Value err) {
    return arith::SelectOp::create(b_, loc_, cond, i32(code), err);
  }
  mlir::Value misaligned(mlir::Value p, int64_t align) {
    if (align <= 1) return arith::ConstantOp::create(b_, loc_, b_.getBoolAttr(false));
    mlir::Value bits = LLVM::PtrToIntOp::create(b_, loc_, b_.getI64Type(), p);
    mlir::Value low = arith::AndIOp::create(b_, loc_, bits, i64(align - 1));
    return arith::CmpIOp::create(b_, loc_, arith::CmpIPredicate::ne, low, i64(0));
  }
  mlir::Value isNull(mlir::Value p) {
    mlir::Value null = LLVM::ZeroOp::create(b_, loc_, ptr_);
    return LLVM::ICmpOp::create(b_, loc_, LLVM::ICmpPredicate::eq, p, null);
  }
  /// The address of pointer `index` of the pointer-array global `symbol`.
  mlir::Value pointerSlot(const std::string &symbol, int32_t index) {
    mlir::Value g = LLVM::AddressOfOp::create(b_, loc_, ptr_, symbol);
    if (index == 0) return g;
    return LLVM::GEPOp::create(b_, loc_, ptr_, ptr_, g, llvm::ArrayRef<LLVM::GEPArg>{index},
                               LLVM::GEPNoWrapFlags::inbounds);
  }

  /// The variables' values, vars[j] or (vars == NULL) their defaults, each
  /// checked against its range: a value outside would index past the buffers.
  std::vector<mlir::Value> loadVars(mlir::Value vars, mlir::Value &err) {
    if (model_.vars.empty()) return {};
    mlir::Value none = isNull(vars);
    mlir::Value defaults = LLVM::AddressOfOp::create(b_, loc_, ptr_, varDefaultsSymbol(model_));
    mlir::Value src = arith::SelectOp::create(b_, loc_, none, defaults, vars);
    std::vector<mlir::Value> values;
    for (size_t j = 0; j < model_.vars.size(); ++j) {
      mlir::Value slot = LLVM::GEPOp::create(b_, loc_, ptr_, b_.getI64Type(), src, llvm::ArrayRef<LLVM::GEPArg>{int32_t(j)},
                                             LLVM::GEPNoWrapFlags::inbounds);
      mlir::Value v = values.emplace_back(LLVM::LoadOp::create(b_, loc_, b_.getI64Type(), slot));
      mlir::Value low = arith::CmpIOp::create(b_, loc_, arith::CmpIPredicate::slt, v, i64(model_.vars[j].min));
      mlir::Value high = arith::CmpIOp::create(b_, loc_, arith::CmpIPredicate::sgt, v, i64(model_.vars[j].max));
      err = failIf(arith::OrIOp::create(b_, loc_, low, high), TGC_ERR_VAR_RANGE, err);
    }
    // (last: a missing default is the error, not the range of its placeholder)
    bool allDefaults = std::all_of(model_.vars.begin(), model_.vars.end(), [](const ModelVar &v) { return v.bound.has_value(); });
    if (!allDefaults) err = failIf(none, TGC_ERR_NO_VARS, err);
    return values;
  }

  /// The calls, observed when an observer is set: if (!fn) calls; else { fn(ctx, i, k, 0); call i; fn(ctx, i, k, 1); ... }
  void emitCalls(const std::vector<mlir::Value> &base, const std::vector<mlir::Value> &vars) {
    const SchedulePlan &plan = model_.plan;
    auto baseOf = [&](int bi) { return base[bi]; };
    auto varOf = [&](int j) { return vars[size_t(j)]; };
    if (plan.calls.empty()) return;
    mlir::Value fn = LLVM::LoadOp::create(b_, loc_, ptr_, pointerSlot(observerSymbol(model_), 0));
    auto ifOp = scf::IfOp::create(b_, loc_, TypeRange{}, isNull(fn), /*withElse=*/true);
    b_.setInsertionPointToStart(&ifOp.getThenRegion().front());
    codegen::emitScheduleCalls(b_, plan, baseOf, varOf);
    b_.setInsertionPointToStart(&ifOp.getElseRegion().front());
    mlir::Value ctx = LLVM::LoadOp::create(b_, loc_, ptr_, pointerSlot(observerSymbol(model_), 1));
    auto voidTy = LLVM::LLVMVoidType::get(b_.getContext());
    auto observerTy = LLVM::LLVMFunctionType::get(voidTy, {ptr_, b_.getI32Type(), b_.getI32Type(), b_.getI32Type()});
    codegen::emitScheduleCalls(b_, plan, baseOf, varOf, [&](size_t call, bool end) {
      const ScheduleCall &c = plan.calls[call];
      int32_t kernel = c.kind == ScheduleCall::Kind::Kernel ? int32_t(c.kernel) : -1;
      LLVM::CallOp::create(b_, loc_, observerTy, mlir::ValueRange{fn, ctx, i32(int32_t(call)), i32(kernel), i32(end)});
    });
    b_.setInsertionPointAfter(ifOp);
  }

  void buildVarsEntry() {
    auto allocFn = func::FuncOp::create(b_, loc_, "aligned_alloc",
                                        b_.getFunctionType({b_.getI64Type(), b_.getI64Type()}, {ptr_}));
    allocFn.setPrivate();
    auto freeFn = func::FuncOp::create(b_, loc_, "free", b_.getFunctionType({ptr_}, {}));
    freeFn.setPrivate();

    auto fn = func::FuncOp::create(b_, loc_, model_.name + "_run_vars",
                                   b_.getFunctionType({ptr_, ptr_, ptr_}, {b_.getI32Type()}));
    Block *entry = fn.addEntryBlock();
    Block *fail = fn.addBlock();
    fail->addArgument(b_.getI32Type(), loc_);
    Block *ok = fn.addBlock();
    b_.setInsertionPointToEnd(fail);
    func::ReturnOp::create(b_, loc_, fail->getArgument(0));

    // Checks.
    b_.setInsertionPointToEnd(entry);
    mlir::Value tensors = entry->getArgument(0), wsArg = entry->getArgument(2);
    std::vector<mlir::Value> data(model_.tensors.size());
    mlir::Value err = i32(TGC_OK);
    for (size_t a = 0; a < exposed_.size(); ++a) {
      const ModelTensor &t = model_.tensors[exposed_[a]];
      mlir::Value slot = LLVM::GEPOp::create(b_, loc_, ptr_, ptr_, tensors, llvm::ArrayRef<LLVM::GEPArg>{int32_t(a)},
                                             LLVM::GEPNoWrapFlags::inbounds);
      mlir::Value p = data[exposed_[a]] = LLVM::LoadOp::create(b_, loc_, ptr_, slot);
      if (t.bytes == 0) continue;
      err = failIf(misaligned(p, t.dtype.itemsize()), TGC_ERR_MISALIGNED, err);
      err = failIf(isNull(p), TGC_ERR_NULL_TENSOR, err);
    }
    for (const auto &[i, bytes] : weights_.embedded)
      data[i] = LLVM::AddressOfOp::create(b_, loc_, ptr_, weightSymbol(model_, i));
    for (size_t j = 0; j < weights_.external.size(); ++j) {
      mlir::Value p = data[weights_.external[j]] =
          LLVM::LoadOp::create(b_, loc_, ptr_, pointerSlot(weightPtrsSymbol(model_), int32_t(j)));
      err = failIf(isNull(p), TGC_ERR_NO_WEIGHTS, err);
    }
    std::vector<mlir::Value> vars = loadVars(entry->getArgument(1), err);
    bool needWs = mem_.workspaceBytes > 0;
    if (needWs) err = failIf(misaligned(wsArg, MemoryPlan::kAlignment), TGC_ERR_MISALIGNED, err);
    mlir::Value bad = arith::CmpIOp::create(b_, loc_, arith::CmpIPredicate::ne, err, i32(TGC_OK));
    cf::CondBranchOp::create(b_, loc_, bad, fail, mlir::ValueRange{err}, ok, mlir::ValueRange{});

    // The workspace: the caller's, or allocated here.
    b_.setInsertionPointToEnd(ok);
    mlir::Value ws = wsArg, allocated;
    Block *run = ok;
    if (needWs) {
      allocated = isNull(wsArg);
      auto ifOp = scf::IfOp::create(b_, loc_, TypeRange{ptr_}, allocated, /*withElse=*/true);
      b_.setInsertionPointToStart(&ifOp.getThenRegion().front());
      mlir::Value p = func::CallOp::create(b_, loc_, allocFn, mlir::ValueRange{i64(MemoryPlan::kAlignment),
                                                                               i64(mem_.workspaceBytes)})
                          .getResult(0);
      scf::YieldOp::create(b_, loc_, p);
      b_.setInsertionPointToStart(&ifOp.getElseRegion().front());
      scf::YieldOp::create(b_, loc_, wsArg);
      b_.setInsertionPointAfter(ifOp);
      ws = ifOp.getResult(0);
      mlir::Value noMemory = arith::AndIOp::create(b_, loc_, allocated, isNull(ws));
      run = fn.addBlock();
      cf::CondBranchOp::create(b_, loc_, noMemory, fail, mlir::ValueRange{i32(TGC_ERR_NO_MEMORY)}, run,
                               mlir::ValueRange{});
      b_.setInsertionPointToEnd(run);
    }

    // Buffer bases, copy-in, the calls, copy-out.
    const SchedulePlan &plan = model_.plan;
    std::vector<mlir::Value> base(plan.buffers.size());
    for (size_t bi = 0; bi < plan.buffers.size(); ++bi)
      base[bi] = mem_.offset[bi] < 0 ? data[mem_.owner[bi]] : byteAt(ws, mem_.offset[bi]);
    auto copies = [&](bool in) {
      for (size_t i = 0; i < model_.tensors.size(); ++i) {
        const ModelTensor &t = model_.tensors[i];
        if (t.bytes == 0 || mem_.owner[t.buffer] == int(i)) continue;
        bool reads = t.role != ModelTensor::Role::Output, writes = t.role != ModelTensor::Role::Input;
        if (in ? !reads : !writes) continue;
        mlir::Value view = byteAt(base[t.buffer], t.byteOffset);
        LLVM::MemcpyOp::create(b_, loc_, in ? view : data[i], in ? data[i] : view, i64(t.bytes), false);
      }
    };
    copies(true);
    emitCalls(base, vars);
    copies(false);
    if (needWs) {
      auto ifOp = scf::IfOp::create(b_, loc_, TypeRange{}, allocated, /*withElse=*/false);
      b_.setInsertionPointToStart(&ifOp.getThenRegion().front());
      func::CallOp::create(b_, loc_, freeFn, mlir::ValueRange{ws});
      b_.setInsertionPointAfter(ifOp);
    }
    func::ReturnOp::create(b_, loc_, i32(TGC_OK));
    b_.setInsertionPointAfter(fn);
  }

  /// NAME_run_tensors(tensors, ws) = NAME_run_vars(tensors, NULL, ws).
  void buildTensorsEntry() {
    auto fn = func::FuncOp::create(b_, loc_, model_.name + "_run_tensors",
                                   b_.getFunctionType({ptr_, ptr_}, {b_.getI32Type()}));
    Block *entry = fn.addEntryBlock();
    b_.setInsertionPointToEnd(entry);
    mlir::Value none = LLVM::ZeroOp::create(b_, loc_, ptr_);
    auto call = func::CallOp::create(b_, loc_, model_.name + "_run_vars", TypeRange{b_.getI32Type()},
                                     mlir::ValueRange{entry->getArgument(0), none, entry->getArgument(1)});
    func::ReturnOp::create(b_, loc_, call.getResult(0));
    b_.setInsertionPointAfter(fn);
  }

  /// `values` stored into a stack array of `t` elements (NULL when empty).
  mlir::Value packArray(mlir::ValueRange values, Type t) {
    if (values.empty()) return LLVM::ZeroOp::create(b_, loc_, ptr_);
    mlir::Value array = LLVM::AllocaOp::create(b_, loc_, ptr_, t, i64(int64_t(values.size())));
    for (size_t i = 0; i < values.size(); ++i) {
      mlir::Value slot = LLVM::GEPOp::create(b_, loc_, ptr_, t, array, llvm::ArrayRef<LLVM::GEPArg>{int32_t(i)},
                                             LLVM::GEPNoWrapFlags::inbounds);
      LLVM::StoreOp::create(b_, loc_, values[i], slot);
    }
    return array;
  }

  /// NAME_run(tensors..., variables..., ws).
  void buildPositionalEntry() {
    size_t n = exposed_.size(), nv = model_.vars.size();
    std::vector<Type> params(n, ptr_);
    params.insert(params.end(), nv, b_.getI64Type());
    params.push_back(ptr_);
    auto fn = func::FuncOp::create(b_, loc_, model_.name + "_run", b_.getFunctionType(params, {b_.getI32Type()}));
    Block *entry = fn.addEntryBlock();
    b_.setInsertionPointToEnd(entry);
    mlir::ValueRange args = entry->getArguments();
    mlir::Value tensors = packArray(args.take_front(n), ptr_);
    mlir::Value vars = packArray(args.drop_front(n).take_front(nv), b_.getI64Type());
    auto call = func::CallOp::create(b_, loc_, model_.name + "_run_vars", TypeRange{b_.getI32Type()},
                                     mlir::ValueRange{tensors, vars, args.back()});
    func::ReturnOp::create(b_, loc_, call.getResult(0));
    b_.setInsertionPointAfter(fn);
  }

  void buildSetObserver() {
    auto fn = func::FuncOp::create(b_, loc_, model_.name + "_set_observer", b_.getFunctionType({ptr_, ptr_}, {}));
    Block *entry = fn.addEntryBlock();
    b_.setInsertionPointToEnd(entry);
    LLVM::StoreOp::create(b_, loc_, entry->getArgument(0), pointerSlot(observerSymbol(model_), 0));
    LLVM::StoreOp::create(b_, loc_, entry->getArgument(1), pointerSlot(observerSymbol(model_), 1));
    func::ReturnOp::create(b_, loc_);
    b_.setInsertionPointAfter(fn);
  }

  ModuleOp module_;
  const Model &model_;
  const MemoryPlan &mem_;
  const ModelWeights &weights_;
  std::vector<size_t> exposed_;
  OpBuilder b_;
  mlir::Location loc_;
  Type ptr_;
};

/// The bytes of the embedded weights, 64-byte aligned, and the zeroed tables
/// of external weight pointers and of the observer, all local to the object.
Status addGlobals(llvm::Module &m, const Model &model, const ModelWeights &weights) {
  for (const auto &[i, bytes] : weights.embedded) {
    llvm::GlobalVariable *g = m.getGlobalVariable(weightSymbol(model, i));
    if (!g) return modelError(model, "internal: the weight of " + model.tensors[i].name + " was not declared");
    g->setInitializer(llvm::ConstantDataArray::getRaw(bytes, bytes.size(), llvm::Type::getInt8Ty(m.getContext())));
    g->setLinkage(llvm::GlobalValue::InternalLinkage);
    g->setAlignment(llvm::Align(MemoryPlan::kAlignment));
  }
  if (!model.vars.empty()) {
    llvm::GlobalVariable *g = m.getGlobalVariable(varDefaultsSymbol(model));
    if (!g) return modelError(model, "internal: the variables' defaults were not declared");
    std::vector<uint64_t> defaults;
    for (const ModelVar &v : model.vars) defaults.push_back(uint64_t(v.bound.value_or(0)));
    g->setInitializer(llvm::ConstantDataArray::get(m.getContext(), defaults));
    g->setLinkage(llvm::GlobalValue::InternalLinkage);
    g->setAlignment(llvm::Align(8));
  }
  std::vector<std::string> tables = {observerSymbol(model)};
  if (!weights.external.empty()) tables.push_back(weightPtrsSymbol(model));
  for (const std::string &name : tables) {
    llvm::GlobalVariable *g = m.getGlobalVariable(name);
    if (!g) return modelError(model, "internal: " + name + " was not declared");
    g->setInitializer(llvm::Constant::getNullValue(g->getValueType()));
    g->setLinkage(llvm::GlobalValue::InternalLinkage);
    g->setAlignment(llvm::Align(8));
  }
  return Status::success();
}

/// NAME_weights_spec (the table the weights file must match) and
/// `int NAME_bind_weights(const void *blob, size_t size)`, which hands both
/// to the runtime's tgc_weights_bind.
llvm::Function *addBindWeights(llvm::Module &m, const Model &model, const ModelWeights &weights,
                               const std::function<llvm::Constant *(const std::string &, const std::string &)> &str) {
  llvm::LLVMContext &ctx = m.getContext();
  auto *ptrTy = llvm::PointerType::get(ctx, 0);
  auto *i64Ty = llvm::Type::getInt64Ty(ctx);
  auto *i32Ty = llvm::Type::getInt32Ty(ctx);
  auto *sizeTy = m.getDataLayout().getIntPtrType(ctx);
  auto *infoTy = llvm::StructType::create(ctx, {ptrTy, i64Ty, i64Ty, i32Ty, i32Ty}, "tgc_weight_info");
  std::vector<llvm::Constant *> rows;
  for (size_t j = 0; j < weights.external.size(); ++j) {
    const ModelTensor &t = model.tensors[weights.external[j]];
    rows.push_back(llvm::ConstantStruct::get(
        infoTy, {str(t.name, ".tgc." + model.name + ".w" + std::to_string(j) + ".name"),
                 llvm::ConstantInt::get(i64Ty, weights.externalOffsets[j]), llvm::ConstantInt::get(i64Ty, t.bytes),
                 llvm::ConstantInt::get(i32Ty, modelDTypeCode(t.dtype)),
                 llvm::ConstantInt::get(i32Ty, t.dtype.itemsize())}));
  }
  auto *rowsTy = llvm::ArrayType::get(infoTy, rows.size());
  auto *table = new llvm::GlobalVariable(m, rowsTy, true, llvm::GlobalValue::PrivateLinkage,
                                         llvm::ConstantArray::get(rowsTy, rows), ".tgc." + model.name + ".weights");
  auto *specTy = llvm::StructType::create(ctx, {i64Ty, ptrTy, i32Ty, i32Ty}, "tgc_weights_spec");
  auto *spec = new llvm::GlobalVariable(
      m, specTy, true, llvm::GlobalValue::InternalLinkage,
      llvm::ConstantStruct::get(specTy, {llvm::ConstantInt::get(i64Ty, weights.externalId), table,
                                         llvm::ConstantInt::get(i32Ty, int(rows.size())),
                                         llvm::ConstantInt::get(i32Ty, 0)}),
      model.name + "_weights_spec");
  spec->setAlignment(llvm::Align(8));
  llvm::FunctionCallee bindRuntime =
      m.getOrInsertFunction("tgc_weights_bind", llvm::FunctionType::get(i32Ty, {ptrTy, sizeTy, ptrTy, ptrTy}, false));
  auto *fn = llvm::Function::Create(llvm::FunctionType::get(i32Ty, {ptrTy, sizeTy}, false),
                                    llvm::GlobalValue::ExternalLinkage, model.name + "_bind_weights", m);
  llvm::IRBuilder<> ir(llvm::BasicBlock::Create(ctx, "entry", fn));
  ir.CreateRet(ir.CreateCall(bindRuntime, {fn->getArg(0), fn->getArg(1), spec, m.getGlobalVariable(weightPtrsSymbol(model), /*AllowInternal=*/true)}));
  return fn;
}

/// An exported constant array of `rows` of type `rowTy`, 8-byte aligned.
llvm::GlobalVariable *exportTable(llvm::Module &m, llvm::StructType *rowTy, const std::vector<llvm::Constant *> &rows,
                                  const std::string &name) {
  auto *ty = llvm::ArrayType::get(rowTy, rows.size());
  auto *table = new llvm::GlobalVariable(m, ty, true, llvm::GlobalValue::ExternalLinkage, llvm::ConstantArray::get(ty, rows), name);
  table->setAlignment(llvm::Align(8));
  return table;
}

/// NAME_vars[]: a tgc_var_info row per variable.
llvm::GlobalVariable *addVarTable(llvm::Module &m, const Model &model,
                                  const std::function<llvm::Constant *(const std::string &, const std::string &)> &str) {
  llvm::LLVMContext &ctx = m.getContext();
  auto *ptrTy = llvm::PointerType::get(ctx, 0);
  auto *i64Ty = llvm::Type::getInt64Ty(ctx);
  auto *i32Ty = llvm::Type::getInt32Ty(ctx);
  auto *varTy = llvm::StructType::create(ctx, {ptrTy, ptrTy, i64Ty, i64Ty, i64Ty, i32Ty, i32Ty}, "tgc_var_info");
  std::vector<llvm::Constant *> rows;
  for (size_t j = 0; j < model.vars.size(); ++j) {
    const ModelVar &v = model.vars[j];
    std::string prefix = ".tgc." + model.name + ".v" + std::to_string(j);
    rows.push_back(llvm::ConstantStruct::get(
        varTy, {str(v.name, prefix + ".name"), str(v.cType, prefix + ".ctype"), llvm::ConstantInt::get(i64Ty, v.min),
                llvm::ConstantInt::get(i64Ty, v.max), llvm::ConstantInt::get(i64Ty, v.bound.value_or(0)),
                llvm::ConstantInt::get(i32Ty, v.bound.has_value()), llvm::ConstantInt::get(i32Ty, 0)}));
  }
  return exportTable(m, varTy, rows, model.name + "_vars");
}

/// NAME_tensors[] and NAME_model (Runtime/ModelABI.h layouts).
Status addMetadata(llvm::Module &m, const Model &model, const MemoryPlan &mem, const ModelWeights &weights) {
  std::vector<size_t> exposed = exposedTensors(model, weights.placed());
  llvm::LLVMContext &ctx = m.getContext();
  auto *ptrTy = llvm::PointerType::get(ctx, 0);
  auto *i64Ty = llvm::Type::getInt64Ty(ctx);
  auto *i32Ty = llvm::Type::getInt32Ty(ctx);
  auto privateConst = [&](llvm::Constant *init, const std::string &name) {
    auto *g = new llvm::GlobalVariable(m, init->getType(), /*isConstant=*/true, llvm::GlobalValue::PrivateLinkage, init,
                                       name);
    g->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
    return g;
  };
  auto str = [&](const std::string &s, const std::string &name) {
    return privateConst(llvm::ConstantDataArray::getString(ctx, s, /*AddNull=*/true), name);
  };
  auto *tensorTy = llvm::StructType::create(ctx, {ptrTy, ptrTy, ptrTy, i64Ty, i64Ty, i64Ty, i32Ty, i32Ty, i32Ty, i32Ty},
                                            "tgc_tensor_info");
  std::vector<llvm::Constant *> rows;
  for (size_t i = 0; i < exposed.size(); ++i) {
    const ModelTensor &t = model.tensors[exposed[i]];
    std::string prefix = ".tgc." + model.name + "." + std::to_string(i);
    llvm::Constant *shape = llvm::ConstantPointerNull::get(ptrTy);
    int64_t numel = 1;
    std::vector<llvm::Constant *> dims;
    for (int64_t d : t.shape) {
      dims.push_back(llvm::ConstantInt::get(i64Ty, d));
      numel *= d;
    }
    if (!dims.empty()) shape = privateConst(llvm::ConstantArray::get(llvm::ArrayType::get(i64Ty, dims.size()), dims), prefix + ".shape");
    int role = t.role == ModelTensor::Role::Input ? TGC_ROLE_INPUT : t.role == ModelTensor::Role::Output ? TGC_ROLE_OUTPUT : TGC_ROLE_INOUT;
    rows.push_back(llvm::ConstantStruct::get(
        tensorTy, {str(t.name, prefix + ".name"), str(std::string(t.dtype.name()), prefix + ".dtype"), shape,
                   llvm::ConstantInt::get(i64Ty, numel), llvm::ConstantInt::get(i64Ty, t.bytes),
                   llvm::ConstantInt::get(i64Ty, t.dtype.itemsize()), llvm::ConstantInt::get(i32Ty, role),
                   llvm::ConstantInt::get(i32Ty, modelDTypeCode(t.dtype)), llvm::ConstantInt::get(i32Ty, t.shape.size()),
                   llvm::ConstantInt::get(i32Ty, t.dtype.itemsize())}));
  }
  llvm::GlobalVariable *table = exportTable(m, tensorTy, rows, model.name + "_tensors");
  llvm::Function *run = m.getFunction(model.name + "_run_tensors");
  if (!run) return modelError(model, "internal: the entry function was not emitted");
  llvm::Function *setObserver = m.getFunction(model.name + "_set_observer");
  if (!setObserver) return modelError(model, "internal: the observer entry was not emitted");
  llvm::Constant *null = llvm::ConstantPointerNull::get(ptrTy), *bind = null, *spec = null;
  if (!weights.external.empty()) {
    bind = addBindWeights(m, model, weights, str);
    spec = m.getGlobalVariable(model.name + "_weights_spec", /*AllowInternal=*/true);
  }
  std::vector<llvm::Constant *> names;
  std::vector<std::string> kernelNameText = modelKernelNames(model.plan);
  for (size_t k = 0; k < kernelNameText.size(); ++k)
    names.push_back(str(kernelNameText[k], ".tgc." + model.name + ".k" + std::to_string(k)));
  auto *namesTy = llvm::ArrayType::get(ptrTy, names.size());
  auto *kernelNames = privateConst(llvm::ConstantArray::get(namesTy, names), ".tgc." + model.name + ".kernels");
  llvm::GlobalVariable *varTable = addVarTable(m, model, str);
  llvm::Function *runVars = m.getFunction(model.name + "_run_vars");
  if (!runVars) return modelError(model, "internal: the variables' entry was not emitted");
  auto randomIndex = [&](ModelTensor::Random kind) {
    return llvm::ConstantInt::get(i32Ty, exposedRandomTensor(model, exposed, kind));
  };
  auto *modelTy = llvm::StructType::create(
      ctx, {ptrTy, ptrTy, ptrTy, i64Ty, i64Ty, i32Ty, i32Ty, ptrTy, ptrTy, ptrTy, ptrTy, i32Ty, i32Ty, ptrTy, ptrTy, i32Ty, i32Ty,
            i32Ty, i32Ty},
      "tgc_model_info");
  auto *desc = new llvm::GlobalVariable(
      m, modelTy, true, llvm::GlobalValue::ExternalLinkage,
      llvm::ConstantStruct::get(modelTy, {str(model.name, ".tgc." + model.name + ".name"), table, run,
                                          llvm::ConstantInt::get(i64Ty, mem.workspaceBytes),
                                          llvm::ConstantInt::get(i64Ty, MemoryPlan::kAlignment),
                                          llvm::ConstantInt::get(i32Ty, TGC_MODEL_ABI_VERSION),
                                          llvm::ConstantInt::get(i32Ty, int(exposed.size())), bind, spec, setObserver,
                                          kernelNames, llvm::ConstantInt::get(i32Ty, int(names.size())),
                                          llvm::ConstantInt::get(i32Ty, int(model.plan.calls.size())), runVars, varTable,
                                          llvm::ConstantInt::get(i32Ty, int(model.vars.size())),
                                          llvm::ConstantInt::get(i32Ty, 0),
                                          randomIndex(ModelTensor::Random::Key),
                                          randomIndex(ModelTensor::Random::Counter)}),
      model.name + "_model");
  desc->setAlignment(llvm::Align(8));
  return Status::success();
}

// The model's entry functions and globals, added to the schedule's module.
codegen::ScheduleModuleHooks modelHooks(const Model &model, const MemoryPlan &memory, const ModelWeights &weights) {
  codegen::ScheduleModuleHooks hooks;
  hooks.exportEntries = false;
  // A model's run functions per call of the schedule, in kernel UOps (each
  // call also reports to the observer): on the 12-layer transformer's training
  // step (666 calls, ~43000 UOps), with code generation in the groups, the
  // groups' thread CPU time was main 2.2-2.4 s / worker 1.5-1.6 s with 0 and
  // 1.3-1.5 / 1.7-1.9 with 8.
  hooks.uopsPerCall = 6;
  hooks.addMLIR = [model = &model, memory = &memory, weights = &weights](ModuleOp m) {
    EntryBuilder(m, *model, *memory, *weights).build();
    return Status::success();
  };
  hooks.addLLVM = [model = &model, memory = &memory, weights = &weights](llvm::Module &m) {
    if (Status s = addGlobals(m, *model, *weights); !s) return s;
    return addMetadata(m, *model, *memory, *weights);
  };
  return hooks;
}

// The objects joined by a relocatable link; with a cache, the joined object
// of the same parts is reused (the link is a process of its own, tens of ms).
Result<std::string> joinCached(const std::vector<std::string> &objects, const std::string &key,
                               const ModelCodegenOptions &opts) {
  std::string joinedKey = key.empty() ? "" : codegen::KernelCache::digest("joined " + key);
  if (opts.cache && !joinedKey.empty())
    if (std::optional<std::string> joined = opts.cache->load(joinedKey)) return std::move(*joined);
  auto joined = codegen::joinObjects(objects, opts.relocatableLinker);
  if (joined && opts.cache && !joinedKey.empty()) opts.cache->store(joinedKey, *joined);
  return joined;
}

} // namespace

Result<ModelArtifacts> compileModel(const Model &model, const MemoryPlan &memory, const ModelCodegenOptions &opts) {
  if (model.name.empty() || cIdentifier(model.name) != model.name)
    return modelError(model, "model name '" + model.name + "' is not a C identifier");
  if (memory.offset.size() != model.plan.buffers.size() || memory.owner.size() != model.plan.buffers.size())
    return modelError(model, "the memory plan does not match the model's buffers");
  if (model.vars.size() != model.plan.vars.size())
    return modelError(model, "the model's variables do not match its schedule's");
  const ModelWeights &weights = opts.weights;
  for (const auto &[i, bytes] : weights.embedded)
    if (i >= model.tensors.size() || model.tensors[i].role != ModelTensor::Role::Input ||
        int64_t(bytes.size()) != model.tensors[i].bytes)
      return modelError(model, "only an input tensor with all its bytes can be embedded");
  if (weights.externalOffsets.size() != weights.external.size() ||
      weights.placed().size() != weights.embedded.size() + weights.external.size())
    return modelError(model, "external weights need one offset each and cannot also be embedded");
  for (size_t i : weights.external)
    if (i >= model.tensors.size() || model.tensors[i].role != ModelTensor::Role::Input)
      return modelError(model, "only an input tensor can be an external weight");
  for (const ModelTensor &t : model.tensors)
    if (!modelDTypeCode(t.dtype))
      return modelError(model, "tensor " + t.name + " has dtype " + std::string(t.dtype ? t.dtype.name() : "?") +
                                   ", which a compiled model cannot expose");
  auto tm = codegen::createTargetMachine(opts.target);
  if (!tm) return tm.error();
  // A model's name is a C identifier: "name." cannot clash with C code or another model.
  std::string prefix = opts.emitObject && !opts.keepLLVMIR && !opts.emitAssembly && !opts.relocatableLinker.empty()
                           ? model.name + "."
                           : "";
  auto optimized = codegen::optimizeKernels(model.plan, opts.kernel, codegen::targetTraits(**tm));
  // With a cache the kernels are named by content, and the entries call them so.
  std::optional<Model> named;
  if (opts.cache && !prefix.empty() && !opts.keepMLIR) {
    named = model;
    codegen::nameKernelsByContent(named->plan, optimized);
  }
  const Model &lowering = named ? *named : model;
  codegen::ScheduleModuleHooks hooks = modelHooks(lowering, memory, weights);
  hooks.objectSymbolPrefix = prefix;
  hooks.cache = named ? opts.cache : nullptr;
  auto lowered = codegen::lowerSchedule(lowering.plan, optimized, hooks, opts.kernel, opts.target.optLevel, opts.keepMLIR, **tm);
  if (!lowered) return lowered.error();
  ModelArtifacts out;
  out.mlir = std::move(lowered->mlirText);
  if (!lowered->objects.empty()) {
    auto joined = joinCached(lowered->objects, lowered->cacheKey, opts);
    if (joined) {
      out.object = std::move(*joined);
      return out;
    }
    // The join is only a speed-up (no temporary files, a linker that cannot
    // run): the one module on one thread is the same code.
    ModelCodegenOptions serial = opts;
    serial.relocatableLinker.clear();
    return compileModel(model, memory, serial);
  }
  if (opts.keepLLVMIR) out.llvmIR = codegen::printLLVMIR(*lowered->module);
  if (opts.emitAssembly) {
    // Code generation may change the module: the assembly comes from a copy.
    std::unique_ptr<llvm::Module> copy = llvm::CloneModule(*lowered->module);
    auto text = codegen::emitAssembly(*copy, **tm);
    if (!text) return text.error();
    out.assembly = std::move(*text);
  }
  if (opts.emitObject) {
    auto obj = codegen::emitObject(*lowered->module, **tm);
    if (!obj) return obj.error();
    out.object = std::move(*obj);
  }
  return out;
}

} // namespace tgc
