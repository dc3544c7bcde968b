//===- Diagnostic.h - errors as values --------------------------*- C++ -*-===//
//
// Libraries never print or exit: they return a Diagnostic (a location and a
// message) up to the driver, which prints it LLVM-style:
//   file:line:col: error: message
// A warning (an input that is used, but that the user should hear about) is
// a Diagnostic too, handed up beside the result of the call that found it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/UOp.h"

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace tgc {

struct Diagnostic {
  enum class Severity : uint8_t { Error, Warning };

  Location loc;
  std::string message;
  std::vector<std::string> notes; ///< extra lines printed as "note: ..."
  Severity severity = Severity::Error;

  Diagnostic() = default;
  Diagnostic(Location l, std::string m) : loc(std::move(l)), message(std::move(m)) {}
  /// A diagnostic about node u, located where u came from in its input.
  static Diagnostic at(const UOp *u, std::string message);
  static Diagnostic warning(Location l, std::string message);
  /// "loc: error: message" (or "warning:") followed by "loc: note: ..." lines.
  std::string str() const;
};

/// A value or the diagnostic that explains why there is none.
template <typename T> class Result {
public:
  Result(T value) : v_(std::move(value)) {}
  Result(Diagnostic d) : v_(std::move(d)) {}
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T &value() { return std::get<0>(v_); }
  const T &value() const { return std::get<0>(v_); }
  T &operator*() { return value(); }
  T *operator->() { return &value(); }
  const Diagnostic &error() const { return std::get<1>(v_); }

private:
  std::variant<T, Diagnostic> v_;
};

/// Result<void>: success or a diagnostic.
class Status {
public:
  Status() = default;
  Status(Diagnostic d) : d_(std::move(d)), failed_(true) {}
  static Status success() { return Status(); }
  bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }
  const Diagnostic &error() const { return d_; }

private:
  Diagnostic d_;
  bool failed_ = false;
};

} // namespace tgc
