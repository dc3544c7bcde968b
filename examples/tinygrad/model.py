"""A small tinygrad image classifier, exported for tgc (examples/tinygrad/README.md).

    tgc_export.py examples/tinygrad/model.py -o build/digits            # the model to deploy
    tgc_export.py examples/tinygrad/model.py:check -o build/digits-check --expected

`outputs()` is what gets deployed: its weights are realized (they become the model's constant data) and its
image is `Tensor.empty`, a buffer with no data, so the compiled model takes it as its input. `check()` is the
same model on a fixed image, with tinygrad's own answer written beside it (--expected).
"""
from tinygrad import Tensor, nn
from tinygrad.nn.state import get_parameters


class Net:
    def __init__(self):
        self.c1, self.c2 = nn.Conv2d(1, 8, 3, padding=1), nn.Conv2d(8, 16, 3, padding=1)
        self.bn = nn.BatchNorm(16)
        self.fc = nn.Linear(16 * 7 * 7, 10)

    def __call__(self, x: Tensor) -> Tensor:
        x = self.c1(x).relu().max_pool2d()
        x = self.bn(self.c2(x)).relu().max_pool2d()
        return self.fc(x.flatten(1)).log_softmax()


def net() -> Net:
    Tensor.manual_seed(42)   # tinygrad's own initializers, fixed; a real model would load its checkpoint here
    model = Net()
    Tensor.realize(*get_parameters(model))
    return model


def image() -> Tensor:
    """A 28 x 28 test pattern: a bright diagonal stroke on a dark background."""
    ramp = Tensor.arange(28).float()
    return ((ramp.reshape(28, 1) - ramp.reshape(1, 28)).abs() < 2).float().reshape(1, 1, 28, 28).realize()


def outputs():
    return [net()(Tensor.empty(1, 1, 28, 28))]


def check():
    return [net()(image())]
