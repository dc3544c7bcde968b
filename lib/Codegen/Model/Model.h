//===- Model.h - a tensor graph scheduled into a runnable model -*- C++ -*-===//
//
// The unit `tgc run` and `tgc compile` work on: a tensor graph (graph.json or
// text form) taken through the schedule pipeline (callify, kernel-graph,
// linearize, resolve-calls; built by Pipeline/Pipeline.h's buildModel) to a
// LINEAR of kernel CALLs, its static plan (Lower/LinearPlan.h), and the model's interface: which buffers the caller provides
// (inputs, with the data files the graph names), which it gets back
// (outputs), and which it provides and gets back changed (assign targets).
//
// Names follow the corpus's files: output I of the model is source I of the
// root SINK ("out<I>"); an input buffer is named by the graph node id of its
// BUFFER ("n<K>"), and when the model writes it the result is "n<K>.after".
// Everything else the plan holds is an intermediate, free for the memory
// planner to place in a workspace.
//
// An assign to a COPY of an input (tinygrad's random counter: a tensor made
// from a list lives on the PYTHON device and is copied to the CPU before it is
// advanced) is an assign to that tensor: the model copies the assigned value
// back into the input at the end, so the input is an in-out.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Codegen/Exec/CompiledLinear.h"
#include "IR/DType.h"
#include "IR/Diagnostic.h"
#include "IR/Graph.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tgc {

/// One tensor of a model's interface, bound to a byte range of a plan buffer.
struct ModelTensor {
  enum class Role {
    Input,  ///< read by the model, provided by the caller ("n<K>")
    Output, ///< produced by the model ("out<I>")
    InOut,  ///< provided by the caller and written by the model ("n<K>", written back as "n<K>.after")
  };
  Role role = Role::Input;
  std::string name;             ///< "n<K>" or "out<I>"
  DType dtype;
  std::vector<int64_t> shape;   ///< the tensor's shape (outputs: the SINK source's shape)
  int buffer = -1;              ///< index into Model::plan.buffers
  int64_t byteOffset = 0;       ///< where the tensor starts in that buffer
  int64_t bytes = 0;            ///< numel * itemsize; the tensor is dense and contiguous there
  std::string dataFile;         ///< inputs: the data file the graph names, resolved against its baseDir ("" if none)
  /// The random state tinygrad's THREEFRY draws from (Tensor._device_seeds and
  /// _device_rng_counters, uint32[2] each): the key, an input, and the counter,
  /// an in-out each run advances by the 32-bit words it draws.
  enum class Random { None, Key, Counter };
  Random random = Random::None;
  /// Inputs and in-outs: the caller must provide the contents. False for a
  /// buffer the document does not list as allocated (graph.json `buffers`)
  /// unless the model only reads it: fresh storage (tinygrad's Tensor.empty)
  /// that an assign fills; it starts zeroed.
  bool needsData = true;
};

/// A variable of the model (tinygrad's Variable: a symbolic batch, a decoding
/// position, a reduction length): an integer bound at each run, in [min, max].
/// The kernels take it as an argument; the buffers are sized for max.
struct ModelVar {
  std::string name;
  std::string cType = "int64_t"; ///< its type in the entry point (the kernels' index width)
  int64_t min = 0, max = 0;
  /// The value the graph binds (AFTER(var, STORE(var, CONST))): the default.
  std::optional<int64_t> bound;
};

struct Model {
  std::string name;             ///< a C identifier (from the graph's file stem unless given)
  const UOp *linear = nullptr;  ///< the LINEAR of CALLs
  /// planLinear(linear), then at the end the graph's BUFFERs no CALL uses
  /// (inputs the schedule no longer reads, such as x in `x * 0`): the
  /// interface names every BUFFER of the graph, whatever the optimizer removed.
  SchedulePlan plan;
  std::vector<ModelTensor> tensors; ///< inputs and in-outs in node-id order, then outputs in SINK order
  /// One per plan.vars, in its order (by name): the graph's variables, also
  /// one no kernel reads (appended to plan.vars, like an unread input).
  std::vector<ModelVar> vars;

  /// The tensor named `name`, or null.
  const ModelTensor *find(std::string_view name) const;
  /// The value of every variable, in vars order: `given` by name, else its
  /// bound value. A diagnostic for an unknown name, a variable with no
  /// value, or a value outside [min, max].
  Result<std::vector<int64_t>> varValues(const std::map<std::string, int64_t> &given = {}) const;
  /// Index into tensors of the model's random key or counter; -1 when it has
  /// none, or several (a graph that reseeds between its draws).
  int randomTensor(ModelTensor::Random kind) const;
  /// The same for the variables of `plan` (a schedule compiled from `linear`,
  /// which lacks those no kernel reads), in its order.
  Result<std::vector<int64_t>> varValuesFor(const SchedulePlan &plan, const std::map<std::string, int64_t> &given = {}) const;
};

/// Parses a variable assignment NAME=VALUE (`--var`): a diagnostic for a
/// missing name or '=', or a VALUE that is not a decimal int64.
Result<std::pair<std::string, int64_t>> parseVarAssignment(std::string_view text);

/// `s` as a C identifier: other characters become '_', a leading digit gets a
/// '_' before it; "model" if empty.
std::string cIdentifier(std::string_view s);

} // namespace tgc
