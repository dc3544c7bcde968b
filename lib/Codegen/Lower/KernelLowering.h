//===- KernelLowering.h - the kernel lowering's state (internal) -*- C++ -*-===//
//
// The class behind lowerKernelToMLIR (KernelToMLIR.h), shared by the files
// that implement it: KernelToMLIR.cpp (effects, placement, values, loads and
// stores) and ReduceToMLIR.cpp (REDUCE: accumulators, gate-free versions,
// fused register tiles). Not part of the library's interface.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Codegen/Lower/KernelToMLIR.h"
#include "Codegen/Lower/Numerics.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace tgc::codegen::detail {

class KernelLowering {
public:
  KernelLowering(mlir::ModuleOp module, const UOp *sink, const KernelSpec &spec)
      : module_(module), sink_(sink), spec_(spec), b_(module.getContext()), loc_(b_.getUnknownLoc()),
        num_(b_, loc_) {
    num_.polyTranscendentals = spec.opts.polyTranscendentals;
    num_.ldexpScale = spec.opts.vectorLdexp;
  }

  Status run();

private:
  void buildEntry(mlir::func::FuncOp target, mlir::Type ptr);
  std::vector<mlir::Value> loadSlots(mlir::Value array, mlir::Type varType);
  /// Buffers and variables: the kernel function's arguments.
  unsigned numParams() const { return spec_.numArgs + unsigned(spec_.vars.size()); }
  void buildThreadedKernel(mlir::func::FuncOp body, mlir::Type ptr);

  struct Scope {
    const UOp *range = nullptr;         // the RANGE this loop iterates; null for the function body
    mlir::Operation *loop = nullptr;          // scf.for
    mlir::Block *body = nullptr;
    mlir::Value iv;
    uint64_t id = 0;                    // unique per opened scope: memo entries name it
    mlir::Operation *insertBefore = nullptr;  // set while a REDUCE is emitted below deeper open loops
  };
  struct Memo {
    mlir::Value v;
    unsigned level;
    uint64_t scopeId;
  };

  // Effects.
  void effect(const UOp *u);
  void effectUnguarded(const UOp *u);
  void store(const UOp *u);
  void openLoop(const UOp *range, mlir::ValueRange iterArgs = {}, int64_t step = 1);
  /// A copy nest as transposed blocks of vector registers (TransposeToMLIR.cpp).
  void transposedCopy(const TransposedCopy &t);
  void closeLoop();

  // Values.
  mlir::Value emit(const UOp *u);
  mlir::Value emitUncached(const UOp *u, unsigned level);
  mlir::Value operand(const UOp *src, DType want, bool convertStrong = false);
  mlir::Value constAt(const UOp *c, DType dt);
  mlir::Value i64(int64_t v);
  mlir::Value indexValue(const UOp *idx);
  mlir::Value reduce(const UOp *u, unsigned level);
  std::vector<mlir::Value> reduceVersions(const UOp *u, const std::vector<const UOp *> &group, Op rop,
                                          const std::vector<mlir::Value> &inits);
  std::vector<mlir::Value> reduceNest(const UOp *u, const std::vector<const UOp *> &group, Op rop,
                                      std::vector<mlir::Value> accs);
  bool gateAssumed(const UOp *gate) const;
  std::vector<const UOp *> fusableReduces(const UOp *u, unsigned level);
  bool selectsOnSums();
  mlir::Value load(const UOp *u, unsigned level);
  mlir::Value param(const UOp *buf);
  mlir::Value variable(const UOp *var);
  unsigned variableIndex(const UOp *var) const; ///< its position in spec_.vars (size() if absent)
  mlir::Value address(mlir::Value base, mlir::Value idx, DType dt);

  // Placement.
  const std::vector<const UOp *> &deps(const UOp *u);
  unsigned levelOf(const UOp *u);
  void setInsertion(unsigned level);
  bool memoValid(const Memo &m) const {
    return m.level < scopes_.size() && scopes_[m.level].id == m.scopeId;
  }

  mlir::Value fail(const UOp *u, std::string msg) {
    if (!error_) error_ = Diagnostic::at(u, std::move(msg));
    return {};
  }
  bool failed() const { return error_.has_value(); }
  mlir::Value check(const UOp *u, mlir::Value v) {
    if (!v && !failed()) return fail(u, num_.error.empty() ? "lowering failed" : num_.error);
    return v;
  }

  mlir::ModuleOp module_;
  const UOp *sink_;
  const KernelSpec &spec_;
  std::optional<bool> selectsOnSums_; ///< selectsOnSums(), once asked
  mlir::OpBuilder b_;
  mlir::Location loc_;
  Numerics num_;
  mlir::func::FuncOp fn_;
  const UOp *parallel_ = nullptr; // the RANGE run over [begin, end) arguments of fn_
  std::vector<Scope> scopes_;
  uint64_t nextScopeId_ = 1;
  std::unordered_map<const UOp *, Memo> memo_;
  std::map<std::pair<const UOp *, const DTypeInfo *>, mlir::Value> consts_;
  std::map<int64_t, mlir::Value> i64s_;
  std::unordered_map<const UOp *, std::vector<const UOp *>> deps_;
  std::map<std::vector<const UOp *>, std::vector<const UOp *>> reduceSiblings_; // REDUCEs by their ranges
  // While a gate-free version of a reduction is emitted (GateVersioning.h):
  // the gate atoms known true, and the gated loads known in bounds.
  std::unordered_set<const UOp *> assumedTrue_, unguarded_;
  mlir::Value true_;
  std::unordered_map<const UOp *, mlir::Value> locals_; // LOCAL PARAM -> its alloca
  std::optional<Diagnostic> error_;
  static constexpr unsigned kMaxDepth = 2000;
  unsigned depth_ = 0;
};

} // namespace tgc::codegen::detail
