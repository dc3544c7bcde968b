#!/usr/bin/env python3
"""Matrix-vector products with low-precision weights beside the float32 one (issue #33 item 4).

    PYTHONPATH=../shared/tinygrad DEV=CPU CC=clang-22 python3 bench/lowp_bench.py [--shapes 11008x4096,4096x4096]
        [--rounds 5] [--repeat 20] [--threads N] [--tgc build/tools/tgc/tgc] [--perf-bench build/bench/perf_bench]
        [--work build/lowp-bench]

For each shape NxK (N outputs, K inputs: nn.Linear(K, N) without bias at batch 1, a decoding step's projection)
exports from tinygrad, with tools/export/tgc_export.py, the product of a float32 x[K] with a weight W[N, K] realized
as float32, float16, bfloat16 and int8 with a per-row float32 scale, written as tinygrad users write it:

    f32         x @ w32.T
    f16_half    x.half() @ w16.T                  (half result; tinygrad multiplies in half, sums in float)
    f16_float   x @ w16.T.float()
    bf16_float  x @ wb16.cast(dtypes.float).T
    int8_scale  x @ (w8.float() * scale[:, None]).T

Then --rounds rounds, each running every case once (`tgc run --repeat`, one thread per core or --threads), so a
busy host slows all of them alike; the best round of each is reported. Prints each case's time, its speed-up over
float32, the bytes ratio that bounds that speed-up when both stream their weight from memory, the weight's read
rate and the largest difference from tinygrad's result (the exporter's expected/out0.npy); with perf_bench, the
streaming (triad) bandwidth on both threads, measured in the same run. A weight that fits the last-level cache
(4096x4096 int8: 16 MiB) is read from it by the repeated runs: only the shapes beyond it measure memory bandwidth.
"""
import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools", "export"))
CASES = ["f32", "f16_half", "f16_float", "bf16_float", "int8_scale"]
WEIGHT_BYTES = {"f32": 4, "f16_half": 2, "f16_float": 2, "bf16_float": 2, "int8_scale": 1}


def export_shape(n: int, k: int, work: str) -> dict:
    """The cases of one shape, exported with tinygrad's results; {case: its directory}."""
    import numpy as np
    import tgc_export
    from tinygrad import Tensor, dtypes
    rng = np.random.default_rng(0)
    wf = (rng.standard_normal((n, k)) * 0.05).astype(np.float32)
    x = Tensor(rng.standard_normal(k).astype(np.float32)).realize()
    w32 = Tensor(wf).realize()
    w16, wb16 = w32.cast(dtypes.half).realize(), w32.cast(dtypes.bfloat16).realize()
    row_max = np.abs(wf).max(axis=1, keepdims=True)
    w8 = Tensor(np.clip(np.round(wf / row_max * 127), -127, 127).astype(np.int8)).realize()
    scale = Tensor((row_max / 127).astype(np.float32)).realize()  # [n, 1]
    make = {"f32": lambda: x @ w32.T, "f16_half": lambda: x.half() @ w16.T, "f16_float": lambda: x @ w16.T.float(),
            "bf16_float": lambda: x @ wb16.cast(dtypes.float).T, "int8_scale": lambda: x @ (w8.float() * scale).T}
    dirs = {}
    for case in CASES:
        dirs[case] = os.path.join(work, f"{case}_{n}x{k}")
        tgc_export.export([make[case]()], dirs[case], what=f"{case} matvec {n}x{k}", expected=True)
    return dirs


def tgc_run(tgc: str, case_dir: str, repeat: int, threads: int | None) -> float:
    """tgc run's fastest of `repeat` timed runs, in ms."""
    cmd = [tgc, "run", os.path.join(case_dir, "graph.json"), "--output-dir", os.path.join(case_dir, "out"),
           "--repeat", str(repeat)] + (["--threads", str(threads)] if threads else [])
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return float(next(w for w in out.split() if w.startswith("min_ms=")).split("=")[1])


def max_error(case_dir: str) -> float:
    """The largest difference of tgc's result from tinygrad's, relative to the largest magnitude."""
    import numpy as np
    got = np.load(os.path.join(case_dir, "out", "out0.npy")).astype(np.float64)
    want = np.load(os.path.join(case_dir, "expected", "out0.npy")).astype(np.float64)
    return float(np.abs(got - want).max() / max(np.abs(want).max(), 1e-30))


def read_bandwidth(perf_bench: str, work: str) -> float | None:
    if not os.path.exists(perf_bench): return None
    out = os.path.join(work, "limits.json")
    subprocess.run([perf_bench, "--parts", "limits", "--json", out], check=True, stdout=subprocess.DEVNULL)
    with open(out) as f: return json.load(f)["limits"]["triad_gbs_all"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shapes", default="11008x4096,4096x4096", help="comma-separated NxK (outputs x inputs)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=20, help="tgc run's timed runs per case and round")
    ap.add_argument("--threads", type=int, help="tgc's threads (default: one per core)")
    ap.add_argument("--tgc", default=os.path.join(ROOT, "build", "tools", "tgc", "tgc"))
    ap.add_argument("--perf-bench", default=os.path.join(ROOT, "build", "bench", "perf_bench"))
    ap.add_argument("--work", default=os.path.join(ROOT, "build", "lowp-bench"))
    a = ap.parse_args()
    shapes = [tuple(int(d) for d in s.split("x")) for s in a.shapes.split(",")]
    dirs = {(n, k): export_shape(n, k, a.work) for n, k in shapes}
    best = {}
    for r in range(a.rounds):
        for shape, cases in dirs.items():
            for case, d in cases.items():
                best[shape, case] = min(best.get((shape, case), float("inf")), tgc_run(a.tgc, d, a.repeat, a.threads))
    bandwidth = read_bandwidth(a.perf_bench, a.work)
    print(f"| shape NxK | weights | tgc ms (best of {a.rounds} rounds) | vs float32 | bytes ratio | weight GB/s | "
          "max |tgc - tinygrad| / max |tinygrad| |")
    print("|---|---|---|---|---|---|---|")
    for (n, k), cases in dirs.items():
        for case, d in cases.items():
            ms, gb = best[(n, k), case], n * k * WEIGHT_BYTES[case] / 1e9
            print(f"| {n}x{k} | {case} | {ms:.3f} | {best[(n, k), 'f32'] / ms:.2f}x | "
                  f"{4 / WEIGHT_BYTES[case]:.0f}x | {gb / ms * 1e3:.1f} | {max_error(d):.1e} |")
    if bandwidth is not None:
        print(f"triad bandwidth (perf_bench limits), both threads, this run: {bandwidth:.1f} GB/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
