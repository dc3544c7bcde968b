#!/usr/bin/env python3
"""Builds the fuzzers' seed corpora in the build folder (never in the repo).

json/: the small graph documents of the shared corpus and the JSON inputs of
the lit tests; text/: the lit tests' text-form inputs, split at `// -----` as
--split-input-file does, the examples, and the text form of each JSON seed
(converted with the tgc given); pipeline/: both. Also libFuzzer dictionaries
(json.dict, text.dict, pipeline.dict) of the formats' tokens: op and dtype
names read from lib/IR, keywords, value forms.

usage: make_seeds.py SOURCE_DIR CORPUS_DIR TGC OUT_DIR [MAX_BYTES]
"""
import hashlib
import pathlib
import re
import subprocess
import sys

src, corpus, tgc, out = (pathlib.Path(a) for a in sys.argv[1:5])
max_bytes = int(sys.argv[5]) if len(sys.argv) > 5 else 16384
DOCS = ("graph.json", "call.json", "kernels.json", "linear.json")


def put(kind, data):
    """Stores one seed under the hash of its content (so reruns are idempotent)."""
    d = out / kind
    d.mkdir(parents=True, exist_ok=True)
    f = d / hashlib.sha1(data).hexdigest()
    if not f.exists():
        f.write_bytes(data)


json_seeds = []
if corpus.is_dir():
    json_seeds += [p for p in sorted(corpus.glob("*/*.json")) if p.name in DOCS]
json_seeds += sorted((src / "test" / "lit").rglob("*.json"))
json_seeds = [p for p in json_seeds if p.stat().st_size <= max_bytes]
for p in json_seeds:
    data = p.read_bytes()
    put("json", data)
    put("pipeline", data)
    # The same graph in the text form, when tgc can read it.
    r = subprocess.run([str(tgc), "opt", str(p), "--emit=text"], capture_output=True)
    if r.returncode == 0 and r.stdout:
        put("text", r.stdout)
        put("pipeline", r.stdout)

separator = re.compile(rb"^[ \t]*// -----+[ \t\r]*$", re.M)
text_files = sorted((src / "test" / "lit").rglob("*.tgc")) + sorted((src / "examples").glob("*.tgc"))
for p in text_files:
    for piece in separator.split(p.read_bytes()):
        if piece.strip() and len(piece) <= max_bytes:
            put("text", piece)
            put("pipeline", piece)

# Dictionaries: tokens a byte-level mutation would rarely spell by chance.
ops = re.findall(r"X\((\w+)\)", (src / "lib" / "IR" / "Ops.h").read_text())
dtypes = re.findall(r'DTypeInfo k\w+\{"(\w+)"', (src / "lib" / "IR" / "DType.cpp").read_text())
enums = ["AddrSpace.GLOBAL", "AddrSpace.LOCAL", "AddrSpace.REG", "AddrSpace.ALU", "AxisType.LOOP", "AxisType.REDUCE"]
text_tokens = ops + dtypes + ["dtypes." + d for d in dtypes] + ["Ops." + o for o in ops] + enums + [
    "graph @g {\n", "}\n", "%0", "%1", " = ", "(%0, %1)", " : [", "]", "tag=", "buffer ", "buffer_map ", " -> ",
    "attributes ", "roots ", " as ", "// -----\n", "None", "True", "False", "Invalid", "inf", "-inf", "nan", "set{",
    "bytes(\"", "callable(\"", "repr(", "ParamArg(", "CallInfo(", "KernelInfo(", "slot=", "dtype=", "device=",
    "numel=", "allocated=", "\"CPU\"", "\\x", "1e308", "9223372036854775807", "-9223372036854775808",
    "18446744073709551616", "4611686018427387904"]
json_tokens = ['"%s"' % o for o in ops] + ['"%s"' % d for d in dtypes] + [
    '"op":', '"dtype":', '"src":', '"arg":', '"tag":', '"nodes":', '"roots":', '"root_names":', '"dtypes":',
    '"buffers":', '"buffer_map":', '"numel":', '"device":', '"allocated":', '"file":', '"node":', '"kind":"scalar"',
    '{"t":"int","v":"', '{"t":"float","v":"', '{"t":"uop","v":', '{"t":"enum","cls":"', '{"t":"obj","cls":"',
    '{"t":"dtype","v":"', '{"t":"list","v":[', '{"t":"set","v":[', '{"t":"dict","v":[[', '{"t":"bytes","v":"',
    '{"t":"invalid"}', '{"t":"callable","v":"', '{"t":"repr","cls":"', '"tgc-uop-graph"', '"version":1', "null",
    "true", "false", "\\u0000", "\\ud800", "1e308", "9223372036854775807", "-9223372036854775808",
    "18446744073709551616", "4611686018427387904"]


def dict_entry(token):
    """A token in libFuzzer's dictionary syntax (its only escapes are backslash-backslash, -quote and -xNN)."""
    body = "".join("\\" + c if c in '\\"' else c if " " <= c <= "~" else "\\x%02x" % ord(c) for c in token)
    return '"%s"' % body


def write_dict(name, tokens):
    (out / name).write_text("".join(dict_entry(t) + "\n" for t in dict.fromkeys(tokens)))


write_dict("text.dict", text_tokens)
write_dict("json.dict", json_tokens)
write_dict("pipeline.dict", text_tokens + json_tokens)

counts = {k: len(list((out / k).iterdir())) for k in ("json", "text", "pipeline") if (out / k).is_dir()}
print("fuzz seeds: " + ", ".join(f"{k} {n}" for k, n in counts.items()))
