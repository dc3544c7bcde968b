//===- GraphBuild.h - small builders for hand-made test graphs --*- C++ -*-===//
//
// Shorthands for the arg forms of the graph format (ParamArg, CallInfo,
// KernelInfo, shape operands), so the property and verifier tests can build
// the nodes tinygrad would build in a line each.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/UOp.h"

#include <initializer_list>
#include <string>

namespace tgc::testing {

/// A ParamArg with the fields tinygrad's ParamArg has, in its order.
inline Value paramArg(int64_t slot, DType dt, std::string addrspace = "GLOBAL", Value device = {}, Value vminVmax = {},
                      std::string name = "") {
  return Value::object("ParamArg",
                       {"slot", "dtype", "vmin_vmax", "multiple_of", "name", "addrspace", "axis", "device", "volatile"},
                       {Value::integer(slot), Value::dtype(dt), std::move(vminVmax), Value(),
                        name.empty() ? Value() : Value::string(name), Value::enumMember("AddrSpace", std::move(addrspace)),
                        Value(), std::move(device), Value::boolean(false)});
}

inline Value callInfo() {
  return Value::object("CallInfo", {"grad_fxn", "name", "precompile", "precompile_backward", "aux"},
                       {Value(), Value(), Value::boolean(false), Value::boolean(false), Value()});
}

inline Value kernelInfo(std::string name = "test") {
  return Value::object("KernelInfo", {"name", "axis_types", "dont_use_locals", "applied_opts", "opts_to_apply", "estimates", "beam"},
                       {Value::string(std::move(name)), Value::tuple({}), Value::boolean(false), Value::tuple({}), Value(),
                        Value(), Value::integer(0)});
}

/// A shape operand: one weakint CONST for a single dim, else a STACK of them.
inline const UOp *shapeArg(Context &ctx, std::initializer_list<int64_t> dims) {
  if (dims.size() == 1) return ctx.constInt(*dims.begin());
  std::vector<const UOp *> src;
  for (int64_t d : dims) src.push_back(ctx.constInt(d));
  return ctx.get(Op::STACK, src.empty() ? dtypes::Void : dtypes::WeakInt, src);
}

/// A global buffer of `numel` elements on CPU.
inline const UOp *buffer(Context &ctx, int64_t slot, DType dt, int64_t numel, std::string device = "CPU") {
  return ctx.get(Op::BUFFER, dt, {ctx.constInt(numel)}, paramArg(slot, dt, "GLOBAL", Value::string(std::move(device))));
}

/// A kernel-side global parameter of the given shape.
inline const UOp *param(Context &ctx, int64_t slot, DType dt, std::initializer_list<int64_t> shape) {
  return ctx.get(Op::PARAM, dt, {shapeArg(ctx, shape)}, paramArg(slot, dt));
}

inline const UOp *range(Context &ctx, int64_t bound, int64_t axis, std::string kind = "WEAK") {
  return ctx.get(Op::RANGE, dtypes::WeakInt, {ctx.constInt(bound)},
                 Value::tuple({Value::integer(axis), Value::enumMember("AxisType", std::move(kind))}));
}

inline const UOp *reshape(Context &ctx, const UOp *x, std::initializer_list<int64_t> shape) {
  return ctx.get(Op::RESHAPE, x->dtype(), {x, shapeArg(ctx, shape)});
}

inline Value ints(std::initializer_list<int64_t> v) {
  std::vector<Value> items;
  for (int64_t i : v) items.push_back(Value::integer(i));
  return Value::tuple(std::move(items));
}

} // namespace tgc::testing
