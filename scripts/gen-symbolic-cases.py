#!/usr/bin/env python3
"""Produces the expected results of tgc's simplifier tests by running tinygrad.

Usage:
  gen-symbolic-cases.py table CASES.txt         # 'vars ; expr' lines -> C++ table rows
  gen-symbolic-cases.py random SEED N DEPTH     # random 'vars ; expr ; expected' lines
  gen-symbolic-cases.py ranges SEED N DEPTH     # random 'vars ; expr ; vmin ; vmax' lines (unsimplified)
  gen-symbolic-cases.py valids SEED N DEPTH     # random gated indices, rewritten with symbolic+pm_simplify_valid+pm_drop_and_clauses

An expression 'valid: e' is rewritten with symbolic+pm_simplify_valid+pm_drop_and_clauses
instead of UOp.simplify().

Needs tinygrad at the target snapshot on PYTHONPATH (e.g. `git archive` of the
mirror into a scratch directory). The expression syntax is the one
test/unit/SymbolicTestUtil.h parses: Python operators over variables, plus
where/maximum/lnot/ne/i32/i64 and Invalid.
"""
import random, sys
from tinygrad.uop.ops import UOp, Ops
from tinygrad.dtype import dtypes, Invalid

DTN = {dtypes.int8: 'int8', dtypes.int16: 'int16', dtypes.int32: 'int32', dtypes.int64: 'int64', dtypes.uint8: 'uint8',
       dtypes.uint16: 'uint16', dtypes.uint32: 'uint32', dtypes.uint64: 'uint64', dtypes.bool: 'bool',
       dtypes.weakint: 'weakint', dtypes.weakfloat: 'weakfloat', dtypes.float32: 'float32', dtypes.float64: 'float64',
       dtypes.float16: 'float16'}
SYM = {Ops.ADD: '+', Ops.MUL: '*', Ops.FLOORDIV: '//', Ops.FLOORMOD: '%', Ops.CMPLT: '<', Ops.CMPNE: '!=', Ops.AND: '&',
       Ops.OR: '|', Ops.XOR: '^', Ops.SHL: '<<', Ops.SHR: '>>'}

def show(u):
  """The printed form of SymbolicTestUtil.h's print()."""
  if u.op is Ops.CONST:
    v = u.arg
    s = 'Invalid' if v is Invalid else 'True' if v is True else 'False' if v is False else repr(float(v)) if isinstance(v, float) else str(v)
    return s if u.dtype in (dtypes.weakint, dtypes.bool, dtypes.weakfloat) else s + ':' + DTN[u.dtype]
  if u.op is Ops.RANGE: return f"r{u.arg[0]}"
  if u.op in (Ops.BUFFER, Ops.PARAM): return u.arg.name
  if u.op in SYM: return f"({show(u.src[0])}{SYM[u.op]}{show(u.src[1])})"
  if u.op is Ops.MAX: return f"max({show(u.src[0])},{show(u.src[1])})"
  if u.op is Ops.WHERE: return f"where({show(u.src[0])},{show(u.src[1])},{show(u.src[2])})"
  if u.op is Ops.CAST: return f"cast<{DTN[u.dtype]}>({show(u.src[0])})"
  if u.op is Ops.BITCAST: return f"bitcast<{DTN[u.dtype]}>({show(u.src[0])})"
  return f"{u.op.name}({','.join(show(s) for s in u.src)})"

def make_vars(spec):
  env = {}
  for item in spec.split():
    name, rng = item.split(':')
    if '..' in rng:
      lo, hi = rng.split('..')
      dt = dtypes.weakint
      if '@' in hi: hi, dtn = hi.split('@'); dt = {'int32': dtypes.int32, 'int64': dtypes.int64, 'float32': dtypes.float32}[dtn]
      num = float if dtypes.is_float(dt) else int
      env[name] = UOp.variable(name, num(lo), num(hi), dtype=dt)
    else:
      env[name] = UOp.range(int(rng), int(name[1:]))
  return env

def U(x): return x if isinstance(x, UOp) else UOp.const(x)
FUNCS = dict(where=lambda c, t, f: U(c).where(t, f), maximum=lambda a, b: U(a).maximum(b), lnot=lambda x: U(x).logical_not(),
             ne=lambda a, b: U(a).ne(b), i32=lambda x: U(x).cast(dtypes.int32), i64=lambda x: U(x).cast(dtypes.int64),
             Invalid=UOp.invalid(), sqrt=lambda x: U(x).sqrt(), recip=lambda x: U(x).reciprocal(), exp2=lambda x: U(x).exp2(),
             log2=lambda x: U(x).log2(), sin=lambda x: U(x).sin(), trunc=lambda x: U(x).trunc(), pw=lambda a, b: U(a).pow(b),
             **{n: (lambda dt: lambda x: U(x).cast(dt))(dt) for n, dt in (('i8', dtypes.int8), ('u8', dtypes.uint8),
                ('u32', dtypes.uint32), ('f32', dtypes.float32), ('f64', dtypes.float64), ('f16', dtypes.float16), ('b', dtypes.bool))},
             **{n: (lambda dt: lambda x: U(x).bitcast(dt))(dt) for n, dt in (('bc_u32', dtypes.uint32), ('bc_i32', dtypes.int32),
                ('bc_f32', dtypes.float32), ('bc_u16', dtypes.uint16), ('bc_f16', dtypes.float16))})

def build(spec, expr):
  env = dict(FUNCS); env.update(make_vars(spec))
  return U(eval(expr, {}, env))

def simplified(spec, expr):
  # "valid: e" rewrites with the matcher rangeify lowers movement ops with
  if expr.startswith('valid:'):
    from tinygrad.uop.ops import graph_rewrite
    from tinygrad.uop.symbolic import symbolic, pm_simplify_valid, pm_drop_and_clauses
    return show(graph_rewrite(build(spec, expr[6:]), symbolic+pm_simplify_valid+pm_drop_and_clauses))
  return show(build(spec, expr).simplify())

def random_case_expr(names, d):
  if d == 0 or random.random() < 0.3: return random.choice(names)
  return random.choice([f"({random_case_expr(names, d-1)} + {random_case_expr(names, d-1)})",
                        f"({random_case_expr(names, d-1)} * {random.randint(2, 4)})",
                        f"({random_case_expr(names, d-1)} // {random.randint(2, 4)})",
                        f"({random_case_expr(names, d-1)} % {random.randint(2, 4)})"])

def random_case(depth):
  vs = [(f"r{i}", f"r{i}:{random.choice([2, 3, 4, 5, 6, 8])}") for i in range(random.randint(1, 3))]
  if random.random() < 0.6:
    lo = random.choice([0, -7, 1, -3, 5]); vs.append(("a", f"a:{lo}..{lo + random.choice([3, 5, 9, 15])}"))
  if random.random() < 0.5: vs.append(("n", f"n:1..{random.choice([3, 4, 6])}"))
  names = [n for n, _ in vs]
  posdiv = [n for n in names if n == 'n']
  def e(d):
    if d == 0 or random.random() < 0.25: return random.choice(names) if random.random() < 0.8 else str(random.randint(-3, 9))
    k, a = random.random(), e(d - 1)
    if k < 0.25: return f"({a} + {e(d - 1)})"
    if k < 0.35: return f"({a} - {e(d - 1)})"
    if k < 0.55: return f"({a} * {random.choice([2, 3, 4, 6, 8, -1, -2, 5, 7, 12]) if random.random() < 0.8 else e(d - 1)})"
    if k < 0.85:
      dv = random.choice([2, 3, 4, 6, 8, 12, 16, -2, -3, -4]) if random.random() < 0.7 or not posdiv else random.choice(posdiv)
      return f"({a} {'//' if k < 0.7 else '%'} {dv})"
    if k < 0.92: return f"where({a} < {random.randint(0, 8)}, {e(d - 1)}, {e(d - 1)})"
    if k < 0.96: return f"maximum({a}, {e(d - 1)})"
    return f"(where(({a} < {random.randint(0, 6)}) & ({e(d - 1)} < {random.randint(0, 6)}), {e(d - 1)}, {random.randint(0, 3)}))"
  return ' '.join(s for _, s in vs), e(random.randint(2, depth))

if __name__ == "__main__":
  if sys.argv[1] == 'table':
    for line in open(sys.argv[2]):
      if not line.strip() or line.startswith('#'): continue
      spec, expr = [s.strip() for s in line.split(';', 1)]
      print(f'    {{"{spec}", "{expr}", "{simplified(spec, expr)}"}},')
  elif sys.argv[1] == 'valids':
    random.seed(int(sys.argv[2]))
    for _ in range(int(sys.argv[3])):
      spec, idx = random_case(int(sys.argv[4]))
      names = [x.split(':')[0] for x in spec.split()]
      def clause():
        e = random.choice(names) if random.random() < 0.5 else random_case_expr(names, 2)
        u = build(spec, e)  # a bound inside the clause's range, so that gates are not trivially empty
        k = random.randint(int(u.vmin), int(u.vmax) + 1)
        return random.choice([f"({e} >= {k})", f"({e} < {k})", f"({e} <= {k})", f"({k} < {e})"])
      gate = ' & '.join(clause() for _ in range(random.randint(1, 3)))
      expr = f"valid: where({gate}, {idx}, Invalid)"
      print(f"{spec} ; {expr} ; {simplified(spec, expr)}")
  elif sys.argv[1] == 'ranges':
    random.seed(int(sys.argv[2]))
    for _ in range(int(sys.argv[3])):
      spec, expr = random_case(int(sys.argv[4]))
      u = build(spec, expr)
      print(f"{spec} ; {expr} ; {int(u.vmin)} ; {int(u.vmax)}")
  else:
    random.seed(int(sys.argv[2]))
    for _ in range(int(sys.argv[3])):
      spec, expr = random_case(int(sys.argv[4]))
      print(f"{spec} ; {expr} ; {simplified(spec, expr)}")
