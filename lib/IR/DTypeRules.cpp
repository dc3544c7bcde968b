//===- DTypeRules.cpp - tinygrad's dtype_from_uop and _rebuild_dtype -------===//
#include "IR/DTypeRules.h"

namespace tgc {

DType promoDType(std::span<const UOp *const> src) {
  bool same = true;
  for (const UOp *s : src) same &= s->dtype() == src[0]->dtype();
  if (same) return src[0]->dtype();
  DTypeJoin join;
  for (const UOp *s : src) join.add(s->dtype());
  return join.result();
}

// Srcs without a common dtype (void with a value) have no derived dtype.
static std::optional<DType> nonNull(DType d) { return d ? std::optional<DType>(d) : std::nullopt; }

static bool isInvalidConst(const UOp *u) { return u->is(Op::CONST) && u->arg().kind() == Value::Kind::Invalid; }

std::optional<DType> dtypeFromUOp(Op op, std::span<const UOp *const> src, const Value &arg) {
  using enum Op;
  switch (op) {
  case STORE: case LINEAR: case SINK: case PROGRAM: case SOURCE: case END: case BARRIER: case GROUP: case IF:
  case ENDIF: case TUPLE: case FUNCTION: case CUSTOM_FUNCTION: case REWRITE_ERROR:
    return dtypes::Void;
  case CALL:
    if (!src.empty() && src[0]->dtype().isVoid()) return dtypes::Void;
    return std::nullopt;
  case CUSTOM: case CUSTOMI: case PYLITERAL: case INS: case NOOP:
    return std::nullopt;
  case INDEX: case LOAD: case UNSHARD: case REDUCE: case AFTER: case RANGE: case CONTIGUOUS: case CONTIGUOUS_BACKWARD:
  case COPY: case STAGE: case DETACH: case MSTACK: case MSELECT: case ALLREDUCE: case SPECIAL:
    if (src.empty()) return std::nullopt;
    return src[0]->dtype();
  case CMPLT: case CMPNE: case CMPEQ:
    return dtypes::Bool;
  case SIN: case LOG2: case EXP2: case SQRT: case RECIPROCAL:
    if (src.empty()) return std::nullopt;
    // an Invalid operand stays the (bool) Invalid: it is resolved later, not computed with
    if (isInvalidConst(src[0])) return dtypes::Bool;
    return leastUpperFloat(src[0]->dtype());
  case WHERE:
    if (src.size() != 3 || !src[0]->dtype().isBool()) return std::nullopt;
    return nonNull(promoDType(src.subspan(1)));
  case STACK:
    if (src.empty()) return dtypes::Void;
    return nonNull(promoDType(src));
  case WMMA:
    if (src.size() < 3) return std::nullopt;
    return src[2]->dtype();
  case GETTUPLE: {
    if (src.empty() || !arg.isInt()) return std::nullopt;
    const UOp *tup = src[0]->is(FUNCTION) && src[0]->numSrc() ? src[0]->src(0) : src[0];
    if (arg.getInt() < 0 || size_t(arg.getInt()) >= tup->numSrc()) return std::nullopt;
    return tup->src(size_t(arg.getInt()))->dtype();
  }
  case GETADDR:
    return dtypes::UInt64;
  case SHL: case SHR:
    for (const UOp *s : src)
      if (!s->dtype().isInt() && !isInvalidConst(s)) return std::nullopt;
    if (src.empty()) return std::nullopt;
    return src[0]->dtype();
  case BUFFER: case PARAM:
    if (const Value *dt = arg.field("dtype"); dt && dt->kind() == Value::Kind::DType) return dt->getDType();
    return std::nullopt;
  case BINARY:
    return dtypes::UInt8;
  case CAST: case BITCAST:
    if (arg.kind() == Value::Kind::DType) return arg.getDType();
    return std::nullopt;
  case CONST:
    switch (arg.kind()) {
    case Value::Kind::Invalid: case Value::Kind::Bool: return dtypes::Bool;
    case Value::Kind::Int: case Value::Kind::UInt: case Value::Kind::BigInt: return dtypes::WeakInt;
    case Value::Kind::Float: return dtypes::WeakFloat;
    default: return std::nullopt;
    }
  default:
    break;
  }
  if (src.empty()) return std::nullopt;
  if (group::Unary.contains(op)) return src[0]->dtype();
  if (group::Broadcastable.contains(op)) return nonNull(promoDType(src));
  if (group::Movement.contains(op)) return src[0]->dtype();
  return std::nullopt;
}

DType rebuildDType(const UOp *n, std::span<const UOp *const> newSrc) {
  bool same = newSrc.size() == n->numSrc();
  for (size_t i = 0; same && i < newSrc.size(); ++i) same = newSrc[i]->dtype() == n->src(i)->dtype();
  if (same) return n->dtype();
  return dtypeFromUOp(n->op(), newSrc, n->arg()).value_or(n->dtype());
}

} // namespace tgc
