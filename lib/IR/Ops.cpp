//===- Ops.cpp ------------------------------------------------------------===//
#include "IR/Ops.h"

#include <array>
#include <unordered_map>

namespace tgc {

static constexpr std::array<std::string_view, kNumOps> kOpNames = {
#define TGC_OP_NAME(name) #name,
    TGC_FOR_EACH_OP(TGC_OP_NAME)
#undef TGC_OP_NAME
};

std::string_view opName(Op op) { return kOpNames[static_cast<unsigned>(op)]; }

std::optional<Op> opFromName(std::string_view name) {
  static const auto *table = [] {
    auto *m = new std::unordered_map<std::string_view, Op>();
    for (unsigned i = 0; i < kNumOps; ++i) m->emplace(kOpNames[i], Op(i));
    return m;
  }();
  auto it = table->find(name);
  if (it == table->end()) return std::nullopt;
  return it->second;
}

} // namespace tgc
