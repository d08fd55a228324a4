"""Tiny differentiable classifiers for attack tests: cheap stand-ins for the default EfficientNet-Lite0.

``tiny_models:TinySurrogate`` is a ``module:attribute`` model spec (this folder is on ``sys.path`` under pytest): 1000
classes, 16×16 input (a 224² image is resized inside, differentiably), ImageNet normalisation, fixed weights.
"""

from __future__ import annotations

import torch

from corruptgen.models.loading import EvalModel

MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


class TinyNet(torch.nn.Module):
    """conv(3→8, stride 2) → ReLU → conv(8→classes) → global mean, weights drawn from ``seed`` (no biases: the input
    decides). ``offset`` shifts every
    logit (the cross-entropy and the CW margin do not change; torchattacks' CW reads the max of the one-hot-masked
    logits, which equals the max over the other classes only when one of them is positive)."""

    def __init__(self, classes: int = 10, offset: float = 20.0, seed: int = 1) -> None:
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.conv2 = torch.nn.Conv2d(8, classes, 3, padding=1)
        g = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            for conv in (self.conv1, self.conv2):
                conv.weight.copy_(torch.randn(conv.weight.shape, generator=g) / conv.weight[0].numel() ** 0.5)
                conv.bias.zero_()
        self.offset = offset
        self.eval()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv2(torch.relu(self.conv1(x))).mean(dim=(2, 3)) * 4 + self.offset


class TinySurrogate(TinyNet):
    """1000 ImageNet classes on 16×16 inputs: a surrogate for ``corruptgen build adversarial`` in tests."""

    input_size, mean, std, num_classes = 16, MEAN, STD, 1000

    def __init__(self) -> None:
        super().__init__(classes=1000, seed=0)


class Normalised(torch.nn.Module):
    """The net behind its normalisation: what torchattacks attacks (it takes [0, 1] images)."""

    def __init__(self, net: torch.nn.Module) -> None:
        super().__init__()
        self.net = net
        self.register_buffer("mean", torch.tensor(MEAN).view(1, 3, 1, 1))
        self.register_buffer("std", torch.tensor(STD).view(1, 3, 1, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net((x - self.mean) / self.std)


def tiny_model(seed: int = 2) -> EvalModel:
    """A 10-class :class:`TinyNet` on 16×16 inputs as an :class:`EvalModel`."""
    net = TinyNet(seed=seed)
    return EvalModel(name="tiny", spec="tiny", forward=net, module=net, input_size=16, mean=MEAN, std=STD,
                     num_classes=10).to("cpu")  # fmt: skip


class NoGradSurrogate(TinySurrogate):
    """A surrogate whose forward runs under ``torch.no_grad``: not differentiable."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            return super().forward(x)
