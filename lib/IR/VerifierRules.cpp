//===- VerifierRules.cpp - tinygrad's spec rules as named predicates ------===//
//
// The rules of tinygrad/uop/spec.py, restated one per function: spec_shared
// and spec_tensor everywhere (tinygrad checks both the callified function and
// each kernel AST against spec_tensor), with the few relaxations of
// spec_kernel_graph outside kernel bodies (AFTER over MSTACK/MSELECT), and a
// few restrictions inside kernel bodies that follow from what a kernel is
// (no tensor-only ops, scratch BUFFERs only, STOREs into an INDEX or PARAM).
//
// tinygrad's matcher takes the first rule with an opinion; here every rule
// whose ops match must hold, which gives each violation its own name. Where
// tinygrad's first-match order exempts an op from a later rule (a WHERE is
// not checked by the generic ALU operand rule), the later rule says so.
//
//===----------------------------------------------------------------------===//
#include "IR/VerifierRules.h"

#include <algorithm>

namespace tgc::verifier {

namespace {

using enum Op;

std::string dt(DType d) { return d ? std::string(d.name()) : "?"; }
std::string on(const UOp *u) { return std::string(opName(u->op())) + " " + dt(u->dtype()); }

/// tinygrad's `base`: through movement ops and DETACH.
const UOp *base(const UOp *u) {
  while ((u->isIn(group::Movement) || u->is(DETACH)) && u->numSrc()) u = u->src(0);
  return u;
}
bool isInvalid(const UOp *u) {
  const UOp *b = base(u);
  return b->is(CONST) && b->arg().kind() == Value::Kind::Invalid;
}
/// tinygrad's matches_dtype: equal, or an Invalid (which matches every dtype).
bool matches(const UOp *x, DType d) { return x->dtype() == d || isInvalid(x); }
bool matchesOrWeak(const UOp *x, DType d) { return matches(x, d) || x->dtype().isWeak(); }

bool isDevice(const Value &d) {
  if (d.kind() == Value::Kind::Str) return true;
  return d.isSequence() && std::all_of(d.items().begin(), d.items().end(),
                                       [](const Value &s) { return s.kind() == Value::Kind::Str; });
}

const Value *paramField(const UOp *u, std::string_view name) {
  return u->arg().isObj("ParamArg") ? u->arg().field(name) : nullptr;
}

/// A Variable: a 0-d ALU BUFFER carrying a value range.
bool isVariable(const UOp *u) {
  const Value *vr = paramField(u, "vmin_vmax");
  return u->is(BUFFER) && vr && !vr->isNone() && u->addrspace() == AddrSpace::ALU && u->shape() &&
         u->shape()->empty();
}

std::string srcOps(OpSet ops) {
  std::string s;
  ops.forEach([&](Op o) { s += (s.empty() ? "" : ", ") + std::string(opName(o)); });
  return "{" + s + "}";
}

// --- structure ----------------------------------------------------------------

/// Ops that may appear outside kernel bodies: those spec_tensor, spec_shared or
/// spec_kernel_graph accept there.
constexpr OpSet kOuterOps =
    group::ALU | group::Movement |
    OpSet{SINK, NOOP, CONST, STACK, CAST, BITCAST, RANGE, INDEX, END, PARAM, BUFFER, GROUP, AFTER, CUSTOM,
          CUSTOMI, CALL, PYLITERAL, BARRIER, INS, LOAD, STORE, WMMA, CUSTOM_FUNCTION, FUNCTION, TUPLE, GETTUPLE,
          SPECIAL, REDUCE, COPY, ALLREDUCE, UNSHARD, MSELECT, MSTACK, DETACH, CONTIGUOUS, CONTIGUOUS_BACKWARD,
          STAGE, LINEAR, SOURCE, BINARY, PROGRAM};
/// Tensor-level ops that have no meaning inside a kernel body.
constexpr OpSet kTensorOnlyOps{COPY,     CONTIGUOUS, CONTIGUOUS_BACKWARD, DETACH,  ALLREDUCE, MSELECT, MSTACK,
                               STAGE,    FUNCTION,   TUPLE,               GETTUPLE, PROGRAM,  SOURCE,  BINARY,
                               CUSTOM_FUNCTION};
/// Program-level control flow (spec_program): only in kernels, after linearization.
constexpr OpSet kProgramOps{IF, ENDIF};

std::string outerOpAllowed(const UOp *u) {
  if (u->isIn(kProgramOps)) return "program-level op is not allowed outside a kernel";
  return kOuterOps.contains(u->op()) ? "" : "op is not allowed outside a kernel body";
}
std::string kernelOpAllowed(const UOp *u) {
  if (!kOuterOps.contains(u->op()) && !u->isIn(kProgramOps)) return "op is not allowed in a kernel body";
  return kTensorOnlyOps.contains(u->op()) ? "tensor-level op is not allowed in a kernel body" : "";
}

std::string srcCount(const UOp *u) {
  size_t n = u->numSrc();
  auto exactly = [&](size_t k) { return n == k ? "" : "expects " + std::to_string(k) + " sources, got " + std::to_string(n); };
  auto atLeast = [&](size_t k) {
    return n >= k ? "" : "expects at least " + std::to_string(k) + " source" + (k > 1 ? "s" : "") + ", got " + std::to_string(n);
  };
  if (u->isIn(OpSet{CONST, SOURCE, BINARY})) return exactly(0);
  if (u->isIn(group::Unary | OpSet{CAST, BITCAST, PERMUTE, FLIP, COPY, ALLREDUCE, DETACH, CONTIGUOUS,
                                   CONTIGUOUS_BACKWARD, MSELECT, GETTUPLE, PARAM, BUFFER, SPECIAL}))
    return exactly(1);
  if (u->isIn(group::Binary | OpSet{RESHAPE, EXPAND})) return exactly(2);
  if (u->isIn(group::Ternary | OpSet{PAD, SHRINK, WMMA})) return exactly(3);
  if (u->isIn({RANGE, INDEX, END, AFTER, REDUCE, STAGE, CALL, FUNCTION, MSTACK, UNSHARD})) return atLeast(1);
  if (u->is(LOAD)) return n == 1 || n == 3 ? "" : "expects (index) or (index, alt, gate), got " + std::to_string(n) + " sources";
  if (u->is(STORE)) return n == 2 || n == 3 ? "" : "expects (target, value) or (target, value, gate), got " + std::to_string(n) + " sources";
  if (u->is(PROGRAM)) return n >= 1 && n <= 4 ? "" : "expects 1 to 4 sources, got " + std::to_string(n);
  if (u->is(IF)) return exactly(2);
  if (u->is(ENDIF)) return exactly(1);
  return "";
}

/// The ops tinygrad gives dtype void unconditionally.
constexpr OpSet kVoidOps{STORE, LINEAR, SINK,     PROGRAM,         SOURCE,       END,     BARRIER, GROUP,
                         IF,    ENDIF,  TUPLE,    FUNCTION,        CUSTOM_FUNCTION, REWRITE_ERROR};
std::string voidOp(const UOp *u) {
  if (u->isIn(kVoidOps) && !u->dtype().isVoid()) return "must be void, got " + dt(u->dtype());
  if (u->is(CALL) && u->src(0)->dtype().isVoid() && !u->dtype().isVoid())
    return "a CALL of a void body must be void, got " + dt(u->dtype());
  return "";
}

// --- dtypes of values -----------------------------------------------------------

std::string constValueKind(const UOp *u) {
  const Value &v = u->arg();
  DType d = u->dtype();
  if (v.kind() == Value::Kind::Invalid) return d.isBool() ? "" : "Invalid must be a bool CONST, got " + dt(d);
  bool ok = d.isBool() ? v.isBool() : d.isInt() ? v.isIntegral() : d.isFloat() ? v.isFloat() : false;
  return ok ? "" : "value " + v.toString() + " does not fit dtype " + dt(d);
}

std::string stackElements(const UOp *u) {
  if (!u->numSrc()) return u->dtype().isVoid() ? "" : "an empty STACK must be void, got " + dt(u->dtype());
  const Shape *first = u->src(0)->shape();
  for (const UOp *s : u->src()) {
    const Shape *sh = s->shape();
    if ((sh == nullptr) != (first == nullptr) || (sh && *sh != *first))
      return "elements must have equal shapes, got " + (first ? shapeStr(*first) : "none") + " and " +
             (sh ? shapeStr(*sh) : "none");
    if (!matchesOrWeak(s, u->dtype())) return "element " + on(s) + " does not match the STACK dtype " + dt(u->dtype());
  }
  return "";
}

std::string whereCondBool(const UOp *u) {
  return u->src(0)->dtype().isBool() ? "" : "condition must be bool, got " + dt(u->src(0)->dtype());
}
std::string whereBranches(const UOp *u) {
  for (size_t i = 1; i < 3; ++i)
    if (!matchesOrWeak(u->src(i), u->dtype()))
      return "branch " + std::to_string(i) + " is " + dt(u->src(i)->dtype()) + ", expected " + dt(u->dtype());
  return "";
}

std::string comparisonBool(const UOp *u) {
  return u->dtype().isBool() ? "" : "a comparison must be bool, got " + dt(u->dtype());
}
std::string comparisonOperands(const UOp *u) {
  const UOp *x = u->src(0), *y = u->src(1);
  if (matches(x, y->dtype()) || matches(y, x->dtype()) || x->dtype().isWeak() || y->dtype().isWeak()) return "";
  return "operands " + dt(x->dtype()) + " and " + dt(y->dtype()) + " differ";
}

std::string bitwiseNotFloat(const UOp *u) {
  for (const UOp *s : u->src())
    if (s->dtype().isFloat()) return "bitwise operand " + on(s) + " is a float";
  return "";
}

std::string shiftOperands(const UOp *u) {
  const UOp *x = u->src(0), *c = u->src(1);
  if (!matches(x, u->dtype()) && x->dtype() != dtypes::WeakInt)
    return "shifted value is " + dt(x->dtype()) + ", expected " + dt(u->dtype());
  if (!matches(c, u->dtype()) && c->dtype() != dtypes::UInt32 && c->dtype() != dtypes::WeakInt && !isInvalid(x))
    return "shift count is " + dt(c->dtype()) + ", expected " + dt(u->dtype()) + ", uint32 or weakint";
  return "";
}

std::string divModInt(const UOp *u) {
  if (u->dtype().isInt()) return "";
  for (const UOp *s : u->src())
    if (isInvalid(s)) return "";
  return "integer division/modulo needs an int dtype, got " + dt(u->dtype());
}

/// Ops that tinygrad's generic ALU operand rule never reaches (an earlier rule decides them).
constexpr OpSet kOwnOperandRules = group::Comparison | group::FloatUnary | OpSet{WHERE, SHL, SHR};
std::string aluOperands(const UOp *u) {
  if (u->isIn(kOwnOperandRules)) return "";
  for (const UOp *s : u->src())
    if (!matchesOrWeak(s, u->dtype())) return "operand " + on(s) + " does not match the result dtype " + dt(u->dtype());
  return "";
}

std::string transcendentalFloat(const UOp *u) {
  return u->dtype().isFloat() || isInvalid(u->src(0)) ? "" : "result must be a float, got " + dt(u->dtype());
}

std::string castArg(const UOp *u) {
  if (u->arg().kind() != Value::Kind::DType) return "arg must be a dtype, got " + u->arg().toString();
  return u->arg().getDType() == u->dtype() ? "" : "arg " + dt(u->arg().getDType()) + " differs from the node dtype";
}

std::string dtypeDerived(const UOp *u) {
  std::optional<DType> d = derivedDType(u);
  return !d || *d == u->dtype() ? "" : "dtype should be " + dt(*d) + " (derived from its sources and arg)";
}

// --- loops and memory -----------------------------------------------------------

std::string rangeBound(const UOp *u) {
  return matches(u->src(0), u->dtype()) ? "" : "bound is " + dt(u->src(0)->dtype()) + ", expected " + dt(u->dtype());
}
std::string rangeArg(const UOp *u) {
  const Value &a = u->arg();
  bool ok = a.isSequence() && a.size() >= 2 && a[a.size() - 1].isEnum("AxisType") &&
            std::all_of(a.items().begin(), a.items().end() - 1, [](const Value &v) { return v.isInt(); });
  return ok ? "" : "arg must be (axis ids..., AxisType), got " + a.toString();
}

std::string indexInt(const UOp *u) {
  for (size_t i = 1; i < u->numSrc(); ++i)
    if (!u->src(i)->dtype().isInt() && !isInvalid(u->src(i))) return "index " + on(u->src(i)) + " is not an int";
  return "";
}

std::string endRanges(const UOp *u) {
  // A loop-ended END(x, void RANGE, bool) closes the loop with a backedge condition.
  if (u->numSrc() == 3 && u->src(1)->is(RANGE) && u->src(1)->dtype().isVoid() && u->src(2)->dtype().isBool()) return "";
  for (size_t i = 1; i < u->numSrc(); ++i)
    if (!u->src(i)->is(RANGE)) return "closes " + on(u->src(i)) + ", which is not a RANGE";
  return "";
}

std::string paramArg(const UOp *u) {
  if (!u->arg().isObj("ParamArg")) return "arg must be a ParamArg, got " + u->arg().toString();
  const Value *slot = paramField(u, "slot"), *d = paramField(u, "dtype");
  if (!slot || !slot->isInt()) return "ParamArg slot must be an int";
  if (!d || d->kind() != Value::Kind::DType) return "ParamArg dtype must be a dtype";
  if (d->getDType() != u->dtype()) return "ParamArg dtype " + dt(d->getDType()) + " differs from the node dtype";
  const Value *as = paramField(u, "addrspace");
  if (as && !as->isNone() && !(as->isEnum("AddrSpace") && addrSpaceFromName(as->str())))
    return "ParamArg addrspace must be an AddrSpace, got " + as->toString();
  return "";
}

std::string storageNotWeak(const UOp *u) {
  // An ALU PARAM/BUFFER is a scalar variable, not storage; only storage needs a width.
  if (u->addrspace() == AddrSpace::ALU || !u->dtype().isWeak()) return "";
  return "storage cannot have the weak dtype " + dt(u->dtype());
}

std::string bufferOuter(const UOp *u) {
  std::optional<AddrSpace> as = u->addrspace();
  const Value *dev = paramField(u, "device");
  if (as == AddrSpace::GLOBAL) {
    if (!matches(u->src(0), dtypes::WeakInt)) return "a GLOBAL BUFFER's size must be weakint, got " + dt(u->src(0)->dtype());
    if (!dev || !isDevice(*dev)) return "a GLOBAL BUFFER needs a device, got " + (dev ? dev->toString() : "none");
    return "";
  }
  if (as == AddrSpace::ALU) {
    if (!isVariable(u)) return "an ALU BUFFER must be a Variable (0-d, with vmin_vmax)";
    return !dev || dev->isNone() ? "" : "a Variable has no device, got " + dev->toString();
  }
  if (as == AddrSpace::LOCAL || as == AddrSpace::REG) return "";
  return "BUFFER has no addrspace";
}
std::string bufferKernel(const UOp *u) {
  std::optional<AddrSpace> as = u->addrspace();
  if (as == AddrSpace::LOCAL || as == AddrSpace::REG) return "";
  return "a BUFFER in a kernel body must be LOCAL or REG scratch, got " +
         (as ? std::string(addrSpaceName(*as)) : std::string("none"));
}

std::string groupSrcs(const UOp *u) {
  constexpr OpSet ok{GROUP, STORE, NOOP, INS, END};
  for (const UOp *s : u->src())
    if (!s->isIn(ok)) return "groups " + on(s) + ", expected one of " + srcOps(ok);
  return "";
}

/// AFTER orders a view of storage: a movement op or one of `ok`.
std::string afterSrc(const UOp *u, OpSet ok) {
  const UOp *x = u->src(0);
  if (!x->isIn(ok | group::Movement)) return "orders " + on(x) + ", expected a movement op or one of " + srcOps(ok);
  return matches(x, u->dtype()) ? "" : "dtype differs from its source " + dt(x->dtype());
}
constexpr OpSet kAfterTensor{PARAM, BUFFER, CONTIGUOUS, INDEX, AFTER, UNSHARD, BITCAST, INS};
// Before callify a tensor graph may also assign to a COPY: tinygrad's random
// counter is a list tensor copied to the device, and `counter.assign(...)`
// stores into that COPY, which callify realizes into a new buffer first.
std::string afterOuter(const UOp *u) { return afterSrc(u, kAfterTensor | OpSet{MSTACK, MSELECT, COPY}); }
std::string afterKernel(const UOp *u) { return afterSrc(u, kAfterTensor); }

/// Peel views down to what a STORE writes into.
const UOp *storeBase(const UOp *u, OpSet peel) {
  while (u->isIn(peel) && u->numSrc()) u = u->src(0);
  return u;
}
std::string storeTargetOuter(const UOp *u) {
  constexpr OpSet ok{BUFFER, PARAM, AFTER, INDEX, STAGE, MSTACK, MSELECT, NOOP, COPY}; // COPY: see afterOuter
  const UOp *b = storeBase(u->src(0), group::Movement | OpSet{DETACH, BITCAST, UNSHARD, CONTIGUOUS_BACKWARD});
  return b->isIn(ok) ? "" : "stores into " + on(b) + ", which is not storage " + srcOps(ok);
}
std::string storeTargetKernel(const UOp *u) {
  // SHRINK is both a movement op and an addressable view: it ends the peeling.
  constexpr OpSet ok{INDEX, SHRINK, PARAM, BUFFER, AFTER};
  constexpr OpSet peel{RESHAPE, EXPAND, PERMUTE, PAD, FLIP, CAST};
  const UOp *b = storeBase(u->src(0), peel);
  return b->isIn(ok) ? "" : "stores into " + on(b) + ", expected one of " + srcOps(ok);
}
bool isIndexLike(const UOp *u) {
  if (u->is(CAST) && u->numSrc()) u = u->src(0);
  return u->isIn({INDEX, SHRINK});
}
std::string storeGate(const UOp *u) {
  if (u->numSrc() != 3) return "";
  if (!isIndexLike(u->src(0))) return "a gated STORE must write through an INDEX or SHRINK";
  return u->src(2)->dtype().isBool() ? "" : "the gate must be bool, got " + dt(u->src(2)->dtype());
}
std::string loadOperands(const UOp *u) {
  if (!isIndexLike(u->src(0))) return "loads from " + on(u->src(0)) + ", expected an INDEX or SHRINK";
  if (u->numSrc() == 3) {
    if (!matches(u->src(1), u->dtype())) return "the alternative is " + dt(u->src(1)->dtype()) + ", expected " + dt(u->dtype());
    if (!u->src(2)->dtype().isBool()) return "the gate must be bool, got " + dt(u->src(2)->dtype());
  }
  return "";
}

std::string ifSrcs(const UOp *u) {
  if (!u->src(0)->dtype().isBool()) return "the gate must be bool, got " + dt(u->src(0)->dtype());
  return u->src(1)->isIn({CAST, INDEX, SHRINK}) ? "" : "the second source must be the gated INDEX, got " + on(u->src(1));
}
std::string endifSrc(const UOp *u) { return u->src(0)->is(IF) ? "" : "closes " + on(u->src(0)) + ", not an IF"; }

// --- calls ----------------------------------------------------------------------

std::string callInfo(const UOp *u) {
  return u->arg().isObj("CallInfo") ? "" : "arg must be a CallInfo, got " + u->arg().toString();
}
std::string callBody(const UOp *u) {
  // A void CALL runs an opaque body (a COPY body keeps its value's dtype); any
  // other callee is an address, which must be uint64.
  const UOp *body = u->src(0);
  constexpr OpSet ok{SINK, LINEAR, PROGRAM, COPY, CUSTOM_FUNCTION};
  if (u->dtype().isVoid() && body->isIn(ok)) return "";
  if (!body->dtype().isVoid())
    return body->dtype() == dtypes::UInt64 ? "" : "a called address must be uint64, got " + dt(body->dtype());
  return "calls " + on(body) + ", expected one of " + srcOps(ok);
}
std::string functionBody(const UOp *u) {
  return u->src(0)->is(TUPLE) ? "" : "the body must be a TUPLE, got " + on(u->src(0));
}
std::string getTuple(const UOp *u) {
  const UOp *x = u->src(0);
  const UOp *t = x->is(FUNCTION) && x->numSrc() ? x->src(0) : x;
  if (!t->is(TUPLE)) return "selects from " + on(x) + ", expected a TUPLE or a FUNCTION of one";
  if (!u->arg().isInt() || u->arg().getInt() < 0 || size_t(u->arg().getInt()) >= t->numSrc())
    return "index " + u->arg().toString() + " is out of range for a TUPLE of " + std::to_string(t->numSrc());
  const UOp *e = t->src(u->arg().getInt());
  return matches(e, u->dtype()) ? "" : "selects a " + dt(e->dtype()) + " element";
}
std::string programSrcs(const UOp *u) {
  constexpr Op order[] = {SINK, LINEAR, SOURCE, BINARY};
  for (size_t i = 0; i < u->numSrc(); ++i)
    if (!u->src(i)->is(order[i])) return "source " + std::to_string(i) + " must be " + std::string(opName(order[i]));
  return "";
}
std::string binaryBytes(const UOp *u) {
  if (u->dtype() != dtypes::UInt8) return "must be uint8, got " + dt(u->dtype());
  return u->arg().kind() == Value::Kind::Bytes ? "" : "arg must be bytes";
}
std::string customFunctionArg(const UOp *u) {
  return u->arg().kind() == Value::Kind::Str ? "" : "arg must be a name string";
}

// --- tensor-level ops -------------------------------------------------------------

std::string special(const UOp *u) {
  DType b = u->src(0)->dtype();
  if (b != dtypes::WeakInt && b != dtypes::Int32) return "bound must be weakint (or int32 after lowering), got " + dt(b);
  if (!matches(u->src(0), u->dtype())) return "dtype differs from the bound " + dt(b);
  return u->arg().kind() == Value::Kind::Str ? "" : "arg must be a name string";
}
std::string padShrinkOperands(const UOp *u) {
  const Shape *a = u->src(1)->shape(), *b = u->src(2)->shape();
  if (a && b && *a == *b) return "";
  return "offsets and sizes must have equal shapes, got " + (a ? shapeStr(*a) : "none") + " and " + (b ? shapeStr(*b) : "none");
}
std::string movementTupleArg(const UOp *u) {
  return u->arg().isSequence() ? "" : "arg must be a tuple, got " + u->arg().toString();
}
bool isReduceOp(const Value &v) {
  if (!v.isEnum("Ops")) return false;
  std::optional<Op> op = opFromName(v.str());
  return op && group::Reduce.contains(*op);
}
std::string reduceArg(const UOp *u) {
  const Value &a = u->arg();
  if (!a.isSequence() || a.size() != 2 || !isReduceOp(a[0]) || !a[1].isInt())
    return "arg must be (Ops.ADD|MUL|MAX, axis count), got " + a.toString();
  for (size_t i = 1; i < u->numSrc(); ++i)
    if (u->src(i)->dtype() != dtypes::WeakInt && u->src(i)->dtype() != dtypes::Int32)
      return "reduced range " + on(u->src(i)) + " must be weakint or int32";
  return "";
}
std::string sameDTypeAsSrc(const UOp *u) {
  return matches(u->src(0), u->dtype()) ? "" : "dtype differs from its source " + dt(u->src(0)->dtype());
}
std::string copyDevice(const UOp *u) {
  return isDevice(u->arg()) ? "" : "arg must be a device, got " + u->arg().toString();
}
std::string allreduceArg(const UOp *u) {
  const Value &a = u->arg();
  return a.isSequence() && a.size() == 2 && isReduceOp(a[0]) && isDevice(a[1]) ? "" : "arg must be (reduce op, devices), got " + a.toString();
}
std::string unshard(const UOp *u) {
  const Value &a = u->arg();
  if (!a.isSequence() || u->numSrc() != a.size() + 1) return "needs one range per sharded axis in " + a.toString();
  for (const Value &v : a.items())
    if (!v.isInt()) return "sharded axes must be ints";
  for (size_t i = 1; i < u->numSrc(); ++i)
    if (!u->src(i)->dtype().isWeak()) return "shard range " + on(u->src(i)) + " must be weak";
  return "";
}
std::string mselectDevice(const UOp *u) {
  const Value &d = u->src(0)->device();
  if (!d.isSequence()) return "selects from a single-device value";
  return u->arg().isInt() && u->arg().getInt() >= 0 && size_t(u->arg().getInt()) < d.size() ? "" : "device index out of range";
}
std::string mstackDevice(const UOp *u) {
  bool allStr = std::all_of(u->src().begin(), u->src().end(),
                            [](const UOp *s) { return s->device().kind() == Value::Kind::Str; });
  bool allSameVirtual = std::all_of(u->src().begin(), u->src().end(), [&](const UOp *s) { return s == u->src(0); }) &&
                        u->src(0)->device().isNone();
  return allStr || allSameVirtual ? "" : "every source must be on a single device";
}
std::string argNone(const UOp *u) { return u->arg().isNone() ? "" : "arg must be None, got " + u->arg().toString(); }
std::string wmmaArg(const UOp *u) {
  return u->arg().isSequence() && u->arg().size() == 5 ? "" : "arg must be a 5-tuple";
}

// --- shapes -------------------------------------------------------------------------

std::string shapeDerivable(const UOp *u) {
  const std::string &err = u->shapeError();
  if (err.empty()) return "";
  // Report where the shape first goes wrong, not at every user below it.
  for (const UOp *s : u->src())
    if (!s->shapeError().empty()) return "";
  return err;
}

constexpr OpSet kTranscendental = group::FloatUnary;

const Rule kRules[] = {
    {"op-allowed", {}, Outer, outerOpAllowed},
    {"op-allowed", {}, Kernel, kernelOpAllowed},
    {"src-count", {}, AnyRegion, srcCount},
    {"void-op", {}, AnyRegion, voidOp},
    {"const-value-kind", {CONST}, AnyRegion, constValueKind},
    {"stack-elements", {STACK}, AnyRegion, stackElements},
    {"where-cond-bool", {WHERE}, AnyRegion, whereCondBool},
    {"where-branches", {WHERE}, AnyRegion, whereBranches},
    {"cmp-bool", group::Comparison, AnyRegion, comparisonBool},
    {"cmp-operands", group::Comparison, AnyRegion, comparisonOperands},
    {"bitwise-no-float", {AND, OR, XOR, SHL, SHR}, AnyRegion, bitwiseNotFloat},
    {"shift-operands", {SHL, SHR}, AnyRegion, shiftOperands},
    {"divmod-int", {CDIV, CMOD, FLOORDIV, FLOORMOD}, AnyRegion, divModInt},
    {"transcendental-float", kTranscendental, AnyRegion, transcendentalFloat},
    {"alu-operands", group::ALU, AnyRegion, aluOperands},
    {"cast-arg", {CAST, BITCAST}, AnyRegion, castArg},
    {"range-bound", {RANGE}, AnyRegion, rangeBound},
    {"range-arg", {RANGE}, AnyRegion, rangeArg},
    {"index-int", {INDEX}, AnyRegion, indexInt},
    {"end-ranges", {END}, AnyRegion, endRanges},
    {"param-arg", {PARAM, BUFFER}, AnyRegion, paramArg},
    {"storage-not-weak", {PARAM, BUFFER}, AnyRegion, storageNotWeak},
    {"buffer-kind", {BUFFER}, Outer, bufferOuter},
    {"buffer-kind", {BUFFER}, Kernel, bufferKernel},
    {"group-srcs", {GROUP}, AnyRegion, groupSrcs},
    {"after-src", {AFTER}, Outer, afterOuter},
    {"after-src", {AFTER}, Kernel, afterKernel},
    {"store-target", {STORE}, Outer, storeTargetOuter},
    {"store-target", {STORE}, Kernel, storeTargetKernel},
    {"store-gate", {STORE}, AnyRegion, storeGate},
    {"load-operands", {LOAD}, AnyRegion, loadOperands},
    {"if-srcs", {IF}, Kernel, ifSrcs},
    {"endif-src", {ENDIF}, Kernel, endifSrc},
    {"call-info", {CALL, FUNCTION}, AnyRegion, callInfo},
    {"call-body", {CALL}, AnyRegion, callBody},
    {"function-body", {FUNCTION}, AnyRegion, functionBody},
    {"gettuple-index", {GETTUPLE}, AnyRegion, getTuple},
    {"program-srcs", {PROGRAM}, AnyRegion, programSrcs},
    {"binary-bytes", {BINARY}, AnyRegion, binaryBytes},
    {"custom-function-arg", {CUSTOM_FUNCTION}, AnyRegion, customFunctionArg},
    {"special", {SPECIAL}, AnyRegion, special},
    {"pad-shrink-operands", {PAD, SHRINK}, AnyRegion, padShrinkOperands},
    {"movement-arg", {PERMUTE, FLIP}, AnyRegion, movementTupleArg},
    {"reduce-arg", {REDUCE}, AnyRegion, reduceArg},
    {"same-dtype-as-src", {COPY, ALLREDUCE, UNSHARD, DETACH, CONTIGUOUS, CONTIGUOUS_BACKWARD}, AnyRegion, sameDTypeAsSrc},
    {"copy-device", {COPY}, AnyRegion, copyDevice},
    {"allreduce-arg", {ALLREDUCE}, AnyRegion, allreduceArg},
    {"unshard-ranges", {UNSHARD}, AnyRegion, unshard},
    {"mselect-device", {MSELECT}, AnyRegion, mselectDevice},
    {"mstack-device", {MSTACK}, AnyRegion, mstackDevice},
    {"arg-none", {DETACH, CONTIGUOUS, CONTIGUOUS_BACKWARD}, AnyRegion, argNone},
    {"wmma-arg", {WMMA}, AnyRegion, wmmaArg},
    {"dtype-derived", {}, AnyRegion, dtypeDerived},
    {"shape-derivable", {}, AnyRegion, shapeDerivable},
};

DType promote(std::span<const UOp *const> srcs) {
  std::vector<DType> ds;
  for (const UOp *s : srcs) ds.push_back(s->dtype());
  bool same = std::all_of(ds.begin(), ds.end(), [&](DType d) { return d == ds[0]; });
  return same ? ds[0] : leastUpperDType(ds);
}

} // namespace

std::span<const Rule> rules() { return kRules; }

std::optional<DType> derivedDType(const UOp *u) {
  if (u->isIn(kVoidOps)) return dtypes::Void;
  size_t n = u->numSrc();
  switch (u->op()) {
  case CALL: return n && u->src(0)->dtype().isVoid() ? std::optional(dtypes::Void) : std::nullopt;
  case CUSTOM: case CUSTOMI: case PYLITERAL: case INS: case NOOP: case CONST: return std::nullopt;
  case INDEX: {
    if (!n) return std::nullopt;
    // An image access is always float, whatever the storage dtype.
    const UOp *b = u->src(0);
    const Shape *s = b->is(PARAM) ? b->shape() : nullptr;
    if (s && s->size() == 3 && s->back().isStatic() && s->back().value == 4) return dtypes::Float32;
    return b->dtype();
  }
  case CMPLT: case CMPNE: case CMPEQ: return dtypes::Bool;
  case WHERE:
    if (n != 3 || !u->src(0)->dtype().isBool()) return std::nullopt;
    return promote(u->src().subspan(1));
  case STACK: return n ? promote(u->src()) : dtypes::Void;
  case WMMA: return n == 3 ? std::optional(u->src(2)->dtype()) : std::nullopt;
  case GETTUPLE: {
    if (n != 1) return std::nullopt;
    const UOp *t = u->src(0)->is(FUNCTION) && u->src(0)->numSrc() ? u->src(0)->src(0) : u->src(0);
    if (!t->is(TUPLE) || !u->arg().isInt() || u->arg().getInt() < 0 || size_t(u->arg().getInt()) >= t->numSrc())
      return std::nullopt;
    return t->src(u->arg().getInt())->dtype();
  }
  case GETADDR: return dtypes::UInt64;
  case SHL: case SHR:
    for (const UOp *s : u->src())
      if (!s->dtype().isInt() && !isInvalid(s)) return std::nullopt;
    return n ? std::optional(u->src(0)->dtype()) : std::nullopt;
  case BUFFER: case PARAM: {
    const Value *d = paramField(u, "dtype");
    return d && d->kind() == Value::Kind::DType ? std::optional(d->getDType()) : std::nullopt;
  }
  case BINARY: return dtypes::UInt8;
  case CAST: case BITCAST:
    return u->arg().kind() == Value::Kind::DType ? std::optional(u->arg().getDType()) : std::nullopt;
  default: break;
  }
  if (!n) return std::nullopt;
  if (u->isIn(kTranscendental)) return isInvalid(u->src(0)) ? dtypes::Bool : leastUpperFloat(u->src(0)->dtype());
  constexpr OpSet passthrough = group::Unary | group::Movement |
                                OpSet{LOAD, UNSHARD, REDUCE, AFTER, RANGE, CONTIGUOUS, CONTIGUOUS_BACKWARD, COPY,
                                      STAGE, DETACH, MSTACK, MSELECT, ALLREDUCE, SPECIAL};
  if (u->isIn(passthrough)) return u->src(0)->dtype();
  if (u->isIn(group::Broadcastable)) return promote(u->src());
  return std::nullopt;
}

} // namespace tgc::verifier
