//===- SymbolicUtil.cpp - tinygrad's symbolic helper methods --------------===//
#include "IR/SymbolicUtil.h"

#include "IR/ExecAlu.h"
#include "IR/NodeTable.h"

#include <algorithm>
#include <unordered_map>
#include <numeric>

namespace tgc::sym {

bool isIntConst(const UOp *u) {
  return u->is(Op::CONST) && (u->arg().isInt() || u->arg().isBool());
}

static int64_t intVal(const UOp *u) { return u->arg().isBool() ? u->arg().getBool() : u->arg().getInt(); }

std::optional<int64_t> checkedAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}
std::optional<int64_t> checkedMul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

int64_t pyGcd(std::span<const int64_t> xs) {
  uint64_t g = 0;
  for (int64_t x : xs) g = std::gcd(g, x < 0 ? uint64_t(0) - uint64_t(x) : uint64_t(x));
  return g > uint64_t(INT64_MAX) ? INT64_MAX : int64_t(g);
}

std::vector<UOpRef> splitUOp(const UOp *u, Op sep) {
  std::vector<UOpRef> out;
  std::vector<const UOp *> stack{u};
  while (!stack.empty()) {
    const UOp *x = stack.back();
    stack.pop_back();
    if (x->op() != sep) {
      out.push_back(x);
      continue;
    }
    for (size_t i = x->numSrc(); i-- > 0;) stack.push_back(x->src(i));
  }
  return out;
}

// These helpers recurse on the expression like tinygrad's (whose recursion is
// bounded by Python's limit of ~1000 frames). Past kMaxDepth they give the
// conservative answer ("no known factor", "cannot divide") instead of
// overflowing the stack on a hostile, very deep input.
constexpr int kMaxDepth = 2000;

static int64_t constFactorAt(const UOp *u, int depth);
static UOpRef dividesAt(const UOp *u, int64_t v, int depth);
static UOpRef divideExactAt(const UOp *u, const UOp *v, int depth);

int64_t constFactor(const UOp *u) { return constFactorAt(u, 0); }
UOpRef divides(const UOp *u, int64_t v) { return dividesAt(u, v, 0); }
UOpRef divideExact(const UOp *u, const UOp *v) { return divideExactAt(u, v, 0); }

static int64_t constFactorAt(const UOp *u, int depth) {
  if (depth > kMaxDepth) return 1;
  switch (u->op()) {
  case Op::CONST: return isIntConst(u) ? intVal(u) : 1;
  case Op::STACK: {
    std::vector<int64_t> fs;
    for (const UOp *s : u->src()) fs.push_back(constFactorAt(s, depth + 1));
    return pyGcd(fs);
  }
  case Op::ADD: {
    if (u->numSrc() != 2) return 1;
    int64_t fs[2] = {constFactorAt(u->src(0), depth + 1), constFactorAt(u->src(1), depth + 1)};
    return pyGcd(fs);
  }
  case Op::MUL:
    if (u->numSrc() != 2) return 1;
    if (isIntConst(u->src(0))) return intVal(u->src(0));
    if (isIntConst(u->src(1))) return intVal(u->src(1));
    return 1;
  case Op::PARAM: case Op::BUFFER:
    if (const Value *m = u->arg().field("multiple_of"); m && m->isInt()) return m->getInt();
    return 1;
  default: return 1;
  }
}

static UOpRef dividesAt(const UOp *u, int64_t v, int depth) {
  if (v == 1) return u;
  if (v == 0 || depth > kMaxDepth) return nullptr;
  UOpRef x(u);
  switch (u->op()) {
  case Op::CONST:
    if (!isIntConst(u)) return nullptr;
    if (floorMod(intVal(u), v) != 0) return nullptr;
    return x.constLike(floorDiv(intVal(u), v));
  case Op::STACK: {
    std::vector<const UOp *> srcs;
    for (const UOp *s : u->src()) {
      UOpRef d = dividesAt(s, v, depth + 1);
      if (!d) return nullptr;
      srcs.push_back(d);
    }
    return u->context().get(Op::STACK, u->dtype(), std::move(srcs));
  }
  case Op::ADD: {
    if (u->numSrc() != 2) return nullptr;
    UOpRef d0 = dividesAt(u->src(0), v, depth + 1);
    if (!d0) return nullptr;
    UOpRef d1 = dividesAt(u->src(1), v, depth + 1);
    if (!d1) return nullptr;
    return d0 + d1;
  }
  case Op::MUL:
    if (u->numSrc() != 2) return nullptr;
    if (UOpRef d0 = dividesAt(u->src(0), v, depth + 1)) return d0 * UOpRef(u->src(1));
    if (UOpRef d1 = dividesAt(u->src(1), v, depth + 1)) return UOpRef(u->src(0)) * d1;
    return nullptr;
  case Op::PARAM: case Op::BUFFER:
    if (const Value *m = u->arg().field("multiple_of"); m && m->isInt() && floorMod(m->getInt(), v) == 0) return x / v;
    return nullptr;
  default: return nullptr;
  }
}

std::pair<UOpRef, int64_t> popConst(const UOp *u, Op op) {
  if (u->op() == op && u->numSrc() == 2 && isIntConst(u->src(1))) return {u->src(0), intVal(u->src(1))};
  int64_t identity = op == Op::MUL ? 1 : op == Op::MAX ? u->dtype().minInt() : 0;
  return {u, identity};
}

// Python's Counter over a term's MUL factors, in first-seen order.
using Counter = std::vector<std::pair<const UOp *, int64_t>>;
static Counter countFactors(const UOp *term) {
  Counter c;
  for (UOpRef f : splitUOp(term, Op::MUL)) {
    auto it = std::find_if(c.begin(), c.end(), [&](auto &e) { return e.first == f.get(); });
    if (it == c.end()) c.emplace_back(f, 1);
    else ++it->second;
  }
  return c;
}

UOpRef gcd(std::span<const UOpRef> uops) {
  std::vector<UOpRef> terms;
  std::vector<int64_t> factors;
  for (UOpRef u : uops) {
    int64_t f = constFactor(u);
    UOpRef t = divides(u, f);
    factors.push_back(f);
    terms.push_back(t);
  }
  UOpRef c = UOpRef(uops[0]).constLike(pyGcd(factors));
  for (UOpRef t : terms)
    if (!t) return c.constLike(1); // tinygrad cannot factor this; there is no common factor to find
  Counter common = countFactors(terms[0]);
  for (size_t i = 1; i < terms.size(); ++i) {
    Counter other = countFactors(terms[i]);
    Counter next;
    for (auto [f, n] : common) {
      auto it = std::find_if(other.begin(), other.end(), [&](auto &e) { return e.first == f; });
      int64_t m = it == other.end() ? 0 : std::min(n, it->second);
      if (m > 0) next.emplace_back(f, m);
    }
    common = std::move(next);
  }
  // math.prod([*factors, const]) starts from the int 1
  std::optional<UOpRef> acc;
  auto mul = [&](UOpRef x) { acc = acc ? *acc * x : 1 * x; };
  for (auto [f, n] : common)
    for (int64_t k = 0; k < n; ++k) mul(f);
  mul(UOpRef(terms[0]).constLike(pyGcd(factors)));
  return *acc;
}

static UOpRef divideExactAt(const UOp *u, const UOp *v, int depth) {
  UOpRef x(u);
  if (u == v) return x.constLike(1);
  if (isIntConst(v)) return dividesAt(u, intVal(v), depth);
  if (depth > kMaxDepth) return nullptr;
  if (u->is(Op::ADD) && u->numSrc() == 2) {
    UOpRef s0 = divideExactAt(u->src(0), v, depth + 1);
    if (!s0) return nullptr;
    UOpRef s1 = divideExactAt(u->src(1), v, depth + 1);
    if (!s1) return nullptr;
    return s0 + s1;
  }
  if (u->is(Op::MUL)) {
    auto [fac, c] = popConst(u, Op::MUL);
    auto [divFac, divC] = popConst(v, Op::MUL);
    if (divC == 0 || floorMod(c, divC) != 0) return nullptr;
    Counter count = countFactors(fac);
    for (UOpRef f : splitUOp(divFac, Op::MUL)) {
      auto it = std::find_if(count.begin(), count.end(), [&](auto &e) { return e.first == f.get(); });
      if (it == count.end()) return nullptr; // its count would go negative
      --it->second;
    }
    for (auto &[f, n] : count)
      if (n < 0) return nullptr;
    UOpRef acc = x.constLike(floorDiv(c, divC));
    for (auto [f, n] : count)
      for (int64_t k = 0; k < n; ++k) acc = acc * UOpRef(f);
    return acc;
  }
  return nullptr;
}

UOpRef pySum(Context &ctx, std::span<const UOpRef> uops) {
  if (uops.empty()) return ctx.constInt(0);
  UOpRef acc = 0 + uops[0];
  for (size_t i = 1; i < uops.size(); ++i) acc = acc + uops[i];
  return acc;
}

UOpRef usum(std::span<const UOpRef> uops) {
  UOpRef acc = uops[0];
  for (size_t i = 1; i < uops.size(); ++i) acc = acc.dtype().isBool() ? acc | uops[i] : acc + uops[i];
  return acc;
}

namespace {
int kindRank(const Value &v) {
  switch (v.kind()) {
  case Value::Kind::Bool: case Value::Kind::Int: case Value::Kind::UInt: case Value::Kind::BigInt:
  case Value::Kind::Float: return 0;
  default: return 1 + int(v.kind());
  }
}
template <typename T> int cmp3(const T &a, const T &b) { return a < b ? -1 : b < a ? 1 : 0; }
} // namespace

int pyCompare(const Value &a, const Value &b) {
  if (kindRank(a) == 0 && kindRank(b) == 0) {
    if (a.isFloat() || b.isFloat()) {
      auto d = [](const Value &v) {
        return v.isFloat() ? v.getFloat() : v.isBool() ? double(v.getBool()) : v.kind() == Value::Kind::UInt ? double(v.getUInt()) : double(v.getInt());
      };
      return cmp3(d(a), d(b));
    }
    auto big = [](const Value &v) -> __int128 {
      if (v.isBool()) return v.getBool();
      if (v.kind() == Value::Kind::UInt) return __int128(v.getUInt());
      if (v.kind() == Value::Kind::BigInt) return v.str()[0] == '-' ? -(__int128(1) << 100) : (__int128(1) << 100);
      return v.getInt();
    };
    return cmp3(big(a), big(b));
  }
  if (kindRank(a) != kindRank(b)) return cmp3(kindRank(a), kindRank(b));
  switch (a.kind()) {
  case Value::Kind::None: case Value::Kind::Invalid: return 0;
  case Value::Kind::DType: return a.getDType() == b.getDType() ? 0 : a.getDType() < b.getDType() ? -1 : 1;
  case Value::Kind::UOp: return tuplizeCompare(a.getUOp(), b.getUOp());
  case Value::Kind::Str: case Value::Kind::Bytes: case Value::Kind::Callable: return cmp3(a.str(), b.str());
  case Value::Kind::Enum: case Value::Kind::Repr:
    if (int c = cmp3(a.cls(), b.cls())) return c;
    return cmp3(a.str(), b.str());
  default: {
    // tuples, lists, records (ParamArg is ordered by its fields): lexicographic
    if (int c = cmp3(a.cls(), b.cls())) return c;
    size_t n = std::min(a.size(), b.size());
    for (size_t i = 0; i < n; ++i)
      if (int c = pyCompare(a[i], b[i])) return c;
    return cmp3(a.size(), b.size());
  }
  }
}

int tuplizeCompare(const UOp *a, const UOp *b) {
  auto header = [](const UOp *x, const UOp *y) -> int {
    if (x->op() != y->op()) return x->op() < y->op() ? -1 : 1;
    if (int c = pyCompare(x->arg(), y->arg())) return c;
    if (x->dtype() != y->dtype()) return x->dtype() < y->dtype() ? -1 : 1;
    return 0;
  };
  struct Frame {
    const UOp *a, *b;
    size_t i;
  };
  if (a == b) return 0;
  if (int c = header(a, b)) return c;
  std::vector<Frame> stack{{a, b, 0}};
  while (!stack.empty()) {
    Frame &f = stack.back();
    size_t n = std::min(f.a->numSrc(), f.b->numSrc());
    if (f.i == n) {
      int c = cmp3(f.a->numSrc(), f.b->numSrc());
      stack.pop_back();
      if (c) return c;
      continue;
    }
    const UOp *x = f.a->src(f.i), *y = f.b->src(f.i);
    ++f.i;
    if (x == y) continue;
    if (int c = header(x, y)) return c;
    stack.push_back({x, y, 0});
  }
  return 0;
}

namespace {
struct SliceScratch {
  struct Empty {};
  NodeTable<Empty> seen;
  std::vector<const UOp *> stack;
};
// Depth-first search below (and including) u for a node satisfying pred,
// skipping the nodes with an id below minId (and so everything under them).
template <typename Pred> bool anyBelow(const UOp *u, Pred pred, uint32_t minId = 0) {
  if (u->id() < minId) return false;
  ScratchPool<SliceScratch>::Lease scratch;
  auto &seen = scratch->seen;
  auto &stack = scratch->stack;
  seen.reset(u->context());
  stack.assign(1, u);
  seen.insert(u);
  while (!stack.empty()) {
    const UOp *x = stack.back();
    stack.pop_back();
    if (pred(x)) return true;
    for (const UOp *s : x->src())
      if (s->id() >= minId && seen.insert(s)) stack.push_back(s);
  }
  return false;
}
} // namespace

bool opInBackwardSliceWithSelf(const UOp *u, OpSet ops) {
  return anyBelow(u, [&](const UOp *x) { return ops.contains(x->op()); });
}

size_t backwardSliceSize(const UOp *u) {
  size_t n = 0;
  anyBelow(u, [&](const UOp *) {
    ++n;
    return false;
  });
  return n - 1;
}

bool inBackwardSliceWithSelf(const UOp *x, const UOp *u) {
  // A node is made after its srcs, so everything below y has a smaller id
  // than y: x cannot be below a node with a smaller id than x's.
  return anyBelow(u, [&](const UOp *y) { return y == x; }, x->id());
}

std::vector<const UOp *> rangesOf(const UOp *root) {
  // tinygrad's range_start: the src position from which these ops close ranges
  auto rangeStart = [](Op op) -> int {
    switch (op) {
    case Op::STAGE: case Op::REDUCE: case Op::END: case Op::CALL: case Op::FUNCTION: return 1;
    case Op::WMMA: return 3;
    case Op::LINEAR: return 0;
    default: return -1;
    }
  };
  std::unordered_map<const UOp *, std::vector<const UOp *>> memo; // _ranges, without the node itself
  auto ranges = [&](const UOp *u) {
    std::vector<const UOp *> r = memo.at(u);
    if (u->is(Op::RANGE) && std::find(r.begin(), r.end(), u) == r.end()) r.insert(r.begin(), u);
    return r;
  };
  // ended_ranges; AFTER ends what its deps end (walked with a stack: AFTERs can nest deeply)
  auto ended = [&](const UOp *top, std::vector<const UOp *> &out) {
    std::vector<const UOp *> stack{top};
    while (!stack.empty()) {
      const UOp *u = stack.back();
      stack.pop_back();
      int start = rangeStart(u->op());
      if (start >= 0) {
        for (size_t i = size_t(start); i < u->numSrc(); ++i) out.push_back(u->src(i));
      } else if (u->is(Op::AFTER)) {
        for (size_t i = u->numSrc(); i-- > 1;) stack.push_back(u->src(i));
      } else if (u->is(Op::UNSHARD)) {
        for (size_t i = 1; i < u->numSrc(); ++i) out.push_back(u->src(i));
      }
    }
  };
  for (const UOp *u : toposort(root)) {
    std::vector<const UOp *> r;
    auto add = [&](const UOp *x) {
      if (std::find(r.begin(), r.end(), x) == r.end()) r.push_back(x);
    };
    for (const UOp *s : u->src())
      for (const UOp *x : ranges(s)) add(x);
    std::vector<const UOp *> closed;
    ended(u, closed);
    for (const UOp *er : closed) {
      if (er->is(Op::RANGE)) std::erase(r, er);
      else
        for (const UOp *x : ranges(er)) std::erase(r, x);
    }
    memo[u] = std::move(r);
  }
  return ranges(root);
}

bool inBoolSlice(const UOp *x, const UOp *u) { return x->dtype().isBool() && inBackwardSliceWithSelf(x, u); }

} // namespace tgc::sym
