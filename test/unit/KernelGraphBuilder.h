//===- KernelGraphBuilder.h - build small kernel graphs in tests -*- C++ -*-===//
//
// Shorthands modelled on tinygrad's UOp helpers (UOp.param, .store, .sink,
// .call, .after) for writing the reference's test cases as kernel graphs.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/UOp.h"

#include <string>
#include <vector>

namespace tgc::testing {

struct KG {
  Context ctx;

  const UOp *cint(int64_t v) { return ctx.constInt(v); }
  const UOp *cf(double v) { return ctx.constFloat(v, dtypes::Float32); }

  static Value paramArg(int64_t slot, DType dt, const std::string &device, const char *addrspace = "GLOBAL") {
    return Value::object(
        "ParamArg", {"slot", "dtype", "vmin_vmax", "multiple_of", "name", "addrspace", "axis", "device", "volatile"},
        {Value::integer(slot), Value::dtype(dt), Value(), Value(), Value(), Value::enumMember("AddrSpace", addrspace),
         Value(), device.empty() ? Value() : Value::string(device), Value::boolean(false)});
  }
  /// UOp.param(slot, float32, (n,), device): a whole-buffer GLOBAL PARAM.
  const UOp *param(int64_t slot, int64_t n = 1, const std::string &device = "CPU", DType dt = dtypes::Float32) {
    return ctx.get(Op::PARAM, dt, {cint(n)}, paramArg(slot, dt, device));
  }
  /// An intermediate BUFFER of the kernel graph.
  const UOp *buffer(int64_t slot, int64_t n = 1, DType dt = dtypes::Float32) {
    return ctx.get(Op::BUFFER, dt, {cint(n)}, paramArg(slot, dt, "CPU"));
  }
  const UOp *range(int64_t n, int64_t axis = 0) {
    return ctx.get(Op::RANGE, dtypes::WeakInt, {cint(n)},
                   Value::tuple({Value::integer(axis), Value::enumMember("AxisType", "WEAK")}));
  }
  const UOp *index(const UOp *buf, const UOp *i) { return ctx.get(Op::INDEX, buf->dtype(), {buf, i}); }
  const UOp *load(const UOp *x) { return ctx.get(Op::LOAD, x->dtype(), {x}); }
  const UOp *alu(Op op, const UOp *a, const UOp *b) { return ctx.get(op, a->dtype(), {a, b}); }
  const UOp *add(const UOp *a, const UOp *b) { return alu(Op::ADD, a, b); }
  const UOp *mul(const UOp *a, const UOp *b) { return alu(Op::MUL, a, b); }
  const UOp *store(const UOp *dst, const UOp *v) { return ctx.get(Op::STORE, dtypes::Void, {dst, v}); }
  const UOp *end(const UOp *body, const UOp *r) { return ctx.get(Op::END, dtypes::Void, {body, r}); }

  static Value kernelInfo(const std::string &name = "test") {
    return Value::object(
        "KernelInfo", {"name", "axis_types", "dont_use_locals", "applied_opts", "opts_to_apply", "estimates", "beam"},
        {Value::string(name), Value::tuple({}), Value::boolean(false), Value::tuple({}), Value(), Value(),
         Value::integer(0)});
  }
  /// A kernel body: SINK(effects) with a KernelInfo.
  const UOp *kernel(std::vector<const UOp *> effects, const std::string &name = "test") {
    return ctx.get(Op::SINK, dtypes::Void, std::move(effects), kernelInfo(name));
  }
  const UOp *sink(std::vector<const UOp *> srcs) { return ctx.get(Op::SINK, dtypes::Void, std::move(srcs)); }
  static Value callInfo() {
    return Value::object("CallInfo", {"grad_fxn", "name", "precompile", "precompile_backward", "aux"},
                         {Value(), Value(), Value::boolean(false), Value::boolean(false), Value()});
  }
  const UOp *call(const UOp *body, std::vector<const UOp *> args) {
    args.insert(args.begin(), body);
    return ctx.get(Op::CALL, dtypes::Void, std::move(args), callInfo());
  }
  const UOp *after(const UOp *x, std::vector<const UOp *> deps) {
    deps.insert(deps.begin(), x);
    return ctx.get(Op::AFTER, x->dtype(), std::move(deps));
  }
  const UOp *linear(std::vector<const UOp *> calls) { return ctx.get(Op::LINEAR, dtypes::Void, std::move(calls)); }

  /// ProgramInfo(name, global_size, local_size, vars, globals, outs, ins, target).
  static Value programInfo(std::vector<int64_t> globals, std::vector<int64_t> ins, std::vector<int64_t> outs) {
    auto ints = [](const std::vector<int64_t> &v) {
      std::vector<Value> out;
      for (int64_t i : v) out.push_back(Value::integer(i));
      return Value::tuple(std::move(out));
    };
    return Value::object("ProgramInfo",
                         {"name", "global_size", "local_size", "vars", "globals", "outs", "ins", "target"},
                         {Value::string("test"), ints({1, 1, 1}), ints({1, 1, 1}), Value::tuple({}), ints(globals),
                          ints(outs), ints(ins), Value()});
  }
  const UOp *program(const UOp *sink, Value info = Value()) {
    return ctx.get(Op::PROGRAM, dtypes::Void, {sink}, std::move(info));
  }
};

} // namespace tgc::testing
