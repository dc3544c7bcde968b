//===- UOpBuilder.cpp - tinygrad's UOp mixin arithmetic --------------------===//
#include "IR/UOpBuilder.h"

#include "IR/DTypeRules.h"
#include "IR/ExecAlu.h"

namespace tgc {

DType dtypeOfPy(const Value &v) {
  switch (v.kind()) {
  case Value::Kind::Bool: case Value::Kind::Invalid: return dtypes::Bool;
  case Value::Kind::Float: return dtypes::WeakFloat;
  default: return dtypes::WeakInt;
  }
}

int64_t UOpRef::val() const {
  const Value &a = u_->arg();
  if (a.isBool()) return a.getBool();
  if (a.kind() == Value::Kind::UInt) return int64_t(a.getUInt());
  return a.getInt();
}

UOpRef makeConst(Context &ctx, const Value &v, DType dt) {
  if (!dt || v.kind() == Value::Kind::Invalid) dt = dtypeOfPy(v);
  if (v.isTuple()) {
    std::vector<const UOp *> src;
    for (const Value &x : v.items()) src.push_back(makeConst(ctx, x, dt));
    return ctx.get(Op::STACK, src.empty() ? dtypes::Void : dt, std::move(src));
  }
  // dtype.const: when tgc cannot represent the converted value, keep the value as given
  std::optional<Value> c = dtypeConst(dt, v);
  return ctx.get(Op::CONST, dt, {}, c ? *c : v);
}

UOpRef invalidConst(Context &ctx) { return ctx.get(Op::CONST, dtypes::Bool, {}, Value::invalid()); }

UOpRef UOpRef::alu(Op op, std::vector<const UOp *> src, Value arg) const {
  src.insert(src.begin(), u_);
  DType dt = dtypeFromUOp(op, src, arg).value_or(dtypes::Void);
  return ctx().get(op, dt, std::move(src), std::move(arg));
}

UOpRef UOpRef::constLike(const Value &v, DType dt) const {
  UOpRef c = makeConst(ctx(), v, dt ? dt : dtype());
  // a const standing in for a shaped value is EXPANDed to its shape
  const Shape *shape = u_->shape();
  if (!shape || shape->empty()) return c;
  std::vector<const UOp *> dims;
  for (const Dim &d : *shape) dims.push_back(d.isStatic() ? ctx().constInt(d.value) : d.sym);
  const UOp *arg = dims.size() == 1 ? dims[0] : ctx().get(Op::STACK, dtypes::WeakInt, std::move(dims));
  return ctx().get(Op::EXPAND, c.dtype(), {c, arg});
}

UOpRef UOpRef::ufix(const Value &v) const { return makeConst(ctx(), v); }

UOpRef UOpRef::cast(DType dt) const {
  if (dtype() == dt) return *this;
  return ctx().get(Op::CAST, dt, {u_}, Value::dtype(dt));
}

UOpRef UOpRef::bitcast(DType dt) const {
  if (dtype() == dt) return *this;
  return ctx().get(Op::BITCAST, dt, {u_}, Value::dtype(dt));
}

std::pair<UOpRef, UOpRef> broadcasted(UOpRef x, UOpRef y) {
  DType out = x.dtype() == y.dtype() ? x.dtype() : leastUpperDType({x.dtype(), y.dtype()});
  if (!out) return {x, y}; // no common dtype (void): leave the operands alone
  auto promote = [&](UOpRef t) -> UOpRef {
    if (t.isInvalid()) return t; // Invalid is the weak bool const
    if (t.dtype().isWeak() && t.isConst()) return t.constLike(t->arg(), weakDType(out));
    return t.cast(out);
  };
  return {promote(x), promote(y)};
}

UOpRef UOpRef::binop(Op op, UOpRef y, bool reverse) const {
  auto [a, b] = reverse ? broadcasted(y, *this) : broadcasted(*this, y);
  return a.alu(op, {b});
}

UOpRef UOpRef::logicalNot() const { return cast(dtypes::Bool).ne(ufix(Value::boolean(true))); }
UOpRef UOpRef::ne(UOpRef y) const { return binop(Op::CMPNE, y); }
UOpRef UOpRef::eq(UOpRef y) const { return ne(y).logicalNot(); }
UOpRef UOpRef::maximum(UOpRef y) const { return binop(Op::MAX, y); }
UOpRef UOpRef::pow(UOpRef y) const { return binop(Op::POW, y); }

UOpRef UOpRef::where(UOpRef t, UOpRef f) const {
  auto [a, b] = broadcasted(t, f);
  return alu(Op::WHERE, {a, b});
}

UOpRef UOpRef::usum(const std::vector<const UOp *> &more) const {
  UOpRef acc = *this;
  for (const UOp *u : more) acc = dtype().isBool() ? acc | UOpRef(u) : acc + UOpRef(u);
  return acc;
}

UOpRef UOpRef::uprod(const std::vector<const UOp *> &more) const {
  UOpRef acc = *this;
  for (const UOp *u : more) acc = dtype().isBool() ? acc & UOpRef(u) : acc * UOpRef(u);
  return acc;
}

UOpRef operator+(UOpRef a, UOpRef b) { return a.binop(Op::ADD, b); }
UOpRef operator*(UOpRef a, UOpRef b) { return a.binop(Op::MUL, b); }
UOpRef operator-(UOpRef a) { return a.dtype().isBool() ? a.logicalNot() : a * -1; }
UOpRef operator-(UOpRef a, UOpRef b) {
  auto [x, y] = broadcasted(a, b);
  return x.alu(Op::ADD, {-y});
}

static UOpRef floorOf(UOpRef d) {
  UOpRef t = d.trunc();
  return (d < t).where(t - 1, t);
}

UOpRef operator/(UOpRef a, UOpRef b) {
  auto [x, y] = broadcasted(a, b);
  if (x.dtype().isInt() && y.dtype().isInt()) return x.alu(Op::FLOORDIV, {y});
  if (x.dtype().isInt() || x.dtype().isBool()) x = x.cast(dtypes::defaultFloat());
  return floorOf(x.alu(Op::MUL, {y.reciprocal()}));
}

UOpRef operator%(UOpRef a, UOpRef b) {
  auto [x, y] = broadcasted(a, b);
  if (x.dtype().isInt() && y.dtype().isInt()) return x.alu(Op::FLOORMOD, {y});
  return x - (x / y) * y;
}

UOpRef operator<(UOpRef a, UOpRef b) { return a.binop(Op::CMPLT, b); }
UOpRef operator>(UOpRef a, UOpRef b) { return a.binop(Op::CMPLT, b, /*reverse=*/true); }
UOpRef operator>=(UOpRef a, UOpRef b) { return (a < b).logicalNot(); }
UOpRef operator<=(UOpRef a, UOpRef b) { return (a > b).logicalNot(); }
UOpRef operator&(UOpRef a, UOpRef b) { return a.binop(Op::AND, b); }
UOpRef operator|(UOpRef a, UOpRef b) { return a.binop(Op::OR, b); }
UOpRef operator^(UOpRef a, UOpRef b) { return a.binop(Op::XOR, b); }
UOpRef operator<<(UOpRef a, UOpRef b) { return a.binop(Op::SHL, b); }
UOpRef operator>>(UOpRef a, UOpRef b) { return a.binop(Op::SHR, b); }

} // namespace tgc
