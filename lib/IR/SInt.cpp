//===- SInt.cpp - tinygrad's sint: arithmetic on shape sizes --------------===//
#include "IR/SInt.h"

#include "IR/ExecAlu.h"
#include "IR/Symbolic.h"

#include <algorithm>

namespace tgc {

Dim dimOf(const UOp *u) {
  if (u->is(Op::CONST) && u->arg().isInt()) return Dim(u->arg().getInt());
  return Dim(0, u);
}

const UOp *dimUOp(Context &ctx, const Dim &d) { return d.isStatic() ? ctx.constInt(d.value) : d.sym; }

/// a op b over nodes, simplified; an int result comes back static.
static Dim symbolic(Op op, const Dim &a, const Dim &b) {
  Context &ctx = (a.sym ? a.sym : b.sym)->context();
  const UOp *node = ctx.get(op, dtypes::WeakInt, {dimUOp(ctx, a), dimUOp(ctx, b)});
  Result<const UOp *> s = simplify(node);
  return dimOf(s ? *s : node);
}

Dim operator+(const Dim &a, const Dim &b) {
  if (a.isStatic() && b.isStatic()) return a.value + b.value;
  if (b == Dim(0)) return a;
  if (a == Dim(0)) return b;
  return symbolic(Op::ADD, a, b);
}

Dim operator-(const Dim &a, const Dim &b) {
  if (a.isStatic() && b.isStatic()) return a.value - b.value;
  if (b == Dim(0)) return a;
  if (a == b) return 0;
  Context &ctx = (a.sym ? a.sym : b.sym)->context();
  const UOp *negB = b.isStatic() ? ctx.constInt(-b.value) : ctx.get(Op::MUL, dtypes::WeakInt, {b.sym, ctx.constInt(-1)});
  return symbolic(Op::ADD, a, dimOf(negB));
}

Dim operator*(const Dim &a, const Dim &b) {
  if (a.isStatic() && b.isStatic()) return a.value * b.value;
  if (b == Dim(1)) return a;
  if (a == Dim(1)) return b;
  if (a == Dim(0) || b == Dim(0)) return 0;
  return symbolic(Op::MUL, a, b);
}

Dim floorDiv(const Dim &a, const Dim &b) {
  if (a.isStatic() && b.isStatic()) return b.value ? tgc::floorDiv(a.value, b.value) : 0;
  if (b == Dim(1)) return a;
  return symbolic(Op::FLOORDIV, a, b);
}

Dim dimProd(const Shape &s) {
  Dim p(1);
  for (const Dim &d : s) p = p * d;
  return p;
}

int64_t dimVmax(const Dim &d) { return d.isStatic() ? d.value : d.sym->vmaxInt(); }
static int64_t dimVmin(const Dim &d) { return d.isStatic() ? d.value : d.sym->vminInt(); }

std::optional<bool> dimsEqual(const Dim &a, const Dim &b) {
  if (a == b) return true;
  Dim diff = a - b;
  if (diff.isStatic()) return diff.value == 0;
  if (dimVmin(diff) > 0 || dimVmax(diff) < 0) return false;
  return std::nullopt;
}

static std::string render(const UOp *u) {
  if (u->is(Op::CONST)) return u->arg().toString();
  if (u->isIn({Op::PARAM, Op::BUFFER}) && u->arg().kind() == Value::Kind::Obj) {
    const Value *name = u->arg().field("name");
    if (name && name->kind() == Value::Kind::Str) return name->str();
  }
  if (u->is(Op::AFTER) || u->is(Op::CAST)) return render(u->src(0));
  const char *sym = u->is(Op::ADD) ? "+" : u->is(Op::MUL) ? "*" : u->is(Op::FLOORDIV) ? "//" : u->is(Op::FLOORMOD) ? "%" : nullptr;
  if (sym && u->numSrc() == 2) return "(" + render(u->src(0)) + sym + render(u->src(1)) + ")";
  std::string out = std::string(opName(u->op())) + "(";
  for (size_t i = 0; i < u->numSrc(); ++i) out += (i ? "," : "") + render(u->src(i));
  return out + ")";
}

std::string dimStr(const Dim &d) { return d.isStatic() ? std::to_string(d.value) : render(d.sym); }

} // namespace tgc
