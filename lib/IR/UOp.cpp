//===- UOp.cpp - interning, toposort, substitution ------------------------===//
#include "IR/UOp.h"

#include "IR/NodeTable.h"
#include "IR/PtrMap.h"

#include <algorithm>
#include <atomic>
#include <new>
#include <unordered_set>

namespace tgc {

static size_t hashMix(size_t h, size_t v) { return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)); }

std::string shapeStr(const Shape &s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += ", ";
    out += s[i].isStatic() ? std::to_string(s[i].value) : "?";
  }
  return out + "]";
}

std::string_view addrSpaceName(AddrSpace a) {
  switch (a) {
  case AddrSpace::GLOBAL: return "GLOBAL";
  case AddrSpace::LOCAL: return "LOCAL";
  case AddrSpace::REG: return "REG";
  case AddrSpace::ALU: return "ALU";
  }
  return "?";
}

std::optional<AddrSpace> addrSpaceFromName(std::string_view n) {
  for (AddrSpace a : {AddrSpace::GLOBAL, AddrSpace::LOCAL, AddrSpace::REG, AddrSpace::ALU})
    if (addrSpaceName(a) == n) return a;
  return std::nullopt;
}

std::string Location::str() const {
  std::string s = file.empty() ? "<input>" : file;
  if (line) return s + ":" + std::to_string(line) + ":" + std::to_string(col);
  if (nodeId >= 0) return s + ": node " + std::to_string(nodeId);
  return s;
}

const Value &UOp::noneTag() {
  static const Value none;
  return none;
}

UOp::UOp(Context *ctx, uint32_t id, Op op, DType dt, std::span<const UOp *const> src, Value arg, const Value *tag,
         size_t h)
    : src_(src.data()), dtype_(dt), hash_(h), id_(id), numSrc_(uint32_t(src.size())), op_(op), ctx_(ctx),
      arg_(std::move(arg)), tag_(tag) {
  if (op_ == Op::RANGE) rangeLo_ = rangeHi_ = id_;
  for (const UOp *s : src) {
    rangeLo_ = std::min(rangeLo_, s->rangeLo_);
    rangeHi_ = std::max(rangeHi_, s->rangeHi_);
  }
}

const UOp *UOp::withSrc(std::span<const UOp *const> src) const { return ctx_->intern(op_, dtype_, src, arg_, tag()); }
const UOp *UOp::withArg(Value arg) const { return ctx_->intern(op_, dtype_, src(), std::move(arg), Value(tag())); }
const UOp *UOp::withTag(Value tag) const { return ctx_->intern(op_, dtype_, src(), arg_, std::move(tag)); }
const UOp *UOp::withDType(DType dt) const { return ctx_->intern(op_, dt, src(), arg_, tag()); }

const Value &UOp::constValue() const {
  static const Value none;
  return op_ == Op::CONST ? arg_ : none;
}

std::string UOp::str() const {
  std::string s = std::string(opName(op_)) + " " + std::string(dtype_ ? dtype_.name() : "?");
  if (!arg_.isNone()) s += " " + arg_.toString();
  return s;
}

Context::Context() : table_(1024, TableSlot{0, 0}) {}

size_t Context::newAnalysisSlot() {
  static std::atomic<size_t> next{0};
  return next++;
}

Context::~Context() {
  for (size_t i = 0; i < size_; ++i) chunks_[i / kNodesPerChunk][i % kNodesPerChunk].~UOp();
  for (UOp *c : chunks_) ::operator delete(static_cast<void *>(c), std::align_val_t(alignof(UOp)));
}

const UOp *const *Context::storeSrc(std::span<const UOp *const> src) {
  if (src.empty()) return nullptr;
  static constexpr size_t kBlock = 8192;
  if (src.size() > kBlock / 8) { // a long list gets a block of its own; the current one keeps its room
    srcPool_.emplace_back(new const UOp *[src.size()]);
    std::copy(src.begin(), src.end(), srcPool_.back().get());
    return srcPool_.back().get();
  }
  if (src.size() > srcPoolLeft_) {
    srcPool_.emplace_back(new const UOp *[kBlock]);
    srcPoolNext_ = srcPool_.back().get();
    srcPoolLeft_ = kBlock;
  }
  const UOp **out = srcPoolNext_;
  std::copy(src.begin(), src.end(), out);
  srcPoolNext_ += src.size();
  srcPoolLeft_ -= src.size();
  return out;
}

// The slot a node's hash bits start probing at: the combined hash's low bits are weak.
static size_t slotOf(size_t h, size_t mask) {
  uint64_t x = h;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return size_t(x) & mask;
}

void Context::reserve(size_t nodes) {
  size_t want = table_.size();
  while (want < 2 * nodes) want *= 2;
  if (want != table_.size()) growTable(want);
  chunks_.reserve(nodes / kNodesPerChunk + 1);
}

void Context::growTable(size_t slots) {
  std::vector<TableSlot> old(slots, TableSlot{0, 0});
  old.swap(table_);
  size_t mask = table_.size() - 1;
  for (const TableSlot &s : old) {
    if (!s.idPlus1) continue;
    size_t i = slotOf(s.hashBits, mask); // growing touches no node
    while (table_[i].idPlus1) i = (i + 1) & mask;
    table_[i] = s;
  }
}

// The arg and tag are copied (or moved, from a temporary) only into a new
// node: most interns of an existing node's arg (a rebuild over new srcs) find
// the node, or make one, with no Value copied on the way.
template <typename A, typename T>
const UOp *Context::internWith(Op op, DType dtype, std::span<const UOp *const> src, A &&arg, T &&tag) {
  size_t h = hashMix(size_t(op) + 1, dtype.stableHash());
  for (const UOp *s : src) h = hashMix(h, s->hash());
  h = hashMix(h, src.size());
  h = hashMix(h, arg.hash());
  h = hashMix(h, tag.hash());
  size_t mask = table_.size() - 1;
  uint32_t bits = hashBits(h);
  size_t i = slotOf(bits, mask);
  for (; table_[i].idPlus1; i = (i + 1) & mask) {
    if (table_[i].hashBits != bits) continue;
    const UOp *u = nodeAt(table_[i].idPlus1 - 1);
    if (u->op_ == op && u->dtype_ == dtype && u->numSrc_ == src.size() && std::equal(src.begin(), src.end(), u->src_) &&
        u->arg_ == arg && u->tag() == tag)
      return u;
  }
  if (size_ % kNodesPerChunk == 0)
    chunks_.push_back(static_cast<UOp *>(::operator new(sizeof(UOp) * kNodesPerChunk, std::align_val_t(alignof(UOp)))));
  UOp *slot = &chunks_.back()[size_ % kNodesPerChunk];
  const UOp *const *stored = storeSrc(src);
  const Value *storedTag = tag.isNone() ? nullptr : &tags_.emplace_back(std::forward<T>(tag));
  const UOp *u = new (slot) UOp(this, uint32_t(size_), op, dtype, std::span<const UOp *const>(stored, src.size()),
                                Value(std::forward<A>(arg)), storedTag, h);
  ++size_;
  table_[i] = TableSlot{bits, uint32_t(size_)};
  if (2 * size_ > table_.size()) growTable(2 * table_.size());
  return u;
}

const UOp *Context::intern(Op op, DType dtype, std::span<const UOp *const> src, const Value &arg, const Value &tag) {
  return internWith(op, dtype, src, arg, tag);
}
const UOp *Context::intern(Op op, DType dtype, std::span<const UOp *const> src, Value &&arg, Value &&tag) {
  return internWith(op, dtype, src, std::move(arg), std::move(tag));
}

const UOp *Context::constInt(int64_t v, DType dt) { return get(Op::CONST, dt, {}, Value::integer(v)); }
const UOp *Context::constFloat(double v, DType dt) { return get(Op::CONST, dt, {}, Value::floating(v)); }
const UOp *Context::constBool(bool v) { return get(Op::CONST, dtypes::Bool, {}, Value::boolean(v)); }

const UOp *Context::constOf(DType dt, const Value &v) {
  if (v.kind() == Value::Kind::Invalid) return get(Op::CONST, dt, {}, v);
  double f = v.isFloat() ? v.getFloat() : v.isBool() ? double(v.getBool()) : v.kind() == Value::Kind::UInt ? double(v.getUInt()) : double(v.getInt());
  if (dt.isFloat()) return constFloat(v.isFloat() ? v.getFloat() : f, dt);
  if (dt.isBool()) return constBool(v.isFloat() ? f != 0.0 : v.isBool() ? v.getBool() : v.getInt() != 0);
  if (v.isFloat()) return constInt(int64_t(f), dt); // Python int() truncates toward zero
  if (v.isBool()) return constInt(v.getBool(), dt);
  return get(Op::CONST, dt, {}, v);
}

void Context::setLocation(const UOp *u, Location loc) { locations_[u] = std::move(loc); }
const Location *Context::location(const UOp *u) const {
  auto it = locations_.find(u);
  return it == locations_.end() ? nullptr : &it->second;
}

const UOp *Context::memo(const void *fn, const UOp *u) const {
  for (const auto &[f, table] : memos_)
    if (f == fn) {
      const UOp *const *r = table->find(u);
      return r ? *r : nullptr;
    }
  return nullptr;
}

void Context::setMemo(const void *fn, const UOp *u, const UOp *result) {
  for (auto &[f, table] : memos_)
    if (f == fn) {
      (*table)[u] = result;
      return;
    }
  memos_.emplace_back(fn, std::make_unique<PtrMap<const UOp *>>());
  (*memos_.back().second)[u] = result;
}

namespace {
// Explicit stack, no recursion, so 10^6-deep chains are fine. A frame walks
// its node's srcs in place; only argRefs needs a list of its own.
struct ToposortFrame {
  const UOp *u;
  uint32_t next, end; // next src index, one past the last to visit
  uint32_t refs;      // start of this frame's arg/tag references in `refs`, or UINT32_MAX
};
// Pooled: most sorts are small ones from rule callbacks (NodeTable.h).
struct ToposortScratch {
  struct Empty {};
  NodeTable<Empty> visited;
  std::vector<ToposortFrame> stack;
  std::vector<const UOp *> refs;
  std::vector<const UOp *> order; // built here, returned as one exact-size copy
};
} // namespace

std::vector<const UOp *> toposort(std::span<const UOp *const> roots, const ToposortOptions &opts) {
  if (roots.empty()) return {};
  ScratchPool<ToposortScratch>::Lease scratch;
  NodeTable<ToposortScratch::Empty> &visited = scratch->visited;
  std::vector<ToposortFrame> &stack = scratch->stack;
  std::vector<const UOp *> &refs = scratch->refs;
  std::vector<const UOp *> &order = scratch->order;
  visited.reset(roots[0]->context());
  stack.clear();
  refs.clear();
  order.clear();
  using Frame = ToposortFrame;
  auto push = [&](const UOp *u) {
    if (!visited.insert(u)) return;
    Frame f{u, 0, 0, UINT32_MAX};
    if (!opts.gate || opts.gate(u)) {
      bool skipBody = !opts.enterCalls && (u->is(Op::CALL) || u->is(Op::FUNCTION));
      f.next = skipBody && u->numSrc() ? 1 : 0;
      f.end = uint32_t(u->numSrc());
      if (opts.argRefs && (u->arg().containsUOp() || u->tag().containsUOp())) {
        f.refs = uint32_t(refs.size());
        u->arg().forEachUOp([&](const UOp *r) { refs.push_back(r); });
        u->tag().forEachUOp([&](const UOp *r) { refs.push_back(r); });
        f.end += uint32_t(refs.size() - f.refs);
      }
    }
    stack.push_back(f);
  };
  for (const UOp *r : roots) {
    push(r);
    while (!stack.empty()) {
      Frame &top = stack.back();
      if (top.next < top.end) {
        uint32_t i = top.next++;
        const UOp *u = top.u;
        push(i < u->numSrc() ? u->src(i) : refs[top.refs + (i - u->numSrc())]);
      } else {
        order.push_back(top.u);
        if (top.refs != UINT32_MAX) refs.resize(top.refs);
        stack.pop_back();
      }
    }
  }
  return std::vector<const UOp *>(order.begin(), order.end());
}

std::unordered_map<const UOp *, std::vector<const UOp *>> children(std::span<const UOp *const> roots) {
  std::unordered_map<const UOp *, std::vector<const UOp *>> out;
  for (const UOp *u : toposort(roots)) {
    out.try_emplace(u);
    for (const UOp *s : u->src()) {
      auto &v = out[s];
      if (v.empty() || v.back() != u) v.push_back(u);
    }
  }
  return out;
}

namespace {
struct SubstituteScratch {
  NodeTable<const UOp *> done;
  std::vector<const UOp *> src;
};
} // namespace

std::vector<const UOp *> substitute(std::span<const UOp *const> roots,
                                    const std::unordered_map<const UOp *, const UOp *> &map) {
  return substitute(roots, map, {});
}

std::vector<const UOp *> substitute(std::span<const UOp *const> roots,
                                    const std::unordered_map<const UOp *, const UOp *> &map,
                                    const std::function<bool(const UOp *)> &unchanged) {
  if (roots.empty()) return {};
  ScratchPool<SubstituteScratch>::Lease scratch;
  NodeTable<const UOp *> &done = scratch->done;
  std::vector<const UOp *> &src = scratch->src;
  done.reset(roots[0]->context());
  ToposortOptions opts;
  // Replaced nodes are taken verbatim and kept ones as they are, so do not
  // descend below either.
  opts.gate = [&](const UOp *u) { return !map.count(u) && !(unchanged && unchanged(u)); };
  for (const UOp *u : toposort(roots, opts)) {
    if (auto it = map.find(u); it != map.end()) {
      done[u] = it->second;
      continue;
    }
    if (unchanged && unchanged(u)) {
      done[u] = u;
      continue;
    }
    src.clear();
    bool changed = false;
    for (const UOp *s : u->src()) {
      src.push_back(*done.find(s));
      changed |= src.back() != s;
    }
    if (!u->arg().containsUOp()) {
      done[u] = changed ? u->context().intern(u->op(), u->dtype(), src, u->arg(), u->tag()) : u;
      continue;
    }
    Value arg = u->arg().mapUOps([&](const UOp *r) {
      const UOp *const *d = done.find(r);
      return d ? *d : substitute(r, map, unchanged);
    });
    changed |= !(arg == u->arg());
    done[u] = changed ? u->context().intern(u->op(), u->dtype(), src, std::move(arg), u->tag()) : u;
  }
  std::vector<const UOp *> out;
  for (const UOp *r : roots) out.push_back(*done.find(r));
  return out;
}

const UOp *substitute(const UOp *root, const std::unordered_map<const UOp *, const UOp *> &map) {
  return substitute(std::span<const UOp *const>(&root, 1), map)[0];
}

const UOp *substitute(const UOp *root, const std::unordered_map<const UOp *, const UOp *> &map,
                      const std::function<bool(const UOp *)> &unchanged) {
  return substitute(std::span<const UOp *const>(&root, 1), map, unchanged)[0];
}

} // namespace tgc
