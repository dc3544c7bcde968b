//===- DType.h - tinygrad's scalar dtypes and promotion ---------*- C++ -*-===//
//
// The scalar types of the graph format. A DType is a pointer to one of a fixed
// table of descriptors, so dtype equality is pointer equality (tinygrad interns
// its DTypes the same way). This tinygrad has no vector or pointer dtypes:
// vector-ness is a shape, pointer-ness is an op plus an address space.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tgc {

enum class DTypeKind : uint8_t { Void, Bool, SInt, UInt, Float, WeakInt, WeakFloat };

struct DTypeInfo {
  std::string_view name;  ///< format name: "float32", "weakint", ...
  std::string_view cname; ///< tinygrad's C-style name: "float", "unsigned char"
  int bitsize;
  int priority;
  char fmt; ///< Python struct format char, or 0 for none
  DTypeKind kind;
  size_t nameHash; ///< a hash of name, the same in every run (interning hashes it per node)
  uint8_t index;   ///< position in dtypes::all() (promotion works on bit sets of these)
  int itemsize() const { return (bitsize + 7) / 8; }
};

/// An interned scalar dtype; compare with ==.
class DType {
public:
  constexpr DType() = default;
  constexpr explicit DType(const DTypeInfo *info) : info_(info) {}
  const DTypeInfo *operator->() const { return info_; }
  const DTypeInfo &info() const { return *info_; }
  bool operator==(const DType &) const = default;
  explicit operator bool() const { return info_ != nullptr; }

  std::string_view name() const { return info_->name; }
  int bitsize() const { return info_->bitsize; }
  int itemsize() const { return info_->itemsize(); }
  bool isVoid() const { return info_->kind == DTypeKind::Void; }
  bool isBool() const { return info_->kind == DTypeKind::Bool; }
  bool isWeak() const { return info_->kind == DTypeKind::WeakInt || info_->kind == DTypeKind::WeakFloat; }
  /// Integer, weakint included (tinygrad's dtypes.is_int).
  bool isInt() const {
    return info_->kind == DTypeKind::SInt || info_->kind == DTypeKind::UInt || info_->kind == DTypeKind::WeakInt;
  }
  bool isUnsigned() const { return info_->kind == DTypeKind::UInt; }
  /// Floating point, weakfloat included (tinygrad's dtypes.is_float).
  bool isFloat() const { return info_->kind == DTypeKind::Float || info_->kind == DTypeKind::WeakFloat; }
  /// tinygrad's ordering of dtypes (priority, bitsize, name, fmt), used by promotion.
  bool operator<(const DType &o) const;
  /// Smallest and largest value of an int or bool dtype (weakint: int64's range).
  int64_t minInt() const;
  uint64_t maxInt() const;

  size_t hash() const { return reinterpret_cast<uintptr_t>(info_) >> 4; }
  /// Like hash(), but the same in every run (a hash of the name).
  size_t stableHash() const { return info_ ? info_->nameHash : 0; }

private:
  const DTypeInfo *info_ = nullptr;
};

namespace dtypes {
extern const DType Void, Bool, Int8, UInt8, Int16, UInt16, Int32, UInt32, Int64, UInt64, Float16, BFloat16,
    Float32, Float64, FP8E4M3, FP8E5M2, FP8E4M3FNUZ, FP8E5M2FNUZ, WeakInt, WeakFloat;
/// Every dtype of the format, in tinygrad's declaration order.
const std::vector<DType> &all();
/// The dtype with this format name (e.g. "float32"), or a null DType.
DType fromName(std::string_view name);
/// tinygrad's defaults for committing weak types.
inline const DType &defaultInt() { return Int32; }
inline const DType &defaultFloat() { return Float32; }
} // namespace dtypes

/// tinygrad's least_upper_dtype: the smallest dtype above all of `ds` in the
/// JAX-style promotion lattice (bool < weakint < ints < weakfloat < floats).
DType leastUpperDType(std::initializer_list<DType> ds);
DType leastUpperDType(const std::vector<DType> &ds);
/// leastUpperDType of dtypes added one at a time (no list): promotion runs for
/// every node a rewrite rebuilds, so it reads a table made once, not the lattice.
class DTypeJoin {
public:
  void add(DType d);
  /// The least upper dtype of everything added; a null DType when there is none
  /// (nothing added, or dtypes without a common upper bound such as void and int32).
  DType result() const;

private:
  uint32_t common_ = ~0u; ///< bits (DTypeInfo::index) of the dtypes above all added so far
  bool empty_ = true;
};
/// tinygrad's least_upper_float.
DType leastUpperFloat(DType dt);
/// tinygrad's sum_acc_dtype (accumulator for sums: at least int32/uint32/float32).
DType sumAccDType(DType dt);
/// weakint -> int32, weakfloat -> float32; others unchanged.
DType strongDType(DType dt);
/// int -> weakint, float -> weakfloat; others unchanged.
DType weakDType(DType dt);
/// tinygrad's can_lossless_cast(from, to).
bool canLosslessCast(DType from, DType to);

} // namespace tgc
