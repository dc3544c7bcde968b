#!/usr/bin/env python3
"""Export a tinygrad Tensor graph in tgc's graph format (docs/graph-format.md).

    from tinygrad import Tensor
    import tgc_export
    x = Tensor.randn(4, 8).realize(); w = Tensor.randn(8, 3).realize()
    tgc_export.export([(x @ w).relu()], "model/")   # model/graph.json + model/inputs/n<K>.npy

then `tgc opt model/graph.json --passes=schedule`, `tgc run model/graph.json ...` or
`tgc compile model/graph.json -o model.o`. The graph is what Tensor.realize(*tensors) would give the
scheduler: one SINK whose sources are the tensors' UOps. Realize the inputs first (as above) so that they
are buffers with data: every allocated BUFFER's contents are written to inputs/n<K>.npy.

Command line (for the test suite): `tgc_export.py --self-test DIR [--tgc PATH]` exports a small model,
checks tgc reads and schedules it (and, when `tgc run` exists, that it computes what tinygrad computed);
`tgc_export.py --format-test DIR --tgc PATH` writes a document from stand-in objects, without tinygrad,
and checks that tgc reads it. Exit code 77 means "skipped: tinygrad is not installed".
"""
from __future__ import annotations

import argparse
import base64
import dataclasses
import enum
import json
import os
import subprocess
import sys

SKIP = 77

# tgc's dtype table (lib/IR/DType.cpp): name -> (cname, bitsize, priority, fmt). The reader checks these.
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
# .npy descr by dtype (graph-format.md section 5); bfloat16 and fp8 are stored as raw bits.
NPY = {"bool": "|b1", "int8": "|i1", "uint8": "|u1", "int16": "<i2", "uint16": "<u2", "int32": "<i4",
       "uint32": "<u4", "int64": "<i8", "uint64": "<u8", "float16": "<f2", "float32": "<f4", "float64": "<f8",
       "bfloat16": "<u2", "fp8e4m3": "|u1", "fp8e5m2": "|u1", "fp8e4m3fnuz": "|u1", "fp8e5m2fnuz": "|u1"}


def _is_uop(x) -> bool:
    return all(hasattr(x, a) for a in ("op", "dtype", "src", "arg", "tag"))


def _is_dtype(x) -> bool:
    return all(hasattr(x, a) for a in ("name", "bitsize", "priority")) and not _is_uop(x)


class _Writer:
    def __init__(self):
        self.ids: dict[int, int] = {}   # id(uop) -> node id
        self.nodes: list[dict] = []
        self.dtypes: dict[str, dict] = {}
        self.unknown: set[str] = set()

    def dtype(self, dt) -> str:
        if dt.name not in DTYPES:
            raise ValueError(f"tgc has no dtype {dt.name!r} (vector, pointer and image dtypes are not in the format)")
        cname, bits, prio, fmt = DTYPES[dt.name]
        self.dtypes[dt.name] = {"kind": "scalar", "cname": cname, "bitsize": bits, "itemsize": (bits + 7) // 8,
                                "priority": prio, "fmt": fmt}
        return dt.name

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
        self.unknown.add(type(v).__name__)
        return {"t": "repr", "cls": type(v).__name__, "v": repr(v)}

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
            node = {"op": u.op.name, "dtype": self.dtype(u.dtype), "src": [self.ids[id(s)] for s in u.src],
                    "arg": self.value(u.arg), "tag": self.value(u.tag)}
            self.ids[id(u)] = len(self.nodes)
            self.nodes.append(node)
        return self.ids[id(root)]


def _npy_bytes(descr: str, numel: int, data: bytes) -> bytes:
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%d,), }" % (descr, numel)
    pad = 64 - (10 + len(header) + 1) % 64
    header += " " * (pad % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode() + data


def write_document(roots, out_dir: str, root_names=None, buffers=None, what="", extra=None) -> str:
    """Writes out_dir/graph.json for UOp-like roots (objects with op/dtype/src/arg/tag).
    `buffers`: node object -> (bytes, numel, device) for the BUFFERs that hold data; each is written to
    out_dir/inputs/n<K>.npy and listed in the document's `buffers`."""
    w = _Writer()
    root_ids = [w.add(r) for r in roots]
    doc = {"format": "tgc-uop-graph", "version": 1, "what": what or "tensor graph exported by tgc_export.py"}
    listed = {}
    for u, (data, numel, device) in (buffers or {}).items():
        k = w.ids[id(u)]
        rel = f"inputs/n{k}.npy"
        os.makedirs(os.path.join(out_dir, "inputs"), exist_ok=True)
        with open(os.path.join(out_dir, rel), "wb") as f:
            f.write(_npy_bytes(NPY[u.dtype.name], numel, data))
        listed[str(k)] = {"node": k, "dtype": u.dtype.name, "numel": numel, "device": device, "allocated": True,
                          "file": rel}
    doc["buffers"] = dict(sorted(listed.items(), key=lambda kv: int(kv[0])))
    doc.update(extra or {})
    doc["dtypes"] = w.dtypes
    doc["roots"] = root_ids
    doc["root_names"] = list(root_names or ["sink"] * len(root_ids))
    if w.unknown:
        print(f"tgc_export: warning: no encoding for {sorted(w.unknown)}; written as repr", file=sys.stderr)
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "graph.json")
    with open(path, "w") as f:
        f.write("{" + ", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in doc.items() if k != "nodes"))
        f.write(', "nodes": [\n' + ",\n".join(json.dumps(n) for n in w.nodes) + "\n]}\n")
    return path


def export(tensors, out_dir: str, what: str = "") -> str:
    """Writes the graph Tensor.realize(*tensors) would schedule, and its input data, to out_dir."""
    from tinygrad.uop.ops import Ops, UOp
    sink = UOp.sink(*[t.uop for t in tensors])
    buffers = {}
    for u in sink.toposort():
        if u.op is Ops.BUFFER and u.realized is not None:
            buf = u.buffer
            buffers[u] = (bytes(buf.as_memoryview()), buf.size, buf.device if isinstance(buf.device, str) else str(buf.device))
    try:
        import tinygrad
        extra = {"tinygrad": getattr(tinygrad, "__version__", "")}
    except Exception:
        extra = {}
    return write_document([sink], out_dir, ["sink"], buffers, what, extra)


def _run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        print(f"tgc_export: {' '.join(cmd)} failed ({r.returncode}):\n{r.stdout}{r.stderr}", file=sys.stderr)
        sys.exit(1)
    return r.stdout


def _self_test(out_dir: str, tgc: str | None) -> int:
    try:
        import numpy as np
        from tinygrad import Tensor
    except ImportError as e:
        print(f"tgc_export: skipped: {e.name or 'tinygrad'} is not installed (pip install tinygrad numpy)")
        return SKIP
    x = Tensor(np.arange(32, dtype=np.float32).reshape(4, 8) / 10).realize()
    w = Tensor(np.linspace(-1, 1, 24, dtype=np.float32).reshape(8, 3)).realize()
    y = (x @ w).relu().sum(axis=1)
    path = export([y], out_dir, "tgc_export self-test: relu(x @ w).sum(1)")
    expected = y.numpy()
    if tgc:
        _run([tgc, "opt", path, "--passes=verify,schedule", "-o", os.devnull])
        if subprocess.run([tgc, "run", "--help"], capture_output=True).returncode == 0:
            _run([tgc, "run", path, "--output-dir", os.path.join(out_dir, "out")])
            from numpy.lib.format import read_array
            with open(os.path.join(out_dir, "out", "out0.npy"), "rb") as f:
                got = read_array(f)
            if not np.allclose(got.reshape(expected.shape), expected, rtol=1e-5, atol=1e-5):
                print(f"tgc_export: tgc run computed {got}, tinygrad {expected}", file=sys.stderr)
                return 1
    print(f"tgc_export: self-test passed ({path})")
    return 0


def _format_test(out_dir: str, tgc: str) -> int:
    """Stand-ins for tinygrad's classes, to check the document tgc reads without tinygrad."""
    Ops = enum.Enum("Ops", "CONST BUFFER ADD SINK")
    AddrSpace = enum.Enum("AddrSpace", "GLOBAL LOCAL REG")

    @dataclasses.dataclass(frozen=True)
    class DType:
        priority: int
        bitsize: int
        name: str
        fmt: str | None

    @dataclasses.dataclass(frozen=True)
    class ParamArg:
        slot: int
        dtype: DType
        vmin_vmax: tuple | None = None
        multiple_of: int | None = None
        name: str | None = None
        addrspace: AddrSpace | None = AddrSpace.GLOBAL
        axis: int | None = None
        device: str | None = None
        volatile: bool = False

    @dataclasses.dataclass(eq=False)
    class UOp:
        op: Ops
        dtype: DType
        src: tuple = ()
        arg: object = None
        tag: object = None

    f32, weakint, void = DType(14, 32, "float32", "f"), DType(0, 800, "weakint", None), DType(-1, 0, "void", None)
    n = UOp(Ops.CONST, weakint, (), 4)
    buf = UOp(Ops.BUFFER, f32, (n,), ParamArg(1, f32, device="CPU"))
    half = UOp(Ops.CONST, f32, (), -0.5)
    y = UOp(Ops.ADD, f32, (buf, half))
    sink = UOp(Ops.SINK, void, (y,))
    data = b"".join(int(v).to_bytes(4, "little") for v in (0x3F800000, 0x40000000, 0x40400000, 0x40800000))
    path = write_document([sink], out_dir, ["sink"], {buf: (data, 4, "CPU")}, "tgc_export format test")
    text = _run([tgc, "opt", path, "--passes=verify"])
    for want in ("ADD float32", "-0.5", "inputs/n1.npy"):
        if want not in text:
            print(f"tgc_export: '{want}' missing from tgc's reading of {path}:\n{text}", file=sys.stderr)
            return 1
    with open(os.path.join(out_dir, "inputs", "n1.npy"), "rb") as f:
        npy = f.read()
    hlen = int.from_bytes(npy[8:10], "little")
    if npy[:8] != b"\x93NUMPY\x01\x00" or (10 + hlen) % 64 or npy[10 + hlen - 1:10 + hlen] != b"\n" \
            or npy[10 + hlen:] != data:
        print(f"tgc_export: inputs/n1.npy is not a .npy 1.0 file holding the data: {npy[:16]!r}...", file=sys.stderr)
        return 1
    print(f"tgc_export: format test passed ({path})")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--self-test", metavar="DIR", help="export a small tinygrad model to DIR and check it with tgc")
    ap.add_argument("--format-test", metavar="DIR", help="write a document from stand-ins (no tinygrad needed)")
    ap.add_argument("--tgc", help="the tgc executable to check the exported graph with")
    a = ap.parse_args(argv)
    if a.format_test:
        if not a.tgc:
            ap.error("--format-test needs --tgc")
        return _format_test(a.format_test, a.tgc)
    if a.self_test:
        return _self_test(a.self_test, a.tgc)
    ap.print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())
