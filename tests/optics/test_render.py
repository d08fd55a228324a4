"""The OpticsBench uint8 blur (scipy.fft on the CPU, cached spectra, image by image) gives the bytes of the plain
``torch.fft`` pipeline it replaced, for every kernel of the built-in stack, both quantisations and both paddings."""

from __future__ import annotations

import numpy as np
import pytest
import skimage.data
import torch
import torch.nn.functional as F

from corruptgen.families.opticsbench import corruptions as oc
from corruptgen.families.opticsbench.conv import fft_size, irfft2, psf_conv, rfft2
from corruptgen.families.opticsbench.render import blur_uint8
from corruptgen.family.preprocess import get_preprocess


@pytest.fixture(scope="module")
def images() -> np.ndarray:
    """Four real photos after Resize(256) + CenterCrop(224), (4, 224, 224, 3) uint8."""
    pre = get_preprocess("imagenet")
    return np.stack([pre(getattr(skimage.data, n)()) for n in ("astronaut", "coffee", "chelsea", "rocket")])


@pytest.fixture(scope="module")
def table() -> torch.Tensor:
    _, meta = oc.load_stack("opticsbench")
    return oc._stack_tensor(str(meta["path"]), "cpu")  # (8, 5, 3, 25, 25) float64


def torch_fft_blur(images: np.ndarray, kernels: torch.Tensor, padding: str, quantize: str, ref32: bool) -> np.ndarray:
    """The previous implementation in one function: ``torch.fft`` (MKL) on the whole batch, per-image kernels
    (N, 3, k, k), the same geometry, tie guard and quantisation."""
    _, h, w, _ = images.shape
    kh, kw = kernels.shape[-2:]
    top, left = (kh - 1) // 2, (kw - 1) // 2
    x = torch.from_numpy(images).permute(0, 3, 1, 2)
    x = x.float().div(255).double() if quantize == "truncate" else x.double().div(255)
    if padding == "zero":
        shape = (fft_size(h + max(top, kh - 1 - top)), fft_size(w + max(left, kw - 1 - left)))
    else:
        x = F.pad(x, (left, kw - 1 - left, top, kh - 1 - top), mode="reflect")
        shape = (fft_size(h + kh - 1), fft_size(w + kw - 1))
    placed = F.pad(kernels, (0, shape[1] - kw, 0, shape[0] - kh))
    if padding == "zero":
        placed = torch.roll(placed, shifts=(-top, -left), dims=(-2, -1))
    spectrum = torch.fft.rfft2(x, s=shape) * torch.fft.rfft2(placed).conj()
    y = torch.fft.irfft2(spectrum, s=shape)[..., :h, :w]
    if quantize == "truncate" and ref32:
        q = torch.clip(y.to(torch.float32), 0, 1).mul(255).to(torch.uint8)
    else:
        offset = (0.5 if quantize == "round" else 0.0) + 1e-6
        q = (y * 255).add_(offset).clamp_(0, 255 + offset).to(torch.uint8)
    return q.permute(0, 2, 3, 1).numpy()


@pytest.mark.parametrize("padding", ["zero", "reflect"])
@pytest.mark.parametrize("quantize", ["round", "truncate"])
def test_same_bytes_as_the_torch_fft_pipeline(images, table, padding, quantize):
    # all 8 kernels of the stack (every severity once), one per image of a batch of 8, as batch_fn passes them
    modes, severities = list(range(8)), [0, 1, 2, 3, 4, 4, 2, 0]
    kernels = table[modes, severities]
    batch = np.concatenate([images, images[::-1]])
    ours = blur_uint8(batch, kernels, modes, padding=padding, quantize=quantize, device="cpu", reference_float32=True)
    assert ours.flags.c_contiguous and np.array_equal(ours, torch_fft_blur(batch, kernels, padding, quantize, True))
    single = blur_uint8(images[2:3], table[5, 2], padding=padding, quantize=quantize, device="cpu",
                        reference_float32=True)  # fmt: skip
    assert np.array_equal(single[0], torch_fft_blur(images[2:3], table[5, 2][None], padding, quantize, True)[0])


@pytest.mark.parametrize(("padding", "quantize"), [("reflect", "round"), ("zero", "truncate")])
def test_disk_kernel_same_bytes_as_the_torch_fft_pipeline(images, padding, quantize):
    # the disk's 1/29 weights put many pixels on exact ties: the guard, not the FFT's last bits, decides them
    for severity in (1, 5):
        k = torch.from_numpy(oc.disk_kernel(severity)).double().expand(3, -1, -1).contiguous()
        ours = blur_uint8(images, k, padding=padding, quantize=quantize, device="cpu", reference_float32=False)
        old = torch_fft_blur(images, k.expand(len(images), -1, -1, -1), padding, quantize, False)
        assert np.array_equal(ours, old), severity


def test_image_spectrum_cache_compares_pixels_not_identity(images, table):
    batch = images.copy()
    opts = dict(padding="zero", quantize="round", device="cpu", reference_float32=True)
    first = blur_uint8(batch, table[0, 4], **opts)
    assert np.array_equal(blur_uint8(batch, table[0, 4], **opts), first)  # a hit gives what the miss gave
    batch[1, 100, 100] = 255 - batch[1, 100, 100]  # same array object, one pixel changed in place
    changed = blur_uint8(batch, table[0, 4], **opts)
    assert np.array_equal(changed[[0, 2, 3]], first[[0, 2, 3]])
    assert not np.array_equal(changed[1], first[1])
    assert np.array_equal(changed, torch_fft_blur(batch, table[[0] * 4, 4], "zero", "round", True))


def test_scipy_transforms_match_torch_fft_and_keep_gradients():
    x = torch.rand(2, 3, 30, 28, dtype=torch.float64)
    z = rfft2(x, (36, 32))
    assert torch.allclose(z, torch.fft.rfft2(x, s=(36, 32)), atol=1e-12)
    assert torch.allclose(irfft2(z.clone(), (36, 32), overwrite=True), torch.fft.irfft2(z, s=(36, 32)), atol=1e-12)
    x32 = x.float().requires_grad_()
    y = psf_conv(x32, torch.rand(3, 25, 25), method="fft")  # gradients: torch.fft, not scipy
    y.sum().backward()
    assert x32.grad is not None and x32.grad.shape == x32.shape
