//===- Sugar.cpp - tinygrad's UOp sugar for the scheduling passes ---------===//
#include "Schedule/Sugar.h"

#include "IR/DTypeRules.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <unordered_set>

namespace tgc::rangeify {

void fail(const UOp *at, const std::string &msg) {
  throw ScheduleError(at ? Diagnostic::at(at, msg) : Diagnostic({}, msg));
}

const UOp *rewrite(const UOp *root, const PatternMatcher &pm, const RewriteOptions &opts) {
  Result<const UOp *> r = graphRewrite(root, pm, opts);
  if (!r) throw ScheduleError(r.error());
  return *r;
}

std::function<bool(const UOp *)> holdsNoRangeKey(const std::unordered_map<const UOp *, const UOp *> &map) {
  uint32_t lo = UINT32_MAX, hi = 0;
  for (auto [k, v] : map) {
    if (k == v) continue;
    if (!k->is(Op::RANGE)) return {};
    lo = std::min(lo, k->id());
    hi = std::max(hi, k->id());
  }
  return [lo, hi](const UOp *u) { return u->rangeIdHi() < lo || u->rangeIdLo() > hi; };
}

const UOp *substituteUnified(const UOp *root, const std::unordered_map<const UOp *, const UOp *> &map) {
  if (std::all_of(map.begin(), map.end(), [](const auto &kv) { return kv.first == kv.second; })) return root;
  Result<const UOp *> r = substituteRewrite(root, map, holdsNoRangeKey(map));
  if (!r) throw ScheduleError(r.error());
  return *r;
}

// ---- shapes ----------------------------------------------------------------

const IShape *maybeShape(const UOp *u) {
  const Shape *s = u->shape();
  if (!s && !u->shapeError().empty()) fail(u, "ill-formed shape on " + u->str() + ": " + u->shapeError());
  return s;
}

bool sameShape(const UOp *a, const UOp *b) {
  const IShape *sa = maybeShape(a), *sb = maybeShape(b);
  return sa && sb ? *sa == *sb : sa == sb;
}

const IShape &shapeOf(const UOp *u) {
  const IShape *s = maybeShape(u);
  if (!s) fail(u, "shape requested, but " + std::string(opName(u->op())) + " doesn't have a shape");
  return *s;
}

const StaticShape &staticShapeOf(const UOp *u) {
  shapeOf(u);
  if (const StaticShape *dims = u->staticShape()) return *dims;
  fail(u, "symbolic shapes are not supported here (" + u->str() + " has shape " + shapeString(shapeOf(u)) + ")");
}

Dim prod(const IShape &s) { return dimProd(s); }

int64_t staticDim(const Dim &d, const UOp *at) {
  if (!d.isStatic()) fail(at, "a symbolic size (" + dimStr(d) + ") is not supported here");
  return d.value;
}

int64_t maxNumel(const IShape &s) {
  int64_t n = 1;
  for (const Dim &d : s) n *= dimVmax(d);
  return n;
}

IShape maxShape(const IShape &s) {
  IShape out;
  for (const Dim &d : s) out.push_back(dimVmax(d));
  return out;
}

std::string shapeString(const IShape &s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + dimStr(s[i]);
  return out + (s.size() == 1 ? ",)" : ")");
}

const UOp *shapeArg(Context &ctx, const IShape &s) {
  std::vector<const UOp *> src;
  for (const Dim &x : s) src.push_back(dimUOp(ctx, x));
  if (src.size() == 1) return src[0];
  return ctx.get(Op::STACK, src.empty() ? dtypes::Void : dtypes::WeakInt, std::move(src));
}

static Dim shapeEntry(const UOp *c) {
  if (c->is(Op::CONST) && !c->arg().isInt()) fail(c, "expected an int in a shape operand, got " + c->str());
  if (!c->is(Op::CONST) && !(c->dtype() && c->dtype().isInt())) fail(c, "expected an int in a shape operand, got " + c->str());
  return dimOf(c);
}

IShape asShape(const UOp *op) {
  if (!op->is(Op::STACK)) return {shapeEntry(op)};
  IShape out;
  for (const UOp *s : op->src()) out.push_back(shapeEntry(s));
  return out;
}

IShape mopShape(const UOp *mop) {
  if (mop->numSrc() < 2) fail(mop, std::string(opName(mop->op())) + " needs a shape operand");
  return asShape(mop->src(1));
}

std::vector<std::pair<Dim, Dim>> mopPairs(const UOp *mop) {
  if (mop->numSrc() < 3) fail(mop, std::string(opName(mop->op())) + " needs offset and size operands");
  IShape off = asShape(mop->src(1)), sz = asShape(mop->src(2));
  if (off.size() != sz.size()) fail(mop, "offset and size operands differ in length");
  std::vector<std::pair<Dim, Dim>> out;
  for (size_t i = 0; i < off.size(); ++i) out.emplace_back(off[i], sz[i]);
  return out;
}

std::vector<int64_t> mopInts(const UOp *mop) {
  std::vector<int64_t> out;
  if (!mop->arg().isSequence()) fail(mop, std::string(opName(mop->op())) + " needs a tuple arg");
  for (const Value &v : mop->arg().items()) {
    if (v.isInt()) out.push_back(v.getInt());
    else if (v.isBool()) out.push_back(v.getBool());
    else fail(mop, "bad " + std::string(opName(mop->op())) + " arg " + mop->arg().toString());
  }
  return out;
}

// ---- arg records ---------------------------------------------------------------

Value axisTypeValue(std::string_view m) {
  // RANGE args are made per range; the common members are built once (Values are immutable and shared).
  static const Value kWeak = Value::enumMember("AxisType", "WEAK"), kLoop = Value::enumMember("AxisType", "LOOP"),
                     kReduce = Value::enumMember("AxisType", "REDUCE");
  if (m == "WEAK") return kWeak;
  if (m == "LOOP") return kLoop;
  if (m == "REDUCE") return kReduce;
  return Value::enumMember("AxisType", std::string(m));
}
Value addrSpaceValue(AddrSpace a) {
  static const Value kSpaces[] = {Value::enumMember("AddrSpace", "GLOBAL"), Value::enumMember("AddrSpace", "LOCAL"),
                                  Value::enumMember("AddrSpace", "REG"), Value::enumMember("AddrSpace", "ALU")};
  static_assert(std::size(kSpaces) == size_t(AddrSpace::ALU) + 1);
  return kSpaces[size_t(a)];
}

Value rangeArg(int64_t axisId, std::string_view axisType) {
  return Value::tuple({Value::integer(axisId), axisTypeValue(axisType)});
}

std::string rangeAxisType(const UOp *r) {
  const Value &a = r->arg();
  if (!a.isSequence() || a.size() == 0 || !a[a.size() - 1].isEnum("AxisType")) fail(r, "RANGE without an AxisType arg");
  return a[a.size() - 1].str();
}

int64_t rangeAxisId(const UOp *r) {
  const Value &a = r->arg();
  if (!a.isSequence() || a.size() == 0 || !a[0].isInt()) fail(r, "RANGE without an axis id");
  return a[0].getInt();
}

static const std::vector<std::string> kParamFieldNames = {"slot", "dtype",  "vmin_vmax", "multiple_of", "name",
                                                          "addrspace", "axis", "device", "volatile"};

Value ParamFields::toValue() const {
  return Value::object("ParamArg", kParamFieldNames,
                       {Value::integer(slot), Value::dtype(dtype), vminVmax, multipleOf, name, addrspace, axis, device,
                        Value::boolean(isVolatile)});
}

// The ParamArg's fields in kParamFieldNames order (null: not given), in one
// pass over its names (Value::field scans them per lookup); a field given
// twice keeps its first value, as Value::field would. Names usually come in
// that order, so each is compared with the expected one first.
static std::array<const Value *, 9> paramFieldValues(const Value &arg) {
  std::array<const Value *, 9> out{};
  assert(kParamFieldNames.size() == out.size());
  const std::vector<std::string> &names = arg.fieldNames();
  for (size_t i = 0; i < names.size(); ++i) {
    bool expected = i < out.size() && names[i] == kParamFieldNames[i];
    size_t k = expected ? i
                        : size_t(std::find(kParamFieldNames.begin(), kParamFieldNames.end(), names[i]) -
                                 kParamFieldNames.begin());
    if (k < out.size() && !out[k]) out[k] = &arg[i];
  }
  return out;
}

// A ParamArg must hold an int slot and a dtype.
static bool validParamFields(const std::array<const Value *, 9> &v) {
  return v[0] && v[0]->isInt() && v[1] && v[1]->kind() == Value::Kind::DType;
}

std::optional<ParamFields> ParamFields::from(const Value &arg) {
  if (!arg.isObj("ParamArg")) return std::nullopt;
  std::array<const Value *, 9> v = paramFieldValues(arg);
  if (!validParamFields(v)) return std::nullopt;
  ParamFields f;
  f.slot = v[0]->getInt();
  f.dtype = v[1]->getDType();
  auto get = [](const Value *x) { return x ? *x : Value(); };
  f.vminVmax = get(v[2]);
  f.multipleOf = get(v[3]);
  f.name = get(v[4]);
  f.addrspace = get(v[5]);
  f.axis = get(v[6]);
  f.device = get(v[7]);
  f.isVolatile = v[8] && v[8]->isBool() && v[8]->getBool();
  return f;
}

std::optional<int64_t> ParamFields::slotOf(const Value &arg) {
  if (!arg.isObj("ParamArg")) return std::nullopt;
  std::array<const Value *, 9> v = paramFieldValues(arg);
  if (!validParamFields(v)) return std::nullopt;
  return v[0]->getInt();
}

ParamFields paramFields(const UOp *u) {
  std::optional<ParamFields> f = ParamFields::from(u->arg());
  if (!f) fail(u, std::string(opName(u->op())) + " must have a ParamArg, got " + u->arg().toString());
  return std::move(*f);
}

// Values are immutable and share their payload: the constant records are made
// once (every kernel of a graph asks for them).
Value callInfo() {
  static const Value info =
      Value::object("CallInfo", {"grad_fxn", "name", "precompile", "precompile_backward", "aux"},
                    {Value(), Value(), Value::boolean(false), Value::boolean(false), Value()});
  return info;
}

static Value makeKernelInfo(const Value &optsToApply) {
  return Value::object("KernelInfo",
                       {"name", "axis_types", "dont_use_locals", "applied_opts", "opts_to_apply", "estimates", "beam"},
                       {Value::string("test"), Value::tuple({}), Value::boolean(false), Value::tuple({}), optsToApply,
                        Value(), Value::integer(0)});
}

Value kernelInfo(const Value &optsToApply) {
  static const Value plain = makeKernelInfo(Value());
  return optsToApply.isNone() ? plain : makeKernelInfo(optsToApply);
}

Value bufferizeOpts(const Value &device, AddrSpace addrspace, bool removable) {
  return Value::object("BufferizeOpts", {"device", "addrspace", "removable"},
                       {device, addrSpaceValue(addrspace), Value::boolean(removable)});
}

StageOpts stageOpts(const UOp *stage) {
  const Value &a = stage->arg();
  if (!a.isObj("BufferizeOpts")) fail(stage, "STAGE must have BufferizeOpts, got " + a.toString());
  StageOpts o;
  o.device = *a.field("device");
  const Value *as = a.field("addrspace");
  if (as && as->isEnum("AddrSpace")) o.addrspace = addrSpaceFromName(as->str()).value_or(AddrSpace::GLOBAL);
  const Value *rm = a.field("removable");
  o.removable = !rm || !rm->isBool() || rm->getBool();
  return o;
}

// ---- node builders -------------------------------------------------------------

static Context &ctxOf(const UOp *u) { return u->context(); }

const UOp *mk(Op op, std::vector<const UOp *> src, Value arg, Value tag) {
  if (src.empty()) fail(nullptr, "mk needs at least one src to find the context");
  DType dt = dtypeFromUOp(op, src, arg).value_or(dtypes::Void);
  return ctxOf(src[0]).get(op, dt, std::move(src), std::move(arg), std::move(tag));
}

const UOp *rebuild(const UOp *u, std::vector<const UOp *> src) {
  if (std::equal(src.begin(), src.end(), u->src().begin(), u->src().end())) return u;
  DType dt = rebuildDType(u, src);
  return u->context().get(u->op(), dt, std::move(src), u->arg(), u->tag());
}

const UOp *invalid(Context &ctx) { return invalidConst(ctx); }
bool isInvalid(const UOp *u) { return u->is(Op::CONST) && u->arg().kind() == Value::Kind::Invalid; }

const UOp *constLike(const UOp *x, const Value &v, DType dt) {
  const UOp *c = makeConst(x->context(), v, dt ? dt : x->dtype());
  const IShape *s = maybeShape(x);
  if (s && !s->empty()) return expandMop(c, *s);
  return c;
}

const UOp *reshape(const UOp *x, const IShape &s) {
  const IShape &cur = shapeOf(x);
  if (dimsEqual(prod(cur), prod(s)) == false) fail(x, "size mismatch, can't reshape " + shapeString(cur) + " -> " + shapeString(s));
  if (cur == s) return x;
  return x->context().get(Op::RESHAPE, x->dtype(), {x, shapeArg(x->context(), s)});
}

const UOp *expandMop(const UOp *x, const IShape &newAxes) {
  if (newAxes.empty()) return x;
  return x->context().get(Op::EXPAND, x->dtype(), {x, shapeArg(x->context(), newAxes)});
}

const UOp *permute(const UOp *x, const std::vector<int64_t> &order) {
  bool identity = true;
  for (size_t i = 0; i < order.size(); ++i) identity &= order[i] == int64_t(i);
  if (identity) return x;
  std::vector<Value> arg;
  for (int64_t o : order) arg.push_back(Value::integer(o));
  return x->context().get(Op::PERMUTE, x->dtype(), {x}, Value::tuple(std::move(arg)));
}

const UOp *flip(const UOp *x, const std::vector<bool> &axes) {
  if (std::none_of(axes.begin(), axes.end(), [](bool b) { return b; })) return x;
  std::vector<Value> arg;
  for (bool b : axes) arg.push_back(Value::boolean(b));
  return x->context().get(Op::FLIP, x->dtype(), {x}, Value::tuple(std::move(arg)));
}

static const UOp *padShrinkMop(Op op, const UOp *x, const IShape &offsets, const IShape &sizes) {
  if (offsets.empty()) return x;
  Context &ctx = x->context();
  return ctx.get(op, x->dtype(), {x, shapeArg(ctx, offsets), shapeArg(ctx, sizes)});
}

const UOp *shrink(const UOp *x, const std::vector<std::pair<Dim, Dim>> &startEnd) {
  IShape cur = shapeOf(x), off, sz;
  for (const auto &[st, en] : startEnd) {
    off.push_back(st);
    sz.push_back(en - st);
  }
  if (sz == cur && std::all_of(off.begin(), off.end(), [](const Dim &o) { return o == Dim(0); })) return x;
  return padShrinkMop(Op::SHRINK, x, off, sz);
}

const UOp *padTo(const UOp *x, const IShape &s) {
  if (shapeOf(x) == s) return x;
  return padShrinkMop(Op::PAD, x, IShape(s.size(), 0), s);
}

const UOp *shrinkTo(const UOp *x, const IShape &s) {
  std::vector<std::pair<Dim, Dim>> se;
  for (const Dim &n : s) se.emplace_back(0, n);
  return shrink(x, se);
}

const UOp *flatten(const UOp *x) { return reshape(x, {prod(shapeOf(x))}); }

std::vector<size_t> broadcastAxes(const IShape &src, const IShape &out) {
  if (out.size() < src.size()) fail(nullptr, "cannot broadcast " + shapeString(src) + " into " + shapeString(out));
  size_t nleft = out.size() - src.size();
  std::vector<size_t> axes;
  for (size_t i = 0; i < nleft; ++i) axes.push_back(i);
  for (size_t i = 0; i < src.size(); ++i)
    if (src[i] == 1 && out[nleft + i] != 1) axes.push_back(nleft + i);
  return axes;
}

const UOp *broadcastTo(const UOp *x, const IShape &ns) {
  const IShape &s = shapeOf(x);
  if (s == ns) return x;
  if (s.size() > ns.size()) fail(x, "cannot broadcast to fewer dimensions");
  size_t nLeft = ns.size() - s.size();
  for (size_t i = 0; i < s.size(); ++i)
    if (s[i] != ns[nLeft + i] && s[i] != 1) fail(x, "cannot broadcast " + shapeString(s) + " to " + shapeString(ns));
  std::vector<int64_t> expandAt, kept;
  for (size_t a : broadcastAxes(s, ns))
    if (a >= nLeft) expandAt.push_back(int64_t(a - nLeft));
  for (size_t i = 0; i < s.size(); ++i)
    if (std::find(expandAt.begin(), expandAt.end(), int64_t(i)) == expandAt.end()) kept.push_back(int64_t(i));
  IShape squeezedShape, newAxes(ns.begin(), ns.begin() + nLeft);
  for (int64_t k : kept) squeezedShape.push_back(s[k]);
  for (int64_t e : expandAt) newAxes.push_back(ns[nLeft + e]);
  const UOp *expanded = expandMop(reshape(x, squeezedShape), newAxes);
  std::vector<int64_t> perm;
  for (size_t i = 0; i < nLeft; ++i) perm.push_back(int64_t(i));
  for (size_t i = 0; i < s.size(); ++i) {
    auto e = std::find(expandAt.begin(), expandAt.end(), int64_t(i));
    if (e != expandAt.end()) perm.push_back(int64_t(nLeft + (e - expandAt.begin())));
    else perm.push_back(int64_t(nLeft + expandAt.size() + (std::find(kept.begin(), kept.end(), int64_t(i)) - kept.begin())));
  }
  return permute(expanded, perm);
}

const UOp *replaceMopSrc(const UOp *mop, const UOp *src) {
  std::vector<const UOp *> s(mop->src().begin(), mop->src().end());
  s[0] = src;
  return rebuild(mop, std::move(s));
}

const UOp *index(const UOp *buf, const std::vector<const UOp *> &idx, Value arg) {
  if (idx.size() == 1 && idx[0]->is(Op::CONST) && buf->is(Op::STACK) && idx[0]->arg().isInt()) {
    int64_t i = idx[0]->arg().getInt();
    if (i >= 0 && size_t(i) < buf->numSrc()) return buf->src(size_t(i));
  }
  std::vector<const UOp *> src{buf};
  src.insert(src.end(), idx.begin(), idx.end());
  return buf->context().get(Op::INDEX, buf->dtype(), std::move(src), std::move(arg));
}

const UOp *store(const UOp *target, const UOp *value) {
  return target->context().get(Op::STORE, dtypes::Void, {target, value});
}

const UOp *after(const UOp *x, const std::vector<const UOp *> &deps, Value tag) {
  if (deps.empty()) return x;
  std::vector<const UOp *> src{x};
  src.insert(src.end(), deps.begin(), deps.end());
  return x->context().get(Op::AFTER, x->dtype(), std::move(src), {}, std::move(tag));
}

const UOp *end(const UOp *x, const std::vector<const UOp *> &ranges) {
  if (ranges.empty()) return x;
  std::vector<const UOp *> src{x};
  src.insert(src.end(), ranges.begin(), ranges.end());
  return x->context().get(Op::END, dtypes::Void, std::move(src));
}

const UOp *sink(Context &ctx, const std::vector<const UOp *> &src, Value arg) {
  return ctx.get(Op::SINK, dtypes::Void, src, std::move(arg));
}

const UOp *call(const UOp *body, const std::vector<const UOp *> &args, Value arg) {
  std::vector<const UOp *> src{body};
  src.insert(src.end(), args.begin(), args.end());
  return body->context().get(Op::CALL, dtypes::Void, std::move(src), std::move(arg));
}

const UOp *cast(const UOp *x, DType dt) {
  if (x->dtype() == dt) return x;
  return x->context().get(Op::CAST, dt, {x}, Value::dtype(dt));
}

const UOp *contiguous(const UOp *x, Value tag) {
  if (x->dtype().isWeak()) return x;
  if (x->is(Op::CONTIGUOUS) || x->device().isNone() || hasBufferIdentity(x)) return x;
  return x->context().get(Op::CONTIGUOUS, x->dtype(), {x}, {}, std::move(tag));
}

const UOp *range(Context &ctx, const Dim &size, int64_t axisId, std::string_view axisType) {
  return ctx.get(Op::RANGE, dtypes::WeakInt, {dimUOp(ctx, size)}, rangeArg(axisId, axisType));
}

const UOp *valid(const UOp *x, const UOp *cond) {
  return mk(Op::WHERE, {cond, x, invalid(x->context())});
}

const UOp *getIdx(const UOp *x) {
  if (x->is(Op::STACK)) {
    std::vector<const UOp *> s;
    for (const UOp *e : x->src()) s.push_back(getIdx(e));
    return mk(Op::STACK, s);
  }
  return x->is(Op::WHERE) && isInvalid(x->src(2)) ? x->src(1) : x;
}

const UOp *getValid(const UOp *x) {
  if (x->is(Op::STACK)) {
    std::vector<const UOp *> s;
    for (const UOp *e : x->src()) s.push_back(getValid(e));
    return mk(Op::STACK, s);
  }
  if (x->is(Op::WHERE) && isInvalid(x->src(2))) return x->src(0);
  return x->context().constBool(!isInvalid(x));
}

const UOp *newBuffer(Context &ctx, const Value &device, int64_t numel, DType dt, int64_t slot) {
  if (dt.isWeak()) fail(nullptr, "cannot create storage for weak dtype " + std::string(dt.name()));
  ParamFields f;
  f.slot = slot;
  f.dtype = dt;
  f.device = device;
  return ctx.get(Op::BUFFER, dt, {shapeArg(ctx, {numel})}, f.toValue());
}

const UOp *emptyLike(const UOp *x, int64_t slot) {
  // tinygrad's empty: storage for the Variables' maxima, shrunk to the symbolic shape
  const IShape &s = shapeOf(x);
  const UOp *buf = newBuffer(x->context(), x->device(), maxNumel(s), strongDType(x->dtype()), slot);
  return shrinkTo(reshape(buf, maxShape(s)), s);
}

const UOp *param(Context &ctx, int64_t slot, DType dt, const IShape &shape, const Value &device,
                 const Value &addrspace) {
  if (dt.isWeak()) fail(nullptr, "cannot create param for weak dtype " + std::string(dt.name()));
  ParamFields f;
  f.slot = slot;
  f.dtype = dt;
  f.device = device;
  f.addrspace = addrspace;
  return ctx.get(Op::PARAM, dt, {shapeArg(ctx, shape)}, f.toValue());
}

// ---- queries -----------------------------------------------------------------

const UOp *base(const UOp *u) {
  while (u->isIn(group::Movement) || u->is(Op::DETACH)) u = u->src(0);
  return u;
}

const UOp *unshardedBase(const UOp *u) {
  if (u->isIn(group::Movement) || u->is(Op::DETACH) || u->is(Op::UNSHARD)) return base(u->src(0));
  return u;
}

const UOp *bufUop(const UOp *u) {
  if (u->is(Op::BUFFER) || u->is(Op::PARAM)) return u;
  if (u->is(Op::MSELECT)) return u->withSrc({bufUop(u->src(0))});
  if (u->is(Op::MSTACK)) {
    std::vector<const UOp *> s;
    for (const UOp *x : u->src()) s.push_back(bufUop(x));
    return mk(Op::MSTACK, s);
  }
  if (const UOp *b = base(u); b->is(Op::AFTER)) return base(bufUop(b->src(0)));
  const UOp *s = u;
  while (s->numSrc() && !(s->is(Op::BUFFER) || s->is(Op::PARAM) || s->is(Op::STAGE) || s->is(Op::MSTACK)))
    s = s->src(0);
  return s;
}

bool hasBufferIdentity(const UOp *u, bool afterOk) {
  while (u->is(Op::RESHAPE) || u->is(Op::UNSHARD) || u->is(Op::MSELECT) || (afterOk && u->is(Op::AFTER)))
    u = u->src(0);
  return u->is(Op::BUFFER) || u->is(Op::PARAM);
}

bool isVirtual(const UOp *u) { return u->device().isNone() || u->dtype().isWeak(); }

bool isVariable(const UOp *u) {
  if (!u->is(Op::BUFFER)) return false;
  // asked of every AFTER and buffer a kernel split meets: read the four fields it needs, not the whole ParamArg
  const Value &a = u->arg();
  if (!a.isObj("ParamArg")) return false;
  const Value *slot = a.field("slot"), *dt = a.field("dtype");
  if (!slot || !slot->isInt() || !dt || dt->kind() != Value::Kind::DType) return false; // not a ParamArg
  const Value *vminVmax = a.field("vmin_vmax"), *addrspace = a.field("addrspace");
  if (!vminVmax || vminVmax->isNone() || !addrspace || !addrspace->isEnum("AddrSpace") || addrspace->str() != "ALU")
    return false;
  const Shape *s = u->shape();
  return s && s->empty();
}

bool isBoundVar(const UOp *u) {
  return u->is(Op::AFTER) && u->numSrc() == 2 && isVariable(u->src(0)) && u->src(1)->is(Op::STORE) &&
         u->src(1)->numSrc() >= 2 && u->src(1)->src(0) == u->src(0) && u->src(1)->src(1)->is(Op::CONST);
}

std::string deviceStr(const UOp *u) {
  const Value &d = u->device();
  return d.kind() == Value::Kind::Str ? d.str() : "";
}

bool deviceStartsWith(const UOp *u, std::initializer_list<std::string_view> prefixes) {
  std::string d = deviceStr(u);
  for (std::string_view p : prefixes)
    if (std::string_view(d).starts_with(p)) return true;
  return false;
}

bool inBackwardSlice(const UOp *needle, const UOp *root, bool enterCalls) {
  bool found = false;
  ToposortOptions o;
  o.enterCalls = enterCalls;
  o.gate = [&](const UOp *u) {
    found |= u == needle;
    return !found;
  };
  toposort(root, o);
  return found;
}

} // namespace tgc::rangeify
