//===- LinearizeTest.cpp - ordering kernels (create_schedule) -------------===//
//
// The reference's assign-ordering and custom-kernel cases (pipeline-schedule.md
// §5.6-5.7) written as kernel graphs, plus the mechanics of the linearizer:
// AFTER ordering, write-after-read, storage unwrapping and the alias merge.
//
//===----------------------------------------------------------------------===//
#include "KernelGraphBuilder.h"

#include "IR/Graph.h"
#include "Schedule/Linearize.h"

#include <doctest/doctest.h>

using namespace tgc;
using namespace tgc::sched;
using tgc::testing::KG;

namespace {
using Calls = std::vector<const UOp *>;

Calls schedule(const UOp *graph) {
  Result<const UOp *> r = linearize(graph);
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().str()));
  REQUIRE((*r)->is(Op::LINEAR));
  return Calls((*r)->src().begin(), (*r)->src().end());
}

Diagnostic scheduleError(const UOp *graph) {
  Result<const UOp *> r = linearize(graph);
  REQUIRE_FALSE(r.ok());
  return r.error();
}

std::string allText(const Diagnostic &d) {
  std::string s = d.message;
  for (const auto &n : d.notes) s += "\n" + n;
  return s;
}

/// custom_add_one_kernel(B, A): B[i] = A[i] + 1 over the buffer's n elements.
const UOp *addOne(KG &k, int64_t n = 1, const std::string &name = "add_one") {
  const UOp *i = k.range(n);
  const UOp *b = k.param(0, n, ""), *a = k.param(1, n, "");
  return k.kernel({k.end(k.store(k.index(b, i), k.add(k.index(a, i), k.cf(1))), i)}, name);
}
/// out[0] = in1[0] + in2[0]
const UOp *addTwo(KG &k) {
  const UOp *i = k.cint(0);
  const UOp *o = k.param(0, 1, ""), *p = k.param(1, 1, ""), *q = k.param(2, 1, "");
  return k.kernel({k.store(k.index(o, i), k.add(k.index(p, i), k.index(q, i)))}, "add_two");
}
/// dst[0] = src[0] * c (dst slot 0, src slot 1; one PARAM when src is dst)
const UOp *scale(KG &k, double c, bool inPlace = false) {
  const UOp *i = k.cint(0);
  const UOp *d = k.param(0, 1, ""), *s = inPlace ? d : k.param(1, 1, "");
  return k.kernel({k.store(k.index(d, i), k.mul(k.index(s, i), k.cf(c)))}, inPlace ? "scale_inplace" : "scale");
}
} // namespace

TEST_CASE("linearize: an unrelated store under AFTER is ordering, not a write (test_after_store_to_other_buffer)") {
  KG k;
  const UOp *x = k.param(0), *state = k.param(1), *out = k.param(2);
  const UOp *kA = k.call(scale(k, 3), {state, x}); // state = x*3
  const UOp *ordered = k.after(x, {kA});           // x, after kA
  const UOp *body = addTwo(k);
  const UOp *kB = k.call(body, {out, ordered, x}); // out = ordered + x
  Calls got = schedule(k.sink({k.after(state, {kA}), k.after(out, {kB})}));
  // kB's two versions of x are one storage: its slot-2 PARAM becomes the identical slot-1 PARAM.
  const UOp *i = k.cint(0);
  const UOp *p1 = k.param(1, 1, "");
  const UOp *merged =
      k.kernel({k.store(k.index(k.param(0, 1, ""), i), k.add(k.index(p1, i), k.index(p1, i)))}, "add_two");
  CHECK(got == Calls{k.call(scale(k, 3), {state, x}), k.call(merged, {out, x, x})});
}

TEST_CASE(
    "linearize: a stale read the reader already depends past is a cycle (test_war_reader_already_depends_on_write)") {
  KG k;
  const UOp *x = k.param(0), *y = k.param(1), *z = k.param(2);
  const UOp *k1 = k.call(scale(k, 2, true), {x}); // x = x*2
  const UOp *x1 = k.after(x, {k1});
  const UOp *k2 = k.call(addTwo(k), {y, y, x1}); // y = y + x'
  const UOp *y1 = k.after(y, {k2});
  const UOp *k3 = k.call(addTwo(k), {z, y1, x}); // z = y' + x (initial x)
  Diagnostic d = scheduleError(k.sink({x1, y1, k.after(z, {k3})}));
  CHECK(d.message == "cycle detected in assign graph");
  std::string text = allText(d);
  CAPTURE(text);
  // The report names the kernels in the cycle and the buffer whose write would destroy the read.
  CHECK(text.find("kernel 0 'scale_inplace'") != std::string::npos);
  CHECK(text.find("kernel 2 'add_two'") != std::string::npos);
  CHECK(text.find("writes PARAM slot=0") != std::string::npos);
}

TEST_CASE("linearize: reading between two assigns of one buffer is a cycle (test_read_between_two_assigns)") {
  KG k;
  const UOp *a = k.param(0, 4), *b = k.param(1, 4), *out = k.param(2, 4);
  const UOp *k1 = k.call(addOne(k, 4), {a, b}); // a = b + 1
  const UOp *a1 = k.after(a, {k1});
  const UOp *k2 = k.call(addOne(k, 4, "add_hundred"), {a1, b}); // a = b + 100 (the body's constant does not matter)
  const UOp *a2 = k.after(a1, {k2});
  const UOp *i = k.range(4);
  const UOp *o = k.param(0, 4, ""), *p = k.param(1, 4, ""), *q = k.param(2, 4, "");
  const UOp *fin = k.kernel({k.end(k.store(k.index(o, i), k.add(k.index(p, i), k.mul(k.index(q, i), k.cf(3)))), i)});
  const UOp *k3 = k.call(fin, {out, a2, a1}); // out = a'' + a'*3
  CHECK(scheduleError(k.sink({a2, k.after(out, {k3})})).message == "cycle detected in assign graph");
}

TEST_CASE("linearize: read-only custom kernels return AFTERs that are not writes (test_readonly_after_args)") {
  for (bool chained : {false, true})
    for (bool corealize : {false, true}) {
      CAPTURE(chained);
      CAPTURE(corealize);
      KG k;
      const UOp *x = k.param(0), *aBuf = k.param(1), *bBuf = k.param(2), *out = k.param(3);
      const UOp *k1 = k.call(addOne(k), {aBuf, x});
      const UOp *a = k.after(aBuf, {k1}), *x1 = k.after(x, {k1});
      const UOp *src2 = chained ? x1 : x;
      const UOp *k2 = k.call(addOne(k), {bBuf, src2});
      const UOp *b = k.after(bBuf, {k2}), *x2 = k.after(src2, {k2});
      const UOp *kS = corealize ? k.call(addTwo(k), {out, x1, b}) : k.call(addTwo(k), {out, x1, x2});
      Calls got = schedule(k.sink({a, b, k.after(out, {kS}), x2}));
      // Storage args: the x versions are x; the SINK body's identical PARAMs for x merge.
      REQUIRE(got.size() == 3);
      CHECK(got[0] == k.call(addOne(k), {aBuf, x}));
      CHECK(got[1] == k.call(addOne(k), {bBuf, x}));
      CHECK(got[2]->src(0)->arg().field("name")->str() == "add_two");
      CHECK(Calls(got[2]->src().begin() + 1, got[2]->src().end()) ==
            (corealize ? Calls{out, x, bBuf} : Calls{out, x, x}));
    }
}

TEST_CASE(
    "linearize: an unindexed read runs before the assign that overwrites it (test_unindexed_access_before_assign)") {
  KG k;
  const UOp *x = k.param(0), *y = k.param(1);
  const UOp *o = k.param(0, 1, ""), *p = k.param(1, 1, "");
  const UOp *kY = k.call(k.kernel({k.store(o, k.add(p, k.cf(1)))}), {y, x}); // whole buffers, no INDEX
  const UOp *kX = k.call(scale(k, 2, true), {x});                            // x = x*2
  Calls got = schedule(k.sink({k.after(x, {kX}), k.after(y, {kY})}));
  CHECK(got == Calls{kY, kX});
}

TEST_CASE("linearize: a read-only AFTER does not hide a later write (test_readonly_after_does_not_hide_write)") {
  KG k;
  const UOp *x = k.param(0), *scratch = k.param(1), *out = k.param(2);
  const UOp *kR = k.call(addOne(k), {scratch, x});
  const UOp *before = k.after(x, {kR});
  const UOp *kX = k.call(scale(k, 2, true), {x});
  const UOp *kF = k.call(addTwo(k), {out, before, k.after(x, {kX})});
  CHECK(scheduleError(k.sink({k.after(x, {kX}), k.after(out, {kF})})).message == "cycle detected in assign graph");
}

TEST_CASE(
    "linearize: differently shaped views of one buffer stay separate PARAMs (test_aliased_args_different_sizes)") {
  KG k;
  const UOp *out = k.param(0, 4), *x = k.param(1, 4);
  const UOp *i = k.range(4);
  const UOp *o = k.param(0, 4, ""), *a = k.param(1, 4, ""), *b = k.param(2, 1, "");
  const UOp *body = k.kernel({k.end(k.store(k.index(o, i), k.add(k.index(a, i), k.index(b, k.cint(0)))), i)});
  const UOp *call = k.call(body, {out, x, x});
  CHECK(schedule(k.sink({k.after(out, {call})})) == Calls{call});
}

TEST_CASE("linearize: a failed schedule leaves the graph as it was "
          "(test_unknown_effects_do_not_replace_tensors_on_failure)") {
  KG k;
  const UOp *x = k.param(0);
  const UOp *root = k.sink({k.after(x, {k.call(k.program(k.kernel({x})), {x})})});
  Graph g;
  g.roots = {root};
  for (int attempt = 0; attempt < 2; ++attempt) {
    LinearizePass pass;
    Status st = pass.run(g);
    REQUIRE_FALSE(st.ok());
    CHECK(st.error().message == "cannot compute accesses for opaque Ops.PROGRAM");
    CHECK(g.roots == std::vector<const UOp *>{root});
  }
}

TEST_CASE("linearize: write-after-read orders the reader first, independent kernels keep their order") {
  KG k;
  const UOp *x = k.param(0), *out = k.param(1), *u = k.param(2), *v = k.param(3);
  const UOp *kW = k.call(k.kernel({k.store(k.index(k.param(0, 1, ""), k.cint(0)), k.cf(5))}, "fill"), {x});
  const UOp *kR = k.call(scale(k, 2), {out, x}); // reads x's initial contents
  const UOp *kU = k.call(scale(k, 3), {u, v});   // unrelated
  Calls got = schedule(k.sink({k.after(x, {kW}), k.after(u, {kU}), k.after(out, {kR})}));
  CHECK(got == Calls{kU, kR, kW});
  // Reading x after the write instead: plain data order.
  const UOp *kR2 = k.call(scale(k, 2), {out, k.after(x, {kW})});
  CHECK(schedule(k.sink({k.after(out, {kR2})})) == Calls{kW, k.call(scale(k, 2), {out, x})});
}

TEST_CASE("linearize: AFTER-on-AFTER deps order the AFTER's kernels") {
  KG k;
  const UOp *x = k.param(0), *y = k.param(1), *z = k.param(2), *s = k.param(3);
  const UOp *kA = k.call(scale(k, 2), {z, x});
  const UOp *kB = k.call(scale(k, 3), {y, s});
  // Without the dep kA would run first (it is found first).
  Calls got = schedule(k.sink({k.after(z, {kA}), k.after(z, {kA, k.after(y, {kB})})}));
  CHECK(got == Calls{kB, kA});
}

TEST_CASE("linearize: an unused argument's ancestry still orders the kernel") {
  KG k;
  const UOp *x = k.param(0), *out = k.param(1);
  const UOp *kW = k.call(scale(k, 2, true), {x}); // x = x*2
  // kR lists x after kW but never touches it; it reads x's initial contents (slot 2).
  const UOp *o = k.param(0, 1, ""), *q = k.param(2, 1, "");
  const UOp *kR = k.call(k.kernel({k.store(o, k.add(q, k.cf(1)))}), {out, k.after(x, {kW}), x});
  // So kR runs after kW, which destroys what kR reads: a cycle, not a silently new read.
  Diagnostic d = scheduleError(k.sink({k.after(out, {kR})}));
  CHECK(d.message == "cycle detected in assign graph");
  CHECK(allText(d).find("argument 1") != std::string::npos);
  // Without the unused argument the read simply goes first.
  const UOp *kR2 = k.call(k.kernel({k.store(o, k.add(q, k.cf(1)))}), {out, out, x});
  CHECK(schedule(k.sink({k.after(x, {kW}), k.after(out, {kR2})})) == Calls{kR2, kW});
}

TEST_CASE("linearize: END-wrapped kernels, bound variables and COPY calls") {
  KG k;
  const UOp *x = k.param(0, 1, "PYTHON"), *y = k.param(1), *out = k.param(2);
  const UOp *copy = k.call(k.ctx.get(Op::COPY, dtypes::Float32, {x}, Value::string("CPU")), {y, x});
  // A bound variable: AFTER(var BUFFER, STORE(var, CONST)); it is dropped from the scheduled args.
  Value varArg = Value::object(
      "ParamArg", {"slot", "dtype", "vmin_vmax", "multiple_of", "name", "addrspace", "axis", "device", "volatile"},
      {Value::integer(-1), Value::dtype(dtypes::Int32), Value::tuple({Value::integer(0), Value::integer(8)}), Value(),
       Value::string("n"), Value::enumMember("AddrSpace", "ALU"), Value(), Value(), Value::boolean(false)});
  const UOp *var = k.ctx.get(Op::BUFFER, dtypes::Int32, {k.ctx.get(Op::STACK, dtypes::WeakInt, {})}, varArg);
  const UOp *bound = k.after(var, {k.store(var, k.ctx.constInt(3, dtypes::Int32))});
  const UOp *body = scale(k, 2);
  const UOp *dev = k.ctx.get(Op::RANGE, dtypes::WeakInt, {k.cint(1)},
                             Value::tuple({Value::integer(0), Value::enumMember("AxisType", "DEVICE")}));
  const UOp *kernel = k.end(k.call(body, {out, k.after(y, {copy}), bound}), dev);
  Calls got = schedule(k.sink({k.after(out, {kernel})}));
  CHECK(got == Calls{copy, k.call(body, {out, y})});
}

TEST_CASE("linearize: arguments must resolve to buffer states") {
  KG k;
  const UOp *out = k.param(0);
  const UOp *bad = k.call(scale(k, 2), {out, k.cf(1)});
  CHECK(scheduleError(k.sink({k.after(out, {bad})})).message ==
        "input to kernel must resolve to a buffer state, not Ops.CONST");
}
