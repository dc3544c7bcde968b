"""tinygrad programs that the live suite (check_program.py) exports and checks against tinygrad.

Each `@program` function builds a small model the way a tinygrad user would and returns the tensors to
realize. Weights come from tinygrad itself (its own initializers, realized before export, as a user loading a
checkpoint would have them) or from a fixed-seed numpy generator; nothing is computed here that tinygrad does
not compute in the same test. `xfail` names the open issue that makes tgc refuse the program today: the check
expects tgc to fail and fails loudly once it passes. `c_program` also links the model from C through its header.
With `steps`, the function returns a step (a function returning the tensors to realize) that tinygrad realizes
`steps` times and the compiled model runs as many times from C, carrying its state; with `seed`, the step's
random numbers come from Tensor.manual_seed(seed), called by the function after its set-up, and the C program sets
the random state from the seed alone. An `exact` program's values keep tinygrad's arithmetic exact (small integers
times powers of two), so tgc's results must equal tinygrad's bit for bit whatever order it sums in.
CMake reads the names from the `@program("...")` lines, so keep one per line.
"""
from __future__ import annotations

import math

import numpy as np
from tinygrad import Tensor, Variable, dtypes, nn
from tinygrad.nn.state import get_parameters

PROGRAMS: dict[str, dict] = {}


def program(name: str, xfail: str | None = None, c_program: bool = False, steps: int = 0, seed: int | None = None,
            exact: bool = False):
    def register(fn):
        PROGRAMS[name] = {"fn": fn, "xfail": xfail, "c_program": c_program, "steps": steps, "seed": seed,
                          "exact": exact}
        return fn
    return register


def data(*shape, seed=0, dtype=np.float32, scale=1.0) -> Tensor:
    """A realized input of fixed-seed normal values."""
    rng = np.random.default_rng(seed)
    return Tensor((rng.standard_normal(shape) * scale).astype(dtype)).realize()


def ints(low, high, *shape, seed=0, dtype=np.int32) -> Tensor:
    return Tensor(np.random.default_rng(seed).integers(low, high, shape).astype(dtype)).realize()


def realized(module, seed=0):
    """A tinygrad module with its parameters initialized by tinygrad (fixed seed) and realized."""
    Tensor.manual_seed(seed)
    Tensor.realize(*get_parameters(module))
    return module


@program("linear", c_program=True)
def linear():
    l1, l2 = realized(nn.Linear(16, 32), 1), realized(nn.Linear(32, 8), 2)
    x = data(4, 16)
    return [l2(l1(x).relu())]


@program("linear_packed")
def linear_packed():
    """nn.Linear over enough tokens that its transposed weight is packed panel by panel (MatmulTiling.cpp): with
    K = 64 the pack is lowered as transposed blocks of registers (TransposedCopy.h), with K = 40 element by element;
    a leaky ReLU compares the sums, so that tile evaluates it from an epilogue tile."""
    wide, narrow = realized(nn.Linear(64, 512), 1), realized(nn.Linear(40, 512), 2)
    return [wide(data(64, 64)).gelu(), narrow(data(64, 40, seed=1)).leaky_relu()]


@program("matmul_blocked", exact=True)
def matmul_blocked():
    """A matmul whose 2048-step reduction is too long for a packed panel of two 32-column tiles, so it runs in two
    blocks of 1024, the second adding its sums to the first's (MatmulTiling.cpp: blocked reductions). Small
    integers: every order of the sums is exact, so a block summed twice or left out shows."""
    return [ints(-4, 5, 32, 2048, seed=1, dtype=np.float32) @ ints(-4, 5, 2048, 512, seed=2, dtype=np.float32)]


@program("row_fusion")
def row_fusion():
    """Row kernels run as one (RowFusion.h): softmax's max, sum of exps and normalized exps over each row, the exp
    stored once; log_softmax; layernorm's mean, variance and scaled output, then a matmul that must stay a kernel of
    its own; a row minus the previous row's maximum, which reads a row the same iteration does not write; std."""
    x = data(1024, 512, seed=1)  # 2 MiB: fused kernels share at least 1 MiB
    w = data(512, 32, seed=2, scale=0.04)
    g, b = data(512, seed=3), data(512, seed=4)
    ln = x.layernorm() * g + b
    return [x.softmax(1), x.log_softmax(1), ln @ w, (x[1:] - x[:-1].max(1, keepdim=True)).exp(), x.std(1)]


@program("vector_matrix")
def vector_matrix():
    """x @ W for one row of x (SplitVectorMatrix.h): the product in 8 parts of W's rows, each streaming whole rows
    into its row of partial sums, then their sum; and a batch of 4 rows, which keeps its register tile."""
    x, w = data(1, 2048, seed=1), data(2048, 1024, seed=2, scale=0.05)
    return [x @ w, data(4, 2048, seed=3) @ w]


@program("causal_attention")
def causal_attention():
    """Causal scaled dot-product attention over enough queries and heads that q @ k.T is a packed register tile whose
    causal mask is evaluated after the tile, from its sums (MatmulTiling.cpp's epilogue tile)."""
    q, k, v = data(1, 4, 128, 64, seed=1), data(1, 4, 128, 64, seed=2), data(1, 4, 128, 64, seed=3)
    return [q.scaled_dot_product_attention(k, v, is_causal=True)]


@program("conv2d")
def conv2d():
    c1, c2 = realized(nn.Conv2d(3, 8, 3, padding=1), 1), realized(nn.Conv2d(8, 4, 3, stride=2, bias=False), 2)
    x = data(2, 3, 10, 10)
    return [c2(c1(x).relu())]


@program("conv_packed_weights")
def conv_packed_weights():
    """A 3x3 convolution over 56 x 56 images, wide enough that its output pixels are one merged loop of 32-pixel
    tiles with the window's taps as the outer reduction loops (DivmodSplit.h), and big enough that its weights are
    copied once into a table in the order the tile reads them (RowPack.h)."""
    conv = realized(nn.Conv2d(16, 16, 3, padding=1), 1)
    return [conv(data(4, 16, 56, 56)).relu()]


@program("batchnorm_eval")
def batchnorm_eval():
    conv, bn = realized(nn.Conv2d(3, 8, 3), 1), nn.BatchNorm(8)
    bn.running_mean.assign(data(8, seed=2, scale=0.1)).realize()
    bn.running_var.assign(data(8, seed=3).abs() + 0.5).realize()
    bn.weight.assign(data(8, seed=4)).realize()
    bn.bias.assign(data(8, seed=5)).realize()
    x = data(2, 3, 12, 12)
    return [bn(conv(x)).relu().max_pool2d()]


@program("layernorm")
def layernorm():
    ln, rms = realized(nn.LayerNorm(32), 1), realized(nn.RMSNorm(32), 2)
    x = data(4, 6, 32, scale=3.0)
    return [ln(x), rms(x + 1)]


@program("embedding")
def embedding():
    emb = realized(nn.Embedding(50, 16), 1)
    idx = ints(0, 50, 3, 7)
    logits = emb(idx).sum(axis=1) @ emb.weight.T
    return [emb(idx), logits.sparse_categorical_crossentropy(ints(0, 50, 3, seed=1))]


@program("attention")
def attention():
    q, k, v = data(2, 4, 12, 16, seed=1), data(2, 4, 12, 16, seed=2), data(2, 4, 12, 16, seed=3)
    mask = data(2, 1, 12, 12, seed=4) > 0
    return [q.scaled_dot_product_attention(k, v, is_causal=True), q.scaled_dot_product_attention(k, v, attn_mask=mask)]


@program("assign")
def assign():
    cache = Tensor.zeros(2, 8, 16).contiguous().realize()
    new = data(2, 3, 16)
    cache[:, 2:5].assign(new * 2)
    return [cache.sum(axis=2), cache]


@program("half")
def half():
    a, b = data(16, 32, dtype=np.float16), data(32, 24, dtype=np.float16, seed=1)
    y = (a @ b).relu() + 0.5
    return [y, y.float().softmax(axis=1), a.cast(dtypes.float32).sum(axis=0).half()]


@program("bfloat16")
def bfloat16():
    a = Tensor(np.random.default_rng(0).standard_normal((16, 32)).astype(np.float32), dtype=dtypes.bfloat16).realize()
    b = Tensor(np.random.default_rng(1).standard_normal((32, 8)).astype(np.float32), dtype=dtypes.bfloat16).realize()
    c = Tensor(np.random.default_rng(2).standard_normal((8,)).astype(np.float32), dtype=dtypes.bfloat16).realize()
    y = a @ b + c
    return [y, y.float().exp(), (a.float() * 3).cast(dtypes.bfloat16)]


def lowp_weights(n: int, k: int, values) -> tuple:
    """A weight W[n, k] realized as float32, float16, bfloat16 and int8 with a per-row float32 scale (w8 * scale
    is W), from `values(n, k)`: int8 levels, scaled to floats by a per-row scale."""
    levels = values(n, k)
    scale = np.ldexp(1.0, -(np.arange(n) % 4 + 6)).astype(np.float32).reshape(n, 1)  # 2^-6 .. 2^-9
    wf = levels.astype(np.float32) * scale
    w32 = Tensor(wf).realize()
    return (w32, w32.cast(dtypes.half).realize(), w32.cast(dtypes.bfloat16).realize(),
            Tensor(levels.astype(np.int8)).realize(), Tensor(scale).realize())


def lowp_products(x: Tensor, weights: tuple) -> list:
    """x @ W.T with W's low-precision copies, written as tinygrad users write them (half: tinygrad multiplies in
    half and sums in float32, its sum_acc_dtype, then casts the sum to half)."""
    w32, w16, wb16, w8, scale = weights
    return [x @ w32.T, x.half() @ w16.T, x @ w16.T.float(), x @ wb16.cast(dtypes.float).T,
            x @ (w8.float() * scale).T, (x @ w8.T.float()) * scale.reshape(-1)]


# Matrix-vector products with float16, bfloat16 and int8 weights (bandwidth-bound decoding, issue #33): large enough
# for the tile of dot products and both threads. Small integer levels and power-of-two scales make every product and
# partial sum exact in float32 (and the half sums within 2048), so tgc's results equal tinygrad's bit for bit.
@program("lowp_matvec", exact=True)
def lowp_matvec():
    x = ints(-3, 4, 2048, seed=1, dtype=np.float32)
    return lowp_products(x, lowp_weights(1024, 2048, lambda n, k: np.random.default_rng(2).integers(-127, 128, (n, k))))


# The same products over normal values at a decoding step's shape ([1, 1, K] tokens), within the dtypes' tolerance.
@program("lowp_matvec_normal")
def lowp_matvec_normal():
    x = data(1, 1, 2048, seed=1)
    levels = lambda n, k: np.clip(np.random.default_rng(2).standard_normal((n, k)) * 40, -127, 127).round()
    return lowp_products(x, lowp_weights(512, 2048, levels))


@program("int_casts")
def int_casts():
    img = ints(0, 256, 2, 3, 8, 8, dtype=np.uint8)
    w8, x8 = ints(-128, 128, 16, 12, dtype=np.int8, seed=1), ints(-128, 128, 4, 16, dtype=np.int8, seed=2)
    acc = x8.cast(dtypes.int32) @ w8.cast(dtypes.int32)
    scale = data(12, seed=3).abs() * 0.01
    return [img.float() / 255 - 0.5, acc, (acc.float() * scale).clip(-127, 127).cast(dtypes.int8),
            (data(64, seed=4) * 100).clip(0, 255).cast(dtypes.uint8), img.cast(dtypes.int8)]


@program("resnet_basicblock")
def resnet_basicblock():
    from extra.models.resnet import BasicBlock
    block = realized(BasicBlock(16, 16), 1)
    return [block(data(2, 16, 8, 8))]


@program("resnet_bottleneck")
def resnet_bottleneck():
    from extra.models.resnet import Bottleneck
    block = realized(Bottleneck(16, 8, stride=2), 1)
    return [block(data(1, 16, 8, 8))]


@program("bert_layer")
def bert_layer():
    from extra.models.bert import BertLayer
    layer = realized(BertLayer(32, 64, 4, 0.0, 0.0), 1)
    mask = Tensor(np.array([[1] * 10, [1] * 7 + [0] * 3], dtype=np.float32)).realize()
    ext = (1.0 - mask.reshape(2, 1, 1, 10)) * -10000.0
    return [layer(data(2, 10, 32), ext)]


@program("vit_block")
def vit_block():
    from extra.models.transformer import TransformerBlock
    block = realized(TransformerBlock(32, 4, 64, prenorm=True, act=lambda x: x.gelu()), 1)
    return [block(data(2, 9, 32))]


@program("llama_tiny")
def llama_tiny():
    from extra.models.llama import Transformer
    model = realized(Transformer(dim=32, hidden_dim=64, n_heads=4, n_layers=2, norm_eps=1e-5, vocab_size=64,
                                 n_kv_heads=2, max_context=16, jit=False, disable_kv_cache=True), 1)
    tokens = ints(0, 64, 1, 8)
    logits = model.forward(tokens, 0, math.nan, 0, 0.8, 0.0, 0.0)
    return [logits, logits[:, -1, :].argmax(axis=-1)]


@program("reductions")
def reductions():
    x = data(6, 40, scale=2.0)
    return [x.log_softmax(axis=1), x.cumsum(axis=1), x.argmax(axis=1), x.max(axis=0), x.std(axis=1),
            x.sigmoid().mean(), (x > 0).sum(axis=1)]


@program("lazy_nn_init")
def lazy_nn_init():
    Tensor.manual_seed(0)
    return [nn.Linear(8, 4)(data(2, 8))]


@program("random_draws", steps=3, seed=7)
def random_draws():
    from tinygrad.helpers import Context
    x = data(6, 10)
    Tensor.manual_seed(7)

    def step():
        with Context(TRAINING=1):
            return [Tensor.rand(1000), Tensor.randn(3, 5), Tensor.randint(20, low=-3, high=9), x.dropout(0.4),
                    Tensor.kaiming_uniform(4, 6, dtype=dtypes.half)]
    return step


@program("dropout_training", steps=4, seed=3)
def dropout_training():
    from tinygrad.helpers import Context
    from tinygrad.nn.optim import Adam

    class Net:
        def __init__(self):
            self.l1, self.l2 = nn.Linear(8, 16), nn.Linear(16, 4)

        def __call__(self, x):
            return self.l2(self.l1(x).relu().dropout(0.3))
    net = realized(Net(), 1)
    opt = Adam(get_parameters(net), lr=0.01)
    Tensor.realize(*get_parameters(opt))  # the optimizer's state is data the steps carry, as after a first step
    x, y = data(6, 8), ints(0, 4, 6)
    Tensor.manual_seed(3)

    def step():
        with Context(TRAINING=1):
            opt.zero_grad()
            loss = net(x).sparse_categorical_crossentropy(y)
            loss.backward()
            return [loss, *opt.schedule_step()]
    return step


# Variables: each program's Variable is bound to one value; the graph keeps it symbolic (tinygrad's kernels take it
# as an argument) and tgc must compute what tinygrad computes at that value.
def bound(name="n", low=1, high=8, value=5):
    return Variable(name, low, high).bind(value)


@program("variable_batch")
def variable_batch():
    return [data(8, 16)[:bound()].sum(axis=0)]


@program("variable_linear_into_slice")
def variable_linear_into_slice():
    n, lin = bound(), realized(nn.Linear(16, 4), 1)
    out = Tensor.zeros(8, 4).contiguous().realize()
    out[:n].assign(lin(data(8, 16)[:n]).relu())
    return [out]


@program("variable_softmax_length")
def variable_softmax_length():
    n = bound(high=16, value=11)
    out = Tensor.zeros(4, 16).contiguous().realize()
    out[:, :n].assign(data(4, 16)[:, :n].softmax(-1))
    return [out]


@program("variable_mean_and_max")
def variable_mean_and_max():
    x = data(8, 16)[:bound()]
    return [x.mean(0), x.max(0), (data(4) * bound()).contiguous()]


@program("variable_kv_cache")
def variable_kv_cache():
    pos = bound("pos", 0, 15, 6)
    cache = Tensor.zeros(16, 8).contiguous().realize()
    cache[pos:pos + 1].assign(data(1, 8))
    scores = (cache[:pos + 1] @ data(8, seed=2)).softmax(0)
    return [(scores.reshape(-1, 1) * cache[:pos + 1]).sum(0), cache]


@program("variable_two")
def variable_two():
    a, b = bound("a", 1, 8, 3), bound("b", 1, 6, 6)
    out = Tensor.zeros(128).contiguous().realize()
    out[:a * 16].assign(data(8, 16)[:a].reshape(a * 16) * 2)
    return [data(8, 8)[:a, :b].sum(1).sum(0), out, data(10, 4)[b:b + 4].contiguous()]


@program("small_cnn")
def small_cnn():
    class Net:
        def __init__(self):
            self.c1, self.b1 = nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm(8)
            self.c2, self.b2 = nn.Conv2d(8, 16, 3), nn.BatchNorm(16)
            self.fc = nn.Linear(16 * 2 * 2, 10)

        def __call__(self, x):
            x = self.b1(self.c1(x)).relu().max_pool2d()
            x = self.b2(self.c2(x)).relu().max_pool2d()
            return self.fc(x.flatten(1)).log_softmax()
    return [realized(Net(), 1)(data(4, 1, 14, 14))]


@program("conv_transpose")
def conv_transpose():
    ct = realized(nn.ConvTranspose2d(4, 3, 3, stride=2, padding=1, output_padding=1), 1)
    x = data(2, 4, 5, 5)
    return [ct(x), x.conv_transpose2d(data(4, 2, 2, 2, seed=4), groups=2, dilation=2)]


@program("einsum_sort")
def einsum_sort():
    a, b = data(2, 3, 4, seed=1), data(2, 4, 5, seed=2)
    values, indices = data(4, 16, seed=6).topk(3, dim=1)
    return [Tensor.einsum("bij,bjk->bik", a, b), Tensor.einsum("bij,bij->b", a, a), values, indices]


@program("losses")
def losses():
    logits, y = data(6, 5, seed=1, scale=2.0), ints(0, 5, 6, seed=2)
    p, t = data(6, 5, seed=3).sigmoid(), (data(6, 5, seed=4) > 0).float()
    return [logits.cross_entropy(y, label_smoothing=0.1), logits.sparse_categorical_crossentropy(y, ignore_index=2),
            p.binary_crossentropy(t), logits.binary_crossentropy_logits(t), logits.log_softmax().nll_loss(y)]


@program("weak_dtypes")
def weak_dtypes():
    a, i = data(16, seed=1), ints(-5, 5, 16, seed=2)
    u8 = ints(0, 256, 16, seed=3, dtype=np.uint8)
    return [(a > 0).where(1.0, -1.0) * a, i * 2.5, (u8 * (1 / 255.0)).float(), (a > 0).where(1.0, 0.0).sum(),
            i.one_hot(6)]


@program("cast_chains")
def cast_chains():
    x = data(8, scale=300)
    return [x.cast(dtypes.half).cast(dtypes.float32), x.cast(dtypes.bfloat16).cast(dtypes.float32),
            x.cast(dtypes.int32).cast(dtypes.float64), (x.cast(dtypes.half) * 2).cast(dtypes.float32)]


@program("efficientnet_mbconv")
def efficientnet_mbconv():
    from extra.models.efficientnet import MBConvBlock
    block = realized(MBConvBlock(3, (2, 2), 2, 8, 8, 0.25, True), 1)
    return [block(data(1, 8, 8, 8))]


@program("sgd_training_step")
def sgd_training_step():
    from tinygrad.helpers import Context
    from tinygrad.nn.optim import SGD
    model = realized(nn.Linear(4, 3), 1)
    opt = SGD(get_parameters(model), lr=0.1, momentum=0.9)
    with Context(TRAINING=1):
        opt.zero_grad()
        loss = (model(data(5, 4)) - 1).square().mean()
        loss.backward()
        opt.schedule_step()
        return [loss, model.weight, model.bias]


def loss_and_gradients(loss: Tensor, params: list[Tensor]) -> list[Tensor]:
    """The loss and d(loss)/d(param) for every parameter, as `loss.backward()` leaves them."""
    for p in params:
        p.requires_grad = True
    loss.backward()
    return [loss] + [p.grad for p in params]


@program("cnn_gradients")
def cnn_gradients():
    from tinygrad.helpers import Context
    c1, bn = realized(nn.Conv2d(2, 6, 3, padding=1), 1), realized(nn.BatchNorm(6), 2)
    c2, fc = realized(nn.Conv2d(6, 4, 3, stride=1), 3), realized(nn.Linear(4, 5), 4)
    x, y = data(3, 2, 10, 10), ints(0, 5, 3, seed=1)
    with Context(TRAINING=1):  # batchnorm normalizes with the batch's statistics
        h = bn(c1(x)).relu().max_pool2d()
        h = c2(h).relu().avg_pool2d(kernel_size=3).flatten(1)
        loss = fc(h).sparse_categorical_crossentropy(y)
        return loss_and_gradients(loss, [c1.weight, c1.bias, bn.weight, bn.bias, c2.weight, c2.bias, fc.weight,
                                         fc.bias])


@program("attention_gradients")
def attention_gradients():
    emb, qkv, out = realized(nn.Embedding(24, 16), 1), realized(nn.Linear(16, 48), 2), realized(nn.Linear(16, 24), 3)
    ln = realized(nn.LayerNorm(16), 4)
    tokens, y = ints(0, 24, 2, 6), ints(0, 24, 2, 6, seed=1)
    h = emb(tokens)
    q, k, v = [t.reshape(2, 6, 2, 8).transpose(1, 2) for t in qkv(ln(h)).chunk(3, dim=-1)]
    a = q.scaled_dot_product_attention(k, v, is_causal=True).transpose(1, 2).reshape(2, 6, 16)
    loss = out(h + a).sparse_categorical_crossentropy(y)
    return loss_and_gradients(loss, [emb.weight, qkv.weight, qkv.bias, out.weight, out.bias, ln.weight, ln.bias])


@program("resnet18")
def resnet18():
    from extra.models.resnet import ResNet18
    model = realized(ResNet18(num_classes=10), 1)
    return [model(data(1, 3, 32, 32))]


@program("strided_pool_chains")
def strided_pool_chains():
    x = data(1, 2, 9, 9)
    conv = realized(nn.Conv2d(2, 4, 3, stride=2, padding=1), 1)
    return [x.pad([1, 1, 1, 1]).max_pool2d((3, 3), 2).pad([1, 1, 1, 1]).max_pool2d((3, 3), 2),
            conv(x).relu().pad([1, 1, 1, 1]).max_pool2d((3, 3), 2),
            x.avg_pool2d(3, 2, padding=1).avg_pool2d(3, 2, padding=1)]


@program("unread_inputs")
def unread_inputs():
    # the schedule reads neither x nor the first data: the compiled model still takes both as inputs
    x = data(3, 4, seed=1)
    return [data(3, 4) * 0, x[:, 2:2].sum(1) + data(3, seed=2)]


@program("bitcast_sizes")
def bitcast_sizes():
    # (+ 1 never wraps: tinygrad's C renderer computes a uint8/uint16 add in int, so a wrapped value feeding a
    # widening cast would differ from tgc's, which wraps every op; that is not about BITCAST)
    u8, f, h = ints(0, 255, 4, 16, dtype=np.uint8), data(4, 6), ints(0, 65535, 2, 8, seed=3, dtype=np.uint16)
    return [(u8 + 1).bitcast(dtypes.uint32), (f * 2).bitcast(dtypes.uint16), (h + 1).bitcast(dtypes.float32),
            (u8.bitcast(dtypes.uint32) + 1).bitcast(dtypes.uint8), f.bitcast(dtypes.uint8).cast(dtypes.int32).sum(1)]


@program("keccak")
def keccak():
    return [Tensor(np.arange(200, dtype=np.uint8)).realize().keccak()]


@program("bitcast_views")
def bitcast_views():
    return [data(16).bitcast(dtypes.int32), ints(0, 256, 16, dtype=np.uint8).bitcast(dtypes.uint32),
            data(4, 6, seed=1)[1:3].bitcast(dtypes.uint16)]
