//===- PatternMatcher.cpp - UPat construction and matching ----------------===//
//
// Mirrors tinygrad's UPat.__init__ (src forms, permutations, early reject) and
// UPat.match. Matching is written in continuation-passing style: instead of
// building tinygrad's list of binding dicts, each complete match calls the
// continuation, and backtracking undoes the bindings. The order in which
// matches are produced is tinygrad's (alternatives, then permutations, then
// src 0's matches, src 1's, ...), so "first result wins" picks the same one.
//
//===----------------------------------------------------------------------===//
#include "IR/PatternMatcher.h"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <numeric>
#include <unordered_set>

namespace tgc {

namespace {
const std::string *internName(std::string_view s) {
  static std::mutex mu;
  static std::unordered_set<std::string> names; // node addresses are stable
  std::lock_guard<std::mutex> lock(mu);
  return &*names.insert(std::string(s)).first;
}

bool isNumber(const Value &v) {
  auto k = v.kind();
  return k == Value::Kind::Bool || k == Value::Kind::Int || k == Value::Kind::UInt || k == Value::Kind::Float;
}

// Python's == between a pattern's arg and a node's: numbers compare by value
// across int/float/bool (0 == 0.0 == False), NaN equals NaN (ConstFloat).
bool argEquals(const Value &p, const Value &a) {
  if (isNumber(p) && isNumber(a)) {
    auto asDouble = [](const Value &v) {
      switch (v.kind()) {
      case Value::Kind::Bool: return double(v.getBool());
      case Value::Kind::Int: return double(v.getInt());
      case Value::Kind::UInt: return double(v.getUInt());
      default: return v.getFloat();
      }
    };
    if (!p.isFloat() && !a.isFloat()) {
      if (p.kind() == Value::Kind::UInt || a.kind() == Value::Kind::UInt)
        return p.kind() == a.kind() && p.getUInt() == a.getUInt();
      int64_t x = p.isBool() ? p.getBool() : p.getInt(), y = a.isBool() ? a.getBool() : a.getInt();
      return x == y;
    }
    double x = asDouble(p), y = asDouble(a);
    return x == y || (std::isnan(x) && std::isnan(y));
  }
  return p == a;
}
} // namespace

namespace detail {
struct UPatNode {
  enum class Src : uint8_t { None, Tuple, Permute, Repeat };
  // What match() reads on every node it tries comes first (one cache line):
  // patterns are visited far more often than they are built.
  bool isAny = false;
  bool anyOp = true;
  Src srcKind = Src::None;
  bool strictLength = false;
  bool allowAnyLen = false;
  OpSet ops;
  const std::string *name = nullptr;
  size_t requiredLen = 0;
  std::vector<DType> dtypes;
  std::vector<std::vector<UPat>> srcAlts;   // tuple: 1; permutations: all orders; repeat: 1 (of one pattern)
  std::vector<UPat> srcIn;                  // as given: the tuple, the list, the repeated pattern, or the alternatives
  std::optional<Value> arg;
  std::optional<std::vector<Value>> tags;
  std::optional<OpSet> customEarly;
  OpSet early;

  void finalize();
  static bool same(const UPatNode &a, const UPatNode &b);
  static const UPatNode &of(const UPat &p) { return *p.n_; }
  /// p certainly does not match u: its op is wrong (checked before a match is set up).
  static bool opRejects(const UPat &p, const UOp *u) {
    const UPatNode &n = *p.n_;
    return !n.isAny && !n.anyOp && !n.ops.contains(u->op());
  }
};

bool UPatNode::same(const UPatNode &a, const UPatNode &b) {
  if (&a == &b) return true;
  if (a.anyOp != b.anyOp || a.ops != b.ops || a.dtypes != b.dtypes || a.arg != b.arg || a.tags != b.tags ||
      a.name != b.name || a.srcKind != b.srcKind || a.allowAnyLen != b.allowAnyLen || a.isAny != b.isAny ||
      a.customEarly != b.customEarly || a.srcIn.size() != b.srcIn.size())
    return false;
  for (size_t i = 0; i < a.srcIn.size(); ++i)
    if (!same(*a.srcIn[i].n_, *b.srcIn[i].n_)) return false;
  return true;
}

void UPatNode::finalize() {
  srcAlts.clear();
  if (isAny) {
    early = {};
    return;
  }
  switch (srcKind) {
  case Src::None: break;
  case Src::Tuple: srcAlts.push_back(srcIn); break;
  case Src::Repeat: srcAlts.push_back(srcIn); break;
  case Src::Permute: {
    bool allSame = true;
    for (const UPat &p : srcIn) allSame &= same(*p.n_, *srcIn[0].n_);
    if (allSame) {
      srcAlts.push_back(srcIn);
      break;
    }
    std::vector<size_t> idx(srcIn.size());
    std::iota(idx.begin(), idx.end(), 0);
    do {
      std::vector<UPat> perm;
      for (size_t i : idx) perm.push_back(srcIn[i]);
      srcAlts.push_back(std::move(perm));
    } while (std::next_permutation(idx.begin(), idx.end()));
    break;
  }
  }
  strictLength = !(allowAnyLen || srcKind == Src::Repeat || srcKind == Src::None);
  requiredLen = (srcKind == Src::Repeat || srcKind == Src::None) ? 0 : srcIn.size();
  if (customEarly) {
    early = *customEarly;
  } else {
    early = {};
    if (!srcAlts.empty())
      for (const UPat &p : srcAlts[0]) {
        const UPatNode &n = *p.n_;
        if (n.isAny || n.anyOp) continue;
        if (n.ops.size() == 1) n.ops.forEach([&](Op o) { early.insert(o); });
      }
  }
}
} // namespace detail

using detail::UPatNode;

UPat::UPat() : n_(std::make_shared<UPatNode>()) {}
UPat::UPat(Op op) : UPat(OpSet{op}) {}
UPat::UPat(OpSet ops) {
  auto n = std::make_shared<UPatNode>();
  n->anyOp = false;
  n->ops = ops;
  n_ = std::move(n);
}

std::shared_ptr<UPatNode> UPat::mut() const { return std::make_shared<UPatNode>(*n_); }

#define TGC_UPAT_MODIFY(stmt)                                                                                          \
  auto n = mut();                                                                                                      \
  stmt;                                                                                                                \
  n->finalize();                                                                                                       \
  return UPat(std::shared_ptr<const UPatNode>(std::move(n)))

UPat UPat::named(std::string name) const { TGC_UPAT_MODIFY(n->name = name.empty() ? nullptr : internName(name)); }
UPat UPat::dtype(std::vector<DType> dts) const { TGC_UPAT_MODIFY(n->dtypes = std::move(dts)); }
UPat UPat::arg(Value v) const { TGC_UPAT_MODIFY(n->arg = std::move(v)); }
UPat UPat::tag(std::vector<Value> tags) const { TGC_UPAT_MODIFY(n->tags = std::move(tags)); }
UPat UPat::src(std::vector<UPat> srcs) const {
  TGC_UPAT_MODIFY((n->srcKind = UPatNode::Src::Tuple, n->srcIn = std::move(srcs)));
}
UPat UPat::srcAnyOrder(std::vector<UPat> srcs) const {
  TGC_UPAT_MODIFY((n->srcKind = UPatNode::Src::Permute, n->srcIn = std::move(srcs)));
}
UPat UPat::srcAll(UPat each) const {
  TGC_UPAT_MODIFY((n->srcKind = UPatNode::Src::Repeat, n->srcIn = {std::move(each)}));
}
UPat UPat::allowAnyLen() const { TGC_UPAT_MODIFY(n->allowAnyLen = true); }
UPat UPat::earlyReject(OpSet ops) const { TGC_UPAT_MODIFY(n->customEarly = ops); }
#undef TGC_UPAT_MODIFY

UPat UPat::any(std::vector<UPat> alternatives) {
  auto n = std::make_shared<UPatNode>();
  n->isAny = true;
  n->srcIn = std::move(alternatives);
  n->finalize();
  return UPat(std::shared_ptr<const UPatNode>(std::move(n)));
}

UPat UPat::orCasted(std::string name) const {
  UPat self = name.empty() ? *this : named(name);
  UPat c = UPat(Op::CAST).src({*this});
  return any({self, name.empty() ? c : c.named(name)});
}

UPat UPat::orAfter(std::string name) const {
  UPat self = name.empty() ? *this : named(name);
  UPat a = UPat(Op::AFTER).src({*this}).allowAnyLen();
  return any({self, name.empty() ? a : a.named(name)});
}

UPat UPat::cast(std::vector<DType> dts) const {
  if (dts.size() == 1 && n_->dtypes == dts) return *this;
  UPat c = UPat(Op::CAST).src({*this});
  return dts.empty() ? c : c.dtype(std::move(dts));
}

UPat UPat::bitcast(std::vector<DType> dts) const {
  UPat c = UPat(Op::BITCAST).src({*this});
  return dts.empty() ? c : c.dtype(std::move(dts));
}

UPat UPat::alu(Op op, std::vector<UPat> more) const {
  more.insert(more.begin(), *this);
  std::vector<DType> dts = (op == Op::CMPLT || op == Op::CMPNE) ? std::vector<DType>{dtypes::Bool} : more.back().n_->dtypes;
  UPat p(op);
  p = group::Commutative.contains(op) ? p.srcAnyOrder(std::move(more)) : p.src(std::move(more));
  return dts.empty() ? p : p.dtype(std::move(dts));
}

UPat UPat::where(UPat t, UPat f) const { return alu(Op::WHERE, {std::move(t), std::move(f)}); }
UPat UPat::logicalNot() const { return cast(dtypes::Bool).ne(true); }

UPat UPat::index(std::vector<UPat> idx) const {
  idx.insert(idx.begin(), *this);
  return UPat(Op::INDEX).src(std::move(idx));
}
UPat UPat::load(std::vector<UPat> more) const {
  more.insert(more.begin(), *this);
  return UPat(Op::LOAD).src(std::move(more));
}
UPat UPat::store(std::vector<UPat> more) const {
  more.insert(more.begin(), *this);
  return UPat(Op::STORE).src(std::move(more));
}
UPat UPat::broadcast() const {
  UPat p = UPat(Op::STACK).srcAll(*this);
  return n_->dtypes.empty() ? p : p.dtype(n_->dtypes);
}
UPat UPat::ufix(const Value &v) { return UPat(Op::CONST).arg(v); }

DType UPat::firstDType() const { return n_->dtypes.empty() ? dtypes::Void : n_->dtypes[0]; }
OpSet UPat::rootOps() const {
  if (!n_->isAny) return n_->ops;
  OpSet all;
  for (const UPat &alt : n_->srcIn) all = all | alt.rootOps();
  return all;
}
bool UPat::matchesAnyOp() const {
  if (!n_->isAny) return n_->anyOp;
  for (const UPat &alt : n_->srcIn)
    if (alt.matchesAnyOp()) return true;
  return false;
}
OpSet UPat::earlyRejectSet() const { return n_->early; }

UPat var(std::string name, std::vector<DType> dts) {
  UPat p = UPat().named(std::move(name));
  return dts.empty() ? p : p.dtype(std::move(dts));
}
UPat cvar(std::string name, std::vector<DType> dts) {
  UPat p = UPat(Op::CONST).named(std::move(name));
  return dts.empty() ? p : p.dtype(std::move(dts));
}
UPat cnst(Value v, std::vector<DType> dts) {
  UPat p = UPat(Op::CONST).arg(std::move(v));
  return dts.empty() ? p : p.dtype(std::move(dts));
}

UPat operator+(UPat a, UPat b) { return a.alu(Op::ADD, {b}); }
UPat operator*(UPat a, UPat b) { return a.alu(Op::MUL, {b}); }
UPat operator-(UPat a) { return a.firstDType().isBool() ? a.logicalNot() : a * -1; }
UPat operator-(UPat a, UPat b) { return a.alu(Op::ADD, {-b}); }
UPat operator/(UPat a, UPat b) { return a.alu(Op::FLOORDIV, {b}); }
UPat operator%(UPat a, UPat b) { return a.alu(Op::FLOORMOD, {b}); }
UPat operator<(UPat a, UPat b) { return a.alu(Op::CMPLT, {b}); }
UPat operator!=(UPat a, UPat b) { return a.alu(Op::CMPNE, {b}); }
UPat operator&(UPat a, UPat b) { return a.alu(Op::AND, {b}); }
UPat operator|(UPat a, UPat b) { return a.alu(Op::OR, {b}); }
UPat operator^(UPat a, UPat b) { return a.alu(Op::XOR, {b}); }
UPat operator<<(UPat a, UPat b) { return a.alu(Op::SHL, {b}); }
UPat operator>>(UPat a, UPat b) { return a.alu(Op::SHR, {b}); }

namespace {
// Whether leaf pattern p (no srcs, not an alternative) matches u; binds its
// name if it does. The same checks, in effect, as UPat::match on a leaf: a
// leaf matches at most one way, so no continuation is needed for it.
bool matchLeaf(const UPatNode &p, const UOp *u, Bindings &b) {
  if (!p.anyOp && !p.ops.contains(u->op())) return false;
  const UOp *bound = p.name ? b.find(p.name) : nullptr;
  if (bound && bound != u) return false;
  if (!p.dtypes.empty() && std::find(p.dtypes.begin(), p.dtypes.end(), u->dtype()) == p.dtypes.end()) return false;
  if (p.arg && !argEquals(*p.arg, u->arg())) return false;
  if (p.tags && std::find(p.tags->begin(), p.tags->end(), u->tag()) == p.tags->end()) return false;
  if (p.name && !bound) {
    if (b.size() == Bindings::kMaxNames) return false;
    b.push(p.name, u);
  }
  return true;
}

// Matches srcs[i..] against pats (or every src against pats[0] if repeat),
// then calls k. Leaf patterns, most srcs of most rules, are checked in a loop;
// only a pattern with srcs of its own (or alternatives) needs a continuation.
bool matchSeq(const std::vector<UPat> &pats, bool repeat, std::span<const UOp *const> srcs, size_t i, Bindings &b,
              FunctionRef<bool()> k) {
  size_t n = repeat ? srcs.size() : std::min(srcs.size(), pats.size());
  size_t save = b.size();
  for (; i < n; ++i) {
    const UPat &p = repeat ? pats[0] : pats[i];
    const UPatNode &pn = UPatNode::of(p);
    if (pn.isAny || pn.srcKind != UPatNode::Src::None) {
      if (UPatNode::opRejects(p, srcs[i]) ||
          !p.match(srcs[i], b, [&]() { return matchSeq(pats, repeat, srcs, i + 1, b, k); })) {
        b.truncate(save);
        return false;
      }
      return true;
    }
    if (!matchLeaf(pn, srcs[i], b)) {
      b.truncate(save);
      return false;
    }
  }
  if (k()) return true;
  b.truncate(save);
  return false;
}
} // namespace

bool UPat::match(const UOp *u, Bindings &b, FunctionRef<bool()> k) const {
  const UPatNode &p = *n_;
  size_t save = b.size();
  if (p.isAny) {
    for (const UPat &alt : p.srcIn) {
      if (alt.match(u, b, k)) return true;
      b.truncate(save);
    }
    return false;
  }
  if (!p.anyOp && !p.ops.contains(u->op())) return false;
  if (p.name) {
    if (const UOp *bound = b.find(p.name)) {
      if (bound != u) return false;
    } else {
      if (b.size() == Bindings::kMaxNames) return false;
      b.push(p.name, u);
    }
  }
  auto fail = [&] {
    b.truncate(save);
    return false;
  };
  if (!p.dtypes.empty() && std::find(p.dtypes.begin(), p.dtypes.end(), u->dtype()) == p.dtypes.end()) return fail();
  if (p.arg && !argEquals(*p.arg, u->arg())) return fail();
  if (p.tags && std::find(p.tags->begin(), p.tags->end(), u->tag()) == p.tags->end()) return fail();
  if (u->numSrc() < p.requiredLen || (p.strictLength && u->numSrc() != p.requiredLen)) return fail();
  if (p.srcKind == UPatNode::Src::None) {
    if (k()) return true;
    return fail();
  }
  bool repeat = p.srcKind == UPatNode::Src::Repeat;
  size_t withName = b.size();
  for (const auto &alt : p.srcAlts) {
    if (matchSeq(alt, repeat, u->src(), 0, b, k)) return true;
    b.truncate(withName);
  }
  return fail();
}

std::vector<std::vector<std::pair<std::string, const UOp *>>> UPat::matchAll(const UOp *u) const {
  std::vector<std::vector<std::pair<std::string, const UOp *>>> out;
  Bindings b;
  match(u, b, [&]() {
    std::vector<std::pair<std::string, const UOp *>> one;
    for (size_t i = 0; i < b.size(); ++i) one.emplace_back(*b[i].name, b[i].node);
    out.push_back(std::move(one));
    return false;
  });
  return out;
}

} // namespace tgc
