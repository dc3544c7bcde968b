#!/usr/bin/env python3
"""Checks tgc against the real tinygrad on one program of programs.py.

    check_program.py NAME --tgc build/tools/tgc/tgc --tinygrad ../shared/tinygrad --work DIR

1. exports the program live with tools/export/tgc_export.py (--expected: tinygrad realizes it in this process
   and its outputs, changed buffers and kernel count are written beside the graph);
2. `tgc opt --passes=schedule --stats`: tgc's kernel count must equal tinygrad's;
3. `tgc run`: every output and every changed buffer must equal tinygrad's;
4. `tgc compile --emit=exe` and the launcher on the exported inputs: the same;
5. for `c_program` programs, `tgc compile --weights=embed` linked with c_program.c through the header: the same.
Ints and bools must be equal; floats within TOLERANCE of their dtype (docs/tinygrad.md). An `xfail` program must
fail in tgc, and this check fails once it does not. Exit 0 passed (or failed as expected), 1 failed, 77 skipped:
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


def compare(got_path: str, want_path: str, dtype: str, what: str):
    import numpy as np
    got, want = np.load(got_path).reshape(-1), np.load(want_path).reshape(-1)
    if got.size != want.size or got.dtype != want.dtype:
        raise Failure(f"{what}: {got.dtype}[{got.size}], tinygrad {want.dtype}[{want.size}]")
    if dtype not in TOLERANCE:
        bad = np.flatnonzero(got != want)
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


def compare_results(case: str, out_dir: str, meta: dict, how: str):
    for o in meta["outputs"]:
        compare(os.path.join(out_dir, f"out{o['index']}.npy"), os.path.join(case, o["file"]), o["dtype"],
                f"{how}: out{o['index']}")
    for b in meta["buffers_after"]:
        compare(os.path.join(out_dir, f"n{b['node']}.after.npy"), os.path.join(case, b["file"]), b["dtype"],
                f"{how}: n{b['node']} after the run")


def tgc_kernel_count(tgc: str, graph: str) -> int:
    stats = run([tgc, "opt", graph, "--passes=schedule", "--stats", "-o", os.devnull])
    m = re.search(r"kernels (\d+)", stats)
    if not m:
        raise Failure(f"no kernel count in tgc's --stats:\n{stats}")
    return int(m.group(1))


def check_launcher(tgc: str, case: str, meta: dict, work: str):
    exe = os.path.join(work, "exe", "model")
    run([tgc, "compile", os.path.join(case, "graph.json"), "-o", exe + ".o", "--emit=exe"])
    inputs = [f"--input=n{i['node']}={os.path.join(case, i['file'])}" for i in meta["inputs"]]
    run([exe, *inputs, "--output-dir", os.path.join(work, "exe", "out")])
    compare_results(case, os.path.join(work, "exe", "out"), meta, "launcher")


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


def check(name: str, spec: dict, a) -> None:
    sys.path.insert(0, os.path.join(ROOT, "tools", "export"))
    import tgc_export
    case = os.path.join(a.work, "case")
    tgc_export.export(spec["fn"](), case, f"test/tinygrad/programs.py:{name}", expected=True)
    with open(os.path.join(case, "meta.json")) as f:
        meta = json.load(f)
    graph = os.path.join(case, "graph.json")
    # tinygrad's realize skips a constant or plain-buffer output (its .numpy() computes it later, uncounted).
    kernels = tgc_kernel_count(a.tgc, graph) if meta["realize_filter"]["scheduled"] == len(meta["outputs"]) else None
    run([a.tgc, "run", graph, "--output-dir", os.path.join(a.work, "run")])
    compare_results(case, os.path.join(a.work, "run"), meta, "tgc run")
    if kernels is not None and kernels != meta["kernel_count"]:
        raise Failure(f"tgc schedules {kernels} kernels, tinygrad {meta['kernel_count']}")
    check_launcher(a.tgc, case, meta, a.work)
    if spec["c_program"]:
        check_c_program(a.tgc, case, meta, a.work, a.cc, a.runtime)
    counts = f"{kernels} kernels" if kernels is not None else "(outputs tinygrad does not schedule: kernels not counted)"
    print(f"{name}: {len(meta['outputs'])} outputs, {len(meta['buffers_after'])} changed buffers and "
          f"{counts} as tinygrad's, through tgc run and the launcher"
          + (" and from C" if spec["c_program"] else ""))


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
