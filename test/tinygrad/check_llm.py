#!/usr/bin/env python3
"""Runs the README's text-generation commands and checks the generated text against tinygrad's.

    check_llm.py --tgc TGC --tinygrad DIR --work DIR --cc CC [--steps N]

Exports examples/llm/model.py's decoding step (start_pos a Variable, the KV caches state the step updates in
place), compiles it once with embedded weights, builds app.c against the header, generates N tokens from C, and
compares them with tinygrad's own greedy decoding of the same model (model.generate, run here). Exit codes as
check_program.py's (77: skipped outside CI).
"""
import os
import sys

from check_program import ROOT, Failure, example_setup, run


def tinygrad_tokens(tinygrad: str, steps: int, env: dict) -> list[int]:
    code = f"import sys; sys.path.insert(0, {os.path.join(ROOT, 'examples', 'llm')!r}); import model; " \
           f"print(' '.join(map(str, model.generate({steps}))))"
    return [int(t) for t in run([sys.executable, "-c", code], env=env).split()]


def main() -> int:
    setup = example_setup(__doc__, lambda ap: ap.add_argument("--steps", type=int, default=32))
    if isinstance(setup, int):
        return setup
    a, env, w = setup
    export, example = os.path.join(ROOT, "tools", "export", "tgc_export.py"), os.path.join(ROOT, "examples", "llm")
    try:
        run([sys.executable, export, os.path.join(example, "model.py"), "-o", w("llm")], env=env)
        run([a.tgc, "compile", w("llm", "graph.json"), "-o", w("llm.o"), "--weights=embed", "--name=llm"])
        run([a.cc, "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-D_POSIX_C_SOURCE=200809L", "-I", a.work,
             os.path.join(example, "app.c"), w("llm.o"), "-lm", "-lpthread", "-o", w("llm-app")])
        got = [int(t) for t in run([w("llm-app"), str(a.steps)]).split()]
        want = tinygrad_tokens(a.tinygrad, a.steps, env)
        if got != want:
            first = next((i for i, (g, t) in enumerate(zip(got, want)) if g != t), min(len(got), len(want)))
            raise Failure(f"the C program generated {got}\ntinygrad generated       {want}\n(first difference at step {first})")
    except Failure as e:
        print(f"llm: FAILED: {e}", file=sys.stderr)
        return 1
    print(f"llm: the C program's {a.steps} tokens are tinygrad's: {' '.join(map(str, got))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
