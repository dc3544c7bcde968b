"""tinygrad's time to first result for the transformer block: a fresh process, its disk caches off.

Run under tinygrad (peers.py does): PYTHONPATH=<tinygrad> DEV=CPU CC=clang-22 CACHELEVEL=0 python3
tinygrad_first.py DIR. The inputs are DIR/case.json's files, realized before the clock starts; the time is
the first `realize()` of the block (scheduling, kernel compilation, the run), printed as JSON. The block
is the one the perf case's graph holds (cases.py describes it), written with tinygrad's own Tensor ops.
"""
import json
import os
import sys
import time

import numpy as np
from tinygrad import Tensor


def block(x, ln1w, ln1b, wqkv, bqkv, wo, bo, ln2w, ln2b, w1, b1, w2, b2, heads=8):
    _, seq, dim = x.shape
    hd = dim // heads
    a = x.layernorm(eps=1e-5) * ln1w + ln1b
    qkv = (a @ wqkv.T + bqkv).reshape(1, seq, 3, heads, hd).permute(2, 0, 3, 1, 4)
    o = qkv[0].scaled_dot_product_attention(qkv[1], qkv[2], is_causal=True)
    h = x + o.transpose(1, 2).reshape(1, seq, dim) @ wo.T + bo
    m = ((h.layernorm(eps=1e-5) * ln2w + ln2b) @ w1.T + b1).gelu()
    return h + m @ w2.T + b2


def main():
    folder = sys.argv[1]
    with open(os.path.join(folder, "case.json")) as f:
        spec = json.load(f)
    ins = [Tensor(np.fromfile(os.path.join(folder, i["file"]), dtype=np.float32).reshape(i["shape"])).realize()
           for i in spec["inputs"]]
    t0 = time.perf_counter()
    out = block(*ins).realize()
    ms = (time.perf_counter() - t0) * 1e3
    out.numpy().astype(np.float32).tofile(os.path.join(folder, "out.tinygrad.bin"))
    print(json.dumps({"first_realize_ms": ms}))


if __name__ == "__main__":
    main()
