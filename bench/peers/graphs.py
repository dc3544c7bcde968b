"""A perf case's graph.json with its in-graph input generators cut off, and the generators' values in numpy.

The perf cases generate their inputs inside the graph: each input BUFFER is written by a STORE of
`((i*mul + add) % p) / p - 0.5` (possibly scaled and shifted) and read through AFTER(buffer, STORE).
`strip_generators` replaces every such AFTER by the buffer view it guards, so the BUFFERs become plain
inputs of the compiled model (its run function is then exactly the computation under test), and
`generator_values` evaluates each cut-off STORE's value over the index vector, as the graph computes it
(int32 index arithmetic, float32 after the CAST), so every contender gets the case's own inputs.
"""
import json

import numpy as np


def _uop_refs(value):
    """The node ids referenced inside an encoded arg/tag value."""
    if isinstance(value, dict):
        if value.get("t") == "uop":
            yield value["v"]
        for v in value.values():
            yield from _uop_refs(v)
    elif isinstance(value, list):
        for v in value:
            yield from _uop_refs(v)


def _remap(value, new_id):
    if isinstance(value, dict):
        if value.get("t") == "uop":
            return {"t": "uop", "v": new_id[value["v"]]}
        return {k: _remap(v, new_id) for k, v in value.items()}
    if isinstance(value, list):
        return [_remap(v, new_id) for v in value]
    return value


def _generated_afters(nodes):
    """AFTER id -> (buffer view id, STORE id) for every AFTER that guards a STORE into its own view."""
    out = {}
    for i, n in enumerate(nodes):
        if n["op"] != "AFTER" or len(n["src"]) != 2:
            continue
        view, store = n["src"]
        s = nodes[store]
        if s["op"] == "STORE" and s["src"][0] == view:
            out[i] = (view, store)
    return out


def _buffer_of(nodes, i):
    """The BUFFER under a chain of RESHAPEs."""
    while nodes[i]["op"] == "RESHAPE":
        i = nodes[i]["src"][0]
    if nodes[i]["op"] != "BUFFER":
        raise ValueError(f"node {i} is {nodes[i]['op']}, expected a BUFFER (view)")
    return i


def strip_generators(graph):
    """Returns (new graph, {new BUFFER id: old STORE id}) with every generator cut off."""
    nodes = graph["nodes"]
    afters = _generated_afters(nodes)
    if not afters:
        raise ValueError("no generated input (AFTER of a STORE) in the graph")
    subst = {a: view for a, (view, _) in afters.items()}
    srcs = [[subst.get(s, s) for s in n["src"]] for n in nodes]
    keep, stack = set(), list(graph["roots"])
    while stack:
        i = stack.pop()
        if i in keep:
            continue
        keep.add(i)
        stack.extend(srcs[i])
        stack.extend(_uop_refs(nodes[i]["arg"]))
        stack.extend(_uop_refs(nodes[i].get("tag")))
    order = sorted(keep)
    new_id = {old: new for new, old in enumerate(order)}
    out_nodes = []
    for old in order:
        n = dict(nodes[old])
        n["src"] = [new_id[s] for s in srcs[old]]
        n["arg"] = _remap(n["arg"], new_id)
        n["tag"] = _remap(n.get("tag"), new_id)
        out_nodes.append(n)
    stores = {new_id[_buffer_of(nodes, view)]: store for view, store in afters.values()
              if _buffer_of(nodes, view) in new_id}
    out = dict(graph)
    out["nodes"] = out_nodes
    out["roots"] = [new_id[r] for r in graph["roots"]]
    out["buffers"] = {}
    out["what"] = graph.get("what", "") + " (bench/peers: input generators removed, inputs are arguments)"
    return out, stores


def _float_const(node):
    arg = node["arg"]
    return float(arg["v"]) if isinstance(arg, dict) else arg


def generator_values(graph, store):
    """The flat values the STORE `store` writes into its buffer (float32)."""
    nodes = graph["nodes"]
    memo = {}

    def ev(i):
        if i in memo:
            return memo[i]
        n = nodes[i]
        op, src, dt = n["op"], n["src"], n["dtype"]
        if op == "CONST":
            v = _float_const(n)
        elif op == "REDUCE":
            # the arange idiom: a sum of ones over a shifted triangle gives i + 1 at position i
            (count,) = n["shape"]
            v = np.arange(1, count + 1, dtype=np.int64)
        elif op in ("RESHAPE", "DETACH"):
            v = ev(src[0])
        elif op == "CAST":
            v = np.asarray(ev(src[0])).astype(np.float32)
        elif op == "RECIPROCAL":
            v = 1.0 / ev(src[0]) if dt.startswith("weak") else np.float32(1) / np.asarray(ev(src[0]), np.float32)
        elif op in ("ADD", "MUL", "FLOORMOD"):
            a, b = ev(src[0]), ev(src[1])
            if dt == "float32":
                a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
            v = a + b if op == "ADD" else a * b if op == "MUL" else a % b
            if dt == "int32" and np.any(np.abs(v) >= 2**31):
                raise ValueError(f"node {i}: int32 overflow in the generator")
        else:
            raise ValueError(f"node {i}: {op} in an input generator is not evaluated here")
        memo[i] = v
        return v

    return np.asarray(ev(nodes[store]["src"][1]), dtype=np.float32).reshape(-1)


def load(path):
    with open(path) as f:
        return json.load(f)
