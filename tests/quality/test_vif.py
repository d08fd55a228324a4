"""Steerable-pyramid VIF (VCR's Δv measure, ``vif_utils.vif``): reference values, batching, precision, CLI."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import cv2
import numpy as np
import pytest
import skimage.data
import skimage.filters
import torch
from PIL import Image

from corruptgen.cli import main
from corruptgen.quality import VIFReference, delta_v, steerable_pyramid, to_gray, vif, vif_p

REFERENCE_JSON = Path(__file__).resolve().parents[3] / "shared" / "reference" / "vif" / "reference_values.json"


def blur(img: np.ndarray, sigma: float) -> np.ndarray:
    """The reference's Gaussian blur: skimage gaussian on [0, 1], clip, *255, truncate to uint8."""
    return (np.clip(skimage.filters.gaussian(img / 255.0, sigma=sigma, channel_axis=2), 0, 1) * 255).astype(np.uint8)


def jpeg(img: np.ndarray, quality: int) -> np.ndarray:
    """The reference's JPEG: OpenCV encode of the BGR image at ``quality``, decode, back to RGB."""
    ok, buf = cv2.imencode(".jpg", cv2.cvtColor(img, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_JPEG_QUALITY, quality])
    assert ok
    return cv2.cvtColor(cv2.imdecode(buf, cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB)


def distort(img: np.ndarray, name: str) -> np.ndarray:
    if name == "identity":
        return img
    if name.startswith("gaussian_blur_sigma"):
        return blur(img, float(name.removeprefix("gaussian_blur_sigma")))
    if name.startswith("jpeg_q"):
        return jpeg(img, int(name.removeprefix("jpeg_q")))
    raise AssertionError(f"unknown distortion {name}")


@pytest.fixture(scope="module")
def reference() -> dict:
    if not REFERENCE_JSON.exists():
        pytest.skip(f"shared reference values not found at {REFERENCE_JSON}")
    return json.loads(REFERENCE_JSON.read_text())


@pytest.fixture(scope="module")
def astronaut() -> np.ndarray:
    return skimage.data.astronaut()


@pytest.fixture(scope="module")
def computed(reference, astronaut) -> dict[str, dict[str, float]]:
    """Our VIF of every reference entry, float64 and float32, each dtype in one batched call."""
    names = [key.split("/", 1)[1] for key in reference["values"]]
    batch = np.stack([distort(astronaut, n) for n in names])
    out = {}
    for dtype in (torch.float64, torch.float32):
        values = vif(astronaut, batch, dtype=dtype)
        out[str(dtype)] = dict(zip(names, values.tolist(), strict=True))
    return out


def test_reference_values_cover_the_json(reference):
    assert set(reference["values"]) == {
        "astronaut/identity",
        *(f"astronaut/gaussian_blur_sigma{s}" for s in ("0.5", "1.0", "2.0", "4.0")),
        "astronaut/jpeg_q10",
        "astronaut/jpeg_q50",
    }


@pytest.mark.parametrize("dtype", ["torch.float64", "torch.float32"])
def test_reference_values(reference, computed, dtype):
    """Every shared reference value within 1e-3 (JPEG 5e-3); observed float64 <= 5e-7, float32 <= 5e-5."""
    for key, expected in reference["values"].items():
        name = key.split("/", 1)[1]
        tol = 5e-3 if name.startswith("jpeg") else reference["tolerance_abs"]
        assert computed[dtype][name] == pytest.approx(expected, abs=tol), key
        if not name.startswith("jpeg"):  # the JSON is rounded to 6 decimals; we are far inside the tolerance
            assert abs(computed[dtype][name] - expected) < (1e-6 if dtype.endswith("64") else 1e-4), key


def test_gray_is_opencv(astronaut):
    # every 8-bit RGB colour, against the installed OpenCV (the reference values used OpenCV 5's 15-bit weights)
    v = np.arange(256, dtype=np.uint8)
    cube = np.stack(np.meshgrid(v, v, v, indexing="ij"), -1).reshape(4096, 4096, 3)
    ours, theirs = to_gray(cube), cv2.cvtColor(cube, cv2.COLOR_RGB2GRAY)
    mismatch = np.mean(ours != theirs)
    if int(cv2.__version__.split(".")[0]) >= 5:
        assert mismatch == 0
    else:  # OpenCV 4.x rounds with 14-bit weights: off by one on ~0.3 % of colours
        assert mismatch < 0.01 and np.abs(ours.astype(int) - theirs).max() <= 1
    assert to_gray(astronaut).sum() == 30_252_742  # as in the VCR code's VIF
    t = torch.from_numpy(astronaut).permute(2, 0, 1)[None]
    assert torch.equal(to_gray(t)[0], torch.from_numpy(to_gray(astronaut)))


@pytest.mark.parametrize("name", ["astronaut", "coffee", "chelsea", "rocket"])
def test_identity_is_one(name):
    img = getattr(skimage.data, name)()
    assert vif(img, img) == pytest.approx(1.0, abs=1e-12)
    assert delta_v(img, img) == pytest.approx(0.0, abs=1e-12)


def test_monotone_in_blur_sigma():
    sigmas = (0.5, 1.0, 2.0, 3.0, 5.0)
    for name in ("astronaut", "coffee", "chelsea"):
        img = cv2.resize(getattr(skimage.data, name)(), (288, 256), interpolation=cv2.INTER_AREA)
        blurred = np.stack([blur(img, s) for s in sigmas])
        values = vif(img, blurred).numpy()
        assert np.all(np.diff(values) < 0), (name, values)
        assert 0 < values[-1] < values[0] < 1
        dv = delta_v(img, blurred).numpy()
        assert np.all(np.diff(dv) > 0) and np.allclose(dv, 1 - values)


@pytest.fixture(scope="module")
def pairs() -> tuple[np.ndarray, np.ndarray]:
    """4 different 224x224 photos and one corruption of each (blur, noise, JPEG, contrast)."""
    size = (224, 224)
    refs = [cv2.resize(getattr(skimage.data, n)(), size, interpolation=cv2.INTER_AREA)
            for n in ("astronaut", "coffee", "chelsea", "rocket")]  # fmt: skip
    rng = np.random.default_rng(0)
    noisy = np.clip(refs[1] + rng.normal(0, 15, refs[1].shape), 0, 255).astype(np.uint8)
    contrast = np.clip((refs[3].astype(float) - 128) * 0.6 + 128, 0, 255).astype(np.uint8)
    return np.stack(refs), np.stack([blur(refs[0], 1.5), noisy, jpeg(refs[2], 20), contrast])


def test_batch_equals_single_images(pairs):
    refs, dists = pairs
    batch = vif(refs, dists)
    assert isinstance(batch, torch.Tensor) and batch.shape == (4,) and batch.dtype == torch.float64
    singles = [vif(r, d) for r, d in zip(refs, dists, strict=True)]
    assert all(isinstance(v, float) for v in singles)
    np.testing.assert_allclose(batch.numpy(), singles, rtol=0, atol=1e-12)
    # chunking does not change anything
    np.testing.assert_allclose(vif(refs, dists, chunk_size=1).numpy(), batch.numpy(), rtol=0, atol=1e-12)
    # channels-first torch, uint8
    t_ref, t_dist = (torch.from_numpy(a).permute(0, 3, 1, 2) for a in (refs, dists))
    np.testing.assert_allclose(vif(t_ref, t_dist).numpy(), batch.numpy(), rtol=0, atol=1e-12)
    # pre-converted gray (numpy (N, H, W) and torch (N, 1, H, W))
    g_ref, g_dist = to_gray(refs), to_gray(dists)
    np.testing.assert_allclose(vif(g_ref, g_dist).numpy(), batch.numpy(), rtol=0, atol=1e-12)
    np.testing.assert_allclose(
        vif(torch.from_numpy(g_ref)[:, None], torch.from_numpy(g_dist)[:, None]).numpy(), batch.numpy(), atol=1e-12
    )


def test_one_reference_many_candidates(pairs):
    refs, _ = pairs
    ref = refs[0]
    cands = np.stack([blur(ref, s) for s in (0.5, 1.0, 2.0)] + [jpeg(ref, q) for q in (10, 50)] + [ref])
    expected = np.array([vif(ref, c) for c in cands])
    np.testing.assert_allclose(vif(ref, cands).numpy(), expected, atol=1e-12)  # (H, W, 3) ref broadcast
    t_ref = torch.from_numpy(ref).permute(2, 0, 1)[None]
    t_cands = torch.from_numpy(cands).permute(0, 3, 1, 2)
    np.testing.assert_allclose(vif(t_ref.expand(len(cands), -1, -1, -1), t_cands).numpy(), expected, atol=1e-12)
    prepared = VIFReference(ref)
    np.testing.assert_allclose(prepared.score(cands).numpy(), expected, atol=1e-12)
    np.testing.assert_allclose(prepared.score(cands[:2]).numpy(), expected[:2], atol=1e-12)  # reusable
    assert prepared.score(cands[0]) == pytest.approx(expected[0], abs=1e-12)  # single -> float
    np.testing.assert_allclose(prepared.delta_v(cands).numpy(), np.maximum(0, 1 - expected), atol=1e-12)
    value, nums, dens = prepared.score(cands, return_subbands=True)
    assert nums.shape == dens.shape == (len(cands), 8)
    np.testing.assert_allclose(((nums + 1e-4).mean(1) / (dens + 1e-4).mean(1)).numpy(), value.numpy())


def test_stacked_references_score_chosen_rows(pairs):
    """``VIFReference.stack`` + ``score(rows=...)``: each candidate against its own reference row, equal to scoring
    it alone; rows out of range or of the wrong length are refused."""
    refs, dists = pairs
    stacked = VIFReference.stack([VIFReference(r) for r in refs])
    rows = [2, 0, 3, 1, 0, 2]
    cands = np.stack([dists[2], dists[0], dists[3], dists[1], refs[0], dists[0]])
    expected = [vif(refs[r], c) for r, c in zip(rows, cands, strict=True)]
    np.testing.assert_allclose(stacked.score(cands, rows=rows, chunk_size=4).numpy(), expected, rtol=0, atol=1e-12)
    assert stacked.batch == 4 and stacked.score(cands, rows=rows)[4] == pytest.approx(1.0, abs=1e-12)
    for bad in ([0, 1], [0, 1, 2, 3, 4, 4]):
        with pytest.raises(ValueError, match="rows must hold 6 indices below 4"):
            stacked.score(cands, rows=bad)
    with pytest.raises(ValueError, match="batch mismatch"):
        stacked.score(cands)
    with pytest.raises(ValueError, match="one image size"):
        VIFReference.stack([VIFReference(refs[0]), VIFReference(refs[0][:100, :100])])


def test_float32_close_to_float64(pairs):
    """float32 differs from float64 by <= ~5e-5 here (reference images: <= 4.4e-5); we allow 2e-4."""
    refs, dists = pairs
    v64 = vif(refs, dists)
    v32 = vif(refs, dists, dtype=torch.float32)
    assert v32.dtype == torch.float32
    assert float((v32.double() - v64).abs().max()) < 2e-4
    assert vif(refs[0], refs[0], dtype=torch.float32) == pytest.approx(1.0, abs=1e-6)


def test_layouts_and_data_range(pairs):
    refs, dists = pairs
    g_ref, g_dist = to_gray(refs[0]), to_gray(dists[0])
    expected = vif(refs[0], dists[0])
    assert vif(g_ref, g_dist) == pytest.approx(expected, abs=1e-12)
    assert vif(g_ref.astype(np.float64), g_dist.astype(np.float32)) == pytest.approx(expected, abs=1e-12)
    assert vif(g_ref / 255.0, g_dist / 255.0, data_range=1.0) == pytest.approx(expected, abs=1e-10)
    assert vif(refs[0][..., :1], dists[0][..., :1]) == pytest.approx(vif(refs[0][..., 0], dists[0][..., 0]))
    # float RGB uses the unrounded luma: close to the uint8 (rounded gray) value, not identical
    assert vif(refs[0].astype(np.float64), dists[0].astype(np.float64)) == pytest.approx(expected, abs=5e-3)


def test_enhancement_gives_vif_above_one_and_zero_delta_v(pairs):
    g = to_gray(pairs[0][0]).astype(np.float64)
    stretched = 128 + 1.3 * (g - 128)  # float: no clipping, a pure contrast gain
    assert vif(g, stretched) > 1
    assert delta_v(g, stretched) == 0.0
    assert float(delta_v(g[None], stretched[None])[0]) == 0.0


def test_pyramid_matches_pyrtools():
    pyrtools = pytest.importorskip("pyrtools")
    rng = np.random.default_rng(0)
    gray = to_gray(skimage.data.coffee()).astype(np.float64)
    for shape in ((72, 72), (99, 80), (224, 224), (375, 500)):
        img = np.resize(gray, shape) + rng.normal(size=shape)
        expected = pyrtools.pyramids.SteerablePyramidSpace(img, 4, 5, "reflect1").pyr_coeffs
        for method in ("conv", "fft"):
            ours = steerable_pyramid(torch.from_numpy(img)[None], method=method)
            assert list(ours) == list(expected)
            for key, band in expected.items():
                np.testing.assert_allclose(ours[key][0].numpy(), band, rtol=0, atol=1e-9, err_msg=str(key))


def test_conv_pyramid_path_matches_fft(pairs, monkeypatch):
    """GPUs run the pyramid with conv2d, the CPU with FFTs: both give the same VIF (checked here on the CPU)."""
    module = importlib.import_module("corruptgen.quality.vif")
    refs, dists = pairs
    fft64, fft32 = vif(refs, dists), vif(refs, dists, dtype=torch.float32)
    monkeypatch.setattr(module._PYRAMID, "method", "conv")
    np.testing.assert_allclose(vif(refs, dists).numpy(), fft64.numpy(), rtol=0, atol=1e-12)
    assert float((vif(refs, dists, dtype=torch.float32) - fft32).abs().max()) < 1e-4


def test_vif_p_matches_sewar(pairs):
    sewar = pytest.importorskip("sewar.full_ref")
    refs, dists = pairs
    g_ref, g_dist = to_gray(refs), to_gray(dists)
    expected = [sewar.vifp(r, d) for r, d in zip(g_ref, g_dist, strict=True)]
    np.testing.assert_allclose(vif_p(refs, dists).numpy(), expected, rtol=0, atol=1e-10)
    assert vif_p(refs[0], dists[0], per_channel=True) == pytest.approx(sewar.vifp(refs[0], dists[0]), abs=1e-10)


def test_vif_p_is_not_the_vcr_vif(pairs):
    refs, dists = pairs
    assert vif_p(refs[0], refs[0]) == pytest.approx(1.0, abs=1e-9)  # sewar adds eps = 1e-10 to sigma_v^2
    assert abs(vif_p(refs[0], dists[0]) - vif(refs[0], dists[0])) > 0.01


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA not available")
def test_cuda_matches_cpu(pairs):
    refs, dists = pairs
    t_ref = torch.from_numpy(refs).permute(0, 3, 1, 2).cuda()
    t_dist = torch.from_numpy(dists).permute(0, 3, 1, 2).cuda()
    on_gpu = vif(t_ref, t_dist)
    assert on_gpu.device.type == "cuda"
    np.testing.assert_allclose(on_gpu.cpu().numpy(), vif(refs, dists).numpy(), rtol=0, atol=1e-9)
    f32 = vif(t_ref, t_dist, dtype=torch.float32).cpu().double()
    assert float((f32 - on_gpu.cpu()).abs().max()) < 2e-4
    np.testing.assert_allclose(vif(refs, dists, device="cuda").cpu().numpy(), on_gpu.cpu().numpy(), atol=1e-12)


def test_bad_inputs(pairs):
    refs, dists = pairs
    with pytest.raises(ValueError, match="size mismatch"):
        vif(refs[0], dists[0][:200])
    with pytest.raises(ValueError, match="at least 72x72"):
        vif(refs[0][:64, :64], dists[0][:64, :64])
    with pytest.raises(ValueError, match="batch mismatch"):
        vif(refs[:2], dists[:3])
    with pytest.raises(ValueError, match="channels"):
        vif(torch.zeros(1, 4, 80, 80), torch.zeros(1, 4, 80, 80))
    with pytest.raises(TypeError):
        vif(refs[0].tolist(), dists[0])
    with pytest.raises(ValueError, match="dtype"):
        vif(refs[0], dists[0], dtype=torch.float16)
    with pytest.raises(ValueError, match="at least 41x41"):
        vif_p(refs[0][:40, :40], dists[0][:40, :40])


# ---------------------------------------------------------------------------------------------------- CLI


@pytest.fixture
def image_files(tmp_path, astronaut):
    paths = {"clean": tmp_path / "clean.png", "blurred": tmp_path / "blurred.png", "small": tmp_path / "small.png"}
    Image.fromarray(astronaut).save(paths["clean"])
    Image.fromarray(blur(astronaut, 1.0)).save(paths["blurred"])
    Image.fromarray(astronaut[:60, :70]).save(paths["small"])
    (tmp_path / "junk.png").write_bytes(b"not an image")
    paths["junk"] = tmp_path / "junk.png"
    return {k: str(v) for k, v in paths.items()}


def test_cli_prints_vif_and_delta_v(image_files, capsys):
    assert main(["vif", image_files["clean"], image_files["blurred"]]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == ["VIF: 0.752222", "delta_v: 0.247778"]  # reference value 0.752222 of ``vif_utils.vif``
    assert main(["vif", image_files["clean"], image_files["blurred"], "--pixel"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "VIF-P: 0.593992" and lines[1] == "delta_v: 0.406008"  # sewar vifp 0.5940
    assert main(["vif", image_files["clean"], image_files["clean"], "--float32"]) == 0
    assert capsys.readouterr().out.splitlines() == ["VIF: 1.000000", "delta_v: 0.000000"]


@pytest.mark.parametrize(
    ("which", "message"),
    [
        ("missing", "corrupted image not found"),
        ("junk", "cannot read corrupted image"),
        ("small", "size mismatch: clean image is 512x512, corrupted image is 70x60"),
    ],
)
def test_cli_errors(image_files, capsys, which, message):
    other = image_files.get(which, image_files["clean"] + ".missing.png")
    assert main(["vif", image_files["clean"], other]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_cli_too_small(image_files, capsys):
    assert main(["vif", image_files["small"], image_files["small"]]) == 2
    assert "needs at least 72 px" in capsys.readouterr().err
