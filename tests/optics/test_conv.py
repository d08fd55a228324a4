"""Batched PSF convolution: both paths, the reference's orientation, padding and batching (published kernels)."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
import skimage.data
import torch
import torch.nn.functional as F

from corruptgen.families.opticsbench.conv import FFTGeometry, choose_method, fft_size, psf_conv
from corruptgen.families.opticsbench.kernelio import load_kernels
from corruptgen.family.preprocess import get_preprocess

STACK = Path(__file__).resolve().parents[3] / "shared/reference/opticsbench/kernel_stack_iccvw.pt"
pytestmark = pytest.mark.skipif(not STACK.is_file(), reason="published kernel stack not available")


@pytest.fixture(scope="module")
def kernels() -> torch.Tensor:
    return torch.from_numpy(load_kernels(STACK)[0])  # (8, 5, 3, 25, 25)


@pytest.fixture(scope="module")
def photos() -> torch.Tensor:
    """astronaut, coffee, chelsea, rocket after Resize 256 + CenterCrop 224, as a (4, 3, 224, 224) [0, 1] batch."""
    pre = get_preprocess("imagenet")
    arr = np.stack([pre(getattr(skimage.data, n)()) for n in ("astronaut", "coffee", "chelsea", "rocket")])
    return torch.from_numpy(arr).permute(0, 3, 1, 2).float() / 255


def reference_loop(x: torch.Tensor, k: torch.Tensor, padding: str) -> torch.Tensor:
    """The reference generator: per image and per channel ``F.conv2d`` (``generate_datasets.py``)."""
    out = torch.empty_like(x)
    for i in range(len(x)):
        ki = k if k.ndim == 3 else k[i]
        for c in range(3):
            xi = x[i : i + 1, c : c + 1]
            if padding == "reflect":
                out[i, c] = F.conv2d(F.pad(xi, (12, 12, 12, 12), mode="reflect"), ki[None, None, c])[0, 0]
            else:
                out[i, c] = F.conv2d(xi, ki[None, None, c], padding="same")[0, 0]
    return out


@pytest.mark.parametrize("padding", ["zero", "reflect"])
def test_direct_and_fft_agree_and_match_the_reference(photos, kernels, padding):
    per_image = kernels[[0, 3, 6, 7], [0, 2, 4, 1]]  # (4, 3, 25, 25): defocus, coma-x, trefoil, trefoil-y
    direct = psf_conv(photos, per_image, padding=padding, method="direct")
    fft = psf_conv(photos, per_image, padding=padding, method="fft")
    assert direct.shape == fft.shape == photos.shape and fft.dtype == torch.float32
    assert (direct - fft).abs().max() < 1e-5
    ref = reference_loop(photos, per_image, padding)
    assert (fft - ref).abs().max() < 1e-5 and (direct - ref).abs().max() < 1e-5
    assert torch.equal(psf_conv(photos, per_image, padding=padding), direct)  # auto on CPU: direct up to 25x25


def test_impulse_returns_the_kernel_rotated_by_180_degrees(kernels):
    k = kernels[3, 2]  # coma Z7: tail towards -x (the published stacks), not symmetric under rotation
    assert not torch.equal(k, k.flip(-2, -1))
    x = torch.zeros(1, 3, 41, 41)
    x[0, :, 20, 20] = 1.0
    window = (slice(None), slice(None), slice(8, 33), slice(8, 33))
    for method in ("direct", "fft"):
        out = psf_conv(x, k, method=method)
        assert (out[window][0] - k.flip(-2, -1)).abs().max() < 1e-6  # cross-correlation: no flip of the kernel
        flipped = psf_conv(x, k, method=method, flip=True)
        assert (flipped[window][0] - k).abs().max() < 1e-6  # true convolution: the PSF as imaged
        assert out.sum() == pytest.approx(3.0, abs=1e-5)


def test_zero_and_reflect_padding(photos, kernels):
    k = kernels[0, 4]
    flat = torch.full((1, 3, 64, 64), 0.5)
    zero, reflect = psf_conv(flat, k, padding="zero"), psf_conv(flat, k, padding="reflect")
    assert (reflect - 0.5).abs().max() < 1e-5  # kernels sum to 1: reflection keeps a flat image flat
    assert zero[..., 0, 0].max() < 0.45 and (zero[..., 12:-12, 12:-12] - 0.5).abs().max() < 1e-5  # zeros darken edges
    z, r = psf_conv(photos, k, padding="zero"), psf_conv(photos, k, padding="reflect")
    assert (z[..., 12:-12, 12:-12] - r[..., 12:-12, 12:-12]).abs().max() < 1e-5
    assert (z[..., :12, :] - r[..., :12, :]).abs().max() > 0.05
    assert torch.equal(psf_conv(flat, k, padding="zeros"), zero)
    # reflect padding is reflect-101 (OpenCV's default border, as ImageNet-C's cv2.filter2D)
    import cv2

    img = np.ascontiguousarray(photos[0, 1].double().numpy())
    kk = kernels[5, 3, 1].double()
    ours = psf_conv(photos[:1, 1:2].double(), kk[None], padding="reflect")[0, 0].numpy()
    assert np.abs(ours - cv2.filter2D(img, -1, kk.numpy(), borderType=cv2.BORDER_REFLECT_101)).max() < 1e-12


@pytest.mark.parametrize("method", ["direct", "fft"])
def test_batch_equals_per_image_and_shared_equals_repeated(photos, kernels, method):
    per_image = kernels[[1, 2, 4, 5], 3]
    batch = psf_conv(photos, per_image, method=method)
    for i in range(len(photos)):
        single = psf_conv(photos[i : i + 1], per_image[i], method=method)
        assert (batch[i] - single[0]).abs().max() < 1e-6
    shared = psf_conv(photos, kernels[6, 0], method=method, padding="reflect")
    repeated = psf_conv(photos, kernels[6, 0].expand(4, -1, -1, -1), method=method, padding="reflect")
    assert (shared - repeated).abs().max() < 1e-6


def test_float64_numpy_input_and_non_square_kernels():
    rng = np.random.default_rng(0)
    x = rng.random((2, 3, 37, 50))
    for kh, kw in ((5, 9), (4, 6), (1, 1)):
        k = rng.random((2, 3, kh, kw))
        a, b = psf_conv(x, k, method="direct"), psf_conv(x, k, method="fft")
        assert a.dtype == torch.float64 and (a - b).abs().max() < 1e-12
        with warnings.catch_warnings():  # torch warns that an even kernel needs a padded copy
            warnings.simplefilter("ignore")
            same = F.conv2d(torch.from_numpy(x[:1]), torch.from_numpy(k[0][:, None]), padding="same", groups=3)
        assert (a[:1] - same).abs().max() < 1e-12  # torch's 'same' (extra pixel of an even kernel after)


def test_memory_chunking_gives_the_same_result(photos, kernels, monkeypatch):
    from corruptgen.families.opticsbench import conv

    k = kernels[[0, 1, 2, 3], 2]
    whole = psf_conv(photos, k, method="fft")
    monkeypatch.setattr(conv, "_CHUNK_ELEMENTS", 1)  # one image per transform
    assert (psf_conv(photos, k, method="fft") - whole).abs().max() < 1e-6


def test_helpers_and_errors(photos, kernels):
    assert [fft_size(n) for n in (1, 7, 236, 247, 257)] == [1, 8, 240, 250, 270]
    assert choose_method(25, 25) == "direct" and choose_method(31, 31) == "fft"
    assert choose_method(5, 5, torch.float64) == "fft" and choose_method(3, 3, torch.float64) == "direct"
    assert choose_method(25, 25, device="cuda") == "fft" and choose_method(7, 7, device="cuda") == "direct"
    assert FFTGeometry(224, 224, 25, 25, "zero").shape == (240, 240)  # H + 12, no padded copy
    assert FFTGeometry(224, 224, 25, 25, "reflect").shape == (250, 250)
    with pytest.raises(ValueError, match="padding"):
        psf_conv(photos, kernels[0, 0], padding="circular")
    with pytest.raises(ValueError, match="kernels must be"):
        psf_conv(photos, kernels[0])
    with pytest.raises(ValueError, match=r"\(B, C, H, W\)"):
        psf_conv(photos[0], kernels[0, 0])
    with pytest.raises(ValueError, match="reflect padding"):
        psf_conv(torch.rand(1, 3, 10, 10), kernels[0, 0], padding="reflect")


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_cuda_matches_cpu(photos, kernels):
    k = kernels[[0, 3, 6, 7], 4]
    gpu = psf_conv(photos, k, device="cuda")
    assert gpu.device.type == "cuda"
    assert (gpu.cpu() - psf_conv(photos, k)).abs().max() < 1e-5
