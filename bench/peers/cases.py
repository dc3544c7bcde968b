"""Each perf case's computation for the peers, written from what its graph.json computes.

A case lists its inputs in the order of the graph's BUFFER nodes (the order graphs.strip_generators keeps),
a PyTorch function, an ONNX graph and, for the matrix products, a numpy function. Everything is float32.
Where PyTorch can write a preallocated output (`out=`, in-place ops), the case also has `torch_out`, the form
a user who cares about speed writes and the one py_worker.py runs: no fresh output tensor per run.
"""
import math

import onnx
import onnx.helper as oh
from onnx import TensorProto

OPSET = 20  # Gelu(approximate="tanh") is opset 20; ONNX Runtime reads it although this onnx package stops at 17


def _model(nodes, inputs, output, out_shape, initializers=()):
    g = oh.make_graph(nodes, "peer",
                      [oh.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
                      [oh.make_tensor_value_info(output, TensorProto.FLOAT, out_shape)],
                      initializer=list(initializers))
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", OPSET)], producer_name="tgc bench/peers")
    m.ir_version = 8
    return m


def _const(name, values, shape=None, dtype=TensorProto.FLOAT):
    shape = [len(values)] if shape is None else shape
    return oh.make_tensor(name, dtype, shape, values)


# --- matrix products -------------------------------------------------------------------------------

def _matmul_case(m, k, n):
    def torch_fn(torch, a, b):
        return torch.matmul(a, b)

    def onnx_fn():
        return _model([oh.make_node("MatMul", ["a", "b"], ["y"])], [("a", [m, k]), ("b", [k, n])], "y", [m, n])

    def torch_out_fn(torch, a, b, out):
        torch.matmul(a, b, out=out)

    def numpy_fn(np, a, b, out):
        np.matmul(a, b, out=out)

    return {"inputs": [[m, k], [k, n]], "output": [m, n], "torch": torch_fn, "torch_out": torch_out_fn,
            "onnx": onnx_fn, "numpy": numpy_fn, "flops": 2 * m * k * n}


# --- elementwise and reductions --------------------------------------------------------------------

def _ew_chain(n):
    def torch_fn(torch, x, y, z):
        return torch.relu(x * 1.5 + y) * z

    def torch_out_fn(torch, x, y, z, out):
        torch.mul(x, 1.5, out=out).add_(y).relu_().mul_(z)

    def onnx_fn():
        nodes = [oh.make_node("Mul", ["x", "c"], ["t0"]), oh.make_node("Add", ["t0", "y"], ["t1"]),
                 oh.make_node("Relu", ["t1"], ["t2"]), oh.make_node("Mul", ["t2", "z"], ["out"])]
        return _model(nodes, [("x", [n]), ("y", [n]), ("z", [n])], "out", [n], [_const("c", [1.5], [])])

    return {"inputs": [[n]] * 3, "output": [n], "torch": torch_fn, "torch_out": torch_out_fn, "onnx": onnx_fn}


def _sum(n):
    def torch_fn(torch, x):
        return torch.sum(x)

    def onnx_fn():
        return _model([oh.make_node("ReduceSum", ["x"], ["out"], keepdims=0)], [("x", [n])], "out", [])

    return {"inputs": [[n]], "output": [], "torch": torch_fn, "onnx": onnx_fn}


def _softmax(r, c):
    def torch_fn(torch, x):
        return torch.softmax(x, dim=-1)

    def onnx_fn():
        return _model([oh.make_node("Softmax", ["x"], ["out"], axis=-1)], [("x", [r, c])], "out", [r, c])

    return {"inputs": [[r, c]], "output": [r, c], "torch": torch_fn, "onnx": onnx_fn}


def _layernorm(r, c, eps=1e-5):
    def torch_fn(torch, x, w, b):
        return torch.nn.functional.layer_norm(x, (c,), w, b, eps)

    def onnx_fn():
        node = oh.make_node("LayerNormalization", ["x", "w", "b"], ["out"], axis=-1, epsilon=eps)
        return _model([node], [("x", [r, c]), ("w", [c]), ("b", [c])], "out", [r, c])

    return {"inputs": [[r, c], [c], [c]], "output": [r, c], "torch": torch_fn, "onnx": onnx_fn}


def _conv2d(n, cin, h, w, cout, k):
    def torch_fn(torch, x, wt):
        return torch.nn.functional.conv2d(x, wt, padding=k // 2)

    def onnx_fn():
        node = oh.make_node("Conv", ["x", "w"], ["out"], kernel_shape=[k, k], pads=[k // 2] * 4)
        return _model([node], [("x", [n, cin, h, w]), ("w", [cout, cin, k, k])], "out", [n, cout, h, w])

    return {"inputs": [[n, cin, h, w], [cout, cin, k, k]], "output": [n, cout, h, w], "torch": torch_fn,
            "onnx": onnx_fn, "flops": 2 * n * cout * h * w * cin * k * k}


# --- the transformer block -------------------------------------------------------------------------
# graph: h = x + attn(ln1(x)); out = h + fc2(gelu_tanh(fc1(ln2(h)))); linear layers y = x @ W.T + b with W
# [out, in]; qkv one [3*dim, dim] projection split q|k|v; heads of dim/heads; scores q k^T / sqrt(head dim)
# plus a causal mask (key j visible to query i when j <= i, else -inf); layernorm eps 1e-5.

def _transformer(seq, dim, heads, hidden, eps=1e-5):
    hd = dim // heads

    def torch_fn(torch, x, ln1w, ln1b, wqkv, bqkv, wo, bo, ln2w, ln2b, w1, b1, w2, b2):
        F = torch.nn.functional
        a = F.layer_norm(x, (dim,), ln1w, ln1b, eps)
        qkv = F.linear(a, wqkv, bqkv).view(1, seq, 3, heads, hd).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        s = torch.matmul(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(hd))
        s = s.masked_fill(torch.ones(seq, seq, dtype=torch.bool).triu(1), float("-inf"))
        o = torch.matmul(torch.softmax(s, dim=-1), v).transpose(1, 2).reshape(1, seq, dim)
        h = x + F.linear(o, wo, bo)
        m = F.gelu(F.linear(F.layer_norm(h, (dim,), ln2w, ln2b, eps), w1, b1), approximate="tanh")
        return h + F.linear(m, w2, b2)

    def onnx_fn():
        mask = [0.0 if j <= i else float("-inf") for i in range(seq) for j in range(seq)]
        inits = [_const("mask", mask, [seq, seq]), _const("scale", [1.0 / math.sqrt(hd)], []),
                 _const("heads_shape", [1, seq, 3, heads, hd], [5], TensorProto.INT64),
                 _const("merge_shape", [1, seq, dim], [3], TensorProto.INT64)]
        N = oh.make_node
        nodes = [
            N("LayerNormalization", ["x", "ln1w", "ln1b"], ["a"], axis=-1, epsilon=eps),
            N("Transpose", ["wqkv"], ["wqkvT"], perm=[1, 0]),
            N("MatMul", ["a", "wqkvT"], ["qkv0"]), N("Add", ["qkv0", "bqkv"], ["qkv1"]),
            N("Reshape", ["qkv1", "heads_shape"], ["qkv2"]),
            N("Transpose", ["qkv2"], ["qkv"], perm=[2, 0, 3, 1, 4]),
            N("Split", ["qkv"], ["q0", "k0", "v0"], axis=0, num_outputs=3),
            N("Squeeze", ["q0", "zero"], ["q"]), N("Squeeze", ["k0", "zero"], ["k"]),
            N("Squeeze", ["v0", "zero"], ["v"]),
            N("Transpose", ["k"], ["kT"], perm=[0, 1, 3, 2]),
            N("MatMul", ["q", "kT"], ["s0"]), N("Mul", ["s0", "scale"], ["s1"]), N("Add", ["s1", "mask"], ["s2"]),
            N("Softmax", ["s2"], ["p"], axis=-1), N("MatMul", ["p", "v"], ["o0"]),
            N("Transpose", ["o0"], ["o1"], perm=[0, 2, 1, 3]), N("Reshape", ["o1", "merge_shape"], ["o"]),
            N("Transpose", ["wo"], ["woT"], perm=[1, 0]),
            N("MatMul", ["o", "woT"], ["p0"]), N("Add", ["p0", "bo"], ["p1"]), N("Add", ["x", "p1"], ["h"]),
            N("LayerNormalization", ["h", "ln2w", "ln2b"], ["c"], axis=-1, epsilon=eps),
            N("Transpose", ["w1"], ["w1T"], perm=[1, 0]),
            N("MatMul", ["c", "w1T"], ["f0"]), N("Add", ["f0", "b1"], ["f1"]),
            N("Gelu", ["f1"], ["g"], approximate="tanh"),
            N("Transpose", ["w2"], ["w2T"], perm=[1, 0]),
            N("MatMul", ["g", "w2T"], ["f2"]), N("Add", ["f2", "b2"], ["f3"]), N("Add", ["h", "f3"], ["out"]),
        ]
        inits.append(_const("zero", [0], [1], TensorProto.INT64))
        shapes = dict(zip(INPUT_NAMES, _transformer_shapes(seq, dim, hidden)))
        return _model(nodes, list(shapes.items()), "out", [1, seq, dim], inits)

    return {"inputs": _transformer_shapes(seq, dim, hidden), "output": [1, seq, dim], "torch": torch_fn,
            "onnx": onnx_fn, "tinygrad": "transformer"}


# --- corpus models (inputs: the case's .npy files) ------------------------------------------------

def _mlp(batch, din, hidden, dout):
    """d1: log_softmax(relu(x @ W1.T + b1) @ W2.T + b2)."""
    def torch_fn(torch, x, w1, b1, w2, b2):
        F = torch.nn.functional
        return F.log_softmax(F.linear(F.relu(F.linear(x, w1, b1)), w2, b2), dim=-1)

    def onnx_fn():
        N = oh.make_node
        nodes = [N("Gemm", ["x", "w1", "b1"], ["h0"], transB=1), N("Relu", ["h0"], ["h"]),
                 N("Gemm", ["h", "w2", "b2"], ["y"], transB=1), N("LogSoftmax", ["y"], ["out"], axis=-1)]
        return _model(nodes, [("x", [batch, din]), ("w1", [hidden, din]), ("b1", [hidden]), ("w2", [dout, hidden]),
                              ("b2", [dout])], "out", [batch, dout])

    return {"inputs": [[batch, din], [hidden, din], [hidden], [dout, hidden], [dout]], "output": [batch, dout],
            "torch": torch_fn, "onnx": onnx_fn, "corpus": True}


def _cnn(size, cout, k, classes, eps=1e-5):
    """e1: conv kxk (1 -> cout, bias, no padding), batchnorm in eval ((x - mean) * w / sqrt(var + eps) + b),
    relu, maxpool 2x2, flatten, linear."""
    o = size - k + 1
    flat = cout * (o // 2) ** 2

    def torch_fn(torch, x, cw, cb, mean, bw, var, bb, fw, fb):
        F = torch.nn.functional
        y = F.batch_norm(F.conv2d(x, cw, cb), mean, var, bw, bb, False, 0.0, eps)
        return F.linear(F.max_pool2d(F.relu(y), 2).reshape(1, flat), fw, fb)

    def onnx_fn():
        N = oh.make_node
        nodes = [N("Conv", ["x", "cw", "cb"], ["c"], kernel_shape=[k, k]),
                 N("BatchNormalization", ["c", "bw", "bb", "mean", "var"], ["n"], epsilon=eps),
                 N("Relu", ["n"], ["r"]), N("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
                 N("Flatten", ["p"], ["f"]), N("Gemm", ["f", "fw", "fb"], ["out"], transB=1)]
        shapes = [("x", [1, 1, size, size]), ("cw", [cout, 1, k, k]), ("cb", [cout]), ("mean", [cout]),
                  ("bw", [cout]), ("var", [cout]), ("bb", [cout]), ("fw", [classes, flat]), ("fb", [classes])]
        return _model(nodes, shapes, "out", [1, classes])

    return {"inputs": [[1, 1, size, size], [cout, 1, k, k]] + [[cout]] * 5 + [[classes, flat], [classes]],
            "output": [1, classes], "torch": torch_fn, "onnx": onnx_fn, "corpus": True}


INPUT_NAMES = ["x", "ln1w", "ln1b", "wqkv", "bqkv", "wo", "bo", "ln2w", "ln2b", "w1", "b1", "w2", "b2"]


def _transformer_shapes(seq, dim, hidden):
    return [[1, seq, dim], [dim], [dim], [3 * dim, dim], [3 * dim], [dim, dim], [dim], [dim], [dim],
            [hidden, dim], [hidden], [dim, hidden], [dim]]


CASES = {
    "matmul_512": _matmul_case(512, 512, 512),
    "matmul_1024": _matmul_case(1024, 1024, 1024),
    "matmul_2048": _matmul_case(2048, 2048, 2048),
    "matvec_4096": _matmul_case(1, 4096, 4096),
    "ew_chain_16m": _ew_chain(1 << 24),
    "sum_16m": _sum(1 << 24),
    "softmax_4096x1024": _softmax(4096, 1024),
    "layernorm_4096x1024": _layernorm(4096, 1024),
    "conv2d_3x3": _conv2d(8, 64, 56, 56, 64, 3),
    "transformer_block": _transformer(256, 512, 8, 2048),
    "c1_matmul_64": {**_matmul_case(64, 64, 64), "corpus": True},
    "d1_mlp_forward": _mlp(32, 784, 128, 10),
    "e1_cnn_batch1": _cnn(28, 8, 3, 10),
}
# Corpus models not here: expressible in ONNX but not written yet: f1 and k1 (transformers; f1's causal mask is
# a bool buffer the graph writes itself, k1 starts with an int32 embedding lookup), g1, the op-coverage cases
# a1-b5 (a2-b5 realize several outputs at once). Not expressible as one ONNX inference graph: the gradient and
# training cases (gr*, h1, j13-j16, k3), the assigns (i1, j*: in-place updates of inputs), the random ones (r*:
# tinygrad's THREEFRY stream), the symbolic-shape families (v*: one compiled model for every bound value).


def save_onnx(case, path):
    onnx.save(CASES[case]["onnx"](), path)


def save_identity(path):
    """One float through Identity: the smallest run, to measure ONNX Runtime's cost per call."""
    onnx.save(_model([oh.make_node("Identity", ["x"], ["y"])], [("x", [1])], "y", [1]), path)
