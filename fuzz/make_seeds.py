#!/usr/bin/env python3
"""Builds the fuzzers' seed corpora in the build folder (never in the repo).

json/: the small graph documents of the shared corpus and the JSON inputs of
the lit tests; text/: the lit tests' text-form inputs, split at `// -----` as
--split-input-file does, the examples, and the text form of each JSON seed
(converted with the tgc given); pipeline/: both.

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

counts = {k: len(list((out / k).iterdir())) for k in ("json", "text", "pipeline") if (out / k).is_dir()}
print("fuzz seeds: " + ", ".join(f"{k} {n}" for k, n in counts.items()))
