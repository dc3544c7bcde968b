//===- SymbolicRandomTest.cpp - the simplifier on random index expressions ===//
//
// 1700 random index expressions over ranges and variables (data/
// symbolic-random.txt) and 500 random gated indices (data/symbolic-valids.txt),
// generated with scripts/gen-symbolic-cases.py, with the forms tinygrad gives
// them at the target snapshot (UOp.simplify(), and the matcher rangeify lowers
// movement ops with). Like the hand-written table, every case is checked
// against tinygrad's printed result and by brute force over the variables' ranges.
//
//===----------------------------------------------------------------------===//
#include "SymbolicTestUtil.h"

#include "IR/GraphRewrite.h"
#include "IR/Symbolic.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

using namespace tgc;
using namespace tgc::test;

namespace {
struct Case {
  std::string vars, expr, expected;
};

std::string trim(std::string s) {
  while (!s.empty() && s.front() == ' ') s.erase(s.begin());
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

std::vector<Case> loadCases(const char *file) {
  std::ifstream in(std::filesystem::path(TGC_UNIT_DATA_DIR) / file);
  std::vector<Case> out;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    size_t a = line.find(';'), b = line.find(';', a + 1);
    out.push_back({trim(line.substr(0, a)), trim(line.substr(a + 1, b - a - 1)), trim(line.substr(b + 1))});
  }
  return out;
}

// Runs every case of a data file; "valid: e" cases use the valid-simplifying matcher.
void runCases(const std::vector<Case> &cases) {
  int mismatches = 0;
  for (const Case &k : cases) {
    CAPTURE(k.expr);
    CAPTURE(k.vars);
    Context c;
    auto vars = makeVars(c, k.vars);
    bool valid = k.expr.starts_with("valid:");
    const UOp *in = parseExpr(c, vars, valid ? k.expr.substr(6) : k.expr);
    auto out = valid ? graphRewrite(in, symbolic() + pmSimplifyValid() + pmDropAndClauses()) : simplify(in);
    if (!out.ok()) FAIL(out.error().str());
    std::string got = print(*out);
    CHECK(got == k.expected);
    mismatches += got != k.expected;
    // a dropped gate clause may turn an Invalid into a value, never the reverse
    CHECK(bruteForceDiff(in, *out, /*refines=*/valid) == "");
  }
  CHECK(mismatches == 0);
}
} // namespace

TEST_CASE("symbolic: random expressions match tinygrad and evaluate equal") {
  std::vector<Case> cases = loadCases("symbolic-random.txt");
  REQUIRE(cases.size() == 1700);
  runCases(cases);
}

TEST_CASE("symbolic: random gated indices simplify under their gates as in tinygrad") {
  std::vector<Case> cases = loadCases("symbolic-valids.txt");
  REQUIRE(cases.size() == 500);
  runCases(cases);
}
