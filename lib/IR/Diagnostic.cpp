//===- Diagnostic.cpp -----------------------------------------------------===//
#include "IR/Diagnostic.h"

namespace tgc {

Diagnostic Diagnostic::at(const UOp *u, std::string message) {
  Location loc;
  if (const Location *l = u->context().location(u)) loc = *l;
  return Diagnostic(std::move(loc), std::move(message));
}

std::string Diagnostic::str() const {
  std::string where = loc.str();
  std::string s = where + ": error: " + message;
  for (const auto &n : notes) s += "\n" + where + ": note: " + n;
  return s;
}

} // namespace tgc
