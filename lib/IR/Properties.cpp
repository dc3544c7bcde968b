//===- Properties.cpp - shape, device and addrspace of a UOp --------------===//
//
// The derived properties of a node, mirroring tinygrad's UOp._shape, UOp.device
// and UOp.addrspace (tinygrad/uop/ops.py). All three are computed together the
// first time any of them is asked for, and cached on the node. The computation
// is iterative: the uncached part of the graph below the node is toposorted and
// filled bottom-up, so a chain of a million nodes does not recurse.
//
// A shape that cannot be derived (a bad reshape, a broadcast mismatch, ...)
// never throws: shape() is nullptr and shapeError() says why. A node whose
// source has an invalid shape gets an error that points at that source.
//
//===----------------------------------------------------------------------===//
#include "IR/NodeTable.h"
#include "IR/UOp.h"

#include <algorithm>
#include <cassert>
#include <deque>
#include <set>
#include <unordered_set>

namespace tgc {

namespace {

/// A shape as the Context keeps it: once per distinct shape, with its sizes
/// when every dim is static. A schedule gives ~100k nodes a handful of shapes
/// (after rangeify nearly all are scalars), so nodes point at shared ones
/// instead of holding two vectors each.
struct InternedShape {
  Shape dims;
  std::vector<int64_t> staticDims; ///< dims' sizes if all are static, else empty
  bool allStatic = false;
  bool operator==(const InternedShape &o) const { return dims == o.dims; }
};
struct InternedShapeHash {
  size_t operator()(const InternedShape &s) const {
    size_t h = s.dims.size();
    for (const Dim &d : s.dims) h = h * 1000003u ^ (size_t(d.value) * 31u + reinterpret_cast<uintptr_t>(d.sym));
    return h;
  }
};
struct ShapeTable {
  std::unordered_set<InternedShape, InternedShapeHash> shapes; // elements keep their addresses
  std::deque<std::string> errors;
  InternedShape scalar{{}, {}, true};
  // Devices, kept like shapes: a node whose device is its source's points at
  // the same Value instead of copying it (a shared payload's refcount).
  std::deque<Value> devices;
  static inline const Value noDevice{};

  const Value *device(Value d) {
    if (d.isNone()) return &noDevice;
    // buffers come in runs on one device: the last one is usually the same
    if (devices.empty() || !(devices.back() == d)) devices.push_back(std::move(d));
    return &devices.back();
  }

  const InternedShape *intern(Shape dims) {
    if (dims.empty()) return &scalar; // most nodes of a schedule
    InternedShape key{std::move(dims), {}, false};
    auto [it, fresh] = shapes.insert(std::move(key));
    if (fresh) {
      InternedShape &s = const_cast<InternedShape &>(*it); // the hash reads only dims
      s.allStatic = std::all_of(s.dims.begin(), s.dims.end(), [](const Dim &d) { return d.isStatic(); });
      if (s.allStatic)
        for (const Dim &d : s.dims) s.staticDims.push_back(d.value);
    }
    return &*it;
  }
};

struct Props {
  const InternedShape *shape = nullptr;      ///< nullptr: no shape (or an invalid one)
  const std::string *shapeError = nullptr;   ///< why the shape is invalid, or nullptr
  const Value *device = &ShapeTable::noDevice; ///< in the ShapeTable, or a source's
  std::optional<AddrSpace> addrspace;
};

/// Either a shape, no shape (nullopt without error), or an error.
struct ShapeOr {
  std::optional<Shape> shape;
  std::string error;
  static ShapeOr none() { return {}; }
  static ShapeOr err(std::string e) { return {std::nullopt, std::move(e)}; }
  ShapeOr() = default;
  ShapeOr(Shape s) : shape(std::move(s)) {}
  ShapeOr(std::optional<Shape> s, std::string e) : shape(std::move(s)), error(std::move(e)) {}
};

using PropsOf = const Props &(*)(const UOp *);

std::string nodeName(const UOp *u) { return "%" + std::to_string(u->id()) + " " + std::string(opName(u->op())); }

/// A shape operand (tinygrad's as_shape): a CONST is a one-element shape, a
/// STACK lists the dims, anything else is a single symbolic dim.
ShapeOr asShape(const UOp *u) {
  auto dimOf = [](const UOp *e, Shape &out) -> std::string {
    if (e->is(Op::CONST)) {
      if (!e->arg().isInt()) return "shape entry " + nodeName(e) + " is not an int: " + e->arg().toString();
      out.push_back(Dim{e->arg().getInt(), nullptr});
      return "";
    }
    if (!e->is(Op::NOOP) && !(e->dtype() && e->dtype().isInt()))
      return "shape entry " + nodeName(e) + " must be an int, got " + std::string(e->dtype() ? e->dtype().name() : "no dtype");
    out.push_back(Dim{0, e});
    return "";
  };
  Shape s;
  if (u->is(Op::STACK)) {
    for (const UOp *e : u->src())
      if (std::string err = dimOf(e, s); !err.empty()) return ShapeOr::err(err);
  } else if (std::string err = dimOf(u, s); !err.empty()) {
    return ShapeOr::err(err);
  }
  return s;
}

/// numpy broadcasting of right-aligned shapes: per axis, sizes of 1 give way
/// to the others, which must all be the same size (or the same symbol).
ShapeOr broadcast(const std::vector<const Shape *> &shapes) {
  size_t rank = 0;
  bool same = true;
  for (const Shape *s : shapes) {
    rank = std::max(rank, s->size());
    same &= *s == *shapes[0];
  }
  if (same) return *shapes[0];
  Shape out(rank, Dim{1, nullptr});
  for (size_t ax = 0; ax < rank; ++ax) {
    std::optional<Dim> common;
    for (const Shape *s : shapes) {
      size_t pad = rank - s->size();
      if (ax < pad) continue;
      const Dim &d = (*s)[ax - pad];
      if (d.isStatic() && d.value == 1) continue;
      if (common && !(*common == d)) {
        std::string list;
        for (const Shape *t : shapes) list += (list.empty() ? "" : ", ") + shapeStr(*t);
        return ShapeOr::err("shape mismatch: objects cannot be broadcast to a single shape: " + list);
      }
      common = d;
    }
    if (common) out[ax] = *common;
  }
  return out;
}

/// The number of values a range-like node takes (tinygrad's vmax + 1), for the
/// forms STAGE and UNSHARD carry: a RANGE over a constant or a Variable bound,
/// or a constant. Anything else has no static extent here.
std::optional<int64_t> extent(const UOp *r) {
  auto maxOf = [](const UOp *b) -> std::optional<int64_t> {
    if (b->is(Op::CONST) && b->arg().isInt()) return b->arg().getInt();
    const Value *vr = b->isIn({Op::PARAM, Op::BUFFER}) && b->arg().kind() == Value::Kind::Obj ? b->arg().field("vmin_vmax") : nullptr;
    if (vr && vr->isSequence() && vr->size() == 2 && (*vr)[1].isInt()) return (*vr)[1].getInt();
    return std::nullopt;
  };
  if (r->is(Op::RANGE) && r->numSrc()) {
    if (std::optional<int64_t> m = maxOf(r->src(0))) return m; // vmax = bound.vmax - 1
    // a symbolic bound (start_pos + 1): its largest value
    if (const UOp *b = r->src(0); b->dtype().isInt() && !b->vrange().isFloat) return b->vmaxInt();
    return std::nullopt;
  }
  if (std::optional<int64_t> m = maxOf(r)) return *m + 1;
  // any other index expression takes the values of its range (tinygrad's vmax + 1)
  if (r->dtype().isInt() && !r->vrange().isFloat) return r->vmaxInt() + 1;
  return std::nullopt;
}

/// Overflow-checked arithmetic on sizes: hostile inputs must not be UB.
std::optional<int64_t> mul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? std::nullopt : std::optional(r);
}
bool sumExceeds(int64_t a, int64_t b, int64_t limit) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) || r > limit;
}

/// Static product (nullopt on overflow) and the multiset of symbolic dims, for comparing element counts.
std::pair<std::optional<int64_t>, std::multiset<const UOp *>> volume(const Shape &s) {
  std::pair<std::optional<int64_t>, std::multiset<const UOp *>> v{1, {}};
  for (const Dim &d : s) {
    if (!d.isStatic()) v.second.insert(d.sym);
    else if (v.first) v.first = mul(*v.first, d.value);
  }
  return v;
}

ShapeOr movementShape(const UOp *u, const Shape &ps) {
  switch (u->op()) {
  case Op::RESHAPE:
  case Op::EXPAND: {
    if (u->numSrc() != 2) return ShapeOr::err(std::string(opName(u->op())) + " needs (x, shape), got " +
                                              std::to_string(u->numSrc()) + " sources");
    ShapeOr m = asShape(u->src(1));
    if (!m.shape) return m;
    for (const Dim &d : *m.shape)
      if (d.isStatic() && d.value < 0) return ShapeOr::err("shape can't contain negative numbers " + shapeStr(*m.shape));
    if (u->is(Op::EXPAND)) {
      Shape out = *m.shape;
      out.insert(out.end(), ps.begin(), ps.end());
      return out;
    }
    auto [pn, psyms] = volume(ps);
    auto [mn, msyms] = volume(*m.shape);
    // With different symbols on the two sides the counts cannot be compared statically.
    if (psyms == msyms && (!pn || !mn || *pn != *mn)) return ShapeOr::err("bad reshape: " + shapeStr(ps) + " -> " + shapeStr(*m.shape));
    return m;
  }
  case Op::PERMUTE: {
    const Value &a = u->arg();
    std::vector<bool> seen(ps.size(), false);
    bool ok = a.isSequence() && a.size() == ps.size();
    for (size_t i = 0; ok && i < a.size(); ++i) {
      ok = a[i].isInt() && a[i].getInt() >= 0 && size_t(a[i].getInt()) < ps.size() && !seen[a[i].getInt()];
      if (ok) seen[a[i].getInt()] = true;
    }
    if (!ok) return ShapeOr::err("invalid permutation " + a.toString() + " of len " + std::to_string(ps.size()));
    Shape out;
    for (const Value &i : a.items()) out.push_back(ps[i.getInt()]);
    return out;
  }
  case Op::PAD:
  case Op::SHRINK: {
    bool pad = u->is(Op::PAD);
    if (u->numSrc() != 3) return ShapeOr::err(std::string(opName(u->op())) + " needs (x, offsets, sizes), got " +
                                              std::to_string(u->numSrc()) + " sources");
    ShapeOr offs = asShape(u->src(1)), sizes = asShape(u->src(2));
    if (!offs.shape) return offs;
    if (!sizes.shape) return sizes;
    auto bad = [&] {
      return ShapeOr::err(std::string(pad ? "invalid pad" : "invalid shrink") + " offsets " + shapeStr(*offs.shape) +
                          " sizes " + shapeStr(*sizes.shape) + " for " + shapeStr(ps));
    };
    if (offs.shape->size() != ps.size() || sizes.shape->size() != ps.size()) return bad();
    for (size_t i = 0; i < ps.size(); ++i) {
      const Dim &o = (*offs.shape)[i], &sz = (*sizes.shape)[i], &s = ps[i];
      // Bounds involving a symbol are assumed to hold (tinygrad's resolve default).
      if (o.isStatic() && o.value < 0) return bad();
      if (sz.isStatic() && sz.value < 0) return bad();
      if (o.isStatic() && sz.isStatic() && s.isStatic() && (pad ? sumExceeds(o.value, s.value, sz.value) : sumExceeds(o.value, sz.value, s.value)))
        return bad();
    }
    return *sizes.shape;
  }
  case Op::FLIP: {
    const Value &a = u->arg();
    bool ok = a.isSequence() && a.size() == ps.size() &&
              std::all_of(a.items().begin(), a.items().end(), [](const Value &v) { return v.isBool(); });
    if (!ok) return ShapeOr::err("bad flip " + a.toString() + " on " + shapeStr(ps));
    return ps;
  }
  case Op::REDUCE: {
    const Value &a = u->arg();
    if (!a.isSequence() || a.size() != 2 || !a[1].isInt() || a[1].getInt() < 0 || size_t(a[1].getInt()) > ps.size())
      return ShapeOr::err("invalid reduce axis count in " + a.toString() + " for " + shapeStr(ps));
    return Shape(ps.begin() + a[1].getInt(), ps.end());
  }
  case Op::UNSHARD: {
    const Value &a = u->arg();
    if (!a.isSequence() || a.size() + 1 != u->numSrc()) return ShapeOr::err("UNSHARD needs one range per sharded axis");
    Shape out = ps;
    for (size_t k = 0; k < a.size(); ++k) {
      if (!a[k].isInt() || a[k].getInt() < 0 || size_t(a[k].getInt()) >= ps.size())
        return ShapeOr::err("UNSHARD axis " + a[k].toString() + " out of range for " + shapeStr(ps));
      Dim &d = out[a[k].getInt()];
      std::optional<int64_t> n = extent(u->src(k + 1));
      std::optional<int64_t> size = d.isStatic() && n ? mul(d.value, *n) : std::nullopt;
      if (!size) return ShapeOr::err("UNSHARD axis " + std::to_string(k) + " has no static size");
      d.value = *size;
    }
    return out;
  }
  default: return ShapeOr::err("not a movement op");
  }
}

/// BITCAST between itemsizes rescales the last dim.
ShapeOr bitcastShape(const UOp *u, const Shape &ps) {
  if (!u->dtype() || !u->src(0)->dtype()) return ShapeOr::err("BITCAST with an unknown dtype");
  int in = u->src(0)->dtype().itemsize(), out = u->dtype().itemsize();
  if (in == out || ps.empty()) return ps;
  Shape s = ps;
  Dim &last = s.back();
  if (out == 0) return ShapeOr::err("BITCAST to a zero-size dtype");
  if (last.isStatic()) {
    std::optional<int64_t> bytes = mul(last.value, in);
    if (!bytes || *bytes % out) return ShapeOr::err("unsupported size in bitcast: " + shapeStr(ps) + " of " +
                                                   std::string(u->src(0)->dtype().name()) + " to " +
                                                   std::string(u->dtype().name()));
    last.value = *bytes / out;
    return s;
  }
  Context &ctx = u->context();
  const UOp *bytes = ctx.get(Op::MUL, dtypes::WeakInt, {last.sym, ctx.constInt(in)});
  last.sym = ctx.get(Op::FLOORDIV, dtypes::WeakInt, {bytes, ctx.constInt(out)});
  return s;
}

// A node whose shape is asked for, with its sources' properties.
struct ShapeQuery {
  const UOp *u;
  PropsOf props;

  // The shape of source i, or an error naming it when it is invalid (or
  // has none and one is `required`).
  ShapeOr src(size_t i, bool required) const {
    if (i >= u->numSrc()) return ShapeOr::err(std::string(opName(u->op())) + " is missing source " + std::to_string(i));
    const Props &p = props(u->src(i));
    if (p.shapeError) return ShapeOr::err("source " + std::to_string(i) + " (" + nodeName(u->src(i)) + ") has an invalid shape");
    if (!p.shape && required)
      return ShapeOr::err(std::string(opName(u->op())) + " requires a shape, source " + std::to_string(i) + " (" +
                          nodeName(u->src(i)) + ") has none");
    return p.shape ? ShapeOr(p.shape->dims) : ShapeOr::none();
  }
};

// BUFFER and PARAM: the shape operand's.
ShapeOr storageShape(const ShapeQuery &q) {
  const UOp *u = q.u;
  if (!u->numSrc()) return u->is(Op::BUFFER) ? ShapeOr(Shape{}) : ShapeOr::err("PARAM needs a shape operand");
  // Storage of a negative size is not a shape, and would wrap around as a byte count.
  ShapeOr s = asShape(u->src(0));
  if (s.shape)
    for (const Dim &d : *s.shape)
      if (d.isStatic() && d.value < 0) return ShapeOr::err("shape can't contain negative numbers " + shapeStr(*s.shape));
  return s;
}

// STACK: a new leading axis over its (equal-shaped) sources.
ShapeOr stackShape(const ShapeQuery &q) {
  if (!q.u->numSrc()) return Shape{};
  ShapeOr e = q.src(0, true);
  if (!e.shape) return e;
  Shape out{Dim{int64_t(q.u->numSrc()), nullptr}};
  out.insert(out.end(), e.shape->begin(), e.shape->end());
  return out;
}

// INDEX: the indices' shapes, then the buffer's axes they do not index.
ShapeOr indexShape(const ShapeQuery &q) {
  ShapeOr buf = q.src(0, true);
  if (!buf.shape) return buf;
  Shape out;
  for (size_t i = 1; i < q.u->numSrc(); ++i) {
    ShapeOr s = q.src(i, true);
    if (!s.shape) return s;
    out.insert(out.end(), s.shape->begin(), s.shape->end());
  }
  size_t nidx = q.u->numSrc() - 1;
  if (nidx < buf.shape->size()) out.insert(out.end(), buf.shape->begin() + nidx, buf.shape->end());
  return out;
}

// GETTUPLE: the selected element's shape.
ShapeOr getTupleShape(const ShapeQuery &q) {
  const UOp *u = q.u;
  if (u->numSrc() != 1) return ShapeOr::err("GETTUPLE needs one source");
  const UOp *fn = u->src(0);
  const UOp *tuple = fn->is(Op::FUNCTION) && fn->numSrc() ? fn->src(0) : fn;
  if (!tuple->is(Op::TUPLE)) return ShapeOr::err("GETTUPLE must select from a TUPLE or a FUNCTION of a TUPLE");
  if (!u->arg().isInt() || u->arg().getInt() < 0 || size_t(u->arg().getInt()) >= tuple->numSrc())
    return ShapeOr::err("GETTUPLE index " + u->arg().toString() + " out of range");
  const UOp *elem = tuple->src(u->arg().getInt());
  const Props &p = q.props(elem);
  if (p.shapeError) return ShapeOr::err("tuple element " + nodeName(elem) + " has an invalid shape");
  if (!p.shape) return ShapeOr::none();
  if (!fn->is(Op::FUNCTION)) return ShapeOr(p.shape->dims);
  // Symbolic dims inside the function are in terms of its PARAMs: bind them to the call's arguments.
  Shape out = p.shape->dims;
  for (Dim &d : out) {
    if (d.isStatic()) continue;
    std::unordered_map<const UOp *, const UOp *> bind;
    for (const UOp *n : toposort(d.sym)) {
      const Value *slot = n->is(Op::PARAM) ? n->arg().field("slot") : nullptr;
      if (slot && slot->isInt() && slot->getInt() >= 0 && size_t(slot->getInt()) + 1 < fn->numSrc())
        bind[n] = fn->src(slot->getInt() + 1);
    }
    d.sym = substitute(d.sym, bind);
    if (d.sym->is(Op::CONST) && d.sym->arg().isInt()) d = Dim{d.sym->arg().getInt(), nullptr};
  }
  return out;
}

// CUSTOM and CUSTOMI with a value: the broadcast of their shaped sources.
ShapeOr customShape(const ShapeQuery &q) {
  if (!q.u->dtype() || q.u->dtype().isVoid()) return ShapeOr::none();
  std::vector<const Shape *> ins;
  for (const UOp *s : q.u->src())
    if (q.props(s).shape) ins.push_back(&q.props(s).shape->dims);
  return ins.empty() ? ShapeOr::none() : broadcast(ins);
}

// STAGE: an axis per range, then the staged value's shape.
ShapeOr stageShape(const ShapeQuery &q) {
  ShapeOr x = q.src(0, true);
  if (!x.shape) return x;
  Shape out;
  for (size_t i = 1; i < q.u->numSrc(); ++i) {
    std::optional<int64_t> n = extent(q.u->src(i));
    if (!n) return ShapeOr::err("STAGE range " + nodeName(q.u->src(i)) + " has no static size");
    out.push_back(Dim{*n, nullptr});
  }
  out.insert(out.end(), x.shape->begin(), x.shape->end());
  return out;
}

// WMMA(a, b, acc): the operands' leading axes broadcast, then acc's last axis.
ShapeOr wmmaShape(const ShapeQuery &q) {
  if (q.u->numSrc() != 3) return ShapeOr::err("WMMA needs (a, b, acc)");
  std::vector<Shape> heads;
  for (size_t i = 0; i < 3; ++i) {
    ShapeOr s = q.src(i, true);
    if (!s.shape) return s;
    if (s.shape->empty()) return ShapeOr::err("WMMA operand " + std::to_string(i) + " must have at least one axis");
    heads.emplace_back(s.shape->begin(), s.shape->end() - 1);
  }
  ShapeOr b = broadcast({&heads[0], &heads[1], &heads[2]});
  if (!b.shape) return b;
  b.shape->push_back(q.props(q.u->src(2)).shape->dims.back());
  return b;
}

// The ops the switch of computeShape does not name: movement ops and
// REDUCE, unary ops and casts, and broadcasting elementwise ops.
ShapeOr opGroupShape(const ShapeQuery &q) {
  const UOp *u = q.u;
  if (u->is(Op::RESHAPE) && u->numSrc() == 2 && u->src(0)->is(Op::NOOP)) return asShape(u->src(1));
  if (u->is(Op::UNSHARD) && !u->numSrc()) return ShapeOr::none();
  if (u->isIn(group::Movement | OpSet{Op::UNSHARD, Op::REDUCE})) {
    ShapeOr x = q.src(0, true);
    if (!x.shape) return x;
    return movementShape(u, *x.shape);
  }
  if (u->isIn(group::Unary | OpSet{Op::CAST})) {
    if (u->numSrc() != 1) return ShapeOr::err(std::string(opName(u->op())) + " must have 1 source");
    return q.src(0, false);
  }
  if (u->isIn(group::Broadcastable)) {
    if (!u->numSrc()) return ShapeOr::err(std::string(opName(u->op())) + " has no sources");
    std::vector<const Shape *> ins;
    for (size_t i = 0; i < u->numSrc(); ++i) {
      ShapeOr s = q.src(i, true);
      if (!s.shape) return s;
      ins.push_back(&q.props(u->src(i)).shape->dims);
    }
    return broadcast(ins);
  }
  return ShapeOr::err("no shape handling for " + std::string(opName(u->op())));
}

ShapeOr computeShape(const UOp *u, PropsOf props) {
  const ShapeQuery q{u, props};
  using enum Op;
  switch (u->op()) {
  case IF: case BARRIER: case SINK: case REWRITE_ERROR: case ENDIF: case GROUP: case LINEAR: case PROGRAM:
  case SOURCE: case TUPLE: case FUNCTION: case CUSTOM_FUNCTION: case PYLITERAL:
    return ShapeOr::none();
  case CALL:
  case INS:
    if (!u->dtype() || u->dtype().isVoid()) return ShapeOr::none();
    return Shape{};
  case NOOP:
    return u->numSrc() ? q.src(0, false) : ShapeOr::none();
  case CONST: case GETADDR: case RANGE: case SPECIAL:
    return Shape{};
  case BINARY:
    return Shape{Dim{int64_t(u->arg().str().size()), nullptr}};
  case BUFFER: case PARAM: return storageShape(q);
  case STACK: return stackShape(q);
  case INDEX: return indexShape(q);
  case GETTUPLE: return getTupleShape(q);
  case CUSTOM: case CUSTOMI: return customShape(q);
  case STAGE: return stageShape(q);
  case WMMA: return wmmaShape(q);
  case MSTACK: case MSELECT: case DETACH: case CONTIGUOUS: case CONTIGUOUS_BACKWARD: case AFTER: case LOAD:
  case COPY: case ALLREDUCE: case STORE: case END:
    return q.src(0, false);
  case BITCAST: {
    ShapeOr x = q.src(0, false);
    if (!x.shape) return x;
    return bitcastShape(u, *x.shape);
  }
  default: return opGroupShape(q);
  }
}

Value deviceField(const Value &arg) {
  const Value *d = arg.kind() == Value::Kind::Obj ? arg.field("device") : nullptr;
  if (!d) return Value();
  return d->kind() == Value::Kind::List ? Value::tuple(d->items()) : *d;
}

const Value *computeDevice(const UOp *u, PropsOf props, ShapeTable &t) {
  using enum Op;
  switch (u->op()) {
  case PARAM: case STAGE: case BUFFER: return t.device(deviceField(u->arg()));
  case AFTER: return u->numSrc() ? props(u->src(0)).device : &ShapeTable::noDevice;
  case MSELECT: {
    if (!u->numSrc()) return &ShapeTable::noDevice;
    const Value &d = *props(u->src(0)).device;
    if (!d.isSequence() || !u->arg().isInt() || u->arg().getInt() < 0 || size_t(u->arg().getInt()) >= d.size())
      return &ShapeTable::noDevice;
    return t.device(d[u->arg().getInt()]);
  }
  case MSTACK: {
    std::vector<Value> ds;
    for (const UOp *s : u->src()) ds.push_back(*props(s).device);
    return t.device(Value::tuple(std::move(ds)));
  }
  case COPY: return t.device(u->arg().kind() == Value::Kind::List ? Value::tuple(u->arg().items()) : u->arg());
  case ALLREDUCE: return t.device(u->arg().isSequence() && u->arg().size() == 2 ? u->arg()[1] : Value());
  default: break;
  }
  for (const UOp *s : u->src())
    if (!props(s).device->isNone()) return props(s).device;
  return &ShapeTable::noDevice;
}

std::optional<AddrSpace> computeAddrSpace(const UOp *u, PropsOf props) {
  using enum Op;
  if (u->isIn({PARAM, BUFFER})) {
    if (u->arg().kind() != Value::Kind::Obj) return std::nullopt;
    const Value *a = u->arg().field("addrspace");
    if (!a) return AddrSpace::GLOBAL; // ParamArg's default
    return a->isEnum("AddrSpace") ? addrSpaceFromName(a->str()) : std::nullopt;
  }
  if (u->isIn({SPECIAL, RANGE, LOAD})) return AddrSpace::ALU;
  if (!u->numSrc()) return std::nullopt;
  if (u->isIn(group::Movement | OpSet{INDEX, CAST, AFTER, REDUCE, STORE, MSTACK, MSELECT, END, UNSHARD}))
    return props(u->src(0)).addrspace;
  if (u->isIn(group::Elementwise | OpSet{STACK, WMMA, GROUP})) {
    std::optional<AddrSpace> common;
    for (const UOp *s : u->src()) {
      std::optional<AddrSpace> a = props(s).addrspace;
      if (!a) continue;
      if (common && *common != *a) return std::nullopt;
      common = a;
    }
    return common;
  }
  return std::nullopt;
}

} // namespace

struct UOp::PropertyCache : Props {
  static const Props &of(const UOp *u) {
    if (!u->props_) fill(u);
    return *u->props_;
  }
  /// Sources are always filled before their users, so a plain lookup suffices here.
  static const Props &filled(const UOp *u) { return *u->props_; }

  static void fill(const UOp *root) {
    // Usually the node is new and its srcs are known: no need to sort.
    auto src = root->src();
    if (std::all_of(src.begin(), src.end(), [](const UOp *s) { return s->props_ != nullptr; })) {
      fillOne(root);
      return;
    }
    ToposortOptions opts;
    opts.gate = [](const UOp *n) { return !n->props_; };
    for (const UOp *u : toposort(root, opts))
      if (!u->props_) fillOne(u);
  }
  static void fillOne(const UOp *u) {
    PropertyCache *p = u->context().analysis<NodeArena<PropertyCache>>().make();
    ShapeTable &shapes = u->context().analysis<ShapeTable>();
    if (!sharedShape(u, shapes, p->shape)) {
      ShapeOr s = computeShape(u, &filled);
      if (s.shape) p->shape = shapes.intern(std::move(*s.shape));
      if (!s.error.empty()) p->shapeError = &shapes.errors.emplace_back(std::move(s.error));
    } else {
      assert(sameAsComputed(u, p->shape, shapes));
    }
    p->device = computeDevice(u, &filled, shapes);
    p->addrspace = computeAddrSpace(u, &filled);
    u->props_ = p;
  }
  static bool sameAsComputed([[maybe_unused]] const UOp *u, [[maybe_unused]] const InternedShape *shape,
                             [[maybe_unused]] ShapeTable &shapes) {
#ifndef NDEBUG
    ShapeOr s = computeShape(u, &filled);
    return s.error.empty() && (s.shape ? shapes.intern(std::move(*s.shape)) == shape : shape == nullptr);
#else
    return true;
#endif
  }
  /// The common cases of computeShape that need no new shape: a scalar leaf,
  /// a node that takes its first source's shape, an elementwise op over
  /// sources of one shape. Sets `shape` (null: no shape) and returns true, or
  /// returns false for computeShape to work it out (and any error).
  static bool sharedShape(const UOp *u, ShapeTable &shapes, const InternedShape *&shape) {
    using enum Op;
    static constexpr OpSet kLeaves{CONST, GETADDR, RANGE, SPECIAL};
    // computeShape's srcShape(0, false) cases (NOOP only with a source)
    static constexpr OpSet kFirstSource = group::Unary | OpSet{CAST, MSTACK, MSELECT, DETACH, CONTIGUOUS,
                                                               CONTIGUOUS_BACKWARD, AFTER, LOAD, COPY, ALLREDUCE,
                                                               STORE, END, NOOP};
    if (u->isIn(kLeaves)) {
      shape = &shapes.scalar;
      return true;
    }
    if (!u->numSrc()) return false;
    const Props &first = filled(u->src(0));
    if (first.shapeError) return false;
    if (u->isIn(kFirstSource)) {
      if (u->isIn(group::Unary | OpSet{CAST}) && u->numSrc() != 1) return false;
      shape = first.shape;
      return true;
    }
    if (!u->isIn(group::Broadcastable) || !first.shape) return false;
    for (const UOp *s : u->src().subspan(1)) {
      const Props &sp = filled(s);
      if (sp.shape != first.shape || sp.shapeError) return false;
    }
    shape = first.shape;
    return true;
  }
};

const Shape *UOp::shape() const {
  const Props &p = PropertyCache::of(this);
  return p.shape ? &p.shape->dims : nullptr;
}
const std::vector<int64_t> *UOp::staticShape() const {
  const Props &p = PropertyCache::of(this);
  return p.shape && p.shape->allStatic ? &p.shape->staticDims : nullptr;
}
const std::string &UOp::shapeError() const {
  static const std::string none;
  const Props &p = PropertyCache::of(this);
  return p.shapeError ? *p.shapeError : none;
}
const Value &UOp::device() const { return *PropertyCache::of(this).device; }
std::optional<AddrSpace> UOp::addrspace() const { return PropertyCache::of(this).addrspace; }

} // namespace tgc
