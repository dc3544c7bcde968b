//===- ValueRangeTest.cpp - vmin/vmax interval arithmetic -----------------===//
#include "SymbolicTestUtil.h"

#include "IR/ExecAlu.h"

#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

using namespace tgc;
using namespace tgc::test;

namespace {
struct E {
  Context c;
  UOpRef k(int64_t v) { return c.constInt(v); }
  UOpRef r(int64_t end, int64_t axis = 0) { return range(c, end, axis); }
  UOpRef v(int64_t lo, int64_t hi, DType dt = dtypes::WeakInt) { return variable(c, "v", lo, hi, dt); }
  UOpRef bin(Op op, UOpRef a, UOpRef b) { return a.alu(op, {b}); }
};
std::pair<int64_t, int64_t> mm(UOpRef u) { return {u.vmin(), u.vmax()}; }
using P = std::pair<int64_t, int64_t>;
constexpr int64_t kMax = std::numeric_limits<int64_t>::max(), kMin = std::numeric_limits<int64_t>::min();
} // namespace

TEST_CASE("vrange: leaves") {
  E e;
  CHECK(mm(e.k(7)) == P{7, 7});
  CHECK(mm(e.c.constBool(true)) == P{1, 1});
  CHECK(mm(e.r(8)) == P{0, 7});
  CHECK(mm(e.v(-3, 12)) == P{-3, 12});
  CHECK(mm(invalidConst(e.c)) == P{0, 1});
  // a node without a rule gets its dtype's full range
  CHECK(mm(e.c.get(Op::LOAD, dtypes::Int8, {e.k(0)})) == P{-128, 127});
  CHECK(mm(e.c.get(Op::LOAD, dtypes::UInt16, {e.k(0)})) == P{0, 65535});
  CHECK(mm(e.c.get(Op::LOAD, dtypes::WeakInt, {e.k(0)})) == P{kMin, kMax});
  CHECK(mm(e.c.get(Op::LOAD, dtypes::UInt64, {e.k(0)})) == P{0, kMax}); // saturates at int64
  const ValueRange &f = e.c.get(Op::LOAD, dtypes::Float32, {e.k(0)})->vrange();
  CHECK(f.isFloat);
  CHECK(f.fmin == -INFINITY);
  CHECK(e.c.constFloat(2.5)->vrange().fmax == 2.5);
}

TEST_CASE("vrange: arithmetic") {
  E e;
  UOpRef a = e.v(-3, 5), b = e.v(2, 4);
  CHECK(mm(a + b) == P{-1, 9});
  CHECK(mm(e.bin(Op::SUB, a, b)) == P{-7, 3});
  CHECK(mm(a * b) == P{-12, 20});
  CHECK(mm(a * -2) == P{-10, 6});
  CHECK(mm(a.maximum(b)) == P{2, 5});
  CHECK(mm(a < b) == P{0, 1});
  CHECK(mm(b < e.k(10)) == P{1, 1});
  CHECK(mm(b.ne(e.k(7))) == P{1, 1});
  CHECK(mm(e.k(3).ne(e.k(3))) == P{0, 0});
  CHECK(mm(e.bin(Op::AND, a, e.k(6))) == P{0, 6});
  CHECK(mm(e.bin(Op::AND, b, e.k(6))) == P{0, 4});
  CHECK(mm(e.bin(Op::XOR, b, e.k(-1))) == P{-5, -3});
  CHECK(mm(e.bin(Op::SHL, b, e.k(3))) == P{16, 32});
  CHECK(mm(e.bin(Op::SHR, a, e.k(1))) == P{-2, 2});
  CHECK(mm(e.bin(Op::SHL, b, e.k(70))) == P{kMax, kMax}); // saturated
  // saturation instead of overflow
  UOpRef big = e.v(0, kMax);
  CHECK(mm(big + big) == P{0, kMax});
  CHECK(mm(big * -1 - big) == P{kMin, 0});
}

TEST_CASE("vrange: division and modulo") {
  E e;
  UOpRef a = e.v(-7, 9);
  CHECK(mm(a / 4) == P{-2, 2});
  CHECK(mm(a % 4) == P{0, 3});
  CHECK(mm(e.v(5, 6) % 4) == P{1, 2});
  CHECK(mm(a / -4) == P{-3, 1});
  CHECK(mm(a % -4) == P{-3, 0});
  CHECK(mm(a % e.v(2, 5)) == P{0, 4});
  CHECK(mm(a % e.v(-5, -2)) == P{-4, 0});
  CHECK(mm(a / e.v(-1, 1)) == P{kMin, kMax}); // the divisor can be 0: no rule
  CHECK(mm(e.bin(Op::CDIV, a, e.k(4))) == P{-1, 2});
  CHECK(mm(e.bin(Op::CMOD, a, e.k(4))) == P{-3, 3});
  CHECK(mm(e.bin(Op::CMOD, e.v(2, 3), e.k(4))) == P{0, 3});
  // a RANGE with no iterations: the numerator is empty
  UOpRef empty = e.r(0);
  CHECK(mm(empty) == P{0, -1});
  CHECK(mm(empty / 3) == P{0, 0});
  CHECK(mm(empty % 3) == P{0, 0});
  CHECK(floorDiv(-7, 2) == -4);
  CHECK(floorMod(-7, 2) == 1);
  CHECK(truncDiv(-7, 2) == -3);
  CHECK(truncMod(-7, 2) == -1);
  CHECK(floorDiv(5, 0) == 0);
}

TEST_CASE("vrange: where, casts and pass-through ops") {
  E e;
  UOpRef a = e.v(-3, 5), b = e.v(10, 20);
  CHECK(mm((a < 0).where(a, b)) == P{-3, 20});
  CHECK(mm(a.cast(dtypes::Int8)) == P{-3, 5});
  CHECK(mm(e.v(-300, 5).cast(dtypes::Int8)) == P{-128, 5});
  CHECK(mm(a.cast(dtypes::UInt8)) == P{0, 255}); // a negative value has no uint8 interval
  CHECK(mm(b.cast(dtypes::UInt8)) == P{10, 20});
  CHECK(mm(a.cast(dtypes::Bool)) == P{0, 1});
  const ValueRange &fr = e.v(1, 16777217).cast(dtypes::Float32)->vrange();
  CHECK(fr.isFloat);
  CHECK(fr.fmax == 16777216.0); // rounded to float32's grid
  UOpRef fl = e.c.get(Op::LOAD, dtypes::Float32, {e.k(0)});
  CHECK(mm(fl.cast(dtypes::Int16)) == P{-32768, 32767});
  CHECK(mm(UOpRef(e.c.constFloat(2.7)).cast(dtypes::Int32)) == P{2, 2});
  CHECK(mm(e.c.get(Op::AFTER, dtypes::WeakInt, {a, e.k(0)})) == P{-3, 5});
  CHECK(mm(e.c.get(Op::STACK, dtypes::WeakInt, {a, b})) == P{-3, 20});
  CHECK(mm(e.c.get(Op::SPECIAL, dtypes::WeakInt, {e.k(32)}, Value::string("gidx0"))) == P{0, 31});
}

TEST_CASE("vrange: deep graphs are computed without recursion") {
  E e;
  UOpRef x = e.r(4);
  for (int i = 0; i < 1000000; ++i) x = e.bin(Op::ADD, x, e.k(1));
  CHECK(mm(x) == P{1000000, 1000003});
}

TEST_CASE("vrange: random expressions match tinygrad's vmin/vmax and contain every value") {
  std::ifstream in(std::filesystem::path(TGC_UNIT_DATA_DIR) / "value-ranges.txt");
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f;
    for (size_t p = 0, q; p != std::string::npos; p = q == std::string::npos ? q : q + 1) {
      q = line.find(';', p);
      std::string s = line.substr(p, q == std::string::npos ? std::string::npos : q - p);
      while (!s.empty() && s.front() == ' ') s.erase(s.begin());
      while (!s.empty() && s.back() == ' ') s.pop_back();
      f.push_back(s);
    }
    REQUIRE(f.size() == 4);
    CAPTURE(line);
    Context c;
    auto vars = makeVars(c, f[0]);
    UOpRef u = parseExpr(c, vars, f[1]);
    CHECK(u.vmin() == std::stoll(f[2]));
    CHECK(u.vmax() == std::stoll(f[3]));
    // soundness: every value the expression takes is inside [vmin, vmax]
    auto ls = leaves({u});
    std::map<const UOp *, int64_t> env;
    for (auto &[v, r] : ls) env[v] = r.first;
    bool inside = true;
    while (true) {
      if (auto x = evaluate(u, env)) inside &= *x >= u.vmin() && *x <= u.vmax();
      size_t i = 0;
      for (; i < ls.size(); ++i) {
        if (env[ls[i].first] < ls[i].second.second) {
          ++env[ls[i].first];
          break;
        }
        env[ls[i].first] = ls[i].second.first;
      }
      if (i == ls.size()) break;
    }
    CHECK(inside);
    ++n;
  }
  CHECK(n == 400);
}
