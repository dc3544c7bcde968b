#!/usr/bin/python3
"""tgc beside ONNX Runtime, PyTorch and numpy on the perf cases and corpus models: the one command of bench/peers.

Usage (from the repository, after scripts/setup.sh built tgc):
    /usr/bin/python3 bench/peers/peers.py [--cases a,b] [--rounds 9] [--warmup-s 1] [--json peers.json] [--smoke]

For each perf case ($TGC_SHARED_DIR/perf or ../shared/perf) the graph with its input generators cut off
(graphs.py), for each corpus model of cases.py its graph, is compiled by `tgc compile` and linked with
tgc_worker.c; the same computation is built as an ONNX model run by ONNX Runtime (ort_worker.js) and as
a PyTorch function, and for the matrix products as a numpy call (py_worker.py; cases.py holds them).
Every contender is a process of its own, fed the case's own input values; each run rewrites its inputs
first and times the computation only. After about a second of warm-up each, the contenders take turns,
round by round, each round a batch of runs lasting about --batch-ms; the time of a contender is the
median of all its runs, and the ratio's 95% interval comes from a paired bootstrap over the rounds.
Outputs are checked against each other, and tgc's against tinygrad's (the corpus case's expected
output, the perf case's fingerprint).
README.md describes the output.
"""
import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)


def ensure_installed():
    """Runs setup.sh when a peer is missing (PyTorch, onnx, ONNX Runtime's node package)."""
    import importlib.util
    if (all(importlib.util.find_spec(m) for m in ("torch", "onnx"))
            and os.path.isdir(os.path.join(HERE, "node_modules", "onnxruntime-node"))):
        return
    subprocess.run(["bash", os.path.join(HERE, "setup.sh")], check=True)


ensure_installed()
import cases  # noqa: E402
import graphs  # noqa: E402

NAMES = {"tgc": "tgc", "ort": "ONNX Runtime", "ort_own": "ONNX Runtime (profiled)", "torch": "PyTorch",
         "numpy": "numpy"}
# max |a - b| over max |reference|: fp32 reassociation and the peers' exp/tanh approximations stay far below
TOLERANCE = 1e-4


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cases", default="", help="comma list: keep cases whose name contains one of these")
    p.add_argument("--rounds", type=int, default=9)
    p.add_argument("--warmup-s", type=float, default=1.0, help="warm-up per contender and case")
    p.add_argument("--batch-ms", type=float, default=150.0, help="a contender's turn in one round lasts about this")
    p.add_argument("--json", default="peers.json")
    p.add_argument("--tgc", default=os.path.join(REPO, "build", "tools", "tgc", "tgc"))
    p.add_argument("--shared", default=os.environ.get("TGC_SHARED_DIR", os.path.join(REPO, "..", "shared")))
    p.add_argument("--no-first-result", action="store_true", help="skip the transformer block's time to first result")
    p.add_argument("--smoke", action="store_true", help="matmul_512, softmax and d1 only, 1 round, short warm-up: "
                                                        "every part runs, the numbers mean nothing")
    a = p.parse_args()
    if a.smoke:
        a.cases, a.rounds, a.warmup_s, a.batch_ms = a.cases or "matmul_512,softmax,d1", 1, 0.05, 5.0
    return a


def run_checked(argv, **kw):
    r = subprocess.run(argv, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({r.returncode}):\n{r.stderr[-3000:]}")
    return r


# --- preparing a case ------------------------------------------------------------------------------

def case_dir(case, args):
    kind = "corpus" if cases.CASES[case].get("corpus") else "perf"
    return os.path.join(args.shared, kind, case)


def case_inputs(case, folder):
    """[(tensor name, flat float32 values)] in graph order, and the graph tgc compiles: a perf case's graph
    with its input generators cut off (their values computed here), a corpus case's graph and .npy files."""
    graph = graphs.load(os.path.join(folder, "graph.json"))
    if cases.CASES[case].get("corpus"):
        ids = sorted(int(k) for k in graph["buffers"])
        files = [graph["buffers"][str(i)]["file"] for i in ids]
        return [(f"n{i}", np.load(os.path.join(folder, f)).reshape(-1)) for i, f in zip(ids, files)], graph
    stripped, stores = graphs.strip_generators(graph)
    return [(f"n{b}", graphs.generator_values(graph, s)) for b, s in sorted(stores.items())], stripped


def prepare_case(case, folder, work, args):
    """Writes the case folder: inputs, case.json, model.onnx, the linked tgc worker; returns its facts."""
    spec = cases.CASES[case]
    values, graph = case_inputs(case, folder)
    if len(values) != len(spec["inputs"]):
        raise RuntimeError(f"{case}: the graph has {len(values)} inputs, cases.py lists {len(spec['inputs'])}")
    inputs = []
    for (name, v), shape in zip(values, spec["inputs"]):
        if v.size != math.prod(shape) or v.dtype != np.float32:
            raise RuntimeError(f"{case}: input {name} is {v.dtype}[{v.size}], cases.py expects float32{shape}")
        v.tofile(os.path.join(work, f"{name}.bin"))
        inputs.append({"file": f"{name}.bin", "shape": shape})
    with open(os.path.join(work, "case.json"), "w") as f:
        json.dump({"case": case, "inputs": inputs, "output": spec["output"]}, f)
    with open(os.path.join(work, "graph.json"), "w") as f:
        json.dump(graph, f)
    cases.save_onnx(case, os.path.join(work, "model.onnx"))
    cases.save_identity(os.path.join(work, "identity.onnx"))
    return {"compile_ms": build_tgc_worker(work, args.tgc)}


def build_tgc_worker(work, tgc):
    """tgc compile of the stripped graph (all optimizations, the host CPU), linked with tgc_worker.c."""
    t0 = time.perf_counter()
    run_checked([tgc, "compile", os.path.join(work, "graph.json"), "-o", os.path.join(work, "m.o"), "--name", "m"])
    compile_ms = (time.perf_counter() - t0) * 1e3
    runtime = os.path.join(os.path.dirname(tgc), "..", "..", "lib", "Runtime")
    run_checked(["clang-22", "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-I",
                 os.path.join(REPO, "lib", "Runtime"),
                 "-c", os.path.join(HERE, "tgc_worker.c"), "-o", os.path.join(work, "worker.o")])
    run_checked(["clang++-22", "-o", os.path.join(work, "tgc_worker"), os.path.join(work, "worker.o"),
                 os.path.join(work, "m.o"), "-Wl,--defsym=tgc_peer_model=m_model",
                 os.path.join(runtime, "libtgc_runtime.a"), "-lm", "-fuse-ld=lld"])
    return compile_ms


# --- the contenders --------------------------------------------------------------------------------

# Every contender's environment: 2 threads in every pool; glibc keeps freed memory in the heap (no mmap per big
# block, no trimming), so a tensor allocated afresh at each run reuses pages already mapped instead of faulting
# in new ones (a page fault costs microseconds on this virtual machine: PyTorch's eager elementwise chain spent
# most of its time in them), as a deployment tunes its allocator; and glibc asks for transparent huge pages for
# its heap (glibc.malloc.hugetlb=1), as numpy does for its arrays and tgc_alloc_tensor for the tgc worker's
# tensors, so ONNX Runtime's Node buffers stream through the TLB as the others' do (64 MiB in 4 KiB pages took
# ~12% longer to sum here).
WORKER_ENV = {"OMP_NUM_THREADS": "2", "OPENBLAS_NUM_THREADS": "2", "MKL_NUM_THREADS": "2",
              "MALLOC_MMAP_MAX_": "0", "MALLOC_TRIM_THRESHOLD_": str(2**63),
              "GLIBC_TUNABLES": "glibc.malloc.hugetlb=1"}


def openblas_coretype():
    """OpenBLAS's AVX-512 kernels where the CPU has AVX-512 (None elsewhere): Debian's OpenBLAS (0.3.21) does not
    know AMD's Zen 4 and 5 and runs its AVX2 (Haswell) kernels there, at half the FMA width (numpy's matmul_2048:
    85 ms instead of 47), and so does an environment that sets OPENBLAS_CORETYPE=Haswell; a user tuning it sets
    the AVX-512 kernels, so the peers get them whatever the environment says."""
    with open("/proc/cpuinfo") as f:
        flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
    return "SkylakeX" if all(f in flags for f in ("avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl")) else None


class Worker:
    """One contender's process, spoken to line by line."""

    def __init__(self, name, argv):
        self.name = name
        self.runs = 0  # every run so far, warm-up included (ORT's profile lists them all)
        env = dict(os.environ, **WORKER_ENV)
        if openblas_coretype():
            env["OPENBLAS_CORETYPE"] = openblas_coretype()
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        self.expect("ready")

    def ask(self, line):
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline()
        if not answer:
            raise RuntimeError(f"{self.name}: the worker ended (exit {self.proc.wait()}) after '{line}'")
        return answer.strip()

    def expect(self, word):
        line = self.proc.stdout.readline().strip()
        if line != word:
            raise RuntimeError(f"{self.name}: expected '{word}', got '{line}' (exit {self.proc.poll()})")

    def run(self, count):
        times = [float(t) for t in self.ask(f"run {count}").split()]
        self.runs += len(times)
        return times

    def cpu_ns(self):
        """CPU time of all the process's threads so far."""
        total = 0
        for task in os.listdir(f"/proc/{self.proc.pid}/task"):
            try:
                with open(f"/proc/{self.proc.pid}/task/{task}/schedstat") as f:
                    total += int(f.read().split()[0])
            except (FileNotFoundError, ProcessLookupError):
                pass  # a thread that ended
        return total

    def settle(self, limit_s=2.0):
        """Waits until the process is idle: thread pools (OpenBLAS's, OpenMP's, ONNX Runtime's, tgc's) spin
        for a while after a call, and a spinning contender would take a core from the next one timed."""
        t0, last = time.perf_counter(), self.cpu_ns()
        while time.perf_counter() - t0 < limit_s:
            time.sleep(0.01)
            now = self.cpu_ns()
            if now - last < 0.5e6:  # under 5% of a core over 10 ms
                return
            last = now

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.write("quit\n")
            self.proc.stdin.flush()
        self.proc.wait()


def start_workers(case, work):
    argv = {"tgc": [os.path.join(work, "tgc_worker"), work],
            "ort": ["node", os.path.join(HERE, "ort_worker.js"), work],
            "ort_own": ["node", os.path.join(HERE, "ort_worker.js"), work, "--profile"],
            "torch": [sys.executable, os.path.join(HERE, "py_worker.py"), "torch", work],
            "numpy": [sys.executable, os.path.join(HERE, "py_worker.py"), "numpy", work]}
    names = ["tgc", "ort", "ort_own", "torch"] + (["numpy"] if "numpy" in cases.CASES[case] else [])
    workers = []
    try:
        for n in names:
            workers.append(Worker(n, argv[n]))
    except Exception:
        for w in workers:
            w.close()
        raise
    return workers


def warm_up(worker, seconds, batch_ms):
    """Runs until `seconds` passed; returns the batch size that lasts about batch_ms."""
    t0, times = time.perf_counter(), []
    while True:
        times += worker.run(1 if not times else max(1, min(50, int(0.1e3 / max(statistics.median(times), 1e-3)))))
        if time.perf_counter() - t0 >= seconds:
            return max(1, round(batch_ms / max(statistics.median(times[-10:]), 1e-3)))


def measure(workers, args):
    """Interleaved rounds after the warm-up: name -> each round's list of run times (ms)."""
    batch = {}
    for w in workers:
        batch[w.name] = warm_up(w, args.warmup_s, args.batch_ms)
        w.settle()
    rounds = {w.name: [] for w in workers}
    for r in range(args.rounds):
        for w in workers[r % len(workers):] + workers[:r % len(workers)]:
            rounds[w.name].append(w.run(batch[w.name]))
            w.settle()
    return rounds


def flat(runs_by_round):
    return [t for r in runs_by_round for t in r]


MIN_ROUNDS_FOR_INTERVAL = 5  # fewer rounds resample to a few distinct values: no interval


def ratio_interval(peer_rounds, tgc_rounds, resamples=2000, seed=0):
    """The 95% interval of median(peer) / median(tgc), by a paired bootstrap over the rounds: each resample
    draws rounds with replacement, the same rounds for both, since the rounds of one case ran side by side and a
    round's slow or fast phase of the host is shared by both contenders."""
    n = min(len(peer_rounds), len(tgc_rounds))
    if n < MIN_ROUNDS_FOR_INTERVAL:
        return None
    rng = np.random.default_rng(seed)
    ratios = []
    for _ in range(resamples):
        pick = rng.integers(0, n, n)
        ratios.append(np.median(flat(peer_rounds[i] for i in pick)) / np.median(flat(tgc_rounds[i] for i in pick)))
    lo, hi = np.percentile(ratios, [2.5, 97.5])
    return float(lo), float(hi)


def verdict(interval):
    """ahead / behind when the whole interval is above / below 1, else level (no difference this run can tell);
    '-' without an interval (too few rounds)."""
    if interval is None:
        return "-"
    lo, hi = interval
    return "ahead" if lo > 1 else "behind" if hi < 1 else "level"


def best_ort(samples, profiled):
    """ONNX Runtime's better measurement, in place of its two contenders' samples: the wall time of the Node call
    (which includes the binding copying the output into a fresh buffer: milliseconds for 64 MB) or ORT's own
    time of each measured run in the profiled process (its profiler's model_run, which includes the profiler's
    cost: tens of microseconds a run on the small models). Both are in the JSON."""
    own = [float(t) for t in profiled.ask("profile").split()]
    if len(own) != profiled.runs:
        raise RuntimeError(f"ONNX Runtime's profile lists {len(own)} runs, the worker made {profiled.runs}")
    own = own[len(own) - len(flat(samples["ort_own"])):]
    both = {"node_call_ms": statistics.median(flat(samples["ort"])), "profiled_model_run_ms": statistics.median(own)}
    if both["profiled_model_run_ms"] < both["node_call_ms"]:
        sizes, at = [len(r) for r in samples["ort_own"]], 0
        samples["ort"] = []
        for k in sizes:
            samples["ort"].append(own[at:at + k])
            at += k
    del samples["ort_own"]
    return both


# --- checks ----------------------------------------------------------------------------------------

def check_outputs(workers, work, shape):
    """Relative max difference of each contender's output from tgc's (None for tgc itself)."""
    outs = {}
    for w in workers:
        if w.ask("save") != "ok":
            raise RuntimeError(f"{w.name}: save failed")
        outs[w.name] = np.fromfile(os.path.join(work, f"out.{w.name}.bin"), dtype=np.float32).reshape(shape)
    ref = outs["tgc"].astype(np.float64)
    scale = max(float(np.max(np.abs(ref))), 1e-30)
    return {n: float(np.max(np.abs(o.astype(np.float64) - ref))) / scale for n, o in outs.items() if n != "tgc"}


def check_reference(work, folder, corpus):
    """tgc's output against tinygrad's: the corpus case's expected/out0.npy (max difference over max |value|),
    or the perf case's recorded fingerprint (|sum difference| / abs_sum, and the first values)."""
    out = np.fromfile(os.path.join(work, "out.tgc.bin"), dtype=np.float32).astype(np.float64)
    if corpus:
        want = np.load(os.path.join(folder, "expected", "out0.npy")).astype(np.float64).reshape(-1)
        return float(np.max(np.abs(out - want))) / max(float(np.max(np.abs(want))), 1e-30)
    with open(os.path.join(folder, "meta.json")) as f:
        fp = json.load(f)["output_fingerprint"][0]
    first = np.asarray(fp["first"], dtype=np.float64)
    sum_err = abs(out.sum() - fp["sum"]) / max(fp["abs_sum"], 1e-30)
    first_err = float(np.max(np.abs(out[:first.size] - first))) / max(float(np.max(np.abs(first))), 1e-30)
    return max(sum_err, first_err)


# --- one case --------------------------------------------------------------------------------------

def bench_case(case, args):
    work, folder = tempfile.mkdtemp(prefix=f"peers-{case}-"), case_dir(case, args)
    try:
        row = {"case": case, "load_average": os.getloadavg()[0], **prepare_case(case, folder, work, args)}
        workers = start_workers(case, work)
        try:
            samples = measure(workers, args)
            row["errors"] = check_outputs(workers, work, cases.CASES[case]["output"])
            row["ort_measurements"] = best_ort(samples, next(w for w in workers if w.name == "ort_own"))
            ort = next(w for w in workers if w.name == "ort")
            row["ort_call_overhead_ms"] = statistics.median(float(t) for t in ort.ask("overhead 2000").split())
        finally:
            for w in workers:
                w.close()
        row["tinygrad_error"] = check_reference(work, folder, cases.CASES[case].get("corpus", False))
        row["ms"] = {n: statistics.median(flat(s)) for n, s in samples.items()}
        row["min_ms"] = {n: min(flat(s)) for n, s in samples.items()}
        row["runs"] = {n: len(flat(s)) for n, s in samples.items()}
        peers = {n: ms for n, ms in row["ms"].items() if n != "tgc"}
        row["best_peer"] = min(peers, key=peers.get)
        row["ratio"] = peers[row["best_peer"]] / row["ms"]["tgc"]
        row["ratio_95"] = ratio_interval(samples[row["best_peer"]], samples["tgc"])
        row["verdict"] = verdict(row["ratio_95"])
        row["ok"] = row["tinygrad_error"] <= TOLERANCE and all(e <= TOLERANCE for e in row["errors"].values())
        if case == "transformer_block" and not args.no_first_result:
            row["first_result"] = first_result(folder, work, args)
            m = row["first_result"]["median"]
            row["ok"] = row["ok"] and all(m.get(k, 0) <= TOLERANCE for k in ("tgc_run_error", "tinygrad_error"))
        return row
    finally:
        shutil.rmtree(work, ignore_errors=True)


def timed(argv, env=None):
    t0 = time.perf_counter()
    r = run_checked(argv, env=env)
    return (time.perf_counter() - t0) * 1e3, r.stdout


def first_result(folder, work, args, trials=3):
    """Time to the first result in fresh processes, the median of `trials` each: `tgc run` of the perf graph
    (read, schedule, JIT, run, output written) and `tgc compile` (object and header), each cold (an empty kernel
    cache) and warm (run again on the cache the cold one filled), ONNX Runtime's session creation + first run,
    tinygrad's first realize (disk caches off); each also as the whole process's wall time (start-up and imports
    included)."""
    out = {k: [] for k in ("tgc_run_cold_ms", "tgc_run_warm_ms", "tgc_compile_cold_ms", "tgc_compile_warm_ms",
                           "ort_session_ms", "ort_first_run_ms", "ort_process_ms",
                           "tinygrad_first_realize_ms", "tinygrad_process_ms")}
    tinygrad = os.path.join(args.shared, "tinygrad")
    tg_env = dict(os.environ, PYTHONPATH=tinygrad, DEV="CPU", CC="clang-22", CACHELEVEL="0")
    graph = os.path.join(folder, "graph.json")
    for trial in range(trials):
        for tool, argv in (("run", [args.tgc, "run", graph, "--output-dir", os.path.join(work, "tgc-run")]),
                           ("compile", [args.tgc, "compile", graph, "-o", os.path.join(work, "tgc-compile", "m.o")])):
            cache = ["--cache-dir", os.path.join(work, f"kernel-cache-{tool}-{trial}")]
            for state in ("cold", "warm"):
                ms, _ = timed(argv + cache)
                out[f"tgc_{tool}_{state}_ms"].append(ms)
        ms, text = timed(["node", os.path.join(HERE, "ort_worker.js"), work, "--first-result"])
        ort = json.loads(text)
        out["ort_process_ms"].append(ms)
        out["ort_session_ms"].append(ort["session_ms"])
        out["ort_first_run_ms"].append(ort["first_run_ms"])
        if os.path.isdir(tinygrad):
            ms, text = timed(["/usr/bin/python3", os.path.join(HERE, "tinygrad_first.py"), work], tg_env)
            out["tinygrad_process_ms"].append(ms)
            out["tinygrad_first_realize_ms"].append(json.loads(text.strip().splitlines()[-1])["first_realize_ms"])
    med = {k: statistics.median(v) for k, v in out.items() if v}
    ref = np.fromfile(os.path.join(work, "out.tgc.bin"), dtype=np.float32)
    others = {"tgc_run_error": np.load(os.path.join(work, "tgc-run", "out0.npy")).reshape(-1)}
    if os.path.exists(os.path.join(work, "out.tinygrad.bin")):
        others["tinygrad_error"] = np.fromfile(os.path.join(work, "out.tinygrad.bin"), dtype=np.float32)
    for k, v in others.items():
        med[k] = float(np.max(np.abs(v - ref)) / np.max(np.abs(ref)))
    return {"median": med, "samples": out}


# --- report ----------------------------------------------------------------------------------------

def fmt(v):
    return "-" if v is None else f"{v:.3g}" if v < 10 else f"{v:.1f}"


def print_table(rows):
    print("\n| case | tgc ms | ONNX Runtime ms | PyTorch ms | numpy ms | best peer / tgc | 95% interval | tgc is "
          "| max rel. diff vs tgc | check (tgc vs tinygrad) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        if "error" in r:
            print(f"| {r['case']} | failed: {r['error'].splitlines()[0][:80]} | | | | | | | | |")
            continue
        ms = r["ms"]
        diffs = ", ".join(f"{NAMES[n]} {e:.1e}" for n, e in r["errors"].items())
        print(f"| {r['case']} | {fmt(ms['tgc'])} | {fmt(ms.get('ort'))} | {fmt(ms.get('torch'))} | "
              f"{fmt(ms.get('numpy'))} | {r['ratio']:.2f}x ({NAMES[r['best_peer']]}) | "
              f"{'%.2f-%.2fx' % tuple(r['ratio_95']) if r['ratio_95'] else '-'} | {r['verdict']} | {diffs} | "
              f"{'ok' if r['ok'] else 'MISMATCH'} (tinygrad {r['tinygrad_error']:.0e}) |")
    ratios = [r["ratio"] for r in rows if "ratio" in r]
    if ratios:
        print(f"\ngeometric mean of best peer / tgc: {math.exp(sum(map(math.log, ratios)) / len(ratios)):.2f}x "
              f"over {len(ratios)} cases (> 1: tgc ahead)")
        behind = [r["case"] for r in rows if r.get("verdict") == "behind"]
        print(f"rows where tgc is behind the best peer (the whole 95% interval below 1): "
              f"{', '.join(behind) if behind else 'none'}")
    overhead = [r["ort_call_overhead_ms"] for r in rows if "ort_call_overhead_ms" in r]
    if overhead:
        print(f"ONNX Runtime: the better of the Node call's wall time and its profiler's model_run (the JSON has "
              f"both); the smallest Node call (one float through Identity) takes {statistics.median(overhead):.4f} ms")
    for r in rows:
        if "first_result" in r:
            m = r["first_result"]["median"]
            print(f"time to first result, transformer block (median of 3 fresh processes; in brackets the whole "
                  f"process): tgc run cold {fmt(m['tgc_run_cold_ms'])} ms, warm {fmt(m['tgc_run_warm_ms'])} ms "
                  f"(tgc compile cold {fmt(m['tgc_compile_cold_ms'])} ms, warm {fmt(m['tgc_compile_warm_ms'])} ms)"
                  f" | ONNX Runtime session "
                  f"{fmt(m['ort_session_ms'])} ms + first run {fmt(m['ort_first_run_ms'])} ms "
                  f"[{fmt(m['ort_process_ms'])} ms] | tinygrad first realize {fmt(m.get('tinygrad_first_realize_ms'))}"
                  f" ms [{fmt(m.get('tinygrad_process_ms'))} ms]")


def environment():
    """The versions compared and the machine's load when the run starts (other work skews every contender)."""
    import torch
    with open(os.path.join(HERE, "node_modules", "onnxruntime-node", "package.json")) as f:
        ort = json.load(f)["version"]
    blas = os.path.realpath("/usr/lib/x86_64-linux-gnu/libblas.so.3")
    info = {"onnxruntime": ort, "torch": torch.__version__, "numpy": np.__version__, "blas": blas,
            "openblas_coretype": openblas_coretype() or os.environ.get("OPENBLAS_CORETYPE"),
            "load_average_start": os.getloadavg()}
    print(f"ONNX Runtime {ort}, PyTorch {torch.__version__}, numpy {np.__version__} ({blas}, "
          f"OPENBLAS_CORETYPE={info['openblas_coretype']}); "
          f"load average {info['load_average_start'][0]:.1f}", file=sys.stderr)
    return info


def main():
    args = parse_args()
    if not os.path.exists(args.tgc):
        sys.exit(f"peers.py: error: {args.tgc} is missing: build tgc (scripts/setup.sh) or pass --tgc")
    wanted = [c for c in cases.CASES if not args.cases or any(s in c for s in args.cases.split(","))]
    rows, info = [], environment()
    for case in wanted:
        print(f"{case} ... (load average {os.getloadavg()[0]:.1f})", file=sys.stderr, flush=True)
        try:
            rows.append(bench_case(case, args))
        except Exception as e:  # a failing case is a row, the others still run
            rows.append({"case": case, "error": str(e)})
        with open(args.json, "w") as f:
            json.dump({**info, "rounds": args.rounds, "warmup_s": args.warmup_s, "threads": 2,
                       "load_average_end": os.getloadavg(), "rows": rows}, f, indent=1)
    print_table(rows)
    return 0 if all("error" not in r and r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
