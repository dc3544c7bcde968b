#!/usr/bin/env python3
"""Export tinygrad programs in tgc's graph format (docs/graph-format.md), from a script or the command line.

From Python (with tools/export on sys.path):

    from tinygrad import Tensor
    import tgc_export
    x = Tensor.randn(4, 8).realize(); w = Tensor.randn(8, 3).realize()
    tgc_export.export([(x @ w).relu()], "model/")   # model/graph.json + model/inputs/n<K>.npy

From the command line, for a script that defines a function returning the tensors to export:

    tgc_export.py model.py -o model/              # calls model.py's outputs()
    tgc_export.py model.py:build -o model/        # calls build() instead
    tgc_export.py model.py -o model/ --expected   # + tinygrad's own results in model/expected/

then `tgc run model/graph.json --output-dir out`, or `tgc compile model/graph.json -o model.o`.

The function takes no arguments and returns a Tensor, a list or tuple of Tensors, or a dict of them (the
order of the dict is the order of the outputs). The graph is what `Tensor.realize(*tensors)` hands to
tinygrad's scheduler: one SINK whose source I is tensor I (tgc's output out<I>). Realize the inputs and
weights first (`Tensor.realize(*nn.state.get_parameters(model))`): every allocated BUFFER's contents are
written to inputs/n<K>.npy, and tgc reads them as the model's inputs. A tensor left unrealized stays a
computation in the graph (tinygrad's lazily initialized `nn` weights are THREEFRY random numbers). A tensor
of a weak dtype (a Python literal's) is exported cast to its default dtype, as `Tensor.numpy()` would.

With `expected` (--expected) the exporter then realizes the tensors in tinygrad and writes, as the corpus
does (docs/graph-format.md section 1 and 8): expected/out<I>.npy, expected/n<K>.after.npy for every
buffer the realize changed, and meta.json (kernel count, outputs, inputs, buffers after, variables).

Every document names the tinygrad it came from (`tinygrad`: a commit, or `tree:<hash>` of its sources when
neither git nor the reference tree identifies it); tgc warns when it is not the tinygrad tgc follows.
Exit codes: 0 exported, 1 the script or the export failed (the message names what and where), 2 usage.
"""
from __future__ import annotations

import argparse
import base64
import dataclasses
import enum
import hashlib
import importlib.util
import json
import os
import subprocess
import sys
import traceback

# tgc's dtypes (lib/IR/DType.cpp): tgc name -> (tinygrad's name, which is the C name; bitsize; priority; fmt).
DTYPES = {
    "void": ("void", 0, -1, None), "bool": ("bool", 1, 0, "?"),
    "int8": ("signed char", 8, 1, "b"), "uint8": ("unsigned char", 8, 2, "B"),
    "int16": ("short", 16, 3, "h"), "uint16": ("unsigned short", 16, 4, "H"),
    "int32": ("int", 32, 5, "i"), "uint32": ("unsigned int", 32, 6, "I"),
    "int64": ("long", 64, 7, "q"), "uint64": ("unsigned long", 64, 8, "Q"),
    "weakint": ("weakint", 800, 0, None), "weakfloat": ("weakfloat", 800, 9, None),
    "fp8e4m3": ("float8_e4m3", 8, 10, None), "fp8e5m2": ("float8_e5m2", 8, 11, None),
    "fp8e4m3fnuz": ("float8_e4m3fnuz", 8, 10, None), "fp8e5m2fnuz": ("float8_e5m2fnuz", 8, 11, None),
    "float16": ("half", 16, 12, "e"), "bfloat16": ("__bf16", 16, 13, None),
    "float32": ("float", 32, 14, "f"), "float64": ("double", 64, 15, "d"),
}
_BY_TINYGRAD_NAME = {entry[0]: name for name, entry in DTYPES.items()}
# .npy descr by dtype (graph-format.md section 5); bfloat16 and fp8 are stored as raw bits.
NPY = {"bool": "|b1", "int8": "|i1", "uint8": "|u1", "int16": "<i2", "uint16": "<u2", "int32": "<i4",
       "uint32": "<u4", "int64": "<i8", "uint64": "<u8", "float16": "<f2", "float32": "<f4", "float64": "<f8",
       "bfloat16": "<u2", "fp8e4m3": "|u1", "fp8e5m2": "|u1", "fp8e4m3fnuz": "|u1", "fp8e5m2fnuz": "|u1"}

# The tinygrad tgc follows: the reference tree (../shared/tinygrad, snapshot a9069c177a plus the reference
# revision), known by its commit and by the SHA-256 of its package sources (tree_hash) for copies without git.
REFERENCE_COMMIT = "82bad2be7b718b8417f81962bbbd6bf1abc6ff3a"
REFERENCE_TREE = "5f462c9fbcd92fe8"


class ExportError(Exception):
    """What cannot be exported, and where."""


def tgc_dtype(dt) -> str:
    """tgc's name of a tinygrad DType (tinygrad names dtypes by their C name: 'float', '__bf16', ...)."""
    name = _BY_TINYGRAD_NAME.get(getattr(dt, "name", None))
    if name is None or DTYPES[name][1:3] != (dt.bitsize, dt.priority):
        raise ExportError(f"tinygrad dtype '{getattr(dt, 'name', dt)}' ({type(dt).__name__}, "
                          f"{getattr(dt, 'bitsize', '?')} bits) has no tgc equivalent")
    return name


def _is_uop(x) -> bool:
    return all(hasattr(x, a) for a in ("op", "dtype", "src", "arg", "tag"))


def _is_dtype(x) -> bool:
    return all(hasattr(x, a) for a in ("name", "bitsize", "priority")) and not _is_uop(x)


class _Writer:
    def __init__(self):
        self.ids: dict[int, int] = {}   # id(uop) -> node id
        self.nodes: list[dict] = []
        self.dtypes: dict[str, dict] = {}

    def dtype(self, dt) -> str:
        name = tgc_dtype(dt)
        cname, bits, prio, fmt = DTYPES[name]
        self.dtypes[name] = {"kind": "scalar", "cname": cname, "bitsize": bits, "itemsize": (bits + 7) // 8,
                             "priority": prio, "fmt": fmt}
        return name

    def value(self, v):
        """graph-format.md section 3."""
        if v is None or isinstance(v, (bool, str)):
            return v
        if isinstance(v, enum.Enum):
            return {"t": "enum", "cls": type(v).__name__, "v": v.name}
        if isinstance(v, int):
            return v if -2**63 <= v < 2**64 else {"t": "int", "v": str(v)}
        if isinstance(v, float):
            return {"t": "float", "v": repr(float(v))}  # 'inf', '-inf', 'nan', '-0.0' as the format spells them
        if isinstance(v, tuple):
            return [self.value(x) for x in v]
        if isinstance(v, list):
            return {"t": "list", "v": [self.value(x) for x in v]}
        if isinstance(v, dict):
            return {"t": "dict", "v": [[self.value(k), self.value(x)] for k, x in v.items()]}
        if isinstance(v, (set, frozenset)):
            items = [self.value(x) for x in v]
            return {"t": "set", "v": sorted(items, key=lambda e: json.dumps(e, sort_keys=True))}
        if isinstance(v, (bytes, bytearray)):
            return {"t": "bytes", "v": base64.b64encode(bytes(v)).decode()}
        if _is_uop(v):
            return {"t": "uop", "v": self.ids[id(v)]}
        if _is_dtype(v):
            return {"t": "dtype", "v": self.dtype(v)}
        if type(v).__name__ == "InvalidType":
            return {"t": "invalid"}
        if dataclasses.is_dataclass(v) and not isinstance(v, type):
            return {"t": "obj", "cls": type(v).__name__,
                    "v": {f.name: self.value(getattr(v, f.name)) for f in dataclasses.fields(v)}}
        if callable(v):
            return {"t": "callable", "v": getattr(v, "__qualname__", repr(v))}
        raise ExportError(f"no encoding in the graph format for a {type(v).__name__} ({v!r:.80})")

    def uops_in(self, v):
        """UOps held in an arg or tag (tuples, lists, dataclass fields)."""
        if _is_uop(v):
            yield v
        elif isinstance(v, (tuple, list, set, frozenset)):
            for x in v:
                yield from self.uops_in(x)
        elif isinstance(v, dict):
            for k, x in v.items():
                yield from self.uops_in(k)
                yield from self.uops_in(x)
        elif dataclasses.is_dataclass(v) and not isinstance(v, type) and not _is_dtype(v):
            for f in dataclasses.fields(v):
                yield from self.uops_in(getattr(v, f.name))

    def node(self, u) -> dict:
        try:
            return {"op": u.op.name, "dtype": self.dtype(u.dtype), "src": [self.ids[id(s)] for s in u.src],
                    "arg": self.value(u.arg), "tag": self.value(u.tag)}
        except ExportError as e:
            raise ExportError(f"node {len(self.nodes)} ({u.op.name}): {e}") from None

    def add(self, root) -> int:
        """Numbers every node reachable from root (sources and arg references first), iteratively."""
        stack = [(root, False)]
        while stack:
            u, expanded = stack.pop()
            if id(u) in self.ids:
                continue
            deps = list(u.src) + list(self.uops_in(u.arg)) + list(self.uops_in(u.tag))
            if not expanded:
                stack.append((u, True))
                stack.extend((d, False) for d in reversed(deps) if id(d) not in self.ids)
                continue
            node = self.node(u)
            self.ids[id(u)] = len(self.nodes)
            self.nodes.append(node)
        return self.ids[id(root)]


def _npy_bytes(descr: str, shape: tuple, data: bytes) -> bytes:
    dims = "".join(f"{d}, " for d in shape) if len(shape) == 1 else ", ".join(str(d) for d in shape)
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, dims)
    pad = 64 - (10 + len(header) + 1) % 64
    header += " " * (pad % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode() + data


def _write(path: str, data: bytes):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".tmp", "wb") as f:
        f.write(data)
    os.replace(path + ".tmp", path)


def tree_hash(package_dir: str) -> str:
    """SHA-256 (first 16 hex digits) of a tinygrad package's Python sources, by relative path."""
    h = hashlib.sha256()
    for root, dirs, files in os.walk(package_dir):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(f for f in files if f.endswith(".py")):
            path = os.path.join(root, name)
            h.update(os.path.relpath(path, package_dir).encode() + b"\0")
            with open(path, "rb") as f:
                h.update(f.read() + b"\0")
    return h.hexdigest()[:16]


def tinygrad_revision() -> str:
    """The commit of the imported tinygrad: the reference tree's, git's HEAD, or 'tree:<hash>' of its sources."""
    import tinygrad
    package = os.path.dirname(os.path.abspath(tinygrad.__file__))
    tree = tree_hash(package)
    if tree == REFERENCE_TREE:
        return REFERENCE_COMMIT
    try:
        head = subprocess.run(["git", "-C", package, "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10)
        dirty = subprocess.run(["git", "-C", package, "status", "--porcelain", "--", "."], capture_output=True,
                               text=True, timeout=10)
        if head.returncode == 0:
            return head.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        pass
    return f"tree:{tree}"


def write_document(roots, out_dir: str, root_names=None, buffers=None, what="", extra=None) -> tuple[str, dict]:
    """Writes out_dir/graph.json for tinygrad UOp roots. `buffers`: BUFFER node -> (bytes, numel, device) for
    the buffers that hold data; each is written to out_dir/inputs/n<K>.npy and listed in `buffers`.
    Returns the path and the node ids (id(uop) -> K)."""
    w = _Writer()
    root_ids = [w.add(r) for r in roots]
    doc = {"format": "tgc-uop-graph", "version": 1, "what": what or "tensor graph exported by tgc_export.py"}
    listed = {}
    for u, (data, numel, device) in (buffers or {}).items():
        k = w.ids[id(u)]
        rel = f"inputs/n{k}.npy"
        _write(os.path.join(out_dir, rel), _npy_bytes(NPY[tgc_dtype(u.dtype)], (numel,), data))
        listed[str(k)] = {"node": k, "dtype": tgc_dtype(u.dtype), "numel": numel, "device": device,
                          "allocated": True, "file": rel}
    doc["buffers"] = dict(sorted(listed.items(), key=lambda kv: int(kv[0])))
    doc.update(extra or {})
    doc["dtypes"] = w.dtypes
    doc["roots"] = root_ids
    doc["root_names"] = list(root_names or ["sink"] * len(root_ids))
    text = "{" + ", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in doc.items() if k != "nodes")
    text += ', "nodes": [\n' + ",\n".join(json.dumps(n) for n in w.nodes) + "\n]}\n"
    path = os.path.join(out_dir, "graph.json")
    _write(path, text.encode())
    return path, w.ids


def _device_name(device) -> str:
    return device if isinstance(device, str) else str(device)


def _allocated_buffers(sink) -> dict:
    """The graph's BUFFERs that hold data before the realize, with their bytes."""
    from tinygrad.uop.ops import Ops
    out = {}
    for u in sink.toposort():
        if u.op is Ops.BUFFER and u.realized is not None:
            buf = u.buffer
            out[u] = (bytes(buf.as_memoryview()), buf.size, _device_name(buf.device))
    return out


def _variables(sink, ids) -> list[dict]:
    """Bound Variables (AFTER(var, STORE(var, CONST v))) as the corpus's meta.json lists them."""
    out = []
    for u in sink.toposort():
        if getattr(u, "is_bound_var", False):
            var, value = u.unbind()
            out.append({"node": ids[id(var)], "name": var.arg.name, "vmin_vmax": list(var.arg.vmin_vmax),
                        "bound": value})
    return out


def _realizable(tensors) -> list:
    """The tensors as tinygrad can realize them: a weak dtype (a Python literal's, as `mask.where(1.0, -1.0)`
    has) takes its default strong dtype, as `Tensor.numpy()` does before it realizes."""
    from tinygrad.dtype import dtypes, strong_dtype
    return [t.cast(strong_dtype(t.dtype)) if t.dtype in dtypes.weaks else t for t in tensors]


def _scheduled(tensors) -> int:
    """How many of the tensors Tensor.realize schedules (it skips constants and tensors that are buffers)."""
    return sum(1 for t in tensors if not t.uop.is_virtual and not t.uop.has_buffer_identity())


def _tensor_bytes(t) -> bytes:
    """A realized tensor's contents, dense and C-ordered (bfloat16 and fp8 as their bits)."""
    from tinygrad import dtypes
    if t.dtype in (dtypes.bfloat16, *dtypes.fp8s):
        t = t.bitcast(dtypes.uint16 if t.dtype.itemsize == 2 else dtypes.uint8)
    return bytes(t._buffer().as_memoryview()) if t.numel() else b""


def _realize_expected(tensors, sink, ids, before: dict, out_dir: str) -> dict:
    """Realizes the tensors in tinygrad and writes what it computed (expected/) and meta.json."""
    from tinygrad import Tensor
    from tinygrad.helpers import GlobalCounters
    from tinygrad.uop.ops import Ops
    buffers = [u for u in sink.toposort() if u.op is Ops.BUFFER and u.arg.addrspace.name == "GLOBAL"]
    GlobalCounters.reset()
    Tensor.realize(*tensors)
    kernels = GlobalCounters.kernel_count
    outputs = []
    for i, t in enumerate(tensors):
        name = tgc_dtype(t.dtype)
        rel = f"expected/out{i}.npy"
        _write(os.path.join(out_dir, rel), _npy_bytes(NPY[name], tuple(t.shape), _tensor_bytes(t)))
        outputs.append({"index": i, "dtype": name, "shape": list(t.shape), "file": rel, "sink_index": i,
                        "node": ids[id(sink.src[i])]})
    after = []
    for u in buffers:
        buf = u.realized
        if buf is None:
            continue
        data = bytes(buf.as_memoryview())
        if u in before and before[u][0] == data:
            continue
        k, name = ids[id(u)], tgc_dtype(u.dtype)
        rel = f"expected/n{k}.after.npy"
        _write(os.path.join(out_dir, rel), _npy_bytes(NPY[name], (buf.size,), data))
        after.append({"node": k, "dtype": name, "numel": buf.size, "file": rel})
    return {"kernel_count": kernels, "outputs": outputs, "buffers_after": after}


def export(tensors, out_dir: str, what: str = "", expected: bool = False) -> str:
    """Writes the graph Tensor.realize(*tensors) would schedule, and its input data, to out_dir; with
    `expected`, then realizes the tensors and writes tinygrad's results and meta.json. Returns graph.json's path."""
    from tinygrad import Tensor
    from tinygrad.uop.ops import UOp
    tensors = list(tensors)
    if not tensors or not all(isinstance(t, Tensor) for t in tensors):
        raise ExportError("export() takes a non-empty list of tinygrad Tensors")
    tensors = _realizable(tensors)
    sink = UOp.sink(*[t.uop for t in tensors])
    before = _allocated_buffers(sink)
    revision = tinygrad_revision()
    path, ids = write_document([sink], out_dir, ["sink"], before, what, {"tinygrad": revision})
    if expected:
        meta = {"case": os.path.basename(os.path.abspath(out_dir)), "description": what,
                "tinygrad": {"head": revision}, "device": _device_name(tensors[0].device),
                "inputs": [{"node": ids[id(u)], "dtype": tgc_dtype(u.dtype), "numel": n, "device": d,
                            "allocated": True, "file": f"inputs/n{ids[id(u)]}.npy"}
                           for u, (_, n, d) in before.items()],
                "variables": (variables := _variables(sink, ids)),
                "var_vals": {v["name"]: v["bound"] for v in variables},
                "realize_filter": {"outs": len(tensors), "scheduled": _scheduled(tensors)}}
        meta.update(_realize_expected(tensors, sink, ids, before, out_dir))
        _write(os.path.join(out_dir, "meta.json"), (json.dumps(meta, indent=1) + "\n").encode())
    return path


def _load_outputs(spec: str):
    """Runs SCRIPT[:FUNCTION] and returns the tensors FUNCTION (default `outputs`) returns."""
    script, _, func = spec.partition(":") if not os.path.exists(spec) else (spec, "", "")
    func = func or "outputs"
    if not os.path.isfile(script):
        raise ExportError(f"{script}: no such script")
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    try:
        import tinygrad  # noqa: F401
    except ImportError as e:
        raise ExportError(f"cannot import tinygrad ({e}): put its tree on PYTHONPATH") from None
    module_spec = importlib.util.spec_from_file_location("tgc_exported_script", script)
    module = importlib.util.module_from_spec(module_spec)
    try:
        module_spec.loader.exec_module(module)
        fn = getattr(module, func, None)
        if not callable(fn):
            raise ExportError(f"{script}: defines no function '{func}' (name one with {script}:FUNCTION)")
        result = fn()
    except ExportError:
        raise
    except Exception as e:
        traceback.print_exc()
        raise ExportError(f"{script}:{func} raised {type(e).__name__}: {e}") from None
    if isinstance(result, dict):
        result = list(result.values())
    elif not isinstance(result, (list, tuple)):
        result = [result]
    return script, func, list(result)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="tgc_export.py", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("script", metavar="SCRIPT.py[:FUNCTION]",
                    help="a Python script and the function in it that returns the tensors (default: outputs)")
    ap.add_argument("-o", "--output-dir", required=True, metavar="DIR", help="where graph.json and inputs/ go")
    ap.add_argument("--expected", action="store_true",
                    help="also realize in tinygrad: expected/out<I>.npy, expected/n<K>.after.npy, meta.json")
    ap.add_argument("--what", default="", help="the document's description (default: SCRIPT:FUNCTION)")
    a = ap.parse_args(argv)
    try:
        script, func, tensors = _load_outputs(a.script)
        path = export(tensors, a.output_dir, a.what or f"{os.path.basename(script)}:{func}", a.expected)
    except ExportError as e:
        print(f"tgc_export: error: {e}", file=sys.stderr)
        return 1
    print(f"tgc_export: wrote {path} ({len(tensors)} output{'s' if len(tensors) != 1 else ''})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
