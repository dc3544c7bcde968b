"""Tiny .npy helper for the compile tests (no numpy needed).
  npy.py write FILE DESCR SHAPE VALUES   e.g. write x.npy <f4 8 0,1,2,3,4,5,6,7  (SHAPE: 2x4, or '' for a scalar)
  npy.py print FILE                     prints 'descr shape: v0 v1 ...'
"""
import ast
import struct
import sys

CODES = {"f4": "f", "f8": "d", "i4": "i", "i8": "q", "b1": "?", "u1": "B", "i1": "b", "f2": "e", "u4": "I", "u8": "Q",
         "i2": "h", "u2": "H"}


def write(path, descr, shape, values):
    dims = tuple(int(d) for d in shape.split("x")) if shape else ()
    code = CODES[descr[1:]]
    vals = [ast.literal_eval(v) for v in values.split(",")] if values else []
    data = struct.pack("<%d%s" % (len(vals), code), *vals)
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, repr(dims))
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + data)


def load(path):
    """(descr, shape, values) of a .npy file."""
    b = open(path, "rb").read()
    n = struct.unpack("<H", b[8:10])[0]
    h = ast.literal_eval(b[10:10 + n].decode())
    code = CODES[h["descr"][1:]]
    data = b[10 + n:]
    return h["descr"], tuple(h["shape"]), struct.unpack("<%d%s" % (len(data) // struct.calcsize(code), code), data)


def show(path):
    descr, shape, vals = load(path)
    print(descr, shape, ":", " ".join("%g" % v for v in vals))


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(*sys.argv[2:6])
    else:
        show(sys.argv[2])
