#!/usr/bin/env python3
"""Checks tgc against the real tinygrad on one program of programs.py.

    check_program.py NAME --tgc build/tools/tgc/tgc --tinygrad ../shared/tinygrad --work DIR

1. exports the program live with tools/export/tgc_export.py (--expected: tinygrad realizes it in this process
   and its outputs, changed buffers and kernel count are written beside the graph);
2. `tgc opt --passes=schedule --stats`: tgc's kernel count must equal tinygrad's;
3. `tgc run`, twice on a fresh kernel cache (compiled, then from the cache, which must then compile nothing): every
   output and every changed buffer must equal tinygrad's;
4. `tgc compile --emit=exe` and the launcher on the exported inputs: the same;
5. for `c_program` programs, `tgc compile --weights=embed` linked with c_program.c through the header: the same;
6. for `steps` programs (the function returns a step to run repeatedly), the model compiled once and linked with
   c_steps.c runs `steps` times from C, its in-outs (weights, optimizer state, the random counter) carried from
   run to run and, with `seed`, its random state set as Tensor.manual_seed(seed) does: every run's outputs and
   random counter must equal tinygrad's after as many realizes of the step.
Ints and bools must be equal; floats within TOLERANCE of their dtype (docs/tinygrad.md), or bit for bit in an
`exact` program (one whose values make tinygrad's arithmetic exact, so no order of the sums changes them). An `xfail`
program must fail in tgc, and this check fails once it does not. Exit 0 passed (or failed as expected), 1 failed, 77 skipped:
tinygrad is missing outside CI (in CI, where CI is set, a missing tinygrad fails).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SKIP = 77
# (rtol, atol) by dtype: tgc reassociates reductions and contracts to FMAs, and its transcendentals differ from
# tinygrad's by a few ULP; a half or bfloat16 result may round to the neighbouring value.
TOLERANCE = {"float64": (1e-9, 1e-12), "float32": (1e-4, 1e-5), "float16": (4e-3, 1e-3), "bfloat16": (2e-2, 1e-2)}


class Failure(Exception):
    pass


def run(cmd, **kw) -> str:
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    if r.returncode != 0:
        raise Failure(f"`{' '.join(str(c) for c in cmd)}` exited {r.returncode}:\n{r.stdout}{r.stderr}")
    return r.stdout + r.stderr


def as_float(a, dtype: str):
    import numpy as np
    if dtype == "bfloat16":
        return (a.astype(np.uint32) << 16).view(np.float32)
    return a.astype(np.float64)


def compare(got_path: str, want_path: str, dtype: str, what: str, exact: bool = False):
    import numpy as np
    got, want = np.load(got_path).reshape(-1), np.load(want_path).reshape(-1)
    if got.size != want.size or got.dtype != want.dtype:
        raise Failure(f"{what}: {got.dtype}[{got.size}], tinygrad {want.dtype}[{want.size}]")
    if exact or dtype not in TOLERANCE:
        bad = np.flatnonzero(got.view(f"u{got.itemsize}") != want.view(f"u{want.itemsize}"))  # the bits
        if bad.size:
            raise Failure(f"{what}: {bad.size} elements differ, first [{bad[0]}] = {got[bad[0]]}, tinygrad {want[bad[0]]}")
        return
    rtol, atol = TOLERANCE[dtype]
    g, w = as_float(got, dtype), as_float(want, dtype)
    same_special = (np.isnan(g) & np.isnan(w)) | (g == w)
    err = np.where(same_special, 0.0, np.abs(g - w))
    bad = np.flatnonzero(~(err <= atol + rtol * np.abs(np.where(np.isfinite(w), w, 0))))
    if bad.size:
        i = bad[0]
        raise Failure(f"{what}: {bad.size} of {g.size} elements outside rtol {rtol} atol {atol}; "
                      f"first [{i}] = {g[i]!r}, tinygrad {w[i]!r}")


def compare_results(case: str, out_dir: str, meta: dict, how: str, exact: bool = False):
    for o in meta["outputs"]:
        compare(os.path.join(out_dir, f"out{o['index']}.npy"), os.path.join(case, o["file"]), o["dtype"],
                f"{how}: out{o['index']}", exact)
    for b in meta["buffers_after"]:
        compare(os.path.join(out_dir, f"n{b['node']}.after.npy"), os.path.join(case, b["file"]), b["dtype"],
                f"{how}: n{b['node']} after the run", exact)


def tgc_kernel_count(tgc: str, graph: str) -> int:
    stats = run([tgc, "opt", graph, "--passes=schedule", "--stats", "-o", os.devnull])
    m = re.search(r"kernels (\d+)", stats)
    if not m:
        raise Failure(f"no kernel count in tgc's --stats:\n{stats}")
    return int(m.group(1))


def check_launcher(tgc: str, case: str, meta: dict, work: str, exact: bool):
    exe = os.path.join(work, "exe", "model")
    run([tgc, "compile", os.path.join(case, "graph.json"), "-o", exe + ".o", "--emit=exe"])
    inputs = [f"--input=n{i['node']}={os.path.join(case, i['file'])}" for i in meta["inputs"]]
    run([exe, *inputs, "--output-dir", os.path.join(work, "exe", "out")])
    compare_results(case, os.path.join(work, "exe", "out"), meta, "launcher", exact)


def check_c_program(tgc: str, case: str, meta: dict, work: str, cc: str, runtime: str):
    """The model linked into c_program.c through its header (weights embedded; out0 float32)."""
    import numpy as np
    d = os.path.join(work, "c")
    run([tgc, "compile", os.path.join(case, "graph.json"), "-o", os.path.join(d, "model.o"), "--weights=embed",
         "--name=model"])
    exe = os.path.join(d, "app")
    run([cc, "-std=c11", "-Wall", "-Werror", "-I", d, os.path.join(HERE, "c_program.c"), os.path.join(d, "model.o"),
         runtime, "-lstdc++", "-lm", "-lpthread", "-o", exe])
    raw = os.path.join(d, "out0.raw")
    run([exe, raw])
    out0 = meta["outputs"][0]
    np.save(os.path.join(d, "out0.npy"), np.fromfile(raw, dtype=np.float32).reshape(out0["shape"]))
    compare(os.path.join(d, "out0.npy"), os.path.join(case, out0["file"]), out0["dtype"], "C program: out0")


def random_state(header: str) -> dict:
    """'key'/'counter' -> tensor name, from the header's per-tensor comments."""
    found = re.findall(r"/\* (\w+): [^*]*, the random (key|counter) \*/", header)
    return {kind: name for name, kind in found}


def tinygrad_steps(step, count: int) -> list:
    """tinygrad's results of `count` more realizes of `step`: per realize, each output's bytes and the random
    counter after it."""
    import tgc_export
    from tinygrad import Tensor
    runs = []
    for _ in range(count):
        tensors = tgc_export._realizable(step())
        Tensor.realize(*tensors)
        runs.append(([tgc_export._tensor_bytes(t) for t in tensors], rng_counter()))
    return runs


def rng_counter() -> bytes | None:
    from tinygrad import Tensor
    counter = Tensor._device_rng_counters.get("CPU")
    return None if counter is None else counter.numpy().tobytes()


def check_steps(tgc: str, case: str, meta: dict, work: str, cc: str, runtime: str, spec: dict, runs: list):
    """The model compiled once and run len(runs) times from C (c_steps.c), in-outs carried: tinygrad's results
    (`runs`: per run, each output's bytes, None for the exported expected/ files, and the random counter after)."""
    import numpy as np
    d = os.path.join(work, "steps")
    os.makedirs(os.path.join(d, "in"))
    os.makedirs(os.path.join(d, "out"))
    run([tgc, "compile", os.path.join(case, "graph.json"), "-o", os.path.join(d, "model.o"), "--name=model"])
    with open(os.path.join(d, "model.h")) as f:
        state = random_state(f.read())
    seeded = spec["seed"] is not None
    if seeded and set(state) != {"key", "counter"}:
        raise Failure(f"the header names no random key and counter: {state}")
    for i in meta["inputs"]:
        name = f"n{i['node']}"
        if not (seeded and name in state.values()):  # seeded: the C program sets the random state itself
            np.load(os.path.join(case, i["file"])).tofile(os.path.join(d, "in", name + ".raw"))
    exe = os.path.join(d, "steps")
    run([cc, "-std=c11", "-Wall", "-Werror", "-I", d, os.path.join(HERE, "c_steps.c"), os.path.join(d, "model.o"),
         runtime, "-lstdc++", "-lm", "-lpthread", "-o", exe])
    run([exe, len(runs), os.path.join(d, "in"), os.path.join(d, "out")] + ([spec["seed"]] if seeded else []))
    for k, (outputs, counter) in enumerate(runs):
        for o, want in zip(meta["outputs"], outputs or [None] * len(meta["outputs"])):
            got = os.path.join(d, "out", f"{k}_out{o['index']}")
            expected = os.path.join(case, o["file"])
            descr = np.load(expected).dtype
            np.save(got + ".npy", np.fromfile(got + ".raw", dtype=descr).reshape(o["shape"]))
            if want is not None:
                expected = got + ".want.npy"
                np.save(expected, np.frombuffer(want, dtype=descr).reshape(o["shape"]))
            compare(got + ".npy", expected, o["dtype"], f"C run {k + 1}: out{o['index']}")
        if counter is not None and "counter" in state:
            got = np.fromfile(os.path.join(d, "out", f"{k}_{state['counter']}.raw"), dtype=np.uint32)
            if got.tobytes() != counter:
                raise Failure(f"C run {k + 1}: random counter {got}, tinygrad {np.frombuffer(counter, np.uint32)}")


def check(name: str, spec: dict, a) -> None:
    sys.path.insert(0, os.path.join(ROOT, "tools", "export"))
    import tgc_export
    case = os.path.join(a.work, "case")
    step = spec["fn"]() if spec["steps"] else None
    tgc_export.export(step() if step else spec["fn"](), case, f"test/tinygrad/programs.py:{name}", expected=True)
    # tinygrad's runs of the step: the exporter's realize (its outputs in expected/), then the later ones
    runs = [(None, rng_counter())] + tinygrad_steps(step, spec["steps"] - 1) if step else []
    with open(os.path.join(case, "meta.json")) as f:
        meta = json.load(f)
    graph = os.path.join(case, "graph.json")
    # tinygrad's realize skips a constant or plain-buffer output (its .numpy() computes it later, uncounted).
    kernels = tgc_kernel_count(a.tgc, graph) if meta["realize_filter"]["scheduled"] == len(meta["outputs"]) else None
    # Twice, on a kernel cache of the program's own: compiled, then every kernel taken from the cache.
    cache = os.path.join(a.work, "kernel-cache")
    shutil.rmtree(cache, ignore_errors=True)
    for state in ("cold", "warm"):
        said = run([a.tgc, "run", graph, "--output-dir", os.path.join(a.work, "run-" + state), "--cache-dir", cache,
                    "--stats"])
        if state == "warm" and " 0 misses" not in said:
            raise Failure("the second tgc run compiled kernels again: " + said.strip().splitlines()[-1])
        compare_results(case, os.path.join(a.work, "run-" + state), meta, f"tgc run ({state} kernel cache)", spec["exact"])
    if kernels is not None and kernels != meta["kernel_count"]:
        raise Failure(f"tgc schedules {kernels} kernels, tinygrad {meta['kernel_count']}")
    check_launcher(a.tgc, case, meta, a.work, spec["exact"])
    if spec["c_program"]:
        check_c_program(a.tgc, case, meta, a.work, a.cc, a.runtime)
    if step:
        check_steps(a.tgc, case, meta, a.work, a.cc, a.runtime, spec, runs)
    counts = f"{kernels} kernels" if kernels is not None else "(outputs tinygrad does not schedule: kernels not counted)"
    print(f"{name}: {len(meta['outputs'])} outputs, {len(meta['buffers_after'])} changed buffers and "
          f"{counts} as tinygrad's, through tgc run and the launcher"
          + (" and from C" if spec["c_program"] else "")
          + (f", and {spec['steps']} runs from C with their state carried" if step else ""))


def example_setup(doc: str, add_args=None):
    """The command line, environment and work folder of a README example's check (check_example.py,
    check_llm.py): (args, env, w) with w(*parts) a path in the fresh work folder, or an exit code when tinygrad
    is missing."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tgc", required=True)
    ap.add_argument("--tinygrad", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--cc", default="clang-22")
    if add_args:
        add_args(ap)
    a = ap.parse_args()
    if (missing := tinygrad_missing(a.tinygrad)) is not None:
        return missing
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    env = {**os.environ, "PYTHONPATH": os.path.abspath(a.tinygrad), "DEV": os.environ.get("DEV", "CPU")}
    return a, env, lambda *p: os.path.join(a.work, *p)


def tinygrad_missing(tinygrad: str) -> int | None:
    """None when the tinygrad tree is there; else the exit code: a failure in CI (CI is set), a skip outside."""
    if os.path.isfile(os.path.join(tinygrad, "tinygrad", "tensor.py")):
        return None
    if os.environ.get("CI"):
        print(f"error: no tinygrad at {tinygrad} (CI needs ../shared/tinygrad)", file=sys.stderr)
        return 1
    print(f"skipped: no tinygrad at {tinygrad} (outside CI; in CI this fails)")
    return SKIP


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("name")
    ap.add_argument("--tgc", required=True)
    ap.add_argument("--tinygrad", required=True, help="the reference tinygrad tree (../shared/tinygrad)")
    ap.add_argument("--work", required=True, help="scratch folder (emptied first)")
    ap.add_argument("--cc", default="clang-22", help="C compiler for c_program programs")
    ap.add_argument("--runtime", default="", help="libtgc_runtime.a, for c_program programs")
    a = ap.parse_args()
    if (missing := tinygrad_missing(a.tinygrad)) is not None:
        return missing
    sys.path.insert(0, os.path.abspath(a.tinygrad))
    os.environ.setdefault("DEV", "CPU")
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    sys.path.insert(0, HERE)
    from programs import PROGRAMS
    if a.name not in PROGRAMS:
        print(f"check_program: error: no program '{a.name}' in programs.py", file=sys.stderr)
        return 1
    spec = PROGRAMS[a.name]
    try:
        check(a.name, spec, a)
    except Failure as e:
        if spec["xfail"]:
            print(f"{a.name}: fails as expected until issue {spec['xfail']} lands:\n{e}")
            return 0
        print(f"{a.name}: FAILED: {e}", file=sys.stderr)
        return 1
    if spec["xfail"]:
        print(f"{a.name}: PASSED but is listed as expected to fail ({spec['xfail']}): remove its xfail",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
