//===- TextFormatTest.cpp - the text form: values, names, errors, splitting ===//
#include "IR/TextFormat.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>

using namespace tgc;

namespace {

/// The diagnostic of a parse that must fail, as "line:col: message".
std::string parseError(std::string_view text) {
  Context ctx;
  Result<Graph> g = parseText(ctx, text, "t.tgc");
  if (g.ok()) return "<parsed>";
  const Diagnostic &d = g.error();
  return std::to_string(d.loc.line) + ":" + std::to_string(d.loc.col) + ": " + d.message;
}

Value paramArg(int64_t slot, DType dt, Value device) {
  return Value::object("ParamArg",
                       {"slot", "dtype", "vmin_vmax", "multiple_of", "name", "addrspace", "axis", "device", "volatile"},
                       {Value::integer(slot), Value::dtype(dt), Value(), Value(), Value(),
                        Value::enumMember("AddrSpace", "GLOBAL"), Value(), std::move(device), Value::boolean(false)});
}

} // namespace

TEST_CASE("text values: every form reads back equal, with the spelling of the docs") {
  Context ctx;
  const UOp *n = ctx.constInt(7);
  std::unordered_map<std::string, const UOp *> names{{"n", n}};
  std::function<std::string(const UOp *)> nameOf = [&](const UOp *) { return std::string("%n"); };
  struct Case {
    Value v;
    const char *text;
  };
  const double inf = std::numeric_limits<double>::infinity();
  const Case cases[] = {
      {Value(), "None"},
      {Value::boolean(true), "True"},
      {Value::boolean(false), "False"},
      {Value::integer(0), "0"},
      {Value::integer(-42), "-42"},
      {Value::integer(std::numeric_limits<int64_t>::min()), "-9223372036854775808"},
      {Value::integer(std::numeric_limits<int64_t>::max()), "9223372036854775807"},
      {Value::uinteger(std::numeric_limits<uint64_t>::max()), "18446744073709551615"},
      {Value::bigInteger("123456789012345678901234"), "123456789012345678901234"},
      {Value::bigInteger("-9223372036854775809"), "-9223372036854775809"},
      {Value::floating(0.0), "0.0"},
      {Value::floating(-0.0), "-0.0"},
      {Value::floating(1.4426950408889634), "1.4426950408889634"},
      {Value::floating(1e16), "1e+16"},
      {Value::floating(-2.5e-10), "-2.5e-10"},
      {Value::floating(5e-324), "5e-324"},
      {Value::floating(std::numeric_limits<double>::max()), "1.7976931348623157e+308"},
      {Value::floating(inf), "inf"},
      {Value::floating(-inf), "-inf"},
      {Value::floating(std::nan("")), "nan"},
      {Value::string(""), "\"\""},
      {Value::string("a\"b\\c\n\t\r\x01\x7f"), "\"a\\\"b\\\\c\\n\\t\\r\\x01\\x7f\""},
      {Value::string("CPU // not a comment"), "\"CPU // not a comment\""},
      {Value::string("\xc3\xa9"), "\"\xc3\xa9\""},
      {Value::tuple({}), "()"},
      {Value::tuple({Value::integer(1)}), "(1,)"},
      {Value::tuple({Value::enumMember("Ops", "ADD"), Value::integer(1)}), "(Ops.ADD, 1)"},
      {Value::tuple({Value::tuple({}), Value::tuple({Value::floating(1.0)})}), "((), (1.0,))"},
      {Value::list({}), "[]"},
      {Value::list({Value::boolean(true), Value::list({Value::integer(2)})}), "[True, [2]]"},
      {Value::set({}), "set{}"},
      {Value::set({Value::integer(3), Value::string("x")}), "set{3, \"x\"}"},
      {Value::dict({}), "{}"},
      {Value::dict({{Value::string("k"), Value::integer(1)}, {Value::integer(2), Value::tuple({})}}),
       "{\"k\": 1, 2: ()}"},
      {Value::enumMember("AxisType", "REDUCE"), "AxisType.REDUCE"},
      {Value::enumMember("AddrSpace", "GLOBAL"), "AddrSpace.GLOBAL"},
      {Value::enumMember("tinygrad.Cls", "M"), "tinygrad.Cls.M"},
      {Value::dtype(dtypes::Float32), "dtypes.float32"},
      {Value::dtype(dtypes::WeakInt), "dtypes.weakint"},
      {Value::uop(n), "%n"},
      {Value::tuple({Value::uop(n), Value::integer(1)}), "(%n, 1)"},
      {paramArg(5, dtypes::Float32, Value::string("CPU")),
       "ParamArg(slot=5, dtype=dtypes.float32, vmin_vmax=None, multiple_of=None, name=None, "
       "addrspace=AddrSpace.GLOBAL, axis=None, device=\"CPU\", volatile=False)"},
      {Value::object("Empty", {}, {}), "Empty()"},
      {Value::object("KernelInfo", {"name", "axis_types", "opts_to_apply"},
                     {Value::string("r_8"), Value::tuple({}), Value()}),
       "KernelInfo(name=\"r_8\", axis_types=(), opts_to_apply=None)"},
      {Value::bytes(std::string("\x00\xff\x10", 3)), "bytes(\"00ff10\")"},
      {Value::bytes(""), "bytes(\"\")"},
      {Value::invalid(), "Invalid"},
      {Value::callable("Tensor.relu.<locals>.f"), "callable(\"Tensor.relu.<locals>.f\")"},
      {Value::repr("ndarray", "array([1, 2])"), "repr(ndarray, \"array([1, 2])\")"},
      {Value::repr("f.<locals>.C", ""), "repr(\"f.<locals>.C\", \"\")"},
  };
  for (const Case &c : cases) {
    CAPTURE(c.text);
    CHECK(c.v.toString(&nameOf) == c.text);
    Result<Value> back = parseValue(c.text, &names);
    REQUIRE_MESSAGE(back.ok(), back.error().str());
    CHECK(*back == c.v);
    CHECK(back->kind() == c.v.kind());
  }
  // -0.0 and 0.0 differ; so do 1 and 1.0 and True.
  CHECK(*parseValue("-0.0") != *parseValue("0.0"));
  CHECK(parseValue("1")->kind() == Value::Kind::Int);
  CHECK(parseValue("1.0")->kind() == Value::Kind::Float);
  CHECK(parseValue("1e3")->kind() == Value::Kind::Float);
  CHECK(parseValue("1e3")->getFloat() == 1000.0);
  // Spacing is free inside a value.
  CHECK(*parseValue("( 1 ,2 )") == Value::tuple({Value::integer(1), Value::integer(2)}));
}

TEST_CASE("text values: malformed values are diagnosed at their column") {
  auto err = [](std::string_view text) {
    Result<Value> v = parseValue(text);
    if (v.ok()) return std::string("<parsed>");
    return std::to_string(v.error().loc.col) + ": " + v.error().message;
  };
  CHECK(err("(1)") == "1: malformed value: a one-element tuple is written (x,)");
  CHECK(err("(1, 2,)") == "1: malformed value: a trailing ',' is only written in one-element tuples");
  CHECK(err("[1, 2") == "6: malformed value: expected ',' or ']' in list, found end of input");
  CHECK(err("\"abc") == "1: unterminated string");
  CHECK(err("\"a\\qb\"") == "3: malformed value: unknown escape '\\q'");
  CHECK(err("\"\\x4\"") == "2: malformed value: \\x needs two hex digits");
  CHECK(err("Nope") == "1: malformed value: unknown identifier 'Nope'");
  CHECK(err("dtypes.float31") == "1: unknown dtype 'float31'");
  CHECK(err("1.5x") == "4: malformed value: unexpected 'x' in a number");
  CHECK(err("1e") == "3: malformed value: expected exponent digits, found end of input");
  CHECK(err("1e999") == "1: malformed value: float out of range: 1e999");
  CHECK(err("bytes(\"abc\")") == "7: malformed value: bytes(...) needs an even number of hex digits");
  CHECK(err("bytes(\"zz\")") == "7: malformed value: bytes(...) holds hex digits only");
  CHECK(err("P(slot 1)") == "8: malformed value: expected '=' after field 'slot', found '1'");
  CHECK(err("{1 2}") == "4: malformed value: expected ':' after a dict key, found '2'");
  CHECK(err("%x") == "1: use of undefined name %x");
  CHECK(err("1 2") == "3: unexpected '2' after the value");
  CHECK(err("!") == "1: malformed value: expected a value, found '!'");
  // Deep nesting is an error, not a stack overflow.
  CHECK(err(std::string(100000, '[')) == "201: malformed value: nested more than 200 levels deep");
  CHECK(parseValue(std::string(150, '[') + std::string(150, ']')).ok());
}

TEST_CASE("text: a hand-written graph parses into the nodes it spells") {
  const char *text = R"(// a comment line
graph @sink {
  %n = CONST weakint 16    // trailing comment
  %buf = BUFFER float32 (%n) ParamArg(slot=1, dtype=dtypes.float32, vmin_vmax=None, multiple_of=None, name=None, addrspace=AddrSpace.GLOBAL, axis=None, device="CPU", volatile=False)
  %r.1 = REDUCE float32 (%buf) (Ops.ADD, 1)
  %p = PARAM float32 (%n) ParamArg(slot=0, dtype=dtypes.float32, vmin_vmax=None, multiple_of=None, name=None, addrspace=AddrSpace.GLOBAL, axis=None, device=None, volatile=False) tag=()
  %e = STACK weakint ()
  %t = NOOP weakint () (1, 2)
  %out = SINK void (%r.1, %p, %e, %t)
}
)";
  Context ctx;
  Result<Graph> g = parseText(ctx, text, "hand.tgc");
  REQUIRE_MESSAGE(g.ok(), g.error().str());
  REQUIRE(g->roots.size() == 1);
  CHECK(g->rootNames[0] == "sink");
  CHECK(g->path == "hand.tgc");
  const UOp *sink = g->roots[0];
  CHECK(sink->op() == Op::SINK);
  CHECK(sink->dtype() == dtypes::Void);
  REQUIRE(sink->numSrc() == 4);
  const UOp *n = ctx.constInt(16);
  const UOp *buf = ctx.get(Op::BUFFER, dtypes::Float32, {n}, paramArg(1, dtypes::Float32, Value::string("CPU")));
  CHECK(sink->src(0) == ctx.get(Op::REDUCE, dtypes::Float32, {buf},
                                Value::tuple({Value::enumMember("Ops", "ADD"), Value::integer(1)})));
  CHECK(sink->src(1) == ctx.get(Op::PARAM, dtypes::Float32, {n}, paramArg(0, dtypes::Float32, Value()), Value::tuple({})));
  // `()` right after the dtype is the (empty) source list; a second '(' is the arg.
  CHECK(sink->src(2) == ctx.get(Op::STACK, dtypes::WeakInt, {}));
  CHECK(sink->src(3) == ctx.get(Op::NOOP, dtypes::WeakInt, {}, Value::tuple({Value::integer(1), Value::integer(2)})));
  // Every node knows the line it was defined on.
  const Location *loc = ctx.location(buf);
  REQUIRE(loc);
  CHECK(loc->str() == "hand.tgc:4:3");
  CHECK(ctx.location(sink)->str() == "hand.tgc:9:3");
}

TEST_CASE("text: the printer names nodes in toposort order and writes the documented line form") {
  Context ctx;
  const UOp *n = ctx.constInt(4);
  const UOp *x = ctx.get(Op::BUFFER, dtypes::Float32, {n}, paramArg(2, dtypes::Float32, Value::string("CPU")));
  const UOp *r = ctx.get(Op::REDUCE, dtypes::Float32, {x}, Value::tuple({Value::enumMember("Ops", "MAX"), Value::integer(1)}));
  const UOp *t = ctx.get(Op::CONST, dtypes::WeakInt, {}, Value::tuple({}));
  const UOp *ref = ctx.get(Op::NOOP, dtypes::Void, {}, Value::uop(r), Value::tuple({}));
  Graph g;
  g.roots = {ctx.get(Op::SINK, dtypes::Void, {r, t, ref})};
  g.rootNames = {"sink"};
  std::string expected = "graph @sink {\n"
                         "  %0 = CONST weakint 4\n"
                         "  %1 = BUFFER float32 (%0) ParamArg(slot=2, dtype=dtypes.float32, vmin_vmax=None, "
                         "multiple_of=None, name=None, addrspace=AddrSpace.GLOBAL, axis=None, device=\"CPU\", "
                         "volatile=False)\n"
                         "  %2 = REDUCE float32 (%1) (Ops.MAX, 1)\n"
                         "  %3 = CONST weakint () ()\n"
                         "  %4 = NOOP void %2 tag=()\n"
                         "  %5 = SINK void (%2, %3, %4)\n"
                         "}\n";
  PrintOptions noShapes;
  noShapes.shapes = false;
  CHECK(printText(g, noShapes) == expected);
}

TEST_CASE("text: shapes are printed after ':' and checked when parsed") {
  Context ctx;
  const UOp *n = ctx.constInt(8);
  const UOp *x = ctx.get(Op::BUFFER, dtypes::Float32, {n}, paramArg(0, dtypes::Float32, Value::string("CPU")));
  const UOp *shape = ctx.get(Op::STACK, dtypes::WeakInt, {ctx.constInt(2), ctx.constInt(4)});
  const UOp *r = ctx.get(Op::RESHAPE, dtypes::Float32, {x, shape});
  const UOp *red = ctx.get(Op::REDUCE, dtypes::Float32, {r}, Value::tuple({Value::enumMember("Ops", "ADD"), Value::integer(1)}));
  Graph g;
  g.roots = {ctx.get(Op::SINK, dtypes::Void, {red})};
  g.rootNames = {"sink"};
  std::string text = printText(g);
  // Shapes as format §6 defines them: CONST (), BUFFER (numel,), STACK (count,), RESHAPE its operand,
  // REDUCE drops the first n axes; SINK has none.
  CHECK(text.find("%0 = CONST weakint 8 : []\n") != std::string::npos);
  CHECK(text.find("%1 = BUFFER float32 (%0) ParamArg(") != std::string::npos);
  CHECK(text.find("volatile=False) : [8]\n") != std::string::npos);
  CHECK(text.find("%4 = STACK weakint (%2, %3) : [2]\n") != std::string::npos);
  CHECK(text.find("%5 = RESHAPE float32 (%1, %4) : [2, 4]\n") != std::string::npos);
  CHECK(text.find("%6 = REDUCE float32 (%5) (Ops.ADD, 1) : [4]\n") != std::string::npos);
  CHECK(text.find("%7 = SINK void (%6)\n") != std::string::npos);
  Result<Graph> back = parseText(ctx, text, "s.tgc");
  REQUIRE_MESSAGE(back.ok(), (back.ok() ? "" : back.error().str()));
  CHECK(back->roots == g.roots);

  CHECK(parseError("graph @g {\n  %0 = CONST weakint 16 : [4]\n}\n") ==
        "2:27: shape annotation [4] of %0 does not match its derived shape []");
  CHECK(parseError("graph @g {\n  %0 = CONST weakint 2\n  %1 = STACK weakint (%0, %0) : [?]\n}\n") ==
        "3:33: shape annotation [?] of %1 does not match its derived shape [2]");
  CHECK(parseError("graph @g {\n  %0 = CONST weakint 2\n  %1 = STACK weakint (%0, %0) : [2]\n}\n") == "<parsed>");
  // Nodes without a shape take any annotation unchecked.
  CHECK(parseError("graph @g {\n  %0 = CONST weakint 2\n  %1 = SINK void (%0) : [3]\n}\n") == "<parsed>");
}

TEST_CASE("text: print then parse gives the same interned graph, names, buffers and attributes") {
  Context ctx;
  const UOp *n = ctx.constInt(8);
  const UOp *b = ctx.get(Op::BUFFER, dtypes::Float32, {n}, paramArg(1, dtypes::Float32, Value::string("CPU")));
  const UOp *c = ctx.get(Op::BUFFER, dtypes::Int32, {n}, paramArg(2, dtypes::Int32, Value::string("CPU")));
  const UOp *f = ctx.constFloat(-0.0, dtypes::Float32);
  const UOp *add = ctx.get(Op::ADD, dtypes::Float32, {b, f});
  const UOp *inv = ctx.get(Op::CONST, dtypes::Int32, {}, Value::invalid());
  const UOp *s1 = ctx.get(Op::SINK, dtypes::Void, {add, inv}, Value::object("KernelInfo", {"name"}, {Value::string("k\n")}));
  const UOp *s2 = ctx.get(Op::LINEAR, dtypes::Void, {c}, Value(), Value::tuple({Value::uop(s1)}));
  Graph g;
  g.roots = {s1, s2, add};
  g.rootNames = {"kernel_graph[0]", "schedule[0]", "a value"};
  g.buffers.push_back({b, dtypes::Float32, 8, "CPU", true, "inputs/n1.npy"});
  g.buffers.push_back({c, dtypes::Int32, 8, "", false, ""});
  g.extra["tinygrad"] = "35456af6";
  g.extra["buffer_map"] = nlohmann::ordered_json::array({nlohmann::ordered_json::array({1, 2})});
  g.extra["what"] = "a \"quoted\" // thing";
  g.bufferMap = {{add, b}, {inv, c}};
  g.nodeExtra[add] = {{"shape", {8}}, {"note", "x"}};
  g.nodeExtra[n] = {{"shape", nlohmann::ordered_json::array()}};

  std::string text = printText(g);
  Result<Graph> back = parseText(ctx, text, "rt.tgc");
  REQUIRE_MESSAGE(back.ok(), (back.error().str() + "\n" + text));
  CHECK(back->roots == g.roots);
  CHECK(back->rootNames == g.rootNames);
  REQUIRE(back->buffers.size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    CHECK(back->buffers[i].node == g.buffers[i].node);
    CHECK(back->buffers[i].dtype == g.buffers[i].dtype);
    CHECK(back->buffers[i].numel == g.buffers[i].numel);
    CHECK(back->buffers[i].device == g.buffers[i].device);
    CHECK(back->buffers[i].allocated == g.buffers[i].allocated);
    CHECK(back->buffers[i].file == g.buffers[i].file);
  }
  CHECK(back->extra == g.extra);
  CHECK(back->extra.begin().key() == "tinygrad"); // key order is kept
  CHECK(back->bufferMap == g.bufferMap);
  CHECK(back->nodeExtra == g.nodeExtra);
  CHECK(back->nodeExtra.at(add).begin().key() == "shape");
  CHECK(printText(*back) == text);

  // In a fresh context the graph is rebuilt node for node.
  Context other;
  Result<Graph> fresh = parseText(other, text, "rt.tgc");
  REQUIRE(fresh.ok());
  CHECK(printText(*fresh) == text);
  CHECK(other.size() == ctx.size());
}

TEST_CASE("text: roots lines, several blocks, and block-local names") {
  const char *text = R"(graph @first {
  %0 = CONST weakint 1
}
graph @ignored {
  %0 = CONST weakint 2
  %1 = CONST weakint 3
  roots %1 as "three", %0 as "two"
}
graph @last {
  %a = CONST weakint 1
  %b = CONST weakint 5
  %c = ADD weakint (%a, %b)
}
)";
  Context ctx;
  Result<Graph> g = parseText(ctx, text, "m.tgc");
  REQUIRE_MESSAGE(g.ok(), g.error().str());
  CHECK(g->rootNames == std::vector<std::string>{"first", "three", "two", "last"});
  REQUIRE(g->roots.size() == 4);
  CHECK(g->roots[0] == ctx.constInt(1));
  CHECK(g->roots[1] == ctx.constInt(3));
  CHECK(g->roots[2] == ctx.constInt(2));
  CHECK(g->roots[3] == ctx.get(Op::ADD, dtypes::WeakInt, {ctx.constInt(1), ctx.constInt(5)}));
  CHECK(g->root("three") == ctx.constInt(3));
  // Printed back, the four roots share one block (and node %0 = CONST 1 is printed once).
  std::string out = printText(*g);
  CHECK(out.find("roots %0 as \"first\", %1 as \"three\", %2 as \"two\", %4 as \"last\"") != std::string::npos);
}

TEST_CASE("text errors: each is reported at its exact line and column") {
  CHECK(parseError("graph @g {\n  %0 = FOO weakint 1\n}\n") == "2:8: unknown op 'FOO'");
  CHECK(parseError("graph @g {\n  %0 = CONST weakint8 1\n}\n") == "2:14: unknown dtype 'weakint8'");
  CHECK(parseError("graph @g {\n  %0 = CONST weakint (1, 2\n}\n") ==
        "2:27: malformed value: expected ',' or ')' in tuple, found end of line");
  CHECK(parseError("graph @g {\n  %0 = COPY void (%x) \"CPU\n}\n") == "2:19: use of undefined name %x");
  CHECK(parseError("graph @g {\n  %0 = CONST weakint 1\n  %1 = COPY void (%0) \"CPU\n}\n") == "3:23: unterminated string");
  CHECK(parseError("graph @g {\n  %0 = CONST weakint 1\n") == "1:10: unterminated graph block @g: expected '}'");
  CHECK(parseError("graph @g {\n  %0 = CONST weakint 1\n  %0 = CONST weakint 2\n}\n") == "3:3: redefinition of %0");
  CHECK(parseError("graph @g {\n  %0 = CONST weakint 1\n  %1 = ADD weakint (%0, 3)\n}\n") ==
        "3:25: a source must be a node reference (%name), found '3'");
  CHECK(parseError("graph @g {\n  %1 = ADD weakint (%1, %1)\n}\n") == "2:21: use of undefined name %1");
  CHECK(parseError("graph @g {\n  %0 = CONST weakint 1 : [4, x]\n}\n") ==
        "2:30: bad shape annotation: expected a size or '?', found 'x'");
  CHECK(parseError("graph @g {\n  %0 = CONST weakint 1 : 4\n}\n") ==
        "2:26: bad shape annotation: expected '[', found '4'");
  CHECK(parseError("graph @g {\n  %0 = CONST weakint 1 2\n}\n") ==
        "2:24: unexpected '2' after the definition of %0");
  CHECK(parseError("graph @g {\n  %0 = CONST weakint 1\n} x\n") == "3:3: unexpected 'x' after '}'");
  // An arg its op cannot use, as the JSON reader refuses it.
  CHECK(parseError("graph @g {\n  %0 = CONST float32 1.0\n  %1 = ADD float32 (%0, %0) Weird(x=1)\n}\n") ==
        "3:29: %1 (ADD): arg is an object of class Weird, a record tgc does not know");
  CHECK(parseError("graph @g {\n  %0 = CONST float32 1.0\n  %1 = ADD float32 (%0, %0) repr(Weird, \"x\")\n}\n") ==
        "3:29: %1 (ADD): arg is repr(Weird, ...), the exporter's fallback for a value the graph format cannot encode");
  CHECK(parseError("graph @g {\n  %0 = CONST float32 1.0\n  %1 = CAST float32 (%0) \"x\"\n}\n") ==
        "3:26: %1 (CAST): arg is a string, but CAST takes a dtype");
  CHECK(parseError("graph @g {\n}\n") == "1:10: graph block @g defines no nodes");
  CHECK(parseError("\n\nnode @g {\n") == "3:1: expected 'graph', found 'n'");
  CHECK(parseError("graph @g {\n  %0 = CONST weakint 1\n  roots %0 as \"a\"\n  %1 = CONST weakint 2\n}\n") ==
        "4:3: expected '}' after the 'roots' line, found '%'");
  CHECK(parseError("graph @g {\n  %0 = CONST weakint 1\n  roots %0\n}\n") ==
        "3:11: expected 'as \"name\"' after the root, found end of line");
  CHECK(parseError("graph @g {\n  %n = CONST weakint 1\n  %0 = BUFFER float32 (%n) ParamArg(slot=0)\n  buffer %0 \"f\" numel=1.5\n}\n") ==
        "4:23: buffer attribute 'numel' must be a non-negative int");
  CHECK(parseError("graph @g {\n  %n = CONST weakint 1\n  %0 = BUFFER float32 (%n) ParamArg(slot=0)\n  buffer %0 \"f\" size=1\n}\n") ==
        "4:17: unknown buffer attribute 'size'");
  // The JSON reader's checks of the buffers table hold for buffer lines too.
  CHECK(parseError("graph @g {\n  %0 = CONST weakint 1\n  buffer %0 \"f\" numel=1\n}\n") ==
        "3:10: buffer line for a CONST node, not a BUFFER");
  CHECK(parseError("graph @g {\n  %n = CONST weakint 2\n  %0 = BUFFER float32 (%n) ParamArg(slot=0)\n  buffer %0 \"f\" numel=3\n}\n") ==
        "4:23: numel 3 differs from its BUFFER node's size 2");
  CHECK(parseError("graph @g {\n  %n = CONST weakint 2\n  %0 = BUFFER float32 (%n) ParamArg(slot=0)\n  buffer %0 \"f\" dtype=dtypes.int32\n}\n") ==
        "4:23: dtype int32 differs from its BUFFER node's float32");
  CHECK(parseError("graph @g {\n  %n = CONST weakint 2\n  %0 = BUFFER float32 (%n) ParamArg(slot=0)\n  buffer %0 \"f\"\n  buffer %0 \"g\"\n}\n") ==
        "5:10: a second buffer line for the same BUFFER node");
  CHECK(parseError("graph @g {\n  attributes {\"a\": }\n  %0 = CONST weakint 1\n}\n") ==
        "2:20: malformed attributes JSON: syntax error while parsing value - unexpected '}'; expected '[', '{', or a literal");
  CHECK(parseError("graph @g {\n  attributes [1]\n  %0 = CONST weakint 1\n}\n") == "2:14: attributes must be a JSON object");
  CHECK(parseError("graph @g {\n  frobnicate\n}\n") ==
        "2:3: expected a node definition (%name = ...), 'attributes', 'buffer', 'buffer_map', 'roots' or '}', "
        "found 'frobnicate'");
  CHECK(parseError("graph @g {\n  %0 = CONST weakint 1\n  buffer_map %0 %0\n}\n") ==
        "3:17: expected '->' in 'buffer_map %tensor -> %buffer', found '%'");
  CHECK(parseError("graph @g {\n  %0 = CONST weakint 1\n  buffer_map %0 -> %1\n}\n") == "3:20: use of undefined name %1");
  CHECK(parseError("graph @g {\n  %0 = CONST weakint 1\n  attributes %0 {}\n  attributes %0 {\"a\": 1}\n}\n") ==
        "4:17: attributes of %0 are given twice");
  CHECK(parseError("graph @g {\n  %0 = CONST weakint 1\n  attributes %0 5\n}\n") ==
        "3:17: attributes must be a JSON object");

  // The redefinition points back at the first definition.
  Context ctx;
  Result<Graph> g = parseText(ctx, "graph @g {\n  %x = CONST weakint 1\n  %x = CONST weakint 1\n}\n", "r.tgc");
  REQUIRE_FALSE(g.ok());
  REQUIRE(g.error().notes.size() == 1);
  CHECK(g.error().notes[0] == "previous definition of %x is at r.tgc:2:3");
  CHECK(g.error().str().rfind("r.tgc:3:3: error: redefinition of %x", 0) == 0);
}

TEST_CASE("text: --split-input-file pieces keep whole-file line numbers") {
  std::string text = "graph @a {\n  %0 = CONST weakint 1\n}\n"
                     "// -----\n"
                     "graph @b {\n  %0 = BOGUS weakint 1\n}\n"
                     "  // -----   \n"
                     "// ----- (not a separator: text follows)\n";
  std::vector<std::string_view> pieces = splitInputFile(text);
  REQUIRE(pieces.size() == 3);
  CHECK(pieces[0] == "graph @a {\n  %0 = CONST weakint 1\n}\n");
  CHECK(pieces[1] == "graph @b {\n  %0 = BOGUS weakint 1\n}\n");
  CHECK(pieces[2] == "// ----- (not a separator: text follows)\n");
  CHECK(lineOffsetOf(text, pieces[0]) == 0);
  CHECK(lineOffsetOf(text, pieces[1]) == 4);
  CHECK(lineOffsetOf(text, pieces[2]) == 8);
  Context ctx;
  Result<Graph> g = parseText(ctx, pieces[1], "s.tgc", lineOffsetOf(text, pieces[1]));
  REQUIRE_FALSE(g.ok());
  CHECK(g.error().str() == "s.tgc:6:8: error: unknown op 'BOGUS'");
  // A piece of only comments is an empty graph, not an error.
  Result<Graph> empty = parseText(ctx, pieces[2], "s.tgc", lineOffsetOf(text, pieces[2]));
  REQUIRE(empty.ok());
  CHECK(empty->roots.empty());
  CHECK(splitInputFile("no marker").size() == 1);
  CHECK(splitInputFile("// -------\nx").size() == 2); // longer dash runs separate too
}
