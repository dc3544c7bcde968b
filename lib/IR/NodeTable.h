//===- NodeTable.h - per-traversal scratch indexed by node id ---*- C++ -*-===//
//
// A traversal (toposort, one graphRewrite) asks a few questions per node. The
// ~6200 small rewrites of a schedule each touch a handful of nodes, so what
// matters is that starting one costs nothing and a lookup is one load: a
// NodeTable is an array indexed by UOp::id(), every slot stamped with the
// traversal that wrote it, so reset() clears nothing. Ids are per Context: a
// table holds the nodes of one Context between two resets.
//
// The tables are reused through ScratchPool, one free list per thread. A
// traversal that runs inside another (a rule callback that rewrites or sorts)
// takes another table from the pool, so nesting is safe; a lease returns its
// table on every exit, errors included.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/UOp.h"

#include <cassert>
#include <cstdint>
#include <memory>
#include <vector>

namespace tgc {

namespace detail {
/// Slots indexed by UOp::id(), in chunks made on first use: a table holds
/// (and the kernel maps pages for) only the id ranges it was asked about, and
/// growing never copies, so a slot keeps its address. (One flat array per
/// NodeTable cost a run of k3 ~6600 more page faults.)
template <typename Slot> class IdSlots {
public:
  /// The slot of `id`, or nullptr if its chunk was never made.
  Slot *find(uint32_t id) {
    size_t c = id / kChunk;
    if (c >= chunks_.size() || !chunks_[c]) [[unlikely]]
      return nullptr;
    return &chunks_[c][id % kChunk];
  }
  /// The slot of `id` (value-initialized when its chunk is new).
  Slot &get(uint32_t id) {
    size_t c = id / kChunk;
    Slot *chunk = c < chunks_.size() ? chunks_[c].get() : nullptr;
    if (!chunk) [[unlikely]]
      chunk = makeChunk(c);
    return chunk[id % kChunk];
  }
  template <typename F> void forEach(F f) {
    for (auto &c : chunks_)
      if (c)
        for (size_t i = 0; i < kChunk; ++i) f(c[i]);
  }

private:
  static constexpr size_t kChunk = 1024;
  // Out of line, so that get() stays small enough to inline at every lookup.
  [[gnu::noinline]] Slot *makeChunk(size_t c) {
    if (c >= chunks_.size()) chunks_.resize(c + 1);
    chunks_[c] = std::make_unique<Slot[]>(kChunk);
    return chunks_[c].get();
  }
  std::vector<std::unique_ptr<Slot[]>> chunks_;
};
} // namespace detail

template <typename V> class NodeTable {
public:
  /// Starts a new traversal of `ctx`'s nodes: every node reads as absent.
  void reset(const Context &ctx) {
    ctx_ = &ctx;
    if (++epoch_ == 0) { // the stamps wrapped: clear them once
      slots_.forEach([](Slot &s) { s.epoch = 0; });
      epoch_ = 1;
    }
  }
  /// The value for u, or nullptr.
  V *find(const UOp *u) {
    assert(&u->context() == ctx_ && "a NodeTable holds the nodes of one Context");
    Slot *s = slots_.find(u->id());
    return s && s->epoch == epoch_ ? &s->value : nullptr;
  }
  const V *find(const UOp *u) const { return const_cast<NodeTable *>(this)->find(u); }
  bool contains(const UOp *u) const { return find(u) != nullptr; }
  /// The value for u, value-initialized if u is new; `inserted` says which.
  /// Its address stays valid until the table is destroyed (chunks never move).
  V &get(const UOp *u, bool &inserted) {
    assert(&u->context() == ctx_ && "a NodeTable holds the nodes of one Context");
    Slot &s = slots_.get(u->id());
    inserted = s.epoch != epoch_;
    if (inserted) {
      s.epoch = epoch_;
      s.value = V{};
    }
    return s.value;
  }
  V &operator[](const UOp *u) {
    bool inserted;
    return get(u, inserted);
  }
  /// Adds u (for a table used as a set); returns whether it was new.
  bool insert(const UOp *u) {
    bool inserted;
    get(u, inserted);
    return inserted;
  }

private:
  struct Slot {
    uint32_t epoch = 0; ///< the traversal that wrote value; 0 is none
    [[no_unique_address]] V value{};
  };
  detail::IdSlots<Slot> slots_;
  uint32_t epoch_ = 0;
  const Context *ctx_ = nullptr;
};

/// A per-thread free list of T (scratch state that keeps its buffers between uses).
template <typename T> class ScratchPool {
public:
  class Lease {
  public:
    Lease() {
      auto &l = freeList();
      if (l.empty()) {
        p_ = std::make_unique<T>();
      } else {
        p_ = std::move(l.back());
        l.pop_back();
      }
    }
    ~Lease() { freeList().push_back(std::move(p_)); }
    Lease(const Lease &) = delete;
    Lease &operator=(const Lease &) = delete;
    T &operator*() const { return *p_; }
    T *operator->() const { return p_.get(); }

  private:
    std::unique_ptr<T> p_;
  };
  /// How many Ts the calling thread holds unused (for tests).
  static size_t idle() { return freeList().size(); }

private:
  static std::vector<std::unique_ptr<T>> &freeList() {
    thread_local std::vector<std::unique_ptr<T>> list;
    return list;
  }
};

/// A fact per node that a Context keeps for as long as its nodes (held
/// through Context::analysis), in an array indexed by UOp::id(). A node's srcs
/// were made shortly before it and a pass makes its nodes in the order it
/// visits them, so the facts a traversal asks for sit close together: a
/// pointer-hashed table scatters them, one cache miss each, over a table sized
/// for the whole Context. Slots come in chunks made on first use; a slot keeps
/// its address. Holds the nodes of one Context (ids are per Context).
template <typename V> class NodeMap {
public:
  /// The value for u, or nullptr.
  V *find(const UOp *u) {
    Slot *s = slots_.find(u->id());
    return s && s->present ? &s->value : nullptr;
  }
  const V *find(const UOp *u) const { return const_cast<NodeMap *>(this)->find(u); }
  bool contains(const UOp *u) const { return find(u) != nullptr; }
  /// The value for u, value-initialized if u is new; `inserted` says which.
  V &get(const UOp *u, bool &inserted) {
    Slot &s = slots_.get(u->id());
    inserted = !s.present;
    if (inserted) {
      s.present = true;
      ++count_;
    }
    return s.value;
  }
  V &operator[](const UOp *u) {
    bool inserted;
    return get(u, inserted);
  }
  size_t size() const { return count_; }

private:
  struct Slot {
    V value{};
    bool present = false;
  };
  detail::IdSlots<Slot> slots_;
  size_t count_ = 0;
};

/// Stable storage for a fact a Context keeps per node for as long as the
/// nodes (held through Context::analysis): one allocation per kChunk facts,
/// laid out in the order they were made, instead of one per node.
template <typename T> class NodeArena {
public:
  /// A new value-initialized T, at an address that stays valid.
  T *make() {
    if (chunks_.empty() || used_ == kChunk) {
      chunks_.push_back(std::make_unique<T[]>(kChunk));
      used_ = 0;
    }
    return &chunks_.back()[used_++];
  }

private:
  static constexpr size_t kChunk = 256;
  std::vector<std::unique_ptr<T[]>> chunks_;
  size_t used_ = 0;
};

} // namespace tgc
