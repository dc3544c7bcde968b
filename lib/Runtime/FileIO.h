//===- FileIO.h - whole-file reads and atomic writes ------------*- C++ -*-===//
//
// Shared by the compiler driver and the runtime launcher: an output file is
// either written completely or not at all (temp file in the same directory,
// then rename), so a failed run never leaves a half-written file behind.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <string_view>

namespace tgc::rt {

/// Reads a whole file ("-" = standard input). On failure returns false and
/// sets `error` to a message naming the file and the OS error.
bool readFile(const std::string &path, std::string &out, std::string &error);

/// Writes `data` to `path` atomically ("-" = standard output). On failure
/// returns false, sets `error`, and leaves no file behind.
bool writeFileAtomic(const std::string &path, std::string_view data, std::string &error);

} // namespace tgc::rt
