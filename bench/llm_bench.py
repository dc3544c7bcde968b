#!/usr/bin/env python3
"""Tokens per second of examples/llm's compiled decoding step beside tinygrad's own decoding of the same model.

    PYTHONPATH=../shared/tinygrad DEV=CPU CC=clang-22 python3 bench/llm_bench.py [--tgc build/tools/tgc/tgc]
        [--steps 64] [--rounds 3] [--work build/llm-bench]

Exports the step (examples/llm/model.py), compiles it once with embedded weights and builds app.c, then in
interleaved rounds: the C program generating --steps tokens (its own per-step clock) and tinygrad generating the
same tokens with start_pos a bound Variable under TinyJit (as llama.py's own generation runs it; compiled and
captured in a warm-up round first). Prints tokens/s of each and their ratio (best round of each), and the C program's step time at start_pos 8
and 56 (median over the rounds): the step reads the cache up to start_pos, so it must cost more at 56.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "examples", "llm"))


def sh(cmd):
    return subprocess.run([str(c) for c in cmd], check=True, capture_output=True, text=True).stdout


def build(tgc: str, work: str, cc: str) -> str:
    os.makedirs(work, exist_ok=True)
    sh([sys.executable, os.path.join(ROOT, "tools", "export", "tgc_export.py"), os.path.join(ROOT, "examples", "llm", "model.py"),
        "-o", os.path.join(work, "llm")])
    sh([tgc, "compile", os.path.join(work, "llm", "graph.json"), "-o", os.path.join(work, "llm.o"), "--weights=embed", "--name=llm"])
    app = os.path.join(work, "llm-app")
    sh([cc, "-std=c11", "-O2", "-D_POSIX_C_SOURCE=200809L", "-I", work, os.path.join(ROOT, "examples", "llm", "app.c"),
        os.path.join(work, "llm.o"), "-lm", "-lpthread", "-o", app])
    return app


def tgc_round(app: str, steps: int):
    lines = sh([app, "--time", steps]).split("\n")
    times = {int(l.split()[1]): float(l.split()[2]) for l in lines if l and not l.startswith("tokens")}
    return [int(l.split()[0]) for l in lines if l and not l.startswith("tokens")], times


def tinygrad_round(next_token, steps: int):
    from model import PROMPT
    t0, out = time.perf_counter(), [PROMPT]
    for pos in range(steps): out.append(next_token(out[-1], pos))
    return out[1:], time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tgc", default=os.path.join(ROOT, "build", "tools", "tgc", "tgc"))
    ap.add_argument("--cc", default=os.environ.get("CC", "clang-22"))
    ap.add_argument("--steps", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--work", default=os.path.join(ROOT, "build", "llm-bench"))
    a = ap.parse_args()
    app = build(a.tgc, a.work, a.cc)
    import model
    next_token = model.decoder(jit=True)
    tinygrad_round(next_token, a.steps)  # warm-up: tinygrad compiles its kernels and its JIT captures the step
    tgc_tps, tg_tps, at8, at56 = [], [], [], []
    for _ in range(a.rounds):
        tokens, times = tgc_round(app, a.steps)
        tgc_tps.append(a.steps / (sum(times.values()) / 1e3))
        at8.append(times.get(8, float("nan")))
        at56.append(times.get(56, float("nan")))
        want, seconds = tinygrad_round(next_token, a.steps)
        tg_tps.append(a.steps / seconds)
        if tokens != want: print(f"warning: tokens differ from tinygrad's\n  tgc      {tokens}\n  tinygrad {want}")
    best_tgc, best_tg = max(tgc_tps), max(tg_tps)
    print(f"| decoder ({a.steps} tokens, best of {a.rounds}) | tokens/s |")
    print("|---|---|")
    print(f"| tgc, compiled step from C | {best_tgc:.0f} |")
    print(f"| tinygrad, DEV=CPU, TinyJit over the Variable step | {best_tg:.1f} |")
    print(f"| ratio | {best_tgc / best_tg:.0f}x |")
    print(f"step at start_pos 8: {statistics.median(at8) * 1e3:.1f} us, at 56: {statistics.median(at56) * 1e3:.1f} us "
          f"({statistics.median(at56) / statistics.median(at8):.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
