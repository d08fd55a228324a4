"""OpticsAugment (Algorithm 1): seeded determinism, mixing and normalisation, alpha/p edge cases, DataLoader batches."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import skimage.data
import torch

from corruptgen.families.opticsbench.augment import IMAGENET_MEAN, IMAGENET_STD, OpticsAugment, beta_weights
from corruptgen.families.opticsbench.conv import psf_conv
from corruptgen.families.opticsbench.kernelio import load_kernels

STACK = Path(__file__).resolve().parents[3] / "shared/reference/opticsbench/kernel_stack_iccvw.pt"
pytestmark = pytest.mark.skipif(not STACK.is_file(), reason="published kernel stack not available")
MEAN = torch.tensor(IMAGENET_MEAN).reshape(1, 3, 1, 1)
STD = torch.tensor(IMAGENET_STD).reshape(1, 3, 1, 1)


@pytest.fixture(scope="module")
def batch() -> torch.Tensor:
    """Six real photographs, 96×96 crops, as a (6, 3, 96, 96) float batch in [0, 1] (what ToTensor gives)."""
    names = ("astronaut", "coffee", "chelsea", "rocket", "immunohistochemistry", "hubble_deep_field")
    arr = np.stack([getattr(skimage.data, n)()[100:292:2, 100:292:2, :3] for n in names])
    return torch.from_numpy(arr).permute(0, 3, 1, 2).float() / 255


def make(seed: int, **kw) -> OpticsAugment:
    return OpticsAugment(str(STACK), generator=torch.Generator().manual_seed(seed), **kw)


def test_seeded_generator_is_deterministic(batch):
    a, b, c = make(7), make(7), make(8)
    out_a, prm = a(batch, return_params=True)
    assert torch.equal(out_a, b(batch)) and not torch.equal(out_a, c(batch))
    assert torch.equal(a(batch), b(batch))  # the second batch too
    assert prm["kernel_index"].shape == (6,) and prm["kernel_index"].max() < 8
    assert ((prm["weight"] >= 0) & (prm["weight"] <= 1)).all()


def test_output_is_the_normalised_mix_of_clean_and_blurred(batch):
    aug = make(1)
    out, prm = aug(batch, return_params=True)
    table = torch.from_numpy(load_kernels(STACK)[0])[:, 2]  # severity 3, all 8 aberrations
    blurred = psf_conv(batch, table[prm["kernel_index"]], padding="reflect")
    w = prm["weight"].float().reshape(-1, 1, 1, 1)
    expected = ((1 - w) * batch + w * blurred - MEAN) / STD
    assert (out - expected).abs().max() < 1e-5
    raw = make(1, normalize=None)(batch)
    assert raw.min() >= -1e-6 and raw.max() <= 1 + 1e-6  # a convex mix of [0, 1] images stays in [0, 1]
    assert (raw - (expected * STD + MEAN)).abs().max() < 1e-5


def test_alpha_zero_and_p_edge_cases(batch):
    aug = make(3, alpha=0.0, normalize=None)
    out, prm = aug(batch, return_params=True)
    w = prm["weight"]
    assert set(w.tolist()) <= {0.0, 1.0} and 0 < w.sum() < len(w)  # the Beta(α→0) limit: all or nothing
    blurred = psf_conv(batch, aug.kernels[prm["kernel_index"]], padding="reflect")
    for i, wi in enumerate(w.tolist()):
        target = blurred[i] if wi == 1 else batch[i]
        assert (out[i] - target).abs().max() < 1e-6
    untouched = make(3, p=0.0)(batch)
    assert torch.equal(untouched, (batch - MEAN) / STD)
    assert not torch.equal(make(3, p=1.0)(batch), untouched)


def test_beta_weights():
    u = torch.rand(4000, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    assert torch.equal(beta_weights(u, 1.0), u)
    w = beta_weights(u, 0.5)
    assert abs(w.mean().item() - 0.5) < 0.03 and ((w < 0.1) | (w > 0.9)).float().mean() > 0.35  # U-shaped
    narrow = beta_weights(u, 20.0)  # Beta(20, 20): mean 1/2, std sqrt(1/164)
    assert abs(narrow.mean().item() - 0.5) < 0.01 and abs(narrow.std().item() - (1 / 164) ** 0.5) < 0.005
    with pytest.raises(ValueError, match="alpha"):
        OpticsAugment(str(STACK), alpha=-1)


def test_dataloader_batches_and_kernel_inputs(batch):
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(batch), batch_size=4, shuffle=False)
    aug = make(5, padding="zero")
    shapes = [tuple(aug(x).shape) for (x,) in loader]
    assert shapes == [(4, 3, 96, 96), (2, 3, 96, 96)]
    stack = load_kernels(STACK)[0]
    for kernels in (stack, torch.from_numpy(stack[:, 2]), stack[3, 2]):
        a = OpticsAugment(kernels, generator=torch.Generator().manual_seed(0))
        assert a.kernels.shape[1:] == (3, 25, 25) and torch.isfinite(a(batch)).all()
    assert torch.equal(make(0, severity=5).kernels, torch.from_numpy(stack[:, 4]))
    as_uint8 = (batch * 255).round().to(torch.uint8)
    assert (make(2)(as_uint8) - make(2)(as_uint8.float() / 255)).abs().max() == 0
    with pytest.raises(ValueError, match=r"\(B, 3, H, W\)"):
        aug(batch[0])


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_cuda_batch_stays_on_device(batch):
    aug = make(0).to("cuda")
    out = aug(batch.cuda())
    assert out.device.type == "cuda" and (out.cpu() - make(0)(batch)).abs().max() < 1e-4
