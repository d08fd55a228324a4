"""A tiny differentiable classifier (two convolutions, 10 classes; its seed makes it predict several classes on the
test images) and four 16×16 images for the attack tests."""

from __future__ import annotations

import pytest
import torch

from corruptgen.models.loading import EvalModel

MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


class TinyNet(torch.nn.Module):
    """conv(3→8, stride 2) → ReLU → conv(8→10) → global mean: logits (N, 10). ``offset`` shifts every logit (the
    cross-entropy and the CW margin do not change; torchattacks' CW reads the max of the one-hot-masked logits, which
    equals the max over the other classes only when one of them is positive)."""

    def __init__(self, offset: float = 0.0) -> None:
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.conv2 = torch.nn.Conv2d(8, 10, 3, padding=1)
        self.offset = offset

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv2(torch.relu(self.conv1(x))).mean(dim=(2, 3)) * 4 + self.offset


class Normalised(torch.nn.Module):
    """The net behind its normalisation: what torchattacks attacks (it takes [0, 1] images)."""

    def __init__(self, net: torch.nn.Module) -> None:
        super().__init__()
        self.net = net
        self.register_buffer("mean", torch.tensor(MEAN).view(1, 3, 1, 1))
        self.register_buffer("std", torch.tensor(STD).view(1, 3, 1, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net((x - self.mean) / self.std)


def tiny_model(offset: float = 20.0, seed: int = 1) -> EvalModel:
    torch.manual_seed(seed)
    net = TinyNet(offset).eval()
    return EvalModel(name="tiny", spec="tiny", forward=net, module=net, input_size=16, mean=MEAN, std=STD,
                     num_classes=10).to("cpu")  # fmt: skip


@pytest.fixture(autouse=True)
def one_thread():
    """One torch thread for these tiny tensors (several threads only wait on each other), restored afterwards."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def images() -> torch.Tensor:
    """Four 16×16 images on the 8-bit grid of [0, 1] (as decoded images are)."""
    g = torch.Generator().manual_seed(1)
    return torch.randint(0, 256, (4, 3, 16, 16), generator=g).float() / 255


@pytest.fixture(scope="module")
def model() -> EvalModel:
    return tiny_model()
