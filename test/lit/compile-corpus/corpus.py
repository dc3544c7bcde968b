"""Every ok corpus case through `tgc compile graph.json --emit=exe` and the
generic launcher: inputs from inputs/n<K>.npy, outputs and buffers_after
compared with expected/*.npy (ints and bools exactly; floats within
atol + rtol*|want|, rtol 1e-4 / atol 1e-5 as CorpusRunTest allows for
transcendentals). A family of cases `<case>@<value>` (one tinygrad Variable
bound to each value) is also compiled once, from its first member's graph,
and run at every member's values, through the launcher's --var and through
`tgc run --var` (on the host only): each member's inputs go to the tensors of the same buffers
(tinygrad's buffer ids), its outputs are compared with its expected files. Usage:
  corpus.py TGC CORPUS WORKDIR [--skip PREFIX]... [--case NAME]... [--target TRIPLE --emulator PROGRAM]
--case keeps only the named cases; --target compiles for another machine (tgc compile --target, the launcher
linked for it) and --emulator runs its programs (qemu-aarch64), with 4 threads whatever the host has.
Prints one line per case ('(threaded)' when its object calls the runtime's thread pool) and
'cases: N, failures: M' at the end; exits 1 on any mismatch."""
import argparse
import json
import math
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "compile", "Inputs"))
from npy import load  # noqa: E402  (the .npy reader the compile tests share)

def compare(got, want, flat):
    """'' if equal enough, else why not. In-outs are buffers: `flat` compares element counts, not shapes."""
    if got[0][1:] != want[0][1:] or (len(got[2]) != len(want[2]) if flat else got[1] != want[1]):
        return "got %s%s, want %s%s" % (got[0], got[1], want[0], want[1])
    exact = want[0][1] != "f"
    for i, (g, w) in enumerate(zip(got[2], want[2])):
        if exact:
            if g != w:
                return "element %d: %r != %r" % (i, g, w)
        elif math.isnan(w) or math.isnan(g):
            if not (math.isnan(w) and math.isnan(g)):
                return "element %d: %r != %r" % (i, g, w)
        elif math.isinf(w) or math.isinf(g):
            if g != w:
                return "element %d: %r != %r" % (i, g, w)
        elif abs(g - w) > 1e-5 + 1e-4 * abs(w):
            return "element %d: %r != %r" % (i, g, w)
    return ""


def buffer_slots(d):
    """graph.json's BUFFER node ids -> their tinygrad buffer ids (ParamArg.slot)."""
    nodes = json.load(open(os.path.join(d, "graph.json")))["nodes"]
    return {i: n["arg"]["v"]["slot"] for i, n in enumerate(nodes)
            if n["op"] == "BUFFER" and isinstance(n.get("arg"), dict) and n["arg"].get("cls") == "ParamArg"}


def compare_outputs(case, d, meta, res, name_of):
    """Compares what a run wrote to `res` with case d's expected files; name_of maps d's node ids to the
    compiled model's tensor names. Returns (arrays compared, failures)."""
    checked, failures = 0, []
    wants = [("out%d.npy" % o["index"], o["file"]) for o in meta["outputs"]
             if o.get("file") and o.get("sink_index") is not None]
    wants += [("%s.after.npy" % name_of(b["node"]), b["file"]) for b in meta.get("buffers_after", [])]
    for mine, theirs in wants:
        path = os.path.join(res, mine)
        if not os.path.exists(path):
            failures.append("%s: no %s written" % (case, mine))
            continue
        why = compare(load(path), load(os.path.join(d, theirs)), mine.endswith(".after.npy"))
        if why:
            failures.append("%s: %s vs %s: %s" % (case, mine, theirs, why))
        checked += 1
    return checked, failures


def check_family(tgc, corpus, family, members, out):
    """Compiles the first member's graph once; runs it at every member's values (launcher and tgc run)."""
    first = os.path.join(corpus, members[0])
    exe = os.path.join(out, "model")
    r = subprocess.run([tgc, "compile", os.path.join(first, "graph.json"), "-o", exe + ".o", "--emit=exe"],
                       capture_output=True, text=True)
    if r.returncode:
        return 0, ["%s: tgc compile failed: %s" % (family, r.stderr.strip()[-400:])]
    by_slot = {s: k for k, s in buffer_slots(first).items()}
    checked, failures = 0, []
    for m in members:
        d = os.path.join(corpus, m)
        meta = json.load(open(os.path.join(d, "meta.json")))
        slots = buffer_slots(d)
        name_of = lambda k: "n%d" % by_slot[slots[k]]
        inputs = []
        for b in json.load(open(os.path.join(d, "graph.json")))["buffers"].values():
            if b.get("file"):
                inputs += ["--input", "%s=%s" % (name_of(b["node"]), os.path.join(d, b["file"]))]
        var = ["--var=%s=%d" % kv for kv in sorted(meta["var_vals"].items())]
        for how, cmd in (("launcher", [exe]), ("tgc run", [tgc, "run", os.path.join(first, "graph.json")])):
            res = os.path.join(out, m, how.replace(" ", "_"))
            r = subprocess.run(cmd + inputs + var + ["--output-dir", res], capture_output=True, text=True)
            if r.returncode:
                failures.append("%s (%s from %s): failed: %s" % (m, how, members[0], r.stderr.strip()[-400:]))
                continue
            c, f = compare_outputs("%s (%s from %s)" % (m, how, members[0]), d, meta, res, name_of)
            checked, failures = checked + c, failures + f
    return checked, failures


def check_case(tgc, d, case, meta, out, target=None, emulator=None):
    """Compiles and runs one case; returns (arrays compared, failures, threaded)."""
    exe = os.path.join(out, "model")
    cmd = [tgc, "compile", os.path.join(d, "graph.json"), "-o", exe + ".o", "--emit=obj,exe,header"]
    prog, threads = [exe], []
    if target:
        cmd.append("--target=" + target)
        prog, threads = [emulator, exe], ["--threads", "4"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        return 0, ["%s: tgc compile failed: %s" % (case, r.stderr.strip()[-400:])], False
    # The thread pool's entry is an undefined symbol of the object when a kernel runs on threads.
    threaded = b"tgc_parallel_for\0" in open(exe + ".o", "rb").read()
    listing = subprocess.run(prog + ["--list"], capture_output=True, text=True).stdout.splitlines()[1:]
    args = []
    for line in listing:
        name, role = line.split()[:2]
        f = os.path.join(d, "inputs", name + ".npy")
        if role in ("input", "in-out") and os.path.exists(f):
            args += ["--input", "%s=%s" % (name, f)]
    res = os.path.join(out, "res")
    r = subprocess.run(prog + threads + args + ["--output-dir", res], capture_output=True, text=True)
    if r.returncode:
        return 0, ["%s: the model failed: %s" % (case, r.stderr.strip()[-400:])], threaded
    checked, failures = compare_outputs(case, d, meta, res, lambda k: "n%d" % k)
    return checked, failures, threaded


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tgc")
    ap.add_argument("corpus")
    ap.add_argument("work")
    ap.add_argument("--skip", action="append", default=[])
    ap.add_argument("--case", action="append", default=[])
    ap.add_argument("--target")
    ap.add_argument("--emulator")
    a = ap.parse_args()
    if bool(a.target) != bool(a.emulator):
        ap.error("--target and --emulator go together")
    failures, cases = [], 0
    families = {}
    for case in sorted(os.listdir(a.corpus)):
        d = os.path.join(a.corpus, case)
        if not os.path.exists(os.path.join(d, "meta.json")) or any(case.startswith(p) for p in a.skip):
            continue
        if a.case and case not in a.case:
            continue
        meta = json.load(open(os.path.join(d, "meta.json")))
        if meta.get("status") != "ok":
            continue
        cases += 1
        if meta.get("variables") and "@" in case:
            families.setdefault(case.split("@")[0], []).append(case)
        checked, failed, threaded = check_case(a.tgc, d, case, meta, os.path.join(a.work, case), a.target, a.emulator)
        failures += failed
        print("%s: %d arrays compared%s" % (case, checked, " (threaded)" if threaded else ""))
    for family, members in sorted(families.items()) if not a.target else []:
        checked, failed = check_family(a.tgc, a.corpus, family, members, os.path.join(a.work, family))
        failures += failed
        print("%s: compiled once, %d members, %d arrays compared" % (family, len(members), checked))
    for f in failures:
        print("FAIL", f)
    missing = set(a.case) - set(os.listdir(a.corpus))
    failures += ["--case %s: no such case" % c for c in sorted(missing)]
    print("cases: %d, failures: %d" % (cases, len(failures)))
    return 1 if failures else 0


sys.exit(main())
