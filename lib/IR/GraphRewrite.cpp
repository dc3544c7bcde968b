//===- GraphRewrite.cpp - tinygrad's RewriteContext, iteratively ----------===//
//
// unifiedRewrite follows tinygrad's unified_rewrite stage for stage:
//   stage 0: pre-order bpm to a local fixed point, then schedule the srcs;
//   stage 1: once the srcs are done, rebuild the node over the rewritten srcs
//            (and rewrite that), or run pm on it (and rewrite the result);
//   stage 2: the node's result is the result of what it was rewritten into.
// Nodes whose srcs are not ready yet park on a waitlist instead of spinning.
// walkRewrite is tinygrad's walk_rewrite.
//
//===----------------------------------------------------------------------===//
#include "IR/GraphRewrite.h"

#include "IR/NodeTable.h"

#include <algorithm>

namespace tgc {

namespace {

using ReplaceMap = std::unordered_map<const UOp *, const UOp *>;

// Everything the rewrite knows about a node, in one table (one probe per question).
struct NodeState {
  const UOp *result = nullptr; ///< what the node was rewritten to (tinygrad's replace dict)
  const UOp *bpm = nullptr;    ///< the pre-order rules' rewrite, if bpmDone (nullptr: none applied)
  int32_t waitHead = -1;       ///< first parked item waiting on this node, in waits
  bool onStack = false;        ///< scheduled for stage 0 already
  bool bpmDone = false;
};
// A work item carries n's state slot (slots keep their address for the whole
// rewrite): it was found when the item was made, so popping it probes nothing.
struct Item {
  const UOp *n;
  const UOp *newN;
  NodeState *st; ///< n's slot
  uint8_t stage;
};
struct Wait {
  Item item;
  int32_t next; // the next parked item on the same node, or -1
};
// A rewrite's working memory. Most rewrites are small ones from rule
// callbacks, so it is pooled (NodeTable.h) rather than allocated per call.
struct RewriteScratch {
  NodeTable<NodeState> state;
  std::vector<Wait> waits;
  std::vector<Item> stack;
  std::vector<std::pair<const UOp *, bool>> walkStack;
  std::vector<const UOp *> seen, src; // stage 0's pre-order chain; a rebuilt node's srcs
  void reset(const Context &ctx) {
    state.reset(ctx);
    waits.clear();
    stack.clear();
    walkStack.clear();
  }
};
using RewriteScratchPool = ScratchPool<RewriteScratch>;

class Rewriter {
public:
  Rewriter(const PatternMatcher *pm, const PatternMatcher *bpm, RewriteEnv &env, const RewriteOptions &opts,
           Context &ctx, RewriteScratch &scratch, const ReplaceMap *replace)
      : pm_(pm), bpm_(bpm), replace_(replace), env_(env), enterCalls_(opts.enterCalls), unchanged_(opts.unchanged),
        state_(scratch.state), waits_(scratch.waits), stack_(scratch.stack), walkStack_(scratch.walkStack),
        seen_(scratch.seen), src_(scratch.src) {
    scratch.reset(ctx);
    // A terminating rewrite applies a bounded number of rules per node; the
    // context holds at least the graph, so a multiple of its size is generous.
    budget_ = opts.maxSteps ? opts.maxSteps : 1000000 + 32 * ctx.size();
    stackLimit_ = opts.maxSteps ? opts.maxSteps : 250000 + 4 * ctx.size();
  }

  Result<std::vector<const UOp *>> run(std::span<const UOp *const> roots, bool walk) {
    std::vector<const UOp *> out;
    for (const UOp *r : roots) {
      const UOp *res = walk ? walkRewrite(r) : unifiedRewrite(r);
      if (error_) return *error_;
      out.push_back(res);
    }
    return out;
  }

private:
  bool failed() const { return error_.has_value(); }
  void fail(Diagnostic d) {
    if (!error_) error_ = std::move(d);
  }
  // Surfaces what a rule callback reported through the env.
  bool checkEnv(const UOp *u, bool gateAllowed) {
    if (!env_.stopped()) [[likely]]
      return true;
    if (env_.error) {
      fail(*env_.error);
      env_.error.reset();
      return false;
    }
    if (env_.gated && !gateAllowed) {
      env_.gated = false;
      fail(Diagnostic::at(u, "a post-order rewrite rule raised BottomUpGate (only pre-order rules may gate)"));
      return false;
    }
    return true;
  }
  bool countStep(const UOp *u) {
    if (++steps_ <= budget_) return true;
    fail(Diagnostic::at(u, "graph_rewrite did not reach a fixed point after " + std::to_string(budget_) +
                               " rule applications (the rules keep rewriting each other's results)"));
    return false;
  }

  // post-order pm on x: the rewrite or nullptr
  const UOp *pmRewrite(const UOp *x) {
    if (!pm_->hasRulesFor(x->op())) return nullptr; // most nodes: no call, nothing to check
    const UOp *r = pm_->rewrite(x, env_);
    if (!checkEnv(x, false)) return nullptr;
    if (r && !countStep(x)) return nullptr;
    return r;
  }
  // pre-order bpm on x, memoized: the rewrite or nullptr; sets gated_ if the rule gated.
  // `known` is x's slot when the caller has it.
  const UOp *bpmRewrite(const UOp *x, bool &gated, NodeState *known = nullptr) {
    gated = false;
    if (replace_) {
      auto it = replace_->find(x);
      if (it == replace_->end() || it->second == x) return nullptr;
      return countStep(x) ? it->second : nullptr;
    }
    if (!bpm_->hasRulesFor(x->op())) return nullptr; // nothing to run, nothing to remember
    // One lookup: the slot stays put while the rules run (a nested rewrite has its own table).
    NodeState &st = known ? *known : state_[x];
    if (st.bpmDone) return st.bpm;
    const UOp *r = bpm_->rewrite(x, env_);
    if (env_.gated) {
      env_.gated = false;
      gated = true;
      return nullptr;
    }
    if (!checkEnv(x, true)) return nullptr;
    if (r && !countStep(x)) return nullptr;
    st.bpm = r;
    st.bpmDone = true;
    return r;
  }

  bool opaqueCall(const UOp *n) const {
    if (enterCalls_ || n->numSrc() == 0) return false;
    return n->is(Op::FUNCTION) || (n->is(Op::CALL) && n->src(0)->isIn(group::CallBodies));
  }

  const UOp *rebuild(const UOp *n, std::span<const UOp *const> src) {
    DType dt = rebuildDType(n, src);
    return n->context().intern(n->op(), dt, src, n->arg(), n->tag());
  }

  // Parks `it` until `dep` has its result. The waitlist is a linked list per
  // node threaded through waits_, so parking allocates nothing per node.
  void wait(NodeState &dep, const Item &it) {
    waits_.push_back({it, dep.waitHead});
    dep.waitHead = int32_t(waits_.size() - 1);
  }
  // The node of `st` has its result: record it and wake what waits on it.
  void finish(NodeState &st, const UOp *result) {
    st.result = result;
    for (int32_t i = st.waitHead; i != -1; i = waits_[size_t(i)].next) stack_.push_back(waits_[size_t(i)].item);
    st.waitHead = -1;
  }
  const UOp *resultOf(const UOp *n) const {
    const NodeState *st = state_.find(n);
    return st ? st->result : nullptr;
  }
  bool done(const UOp *n) const { return resultOf(n) != nullptr; }

  const UOp *unifiedRewrite(const UOp *root) {
    if (const UOp *r = resultOf(root)) return r;
    NodeState &rootSt = state_[root];
    rootSt.onStack = true;
    stack_.push_back({root, root, &rootSt, 0});
    while (!stack_.empty() && !failed()) {
      if (stack_.size() > stackLimit_) {
        fail(Diagnostic::at(root, "infinite loop in graph_rewrite (work stack above " + std::to_string(stackLimit_) +
                                      " entries)"));
        break;
      }
      Item it = stack_.back();
      stack_.pop_back();
      NodeState &st = *it.st; // every question about it.n below goes through st
      if (st.result) continue;
      if (it.stage == 0 && unchanged_ && unchanged_(it.n)) {
        finish(st, it.n);
        continue;
      }
      if (it.stage == 0) stage0(it.n, st);
      else if (it.stage == 1) stage1(it, st);
      else stage2(it, st);
    }
    if (failed()) return nullptr;
    const UOp *result = resultOf(root);
    if (!result) {
      // Everything left is waiting on something that waits on it: name the oldest such node.
      const UOp *stuck = root;
      for (const Wait &w : waits_)
        if (!done(w.item.n) && w.item.n->id() < stuck->id()) stuck = w.item.n;
      fail(Diagnostic::at(stuck, "graph_rewrite cannot finish: a rule's result depends on the node it replaces "
                                 "(rewrite cycle at " + stuck->str() + ")"));
      return nullptr;
    }
    return result;
  }

  void stage0(const UOp *n, NodeState &nst) {
    const UOp *newN = n;
    if (bpm_ || replace_) {
      // apply the pre-order rules until they no longer fire
      const UOp *test = n;
      seen_.clear();
      while (test) {
        if (std::find(seen_.begin(), seen_.end(), test) != seen_.end()) {
          fail(Diagnostic::at(n, "infinite loop in fixed_point_rewrite: the pre-order rules cycle back to " +
                                     test->str()));
          return;
        }
        seen_.push_back(test);
        bool gated = false;
        const UOp *r = bpmRewrite(test, gated, test == n ? &nst : nullptr);
        if (failed()) return;
        if (gated) {
          // BottomUpGate: keep what we have and do not look below it
          finish(nst, test);
          return;
        }
        newN = test;
        test = r;
      }
    }
    stack_.push_back({n, newN, &nst, 1});
    if (opaqueCall(newN)) state_[newN->src(0)].result = newN->src(0);
    auto src = newN->src();
    for (size_t i = src.size(); i-- > 0;) {
      const UOp *x = src[i];
      NodeState &st = state_[x];
      if (st.onStack) continue;
      st.onStack = true;
      stack_.push_back({x, x, &st, 0});
    }
  }

  void stage1(const Item &it, NodeState &nst) {
    const UOp *newN = it.newN;
    src_.clear();
    bool changed = false;
    for (const UOp *x : newN->src()) {
      const UOp *r = resultOf(x);
      if (!r) {
        wait(state_[x], it); // not ready: come back when x is done
        return;
      }
      src_.push_back(r);
      changed |= r != x;
    }
    const UOp *next;
    if (!changed) {
      const UOp *r = pm_ ? pmRewrite(newN) : nullptr;
      if (failed()) return;
      if (!r) {
        finish(nst, newN);
        return;
      }
      next = r;
    } else {
      next = rebuild(newN, src_);
    }
    // rewrite `next` too, then link its result back to n
    stack_.push_back({it.n, next, it.st, 2});
    stack_.push_back({next, next, &state_[next], 0});
  }

  void stage2(const Item &it, NodeState &nst) {
    NodeState &next = state_[it.newN];
    if (!next.result) {
      wait(next, it);
      return;
    }
    finish(nst, next.result);
  }

  const UOp *walkRewrite(const UOp *root) {
    std::vector<std::pair<const UOp *, bool>> &stack = walkStack_;
    stack.push_back({root, false});
    while (!stack.empty() && !failed()) {
      auto [n, processed] = stack.back();
      stack.pop_back();
      if (done(n)) continue;
      if (!processed && unchanged_ && unchanged_(n)) {
        state_[n].result = n;
        continue;
      }
      if (!processed) {
        if (bpm_) {
          bool gated = false;
          const UOp *r = bpmRewrite(n, gated);
          if (failed()) break;
          if (gated || r) {
            state_[n].result = r ? r : n;
            continue;
          }
        }
        stack.push_back({n, true});
        if (opaqueCall(n)) state_[n->src(0)].result = n->src(0);
        auto src = n->src();
        for (size_t i = src.size(); i-- > 0;)
          if (!done(src[i])) stack.push_back({src[i], false});
      } else {
        src_.clear();
        bool changed = false;
        for (const UOp *x : n->src()) {
          const UOp *r = resultOf(x);
          src_.push_back(r ? r : x);
          changed |= src_.back() != x;
        }
        const UOp *newN = changed ? rebuild(n, src_) : n;
        if (pm_) {
          const UOp *r = pmRewrite(newN);
          if (failed()) break;
          if (r) newN = r;
        }
        state_[n].result = newN;
      }
    }
    if (failed()) return nullptr;
    const UOp *result = resultOf(root);
    return result ? result : root;
  }

  const PatternMatcher *pm_, *bpm_;
  const ReplaceMap *replace_;
  RewriteEnv &env_;
  bool enterCalls_;
  const std::function<bool(const UOp *)> &unchanged_;
  size_t budget_ = 0, stackLimit_ = 0, steps_ = 0;
  std::optional<Diagnostic> error_;
  NodeTable<NodeState> &state_;
  std::vector<Wait> &waits_;
  std::vector<Item> &stack_;
  std::vector<std::pair<const UOp *, bool>> &walkStack_;
  std::vector<const UOp *> &seen_, &src_;
};

} // namespace

// A Rewriter over pooled scratch, run on `roots` (not empty).
static Result<std::vector<const UOp *>> runRewriter(std::span<const UOp *const> roots, const PatternMatcher *post,
                                                    const PatternMatcher *pre, const ReplaceMap *replace,
                                                    RewriteEnv &env, const RewriteOptions &opts) {
  RewriteScratchPool::Lease scratch;
  Rewriter rw(post, pre, env, opts, roots[0]->context(), *scratch, replace);
  return rw.run(roots, opts.walk);
}

Result<std::vector<const UOp *>> graphRewrite(std::span<const UOp *const> roots, const PatternMatcher &pm,
                                              RewriteEnv &env, const RewriteOptions &opts) {
  if (roots.empty()) return std::vector<const UOp *>{};
  const PatternMatcher *post = opts.bottomUp ? nullptr : &pm;
  const PatternMatcher *pre = opts.bottomUp ? &pm : opts.bpm;
  return runRewriter(roots, post, pre, nullptr, env, opts);
}

Result<const UOp *> substituteRewrite(const UOp *root, const ReplaceMap &map,
                                      const std::function<bool(const UOp *)> &unchanged) {
  RewriteEnv env;
  RewriteOptions opts;
  opts.unchanged = unchanged;
  auto r = runRewriter(std::span<const UOp *const>(&root, 1), nullptr, nullptr, &map, env, opts);
  if (!r) return r.error();
  return r.value()[0];
}

Result<const UOp *> graphRewritePure(const UOp *root, const PatternMatcher &pm) {
  Context &ctx = root->context();
  if (const UOp *done = ctx.memo(&pm, root)) return done;
  Result<const UOp *> r = graphRewrite(root, pm);
  if (r) ctx.setMemo(&pm, root, *r);
  return r;
}

Status graphRewrite(Graph &g, const PatternMatcher &pm, const RewriteOptions &opts) {
  RewriteEnv env;
  auto r = graphRewrite(g.roots, pm, env, opts);
  if (!r) return r.error();
  g.roots = std::move(r.value());
  return Status::success();
}

} // namespace tgc
