//===- JSONTest.cpp - graph-format JSON: values, errors, writing ----------===//
#include "IR/FollowedTinygrad.h"
#include "IR/JSON.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>

using namespace tgc;

namespace {

const std::string kDTypes =
    R"("dtypes":{"void":{"kind":"scalar","cname":"void","bitsize":0,"itemsize":0,"priority":-1,"fmt":null},)"
    R"("weakint":{"kind":"scalar","cname":"weakint","bitsize":800,"itemsize":100,"priority":0,"fmt":null},)"
    R"("float32":{"kind":"scalar","cname":"float","bitsize":32,"itemsize":4,"priority":14,"fmt":"f"}})";

/// A document whose node i is on line i + 2; the last node is the root.
std::string doc(const std::vector<std::string> &nodes, const std::string &header = "",
                const std::string &dtypes = kDTypes) {
  std::string s = R"({"format":"tgc-uop-graph","version":1,)" + header + dtypes + R"(,"roots":[)" +
                  std::to_string(nodes.size() - 1) + R"(],"root_names":["r"],"nodes":[)" + "\n";
  for (size_t i = 0; i < nodes.size(); ++i) s += nodes[i] + (i + 1 < nodes.size() ? ",\n" : "\n");
  return s + "]}\n";
}

std::string noop(const std::string &arg, const std::string &tag = "null") {
  return R"({"op":"NOOP","dtype":"void","src":[],"arg":)" + arg + R"(,"tag":)" + tag + "}";
}

/// The arg of a one-node document.
Value argOf(const std::string &arg) {
  Context ctx;
  Result<Graph> g = readGraphJSON(ctx, doc({noop(arg)}), "t.json");
  REQUIRE_MESSAGE(g.ok(), (g.ok() ? "" : g.error().str()));
  return g->roots[0]->arg();
}

/// The tag of a one-node document (tags take forms no arg may have).
Value tagOf(const std::string &tag) {
  Context ctx;
  Result<Graph> g = readGraphJSON(ctx, doc({noop("null", tag)}), "t.json");
  REQUIRE_MESSAGE(g.ok(), (g.ok() ? "" : g.error().str()));
  return g->roots[0]->tag();
}

std::string errorOf(const std::string &text) {
  Context ctx;
  Result<Graph> g = readGraphJSON(ctx, text, "t.json");
  REQUIRE_FALSE(g.ok());
  return g.error().str();
}

} // namespace

TEST_CASE("json: plain values") {
  CHECK(argOf("null").isNone());
  CHECK(argOf("true") == Value::boolean(true));
  CHECK(argOf("false") == Value::boolean(false));
  CHECK(argOf("512") == Value::integer(512));
  CHECK(argOf("-7") == Value::integer(-7));
  CHECK(argOf("9223372036854775807") == Value::integer(std::numeric_limits<int64_t>::max()));
  CHECK(argOf("-9223372036854775808") == Value::integer(std::numeric_limits<int64_t>::min()));
  Value u = argOf("18446744073709551615");
  CHECK(u.kind() == Value::Kind::UInt);
  CHECK(u.getUInt() == std::numeric_limits<uint64_t>::max());
  CHECK(argOf(R"("CPU")") == Value::string("CPU"));
  CHECK(argOf(R"("a\"b\\c\u00e9")") == Value::string("a\"b\\c\xc3\xa9"));
  CHECK(argOf("[]") == Value::tuple({}));
  CHECK(argOf("[1,[true,\"x\"]]") ==
        Value::tuple({Value::integer(1), Value::tuple({Value::boolean(true), Value::string("x")})}));
}

TEST_CASE("json: tagged values") {
  CHECK(argOf(R"({"t":"float","v":"1.4426950408889634"})") == Value::floating(1.4426950408889634));
  CHECK(argOf(R"({"t":"float","v":"1e-05"})") == Value::floating(1e-05));
  CHECK(argOf(R"({"t":"float","v":"5e-324"})").getFloat() == std::numeric_limits<double>::denorm_min());
  CHECK(argOf(R"({"t":"float","v":"inf"})").getFloat() == std::numeric_limits<double>::infinity());
  CHECK(argOf(R"({"t":"float","v":"-inf"})").getFloat() == -std::numeric_limits<double>::infinity());
  CHECK(std::isnan(argOf(R"({"t":"float","v":"nan"})").getFloat()));
  Value negZero = argOf(R"({"t":"float","v":"-0.0"})");
  CHECK(std::signbit(negZero.getFloat()));
  CHECK(negZero != Value::floating(0.0));
  CHECK(argOf(R"({"t":"float","v":"2.0"})") != Value::integer(2));

  Value big = argOf(R"({"t":"int","v":"-123456789012345678901234"})");
  CHECK(big.kind() == Value::Kind::BigInt);
  CHECK(big.str() == "-123456789012345678901234");
  CHECK(argOf(R"({"t":"int","v":"42"})") == Value::integer(42));

  CHECK(argOf(R"({"t":"enum","cls":"Ops","v":"ADD"})") == Value::enumMember("Ops", "ADD"));
  CHECK(argOf(R"({"t":"enum","cls":"AxisType","v":"REDUCE"})").isEnum("AxisType"));
  CHECK(argOf(R"({"t":"dtype","v":"float32"})") == Value::dtype(dtypes::Float32));

  Value obj = argOf(R"({"t":"obj","cls":"ParamArg","v":{"slot":3,"dtype":{"t":"dtype","v":"float32"},"name":null,)"
                    R"("addrspace":{"t":"enum","cls":"AddrSpace","v":"GLOBAL"},"volatile":false}})");
  REQUIRE(obj.isObj("ParamArg"));
  CHECK(obj.fieldNames() == std::vector<std::string>{"slot", "dtype", "name", "addrspace", "volatile"});
  CHECK(obj.field("slot")->getInt() == 3);
  CHECK(obj.field("dtype")->getDType() == dtypes::Float32);
  CHECK(*obj.field("addrspace") == Value::enumMember("AddrSpace", "GLOBAL"));

  CHECK(argOf(R"({"t":"bytes","v":"aGVsbG8="})") == Value::bytes("hello"));
  CHECK(argOf(R"({"t":"bytes","v":"AAEC/w=="})") == Value::bytes(std::string("\x00\x01\x02\xff", 4)));
  CHECK(argOf(R"({"t":"bytes","v":"YWI="})") == Value::bytes("ab"));
  CHECK(argOf(R"({"t":"bytes","v":""})") == Value::bytes(""));
  CHECK(argOf(R"({"t":"list","v":[1,2]})") == Value::list({Value::integer(1), Value::integer(2)}));
  CHECK(argOf(R"({"t":"list","v":[1,2]})") != Value::tuple({Value::integer(1), Value::integer(2)}));
  CHECK(argOf(R"({"t":"set","v":["a","b"]})") == Value::set({Value::string("a"), Value::string("b")}));
  CHECK(argOf(R"({"t":"dict","v":[["k",1],[2,null]]})") ==
        Value::dict({{Value::string("k"), Value::integer(1)}, {Value::integer(2), Value::none()}}));
  CHECK(argOf(R"({"t":"invalid"})") == Value::invalid());
  CHECK(argOf(R"({"t":"callable","v":"Tensor.relu.<locals>.f"})") == Value::callable("Tensor.relu.<locals>.f"));
  CHECK(tagOf(R"j({"t":"repr","cls":"Foo","v":"Foo(1)"})j") == Value::repr("Foo", "Foo(1)"));
}

TEST_CASE("json: nodes, uop references, locations") {
  Context ctx;
  std::string text = doc({R"({"op":"CONST","dtype":"weakint","src":[],"arg":4,"tag":null})",
                          R"({"op":"CONST","dtype":"weakint","src":[],"arg":4,"tag":null})",
                          R"({"op":"NOOP","dtype":"void","src":[0,1],"arg":{"t":"uop","v":1},"tag":[{"t":"uop","v":0}]})"},
                         R"("what":"test","zzz":[1,{"b":2,"a":1}],)");
  Result<Graph> g = readGraphJSON(ctx, text, "dir/sub/t.json");
  REQUIRE(g.ok());
  const UOp *root = g->roots[0];
  CHECK(root->is(Op::NOOP));
  // The duplicate CONST nodes 0 and 1 intern to one node.
  CHECK(root->src(0) == root->src(1));
  CHECK(ctx.size() == 2);
  CHECK(root->arg().getUOp() == root->src(0));
  CHECK(root->tag()[0].getUOp() == root->src(0));
  CHECK(g->rootNames == std::vector<std::string>{"r"});
  CHECK(g->path == "dir/sub/t.json");
  CHECK(g->baseDir == "dir/sub");
  // Unknown top-level keys, in document order.
  REQUIRE(g->extra.size() == 2);
  CHECK(g->extra.begin().key() == "what");
  CHECK(g->extra["zzz"].dump() == R"([1,{"b":2,"a":1}])");

  const Location *loc = ctx.location(root);
  REQUIRE(loc);
  CHECK(loc->file == "dir/sub/t.json");
  CHECK(loc->line == 4);
  CHECK(loc->col == 1);
  CHECK(loc->nodeId == 2);
  // The duplicate keeps the first definition's location.
  CHECK(ctx.location(root->src(0))->nodeId == 0);
}

TEST_CASE("json: error messages point at line:col") {
  const std::string c4 = R"({"op":"CONST","dtype":"weakint","src":[],"arg":4,"tag":null})";

  // Malformed JSON: the offending '}' is on line 3, column 10.
  CHECK(errorOf("{\"format\":\"tgc-uop-graph\",\n\"version\":1,\n\"nodes\":[}\n").rfind("t.json:3:10: error: malformed JSON: ", 0) == 0);
  CHECK(errorOf("").rfind("t.json:1:1: error: malformed JSON: ", 0) == 0);
  // An unexpected string or number is located at its first character.
  CHECK(errorOf(R"({"format":"tgc-uop-graph" "version":1})").rfind("t.json:1:27: error: malformed JSON: ", 0) == 0);
  CHECK(errorOf(R"({"format":"tgc-uop-graph","version":1 234})").rfind("t.json:1:39: error: malformed JSON: ", 0) == 0);
  CHECK(errorOf(R"({"format":"tgc-uop-graph","version":1,"what":"a\"b" "x"})").rfind("t.json:1:53: error: ", 0) == 0);
  CHECK(errorOf("[1]") == "t.json:1:1: error: a graph document must be a JSON object, not an array");
  CHECK(errorOf(R"({"format":"onnx","version":1})") ==
        R"(t.json:1:11: error: unsupported format "onnx" (expected "tgc-uop-graph"))");
  CHECK(errorOf(R"({"format":"tgc-uop-graph","version":2})") ==
        "t.json:1:37: error: unsupported graph format version 2 (this reader knows 1)");
  CHECK(errorOf(R"({"version":1})") == "t.json:1:1: error: not a tgc graph document: missing key 'format'");

  std::string noRoots = doc({c4});
  noRoots.replace(noRoots.find(R"("roots")"), 7, R"("rootz")");
  CHECK(errorOf(noRoots) == "t.json:1:1: error: missing key 'roots'");

  // Unknown op / dtype: line 2 is node 0; its op value starts at column 7.
  CHECK(errorOf(doc({R"({"op":"FROB","dtype":"void","src":[],"arg":null,"tag":null})"})) ==
        "t.json:2:7: error: node 0: unknown op 'FROB'");
  CHECK(errorOf(doc({c4, R"({"op":"NOOP","dtype":"int16","src":[],"arg":null,"tag":null})"})) ==
        "t.json:3:22: error: node 1: unknown dtype 'int16' (not in the document's dtypes table)");
  CHECK(errorOf(doc({R"({"op":"NOOP","dtype":"void","src":"x","arg":null,"tag":null})"})) ==
        "t.json:2:35: error: node 0: 'src' must be an array of node ids, not a string");
  CHECK(errorOf(doc({R"({"op":"NOOP","dtype":"void","src":[],"arg":null})"})) ==
        "t.json:2:1: error: node 0: missing key 'tag'");
  CHECK(errorOf(doc({c4, "7"})) == "t.json:3:1: error: node 1 must be an object, not an integer");

  // Sources must exist and come first (which also excludes cycles).
  CHECK(errorOf(doc({c4, R"({"op":"NOOP","dtype":"void","src":[0,5],"arg":null,"tag":null})"})) ==
        "t.json:3:35: error: node 1: src[1] refers to node 5, which does not exist (the document has 2 nodes)");
  CHECK(errorOf(doc({R"({"op":"NOOP","dtype":"void","src":[1],"arg":null,"tag":null})", c4})) ==
        "t.json:2:35: error: node 0: src[0] refers to node 1, which does not come before it (sources must have "
        "smaller ids)");
  CHECK(errorOf(doc({c4, R"({"op":"NOOP","dtype":"void","src":[1],"arg":null,"tag":null})"})).find(
            "node 1: src[0] refers to node 1, which does not come before it") != std::string::npos);

  // Bad arg encodings: the arg value of node 0 starts at column 44, the tag at 55.
  CHECK(errorOf(doc({noop(R"({"t":"float","v":"abc"})")})) ==
        R"(t.json:2:44: error: node 0: arg: bad float "abc" (expected a decimal, "inf", "-inf" or "nan"))");
  CHECK(errorOf(doc({noop("1.5")})).rfind("t.json:2:44: error: node 0: arg: plain JSON number 1.5 is not a value", 0) == 0);
  CHECK(errorOf(doc({noop("123456789012345678901234567")})).find("arg: plain JSON number") != std::string::npos);
  CHECK(errorOf(doc({noop(R"({"t":"frob","v":1})")})) == R"(t.json:2:44: error: node 0: arg: unknown value form {"t":"frob"})");
  CHECK(errorOf(doc({noop(R"({"v":1})")})) ==
        R"(t.json:2:44: error: node 0: arg: an object value needs a string "t" saying its form)");
  CHECK(errorOf(doc({noop(R"([1,{"t":"obj","cls":"P","v":{"a":{"t":"dtype","v":"int16"}}}])")})) ==
        "t.json:2:44: error: node 0: arg[1].v.a: unknown dtype 'int16' (not in the document's dtypes table)");
  CHECK(errorOf(doc({noop(R"({"t":"obj","v":{}})")})) ==
        R"(t.json:2:44: error: node 0: arg: {"t":"obj"} needs a string 'cls' and an object 'v')");
  CHECK(errorOf(doc({noop(R"({"t":"bytes","v":"abc"})")})) ==
        R"(t.json:2:44: error: node 0: arg: bad base64 in {"t":"bytes"})");
  CHECK(errorOf(doc({noop(R"({"t":"enum","cls":"Ops","v":"FROB"})")})) ==
        "t.json:2:44: error: node 0: arg: unknown op Ops.FROB");
  CHECK(errorOf(doc({noop(R"({"t":"dict","v":[[1,2],[3]]})")})) ==
        "t.json:2:44: error: node 0: arg.v[1]: a dict item must be a [key, value] pair");
  CHECK(errorOf(doc({noop(R"({"t":"int","v":"12a"})")})) ==
        R"(t.json:2:44: error: node 0: arg: {"t":"int"} needs a decimal string 'v')");
  CHECK(errorOf(doc({noop("null", R"({"t":"uop","v":0})")})) ==
        "t.json:2:55: error: node 0: tag: refers to node 0, which does not come before it (referenced nodes must "
        "have smaller ids)");
  // Depth 1025 is reached at the arg's 1022nd '[' (the top object, nodes and node hold 3).
  CHECK(errorOf(doc({noop(std::string(100000, '[') + std::string(100000, ']'))})) ==
        "t.json:2:1065: error: JSON nested deeper than 1024 levels");
  CHECK(errorOf(doc({noop(std::string(220, '[') + std::string(220, ']'))})).rfind(
            "t.json:2:44: error: node 0: arg[0][0][0]", 0) == 0);
  CHECK(errorOf(doc({noop(std::string(220, '[') + std::string(220, ']'))})).find(
            ": value nested deeper than 200 levels") != std::string::npos);
  CHECK(errorOf(doc({c4, noop(R"({"t":"list","v":[{"t":"uop","v":9}]})")})) ==
        "t.json:3:44: error: node 1: arg.v[0]: refers to node 9, which does not exist (the document has 2 nodes)");

  // The dtype table.
  std::string ptr = R"("dtypes":{"void":{"kind":"scalar","cname":"void","bitsize":0,"itemsize":0,"priority":-1,"fmt":null},)"
                    R"j("Ptr(float32)":{"kind":"PtrDType","base":"float32","addrspace":"GLOBAL"}})j";
  CHECK(errorOf(doc({noop("null")}, "", ptr)) ==
        "t.json:1:154: error: dtype 'Ptr(float32)' has kind 'PtrDType': tgc supports only scalar dtypes (no pointer, "
        "vector or image dtypes)");
  std::string unknown = R"("dtypes":{"float33":{"kind":"scalar","cname":"float","bitsize":33,"itemsize":5}})";
  CHECK(errorOf(doc({noop("null")}, "", unknown)) ==
        "t.json:1:59: error: unknown dtype 'float33' (a scalar of 33 bits): tgc cannot represent it");
  std::string wrongBits = R"("dtypes":{"float32":{"kind":"scalar","cname":"float","bitsize":16,"itemsize":4}})";
  CHECK(errorOf(doc({noop("null")}, "", wrongBits)) ==
        "t.json:1:59: error: dtype 'float32': descriptor has bitsize 16, tgc's float32 has 32");
  std::string wrongPrio = R"("dtypes":{"float32":{"kind":"scalar","cname":"float","bitsize":32,"itemsize":4,"priority":3}})";
  CHECK(errorOf(doc({noop("null")}, "", wrongPrio)).find("descriptor has priority 3, tgc's float32 has 14") !=
        std::string::npos);

  // Roots.
  std::string badRoot = doc({c4});
  badRoot.replace(badRoot.find(R"("roots":[0])"), 11, R"("roots":[3])");
  CHECK(errorOf(badRoot).find("roots[0] refers to node 3, which does not exist (the document has 1 nodes)") !=
        std::string::npos);
  std::string badNames = doc({c4});
  badNames.replace(badNames.find(R"(["r"])"), 5, R"(["r","s"])");
  CHECK(errorOf(badNames).find("'root_names' must be an array of 1 strings, one for each root") != std::string::npos);
}

TEST_CASE("json: an arg in a form its op cannot use is an error at the node") {
  const std::string one = R"({"op":"CONST","dtype":"float32","src":[],"arg":{"t":"float","v":"1.0"},"tag":null})";
  auto add = [](const std::string &arg, const std::string &tag = "null") {
    return R"({"op":"ADD","dtype":"float32","src":[0,0],"arg":)" + arg + R"(,"tag":)" + tag + "}";
  };
  // The arg of node 1 (ADD) starts at column 49.
  CHECK(errorOf(doc({one, add(R"({"t":"obj","cls":"Weird","v":{"x":1}})")})) ==
        "t.json:3:49: error: node 1 (ADD): arg is an object of class Weird, a record tgc does not know");
  CHECK(errorOf(doc({one, add(R"({"t":"repr","cls":"Weird","v":"x"})")})) ==
        "t.json:3:49: error: node 1 (ADD): arg is repr(Weird, ...), the exporter's fallback for a value the graph "
        "format cannot encode");
  CHECK(errorOf(doc({one, add(R"({"t":"obj","cls":"ParamArg","v":{"slot":0}})")})) ==
        "t.json:3:49: error: node 1 (ADD): arg is an object of class ParamArg, but ADD takes null");
  CHECK(errorOf(doc({one, add("[1]")})) == "t.json:3:49: error: node 1 (ADD): arg is a tuple, but ADD takes null");
  // Inside an arg too, whatever the op.
  CHECK(errorOf(doc({noop(R"([1,{"t":"dict","v":[["k",{"t":"repr","cls":"W","v":""}]]}])")})) ==
        "t.json:2:44: error: node 0 (NOOP): arg holds repr(W, ...), the exporter's fallback for a value the graph "
        "format cannot encode");
  std::string kernelInfo = R"({"op":"SINK","dtype":"void","src":[],"arg":{"t":"obj","cls":"KernelInfo","v":{"name":"k",)"
                           R"("applied_opts":[{"t":"obj","cls":"Weird","v":{}}]}},"tag":null})";
  CHECK(errorOf(doc({kernelInfo})).find("node 0 (SINK): arg holds an object of class Weird, a record tgc does not know") !=
        std::string::npos);
  // The ops whose arg tinygrad fixes.
  CHECK(errorOf(doc({R"({"op":"CONST","dtype":"float32","src":[],"arg":[1],"tag":null})"}))
            .find("node 0 (CONST): arg is a tuple, but CONST takes a bool, an int, a float or Invalid") != std::string::npos);
  CHECK(errorOf(doc({one, R"({"op":"CAST","dtype":"float32","src":[0],"arg":"x","tag":null})"}))
            .find("node 1 (CAST): arg is a string, but CAST takes a dtype") != std::string::npos);
  CHECK(errorOf(doc({R"({"op":"SINK","dtype":"void","src":[],"arg":{"t":"obj","cls":"CallInfo","v":{}},"tag":null})"}))
            .find("node 0 (SINK): arg is an object of class CallInfo, but SINK takes null or a KernelInfo") !=
        std::string::npos);

  // Not refused: the records tinygrad keeps inside known ones, rare forms on
  // ops that may take them (see "json: tagged values"), any tag, and no arg
  // (null) where the op needs one: the verifier's rule says so.
  Context ctx;
  std::string records = R"({"op":"SINK","dtype":"void","src":[2],"arg":{"t":"obj","cls":"KernelInfo","v":{"name":"k",)"
                        R"("applied_opts":[{"t":"obj","cls":"Opt","v":{"op":{"t":"enum","cls":"OptOps","v":"UPCAST"},)"
                        R"("axis":0,"arg":4}}],"estimates":{"t":"obj","cls":"Estimates","v":{"ops":0,"lds":0,"mem":0}}}},)"
                        R"("tag":null})";
  Result<Graph> g = readGraphJSON(ctx, doc({one, add("null", R"({"t":"obj","cls":"Weird","v":{}})"),
                                           R"({"op":"CAST","dtype":"float32","src":[1],"arg":null,"tag":null})",
                                           records}),
                                  "t.json");
  CHECK_MESSAGE(g.ok(), (g.ok() ? "" : g.error().str()));
}

TEST_CASE("json: a dtype tgc cannot represent names the first node that uses it") {
  const std::string voidDT = R"("void":{"kind":"scalar","cname":"void","bitsize":0,"itemsize":0,"priority":-1,"fmt":null})";
  const std::string f32DT = R"("float32":{"kind":"scalar","cname":"float","bitsize":32,"itemsize":4,"priority":14,"fmt":"f"})";
  const std::string u128DT =
      R"("uint128":{"kind":"scalar","cname":"unsigned __int128","bitsize":128,"itemsize":16,"priority":9,"fmt":null})";
  std::string table = R"("dtypes":{)" + voidDT + "," + f32DT + "," + u128DT + "}";
  const std::string one = R"({"op":"CONST","dtype":"float32","src":[],"arg":{"t":"float","v":"1.0"},"tag":null})";
  // As a node's dtype (tinygrad's internal _uint128), and only as a CAST's arg.
  CHECK(errorOf(doc({one, R"({"op":"CONST","dtype":"uint128","src":[],"arg":1,"tag":null})"}, "", table))
            .find("error: unknown dtype 'uint128' (a scalar of 128 bits): tgc cannot represent it; node 1 (CONST) uses "
                  "it") != std::string::npos);
  CHECK(errorOf(doc({one, R"({"op":"CAST","dtype":"float32","src":[0],"arg":{"t":"dtype","v":"uint128"},"tag":null})"},
                    "", table))
            .find("; node 1 (CAST) uses it") != std::string::npos);
  // Another kind, and a known name described otherwise.
  std::string ptr = R"("dtypes":{)" + voidDT + R"j(,"Ptr(float32)":{"kind":"PtrDType","base":"float32"}})j";
  CHECK(errorOf(doc({R"j({"op":"NOOP","dtype":"Ptr(float32)","src":[],"arg":null,"tag":null})j"}, "", ptr))
            .find("has kind 'PtrDType': tgc supports only scalar dtypes (no pointer, vector or image dtypes); node 0 "
                  "(NOOP) uses it") != std::string::npos);
  std::string wide = R"("dtypes":{)" + voidDT + R"(,"float32":{"kind":"scalar","cname":"float","bitsize":64,"itemsize":8}})";
  CHECK(errorOf(doc({one}, "", wide)).find("descriptor has bitsize 64, tgc's float32 has 32; node 0 (CONST) uses it") !=
        std::string::npos);
}

TEST_CASE("json: a document from another tinygrad reads, with one warning at its 'tinygrad' key") {
  auto warnings = [](const std::string &header, const std::vector<std::string> &nodes = {noop("null")}) {
    Context ctx;
    std::vector<Diagnostic> ws;
    Result<Graph> g = readGraphJSON(ctx, doc(nodes, header), "t.json", &ws);
    std::vector<std::string> out;
    for (const Diagnostic &w : ws) out.push_back(w.str());
    if (!g.ok()) out.push_back(g.error().str());
    return out;
  };
  // No claim (hand-written documents), or the tinygrad tgc follows.
  CHECK(warnings("").empty());
  CHECK(warnings(R"("tinygrad":"",)").empty());
  CHECK(warnings(R"("tinygrad":null,)").empty());
  CHECK(warnings(R"("tinygrad":")" + std::string(kFollowedTinygrad.commit) + R"(",)").empty());
  for (std::string_view same : kFollowedTinygrad.sameTree)
    CHECK(warnings(R"("tinygrad":")" + std::string(same) + R"(",)").empty());

  // The value starts at column 50.
  std::vector<std::string> other = warnings(R"("tinygrad":"tree:0123456789abcdef",)");
  REQUIRE(other.size() == 1);
  CHECK(other[0] == "t.json:1:50: warning: graph exported by tinygrad tree:0123456789abcdef; tgc follows tinygrad "
                    "82bad2be7b71 (snapshot a9069c177a + reference revision): ops or semantics may differ");
  CHECK(warnings(R"("tinygrad":")" + std::string(kFollowedTinygrad.commit) + R"(-dirty",)").size() == 1);
  CHECK(warnings(R"("tinygrad":7,)").at(0).find("graph exported by tinygrad 7;") != std::string::npos);
  // Also when the document then fails: the revision may be why.
  std::vector<std::string> failed =
      warnings(R"("tinygrad":"abc",)", {R"({"op":"FROB","dtype":"void","src":[],"arg":null,"tag":null})"});
  REQUIRE(failed.size() == 2);
  CHECK(failed[0].find("warning: graph exported by tinygrad abc;") != std::string::npos);
  CHECK(failed[1] == "t.json:2:7: error: node 0: unknown op 'FROB'");
  CHECK(describeFollowedTinygrad() == "82bad2be7b71 (snapshot a9069c177a + reference revision)");
}

TEST_CASE("json: buffers") {
  const std::string nodes0 = R"({"op":"CONST","dtype":"weakint","src":[],"arg":4,"tag":null})";
  const std::string buf = R"({"op":"BUFFER","dtype":"float32","src":[0],"arg":{"t":"obj","cls":"ParamArg","v":{"slot":1}},"tag":null})";
  auto withBuffers = [&](const std::string &entry) { return doc({nodes0, buf}, R"("buffers":{)" + entry + "},"); };

  Context ctx;
  Result<Graph> g = readGraphJSON(
      ctx, withBuffers(R"("1":{"node":1,"dtype":"float32","numel":4,"device":"CPU","allocated":true,"file":"in/n1.npy"})"),
      "/data/case/graph.json");
  REQUIRE(g.ok());
  REQUIRE(g->buffers.size() == 1);
  CHECK(g->buffers[0].node == g->roots[0]);
  CHECK(g->buffers[0].dtype == dtypes::Float32);
  CHECK(g->buffers[0].numel == 4);
  CHECK(g->buffers[0].device == "CPU");
  CHECK(g->buffers[0].allocated);
  CHECK(g->buffers[0].file == "in/n1.npy");
  CHECK(g->extra.empty());

  // Written elsewhere, the file path is rewritten to still find the data.
  std::string out = writeGraphJSON(*g, "/data/other");
  CHECK(out.find(R"("file":"../case/in/n1.npy")") != std::string::npos);
  CHECK(writeGraphJSON(*g).find(R"("file":"in/n1.npy")") != std::string::npos);

  CHECK(errorOf(withBuffers(R"("0":{"node":0,"dtype":"float32","numel":4,"device":"CPU","allocated":true})"))
            .find("buffers[\"0\"]: node 0 is a CONST, not a BUFFER") != std::string::npos);
  CHECK(errorOf(withBuffers(R"("1":{"node":1,"dtype":"weakint","numel":4,"device":"CPU","allocated":true})"))
            .find("buffers[\"1\"]: dtype weakint differs from its BUFFER node's float32") != std::string::npos);
  CHECK(errorOf(withBuffers(R"("1":{"node":1,"dtype":"float32","numel":5,"device":"CPU","allocated":true})"))
            .find("numel 5 differs from its BUFFER node's size 4") != std::string::npos);
  CHECK(errorOf(withBuffers(R"("2":{"node":1,"dtype":"float32","numel":4,"device":"CPU","allocated":true})"))
            .find("key does not match its node 1") != std::string::npos);
  CHECK(errorOf(withBuffers(R"("1":{"node":1,"dtype":"float32","numel":4,"allocated":true})"))
            .find("'device' must be a string") != std::string::npos);
}

TEST_CASE("json: writing") {
  Context ctx;
  const UOp *c1 = ctx.constInt(1);
  const UOp *c2 = ctx.constInt(2);
  const UOp *x = ctx.get(Op::CONST, dtypes::Float32, {}, Value::floating(-0.0));
  const UOp *add = ctx.get(Op::ADD, dtypes::WeakInt, {c2, c1});
  const UOp *sink = ctx.get(Op::SINK, dtypes::Void, {add, x},
                            Value::object("KernelInfo", {"ref", "xs"}, {Value::uop(c1), Value::set({Value::string("b"), Value::string("a")})}));
  Graph g;
  g.roots = {sink};
  g.rootNames = {"sink"};
  g.extra["what"] = "a test";
  std::string text = writeGraphJSON(g);
  // Sources left to right, then arg references, before their users.
  CHECK(text == R"({"format":"tgc-uop-graph","version":1,"what":"a test",)"
                R"("dtypes":{"weakint":{"kind":"scalar","cname":"weakint","bitsize":800,"itemsize":100,"priority":0,"fmt":null},)"
                R"("float32":{"kind":"scalar","cname":"float","bitsize":32,"itemsize":4,"priority":14,"fmt":"f"},)"
                R"("void":{"kind":"scalar","cname":"void","bitsize":0,"itemsize":0,"priority":-1,"fmt":null}},)"
                R"("roots":[4],"root_names":["sink"],"nodes":[)" "\n"
                R"({"op":"CONST","dtype":"weakint","src":[],"arg":2,"tag":null},)" "\n"
                R"({"op":"CONST","dtype":"weakint","src":[],"arg":1,"tag":null},)" "\n"
                R"({"op":"ADD","dtype":"weakint","src":[0,1],"arg":null,"tag":null},)" "\n"
                R"({"op":"CONST","dtype":"float32","src":[],"arg":{"t":"float","v":"-0.0"},"tag":null},)" "\n"
                R"({"op":"SINK","dtype":"void","src":[2,3],"arg":{"t":"obj","cls":"KernelInfo","v":{"ref":{"t":"uop","v":1},)"
                R"("xs":{"t":"set","v":["a","b"]}}},"tag":null})" "\n"
                "]}\n");

  Result<Graph> back = readGraphJSON(ctx, text, "w.json");
  REQUIRE(back.ok());
  CHECK(writeGraphJSON(*back) == text);
}

TEST_CASE("json: every value form survives write -> read") {
  std::vector<std::string> args = {
      R"({"t":"uop","v":0})", "null", "true", "-3", "18446744073709551615", R"("t\"ab\u00e9\ud83d\ude00\u007f\n")", "[1,[],[2,[3]]]",
      R"({"t":"float","v":"1e-05"})", R"({"t":"float","v":"1.5e+300"})", R"({"t":"float","v":"-0.0"})",
      R"({"t":"float","v":"nan"})", R"({"t":"float","v":"-inf"})", R"({"t":"int","v":"123456789012345678901234"})",
      R"({"t":"enum","cls":"AxisType","v":"WEAK"})", R"({"t":"dtype","v":"weakint"})",
      R"({"t":"obj","cls":"CallInfo","v":{"grad_fxn":{"t":"callable","v":"f"},"name":null}})",
      R"({"t":"bytes","v":"AAEC/w=="})", R"({"t":"list","v":[{"t":"invalid"}]})", R"({"t":"set","v":[1,2]})",
      R"j({"t":"dict","v":[["k",{"t":"callable","v":"g"}]]})j"};
  std::vector<std::string> nodes = {R"({"op":"CONST","dtype":"weakint","src":[],"arg":4,"tag":null})"};
  std::string sinkSrc;
  for (size_t i = 0; i < args.size(); ++i) {
    nodes.push_back(noop(args[i]));
    sinkSrc += (i ? "," : "") + std::to_string(i + 1);
  }
  // The exporter's fallback only where tgc reads nothing: in a tag.
  nodes.push_back(noop("null", R"j({"t":"dict","v":[["k",{"t":"repr","cls":"X","v":"X()"}]]})j"));
  sinkSrc += "," + std::to_string(nodes.size() - 1);
  nodes.push_back(R"({"op":"SINK","dtype":"void","src":[)" + sinkSrc + R"(],"arg":null,"tag":null})");
  std::string text = doc(nodes);

  Context ctx;
  Result<Graph> g = readGraphJSON(ctx, text, "t.json");
  REQUIRE_MESSAGE(g.ok(), (g.ok() ? "" : g.error().str()));
  std::string first = writeGraphJSON(*g);
  Result<Graph> again = readGraphJSON(ctx, first, "t.json");
  REQUIRE(again.ok());
  CHECK(again->roots == g->roots);
  CHECK(writeGraphJSON(*again) == first);
  // The node lines of this canonical document come back as written (the
  // dtype table is reordered by first use).
  CHECK(first.substr(first.find("\"nodes\"")) == text.substr(text.find("\"nodes\"")));
}
