//===- ReduceToMLIR.cpp - REDUCE -> scf.for loops carrying accumulators ----===//
//
// The reduction part of the kernel lowering (KernelLowering.h): a REDUCE is a
// loop nest over its ranges with the accumulator(s) as iter_args, built in
// front of the open loops it does not depend on; REDUCEs over the same ranges
// share one nest (register tiles), and a reduction with gated loads is also
// emitted without the gates under a condition that they hold (GateVersioning.h).
//
//===----------------------------------------------------------------------===//
#include "Codegen/Opt/GateVersioning.h"
#include "Codegen/Lower/KernelLowering.h"
#include "Codegen/Opt/ParallelLoop.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <algorithm>

namespace tgc::codegen::detail {

using namespace mlir;
using mlir::Location; // not tgc::Location
using mlir::Value;    // not tgc::Value

namespace {
// At most this many steps of a dot-product tile's outer reduction range are
// unrolled into its summand (reduceNest).
constexpr int64_t kMaxUnrolledOuterSteps = 8;

void setFastMath(mlir::Value v, arith::FastMathFlags flags) {
  if (auto fm = dyn_cast_or_null<arith::ArithFastMathInterface>(v.getDefiningOp()))
    v.getDefiningOp()->setAttr(fm.getFastMathAttrName(), arith::FastMathFlagsAttr::get(v.getContext(), flags));
}
} // namespace

// REDUCE(value, ranges...): nested scf.for carrying the accumulator. When the
// REDUCE is invariant in some open loops, its loops are built in front of the
// outermost of those (the deeper scopes are set aside meanwhile).
mlir::Value KernelLowering::reduce(const UOp *u, unsigned level) {
  const tgc::Value &arg = u->arg();
  if (!arg.isTuple() || arg.size() != 2 || !arg[0].isEnum("Ops") || !arg[1].isInt())
    return fail(u, "REDUCE arg must be (Ops op, n)");
  if (arg[1].getInt() != 0) return fail(u, "REDUCE over tensor axes (horizontal reduce) is not supported in kernels");
  std::optional<Op> rop = opFromName(arg[0].str());
  if (!rop || !group::Reduce.contains(*rop)) return fail(u, "REDUCE op must be ADD, MUL or MAX");
  if (u->numSrc() < 2) return fail(u, "REDUCE without ranges");
  DType dt = u->dtype();

  std::vector<Scope> saved(scopes_.begin() + level + 1, scopes_.end());
  scopes_.resize(level + 1);
  Operation *prevInsert = scopes_[level].insertBefore;
  if (!saved.empty()) scopes_[level].insertBefore = saved.front().loop;
  auto restore = [&]() {
    scopes_.resize(level + 1);
    scopes_[level].insertBefore = prevInsert;
    scopes_.insert(scopes_.end(), saved.begin(), saved.end());
  };

  // REDUCEs with the same ranges that are ready to be emitted here (register
  // tiles of MatmulTiling.cpp) share one loop nest: one accumulator each.
  std::vector<const UOp *> group = fusableReduces(u, level);
  std::vector<mlir::Value> inits;
  for (size_t g = 0; g < group.size(); ++g) {
    OpBuilder::InsertionGuard ig(b_);
    setInsertion(0);
    inits.push_back(check(u, num_.identity(*rop, dt)));
    if (!inits.back()) return restore(), mlir::Value();
  }
  std::vector<mlir::Value> accs = reduceVersions(u, group, *rop, inits);
  if (failed()) return restore(), mlir::Value();
  // A register tile's sums leave the loop through an arithmetic fence (an
  // identity LLVM keeps until code generation) when the kernel selects on
  // them: LLVM's SLP vectorizer, seeded at the selects and stores after the
  // loop, otherwise regroups the loop's accumulators into odd vectors (a
  // <192 x float> phi, the rest scalar: a masked 512 x 512 @ 512 x 1024 ran
  // 38.5 ms against 1.5 unmasked; fenced 2.0). The fence stops that tree, so
  // the loop keeps the grouping its own body gives it. Not for plain stores,
  // nor for a tile of dot products (its sums are vectors along the reduction,
  // reduced after the loop): there it only adds shuffles (matmul_256 ~8%,
  // the perf transformer block's masked q @ k.T ~3% slower).
  if (group.size() > 1 && !spec_.dotTile && selectsOnSums())
    for (mlir::Value &a : accs) {
      if (!isa<FloatType>(a.getType())) continue;
      OpBuilder::InsertionGuard ig(b_);
      b_.setInsertionPointAfterValue(a);
      SmallVector<mlir::Value, 1> args{a};
      a = LLVM::CallIntrinsicOp::create(b_, loc_, TypeRange{a.getType()}, b_.getStringAttr("llvm.arithmetic.fence"),
                                        mlir::ValueRange(args), LLVM::FastmathFlagsAttr())
              .getResult(0);
    }
  restore();
  for (size_t g = 1; g < group.size(); ++g) memo_[group[g]] = Memo{accs[g], level, scopes_[level].id};
  return accs[0];
}

// Whether a value the kernel stores selects on or compares a REDUCE's result
// (a mask over a tile's sums: WHERE(i < j, -inf, dot)).
bool KernelLowering::selectsOnSums() {
  if (selectsOnSums_) return *selectsOnSums_;
  ToposortOptions o;
  o.gate = [](const UOp *x) { return !x->is(Op::REDUCE); }; // the summands are the tile's own
  auto selects = [&](const UOp *st) {
    if (!st->is(Op::STORE) || st->numSrc() < 2) return false;
    std::vector<const UOp *> value = toposort(st->src(1), o);
    auto has = [&](auto pred) { return std::any_of(value.begin(), value.end(), pred); };
    return has([](const UOp *x) { return x->is(Op::WHERE) || x->isIn(group::Comparison); }) &&
           has([](const UOp *x) { return x->is(Op::REDUCE); });
  };
  std::vector<const UOp *> nodes = toposort(sink_);
  selectsOnSums_ = std::any_of(nodes.begin(), nodes.end(), selects);
  return *selectsOnSums_;
}

// The gate-free versions of a reduction (GateVersioning.h), each under
// scf.if on its condition, the gated nest last: the interior of a padded
// window loads without gates, so its tile vectorizes.
std::vector<mlir::Value> KernelLowering::reduceVersions(const UOp *u, const std::vector<const UOp *> &group, Op rop,
                                                        const std::vector<mlir::Value> &inits) {
  GateVersions gv;
  if (spec_.opts.versionGates && assumedTrue_.empty() && unguarded_.empty()) {
    std::vector<const UOp *> values;
    for (const UOp *g : group) values.push_back(g->src(0));
    bool pure = std::none_of(values.begin(), values.end(), [](const UOp *v) {
      for (const UOp *n : toposort(v))
        if (n->is(Op::REDUCE)) return true;
      return false;
    });
    if (pure) gv = gateVersions(values, std::vector<const UOp *>(u->src().begin() + 1, u->src().end()));
  }
  struct Version {
    const UOp *cond;
    std::vector<const UOp *> assumed, unguarded;
  };
  std::vector<Version> versions;
  if (gv.allValid) versions.push_back({gv.allValid, gv.atoms, {}});
  if (gv.inBounds) versions.push_back({gv.inBounds, {}, gv.loads});
  std::vector<mlir::Value> results;
  std::vector<scf::IfOp> ifs;
  for (const Version &v : versions) {
    mlir::Value cond = operand(v.cond, dtypes::Bool);
    if (!cond) break;
    std::vector<Type> types;
    for (mlir::Value i : inits) types.push_back(i.getType());
    setInsertion(scopes_.size() - 1);
    auto ifOp = scf::IfOp::create(b_, loc_, TypeRange(types), cond, /*withElseRegion=*/true);
    // The branches are scopes without a range: values that do not depend on
    // the reduction's ranges are placed in front of the scf.if and shared.
    scopes_.push_back(Scope{nullptr, ifOp, ifOp.thenBlock(), {}, nextScopeId_++, nullptr});
    assumedTrue_.insert(v.assumed.begin(), v.assumed.end());
    unguarded_.insert(v.unguarded.begin(), v.unguarded.end());
    std::vector<mlir::Value> accs = reduceNest(u, group, rop, inits);
    assumedTrue_.clear(), unguarded_.clear();
    if (failed()) return {};
    b_.setInsertionPointToEnd(ifOp.thenBlock());
    scf::YieldOp::create(b_, loc_, accs);
    scopes_.back() = Scope{nullptr, ifOp, ifOp.elseBlock(), {}, nextScopeId_++, nullptr};
    ifs.push_back(ifOp);
  }
  if (failed()) return {};
  results = reduceNest(u, group, rop, inits);
  for (auto it = ifs.rbegin(); it != ifs.rend() && !failed(); ++it) {
    b_.setInsertionPointToEnd(it->elseBlock());
    scf::YieldOp::create(b_, loc_, results);
    scopes_.pop_back();
    results.assign(it->getResults().begin(), it->getResults().end());
  }
  return results;
}

// One loop nest over the REDUCE's ranges carrying one accumulator per group
// member; returns the final accumulators.
std::vector<mlir::Value> KernelLowering::reduceNest(const UOp *u, const std::vector<const UOp *> &group, Op rop,
                                                    std::vector<mlir::Value> accs) {
  DType dt = u->dtype();
  // (along its innermost range: the loop the vectorizer takes)
  bool alongReduction = spec_.dotTile && group.size() > 1 && u->numSrc() >= 2 &&
                        std::all_of(group.begin(), group.end(), [&](const UOp *g) {
                          return unitStrideAccesses(g->src(0), u->src(u->numSrc() - 1)) == true;
                        });
  // The terms each member adds per step of the loops: its summand, or, for a
  // dot-product tile's sum over (ko, ki) (a reduction split by DivmodSplit.h),
  // its summand at each value of a short ko, summed first. Vectorized along
  // ki, a loop over ko would sum the vector's lanes once per step of ko.
  std::optional<int64_t> outerSteps = u->numSrc() == 3 ? tripCount(u->src(1)) : std::nullopt;
  bool unrollOuter = alongReduction && rop == Op::ADD && outerSteps && *outerSteps <= kMaxUnrolledOuterSteps;
  const size_t firstLoop = unrollOuter ? 2 : 1;
  std::vector<std::vector<const UOp *>> terms;
  for (const UOp *g : group) {
    std::vector<const UOp *> &summed = terms.emplace_back();
    if (!unrollOuter) {
      summed.push_back(g->src(0));
      continue;
    }
    const UOp *ko = u->src(1);
    for (int64_t o = 0; o < *outerSteps; ++o)
      summed.push_back(substitute(g->src(0), {{ko, u->context().get(Op::CONST, ko->dtype(), {}, tgc::Value::integer(o))}}));
  }
  std::vector<scf::ForOp> loops;
  for (size_t i = firstLoop; i < u->numSrc(); ++i) {
    openLoop(u->src(i), accs);
    if (failed()) break;
    auto loop = cast<scf::ForOp>(scopes_.back().loop);
    loops.push_back(loop);
    accs.assign(loop.getRegionIterArgs().begin(), loop.getRegionIterArgs().end());
  }
  for (size_t g = 0; g < group.size() && !failed(); ++g) {
    mlir::Value v;
    for (const UOp *term : terms[g]) {
      mlir::Value t = operand(term, dt);
      if (!t) break;
      setInsertion(scopes_.size() - 1);
      if (!v) {
        v = t;
      } else if ((v = check(u, num_.alu(rop, dt, dt, {v, t})))) {
        setFastMath(v, arith::FastMathFlags::contract | arith::FastMathFlags::reassoc);
      }
    }
    if (!v) break;
    setInsertion(scopes_.size() - 1);
    // Unless strict, a lone accumulation may be reassociated: LLVM then keeps
    // several (vector) partial accumulators, as a C compiler with
    // -fassociative-math would. A float MAX is tinygrad's (acc < v) ? v : acc
    // from -inf, where a NaN v never wins and acc is never NaN: that is
    // maxnum(acc, v), which may be reassociated too (only the sign of a zero
    // maximum can differ). A fused tile already has independent accumulators
    // (and vectorizing its reduction loop instead would gather across rows),
    // so it stays serial, unless every load of the tile steps along the
    // reduction (a dot-product tile, MatmulTiling.cpp): then the loop
    // vectorizer takes the reduction, one vector accumulator per member.
    bool reassociate = !spec_.opts.strictFP && dt.isFloat() && (group.size() == 1 || alongReduction);
    auto flags = arith::FastMathFlags::contract | arith::FastMathFlags::reassoc;
    if (rop == Op::MAX && reassociate) {
      // A NaN v never wins, so it may as well be -inf (the identity), which
      // maxnum(v, -inf) makes it: then neither operand of the accumulating
      // maxnum is NaN and it can say so (nnan). LLVM vectorizes a maxnum
      // reduction that may see NaNs with a NaN test and an early exit per
      // vector step; with nnan it is a plain vmaxps chain. (A select on
      // isnan(v) instead is folded into the accumulation, which then no
      // longer vectorizes.)
      v = arith::MaxNumFOp::create(b_, loc_, v, check(u, num_.identity(Op::MAX, dt)));
      accs[g] = arith::MaxNumFOp::create(b_, loc_, accs[g], v);
      flags = flags | arith::FastMathFlags::nnan;
    } else {
      accs[g] = check(u, num_.alu(rop, dt, dt, {accs[g], v}));
    }
    if (accs[g] && reassociate) setFastMath(accs[g], flags);
  }
  if (failed()) return {};
  for (auto it = loops.rbegin(); it != loops.rend(); ++it) {
    setInsertion(scopes_.size() - 1);
    scf::YieldOp::create(b_, loc_, accs);
    closeLoop();
    accs.assign(it->getResults().begin(), it->getResults().end());
  }
  return accs;
}

bool KernelLowering::gateAssumed(const UOp *gate) const {
  if (assumedTrue_.empty()) return false;
  if (assumedTrue_.count(gate)) return true;
  return gate->is(Op::AND) && gate->numSrc() == 2 && gateAssumed(gate->src(0)) && gateAssumed(gate->src(1));
}

// `u` first, then the other REDUCEs over exactly u's ranges with u's op and
// dtype that are not emitted yet, whose values contain no REDUCE and depend
// only on loops open up to `level`.
std::vector<const UOp *> KernelLowering::fusableReduces(const UOp *u, unsigned level) {
  std::vector<const UOp *> group{u};
  auto pure = [&](const UOp *r) {
    for (const UOp *n : toposort(r->src(0)))
      if (n->is(Op::REDUCE)) return false;
    return true;
  };
  if (reduceSiblings_.empty())
    for (const UOp *n : toposort(sink_))
      if (n->is(Op::REDUCE)) reduceSiblings_[std::vector<const UOp *>(n->src().begin() + 1, n->src().end())].push_back(n);
  auto it = reduceSiblings_.find(std::vector<const UOp *>(u->src().begin() + 1, u->src().end()));
  if (it == reduceSiblings_.end() || it->second.size() < 2 || !pure(u)) return group;
  for (const UOp *r : it->second) {
    if (r == u || r->arg() != u->arg() || r->dtype() != u->dtype() || !pure(r)) continue;
    if (auto m = memo_.find(r); m != memo_.end() && memoValid(m->second)) continue;
    bool open = std::all_of(deps(r).begin(), deps(r).end(), [&](const UOp *d) {
      for (unsigned l = 1; l <= level; ++l)
        if (scopes_[l].range == d) return true;
      return false;
    });
    if (open) group.push_back(r);
  }
  return group;
}

} // namespace tgc::codegen::detail
