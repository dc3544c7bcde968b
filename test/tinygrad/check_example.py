#!/usr/bin/env python3
"""Runs examples/tinygrad/README.md's commands and checks the C program against tinygrad.

    check_example.py --tgc TGC --tinygrad DIR --work DIR --cc CC

Exports examples/tinygrad/model.py (its deployable outputs(), and check() with tinygrad's answer on the same
test image), compiles the model with embedded weights, builds app.c against the header, runs it, and compares
its log-probabilities with tinygrad's. Exit codes as check_program.py's (77: skipped outside CI).
"""
import os
import sys

import numpy as np

from check_program import ROOT, Failure, TOLERANCE, example_setup, run


def main() -> int:
    setup = example_setup(__doc__)
    if isinstance(setup, int):
        return setup
    a, env, w = setup
    export, example = os.path.join(ROOT, "tools", "export", "tgc_export.py"), os.path.join(ROOT, "examples", "tinygrad")
    try:
        run([sys.executable, export, os.path.join(example, "model.py"), "-o", w("digits")], env=env)
        run([sys.executable, export, os.path.join(example, "model.py") + ":check", "-o", w("check"), "--expected"], env=env)
        run([a.tgc, "compile", w("digits", "graph.json"), "-o", w("digits.o"), "--weights=embed", "--name=digits"])
        run([a.cc, "-std=c11", "-Wall", "-Wextra", "-Werror", "-I", a.work, os.path.join(example, "app.c"), w("digits.o"),
             "-lm", "-o", w("digits-app")])
        lines = run([w("digits-app")]).split("\n")
        got = np.array([float(line.split()[1]) for line in lines if line and not line.startswith("class")], np.float32)
        want = np.load(w("check", "expected", "out0.npy")).reshape(-1)
        rtol, atol = TOLERANCE["float32"]
        if got.shape != want.shape or not np.allclose(got, want, rtol=rtol, atol=atol):
            raise Failure(f"the C program printed {got}, tinygrad computed {want}")
    except Failure as e:
        print(f"example: FAILED: {e}", file=sys.stderr)
        return 1
    print(f"example: the C program's log-probabilities are tinygrad's ({lines[-2] if len(lines) > 1 else ''})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
