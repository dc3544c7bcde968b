//===- UOpBuilder.h - UOp arithmetic with tinygrad's semantics ---*- C++ -*-===//
//
// UOpRef is a const UOp* with the operators of tinygrad's UOp mixins, so that
// a rewrite rule's result reads like tinygrad's: `x * (c0 + c1)`,
// `cond.where(x, invalid)`, `(x < 5).logicalNot()`. The operators follow
// tinygrad's mixin semantics exactly: a Python number becomes a weak CONST,
// both operands are promoted to their least upper dtype (a weak CONST is
// re-made at the weak kind of that dtype, anything else is CAST), `a - b` is
// `a + b*-1`, `-x` is `x*-1` (logical not for bool), and every node's dtype is
// derived from its srcs by dtypeFromUOp.
//
// `/` and `%` are tinygrad's `//` and `%`: floor division and modulo
// (FLOORDIV/FLOORMOD) on ints. A Python number next to a UOp becomes a scalar
// CONST; constLike gives a CONST EXPANDed to the node's shape, as tinygrad's
// const_like does.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/UOp.h"

#include <concepts>
#include <optional>
#include <vector>

namespace tgc {

/// A Python constant in a C++ expression: ints become weakint, floats
/// weakfloat, bools bool (tinygrad's dtypes.from_py).
template <typename T>
concept PyNumber = std::is_arithmetic_v<T>;

template <PyNumber T> Value pyValue(T v) {
  if constexpr (std::is_same_v<T, bool>) return Value::boolean(v);
  else if constexpr (std::is_floating_point_v<T>) return Value::floating(double(v));
  else return Value::integer(int64_t(v));
}

/// tinygrad's dtypes.from_py for a scalar Value.
DType dtypeOfPy(const Value &v);

class UOpRef {
public:
  UOpRef() = default;
  UOpRef(const UOp *u) : u_(u) {}
  operator const UOp *() const { return u_; }
  const UOp *get() const { return u_; }
  const UOp *operator->() const { return u_; }
  explicit operator bool() const { return u_ != nullptr; }

  Context &ctx() const { return u_->context(); }
  DType dtype() const { return u_->dtype(); }
  int64_t vmin() const { return u_->vminInt(); }
  int64_t vmax() const { return u_->vmaxInt(); }
  /// The CONST's value as an int (its arg must be an int or bool).
  int64_t val() const;
  bool isConst() const { return u_->is(Op::CONST); }
  bool isInvalid() const { return u_->is(Op::CONST) && u_->arg().kind() == Value::Kind::Invalid; }

  // ---- construction (tinygrad's UOp.alu / replace / const_like / ufix) ----
  /// UOp(op, src=(self, *src), arg) with the derived dtype (void if none).
  UOpRef alu(Op op, std::vector<const UOp *> src = {}, Value arg = {}) const;
  /// A CONST of this node's dtype (or `dt`) holding v converted by dtype.const,
  /// EXPANDed to this node's shape when it has a non-scalar one.
  UOpRef constLike(const Value &v, DType dt = DType()) const;
  template <PyNumber T> UOpRef constLike(T v, DType dt = DType()) const { return constLike(pyValue(v), dt); }
  /// x as a node: itself, or a CONST of its Python dtype.
  UOpRef ufix(const Value &v) const;
  /// This node with its srcs replaced (dtype, arg and tag kept).
  UOpRef withSrc(std::vector<const UOp *> src) const { return u_->withSrc(std::move(src)); }

  // ---- elementwise ops (tinygrad's ElementwiseMixin) ----
  UOpRef cast(DType dt) const;
  UOpRef bitcast(DType dt) const;
  UOpRef logicalNot() const;
  UOpRef ne(UOpRef y) const;
  UOpRef eq(UOpRef y) const;
  UOpRef maximum(UOpRef y) const;
  UOpRef where(UOpRef t, UOpRef f) const;
  UOpRef reciprocal() const { return alu(Op::RECIPROCAL); }
  UOpRef trunc() const { return alu(Op::TRUNC); }
  UOpRef sqrt() const { return alu(Op::SQRT); }
  UOpRef exp2() const { return alu(Op::EXP2); }
  UOpRef pow(UOpRef y) const;
  /// tinygrad's _binop: promote both operands, then alu(op).
  UOpRef binop(Op op, UOpRef y, bool reverse = false) const;
  template <PyNumber T> UOpRef binop(Op op, T y, bool reverse = false) const { return binop(op, ufix(pyValue(y)), reverse); }
  template <PyNumber T> UOpRef ne(T y) const { return ne(ufix(pyValue(y))); }
  template <PyNumber T> UOpRef eq(T y) const { return eq(ufix(pyValue(y))); }
  template <PyNumber T> UOpRef maximum(T y) const { return maximum(ufix(pyValue(y))); }
  template <PyNumber A, PyNumber B> UOpRef where(A t, B f) const { return where(ufix(pyValue(t)), ufix(pyValue(f))); }
  template <PyNumber A> UOpRef where(A t, UOpRef f) const { return where(f.ufix(pyValue(t)), f); }
  template <PyNumber B> UOpRef where(UOpRef t, B f) const { return where(t, t.ufix(pyValue(f))); }

  /// self + s0 + s1 + ... (OR for bool), folded left like tinygrad's usum.
  UOpRef usum(const std::vector<const UOp *> &more) const;
  /// self * s0 * s1 * ... (AND for bool), like tinygrad's uprod.
  UOpRef uprod(const std::vector<const UOp *> &more) const;

private:
  const UOp *u_ = nullptr;
};

/// tinygrad's _broadcasted: both operands promoted to their least upper dtype.
std::pair<UOpRef, UOpRef> broadcasted(UOpRef x, UOpRef y);
/// tinygrad's UOp.const(b, dtype): a CONST (a STACK of CONSTs for a tuple).
UOpRef makeConst(Context &ctx, const Value &v, DType dt = DType());
/// The Invalid CONST (bool).
UOpRef invalidConst(Context &ctx);

UOpRef operator+(UOpRef a, UOpRef b);
UOpRef operator-(UOpRef a, UOpRef b);
UOpRef operator*(UOpRef a, UOpRef b);
UOpRef operator/(UOpRef a, UOpRef b); ///< tinygrad's `//`
UOpRef operator%(UOpRef a, UOpRef b);
UOpRef operator<(UOpRef a, UOpRef b);
UOpRef operator>(UOpRef a, UOpRef b);
UOpRef operator>=(UOpRef a, UOpRef b);
UOpRef operator<=(UOpRef a, UOpRef b);
UOpRef operator&(UOpRef a, UOpRef b);
UOpRef operator|(UOpRef a, UOpRef b);
UOpRef operator^(UOpRef a, UOpRef b);
UOpRef operator<<(UOpRef a, UOpRef b);
UOpRef operator>>(UOpRef a, UOpRef b);
UOpRef operator-(UOpRef a);

#define TGC_UOPREF_NUMBER_OPS(OP)                                                                                      \
  template <PyNumber T> UOpRef operator OP(UOpRef a, T b) { return a OP a.ufix(pyValue(b)); }                        \
  template <PyNumber T> UOpRef operator OP(T a, UOpRef b) { return b.ufix(pyValue(a)) OP b; }
TGC_UOPREF_NUMBER_OPS(+)
TGC_UOPREF_NUMBER_OPS(-)
TGC_UOPREF_NUMBER_OPS(*)
TGC_UOPREF_NUMBER_OPS(/)
TGC_UOPREF_NUMBER_OPS(%)
TGC_UOPREF_NUMBER_OPS(<)
TGC_UOPREF_NUMBER_OPS(>)
TGC_UOPREF_NUMBER_OPS(>=)
TGC_UOPREF_NUMBER_OPS(<=)
TGC_UOPREF_NUMBER_OPS(&)
TGC_UOPREF_NUMBER_OPS(|)
TGC_UOPREF_NUMBER_OPS(^)
TGC_UOPREF_NUMBER_OPS(<<)
TGC_UOPREF_NUMBER_OPS(>>)
#undef TGC_UOPREF_NUMBER_OPS

} // namespace tgc
