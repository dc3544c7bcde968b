#!/usr/bin/env python3
"""tinygrad's random numbers compiled by tgc beside tinygrad's own C kernels for the same graph (issue #31).

    PYTHONPATH=../shared/tinygrad DEV=CPU CC=clang-22 python3 bench/rand_bench.py [--n 16777216] [--rounds 3]
        [--perf-bench build/bench/perf_bench] [--work build/rand-bench]

Exports `Tensor.rand(n)` and `Tensor.randn(n)` (float32, `manual_seed(0)`) from tinygrad as corpus cases
(docs/graph-format.md): graph.json and its inputs (the random key and counter) with tools/export/tgc_export.py,
plus what perf_bench's tg-C baseline reads: tinygrad's LINEAR (linear.json), the C its renderer produced for each
kernel (programs.json) and the calls (meta.json). Then runs `perf_bench --parts limits,corpus` over them --rounds
times: each round times tgc's compiled schedule (all cores) and tinygrad's C kernels compiled here
(bench/TinygradBaseline.cpp: clang -O2 -march=native, core_id slices one after another as tinygrad's CPU worker
runs them) on the same inputs, in the same process, one after the other. Prints the best round of each, their
ratio, and tgc's write rate beside the triad bandwidth measured in the same run (n floats written: 4n bytes).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools", "export"))


def export_case(name: str, make, out_dir: str):
    """out_dir as a corpus case of the tensors make() returns, with tinygrad's kernels for the baseline."""
    import tgc_export
    from tinygrad import Tensor
    from tinygrad.engine.realize import compile_linear
    from tinygrad.uop.ops import Ops
    tensors = make()
    tgc_export.export(tensors, out_dir, what=name)
    linear, var_vals = Tensor.linear_with_vars(*tensors)
    with tempfile.TemporaryDirectory() as tmp:  # write_document always names its file graph.json
        path, _ = tgc_export.write_document([linear], tmp, ["linear"], what="create_linear_with_vars output")
        os.replace(path, os.path.join(out_dir, "linear.json"))
    sources, calls = [], []
    for i, call in enumerate(compile_linear(linear).src):
        ast = call.src[0]
        if ast.op is Ops.COPY:
            calls.append({"index": i, "kind": "copy", "name": "copy"})
            continue
        if ast.op is not Ops.PROGRAM:
            raise RuntimeError(f"{name}: call {i} is a {ast.op}, neither a kernel nor a copy")
        info = ast.arg
        calls.append({"index": i, "kind": "program", "function_name": info.function_name, "source_id": len(sources),
                      "global_size": list(info.global_size), "vars": [v.expr for v in info.vars]})
        sources.append(next(s.arg for s in ast.src if s.op is Ops.SOURCE))
    meta = {"case": name, "status": "ok", "description": name, "var_vals": var_vals, "calls": calls}
    with open(os.path.join(out_dir, "programs.json"), "w") as f: json.dump({"what": "tinygrad's rendered C", "sources": sources}, f)
    with open(os.path.join(out_dir, "meta.json"), "w") as f: json.dump(meta, f, indent=1)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1 << 24, help="random floats per tensor")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=5, help="perf_bench's timed repetitions per measurement")
    ap.add_argument("--perf-bench", default=os.path.join(ROOT, "build", "bench", "perf_bench"))
    ap.add_argument("--work", default=os.path.join(ROOT, "build", "rand-bench"))
    a = ap.parse_args()
    from tinygrad import Tensor

    def seeded(f):
        def make():
            Tensor.manual_seed(0)
            return [f()]
        return make
    cases = {f"rand_{a.n}": seeded(lambda: Tensor.rand(a.n)), f"randn_{a.n}": seeded(lambda: Tensor.randn(a.n))}
    for name, make in cases.items(): export_case(name, make, os.path.join(a.work, name))
    best = {}
    triad = 0.0
    for r in range(a.rounds):
        out = os.path.join(a.work, f"round{r}.json")
        subprocess.run([a.perf_bench, "--parts", "limits,corpus", "--corpus-dir", a.work, "--reps", str(a.reps),
                        "--json", out], check=True, stdout=subprocess.DEVNULL)
        with open(out) as f: res = json.load(f)
        triad = max(triad, res["limits"]["triad_gbs_all"])
        for row in res["corpus"]:
            if "error" in row or "exec_ms" not in row["tinygrad_c"]:
                print(f"{row['case']}: {row.get('error') or row['tinygrad_c'].get('error')}")
                return 1
            b = best.setdefault(row["case"], [float("inf"), float("inf")])
            b[0], b[1] = min(b[0], row["tgc_exec_ms"]), min(b[1], row["tinygrad_c"]["exec_ms"])
    print(f"| case (float32, best of {a.rounds} rounds) | tgc ms | tg-C ms | tgc vs tg-C | tgc write GB/s |")
    print("|---|---|---|---|---|")
    for name, (tgc_ms, c_ms) in best.items():
        print(f"| {name} | {tgc_ms:.2f} | {c_ms:.2f} | {c_ms / tgc_ms:.1f}x | {4 * a.n / tgc_ms / 1e6:.1f} |")
    print(f"triad bandwidth, all cores, this run: {triad:.1f} GB/s (a kernel that only writes 4n bytes: "
          f"{4 * a.n / triad / 1e6:.2f} ms at that rate)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
