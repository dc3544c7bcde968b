"""Every ok corpus case through `tgc compile graph.json --emit=exe` and the
generic launcher: inputs from inputs/n<K>.npy, outputs and buffers_after
compared with expected/*.npy (ints and bools exactly; floats within
atol + rtol*|want|, rtol 1e-4 / atol 1e-5 as CorpusRunTest allows for
transcendentals). Usage: corpus.py TGC CORPUS WORKDIR [--skip PREFIX]...
Prints one line per case and 'cases: N ok' at the end; exits 1 on any mismatch."""
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


def pending_issue(meta):
    """The open issue a case waits for (test/unit/CorpusFiles.h applies the same rule): cases that bind
    tinygrad Variables wait for #30."""
    return "#30 (Variables)" if meta.get("variables") else None


def check_case(tgc, d, case, meta, out):
    """Compiles and runs one case; returns (arrays compared, failures)."""
    exe = os.path.join(out, "model")
    r = subprocess.run([tgc, "compile", os.path.join(d, "graph.json"), "-o", exe + ".o", "--emit=exe,header"],
                       capture_output=True, text=True)
    if r.returncode:
        return 0, ["%s: tgc compile failed: %s" % (case, r.stderr.strip()[-400:])]
    listing = subprocess.run([exe, "--list"], capture_output=True, text=True).stdout.splitlines()[1:]
    args = []
    for line in listing:
        name, role = line.split()[:2]
        f = os.path.join(d, "inputs", name + ".npy")
        if role in ("input", "in-out") and os.path.exists(f):
            args += ["--input", "%s=%s" % (name, f)]
    res = os.path.join(out, "res")
    r = subprocess.run([exe] + args + ["--output-dir", res], capture_output=True, text=True)
    if r.returncode:
        return 0, ["%s: the model failed: %s" % (case, r.stderr.strip()[-400:])]
    checked, failures = 0, []
    wants = [("out%d.npy" % o["index"], o["file"]) for o in meta["outputs"]
             if o.get("file") and o.get("sink_index") is not None]
    wants += [("n%d.after.npy" % b["node"], b["file"]) for b in meta.get("buffers_after", [])]
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


def main():
    tgc, corpus, work = sys.argv[1:4]
    skip = [sys.argv[i + 1] for i, a in enumerate(sys.argv) if a == "--skip"]
    failures, cases = [], 0
    for case in sorted(os.listdir(corpus)):
        d = os.path.join(corpus, case)
        if not os.path.exists(os.path.join(d, "meta.json")) or any(case.startswith(p) for p in skip):
            continue
        meta = json.load(open(os.path.join(d, "meta.json")))
        if meta.get("status") != "ok":
            continue
        cases += 1
        checked, failed = check_case(tgc, d, case, meta, os.path.join(work, case))
        issue = pending_issue(meta)
        if issue and failed:
            print("%s: fails as expected until issue %s lands" % (case, issue))
        elif issue:
            failures.append("%s: passes now, but is listed as failing until issue %s lands: remove it" % (case, issue))
        else:
            failures += failed
            print("%s: %d arrays compared" % (case, checked))
    for f in failures:
        print("FAIL", f)
    print("cases: %d, failures: %d" % (cases, len(failures)))
    return 1 if failures else 0


sys.exit(main())
