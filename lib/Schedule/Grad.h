//===- Grad.h - reverse-mode autodiff of a tensor graph ---------*- C++ -*-===//
//
// tinygrad's compute_gradient and pm_gradient (tinygrad/mixin/gradient.py),
// with the reference revision's AFTER rule (pipeline-schedule.md §5.4 item 5):
// given a scalar loss tensor and the tensors to differentiate against, build
// the gradient tensors as new nodes of the same tensor graph. The `grad` pass
// appends them to the root SINK, so the schedule computes the forward values
// and the gradients in one training-step artifact (docs/grad.md).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/Diagnostic.h"
#include "IR/Graph.h"
#include "IR/UOp.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace tgc {

/// d(loss)/d(target) for every target, in order, as tinygrad's
/// `loss.gradient(*targets)`: loss must be a float scalar, the targets float
/// tensors of a strong dtype; a target the loss does not depend on gets zeros.
Result<std::vector<const UOp *>> computeGradients(const UOp *loss, std::span<const UOp *const> targets);

/// A gradient request: the loss output ("out<I>" = source I of the root SINK)
/// and the nodes to differentiate against, by node id of the input document
/// (graph.json's node index; for the text form, the node's definition index,
/// which is its `%K` in a text printed by tgc, as buildModel names inputs).
struct GradRequest {
  std::string loss = "out0";
  std::vector<int64_t> wrt;
};

/// Parses the `--grad`/`--wrt` spelling: loss "out<I>", wrt "n12,n40" (or "12,40").
Result<GradRequest> parseGradRequest(std::string_view loss, std::string_view wrt);

/// The document node with id `id` (see GradRequest), or an error.
Result<const UOp *> findDocumentNode(const Graph &g, int64_t id);

/// Adds d(loss)/d(node) for every requested node as new sources of the root
/// SINK (outputs out<N>, out<N+1>, ... of the model), records the mapping in
/// g.extra["gradients"] ({"out<N>": <node id>, ...}) and returns the output
/// indices of the gradients, in request order.
Result<std::vector<size_t>> addGradients(Graph &g, const GradRequest &req);

/// Records a request in g.extra["grad"] ({"loss": "out0", "wrt": [12, 40]},
/// the shape of a corpus meta.json's `grad` entry) for the `grad` pass.
void setGradRequest(Graph &g, const GradRequest &req);

/// Registers the `grad` pass: runs addGradients on the request in
/// g.extra["grad"] (set by the driver's --grad/--wrt, or written in the
/// document) and removes the request.
void registerGradPass();

} // namespace tgc
