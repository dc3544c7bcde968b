//===- SyntheticKernelGraph.h - random kernel graphs of any size -*- C++ -*-===//
//
// Builds kernel graphs in the form rangeify produces (AFTER(buffer,
// CALL(SINK[KernelInfo] over PARAMs, args...))) by running a random program
// of kernels in sequence: each kernel reads a few buffer states (the latest
// intermediates, so there are long chains, fan-in and fan-out, and persistent
// buffers) and either fills a fresh intermediate BUFFER or assigns into a
// persistent PARAM, possibly reading it too. Readers of a persistent buffer
// that a later kernel assigns give write-after-read edges. With the hazard
// options the program also reads outdated states, adds AFTER-on-AFTER ordering
// and passes unused or reshaped arguments, so cycles and every rule of the
// linearizer occur. Used by the linearize benchmark and the differential test.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "KernelGraphBuilder.h"

#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

namespace tgc::testing {

struct SyntheticOptions {
  size_t kernels = 1000;
  size_t persistent = 0;    ///< persistent PARAM buffers; 0 means kernels / 8, at least 4
  double assignRate = 0.25; ///< kernels that assign into a persistent buffer
  double persistentReadRate = 0.3;
  size_t window = 32; ///< intermediates are read among the last `window` ones
  // Hazards (0 for a valid sequential program, which never has a cycle).
  double staleRate = 0;   ///< reads of an outdated state of a persistent buffer
  double orderRate = 0;   ///< AFTERs that also wait on another recent state
  double unusedRate = 0;  ///< kernels passing one more argument that the body never touches
  double reshapeRate = 0; ///< arguments passed through a RESHAPE
  uint64_t seed = 1;
};

/// splitmix64: deterministic on every platform, unlike the std distributions.
class SplitMix {
public:
  explicit SplitMix(uint64_t seed) : s_(seed) {}
  uint64_t next() {
    uint64_t z = (s_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  size_t below(size_t n) { return n ? size_t(next() % n) : 0; }
  bool chance(double p) { return double(next() >> 11) * 0x1.0p-53 < p; }

private:
  uint64_t s_;
};

class SyntheticKernelGraph {
public:
  static constexpr int64_t kElems = 16;
  static constexpr size_t npos = SIZE_MAX;

  SyntheticKernelGraph(KG &k, const SyntheticOptions &o) : k_(k), o_(o), rng_(o.seed) {}

  /// The kernel graph's SINK: the final state of every persistent buffer that
  /// was assigned and every intermediate no kernel read.
  const UOp *build() {
    size_t numPersistent = o_.persistent ? o_.persistent : std::max<size_t>(4, o_.kernels / 8);
    for (size_t p = 0; p < numPersistent; ++p) history_.push_back({k_.param(int64_t(p), kElems)});
    nextSlot_ = int64_t(numPersistent);
    for (size_t i = 0; i < o_.kernels; ++i) addKernel();
    std::vector<const UOp *> outs;
    for (const auto &h : history_)
      if (h.size() > 1) outs.push_back(h.back());
    for (size_t i = 0; i < inter_.size(); ++i)
      if (!interRead_[i]) outs.push_back(inter_[i]);
    return k_.sink(std::move(outs));
  }

private:
  /// out[i] = (in1[i] op in2[i] ...) * c, plus out[i] itself when `rmw`;
  /// `unused` lists one more PARAM slot that nothing touches. Bodies are
  /// shared between kernels, as tinygrad's dedup shares them.
  const UOp *body(size_t inputs, bool rmw, bool unused, size_t variant) {
    auto key = std::make_tuple(inputs, rmw, unused, variant);
    if (auto it = bodies_.find(key); it != bodies_.end()) return it->second;
    const UOp *i = k_.range(kElems);
    const UOp *out = k_.index(k_.param(0, kElems, ""), i);
    const UOp *v = k_.index(k_.param(1, kElems, ""), i);
    for (size_t s = 2; s <= inputs; ++s) {
      const UOp *x = k_.index(k_.param(int64_t(s), kElems, ""), i);
      v = s % 2 ? k_.add(v, x) : k_.mul(v, x);
    }
    if (rmw) v = k_.add(out, v);
    v = k_.mul(v, k_.cf(double(variant + 1)));
    std::string name = "k" + std::to_string(inputs) + (rmw ? "_rmw" : "") + (unused ? "_unused" : "") + "_" +
                       std::to_string(variant);
    const UOp *b = k_.kernel({k_.end(k_.store(out, v), i)}, name);
    return bodies_[key] = b;
  }

  const UOp *maybeReshape(const UOp *state) {
    return rng_.chance(o_.reshapeRate) ? k_.ctx.get(Op::RESHAPE, state->dtype(), {state, k_.cint(kElems)}) : state;
  }

  /// An input state, and the persistent buffer it belongs to (npos for an intermediate).
  std::pair<const UOp *, size_t> pickInput(bool first) {
    if (!inter_.empty() && first && rng_.chance(0.6)) return {readInter(inter_.size() - 1), npos}; // a chain
    if (inter_.empty() || rng_.chance(o_.persistentReadRate)) {
      size_t p = rng_.below(history_.size());
      auto &h = history_[p];
      return {rng_.chance(o_.staleRate) ? h[rng_.below(h.size())] : h.back(), p};
    }
    size_t w = std::min(o_.window, inter_.size());
    return {readInter(inter_.size() - 1 - rng_.below(w)), npos};
  }
  const UOp *readInter(size_t i) {
    interRead_[i] = true;
    return inter_[i];
  }

  void addKernel() {
    size_t inputs = 1 + rng_.below(3);
    bool assign = rng_.chance(o_.assignRate);
    bool rmw = assign && rng_.chance(0.5);
    bool unused = rng_.chance(o_.unusedRate);
    size_t p = rng_.below(history_.size());
    const UOp *outArg = assign ? history_[p].back() : k_.buffer(nextSlot_++, kElems);
    std::vector<const UOp *> inputStates;
    size_t lastPersistent = npos;
    for (size_t s = 0; s < inputs; ++s) std::tie(inputStates.emplace_back(), lastPersistent) = pickInput(s == 0);
    std::vector<const UOp *> args{maybeReshape(outArg)};
    for (const UOp *in : inputStates) args.push_back(maybeReshape(in));
    if (unused) args.push_back(pickInput(false).first);
    const UOp *call = k_.call(body(inputs, rmw, unused, rng_.below(4)), std::move(args));
    std::vector<const UOp *> deps{call};
    if (rng_.chance(o_.orderRate)) {
      // Wait on another state: a recent intermediate, or (as custom kernels
      // return their inputs) an input returned after this very kernel.
      if (!inter_.empty() && rng_.chance(0.7))
        deps.push_back(inter_[inter_.size() - 1 - rng_.below(std::min(o_.window, inter_.size()))]);
      else
        deps.push_back(k_.after(inputStates[0], {call}));
    }
    if (rng_.chance(o_.orderRate)) {
      // A read-only input returned as an AFTER becomes its buffer's current state.
      size_t q = lastPersistent;
      if (q != npos && history_[q].back() == inputStates.back() && !(assign && q == p))
        history_[q].push_back(k_.after(inputStates.back(), {call}));
    }
    const UOp *state = k_.after(outArg, std::move(deps));
    if (assign) {
      history_[p].push_back(state);
    } else {
      inter_.push_back(state);
      interRead_.push_back(false);
    }
  }

  KG &k_;
  SyntheticOptions o_;
  SplitMix rng_;
  int64_t nextSlot_ = 0;
  std::vector<std::vector<const UOp *>> history_; ///< per persistent buffer: its states, oldest first
  std::vector<const UOp *> inter_;                ///< intermediates' AFTER states, in creation order
  std::vector<bool> interRead_;
  std::map<std::tuple<size_t, bool, bool, size_t>, const UOp *> bodies_;
};

inline const UOp *buildSyntheticKernelGraph(KG &k, const SyntheticOptions &o) { return SyntheticKernelGraph(k, o).build(); }

} // namespace tgc::testing
