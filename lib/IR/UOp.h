//===- UOp.h - the interned graph node and its context ----------*- C++ -*-===//
//
// A UOp is the immutable 5-tuple (op, dtype, src, arg, tag). UOps are
// hash-consed in a Context: building a node structurally equal to an existing
// one returns the existing node, so equality is pointer equality throughout
// tgc, as it is in tinygrad. Derived properties (shape, vmin/vmax, device,
// addrspace) are computed lazily from (op, src, arg) and cached on the node.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/DType.h"
#include "IR/Ops.h"
#include "IR/PtrMap.h"
#include "IR/Value.h"

#include <deque>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace tgc {

class Context;
class UOp;

/// One dimension of a shape (tinygrad's sint): a static size, or a symbolic
/// one held by a weakint UOp (a Variable, or arithmetic over one). A static
/// Dim converts from an int, so shapes compare and index like int lists;
/// IR/SInt.h has the arithmetic.
struct Dim {
  int64_t value = 0;
  const UOp *sym = nullptr;
  Dim() = default;
  Dim(int64_t v) : value(v) {}
  Dim(int64_t v, const UOp *s) : value(s ? 0 : v), sym(s) {}
  bool isStatic() const { return sym == nullptr; }
  bool operator==(const Dim &) const = default;
};
using Shape = std::vector<Dim>;
std::string shapeStr(const Shape &s); ///< "[8, 16, ?]"

enum class AddrSpace : uint8_t { GLOBAL, LOCAL, REG, ALU };
std::string_view addrSpaceName(AddrSpace a);
std::optional<AddrSpace> addrSpaceFromName(std::string_view name);

/// Where a node came from in its input, for diagnostics.
struct Location {
  std::string file;
  unsigned line = 0, col = 0; ///< 1-based; 0 = unknown
  int64_t nodeId = -1;        ///< node index in a JSON document, or -1
  std::string str() const;    ///< "file:line:col" or "file: node N" or "file"
};

/// Interval of a node's possible values (tinygrad's vmin/vmax). Ints are kept
/// as int64 (saturating), floats as double, bools as 0/1.
struct ValueRange {
  bool isFloat = false;
  int64_t imin = 0, imax = 0;
  double fmin = 0, fmax = 0;
  bool operator==(const ValueRange &) const = default;
};

class alignas(64) UOp {
public:
  Op op() const { return op_; }
  DType dtype() const { return dtype_; }
  std::span<const UOp *const> src() const { return {src_, numSrc_}; }
  const UOp *src(size_t i) const { return src_[i]; }
  size_t numSrc() const { return numSrc_; }
  const Value &arg() const { return arg_; }
  const Value &tag() const { return tag_ ? *tag_ : noneTag(); }
  /// Structural content hash (deterministic across runs).
  size_t hash() const { return hash_; }
  /// Creation index in its context: a stable, deterministic name.
  uint32_t id() const { return id_; }
  Context &context() const { return *ctx_; }
  /// The smallest and largest id() of a RANGE node among this node and
  /// everything below it through src (lo > hi when there is none). Set at
  /// construction, so a rewrite that only touches RANGEs can tell in O(1)
  /// that a subgraph has nothing to rewrite.
  uint32_t rangeIdLo() const { return rangeLo_; }
  uint32_t rangeIdHi() const { return rangeHi_; }
  bool hasRangeBelow() const { return rangeLo_ <= rangeHi_; }

  bool is(Op o) const { return op_ == o; }
  bool isIn(OpSet s) const { return s.contains(op_); }

  /// A node like this one with some parts replaced (the same node if nothing changed).
  const UOp *withSrc(std::span<const UOp *const> src) const;
  const UOp *withSrc(std::initializer_list<const UOp *> src) const {
    return withSrc(std::span<const UOp *const>(src.begin(), src.size()));
  }
  const UOp *withArg(Value arg) const;
  const UOp *withTag(Value tag) const;
  const UOp *withDType(DType dt) const;

  // Derived properties (Properties.cpp), computed lazily and cached.
  /// The shape, or nullptr for nodes without one (SINK, STORE, void CALL, ...)
  /// or whose shape is ill-formed (see shapeError()).
  const Shape *shape() const;
  /// The shape's sizes when it has one and every dim is static, else nullptr.
  const std::vector<int64_t> *staticShape() const;
  /// Why the shape could not be derived ("" when it could, or the node has none).
  const std::string &shapeError() const;
  /// Device: None, a Str, or a Tuple of Str (multi-device).
  const Value &device() const;
  std::optional<AddrSpace> addrspace() const;
  const ValueRange &vrange() const;
  int64_t vminInt() const { return vrange().imin; }
  int64_t vmaxInt() const { return vrange().imax; }

  /// The const's value for CONST nodes; None otherwise.
  const Value &constValue() const;
  std::string str() const; ///< one-line summary for diagnostics: "ADD float32 #12"

private:
  friend class Context;
  // Built in place by Context, over srcs it keeps in its own storage.
  UOp(Context *ctx, uint32_t id, Op op, DType dt, std::span<const UOp *const> src, Value arg, const Value *tag, size_t h);
  UOp(const UOp &) = delete;
  UOp &operator=(const UOp &) = delete;
  struct PropertyCache; // shape, device, addrspace: Properties.cpp

  static const Value &noneTag();

  // What a traversal, a hash-table probe and the shape cache read comes first,
  // in the node's first cache line (nodes are 64-byte aligned, two lines each):
  // scheduling is bound by cache misses on nodes, not by the work per node.
  const UOp *const *src_; // in the Context's src storage
  DType dtype_;
  size_t hash_;
  // Cached facts, kept in the Context (a NodeArena each), null until asked for.
  mutable const PropertyCache *props_ = nullptr; // Properties.cpp
  uint32_t id_;
  uint32_t numSrc_;
  uint32_t rangeLo_ = UINT32_MAX, rangeHi_ = 0;
  Op op_;
  Context *ctx_;
  // The second line: what interning compares last and printing reads.
  Value arg_;
  const Value *tag_; // nullptr for None (almost every node); else kept by the Context
  mutable const ValueRange *vrange_ = nullptr; // ValueRange.cpp
};

/// Owns and interns UOps. Not thread-safe; one per compilation.
class Context {
public:
  Context();
  ~Context();
  Context(const Context &) = delete;
  Context &operator=(const Context &) = delete;

  /// The unique node (op, dtype, src, arg, tag).
  const UOp *get(Op op, DType dtype, const std::vector<const UOp *> &src = {}, Value arg = {}, Value tag = {}) {
    return intern(op, dtype, std::span<const UOp *const>(src), std::move(arg), std::move(tag));
  }
  /// The same for srcs written in place ({a, b}), without building a vector.
  const UOp *get(Op op, DType dtype, std::initializer_list<const UOp *> src, Value arg = {}, Value tag = {}) {
    return intern(op, dtype, std::span<const UOp *const>(src.begin(), src.size()), std::move(arg), std::move(tag));
  }
  /// get() over srcs held anywhere (no vector needed).
  const UOp *intern(Op op, DType dtype, std::span<const UOp *const> src, const Value &arg, const Value &tag);
  const UOp *intern(Op op, DType dtype, std::span<const UOp *const> src, Value &&arg, Value &&tag);

  // Convenience builders.
  const UOp *constInt(int64_t v, DType dt = dtypes::WeakInt);
  const UOp *constFloat(double v, DType dt = dtypes::WeakFloat);
  const UOp *constBool(bool v);
  /// A CONST of `dt` holding v converted as tinygrad's dtype.const does.
  const UOp *constOf(DType dt, const Value &v);

  size_t size() const { return size_; }
  /// Room for `nodes` nodes in all without regrowing the interning table (a
  /// pass pipeline that knows roughly how many nodes it will make says so).
  void reserve(size_t nodes);

  /// Side table for diagnostics; not part of a node's identity.
  void setLocation(const UOp *u, Location loc);
  const Location *location(const UOp *u) const;

  /// Memo of pure functions of nodes (a rewrite whose rules read nothing but
  /// the nodes, like UOp.simplify()): the cached result of the function named
  /// by the stable address `fn` on u, or nullptr. Nodes are immutable, so an
  /// entry stays valid for the context's lifetime.
  const UOp *memo(const void *fn, const UOp *u) const;
  void setMemo(const void *fn, const UOp *u, const UOp *result);

  /// The context's one instance of T, a cache of derived facts about its
  /// nodes (tinygrad caches such properties on the UOp itself), made on first
  /// use and kept as long as the nodes are. T must be default-constructible.
  template <typename T> T &analysis() {
    // Asked for on every node a pass makes (shapes, ranges, memos): one
    // index per T, the same in every Context, instead of a search by key.
    static const size_t slot = newAnalysisSlot();
    if (slot >= analyses_.size()) [[unlikely]]
      analyses_.resize(slot + 1);
    std::unique_ptr<HolderBase> &a = analyses_[slot];
    if (!a) [[unlikely]]
      a = std::make_unique<Holder<T>>();
    return static_cast<Holder<T> &>(*a).value;
  }

private:
  struct HolderBase {
    virtual ~HolderBase() = default;
  };
  template <typename T> struct Holder : HolderBase {
    T value;
  };
  static size_t newAnalysisSlot(); ///< the next free index into analyses_ (process-wide)
  std::vector<std::unique_ptr<HolderBase>> analyses_;

  const UOp *const *storeSrc(std::span<const UOp *const> src);
  void growTable(size_t slots); ///< rehash into `slots` (a power of two)
  template <typename A, typename T>
  const UOp *internWith(Op op, DType dtype, std::span<const UOp *const> src, A &&arg, T &&tag);

  // Nodes live in fixed-size chunks (stable addresses, one allocation per
  // chunk); their src lists in a bump-allocated pool of pointers.
  static constexpr size_t kNodesPerChunk = 1024;
  std::vector<UOp *> chunks_;
  size_t size_ = 0;
  std::vector<std::unique_ptr<const UOp *[]>> srcPool_;
  std::deque<Value> tags_; // the nodes' tags other than None (stable addresses)
  size_t srcPoolLeft_ = 0;
  const UOp **srcPoolNext_ = nullptr;
  // The interning table: open addressing over the nodes. A slot keeps 32
  // bits of the node's hash next to its id, so a probe touches a node only on
  // a hash match, and a slot is 8 bytes (the table is cleared at every doubling
  // and its pages are fresh: half the bytes is half that work).
  struct TableSlot {
    uint32_t hashBits;
    uint32_t idPlus1; ///< 0: empty
  };
  static uint32_t hashBits(size_t h) { return uint32_t(h ^ (h >> 32)); }
  const UOp *nodeAt(uint32_t id) const { return &chunks_[id / kNodesPerChunk][id % kNodesPerChunk]; }
  std::vector<TableSlot> table_;
  std::unordered_map<const UOp *, Location> locations_;
  std::vector<std::pair<const void *, std::unique_ptr<PtrMap<const UOp *>>>> memos_;
};

/// Post-order toposort (sources before users, sources left to right) of all
/// nodes reachable from `roots`. `gate(u)` false stops descent below u (u is
/// still listed). With enterCalls false, the body (src[0]) of CALL/FUNCTION is
/// not entered. With argRefs, UOps referenced from args/tags are visited too.
struct ToposortOptions {
  std::function<bool(const UOp *)> gate;
  bool enterCalls = true;
  bool argRefs = false;
};
std::vector<const UOp *> toposort(std::span<const UOp *const> roots, const ToposortOptions &opts = {});
inline std::vector<const UOp *> toposort(const UOp *root, const ToposortOptions &opts = {}) {
  return toposort(std::span<const UOp *const>(&root, 1), opts);
}

/// Users of every node reachable from the roots, in toposort order.
std::unordered_map<const UOp *, std::vector<const UOp *>> children(std::span<const UOp *const> roots);

/// Rebuild the graph under `roots` with every key of `map` replaced by its
/// value (taken verbatim, as tinygrad's substitute(walk=True)). Returns the new roots.
std::vector<const UOp *> substitute(std::span<const UOp *const> roots,
                                    const std::unordered_map<const UOp *, const UOp *> &map);
const UOp *substitute(const UOp *root, const std::unordered_map<const UOp *, const UOp *> &map);
/// substitute() that takes a node for which `unchanged(u)` holds as it is,
/// without walking below it: for a caller that can tell cheaply that a
/// subgraph holds no key (e.g. from its RANGE id span, when the keys are RANGEs).
std::vector<const UOp *> substitute(std::span<const UOp *const> roots,
                                    const std::unordered_map<const UOp *, const UOp *> &map,
                                    const std::function<bool(const UOp *)> &unchanged);
const UOp *substitute(const UOp *root, const std::unordered_map<const UOp *, const UOp *> &map,
                      const std::function<bool(const UOp *)> &unchanged);

} // namespace tgc
