//===- DataInvalid.cpp - Invalid in a kernel's values, resolved ----------===//
//
// See DataInvalid.h.
//
//===----------------------------------------------------------------------===//
#include "Codegen/Opt/DataInvalid.h"
#include "Codegen/Opt/GateVersioning.h"

#include "IR/GraphRewrite.h"
#include "IR/Symbolic.h"

#include <limits>
#include <unordered_map>

namespace tgc::codegen {

namespace {

// WHERE(cond, x, Invalid)
bool isGate(const UOp *u) { return u->is(Op::WHERE) && u->numSrc() == 3 && isInvalidConst(u->src(2)); }

const UOp *literal(Context &ctx, DType dt, double f, int64_t i, bool b) {
  tgc::Value v = dt.isFloat() ? tgc::Value::floating(f) : dt.isBool() ? tgc::Value::boolean(b) : tgc::Value::integer(i);
  return ctx.get(Op::CONST, dt, {}, v);
}

// tinygrad's identity_element(op, dtype) for a REDUCE, as a CONST of its dtype.
const UOp *identityOf(const UOp *reduce) {
  Context &ctx = reduce->context();
  DType dt = reduce->dtype();
  const tgc::Value &arg = reduce->arg();
  std::string op = arg.isTuple() && arg.size() > 0 && arg[0].isEnum("Ops") ? arg[0].str() : "";
  if (op == "ADD") return literal(ctx, dt, 0.0, 0, false);
  if (op == "MUL") return literal(ctx, dt, 1.0, 1, true);
  if (op == "MAX")
    return literal(ctx, dt, -std::numeric_limits<double>::infinity(), dt.isUnsigned() ? 0 : dt.minInt(), false);
  return nullptr;
}

// A value-level gate WHERE(cond, x, Invalid) as tinygrad's pm_remove_invalid
// leaves it: WHERE(cond, x, 0).
const UOp *asValue(const UOp *u) {
  if (!isGate(u)) return u;
  return u->withSrc({u->src(0), u->src(1), literal(u->context(), u->dtype(), 0.0, 0, false)});
}

} // namespace

bool hasDataInvalid(const UOp *sink) {
  for (const UOp *n : toposort(sink))
    for (size_t p = 0; p < n->numSrc(); ++p) {
      const UOp *s = n->src(p);
      if (isInvalidConst(s) && !(n->is(Op::WHERE) && p == 2)) return true;
      if (isGate(s) && !(n->is(Op::INDEX) && p == 1)) return true;
    }
  return false;
}

const UOp *resolveDataInvalid(const UOp *sink) {
  if (!hasDataInvalid(sink)) return sink;
  // tinygrad's symbolic (pm_data_invalid) first: every op over a gated value
  // moves inside the gate, so that the gates reach the REDUCEs and STOREs.
  auto moved = graphRewrite(sink, pmDataInvalid());
  if (!moved) return sink; // the lowering reports what is left
  Context &ctx = sink->context();
  std::unordered_map<const UOp *, const UOp *> map;
  for (const UOp *n : toposort(moved.value())) {
    std::vector<const UOp *> src;
    src.reserve(n->numSrc());
    for (const UOp *s : n->src()) src.push_back(map.at(s));
    const UOp *out = nullptr;
    if (n->is(Op::STORE) && src.size() == 2 && (isGate(src[1]) || isInvalidConst(src[1]))) {
      // A poisoned value is not stored: the store is gated by its condition.
      const UOp *target = src[0], *value = src[1];
      if (isInvalidConst(value)) {
        out = ctx.get(Op::NOOP, dtypes::Void);
      } else if (target->is(Op::INDEX) && target->numSrc() == 2) {
        const UOp *idx = target->src(1), *cond = value->src(0);
        const UOp *gated = isGate(idx) ? ctx.get(Op::WHERE, idx->dtype(), {ctx.get(Op::AND, dtypes::Bool, {idx->src(0), cond}), idx->src(1), idx->src(2)})
                                       : ctx.get(Op::WHERE, idx->dtype(), {cond, idx, ctx.get(Op::CONST, dtypes::Bool, {}, tgc::Value::invalid())});
        out = n->withSrc({target->withSrc({target->src(0), gated}), value->src(1)});
      } else if (target->is(Op::PARAM)) { // unindexed: element 0
        const UOp *zero = ctx.get(Op::CONST, dtypes::WeakInt, {}, tgc::Value::integer(0));
        const UOp *gated = ctx.get(Op::WHERE, dtypes::WeakInt, {value->src(0), zero, value->src(2)});
        out = n->withSrc({ctx.get(Op::INDEX, target->dtype(), {target, gated}), value->src(1)});
      }
    }
    if (!out) {
      for (size_t p = 0; p < src.size(); ++p) {
        if (n->is(Op::INDEX) && p == 1) continue; // an index gate stays one
        if (n->is(Op::REDUCE) && p == 0 && (isGate(src[0]) || isInvalidConst(src[0]))) {
          // A poisoned element leaves the accumulator as it was: acc OP identity.
          if (const UOp *id = identityOf(n))
            src[0] = isInvalidConst(src[0]) ? id : src[0]->withSrc({src[0]->src(0), src[0]->src(1), id});
          continue;
        }
        src[p] = asValue(src[p]);
      }
      out = n->withSrc(src);
    }
    map[n] = out;
  }
  return map.at(moved.value());
}

} // namespace tgc::codegen
