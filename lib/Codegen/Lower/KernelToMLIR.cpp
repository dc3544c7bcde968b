//===- KernelToMLIR.cpp - one tinygrad kernel AST -> an MLIR function ------===//
//
// Structured emission of a kernel SINK: effects (SINK/GROUP/END/STORE) are
// walked in source order and open/close scf.for loops; values are emitted on
// demand, memoized per loop scope, and placed in the innermost open loop they
// depend on. This replaces tinygrad's expander/devectorizer/linearizer: the
// loop nest is given by END/REDUCE and MLIR regions carry the ordering.
//
//===----------------------------------------------------------------------===//
#include "Codegen/Lower/KernelToMLIR.h"
#include "Codegen/Opt/GateVersioning.h"
#include "Codegen/Lower/KernelLowering.h"
#include "Codegen/Opt/MatmulTiling.h"
#include "Codegen/Opt/ParallelLoop.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"

#include <algorithm>

namespace tgc::codegen {

using namespace mlir;
using mlir::Location; // not tgc::Location
using mlir::Value;    // not tgc::Value

bool isVariable(const UOp *u) { return u->is(Op::PARAM) && u->addrspace() == AddrSpace::ALU; }

std::string variableName(const UOp *var) {
  const tgc::Value *n = var->arg().field("name");
  return n && n->kind() == tgc::Value::Kind::Str ? n->str() : "";
}

std::vector<std::string> kernelVariables(const UOp *sink) {
  std::vector<std::string> names;
  for (const UOp *u : toposort(sink))
    if (isVariable(u)) names.push_back(variableName(u));
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

FunctionType kernelFunctionType(Builder &b, unsigned numArgs, size_t numVars) {
  std::vector<Type> types(numArgs, LLVM::LLVMPointerType::get(b.getContext()));
  types.insert(types.end(), numVars, b.getI64Type());
  return b.getFunctionType(types, {});
}

void loadKernelDialects(MLIRContext &ctx) {
  ctx.loadDialect<func::FuncDialect, scf::SCFDialect, arith::ArithDialect, math::MathDialect, LLVM::LLVMDialect>();
}

namespace detail {

Status KernelLowering::run() {
  MLIRContext *ctx = module_.getContext();
  Type ptr = LLVM::LLVMPointerType::get(ctx);
  if (!sink_->is(Op::SINK)) return Diagnostic::at(sink_, "kernel body must be a SINK, got " + sink_->str());

  // The kernel: one pointer per CALL argument, then its variables; a threaded
  // kernel's body also takes the [begin, end) of its parallel loop.
  parallel_ = spec_.threadedLoop;
  // (a symbolic trip count must be one of the kernel's variables: the kernel passes it to the pool)
  if (parallel_ && !tripCount(parallel_) && !(isVariable(parallel_->src(0)) && variableIndex(parallel_->src(0)) < spec_.vars.size()))
    parallel_ = nullptr;
  b_.setInsertionPointToEnd(module_.getBody());
  FunctionType fnType = kernelFunctionType(b_, spec_.numArgs, spec_.vars.size() + (parallel_ ? 2 : 0));
  fn_ = func::FuncOp::create(b_, loc_, parallel_ ? spec_.symbol + "_body" : spec_.symbol, fnType);
  fn_.setPrivate();
  Block *entry = fn_.addEntryBlock();
  if (spec_.noalias)
    for (unsigned i = 0; i < spec_.numArgs; ++i) fn_.setArgAttr(i, LLVM::LLVMDialect::getNoAliasAttrName(), b_.getUnitAttr());
  scopes_.push_back(Scope{nullptr, nullptr, entry, {}, 0, nullptr});

  deps(sink_); // one pass over the whole kernel; later lookups hit the cache
  effect(sink_);
  if (failed()) {
    fn_.erase();
    return *error_;
  }
  b_.setInsertionPointToEnd(entry);
  func::ReturnOp::create(b_, loc_);
  func::FuncOp kernel = fn_;
  if (parallel_) {
    b_.setInsertionPointToEnd(module_.getBody());
    kernel = func::FuncOp::create(b_, loc_, spec_.symbol, kernelFunctionType(b_, spec_.numArgs, spec_.vars.size()));
    kernel.setPrivate();
    buildThreadedKernel(kernel, ptr);
  }
  buildEntry(kernel, ptr);
  return Status::success();
}

// The uniform entry point: void K_entry(void **args), variables behind pointers.
void KernelLowering::buildEntry(func::FuncOp kernel, Type ptr) {
  b_.setInsertionPointToEnd(module_.getBody());
  auto wrapper = func::FuncOp::create(b_, loc_, entrySymbol(spec_.symbol), b_.getFunctionType({ptr}, {}));
  Block *wb = wrapper.addEntryBlock();
  b_.setInsertionPointToEnd(wb);
  std::vector<mlir::Value> args = loadSlots(wb->getArgument(0), ptr);
  for (size_t j = 0; j < spec_.vars.size(); ++j)
    args[spec_.numArgs + j] = LLVM::LoadOp::create(b_, loc_, b_.getI64Type(), args[spec_.numArgs + j]);
  func::CallOp::create(b_, loc_, kernel, args);
  func::ReturnOp::create(b_, loc_);
}

// The kernel's arguments (buffers, then variables) from an array of 8-byte
// slots; `varType` is the type the variables' slots hold.
std::vector<mlir::Value> KernelLowering::loadSlots(mlir::Value array, Type varType) {
  Type ptr = LLVM::LLVMPointerType::get(b_.getContext());
  std::vector<mlir::Value> args;
  for (unsigned i = 0; i < numParams(); ++i) {
    Type t = i < spec_.numArgs ? ptr : varType;
    mlir::Value slot = LLVM::GEPOp::create(b_, loc_, ptr, t, array, llvm::ArrayRef<LLVM::GEPArg>{int32_t(i)},
                                           LLVM::GEPNoWrapFlags::inbounds);
    args.push_back(LLVM::LoadOp::create(b_, loc_, t, slot));
  }
  return args;
}

// A threaded kernel: K(p0..pN, v0..vM) packs its arguments into a stack array
// of 8-byte slots and calls tgc_parallel_for(K_task, array, n); K_task(ctx,
// begin, end) unpacks them and runs K_body over its chunk of the parallel
// loop. n is the loop's trip count: a literal or a variable.
void KernelLowering::buildThreadedKernel(func::FuncOp kernel, Type ptr) {
  MLIRContext *ctx = module_.getContext();
  Type i64t = b_.getI64Type();
  auto taskType = b_.getFunctionType({ptr, i64t, i64t}, {});
  if (!module_.lookupSymbol("tgc_parallel_for")) {
    b_.setInsertionPointToStart(module_.getBody());
    func::FuncOp::create(b_, loc_, "tgc_parallel_for", b_.getFunctionType({ptr, ptr, i64t}, {})).setPrivate();
  }
  b_.setInsertionPointToEnd(module_.getBody());
  auto task = func::FuncOp::create(b_, loc_, spec_.symbol + "_task", taskType);
  task.setPrivate();
  Block *tb = task.addEntryBlock();
  b_.setInsertionPointToEnd(tb);
  std::vector<mlir::Value> args = loadSlots(tb->getArgument(0), i64t);
  args.push_back(tb->getArgument(1));
  args.push_back(tb->getArgument(2));
  func::CallOp::create(b_, loc_, fn_, args);
  func::ReturnOp::create(b_, loc_);

  Block *kb = kernel.addEntryBlock();
  b_.setInsertionPointToEnd(kb);
  mlir::Value count = arith::ConstantOp::create(b_, loc_, b_.getI64IntegerAttr(std::max(1u, numParams())));
  mlir::Value array = LLVM::AllocaOp::create(b_, loc_, ptr, ptr, count, 8);
  for (unsigned i = 0; i < numParams(); ++i) {
    Type t = i < spec_.numArgs ? ptr : i64t;
    mlir::Value slot = LLVM::GEPOp::create(b_, loc_, ptr, t, array, llvm::ArrayRef<LLVM::GEPArg>{int32_t(i)},
                                           LLVM::GEPNoWrapFlags::inbounds);
    LLVM::StoreOp::create(b_, loc_, kb->getArgument(i), slot);
  }
  mlir::Value fnRef = func::ConstantOp::create(b_, loc_, taskType, SymbolRefAttr::get(ctx, task.getSymName()));
  mlir::Value fnPtr = UnrealizedConversionCastOp::create(b_, loc_, TypeRange(ptr), mlir::ValueRange(fnRef)).getResult(0);
  std::optional<int64_t> trips = tripCount(parallel_);
  mlir::Value n = trips ? mlir::Value(arith::ConstantOp::create(b_, loc_, b_.getI64IntegerAttr(*trips)))
                        : kb->getArgument(spec_.numArgs + variableIndex(parallel_->src(0)));
  std::vector<mlir::Value> callArgs{fnPtr, array, n};
  func::CallOp::create(b_, loc_, FlatSymbolRefAttr::get(ctx, "tgc_parallel_for"), TypeRange(), mlir::ValueRange(callArgs));
  func::ReturnOp::create(b_, loc_);
}

//===--- effects ----------------------------------------------------------===//

void KernelLowering::effect(const UOp *u) {
  if (failed()) return;
  if (depth_ >= kMaxDepth) return (void)fail(u, "kernel effects nest deeper than " + std::to_string(kMaxDepth));
  ++depth_;
  effectUnguarded(u);
  --depth_;
}

void KernelLowering::effectUnguarded(const UOp *u) {
  switch (u->op()) {
  case Op::SINK:
  case Op::GROUP:
    for (const UOp *s : u->src()) effect(s);
    return;
  case Op::END: {
    if (u->numSrc() < 2) return (void)fail(u, "END without ranges");
    for (const TransposedCopy &t : spec_.transposedCopies)
      if (t.end == u) return transposedCopy(t);
    for (size_t i = 1; i < u->numSrc(); ++i) openLoop(u->src(i));
    effect(u->src(0));
    for (size_t i = 1; i < u->numSrc() && scopes_.size() > 1; ++i) closeLoop();
    return;
  }
  case Op::STORE: return store(u);
  case Op::NOOP: return;
  default: (void)fail(u, "unsupported effect in a kernel: " + u->str());
  }
}

void KernelLowering::openLoop(const UOp *r, mlir::ValueRange iterArgs, int64_t step) {
  if (failed()) return;
  if (!r->is(Op::RANGE) || r->numSrc() < 1) return (void)fail(r, "expected a RANGE, got " + r->str());
  for (const Scope &s : scopes_)
    if (s.range == r) return (void)fail(r, "RANGE is opened twice in one loop nest");
  bool threaded = r == parallel_;
  mlir::Value bound = threaded ? fn_.getArgument(numParams() + 1) : indexValue(r->src(0));
  if (!bound) return;
  mlir::Value lower = threaded ? fn_.getArgument(numParams()) : i64(0);
  setInsertion(scopes_.size() - 1);
  auto loop = scf::ForOp::create(b_, loc_, lower, bound, i64(step), iterArgs);
  scopes_.push_back(Scope{r, loop, loop.getBody(), loop.getInductionVar(), nextScopeId_++, nullptr});
}

void KernelLowering::closeLoop() { scopes_.pop_back(); }

// STORE(INDEX(buf, idx), v), or STORE(PARAM, v) for element 0 (an unindexed
// access, rendered by tinygrad as `*(data0+0) = v`).
void KernelLowering::store(const UOp *u) {
  const UOp *target = u->numSrc() == 2 ? u->src(0) : nullptr;
  bool indexed = target && target->is(Op::INDEX) && target->numSrc() == 2;
  if (!target || !(indexed || target->is(Op::PARAM)))
    return (void)fail(u, "expected STORE(INDEX(buffer, index), value) or STORE(PARAM, value)");
  auto [gate, idxNode] = indexed ? splitGate(target->src(1)) : std::pair<const UOp *, const UOp *>{nullptr, nullptr};
  mlir::Value valid = gate ? operand(gate, dtypes::Bool) : mlir::Value();
  mlir::Value idx = idxNode ? indexValue(idxNode) : i64(0);
  mlir::Value v = operand(u->src(1), target->dtype());
  mlir::Value base = param(indexed ? target->src(0) : target);
  if (failed()) return;
  setInsertion(scopes_.size() - 1);
  if (valid) {
    auto guard = scf::IfOp::create(b_, loc_, valid, /*withElseRegion=*/false);
    b_.setInsertionPoint(guard.thenBlock()->getTerminator());
  }
  mlir::Value m = check(u, num_.toMem(v, target->dtype()));
  if (!m) return;
  LLVM::StoreOp::create(b_, loc_, m, address(base, idx, target->dtype()));
}

//===--- placement --------------------------------------------------------===//

// The RANGEs a value depends on (a REDUCE does not depend on its own ranges).
const std::vector<const UOp *> &KernelLowering::deps(const UOp *u) {
  auto it = deps_.find(u);
  if (it != deps_.end()) return it->second;
  // Iterative over the toposort so deep graphs do not recurse.
  for (const UOp *n : toposort(u)) {
    if (deps_.count(n)) continue;
    std::vector<const UOp *> d;
    for (const UOp *s : n->src()) {
      const auto &sd = deps_[s];
      d.insert(d.end(), sd.begin(), sd.end());
    }
    if (n->is(Op::RANGE)) d.push_back(n);
    if (n->is(Op::REDUCE))
      std::erase_if(d, [&](const UOp *r) { return std::find(n->src().begin() + 1, n->src().end(), r) != n->src().end(); });
    std::sort(d.begin(), d.end(), [](const UOp *a, const UOp *c) { return a->id() < c->id(); });
    d.erase(std::unique(d.begin(), d.end()), d.end());
    deps_[n] = std::move(d);
  }
  return deps_[u];
}

unsigned KernelLowering::levelOf(const UOp *u) {
  const auto &d = deps(u);
  for (unsigned i = scopes_.size() - 1; i > 0; --i)
    if (scopes_[i].range && std::binary_search(d.begin(), d.end(), scopes_[i].range,
                           [](const UOp *a, const UOp *c) { return a->id() < c->id(); }))
      return i;
  return 0;
}

void KernelLowering::setInsertion(unsigned level) {
  if (level + 1 < scopes_.size()) return b_.setInsertionPoint(scopes_[level + 1].loop);
  const Scope &s = scopes_[level];
  if (s.insertBefore) return b_.setInsertionPoint(s.insertBefore);
  if (s.body->mightHaveTerminator()) return b_.setInsertionPoint(s.body->getTerminator());
  b_.setInsertionPointToEnd(s.body);
}

//===--- values -----------------------------------------------------------===//

mlir::Value KernelLowering::i64(int64_t v) {
  auto [it, inserted] = i64s_.try_emplace(v);
  if (inserted) {
    OpBuilder::InsertionGuard g(b_);
    setInsertion(0);
    it->second = arith::ConstantOp::create(b_, loc_, b_.getI64IntegerAttr(v));
  }
  return it->second;
}

mlir::Value KernelLowering::constAt(const UOp *c, DType dt) {
  if (isInvalidConst(c)) return fail(c, "Invalid is only allowed as WHERE(valid, index, Invalid) inside an INDEX or as a gated value WHERE(cond, x, Invalid)");
  auto key = std::make_pair(c, &dt.info());
  auto it = consts_.find(key);
  if (it != consts_.end()) return it->second;
  OpBuilder::InsertionGuard g(b_);
  setInsertion(0);
  mlir::Value v = check(c, num_.constant(c->arg(), dt));
  if (v) consts_[key] = v;
  return v;
}

// `src` as a value of dtype `want`. Weak literals are materialized directly in
// `want`; other weak values are converted (tinygrad commits weak types to the
// op's dtype). A strong mismatch is an error unless convertStrong (the operand
// casts tinygrad inserts for transcendental float ops and index math).
mlir::Value KernelLowering::operand(const UOp *src, DType want, bool convertStrong) {
  if (failed()) return {};
  if (src->is(Op::CONST)) return constAt(src, want);
  mlir::Value v = emit(src);
  if (!v || src->dtype() == want) return v;
  if (!src->dtype().isWeak() && !convertStrong)
    return fail(src, "operand of dtype " + std::string(src->dtype().name()) + " where " + std::string(want.name()) + " is expected");
  OpBuilder::InsertionGuard g(b_);
  setInsertion(levelOf(src));
  return check(src, num_.cast(v, src->dtype(), want));
}

mlir::Value KernelLowering::indexValue(const UOp *idx) {
  if (!idx->dtype().isInt()) return fail(idx, "index must be an integer, got " + idx->str());
  return operand(idx, dtypes::WeakInt, /*convertStrong=*/true);
}

mlir::Value KernelLowering::param(const UOp *buf) {
  if (!buf->is(Op::PARAM)) return fail(buf, "only PARAM buffers can be indexed in a kernel, got " + buf->str());
  if (isLocalBuffer(buf)) { // scratch of this invocation: a stack array at the function's entry
    auto it = locals_.find(buf);
    if (it != locals_.end()) return it->second;
    if (buf->numSrc() != 1 || !buf->src(0)->is(Op::CONST) || !buf->src(0)->arg().isInt() || buf->src(0)->arg().getInt() < 1)
      return fail(buf, "a LOCAL PARAM needs a literal positive size");
    OpBuilder::InsertionGuard g(b_);
    b_.setInsertionPointToStart(scopes_[0].body);
    mlir::Value n = arith::ConstantOp::create(b_, loc_, b_.getI64IntegerAttr(buf->src(0)->arg().getInt()));
    mlir::Value a = LLVM::AllocaOp::create(b_, loc_, LLVM::LLVMPointerType::get(b_.getContext()),
                                           memType(b_.getContext(), buf->dtype()), n, 64);
    return locals_[buf] = a;
  }
  const tgc::Value *slot = buf->arg().field("slot");
  const tgc::Value *as = buf->arg().field("addrspace");
  if (!slot || !slot->isInt()) return fail(buf, "PARAM without an integer slot");
  if (as && as->kind() == tgc::Value::Kind::Enum && as->str() != "GLOBAL")
    return fail(buf, "only GLOBAL PARAMs are supported, got addrspace " + as->str());
  if (slot->getInt() < 0 || uint64_t(slot->getInt()) >= spec_.numArgs)
    return fail(buf, "PARAM slot " + std::to_string(slot->getInt()) + " has no CALL argument (" + std::to_string(spec_.numArgs) + " given)");
  return fn_.getArgument(unsigned(slot->getInt()));
}

unsigned KernelLowering::variableIndex(const UOp *var) const {
  auto it = std::find(spec_.vars.begin(), spec_.vars.end(), variableName(var));
  return unsigned(it - spec_.vars.begin());
}

// A variable's value: the kernel's argument (i64), in the variable's dtype.
mlir::Value KernelLowering::variable(const UOp *var) {
  unsigned j = variableIndex(var);
  if (j == spec_.vars.size()) return fail(var, "variable '" + variableName(var) + "' is not an argument of this kernel");
  mlir::Value v = fn_.getArgument(spec_.numArgs + j);
  if (var->dtype() == dtypes::WeakInt) return v;
  if (!var->dtype().isInt()) return fail(var, "a variable must be an integer, got " + var->str());
  OpBuilder::InsertionGuard g(b_);
  setInsertion(0);
  return check(var, num_.cast(v, dtypes::WeakInt, var->dtype()));
}

mlir::Value KernelLowering::address(mlir::Value base, mlir::Value idx, DType dt) {
  Type ptr = LLVM::LLVMPointerType::get(b_.getContext());
  return LLVM::GEPOp::create(b_, loc_, ptr, memType(b_.getContext(), dt), base, mlir::ValueRange{idx},
                             LLVM::GEPNoWrapFlags::inbounds);
}

mlir::Value KernelLowering::emit(const UOp *u) {
  if (failed()) return {};
  if (assumedTrue_.count(u)) {
    if (!true_) {
      OpBuilder::InsertionGuard g(b_);
      setInsertion(0);
      true_ = arith::ConstantOp::create(b_, loc_, b_.getBoolAttr(true));
    }
    return true_;
  }
  auto it = memo_.find(u);
  if (it != memo_.end() && memoValid(it->second)) return it->second.v;
  // Values are emitted depth-first; bound the depth so that a pathological
  // chain gives a diagnostic instead of exhausting the stack.
  if (depth_ >= kMaxDepth) return fail(u, "kernel expression nests deeper than " + std::to_string(kMaxDepth) + " operations");
  struct DepthGuard {
    unsigned &d;
    explicit DepthGuard(unsigned &counter) : d(counter) { ++d; }
    ~DepthGuard() { --d; }
  } guard(depth_);
  if (u->is(Op::CONST)) return constAt(u, u->dtype());
  if (u->is(Op::RANGE)) {
    for (const Scope &s : scopes_)
      if (s.range == u) return s.iv;
    return fail(u, "RANGE used outside its loop (no enclosing END or REDUCE opens it)");
  }
  if (!regType(b_.getContext(), u->dtype())) return fail(u, "unsupported dtype " + std::string(u->dtype() ? u->dtype().name() : "?"));
  unsigned level = levelOf(u);
  mlir::Value v = emitUncached(u, level);
  if (v) memo_[u] = Memo{v, level, scopes_[level].id};
  return v;
}

mlir::Value KernelLowering::emitUncached(const UOp *u, unsigned level) {
  Op op = u->op();
  if (isVariable(u)) return variable(u);
  if (op == Op::INDEX || op == Op::PARAM) return load(u, level);
  if (op == Op::REDUCE) return reduce(u, level);
  DType dt = u->dtype();
  if (op == Op::CAST || op == Op::BITCAST) {
    if (u->numSrc() != 1) return fail(u, "CAST/BITCAST takes one source");
    const UOp *s = u->src(0);
    if (op == Op::CAST && s->is(Op::CONST)) return constAt(s, dt); // dtype.const of the literal
    // tinygrad's codegen folds float -> half -> float to the float (a rule of
    // pm_simplify_add_image it runs on every device), so the rounding never happens.
    if (op == Op::CAST && dt == dtypes::Float32 && s->is(Op::CAST) && s->dtype() == dtypes::Float16 &&
        s->src(0)->dtype() == dtypes::Float32)
      return operand(s->src(0), dt);
    if (op == Op::BITCAST && s->dtype().isWeak()) return fail(u, "BITCAST of a weakly typed value");
    mlir::Value x = emit(s);
    if (!x) return {};
    setInsertion(level);
    return check(u, op == Op::CAST ? num_.cast(x, s->dtype(), dt) : num_.bitcast(x, s->dtype(), dt));
  }
  if (!u->isIn(group::ALU)) return fail(u, "unsupported op in a kernel: " + u->str());
  if (op == Op::WHERE && u->numSrc() == 3 && gateAssumed(u->src(0))) return operand(u->src(1), dt);
  size_t arity = u->isIn(group::Unary) ? 1 : u->isIn(group::Binary) ? 2 : 3;
  if (u->numSrc() != arity) return fail(u, std::string(opName(op)) + " takes " + std::to_string(arity) + " sources");

  // The dtype the operands are computed in: the node's, except for
  // comparisons (the strong operand's, or the weak join of both).
  DType opDt = dt;
  if (u->isIn(group::Comparison)) {
    DType a = u->src(0)->dtype(), c = u->src(1)->dtype();
    if (!a.isWeak()) opDt = a;
    else if (!c.isWeak()) opDt = c;
    else opDt = (a.isFloat() || c.isFloat()) ? dtypes::WeakFloat : dtypes::WeakInt;
  }
  std::vector<mlir::Value> xs;
  for (size_t i = 0; i < arity; ++i) {
    bool cond = op == Op::WHERE && i == 0;
    xs.push_back(operand(u->src(i), cond ? dtypes::Bool : opDt, u->isIn(group::FloatUnary)));
    if (!xs.back()) return {};
  }
  setInsertion(level);
  return check(u, num_.alu(op, dt, opDt, xs));
}

// INDEX used as a value: a load. A gated load yields 0 (tinygrad's alt value)
// when the gate is false and must not touch memory then (the index may be out
// of bounds, e.g. -1 for a padded border). When the PARAM has at least one
// element it loads element 0 instead (branch-free, so loops still vectorize);
// otherwise the load sits in an scf.if.
mlir::Value KernelLowering::load(const UOp *u, unsigned level) {
  bool indexed = u->is(Op::INDEX);
  if (indexed && u->numSrc() != 2) return fail(u, "INDEX takes (buffer, index)");
  auto [gate, idxNode] = indexed ? splitGate(u->src(1)) : std::pair<const UOp *, const UOp *>{nullptr, nullptr};
  const UOp *buf = indexed ? u->src(0) : u;
  if (gate && gateAssumed(gate)) gate = nullptr;
  mlir::Value valid = gate ? operand(gate, dtypes::Bool) : mlir::Value();
  mlir::Value idx = idxNode ? indexValue(idxNode) : i64(0);
  mlir::Value base = param(buf);
  if (failed()) return {};
  DType dt = u->dtype();
  Type mt = memType(b_.getContext(), dt);
  mlir::Value zero;
  if (valid) {
    OpBuilder::InsertionGuard g(b_);
    setInsertion(0);
    if (!(zero = check(u, num_.constant(tgc::Value::integer(0), dt)))) return {};
  }
  setInsertion(level);
  auto loadAt = [&](mlir::Value i) { return check(u, num_.fromMem(LLVM::LoadOp::create(b_, loc_, mt, address(base, i, dt)), dt)); };
  if (!valid) return loadAt(idx);
  if (unguarded_.count(u)) { // the index is in bounds even where the gate is false
    mlir::Value v = loadAt(idx);
    return v ? mlir::Value(arith::SelectOp::create(b_, loc_, valid, v, zero)) : v;
  }
  bool hasElement0 = buf->numSrc() == 1 && buf->src(0)->is(Op::CONST) && buf->src(0)->arg().isInt() && buf->src(0)->arg().getInt() > 0;
  if (hasElement0) {
    mlir::Value v = loadAt(arith::SelectOp::create(b_, loc_, valid, idx, i64(0)));
    return v ? mlir::Value(arith::SelectOp::create(b_, loc_, valid, v, zero)) : v;
  }
  auto guard = scf::IfOp::create(b_, loc_, TypeRange{zero.getType()}, valid, /*withElseRegion=*/true);
  b_.setInsertionPointToStart(guard.thenBlock());
  mlir::Value v = loadAt(idx);
  if (!v) return {};
  scf::YieldOp::create(b_, loc_, v);
  b_.setInsertionPointToStart(guard.elseBlock());
  scf::YieldOp::create(b_, loc_, zero);
  return guard.getResult(0);
}

} // namespace detail

Status lowerKernelToMLIR(ModuleOp module, const UOp *sink, const KernelSpec &spec) {
  return detail::KernelLowering(module, sink, spec).run();
}

} // namespace tgc::codegen
