"""Four 16×16 images and a tiny 10-class model (``tests/tiny_models.py``) for the attack tests, on one torch thread."""

from __future__ import annotations

import pytest
import torch
from tiny_models import tiny_model

from corruptgen.models.loading import EvalModel


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
