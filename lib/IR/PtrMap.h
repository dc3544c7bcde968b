//===- PtrMap.h - open-addressing maps keyed by node pointer -----*- C++ -*-===//
//
// The graph algorithms do a few lookups per node keyed by `const UOp *`; a
// node-based std::unordered_map spends most of that time in malloc/free. These
// are flat tables with linear probing and no deletion (a traversal only ever
// adds), keyed by a non-null pointer. Iteration order is never exposed, so
// nothing downstream can depend on pointer values.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace tgc {

class UOp;

template <typename V> class PtrMap {
public:
  explicit PtrMap(size_t expected = 16) { reserve(expected); }
  /// The value for k, or nullptr.
  V *find(const UOp *k) {
    for (size_t i = hash(k) & mask();; i = (i + 1) & mask()) {
      Slot &s = slots_[i];
      if (s.key == k) return &s.value;
      if (!s.key) return nullptr;
    }
  }
  const V *find(const UOp *k) const { return const_cast<PtrMap *>(this)->find(k); }
  bool contains(const UOp *k) const { return find(k) != nullptr; }
  /// The value for k, value-initialized if k is new; `inserted` says which.
  V &get(const UOp *k, bool &inserted) {
    if (2 * (count_ + 1) > slots_.size()) grow(slots_.size() * 2);
    for (size_t i = hash(k) & mask();; i = (i + 1) & mask()) {
      Slot &s = slots_[i];
      if (s.key == k) {
        inserted = false;
        return s.value;
      }
      if (!s.key) {
        s.key = k;
        ++count_;
        inserted = true;
        return s.value;
      }
    }
  }
  V &operator[](const UOp *k) {
    bool inserted;
    return get(k, inserted);
  }
  /// Adds k -> v unless k is there; returns whether it was added.
  bool insert(const UOp *k, V v) {
    bool inserted;
    V &slot = get(k, inserted);
    if (inserted) slot = std::move(v);
    return inserted;
  }
  size_t size() const { return count_; }
  /// Room for n keys without growing.
  void reserve(size_t n) {
    size_t want = 16;
    while (want < 2 * n) want *= 2;
    if (want > slots_.size()) grow(want);
  }

private:
  struct Slot {
    const UOp *key = nullptr;
    V value{};
  };
  static size_t hash(const UOp *p) {
    uint64_t x = uint64_t(reinterpret_cast<uintptr_t>(p));
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return size_t(x);
  }
  size_t mask() const { return slots_.size() - 1; }
  void grow(size_t n) {
    std::vector<Slot> old(n);
    old.swap(slots_);
    count_ = 0;
    for (Slot &s : old)
      if (s.key) (*this)[s.key] = std::move(s.value);
  }
  std::vector<Slot> slots_;
  size_t count_ = 0;
};

/// A set of node pointers.
class PtrSet {
public:
  explicit PtrSet(size_t expected = 16) : map_(expected) {}
  /// Adds u; returns whether it was new.
  bool insert(const UOp *u) {
    bool inserted;
    map_.get(u, inserted);
    return inserted;
  }
  bool contains(const UOp *u) const { return map_.contains(u); }
  size_t size() const { return map_.size(); }

private:
  struct Empty {};
  PtrMap<Empty> map_;
};

} // namespace tgc
