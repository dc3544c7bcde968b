"""One contender in a process of its own: PyTorch (eager, 2 threads) or numpy (OpenBLAS, 2 threads).

Usage: py_worker.py torch|numpy DIR. PyTorch runs the case's `torch_out` form (into a preallocated output)
where it has one, else its eager function. DIR/case.json names the case and its input files (raw float32);
commands on stdin, one a line (the protocol of peers.py): `run N` answers N run times in ms, each run
after the inputs are rewritten from the master copy; `save` writes the output to DIR/out.<kind>.bin;
`quit`.
"""
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def main():
    kind, folder = sys.argv[1], sys.argv[2]
    with open(os.path.join(folder, "case.json")) as f:
        spec = json.load(f)
    import numpy as np
    import cases
    case = cases.CASES[spec["case"]]
    masters = [np.fromfile(os.path.join(folder, i["file"]), dtype=np.float32).reshape(i["shape"])
               for i in spec["inputs"]]
    if kind == "torch":
        import torch
        torch.set_num_threads(2)
        torch.set_grad_enabled(False)
        live = [torch.from_numpy(m.copy()) for m in masters]
        out = [torch.empty(spec["output"])]

        def rewrite():
            for t, m in zip(live, masters):
                t.numpy()[...] = m

        def run_out():
            case["torch_out"](torch, *live, out[0])

        def run_eager():
            out[0] = case["torch"](torch, *live)
        run = run_out if "torch_out" in case else run_eager

        def result():
            return out[0].contiguous().numpy()
    else:
        live = [m.copy() for m in masters]
        out = np.empty(spec["output"], dtype=np.float32)
        fn = case["numpy"]

        def rewrite():
            for t, m in zip(live, masters):
                t[...] = m

        def run():
            fn(np, *live, out)

        def result():
            return out
    serve(folder, kind, rewrite, run, result)


def serve(folder, kind, rewrite, run, result):
    print("ready", flush=True)
    for line in sys.stdin:
        cmd = line.split()
        if not cmd or cmd[0] == "quit":
            break
        if cmd[0] == "run":
            times = []
            for _ in range(int(cmd[1])):
                rewrite()
                t0 = time.perf_counter()
                run()
                times.append((time.perf_counter() - t0) * 1e3)
            print(" ".join(f"{t:.6f}" for t in times), flush=True)
        elif cmd[0] == "save":
            result().astype("float32").tofile(os.path.join(folder, f"out.{kind}.bin"))
            print("ok", flush=True)


if __name__ == "__main__":
    main()
