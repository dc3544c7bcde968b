//===- DType.cpp ----------------------------------------------------------===//
#include "IR/DType.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <numeric>
#include <limits>
#include <span>
#include <tuple>

namespace tgc {

namespace {
using K = DTypeKind;
// FNV-1a, computed at compile time.
constexpr size_t nameHash(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : s) h = (h ^ uint8_t(c)) * 0x100000001b3ULL;
  return size_t(h);
}
constexpr DTypeInfo info(std::string_view name, std::string_view cname, int bitsize, int priority, char fmt, K kind,
                         uint8_t index) {
  return DTypeInfo{name, cname, bitsize, priority, fmt, kind, nameHash(name), index};
}
// Field values as tinygrad's dtype.py declares them (priority, bitsize, cname, fmt).
constexpr DTypeInfo kVoid = info("void", "void", 0, -1, 0, K::Void, 0);
constexpr DTypeInfo kBool = info("bool", "bool", 1, 0, '?', K::Bool, 2);
constexpr DTypeInfo kInt8 = info("int8", "signed char", 8, 1, 'b', K::SInt, 3);
constexpr DTypeInfo kUInt8 = info("uint8", "unsigned char", 8, 2, 'B', K::UInt, 4);
constexpr DTypeInfo kInt16 = info("int16", "short", 16, 3, 'h', K::SInt, 5);
constexpr DTypeInfo kUInt16 = info("uint16", "unsigned short", 16, 4, 'H', K::UInt, 6);
constexpr DTypeInfo kInt32 = info("int32", "int", 32, 5, 'i', K::SInt, 7);
constexpr DTypeInfo kUInt32 = info("uint32", "unsigned int", 32, 6, 'I', K::UInt, 8);
constexpr DTypeInfo kInt64 = info("int64", "long", 64, 7, 'q', K::SInt, 9);
constexpr DTypeInfo kUInt64 = info("uint64", "unsigned long", 64, 8, 'Q', K::UInt, 10);
constexpr DTypeInfo kWeakInt = info("weakint", "weakint", 800, 0, 0, K::WeakInt, 1);
constexpr DTypeInfo kWeakFloat = info("weakfloat", "weakfloat", 800, 9, 0, K::WeakFloat, 11);
constexpr DTypeInfo kFP8E4M3 = info("fp8e4m3", "float8_e4m3", 8, 10, 0, K::Float, 12);
constexpr DTypeInfo kFP8E5M2 = info("fp8e5m2", "float8_e5m2", 8, 11, 0, K::Float, 13);
constexpr DTypeInfo kFP8E4M3FNUZ = info("fp8e4m3fnuz", "float8_e4m3fnuz", 8, 10, 0, K::Float, 14);
constexpr DTypeInfo kFP8E5M2FNUZ = info("fp8e5m2fnuz", "float8_e5m2fnuz", 8, 11, 0, K::Float, 15);
constexpr DTypeInfo kFloat16 = info("float16", "half", 16, 12, 'e', K::Float, 16);
constexpr DTypeInfo kBFloat16 = info("bfloat16", "__bf16", 16, 13, 0, K::Float, 17);
constexpr DTypeInfo kFloat32 = info("float32", "float", 32, 14, 'f', K::Float, 18);
constexpr DTypeInfo kFloat64 = info("float64", "double", 64, 15, 'd', K::Float, 19);
} // namespace

namespace dtypes {
const DType Void{&kVoid}, Bool{&kBool}, Int8{&kInt8}, UInt8{&kUInt8}, Int16{&kInt16}, UInt16{&kUInt16},
    Int32{&kInt32}, UInt32{&kUInt32}, Int64{&kInt64}, UInt64{&kUInt64}, Float16{&kFloat16},
    BFloat16{&kBFloat16}, Float32{&kFloat32}, Float64{&kFloat64}, FP8E4M3{&kFP8E4M3}, FP8E5M2{&kFP8E5M2},
    FP8E4M3FNUZ{&kFP8E4M3FNUZ}, FP8E5M2FNUZ{&kFP8E5M2FNUZ}, WeakInt{&kWeakInt}, WeakFloat{&kWeakFloat};

const std::vector<DType> &all() {
  static const std::vector<DType> v = {Void,    WeakInt, Bool,        Int8,        UInt8,    Int16,   UInt16,
                                       Int32,   UInt32,  Int64,       UInt64,      WeakFloat, FP8E4M3, FP8E5M2,
                                       FP8E4M3FNUZ, FP8E5M2FNUZ, Float16, BFloat16, Float32, Float64};
  return v;
}

DType fromName(std::string_view name) {
  for (DType d : all())
    if (d.name() == name) return d;
  return DType();
}
} // namespace dtypes

bool DType::operator<(const DType &o) const {
  auto key = [](const DTypeInfo &i) { return std::make_tuple(i.priority, i.bitsize, i.cname, i.fmt); };
  return key(*info_) < key(*o.info_);
}

int64_t DType::minInt() const {
  if (isBool() || isUnsigned()) return 0;
  if (info_->kind == K::WeakInt) return std::numeric_limits<int64_t>::min();
  return bitsize() >= 64 ? std::numeric_limits<int64_t>::min() : -(int64_t(1) << (bitsize() - 1));
}

uint64_t DType::maxInt() const {
  if (isBool()) return 1;
  if (info_->kind == K::WeakInt) return uint64_t(std::numeric_limits<int64_t>::max());
  if (isUnsigned()) return bitsize() >= 64 ? std::numeric_limits<uint64_t>::max() : (uint64_t(1) << bitsize()) - 1;
  return bitsize() >= 64 ? uint64_t(std::numeric_limits<int64_t>::max()) : (uint64_t(1) << (bitsize() - 1)) - 1;
}

namespace {
using namespace dtypes;
// tinygrad's promo_lattice: each dtype's direct parents.
std::vector<DType> latticeParents(DType d) {
  if (d == Bool) return {WeakInt};
  if (d == WeakInt) return {Int8, UInt8};
  if (d == Int8) return {Int16};
  if (d == Int16) return {Int32};
  if (d == Int32) return {Int64};
  if (d == Int64) return {WeakFloat};
  if (d == UInt8) return {Int16, UInt16};
  if (d == UInt16) return {Int32, UInt32};
  if (d == UInt32) return {Int64, UInt64};
  if (d == UInt64) return {WeakFloat};
  if (d == WeakFloat) return {FP8E4M3, FP8E5M2, FP8E4M3FNUZ, FP8E5M2FNUZ};
  if (d == FP8E4M3 || d == FP8E5M2 || d == FP8E4M3FNUZ || d == FP8E5M2FNUZ) return {Float16, BFloat16};
  if (d == Float16 || d == BFloat16) return {Float32};
  if (d == Float32) return {Float64};
  return {};
}

// All dtypes reachable upwards from d, d included.
std::vector<DType> upperSet(DType d) {
  std::vector<DType> out{d}, stack{d};
  while (!stack.empty()) {
    DType cur = stack.back();
    stack.pop_back();
    for (DType p : latticeParents(cur))
      if (std::find(out.begin(), out.end(), p) == out.end()) {
        out.push_back(p);
        stack.push_back(p);
      }
  }
  return out;
}

// The lattice as bit sets, made once from upperSet: bit i is dtypes::all()[i],
// bit kNullBit the null DType (above nothing but itself).
struct PromotionTable {
  static constexpr size_t kNullBit = 20;
  std::array<uint32_t, kNullBit + 1> upper{}; ///< the bits of upperSet(d), by d's bit
  std::array<uint8_t, kNullBit + 1> byOrder{}; ///< every bit, the least dtype (DType::operator<) first
  PromotionTable() {
    const std::vector<DType> &all = dtypes::all();
    assert(all.size() == kNullBit && "one bit per dtype");
    for (size_t i = 0; i < all.size(); ++i) {
      assert(all[i]->index == i && "DTypeInfo::index is the position in dtypes::all()");
      for (DType d : upperSet(all[i])) upper[i] |= uint32_t(1) << d->index;
    }
    upper[kNullBit] = uint32_t(1) << kNullBit;
    std::vector<uint8_t> bits(all.size());
    std::iota(bits.begin(), bits.end(), 0);
    std::sort(bits.begin(), bits.end(), [&](uint8_t a, uint8_t b) { return all[a] < all[b]; });
    bits.push_back(uint8_t(kNullBit));
    std::copy(bits.begin(), bits.end(), byOrder.begin());
  }
  static size_t bitOf(DType d) { return d ? d->index : kNullBit; }
};
const PromotionTable &promotionTable() {
  static const PromotionTable table;
  return table;
}
} // namespace

void DTypeJoin::add(DType d) {
  common_ &= promotionTable().upper[PromotionTable::bitOf(d)];
  empty_ = false;
}

DType DTypeJoin::result() const {
  // void (or null) has no upper bound in common with the others
  if (empty_ || !common_) return DType();
  for (uint8_t bit : promotionTable().byOrder)
    if (common_ & (uint32_t(1) << bit)) return bit == PromotionTable::kNullBit ? DType() : dtypes::all()[bit];
  return DType();
}

static DType joinAll(std::span<const DType> ds) {
  DTypeJoin join;
  for (DType d : ds) join.add(d);
  return join.result();
}

DType leastUpperDType(const std::vector<DType> &ds) { return joinAll(ds); }
DType leastUpperDType(std::initializer_list<DType> ds) { return joinAll({ds.begin(), ds.size()}); }

DType leastUpperFloat(DType dt) {
  if (dt == WeakInt) return WeakFloat;
  if (dt.isFloat()) return dt;
  return leastUpperDType({dt, defaultFloat()});
}

DType sumAccDType(DType dt) {
  if (dt.isUnsigned()) return leastUpperDType({dt, UInt32});
  if (dt.isInt() || dt.isBool()) return leastUpperDType({dt, Int32});
  return leastUpperDType({dt, Float32});
}

DType strongDType(DType dt) {
  if (dt == WeakInt) return defaultInt();
  if (dt == WeakFloat) return defaultFloat();
  return dt;
}

DType weakDType(DType dt) {
  if (dt.isFloat()) return WeakFloat;
  if (dt.isInt()) return WeakInt;
  return dt;
}

bool canLosslessCast(DType from, DType to) {
  if (from == to || from == Bool) return true;
  auto in = [&](std::initializer_list<DType> set) { return std::find(set.begin(), set.end(), from) != set.end(); };
  bool fp8 = in({FP8E4M3, FP8E5M2, FP8E4M3FNUZ, FP8E5M2FNUZ});
  if (to == WeakInt) return from.isInt() && from != WeakInt;
  if (to == Float64) return fp8 || in({Float32, Float16, BFloat16, UInt32, UInt16, UInt8, Int32, Int16, Int8});
  if (to == Float32) return fp8 || in({Float16, BFloat16, UInt16, UInt8, Int16, Int8});
  if (to == Float16) return fp8 || in({UInt8, Int8});
  if (to == UInt64) return in({UInt32, UInt16, UInt8});
  if (to == UInt32) return in({UInt16, UInt8});
  if (to == UInt16) return in({UInt8});
  if (to == Int64) return in({UInt32, UInt16, UInt8, Int32, Int16, Int8});
  if (to == Int32) return in({UInt16, UInt8, Int16, Int8});
  if (to == Int16) return in({UInt8, Int8});
  return false;
}

} // namespace tgc
