//===- Launcher.h - drive any compiled model from the command line -*- C++ -*-===//
//
// The generic `main` of `tgc compile --emit=exe`: everything it knows about
// the model comes from the model's metadata table (ModelABI.h), so one
// launcher serves every model. Std-only: deployed executables do not carry
// LLVM.
//
//   ./model [--input NAME=FILE.npy]... [--var NAME=VALUE]... [--output-dir DIR]
//           [--weights FILE] [--repeat N] [--no-profile] [--threads N] [--list]
//
// A model with variables (tinygrad Variables) runs with each at its --var
// value, else at its default (the value the exported graph binds); an
// unknown name, a malformed value or one outside [min, max] is refused
// before anything runs (exit 1).
// Inputs not given start zero-filled. Every .npy is checked against the table
// (dtype, shape, byte size) before anything runs; a flat (rank-1) tensor, as
// input buffers are, takes any shape with its element count. A model with
// external weights maps and binds its weights file first (--weights, default
// the executable's path + ".weights"); a bad file is refused with a message
// naming it. Outputs are written as DIR/<name>.npy, in-outs as
// DIR/<name>.after.npy, each atomically. With --repeat N: a warm-up run, then
// N timed runs (in-outs restored before each, untimed), a `run I: T ms` line
// as each ends, a per-kernel time table from the model's call observer
// (unless --no-profile), and as the last line of stdout `median_ms=<float>`.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Runtime/ModelABI.h"

#include <string>
#include <vector>

namespace tgc::rt {

/// The .npy kind and width ("f4", "b1", ...; byte order aside) of a
/// TGC_DTYPE_*, or null; bfloat16 travels as its raw bits ("u2").
const char *npyKind(int32_t dtype);

/// Runs the launcher for `model`; returns the process exit code (0 ok,
/// 1 bad input or a failed run, 2 bad command line).
int launcherMain(const tgc_model_info &model, int argc, char **argv);

/// The value of every variable of `model` (argument order) from `given`
/// (NAME=VALUE texts of --var); "" on success, else what is wrong.
std::string launcherVarValues(const tgc_model_info &model, const std::vector<std::string> &given,
                              std::vector<int64_t> &values);

} // namespace tgc::rt
