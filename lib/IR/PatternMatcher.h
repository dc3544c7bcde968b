//===- PatternMatcher.h - UPat patterns and rule tables ---------*- C++ -*-===//
//
// tinygrad's UPat and PatternMatcher (tinygrad/uop/ops.py). A UPat matches
// one UOp: on its op (or set of ops), dtype, arg, tag, and its srcs, which are
// positional (`src`), tried in every order (`srcAnyOrder`, how commutative
// ops match), or all matched by one pattern (`srcAll`). A named pattern binds
// the node it matched; a name used twice must bind the same node. A rule
// pairs a pattern with a callback that gets the bindings and returns a
// replacement, or nullptr (or the node itself) to decline.
//
//   PatternMatcher pm({
//     rule(var("x") + 0, [](Match &m) { return m["x"]; }),
//     rule(var("x") * cvar("c0") + var("x") * cvar("c1"),
//          [](Match &m) { return m["x"] * (m["c0"] + m["c1"]); }),
//   });
//
// Operators on UPat build ALU patterns as tinygrad's do: `/` and `%` are
// FLOORDIV and FLOORMOD, a C++ number is a CONST pattern with that value, and a
// commutative op matches its srcs in either order. Rules are indexed by op, so
// only the rules that can match a node's op are tried, in insertion order,
// after a cheap check that the ops the pattern requires among the direct srcs
// are there (tinygrad's early reject).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/Diagnostic.h"
#include "IR/UOpBuilder.h"

#include <array>
#include <cassert>
#include <functional>
#include <memory>
#include <source_location>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <vector>

namespace tgc {

/// A non-owning reference to a callable (the continuation of a match).
template <typename Sig> class FunctionRef;
template <typename R, typename... A> class FunctionRef<R(A...)> {
public:
  template <typename F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, FunctionRef>)
  FunctionRef(F &&f) : obj_(const_cast<void *>(static_cast<const void *>(&f))) {
    call_ = [](void *o, A... a) -> R { return (*static_cast<std::remove_reference_t<F> *>(o))(a...); };
  }
  R operator()(A... a) const { return call_(obj_, a...); }

private:
  void *obj_;
  R (*call_)(void *, A...);
};

/// Name -> node bindings of one match, undone on backtracking.
class Bindings {
public:
  static constexpr size_t kMaxNames = 32;
  struct Entry {
    const std::string *name; ///< interned: equal names are the same pointer
    const UOp *node;
  };
  const UOp *find(const std::string *name) const {
    for (size_t i = 0; i < n_; ++i)
      if (entries_[i].name == name) return entries_[i].node;
    return nullptr;
  }
  const UOp *find(std::string_view name) const {
    for (size_t i = 0; i < n_; ++i)
      if (*entries_[i].name == name) return entries_[i].node;
    return nullptr;
  }
  void push(const std::string *name, const UOp *u) { entries_[n_++] = {name, u}; }
  size_t size() const { return n_; }
  void truncate(size_t n) { n_ = n; }
  const Entry &operator[](size_t i) const { return entries_[i]; }

private:
  std::array<Entry, kMaxNames> entries_;
  size_t n_ = 0;
};

/// The state a rewrite shares with the rule callbacks: the user's context
/// object and the two ways a callback can stop normally matching.
struct RewriteEnv {
  void *ctx = nullptr;
  const std::type_info *ctxType = nullptr;
  bool gated = false;                ///< a callback raised tinygrad's BottomUpGate
  std::optional<Diagnostic> error;   ///< a callback failed; the rewrite stops with this

  RewriteEnv() = default;
  template <typename C> explicit RewriteEnv(C &c) : ctx(&c), ctxType(&typeid(C)) {}
  bool stopped() const { return gated || error.has_value(); }
};

/// What a rule callback sees: the bindings, the matched node and the rewrite's context.
class Match {
public:
  Match(const UOp *root, const Bindings &b, RewriteEnv &env) : root_(root), b_(b), env_(env) {}
  /// The node bound to `name` (the pattern must bind it).
  UOpRef operator[](std::string_view name) const {
    const UOp *u = b_.find(name);
    assert(u && "pattern binds no such name");
    return u;
  }
  /// The node bound to `name`, or null.
  UOpRef get(std::string_view name) const { return b_.find(name); }
  /// The node the rule is rewriting.
  UOpRef root() const { return root_; }
  /// The context object passed to graphRewrite / rewrite (tinygrad's `ctx`).
  template <typename T> T &ctx() const {
    assert(env_.ctx && env_.ctxType && *env_.ctxType == typeid(T) && "rewrite context has another type");
    return *static_cast<T *>(env_.ctx);
  }
  bool hasCtx() const { return env_.ctx != nullptr; }
  /// tinygrad's BottomUpGate: in a pre-order (bpm) rewrite, keep the node as
  /// it is now and do not descend into its srcs. The callback's result is ignored.
  std::nullptr_t gate() const {
    env_.gated = true;
    return nullptr;
  }
  /// Stop the whole rewrite with an error (tinygrad raises here).
  std::nullptr_t fail(Diagnostic d) const {
    if (!env_.error) env_.error = std::move(d);
    return nullptr;
  }
  std::nullptr_t fail(std::string message) const { return fail(Diagnostic::at(root_, std::move(message))); }

private:
  const UOp *root_;
  const Bindings &b_;
  RewriteEnv &env_;
};

namespace detail {
struct UPatNode;
}

class UPat {
public:
  /// Matches any node.
  UPat();
  explicit UPat(Op op);
  explicit UPat(OpSet ops);

  // ---- fields (each returns a modified copy) ----
  UPat named(std::string name) const;
  UPat dtype(DType dt) const { return dtype(std::vector<DType>{dt}); }
  UPat dtype(std::vector<DType> dts) const;
  UPat arg(Value v) const;
  template <PyNumber T> UPat arg(T v) const { return arg(pyValue(v)); }
  /// The node's tag must be one of `tags`.
  UPat tag(std::vector<Value> tags) const;
  /// srcs matched positionally; the count must be equal unless allowAnyLen().
  UPat src(std::vector<UPat> srcs) const;
  /// srcs matched in any order (every permutation is tried, in order).
  UPat srcAnyOrder(std::vector<UPat> srcs) const;
  /// every src (any number of them) matches `each`.
  UPat srcAll(UPat each) const;
  UPat allowAnyLen() const;
  /// Replace the implicit early-reject set (ops that must be among the direct srcs).
  UPat earlyReject(OpSet ops) const;
  /// Any of the alternatives (all matching ones produce bindings, in order).
  static UPat any(std::vector<UPat> alternatives);

  // ---- tinygrad's UPat helpers ----
  UPat orCasted(std::string name = "") const;
  UPat orAfter(std::string name = "") const;
  UPat cast(std::vector<DType> dts = {}) const;
  UPat cast(DType dt) const { return cast(std::vector<DType>{dt}); }
  UPat bitcast(std::vector<DType> dts = {}) const;
  UPat alu(Op op, std::vector<UPat> more = {}) const;
  UPat where(UPat t, UPat f) const;
  template <PyNumber A, PyNumber B> UPat where(A t, B f) const { return where(ufix(pyValue(t)), ufix(pyValue(f))); }
  template <PyNumber A> UPat where(A t, UPat f) const { return where(ufix(pyValue(t)), f); }
  template <PyNumber B> UPat where(UPat t, B f) const { return where(t, ufix(pyValue(f))); }
  UPat ne(UPat y) const { return alu(Op::CMPNE, {y}); }
  template <PyNumber T> UPat ne(T y) const { return ne(ufix(pyValue(y))); }
  UPat maximum(UPat y) const { return alu(Op::MAX, {y}); }
  UPat logicalNot() const;
  UPat trunc() const { return alu(Op::TRUNC); }
  UPat reciprocal() const { return alu(Op::RECIPROCAL); }
  UPat index(std::vector<UPat> idx) const;
  UPat load(std::vector<UPat> more = {}) const;
  UPat store(std::vector<UPat> more) const;
  /// STACK whose every element matches this (tinygrad's UPat.broadcast).
  UPat broadcast() const;
  static UPat ufix(const Value &v);

  /// The dtype tinygrad's operators read off a pattern (its first dtype, or void).
  DType firstDType() const;
  /// Ops this pattern can match at its root (empty with matchesAnyOp()).
  OpSet rootOps() const;
  bool matchesAnyOp() const;
  OpSet earlyRejectSet() const;

  /// Calls `k` for every way this pattern matches `u` (extending `b`), in
  /// tinygrad's order, until `k` returns true. Returns whether it did.
  bool match(const UOp *u, Bindings &b, FunctionRef<bool()> k) const;
  /// Every match's bindings as (name, node) lists, for tests and debugging.
  std::vector<std::vector<std::pair<std::string, const UOp *>>> matchAll(const UOp *u) const;

private:
  explicit UPat(std::shared_ptr<const detail::UPatNode> n) : n_(std::move(n)) {}
  std::shared_ptr<detail::UPatNode> mut() const;
  std::shared_ptr<const detail::UPatNode> n_;
  friend struct detail::UPatNode;
};

/// UPat.var: any node, bound to `name` ("" binds nothing), optionally of one of `dts`.
UPat var(std::string name = "", std::vector<DType> dts = {});
inline UPat var(std::string name, DType dt) { return var(std::move(name), std::vector<DType>{dt}); }
/// UPat.cvar: a CONST bound to `name`.
UPat cvar(std::string name = "", std::vector<DType> dts = {});
inline UPat cvar(std::string name, DType dt) { return cvar(std::move(name), std::vector<DType>{dt}); }
/// UPat.const: a CONST holding `v` (compared like Python: 0 == 0.0 == False).
UPat cnst(Value v, std::vector<DType> dts = {});
template <PyNumber T> UPat cnst(T v, std::vector<DType> dts = {}) { return cnst(pyValue(v), std::move(dts)); }
template <PyNumber T> UPat cnst(T v, DType dt) { return cnst(pyValue(v), std::vector<DType>{dt}); }

UPat operator+(UPat a, UPat b);
UPat operator-(UPat a, UPat b);
UPat operator*(UPat a, UPat b);
UPat operator/(UPat a, UPat b); ///< FLOORDIV (tinygrad's `//`)
UPat operator%(UPat a, UPat b); ///< FLOORMOD
UPat operator<(UPat a, UPat b);
UPat operator!=(UPat a, UPat b);
UPat operator&(UPat a, UPat b);
UPat operator|(UPat a, UPat b);
UPat operator^(UPat a, UPat b);
UPat operator<<(UPat a, UPat b);
UPat operator>>(UPat a, UPat b);
UPat operator-(UPat a);
#define TGC_UPAT_NUMBER_OPS(OP)                                                                                        \
  template <PyNumber T> UPat operator OP(UPat a, T b) { return a OP UPat::ufix(pyValue(b)); }                        \
  template <PyNumber T> UPat operator OP(T a, UPat b) { return UPat::ufix(pyValue(a)) OP b; }
TGC_UPAT_NUMBER_OPS(+)
TGC_UPAT_NUMBER_OPS(-)
TGC_UPAT_NUMBER_OPS(*)
TGC_UPAT_NUMBER_OPS(/)
TGC_UPAT_NUMBER_OPS(%)
TGC_UPAT_NUMBER_OPS(<)
TGC_UPAT_NUMBER_OPS(!=)
TGC_UPAT_NUMBER_OPS(&)
TGC_UPAT_NUMBER_OPS(|)
TGC_UPAT_NUMBER_OPS(^)
TGC_UPAT_NUMBER_OPS(<<)
TGC_UPAT_NUMBER_OPS(>>)
#undef TGC_UPAT_NUMBER_OPS

/// A pattern and what to do with a match. R is the callback's result: a
/// const UOp* for rewrites (nullptr declines), or e.g. std::optional<bool>
/// for a spec-style checker (nullopt declines).
template <typename R> struct BasicRule {
  UPat pat;
  std::function<R(Match &)> fn;
  std::source_location loc;
};
using Rule = BasicRule<const UOp *>;

/// A rewrite rule; `fn(Match&)` returns a UOp (or UOpRef), or nullptr to decline.
template <typename Fn>
Rule rule(UPat pat, Fn fn, std::source_location loc = std::source_location::current()) {
  return Rule{std::move(pat), [fn = std::move(fn)](Match &m) -> const UOp * { return fn(m); }, loc};
}

template <typename R> class BasicPatternMatcher {
public:
  BasicPatternMatcher() = default;
  BasicPatternMatcher(std::vector<BasicRule<R>> rules) {
    for (auto &r : rules) add(std::move(r));
  }
  /// tinygrad's pm1 + pm2: pm1's rules, then pm2's.
  BasicPatternMatcher operator+(const BasicPatternMatcher &o) const {
    BasicPatternMatcher out = *this;
    for (const auto &e : o.entries_) out.addEntry(e);
    return out;
  }
  void add(BasicRule<R> r) {
    auto e = std::make_shared<Entry>(Entry{std::move(r), {}});
    e->early = e->rule.pat.earlyRejectSet();
    addEntry(std::move(e));
  }
  size_t size() const { return entries_.size(); }
  /// Whether any rule can match a node of `op` (rewrite() of one that cannot declines).
  bool hasRulesFor(Op op) const { return !byOp_[size_t(op)].empty(); }

  /// The first result of the rules for u's op that is not a decline, or a decline.
  R rewrite(const UOp *u, RewriteEnv &env) const {
    const auto &cands = byOp_[size_t(u->op())];
    if (cands.empty()) return R{};
    OpSet srcOps;
    for (const UOp *s : u->src()) srcOps.insert(s->op());
    Bindings b;
    for (const Entry *e : cands) {
      if ((e->early | srcOps) != srcOps) continue;
      R result{};
      e->rule.pat.match(u, b, [&]() -> bool {
        Match m(u, b, env);
        R r = e->rule.fn(m);
        if (env.stopped()) return true;
        if (isNone(r)) return false;
        // like tinygrad, a rule's first non-None result ends the rule, even if it is u itself
        result = std::move(r);
        return true;
      });
      b.truncate(0);
      if (env.stopped()) return R{};
      if (!declined(u, result)) return result;
    }
    return R{};
  }
  R rewrite(const UOp *u) const {
    RewriteEnv env;
    return rewrite(u, env);
  }
  template <typename C> R rewrite(const UOp *u, C &ctx) const {
    RewriteEnv env(ctx);
    return rewrite(u, env);
  }

private:
  struct Entry {
    BasicRule<R> rule;
    OpSet early;
  };
  static bool isNone(const R &r) {
    if constexpr (std::is_same_v<R, const UOp *>) return r == nullptr;
    else return !r;
  }
  static bool declined(const UOp *u, const R &r) {
    if constexpr (std::is_same_v<R, const UOp *>) return r == nullptr || r == u;
    else return isNone(r);
  }
  void addEntry(std::shared_ptr<const Entry> e) {
    const Entry *p = e.get();
    entries_.push_back(std::move(e));
    if (p->rule.pat.matchesAnyOp()) {
      for (auto &v : byOp_) v.push_back(p);
    } else {
      p->rule.pat.rootOps().forEach([&](Op op) { byOp_[size_t(op)].push_back(p); });
    }
  }
  std::vector<std::shared_ptr<const Entry>> entries_;
  std::array<std::vector<const Entry *>, kNumOps> byOp_;
};
using PatternMatcher = BasicPatternMatcher<const UOp *>;

} // namespace tgc
