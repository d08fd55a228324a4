"""OpticsBench corruptions: fn vs batch_fn bytes, mode choice, reference quantisation, the ImageNet-C disk baseline."""

from __future__ import annotations

import random
from pathlib import Path

import cv2
import numpy as np
import pytest
import skimage.data
import torch
import torch.nn.functional as F

from corruptgen.corruptions import get, list_corruptions
from corruptgen.errors import CorruptgenError
from corruptgen.families.opticsbench import corruptions as oc
from corruptgen.families.opticsbench.kernelio import load_kernels
from corruptgen.family.preprocess import get_preprocess

REF = Path(__file__).resolve().parents[3] / "shared/reference/opticsbench"
STACK = REF / "kernel_stack_iccvw.pt"
pytestmark = pytest.mark.skipif(not STACK.is_file(), reason="published kernel stack not available")


@pytest.fixture(scope="module")
def images() -> np.ndarray:
    """Four real photos after Resize(256) + CenterCrop(224), (4, 224, 224, 3) uint8."""
    pre = get_preprocess("imagenet")
    return np.stack([pre(getattr(skimage.data, n)()) for n in ("astronaut", "coffee", "chelsea", "rocket")])


def rngs(n: int, base: int = 0) -> list[np.random.Generator]:
    return [np.random.default_rng(base + i) for i in range(n)]


def test_registered():
    names = [c.name for c in list_corruptions("optics")]
    assert names == ["astigmatism", "coma", "defocus_spherical", "trefoil", "defocus_disk"]
    assert all(c.batch_fn is not None for c in list_corruptions("optics"))


@pytest.mark.parametrize(
    ("name", "quantize"),
    [("astigmatism", "round"), ("coma", "truncate"), ("defocus_spherical", "truncate"), ("trefoil", "round")],
)
def test_fn_and_batch_fn_give_the_same_bytes(images, name, quantize):
    c = get(f"optics/{name}")
    opts = dict(severity=4, kernels=str(STACK), quantize=quantize)
    batch, params = c.batch_fn(images, rngs(4), device="cpu", **opts)
    assert batch.shape == images.shape and batch.dtype == np.uint8
    for i, image in enumerate(images):
        single, prm = c.apply(image, np.random.default_rng(i), **opts)
        assert np.array_equal(single, batch[i]) and prm == params[i]
    a, b = oc.PAIRS[name]
    assert {p["fringe_mode"] for p in params} <= {a, b}
    p = params[0]
    assert p["severity"] == 4 and p["kernels"] == "kernel_stack_iccvw.pt" and p["padding"] == "zero"
    assert p["kernels_sha256"].startswith("afc243cc") and p["stack_index"] == p["fringe_mode"] - 4
    assert np.abs(batch.astype(int) - images).mean() > 2  # visibly blurred


def test_mode_choice_uses_both_kernels_and_the_right_one(images):
    c = get("optics/coma")
    _, params = c.batch_fn(np.repeat(images[:1], 16, 0), rngs(16), device="cpu", severity=2, kernels=str(STACK))
    modes = [p["fringe_mode"] for p in params]
    assert set(modes) == {7, 8}
    stack = torch.from_numpy(load_kernels(STACK)[0])
    for quantize in ("round", "truncate"):
        out, prm = c.apply(images[1], np.random.default_rng(3), severity=2, kernels=str(STACK), quantize=quantize)
        x32 = torch.from_numpy(images[1]).permute(2, 0, 1)[None].float().div(255)  # ToTensor
        k = stack[prm["stack_index"], 1]
        ref = torch.cat([F.conv2d(x32[:, ch : ch + 1], k[None, None, ch], padding="same") for ch in range(3)], 1)
        ref = torch.clip(ref, 0, 1)[0].permute(1, 2, 0)
        if quantize == "truncate":  # the reference: ToPILImage's mul(255).byte() truncates
            assert (out == ref.mul(255).byte().numpy()).mean() > 0.9999
        else:
            assert (out == torch.round(ref * 255).byte().numpy()).mean() > 0.999
            assert np.abs(out.astype(int) - torch.round(ref * 255).numpy()).max() <= 1


def test_iccvw2023_choice_pattern(images):
    assert oc.iccvw2023_pattern() == [int(ch) for ch in oc.ICCVW2023_PATTERN]
    r = random.Random(0)  # the reference: random.seed(0) then random.choice(pair) per batch position
    assert [r.choice([6, 7]) - 6 for _ in range(64)] == oc.iccvw2023_pattern(64)  # HEAD's batch 64: the same prefix
    c = get("optics/trefoil")
    idx = [0, 1, 2, 130]
    _, params = c.batch_fn(images, rngs(4), device="cpu", severity=1, kernels=str(STACK), choice="iccvw2023",
                           sample_indices=idx)  # fmt: skip
    assert [p["fringe_mode"] for p in params] == [11, 11, 10, 10] and params[0]["choice"] == "iccvw2023"
    _, prm = c.apply(images[2], 0, severity=1, kernels=str(STACK), choice="iccvw2023", sample_index=2)
    assert prm["fringe_mode"] == 10
    _, prm = c.apply(images[2], 0, severity=1, kernels=str(STACK), choice="iccvw2023")
    assert prm["choice"].startswith("rng")  # without the source index the draw falls back to the rng


def test_defocus_disk_is_imagenet_c(images):
    d = get("optics/defocus_disk")
    for severity, (radius, blur) in ((1, (3, 0.1)), (5, (10, 0.5))):
        out, prm = d.apply(images[0], 0, severity=severity)
        kernel = oc.disk_kernel(severity)
        assert kernel.shape == ((17, 17) if radius <= 8 else (21, 21))
        ref = np.clip(cv2.filter2D(images[0] / 255.0, -1, kernel), 0, 1) * 255  # make_imagenet_c.py defocus_blur
        assert (out == np.floor(ref + 0.5).astype(np.uint8)).mean() > 0.999  # sev 1 has many exact ties: up
        trunc, _ = d.apply(images[0], 0, severity=severity, quantize="truncate")
        assert np.array_equal(trunc, ref.astype(np.uint8))  # compat: ImageNet-C's exact bytes
        assert prm == {"radius": radius, "alias_blur": blur, "kernel_size": kernel.shape[0], "severity": severity,
                       "padding": "reflect", "quantize": "round"}  # fmt: skip
    batch, _ = d.batch_fn(images, rngs(4), device="cpu", severity=3)
    assert all(np.array_equal(batch[i], d.apply(images[i], 0, severity=3)[0]) for i in range(4))


def test_kernel_stack_errors(images, tmp_path, monkeypatch):
    c = get("optics/coma")
    with pytest.raises(CorruptgenError, match="changed since the plan"):
        c.apply(images[0], 0, severity=1, kernels=str(STACK), kernels_sha256="0" * 64)
    with pytest.raises(CorruptgenError, match="no such kernel stack"):
        c.apply(images[0], 0, severity=1, kernels=str(tmp_path / "missing.pt"))
    with pytest.raises(ValueError, match="severity"):
        c.apply(images[0], 0, severity=6, kernels=str(STACK))
    monkeypatch.setattr(oc, "kernels_dir", lambda: tmp_path)
    with pytest.raises(CorruptgenError, match=r"make_kernels\.py"):
        c.apply(images[0], 0, severity=1)
