//===- PatternMatcherTest.cpp - UPat matching and rule dispatch -----------===//
#include "IR/PatternMatcher.h"

#include <doctest/doctest.h>

#include <cmath>

using namespace tgc;

namespace {
struct Fixture {
  Context c;
  const UOp *a = c.get(Op::RANGE, dtypes::WeakInt, {c.constInt(4)}, Value::tuple({Value::integer(0)}));
  const UOp *b = c.get(Op::RANGE, dtypes::WeakInt, {c.constInt(5)}, Value::tuple({Value::integer(1)}));
  const UOp *zero = c.constInt(0);
  const UOp *add(const UOp *x, const UOp *y) { return c.get(Op::ADD, dtypes::WeakInt, {x, y}); }
  const UOp *mul(const UOp *x, const UOp *y) { return c.get(Op::MUL, dtypes::WeakInt, {x, y}); }
};

// The bindings of every match, as "x=<id> y=<id>" strings.
std::vector<std::string> matches(const UPat &p, const UOp *u) {
  std::vector<std::string> out;
  for (const auto &m : p.matchAll(u)) {
    std::string s;
    for (const auto &[name, node] : m) s += (s.empty() ? "" : " ") + name + "=" + std::to_string(node->id());
    out.push_back(s);
  }
  return out;
}
std::string b(const char *name, const UOp *u) { return std::string(name) + "=" + std::to_string(u->id()); }
} // namespace

TEST_CASE("upat: op, dtype and arg filters") {
  Fixture f;
  CHECK(matches(UPat(Op::RANGE), f.a).size() == 1);
  CHECK(matches(UPat(Op::CONST), f.a).empty());
  CHECK(matches(UPat(OpSet{Op::CONST, Op::RANGE}), f.a).size() == 1);
  CHECK(matches(var("x", dtypes::WeakInt), f.a).size() == 1);
  CHECK(matches(var("x", dtypes::Int32), f.a).empty());
  CHECK(matches(var("x", {dtypes::Int32, dtypes::WeakInt}), f.a).size() == 1);
  // args compare like Python numbers: 0 == 0.0 == False, but not 1
  CHECK(matches(cnst(0), f.zero).size() == 1);
  CHECK(matches(cnst(0), f.c.constFloat(0.0)).size() == 1);
  CHECK(matches(cnst(0), f.c.constFloat(-0.0)).size() == 1);
  CHECK(matches(cnst(0), f.c.constBool(false)).size() == 1);
  CHECK(matches(cnst(0), f.c.constInt(1)).empty());
  CHECK(matches(cnst(NAN), f.c.constFloat(NAN)).size() == 1);
  CHECK(matches(UPat(Op::RANGE).arg(Value::tuple({Value::integer(1)})), f.b).size() == 1);
  CHECK(matches(UPat(Op::RANGE).arg(Value::tuple({Value::integer(1)})), f.a).empty());
}

TEST_CASE("upat: tag filter") {
  Fixture f;
  const UOp *tagged = f.a->withTag(Value::string("mergeable"));
  UPat p = UPat(Op::RANGE).tag({Value::string("mergeable")});
  CHECK(matches(p, tagged).size() == 1);
  CHECK(matches(p, f.a).empty());
}

TEST_CASE("upat: positional srcs need the exact count unless allowAnyLen") {
  Fixture f;
  const UOp *s = f.add(f.a, f.b);
  UPat two = UPat(Op::ADD).src({var("x"), var("y")});
  CHECK(matches(two, s) == std::vector<std::string>{b("x", f.a) + " " + b("y", f.b)});
  CHECK(matches(UPat(Op::ADD).src({var("x")}), s).empty());
  CHECK(matches(UPat(Op::ADD).src({var("x")}).allowAnyLen(), s) == std::vector<std::string>{b("x", f.a)});
  CHECK(matches(UPat(Op::ADD).src({var("x"), var("y"), var("z")}).allowAnyLen(), s).empty());
}

TEST_CASE("upat: commutative srcs match in every order, in tinygrad's order") {
  Fixture f;
  const UOp *s = f.add(f.a, f.b);
  CHECK(matches(UPat(Op::ADD).srcAnyOrder({var("x"), var("y")}), s) ==
        std::vector<std::string>{b("x", f.a) + " " + b("y", f.b), b("y", f.a) + " " + b("x", f.b)});
  // operator+ builds the commutative form: x+0 matches 0+x too
  UPat p = var("x") + 0;
  CHECK(matches(p, f.add(f.a, f.zero)) == std::vector<std::string>{b("x", f.a)});
  CHECK(matches(p, f.add(f.zero, f.a)) == std::vector<std::string>{b("x", f.a)});
  // a list of identical patterns is tried once, not once per permutation
  CHECK(matches(var("x") + var("x"), f.add(f.a, f.a)).size() == 1);
  // FLOORDIV is not commutative
  CHECK(matches(var("x") / 1, f.c.get(Op::FLOORDIV, dtypes::WeakInt, {f.c.constInt(1), f.a})).empty());
}

TEST_CASE("upat: a name used twice must bind the same node") {
  Fixture f;
  UPat p = var("x") + var("x");
  CHECK(matches(p, f.add(f.a, f.a)) == std::vector<std::string>{b("x", f.a)});
  CHECK(matches(p, f.add(f.a, f.b)).empty());
  // across nesting levels: (x*c) + x
  UPat q = var("x") * cvar("c") + var("x");
  const UOp *three = f.c.constInt(3);
  CHECK(matches(q, f.add(f.mul(f.a, three), f.a)) == std::vector<std::string>{b("x", f.a) + " " + b("c", three)});
  CHECK(matches(q, f.add(f.mul(f.a, three), f.b)).empty());
  // x*c on 3*3: both orders match (with equal bindings), as in tinygrad
  CHECK(matches(var("x") * cvar("c"), f.mul(three, three)).size() == 2);
}

TEST_CASE("upat: srcAll matches every src, any count") {
  Fixture f;
  const UOp *inv = f.c.get(Op::CONST, dtypes::Bool, {}, Value::invalid());
  UPat p = UPat(Op::CONST).arg(Value::invalid()).named("i").broadcast();
  CHECK(matches(p, f.c.get(Op::STACK, dtypes::Bool, {inv, inv, inv})).size() == 1);
  CHECK(matches(p, f.c.get(Op::STACK, dtypes::Bool, {inv, f.c.constBool(true)})).empty());
  CHECK(matches(p, f.c.get(Op::STACK, dtypes::Void, {})).size() == 1);
}

TEST_CASE("upat: alternatives and orCasted") {
  Fixture f;
  UPat p = var("x", dtypes::WeakInt).orCasted("c");
  const UOp *cast = f.c.get(Op::CAST, dtypes::Int32, {f.a}, Value::dtype(dtypes::Int32));
  // like tinygrad's, the name replaces the inner pattern's name in the uncast alternative
  CHECK(matches(p, f.a) == std::vector<std::string>{b("c", f.a)});
  CHECK(matches(p, cast) == std::vector<std::string>{b("c", cast) + " " + b("x", f.a)});
  UPat any = UPat::any({var("x", dtypes::WeakInt), UPat(Op::RANGE).named("r")});
  CHECK(matches(any, f.a) == std::vector<std::string>{b("x", f.a), b("r", f.a)});
}

TEST_CASE("upat: early reject needs the single-op src patterns among the srcs") {
  CHECK((var("x") + cvar("c")).earlyRejectSet() == OpSet{Op::CONST});
  CHECK((var("x") + var("y")).earlyRejectSet() == OpSet{});
  CHECK((var("x") + UPat(OpSet{Op::CONST, Op::RANGE})).earlyRejectSet() == OpSet{});
  CHECK(UPat(Op::STACK).srcAll(UPat(Op::CONST)).earlyRejectSet() == OpSet{Op::CONST});
  CHECK(UPat(Op::ADD).src({UPat(Op::RANGE)}).earlyReject(OpSet{}).earlyRejectSet() == OpSet{});
}

TEST_CASE("pattern matcher: dispatches on op, first result wins, declines fall through") {
  Fixture f;
  int calls[4] = {0, 0, 0, 0};
  PatternMatcher pm({
      rule(UPat(Op::MUL).named("m"), [&](Match &) -> const UOp * { return ++calls[0], nullptr; }),
      rule(var("x") + cvar("c"), [&](Match &m) -> const UOp * { return ++calls[1], m.root(); }), // itself: declines
      rule(var("x") + 0, [&](Match &m) -> const UOp * { return ++calls[2], m["x"]; }),
      rule(var("x") + var("y"), [&](Match &m) -> const UOp * { return ++calls[3], m["y"]; }),
  });
  CHECK(pm.size() == 4);
  CHECK(pm.rewrite(f.add(f.a, f.zero)) == f.a);
  CHECK(calls[0] == 0); // MUL rule never looked at an ADD
  CHECK(calls[1] == 1); // returned the node itself: counts as no rewrite, and ends that rule
  CHECK(calls[2] == 1);
  CHECK(calls[3] == 0); // not reached: the earlier rule won
  // early reject: without a CONST src, the cvar rules are not even tried
  CHECK(pm.rewrite(f.add(f.a, f.b)) == f.b);
  CHECK(calls[1] == 1);
  CHECK(calls[3] == 1);
  CHECK(pm.rewrite(f.a) == nullptr);
  // what graphRewrite asks before calling rewrite() at all
  CHECK(pm.hasRulesFor(Op::ADD));
  CHECK(pm.hasRulesFor(Op::MUL));
  CHECK_FALSE(pm.hasRulesFor(Op::RANGE));
  CHECK(PatternMatcher({rule(var("x"), [](Match &) { return nullptr; })}).hasRulesFor(Op::RANGE)); // any op
  // pm1 + pm2 keeps pm1's rules first
  PatternMatcher other({rule(var("x") + var("y"), [](Match &m) { return m["x"]; })});
  CHECK((other + pm).rewrite(f.add(f.a, f.b)) == f.a);
  CHECK((pm + other).rewrite(f.add(f.a, f.b)) == f.b);
}

TEST_CASE("pattern matcher: a rule sees the context object") {
  Fixture f;
  struct Seen {
    std::vector<const UOp *> nodes;
  } seen;
  PatternMatcher pm({rule(UPat(Op::RANGE).named("r"), [](Match &m) -> const UOp * {
    m.ctx<Seen>().nodes.push_back(m["r"]);
    return nullptr;
  })});
  CHECK(pm.rewrite(f.a, seen) == nullptr);
  CHECK(seen.nodes == std::vector<const UOp *>{f.a});
}

TEST_CASE("pattern matcher: hundreds of rules, only the matching op's are tried") {
  Fixture f;
  int tried = 0;
  std::vector<Rule> rules;
  for (int i = 0; i < 300; ++i)
    rules.push_back(rule(UPat(Op::MUL).src({var("x"), cnst(i)}), [&tried](Match &) -> const UOp * { return ++tried, nullptr; }));
  rules.push_back(rule(var("x") + 0, [](Match &m) { return m["x"]; }));
  PatternMatcher pm(std::move(rules));
  CHECK(pm.rewrite(f.add(f.a, f.zero)) == f.a);
  CHECK(tried == 0);
  CHECK(pm.rewrite(f.mul(f.a, f.c.constInt(7))) == nullptr);
  CHECK(tried == 1); // the arg filter lets only the rule for 7 through
}

TEST_CASE("pattern matcher: spec-style matchers return other values") {
  Fixture f;
  BasicPatternMatcher<std::optional<bool>> spec({
      BasicRule<std::optional<bool>>{UPat(Op::RANGE), [](Match &) { return std::optional<bool>(true); }, {}},
      BasicRule<std::optional<bool>>{UPat(Op::ADD), [](Match &) { return std::optional<bool>(false); }, {}},
  });
  CHECK(spec.rewrite(f.a) == std::optional<bool>(true));
  CHECK(spec.rewrite(f.add(f.a, f.b)) == std::optional<bool>(false));
  CHECK(spec.rewrite(f.zero) == std::nullopt);
}

TEST_CASE("upat: leaf srcs filter on op, dtype, arg and tag, and bind in order") {
  Fixture f;
  const UOp *tagged = f.a->withTag(Value::string("t"));
  const UOp *sum = f.add(tagged, f.zero);
  UPat leafTag = UPat(Op::RANGE).tag({Value::string("t")}).named("r");
  CHECK(matches(UPat(Op::ADD).src({leafTag, cnst(0).named("z")}), sum) ==
        std::vector<std::string>{b("r", tagged) + " " + b("z", f.zero)});
  CHECK(matches(UPat(Op::ADD).src({leafTag, cnst(1)}), sum).empty());
  CHECK(matches(UPat(Op::ADD).src({leafTag, var("z", dtypes::Int32)}), sum).empty());
  CHECK(matches(UPat(Op::ADD).src({UPat(Op::RANGE).tag({Value::string("u")}), var()}), sum).empty());
  // a leaf after a nested pattern sees the nested pattern's bindings
  const UOp *nested = f.add(f.mul(f.a, f.b), f.a);
  UPat inner = UPat(Op::MUL).src({var("x"), var("y")});
  CHECK(matches(UPat(Op::ADD).src({inner, var("x")}), nested) ==
        std::vector<std::string>{b("x", f.a) + " " + b("y", f.b)});
  CHECK(matches(UPat(Op::ADD).src({inner, var("y")}), nested).empty());
}

TEST_CASE("opset: forEach visits members in enum order across both words; size counts them") {
  std::vector<Op> all;
  for (unsigned i = 0; i < kNumOps; ++i) all.push_back(Op(i));
  OpSet s;
  std::vector<Op> want;
  for (size_t i = all.size(); i-- > 0;)
    if (i % 3 == 0 || i + 1 == all.size()) s.insert(all[i]);
  for (Op o : all)
    if (s.contains(o)) want.push_back(o);
  std::vector<Op> seen;
  s.forEach([&](Op o) { seen.push_back(o); });
  CHECK(seen == want);
  CHECK(s.size() == want.size());
  CHECK(OpSet{}.size() == 0);
  CHECK(kNumOps > 64); // the set spans both words, so the test covers the second
}
