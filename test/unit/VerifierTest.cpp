//===- VerifierTest.cpp - one violating graph per spec rule ---------------===//
#include "GraphBuild.h"

#include "IR/Graph.h"
#include "IR/Verifier.h"

#include <doctest/doctest.h>

using namespace tgc;
using namespace tgc::testing;
using enum Op;

namespace {

const DType F32 = dtypes::Float32, I32 = dtypes::Int32, V = dtypes::Void, B = dtypes::Bool, WI = dtypes::WeakInt;

/// Every violation under the root, as messages.
std::vector<std::string> errors(const UOp *root) {
  std::vector<std::string> out;
  for (const Diagnostic &d : verify(std::span<const UOp *const>(&root, 1))) out.push_back(d.message);
  return out;
}

/// The single violation under the root (or a description of what was found instead).
std::string violation(const UOp *root) {
  std::vector<std::string> e = errors(root);
  if (e.size() == 1) return e[0];
  std::string s = std::to_string(e.size()) + " violations:";
  for (const std::string &m : e) s += "\n  " + m;
  return s;
}

std::string ref(const UOp *u) { return "%" + std::to_string(u->id()); }

/// A kernel body: SINK[KernelInfo] of the given effects, called on one float buffer.
const UOp *kernelCall(Context &ctx, std::vector<const UOp *> effects) {
  const UOp *sink = ctx.get(SINK, V, std::move(effects), kernelInfo());
  return ctx.get(CALL, V, {sink, buffer(ctx, 0, F32, 8)}, callInfo());
}

struct Fixture {
  Context ctx;
  const UOp *f = buffer(ctx, 0, F32, 8);
  const UOp *g = buffer(ctx, 1, F32, 8);
  const UOp *n = buffer(ctx, 2, I32, 8);
  const UOp *sink(std::vector<const UOp *> src) { return ctx.get(SINK, V, std::move(src)); }
  const UOp *lt() { return ctx.get(CMPLT, B, {f, g}); }
};

} // namespace

TEST_CASE("verify: valid graphs have no violations") {
  Fixture t;
  Context &ctx = t.ctx;
  // Tensor level: an elementwise chain with a weak constant, a reduce and an assign.
  const UOp *x = reshape(ctx, t.f, {2, 4});
  const UOp *sum = ctx.get(REDUCE, F32, {ctx.get(PERMUTE, F32, {x}, ints({1, 0}))},
                           Value::tuple({Value::enumMember("Ops", "ADD"), Value::integer(1)}));
  const UOp *v = ctx.get(WHERE, F32, {t.lt(), ctx.get(MUL, F32, {t.f, ctx.constFloat(2.0)}), ctx.constFloat(0.0)});
  const UOp *assign = ctx.get(AFTER, F32, {t.g, ctx.get(STORE, V, {t.g, v})});
  CHECK(errors(t.sink({sum, assign})).empty());

  // Kernel level (graph-format §6): out[i] = sum_r in[r*8 + i], as CALL + LINEAR.
  const UOp *out = param(ctx, 0, F32, {8}), *in = param(ctx, 1, F32, {64});
  const UOp *i = range(ctx, 8, 1), *r = range(ctx, 8, 0, "REDUCE");
  const UOp *idx = ctx.get(ADD, WI, {ctx.get(MUL, WI, {r, ctx.constInt(8)}), i});
  const UOp *red = ctx.get(REDUCE, F32, {ctx.get(INDEX, F32, {in, idx}), r},
                           Value::tuple({Value::enumMember("Ops", "ADD"), Value::integer(0)}));
  const UOp *body = ctx.get(END, V, {ctx.get(STORE, V, {ctx.get(INDEX, F32, {out, i}), red}), i});
  const UOp *kernel = ctx.get(SINK, V, {body}, kernelInfo("r_8_8"));
  const UOp *call = ctx.get(CALL, V, {kernel, t.f, buffer(ctx, 3, F32, 64)}, callInfo());
  CHECK(errors(ctx.get(LINEAR, V, {call})).empty());
  CHECK(errors(ctx.get(SINK, V, {ctx.get(AFTER, F32, {t.f, call})})).empty());
}

TEST_CASE("verify: rule op-allowed") {
  Fixture t;
  const UOp *ifu = t.ctx.get(IF, V, {t.lt(), t.f});
  CHECK(violation(t.sink({ifu})) == "'IF' " + ref(ifu) + " void: program-level op is not allowed outside a kernel (rule: op-allowed)");
  const UOp *w = t.ctx.get(WAIT, V, {});
  CHECK(violation(t.sink({w})) == "'WAIT' " + ref(w) + " void: op is not allowed outside a kernel body (rule: op-allowed)");
  const UOp *c = t.ctx.get(CONTIGUOUS, F32, {param(t.ctx, 0, F32, {8})});
  CHECK(violation(kernelCall(t.ctx, {c})) ==
        "'CONTIGUOUS' " + ref(c) + " float32: tensor-level op is not allowed in a kernel body (rule: op-allowed)");
}

TEST_CASE("verify: rule src-count") {
  Fixture t;
  const UOp *add = t.ctx.get(ADD, F32, {t.f});
  CHECK(violation(t.sink({add})) == "'ADD' " + ref(add) + " float32: expects 2 sources, got 1 (rule: src-count)");
  const UOp *st = t.ctx.get(STORE, V, {t.f});
  CHECK(violation(t.sink({st})).starts_with("'STORE' " + ref(st) + " void: expects (target, value)"));
}

TEST_CASE("verify: rule void-op") {
  Fixture t;
  const UOp *s = t.ctx.get(SINK, F32, {t.f});
  CHECK(violation(s) == "'SINK' " + ref(s) + " float32: must be void, got float32 (rule: void-op)");
}

TEST_CASE("verify: rule const-value-kind") {
  Fixture t;
  const UOp *c = t.ctx.constFloat(1.5, I32);
  CHECK(violation(t.sink({c})) == "'CONST' " + ref(c) + " int32: value 1.5 does not fit dtype int32 (rule: const-value-kind)");
  const UOp *inv = t.ctx.get(CONST, F32, {}, Value::invalid());
  CHECK(violation(t.sink({inv})).ends_with("Invalid must be a bool CONST, got float32 (rule: const-value-kind)"));
  CHECK(errors(t.sink({t.ctx.get(CONST, B, {}, Value::invalid()), t.ctx.constInt(3, dtypes::UInt8)})).empty());
}

TEST_CASE("verify: rule stack-elements") {
  Fixture t;
  const UOp *s = t.ctx.get(STACK, I32, {t.ctx.constFloat(1.0, F32), t.ctx.constInt(2, I32)});
  CHECK(violation(t.sink({s})) ==
        "'STACK' " + ref(s) + " int32: element CONST float32 does not match the STACK dtype int32 (rule: stack-elements)");
  const UOp *s2 = t.ctx.get(STACK, WI, {shapeArg(t.ctx, {1, 2}), t.ctx.constInt(3)});
  CHECK(violation(t.sink({s2})).ends_with("elements must have equal shapes, got [2] and [] (rule: stack-elements)"));
  const UOp *empty = t.ctx.get(STACK, WI, {});
  CHECK(violation(t.sink({empty})).ends_with("an empty STACK must be void, got weakint (rule: stack-elements)"));
}

TEST_CASE("verify: rules where-cond-bool and where-branches") {
  Fixture t;
  const UOp *w = t.ctx.get(WHERE, F32, {t.f, t.f, t.g});
  CHECK(violation(t.sink({w})) == "'WHERE' " + ref(w) + " float32: condition must be bool, got float32 (rule: where-cond-bool)");
  const UOp *w2 = t.ctx.get(WHERE, F32, {t.lt(), t.f, t.n});
  CHECK(violation(t.sink({w2})) == "'WHERE' " + ref(w2) + " float32: branch 2 is int32, expected float32 (rule: where-branches)");
}

TEST_CASE("verify: rules cmp-bool and cmp-operands") {
  Fixture t;
  const UOp *c = t.ctx.get(CMPLT, F32, {t.f, t.g});
  CHECK(violation(t.sink({c})) == "'CMPLT' " + ref(c) + " float32: a comparison must be bool, got float32 (rule: cmp-bool)");
  const UOp *c2 = t.ctx.get(CMPNE, B, {t.f, t.n});
  CHECK(violation(t.sink({c2})) == "'CMPNE' " + ref(c2) + " bool: operands float32 and int32 differ (rule: cmp-operands)");
  CHECK(errors(t.sink({t.ctx.get(CMPNE, B, {t.f, t.ctx.constFloat(0.0)})})).empty());
}

TEST_CASE("verify: rules bitwise-no-float and shift-operands") {
  Fixture t;
  const UOp *a = t.ctx.get(AND, F32, {t.f, t.g});
  CHECK(violation(t.sink({a})) == "'AND' " + ref(a) + " float32: bitwise operand BUFFER float32 is a float (rule: bitwise-no-float)");
  const UOp *s = t.ctx.get(SHL, I32, {t.n, buffer(t.ctx, 5, dtypes::Int8, 8)});
  CHECK(violation(t.sink({s})) ==
        "'SHL' " + ref(s) + " int32: shift count is int8, expected int32, uint32 or weakint (rule: shift-operands)");
  CHECK(errors(t.sink({t.ctx.get(SHR, I32, {t.n, t.ctx.constInt(2)})})).empty());
}

TEST_CASE("verify: rule divmod-int") {
  Fixture t;
  const UOp *d = t.ctx.get(FLOORDIV, F32, {t.f, t.g});
  CHECK(violation(t.sink({d})) == "'FLOORDIV' " + ref(d) + " float32: integer division/modulo needs an int dtype, got float32 (rule: divmod-int)");
}

TEST_CASE("verify: rule transcendental-float") {
  Fixture t;
  const UOp *e = t.ctx.get(EXP2, I32, {t.n});
  CHECK(violation(t.sink({e})) == "'EXP2' " + ref(e) + " int32: result must be a float, got int32 (rule: transcendental-float)");
  // An int operand is fine: the result is its least upper float.
  CHECK(errors(t.sink({t.ctx.get(SQRT, F32, {t.n})})).empty());
}

TEST_CASE("verify: rule alu-operands") {
  Fixture t;
  const UOp *a = t.ctx.get(ADD, F32, {t.f, t.n});
  CHECK(violation(t.sink({a})) == "'ADD' " + ref(a) + " float32: operand BUFFER int32 does not match the result dtype float32 (rule: alu-operands)");
}

TEST_CASE("verify: rule cast-arg") {
  Fixture t;
  const UOp *c = t.ctx.get(CAST, F32, {t.n}, Value::dtype(I32));
  CHECK(violation(t.sink({c})) == "'CAST' " + ref(c) + " float32: arg int32 differs from the node dtype (rule: cast-arg)");
  const UOp *c2 = t.ctx.get(BITCAST, I32, {t.f});
  CHECK(violation(t.sink({c2})) == "'BITCAST' " + ref(c2) + " int32: arg must be a dtype, got None (rule: cast-arg)");
}

TEST_CASE("verify: rules range-bound and range-arg") {
  Fixture t;
  const UOp *r = t.ctx.get(RANGE, I32, {t.ctx.constInt(8)}, Value::tuple({Value::integer(0), Value::enumMember("AxisType", "LOOP")}));
  CHECK(violation(t.sink({r})) == "'RANGE' " + ref(r) + " int32: bound is weakint, expected int32 (rule: range-bound)");
  const UOp *r2 = t.ctx.get(RANGE, WI, {t.ctx.constInt(8)}, Value::tuple({Value::integer(0), Value::integer(1)}));
  CHECK(violation(t.sink({r2})) == "'RANGE' " + ref(r2) + " weakint: arg must be (axis ids..., AxisType), got (0, 1) (rule: range-arg)");
}

TEST_CASE("verify: rules index-int and end-ranges") {
  Fixture t;
  const UOp *p = param(t.ctx, 0, F32, {8});
  const UOp *ix = t.ctx.get(INDEX, F32, {p, t.ctx.constFloat(1.0)});
  CHECK(violation(kernelCall(t.ctx, {ix})) == "'INDEX' " + ref(ix) + " float32: index CONST weakfloat is not an int (rule: index-int)");
  const UOp *i = range(t.ctx, 8, 0);
  const UOp *st = t.ctx.get(STORE, V, {t.ctx.get(INDEX, F32, {p, i}), t.ctx.constFloat(0.0, F32)});
  const UOp *e = t.ctx.get(END, V, {st, t.ctx.constInt(8)});
  CHECK(violation(kernelCall(t.ctx, {e})) == "'END' " + ref(e) + " void: closes CONST weakint, which is not a RANGE (rule: end-ranges)");
  CHECK(errors(kernelCall(t.ctx, {t.ctx.get(END, V, {st, i})})).empty());
}

TEST_CASE("verify: rules param-arg and storage-not-weak") {
  Fixture t;
  const UOp *p = t.ctx.get(PARAM, F32, {t.ctx.constInt(8)}, Value::integer(0));
  CHECK(violation(t.sink({p})) == "'PARAM' " + ref(p) + " float32: arg must be a ParamArg, got 0 (rule: param-arg)");
  const UOp *p2 = t.ctx.get(PARAM, F32, {t.ctx.constInt(8)}, paramArg(0, I32));
  CHECK(violation(t.sink({p2})).ends_with("ParamArg dtype int32 differs from the node dtype (rule: param-arg)"));
  const UOp *w = t.ctx.get(BUFFER, WI, {t.ctx.constInt(8)}, paramArg(0, WI, "GLOBAL", Value::string("CPU")));
  CHECK(violation(t.sink({w})) == "'BUFFER' " + ref(w) + " weakint: storage cannot have the weak dtype weakint (rule: storage-not-weak)");
  // A Variable is an ALU scalar, not storage: weak is fine.
  const UOp *var = t.ctx.get(BUFFER, WI, {t.ctx.get(STACK, V, {})}, paramArg(-1, WI, "ALU", {}, ints({1, 8}), "n"));
  CHECK(errors(t.sink({var})).empty());
}

TEST_CASE("verify: rule buffer-kind") {
  Fixture t;
  const UOp *nodev = t.ctx.get(BUFFER, F32, {t.ctx.constInt(8)}, paramArg(0, F32));
  CHECK(violation(t.sink({nodev})) == "'BUFFER' " + ref(nodev) + " float32: a GLOBAL BUFFER needs a device, got None (rule: buffer-kind)");
  const UOp *alu = t.ctx.get(BUFFER, I32, {t.ctx.constInt(8)}, paramArg(-1, I32, "ALU"));
  CHECK(violation(t.sink({alu})).ends_with("an ALU BUFFER must be a Variable (0-d, with vmin_vmax) (rule: buffer-kind)"));
  // The same GLOBAL BUFFER that is valid outside is not valid inside a kernel body.
  const UOp *in = t.ctx.get(INDEX, F32, {t.f, range(t.ctx, 8, 0)});
  CHECK(violation(kernelCall(t.ctx, {in})) ==
        "'BUFFER' " + ref(t.f) + " float32: a BUFFER in a kernel body must be LOCAL or REG scratch, got GLOBAL (rule: buffer-kind)");
  const UOp *local = t.ctx.get(BUFFER, F32, {t.ctx.constInt(8)}, paramArg(0, F32, "LOCAL"));
  CHECK(errors(kernelCall(t.ctx, {t.ctx.get(INDEX, F32, {local, range(t.ctx, 8, 0)})})).empty());
}

TEST_CASE("verify: rule group-srcs") {
  Fixture t;
  const UOp *g = t.ctx.get(GROUP, V, {t.f});
  CHECK(violation(t.sink({g})) == "'GROUP' " + ref(g) + " void: groups BUFFER float32, expected one of {NOOP, GROUP, STORE, END, INS} (rule: group-srcs)");
}

TEST_CASE("verify: rule after-src") {
  Fixture t;
  const UOp *v = t.ctx.get(MUL, F32, {t.f, t.g});
  const UOp *a = t.ctx.get(AFTER, F32, {v, t.ctx.get(STORE, V, {t.g, v})});
  CHECK(violation(t.sink({a})).starts_with("'AFTER' " + ref(a) + " float32: orders MUL float32, expected a movement op or one of {"));
  const UOp *a2 = t.ctx.get(AFTER, I32, {t.f, t.ctx.get(STORE, V, {t.f, t.g})});
  CHECK(violation(t.sink({a2})) == "'AFTER' " + ref(a2) + " int32: dtype differs from its source float32 (rule: after-src)");
  // An AFTER over an MSTACK is a kernel-graph form; a kernel body has none.
  const UOp *p = param(t.ctx, 0, F32, {8});
  const UOp *a3 = t.ctx.get(AFTER, F32, {t.ctx.get(ADD, F32, {p, p}), t.ctx.get(STORE, V, {p, p})});
  CHECK(violation(kernelCall(t.ctx, {a3})).starts_with("'AFTER' " + ref(a3) + " float32: orders ADD float32"));
}

TEST_CASE("verify: rules store-target and store-gate") {
  Fixture t;
  const UOp *st = t.ctx.get(STORE, V, {t.ctx.get(ADD, F32, {t.f, t.g}), t.g});
  CHECK(violation(t.sink({st})).starts_with("'STORE' " + ref(st) + " void: stores into ADD float32, which is not storage"));
  // Through a view of a buffer is fine outside kernels.
  CHECK(errors(t.sink({t.ctx.get(STORE, V, {reshape(t.ctx, t.f, {2, 4}), reshape(t.ctx, t.g, {2, 4})})})).empty());
  const UOp *p = param(t.ctx, 0, F32, {8});
  const UOp *kst = t.ctx.get(STORE, V, {t.ctx.get(MUL, F32, {p, p}), p});
  CHECK(violation(kernelCall(t.ctx, {kst})) ==
        "'STORE' " + ref(kst) + " void: stores into MUL float32, expected one of {BUFFER, PARAM, AFTER, INDEX, SHRINK} (rule: store-target)");
  const UOp *idx = t.ctx.get(INDEX, F32, {p, range(t.ctx, 8, 0)});
  const UOp *gated = t.ctx.get(STORE, V, {idx, t.ctx.constFloat(1.0, F32), t.ctx.constInt(1)});
  CHECK(violation(kernelCall(t.ctx, {gated})) == "'STORE' " + ref(gated) + " void: the gate must be bool, got weakint (rule: store-gate)");
}

TEST_CASE("verify: rule load-operands") {
  Fixture t;
  const UOp *p = param(t.ctx, 0, F32, {8});
  const UOp *l = t.ctx.get(LOAD, F32, {p});
  CHECK(violation(kernelCall(t.ctx, {l})) == "'LOAD' " + ref(l) + " float32: loads from PARAM float32, expected an INDEX or SHRINK (rule: load-operands)");
  const UOp *idx = t.ctx.get(INDEX, F32, {p, range(t.ctx, 8, 0)});
  const UOp *l2 = t.ctx.get(LOAD, F32, {idx, t.ctx.constInt(0, I32), t.ctx.constBool(true)});
  CHECK(violation(kernelCall(t.ctx, {l2})).ends_with("the alternative is int32, expected float32 (rule: load-operands)"));
}

TEST_CASE("verify: rules if-srcs and endif-src, in a PROGRAM's listing") {
  Fixture t;
  const UOp *p = param(t.ctx, 0, F32, {8});
  const UOp *i = t.ctx.get(SPECIAL, I32, {t.ctx.constInt(8, I32)}, Value::string("gidx0"));
  const UOp *idx = t.ctx.get(INDEX, F32, {p, i});
  const UOp *gate = t.ctx.get(CMPLT, B, {i, t.ctx.constInt(4, I32)});
  const UOp *ifu = t.ctx.get(IF, V, {gate, idx});
  const UOp *st = t.ctx.get(STORE, V, {idx, t.ctx.constFloat(1.0, F32)});
  const UOp *sink = t.ctx.get(SINK, V, {st}, kernelInfo());
  auto program = [&](std::vector<const UOp *> listing) {
    return t.ctx.get(PROGRAM, V, {sink, t.ctx.get(LINEAR, V, std::move(listing))});
  };
  CHECK(errors(program({p, i, idx, gate, ifu, st, t.ctx.get(ENDIF, V, {ifu})})).empty());
  const UOp *badIf = t.ctx.get(IF, V, {i, idx});
  CHECK(violation(program({badIf})) == "'IF' " + ref(badIf) + " void: the gate must be bool, got int32 (rule: if-srcs)");
  const UOp *badEnd = t.ctx.get(ENDIF, V, {st});
  CHECK(violation(program({badEnd})) == "'ENDIF' " + ref(badEnd) + " void: closes STORE void, not an IF (rule: endif-src)");
}

TEST_CASE("verify: rules call-info, call-body, function-body, gettuple-index") {
  Fixture t;
  const UOp *body = t.ctx.get(SINK, V, {param(t.ctx, 0, F32, {8})}, kernelInfo());
  const UOp *c = t.ctx.get(CALL, V, {body, t.f});
  CHECK(violation(t.sink({c})) == "'CALL' " + ref(c) + " void: arg must be a CallInfo, got None (rule: call-info)");
  const UOp *c2 = t.ctx.get(CALL, V, {t.ctx.get(STORE, V, {t.f, t.g}), t.f}, callInfo());
  CHECK(violation(t.sink({c2})) == "'CALL' " + ref(c2) +
                                       " void: calls STORE void, expected one of {PROGRAM, LINEAR, SINK, COPY, CUSTOM_FUNCTION} (rule: call-body)");
  const UOp *c3 = t.ctx.get(CALL, F32, {t.f}, callInfo());
  CHECK(violation(t.sink({c3})) == "'CALL' " + ref(c3) + " float32: a called address must be uint64, got float32 (rule: call-body)");
  const UOp *fn = t.ctx.get(FUNCTION, V, {t.ctx.get(SINK, V, {t.f}), t.g}, callInfo());
  CHECK(violation(t.sink({fn})) == "'FUNCTION' " + ref(fn) + " void: the body must be a TUPLE, got SINK void (rule: function-body)");
  const UOp *good = t.ctx.get(FUNCTION, V, {t.ctx.get(TUPLE, V, {param(t.ctx, 0, F32, {8})}), t.g}, callInfo());
  const UOp *gt = t.ctx.get(GETTUPLE, F32, {good}, Value::integer(1));
  CHECK(violation(t.sink({gt})) == "'GETTUPLE' " + ref(gt) + " float32: index 1 is out of range for a TUPLE of 1 (rule: gettuple-index)");
  CHECK(errors(t.sink({t.ctx.get(GETTUPLE, F32, {good}, Value::integer(0))})).empty());
}

TEST_CASE("verify: rules program-srcs, binary-bytes, custom-function-arg") {
  Fixture t;
  const UOp *k = t.ctx.get(SINK, V, {}, kernelInfo());
  const UOp *prog = t.ctx.get(PROGRAM, V, {k, t.ctx.get(SOURCE, V, {}, Value::string("void f(){}"))});
  CHECK(violation(t.sink({prog})) == "'PROGRAM' " + ref(prog) + " void: source 1 must be LINEAR (rule: program-srcs)");
  const UOp *bin = t.ctx.get(BINARY, dtypes::UInt8, {}, Value::string("elf"));
  CHECK(violation(t.sink({bin})) == "'BINARY' " + ref(bin) + " uint8: arg must be bytes (rule: binary-bytes)");
  const UOp *cf = t.ctx.get(CUSTOM_FUNCTION, V, {}, Value::integer(3));
  CHECK(violation(t.sink({cf})) == "'CUSTOM_FUNCTION' " + ref(cf) + " void: arg must be a name string (rule: custom-function-arg)");
}

TEST_CASE("verify: rule special") {
  Fixture t;
  const UOp *s = t.ctx.get(SPECIAL, WI, {t.ctx.constInt(16)}, Value::integer(0));
  CHECK(violation(t.sink({s})) == "'SPECIAL' " + ref(s) + " weakint: arg must be a name string (rule: special)");
  const UOp *s2 = t.ctx.get(SPECIAL, dtypes::Int64, {t.ctx.constInt(16, dtypes::Int64)}, Value::string("gidx0"));
  CHECK(violation(t.sink({s2})).ends_with("bound must be weakint (or int32 after lowering), got int64 (rule: special)"));
}

TEST_CASE("verify: rules pad-shrink-operands, movement-arg, reduce-arg") {
  Fixture t;
  const UOp *s = t.ctx.get(SHRINK, F32, {reshape(t.ctx, t.f, {2, 4}), shapeArg(t.ctx, {0, 0}), t.ctx.constInt(2)});
  CHECK(violation(t.sink({s})) == "'SHRINK' " + ref(s) + " float32: offsets and sizes must have equal shapes, got [2] and [] (rule: pad-shrink-operands)");
  const UOp *p = t.ctx.get(PERMUTE, F32, {t.f});
  CHECK(violation(t.sink({p})) == "'PERMUTE' " + ref(p) + " float32: arg must be a tuple, got None (rule: movement-arg)");
  const UOp *r = t.ctx.get(REDUCE, F32, {t.f}, Value::tuple({Value::enumMember("Ops", "SUB"), Value::integer(1)}));
  CHECK(violation(t.sink({r})) == "'REDUCE' " + ref(r) + " float32: arg must be (Ops.ADD|MUL|MAX, axis count), got (Ops.SUB, 1) (rule: reduce-arg)");
  const UOp *r2 = t.ctx.get(REDUCE, F32, {t.f, t.ctx.constFloat(1.0)}, Value::tuple({Value::enumMember("Ops", "MAX"), Value::integer(0)}));
  CHECK(violation(t.sink({r2})).ends_with("reduced range CONST weakfloat must be weakint or int32 (rule: reduce-arg)"));
}

TEST_CASE("verify: rules same-dtype-as-src, copy-device, allreduce-arg, arg-none") {
  Fixture t;
  const UOp *c = t.ctx.get(CONTIGUOUS, I32, {t.f});
  CHECK(violation(t.sink({c})) == "'CONTIGUOUS' " + ref(c) + " int32: dtype differs from its source float32 (rule: same-dtype-as-src)");
  const UOp *cp = t.ctx.get(COPY, F32, {t.f}, Value::integer(1));
  CHECK(violation(t.sink({cp})) == "'COPY' " + ref(cp) + " float32: arg must be a device, got 1 (rule: copy-device)");
  const UOp *ar = t.ctx.get(ALLREDUCE, F32, {t.f}, Value::tuple({Value::enumMember("Ops", "ADD"), Value::integer(2)}));
  CHECK(violation(t.sink({ar})) == "'ALLREDUCE' " + ref(ar) + " float32: arg must be (reduce op, devices), got (Ops.ADD, 2) (rule: allreduce-arg)");
  const UOp *d = t.ctx.get(DETACH, F32, {t.f}, Value::integer(1));
  CHECK(violation(t.sink({d})) == "'DETACH' " + ref(d) + " float32: arg must be None, got 1 (rule: arg-none)");
}

TEST_CASE("verify: rules unshard-ranges, mselect-device, mstack-device") {
  Fixture t;
  const UOp *u = t.ctx.get(UNSHARD, F32, {t.f}, ints({0}));
  CHECK(violation(t.sink({u})) == "'UNSHARD' " + ref(u) + " float32: needs one range per sharded axis in (0,) (rule: unshard-ranges)");
  const UOp *ms = t.ctx.get(MSELECT, F32, {t.f}, Value::integer(0));
  CHECK(violation(t.sink({ms})) == "'MSELECT' " + ref(ms) + " float32: selects from a single-device value (rule: mselect-device)");
  const UOp *mk = t.ctx.get(MSTACK, F32, {t.f, t.ctx.constFloat(1.0, F32)});
  CHECK(violation(t.sink({mk})) == "'MSTACK' " + ref(mk) + " float32: every source must be on a single device (rule: mstack-device)");
  const UOp *two = t.ctx.get(MSTACK, F32, {t.f, buffer(t.ctx, 7, F32, 8, "CPU:1")});
  CHECK(errors(t.sink({t.ctx.get(MSELECT, F32, {two}, Value::integer(1))})).empty());
}

TEST_CASE("verify: rule wmma-arg") {
  Fixture t;
  const UOp *a = reshape(t.ctx, t.f, {2, 4});
  const UOp *w = t.ctx.get(WMMA, F32, {a, a, a}, ints({8, 8}));
  CHECK(violation(t.sink({w})) == "'WMMA' " + ref(w) + " float32: arg must be a 5-tuple (rule: wmma-arg)");
}

TEST_CASE("verify: rule dtype-derived") {
  Fixture t;
  const UOp *r = t.ctx.get(RESHAPE, I32, {t.f, shapeArg(t.ctx, {2, 4})});
  CHECK(violation(t.sink({r})) == "'RESHAPE' " + ref(r) + " int32: dtype should be float32 (derived from its sources and arg) (rule: dtype-derived)");
  const UOp *m = t.ctx.get(MUL, dtypes::WeakFloat, {t.ctx.constFloat(2.0), t.ctx.constInt(3)});
  CHECK(errors(t.sink({m})).empty());
  const UOp *m2 = t.ctx.get(MUL, WI, {t.ctx.constFloat(2.0), t.ctx.constInt(3)});
  CHECK(violation(t.sink({m2})).ends_with("dtype should be weakfloat (derived from its sources and arg) (rule: dtype-derived)"));
}

TEST_CASE("verify: rule shape-derivable reports where the shape breaks") {
  Fixture t;
  const UOp *bad = reshape(t.ctx, t.f, {3});
  const UOp *user = t.ctx.get(NEG, F32, {t.ctx.get(ADD, F32, {bad, t.g})});
  CHECK(violation(t.sink({user})) == "'RESHAPE' " + ref(bad) + " float32: bad reshape: [8] -> [3] (rule: shape-derivable)");
  const UOp *add = t.ctx.get(ADD, F32, {reshape(t.ctx, t.f, {2, 4}), reshape(t.ctx, t.g, {4, 2})});
  CHECK(violation(t.sink({add})) == "'ADD' " + ref(add) +
                                        " float32: shape mismatch: objects cannot be broadcast to a single shape: [2, 4], [4, 2] (rule: shape-derivable)");
}

TEST_CASE("verify: diagnostics are located, counted and capped") {
  Fixture t;
  const UOp *a = t.ctx.get(ADD, F32, {t.f, t.n}), *b = t.ctx.get(SUB, F32, {t.f, t.n}), *c = t.ctx.get(MUL, F32, {t.f, t.n});
  t.ctx.setLocation(a, Location{"g.json", 0, 0, 41});
  Graph g;
  g.roots = {t.sink({a, b, c})};
  Status st = verifyGraph(g);
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().loc.nodeId == 41);
  CHECK(st.error().message.starts_with("'ADD' %41 float32: operand BUFFER int32"));
  REQUIRE(st.error().notes.size() == 1);
  CHECK(st.error().notes[0] == "2 more violations found");
  CHECK(st.error().str().starts_with("g.json: node 41: error: 'ADD' %41"));
  CHECK(verify(g.roots, {.maxErrors = 2}).size() == 2);
  CHECK(verifyGraph(g, {.maxErrors = 2}).error().notes[0] == "at least 1 more violation found");
  g.roots = {t.sink({t.f})};
  CHECK(verifyGraph(g).ok());
}

TEST_CASE("verify: malformed nodes give diagnostics, not crashes") {
  Fixture t;
  const UOp *nodt = t.ctx.get(ADD, DType(), {t.f, t.g});
  CHECK(violation(t.sink({t.ctx.get(WHERE, F32, {nodt, t.f, t.g})})) == "'ADD' " + ref(nodt) + " has no dtype (rule: dtype-known)");
  // Wrong source counts stop the node's other rules (which would read missing sources).
  for (Op op : {WHERE, CMPLT, CAST, RANGE, BUFFER, PARAM, INDEX, STORE, LOAD, AFTER, CALL, GETTUPLE, PAD, RESHAPE, UNSHARD}) {
    const UOp *u = t.ctx.get(op, F32, {});
    std::vector<std::string> e = errors(t.sink({u}));
    REQUIRE(e.size() == 1);
    CHECK(e[0].find("(rule: src-count)") != std::string::npos);
  }
  // Huge sizes do not overflow silently.
  const UOp *big = reshape(t.ctx, buffer(t.ctx, 9, F32, int64_t(1) << 62), {int64_t(1) << 62, 4});
  CHECK(violation(t.sink({big})).ends_with("(rule: shape-derivable)"));
}
