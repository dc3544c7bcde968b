//===- Diagnostic.cpp -----------------------------------------------------===//
#include "IR/Diagnostic.h"

namespace tgc {

Diagnostic Diagnostic::at(const UOp *u, std::string message) {
  Location loc;
  if (const Location *l = u->context().location(u)) loc = *l;
  return Diagnostic(std::move(loc), std::move(message));
}

Diagnostic Diagnostic::warning(Location l, std::string message) {
  Diagnostic d(std::move(l), std::move(message));
  d.severity = Severity::Warning;
  return d;
}

std::string Diagnostic::str() const {
  std::string where = loc.str();
  std::string s = where + (severity == Severity::Warning ? ": warning: " : ": error: ") + message;
  for (const auto &n : notes) s += "\n" + where + ": note: " + n;
  return s;
}

} // namespace tgc
