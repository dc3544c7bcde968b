"""A tiny LLaMA-style decoder, one token per call, for tgc (README.md, "Text generation from C").

    tgc_export.py examples/llm/model.py -o build/llm                 # the decoding step to deploy
    tgc_export.py examples/llm/model.py:check -o build/llm-check --expected

The model is tinygrad's own `extra/models/llama.py` Transformer with small dimensions and weights drawn from tinygrad's
generator at a fixed seed (a real deployment would load a checkpoint here). `outputs()` is one decoding step: the token is
`Tensor.empty` (the compiled step's input), the KV caches are unrealized buffers the step reads and updates in place,
and `start_pos` is a tinygrad Variable, so the step is compiled once and bound at each position. `generate()` is
tinygrad's own greedy decoding of the same model, which the C program must reproduce token for token.
"""
import math

from tinygrad import Tensor, TinyJit, Variable, dtypes
from tinygrad.nn.state import get_state_dict
from extra.models.llama import Transformer

DIM, HIDDEN, HEADS, LAYERS, VOCAB, CONTEXT = 64, 128, 4, 2, 256, 64
PROMPT, STEPS = 1, 32
NAN = float("nan")  # llama's forward returns the logits when the temperature is NaN


def model() -> Transformer:
    m = Transformer(DIM, HIDDEN, HEADS, LAYERS, 1e-5, VOCAB, max_context=CONTEXT, jit=False)
    Tensor.manual_seed(0)  # tinygrad's own generator: the weights are the same on every machine
    for name, w in get_state_dict(m).items():
        scale = 1.0 if "norm" in name else 1.0 / math.sqrt(w.shape[-1])
        w.replace((Tensor.randn(*w.shape) * scale + (1.0 if "norm" in name else 0.0)).realize())
    return m


def start_pos(value: int) -> Variable:
    return Variable("start_pos", 0, CONTEXT - 1).bind(value)


def step(m: Transformer, token: Tensor, pos) -> Tensor:
    """The greedy next token after `token` at position `pos`: its KV cache update stays lazy (part of the step)."""
    realize = Tensor.realize
    Tensor.realize = lambda self, *a, **k: self  # llama.py realizes the cache update eagerly; keep it in the graph
    try:
        logits = m.forward(token, pos, NAN, 0, 0.8, 0.0, 0.0)
    finally:
        Tensor.realize = realize
    return logits[0, -1].argmax().cast(dtypes.int32).reshape(1, 1)


def with_caches(m: Transformer) -> Transformer:
    # the caches as buffers without data: the compiled step's state, which the caller owns and carries between calls
    for layer in m.layers:
        layer.attention.cache_kv = Tensor.empty(2, 1, CONTEXT, HEADS, DIM // HEADS)
    return m


def outputs():
    return [step(with_caches(model()), Tensor.empty(1, 1, dtype=dtypes.int32), start_pos(0))]


def check():
    m = model()
    for layer in m.layers: layer.attention.cache_kv = Tensor.zeros(2, 1, CONTEXT, HEADS, DIM // HEADS).contiguous().realize()
    return [step(m, Tensor([[PROMPT]], dtype=dtypes.int32), start_pos(0))]


def decoder(jit: bool = False):
    """tinygrad's own decoding step on fresh zeroed caches: next_token(token, pos) -> the greedy next token (with
    `jit`, replayed by TinyJit, as llama.py's own generation runs it)."""
    m = model()
    for layer in m.layers: layer.attention.cache_kv = Tensor.zeros(2, 1, CONTEXT, HEADS, DIM // HEADS).contiguous().realize()
    run = lambda tok, pos: step(m, tok, pos).realize()  # noqa: E731
    if jit: run = TinyJit(run)
    return lambda token, pos: int(run(Tensor([[token]], dtype=dtypes.int32).realize(), start_pos(pos)).item())


def generate(steps: int = STEPS, jit: bool = False) -> list[int]:
    """tinygrad's greedy decoding from PROMPT: `steps` tokens."""
    next_token, out = decoder(jit), [PROMPT]
    for pos in range(steps): out.append(next_token(out[-1], pos))
    return out[1:]


if __name__ == "__main__":
    print(" ".join(map(str, generate())))
