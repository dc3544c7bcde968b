//===- Sugar.h - tinygrad's UOp sugar for the scheduling passes -*- C++ -*-===//
//
// The node constructors and queries that callify and rangeify build with, in
// tinygrad's semantics (tinygrad/uop/ops.py, tinygrad/mixin/movement.py):
// movement ops over shape-operand nodes, shaped constants, INDEX/STORE/AFTER/
// END/SINK/CALL, RANGEs and validity masks, the ParamArg/CallInfo/KernelInfo/
// BufferizeOpts arg records, base/buf_uop/has_buffer_identity, and the
// `ranges` a node is inside. Scalar arithmetic comes from IR/UOpBuilder.h.
//
// Shapes here are tinygrad's: a size is an int or symbolic over Variables
// (Dim, IR/SInt.h). Input the scheduler cannot handle is a ScheduleError,
// which the passes turn into a Diagnostic.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/Diagnostic.h"
#include "IR/GraphRewrite.h"
#include "IR/SInt.h"
#include "IR/UOp.h"
#include "IR/UOpBuilder.h"
#include "Schedule/Ranges.h"

#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace tgc::rangeify {

/// Raised inside a pass for input it cannot schedule; the pass entry points
/// catch it and return it as a Diagnostic (see asStatus).
class ScheduleError : public std::runtime_error {
public:
  explicit ScheduleError(Diagnostic d) : std::runtime_error(d.message), diag(std::move(d)) {}
  Diagnostic diag;
};
/// Raise a ScheduleError about node `at` (may be null).
[[noreturn]] void fail(const UOp *at, const std::string &msg);

/// graph_rewrite that raises a ScheduleError when the rewrite fails.
const UOp *rewrite(const UOp *root, const PatternMatcher &pm, const RewriteOptions &opts = {});
template <typename C>
  requires(!std::is_same_v<std::remove_cvref_t<C>, RewriteOptions>)
const UOp *rewrite(const UOp *root, const PatternMatcher &pm, C &ctx, const RewriteOptions &opts = {}) {
  RewriteEnv env(ctx);
  Result<const UOp *> r = graphRewrite(root, pm, env, opts);
  if (!r) throw ScheduleError(r.error());
  return *r;
}
/// tinygrad's UOp.substitute (unified mode): replace the keys of `map`,
/// following chains to a fixed point.
const UOp *substituteUnified(const UOp *root, const std::unordered_map<const UOp *, const UOp *> &map);
/// For a substitution whose keys (those not mapped to themselves) are all
/// RANGEs, as when a STAGE is inlined: true of a node whose RANGE id span
/// misses the keys', which holds no key and comes out as it went in (a
/// substitution's `unchanged` shortcut). Empty when a key is not a RANGE.
std::function<bool(const UOp *)> holdsNoRangeKey(const std::unordered_map<const UOp *, const UOp *> &map);

/// RewriteOptions for a pre-order (tinygrad bottom_up=True) rewrite.
inline RewriteOptions preOrder() {
  RewriteOptions o;
  o.bottomUp = true;
  return o;
}

// ---- shapes --------------------------------------------------------------

/// A shape as the scheduler handles it: sizes are Dims (tinygrad's sint), an
/// int or a symbolic size over Variables; IR/SInt.h has their arithmetic.
using IShape = Shape;
/// The shape, or nullptr if the node has none.
const IShape *maybeShape(const UOp *u);
/// Whether a and b have the same shape, or neither has one.
bool sameShape(const UOp *a, const UOp *b);
/// The shape; fails if the node has none.
const IShape &shapeOf(const UOp *u);
/// The shape where every size must be an int (gradients); fails on a symbolic one.
using StaticShape = std::vector<int64_t>;
const StaticShape &staticShapeOf(const UOp *u);
Dim prod(const IShape &s);
std::string shapeString(const IShape &s);
/// An int size; fails at `at` when it is symbolic.
int64_t staticDim(const Dim &d, const UOp *at);
/// A Variable's maximum for every symbolic size: what storage for it holds.
int64_t maxNumel(const IShape &s);
/// The shape with every symbolic size at its maximum (tinygrad's max_shape).
IShape maxShape(const IShape &s);

/// Index arithmetic with a size (tinygrad's `UOp op sint`): an int size is an
/// int operand, exactly as before Variables; a symbolic one is its node.
#define TGC_DIM_BINOP(OP)                                                                                            \
  inline UOpRef operator OP(UOpRef a, const Dim &b) {                                                                \
    return b.isStatic() ? a OP b.value : a OP UOpRef(b.sym);                                                         \
  }                                                                                                                  \
  inline UOpRef operator OP(const Dim &a, UOpRef b) { return a.isStatic() ? a.value OP b : UOpRef(a.sym) OP b; }
TGC_DIM_BINOP(+)
TGC_DIM_BINOP(-)
TGC_DIM_BINOP(*)
TGC_DIM_BINOP(/)
TGC_DIM_BINOP(%)
TGC_DIM_BINOP(<)
TGC_DIM_BINOP(>=)
#undef TGC_DIM_BINOP

/// tinygrad's shape_to_shape_arg: one CONST for a 1-element shape, else a STACK.
const UOp *shapeArg(Context &ctx, const IShape &s);
/// The sizes a shape operand (CONST, STACK, or a symbolic size) holds.
IShape asShape(const UOp *shapeOperand);
/// tinygrad's UOp.marg for RESHAPE/EXPAND: the shape argument.
IShape mopShape(const UOp *mop);
/// PAD/SHRINK marg: per axis (offset, size).
std::vector<std::pair<Dim, Dim>> mopPairs(const UOp *mop);
/// PERMUTE/FLIP marg as ints (FLIP: 0/1).
std::vector<int64_t> mopInts(const UOp *mop);

// ---- arg records -----------------------------------------------------------

Value axisTypeValue(std::string_view member); ///< AxisType.<member>
Value addrSpaceValue(AddrSpace a);            ///< AddrSpace.<member>
Value rangeArg(int64_t axisId, std::string_view axisType);
/// The AxisType member name of a RANGE ("WEAK", "REDUCE", ...).
std::string rangeAxisType(const UOp *range);
int64_t rangeAxisId(const UOp *range);

struct ParamFields {
  int64_t slot = 0;
  DType dtype;
  Value vminVmax;   ///< None or (min, max)
  Value multipleOf; ///< None or int
  Value name;       ///< None or str
  Value addrspace = addrSpaceValue(AddrSpace::GLOBAL); ///< enum or None
  Value axis;
  Value device;
  bool isVolatile = false;
  Value toValue() const;
  static std::optional<ParamFields> from(const Value &arg);
  /// from(arg)->slot, without copying the other fields.
  static std::optional<int64_t> slotOf(const Value &arg);
};
/// The fields of a PARAM/BUFFER's ParamArg; fails if the arg is not one.
ParamFields paramFields(const UOp *u);

Value callInfo();
Value kernelInfo(const Value &optsToApply = Value());
/// BufferizeOpts(device, addrspace, removable).
Value bufferizeOpts(const Value &device, AddrSpace addrspace, bool removable);
struct StageOpts {
  Value device;
  AddrSpace addrspace = AddrSpace::GLOBAL;
  bool removable = true;
};
StageOpts stageOpts(const UOp *stage);

// ---- node builders -----------------------------------------------------------

/// UOp(op, src, arg) with the dtype tinygrad derives (void if none).
const UOp *mk(Op op, std::vector<const UOp *> src, Value arg = {}, Value tag = {});
/// `u` rebuilt over new srcs, the dtype re-derived as graph_rewrite does.
const UOp *rebuild(const UOp *u, std::vector<const UOp *> src);

/// tinygrad's const_like: a CONST of x's dtype (or dt), EXPANDed to x's shape.
const UOp *constLike(const UOp *x, const Value &v, DType dt = DType());
const UOp *invalid(Context &ctx);
bool isInvalid(const UOp *u);

const UOp *reshape(const UOp *x, const IShape &s);     ///< x itself when the shape is unchanged
const UOp *expandMop(const UOp *x, const IShape &newAxes); ///< raw EXPAND: prepends axes
const UOp *permute(const UOp *x, const std::vector<int64_t> &order); ///< x for the identity
const UOp *flip(const UOp *x, const std::vector<bool> &axes);
const UOp *shrink(const UOp *x, const std::vector<std::pair<Dim, Dim>> &startEnd); ///< x when a no-op
const UOp *padTo(const UOp *x, const IShape &s);
const UOp *shrinkTo(const UOp *x, const IShape &s);
const UOp *flatten(const UOp *x);
/// The movement-mixin `expand`: broadcast size-1 axes / prepend axes.
const UOp *broadcastTo(const UOp *x, const IShape &s);
/// A movement op of the same kind as `mop` with the same arg, over a new src.
const UOp *replaceMopSrc(const UOp *mop, const UOp *src);

const UOp *index(const UOp *buf, const std::vector<const UOp *> &idx, Value arg = {});
const UOp *store(const UOp *target, const UOp *value);
const UOp *after(const UOp *x, const std::vector<const UOp *> &deps, Value tag = {});
const UOp *end(const UOp *x, const std::vector<const UOp *> &ranges);
const UOp *sink(Context &ctx, const std::vector<const UOp *> &src, Value arg = {});
const UOp *call(const UOp *body, const std::vector<const UOp *> &args, Value arg = callInfo());
const UOp *cast(const UOp *x, DType dt);
const UOp *contiguous(const UOp *x, Value tag = {});
const UOp *range(Context &ctx, const Dim &size, int64_t axisId, std::string_view axisType = "WEAK");
/// `x.valid(cond)`: WHERE(cond, x, Invalid).
const UOp *valid(const UOp *x, const UOp *cond);
const UOp *getIdx(const UOp *x);
const UOp *getValid(const UOp *x);

/// A fresh GLOBAL BUFFER of numel elements.
const UOp *newBuffer(Context &ctx, const Value &device, int64_t numel, DType dt, int64_t slot);
/// tinygrad's empty_like: new buffer reshaped to x's shape (dtype made strong).
const UOp *emptyLike(const UOp *x, int64_t slot);
/// A GLOBAL PARAM like tinygrad's UOp.param.
const UOp *param(Context &ctx, int64_t slot, DType dt, const IShape &shape, const Value &device,
                 const Value &addrspace = addrSpaceValue(AddrSpace::GLOBAL));

// ---- queries -------------------------------------------------------------

const UOp *base(const UOp *u);
const UOp *unshardedBase(const UOp *u);
const UOp *bufUop(const UOp *u);
bool hasBufferIdentity(const UOp *u, bool afterOk = false);
bool isVirtual(const UOp *u);
bool isVariable(const UOp *u);
bool isBoundVar(const UOp *u);
/// The device as a string if it is one ("" otherwise).
std::string deviceStr(const UOp *u);
bool deviceStartsWith(const UOp *u, std::initializer_list<std::string_view> prefixes);
/// tinygrad's broadcast_axes(src_shape, out_shape).
std::vector<size_t> broadcastAxes(const IShape &src, const IShape &out);
bool inBackwardSlice(const UOp *needle, const UOp *root, bool enterCalls = false);

} // namespace tgc::rangeify
