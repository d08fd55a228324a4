"""ImageNet-P sequences: shapes, frame 0 / identity frames, monotone change, reference transcriptions, difficulty."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
from itertools import pairwise

import numpy as np
import pytest
import skimage.data
import torch
from scipy.ndimage import gaussian_filter, map_coordinates
from skimage.color import hsv2rgb, rgb2hsv

from corruptgen.corruptions import get, list_corruptions
from corruptgen.families.imagenet_p import TEST_PERTURBATIONS, VALIDATION_PERTURBATIONS, functional, geometry
from corruptgen.families.imagenet_p._helpers import clipped_zoom
from corruptgen.family.preprocess import get_preprocess

NAMES = list(TEST_PERTURBATIONS + VALIDATION_PERTURBATIONS)
NOISE = ("gaussian_noise", "shot_noise", "speckle_noise")
FRAMES = {name: 41 if name == "translate" else 31 for name in NAMES}


@pytest.fixture(scope="module")
def resized() -> np.ndarray:
    """rocket after ``Resize(256)`` only (256 × 383): the input of every sequence."""
    image = get_preprocess("imagenet_resize")(skimage.data.rocket())
    assert image.shape == (256, 383, 3)
    return image


@pytest.fixture(scope="module")
def crop(resized) -> np.ndarray:
    return np.ascontiguousarray(geometry.center_crop(resized, 224))


@pytest.fixture(scope="module")
def sequences(resized) -> dict[str, tuple[np.ndarray, dict]]:
    return {name: get(f"imagenet_p/{name}").apply(resized, 3) for name in NAMES}


def mad(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a.astype(np.int16) - b).mean())


def test_registry_and_clean(resized, crop):
    assert [c.name for c in list_corruptions("imagenet_p")] == ["clean", *NAMES]
    out, params = get("imagenet_p/clean").apply(resized, 0)
    assert np.array_equal(out, crop) and params == {"crop": 224}
    # torchvision CenterCrop offsets: round((383 - 224) / 2) = round(79.5) = 80 (Python rounds half to even)
    assert np.array_equal(crop, resized[16:240, 80:304])


@pytest.mark.parametrize("name", NAMES)
def test_shapes_frames_params(name, sequences):
    frames, params = sequences[name]
    assert frames.shape == (FRAMES[name], 224, 224, 3) and frames.dtype == np.uint8
    assert params["frames"] == FRAMES[name] and params["difficulty"] == 1 and params["crop"] == 224
    assert params["compare"] == ("first" if name in NOISE else "consecutive")
    json.dumps(params)
    assert len({frames[i].tobytes() for i in range(len(frames))}) > 1


@pytest.mark.parametrize("name", NOISE)
def test_noise_frame0_is_clean_and_difficulty_raises_noise(name, resized, crop):
    levels = []
    for d in (1, 2, 3):
        frames, params = get(f"imagenet_p/{name}").apply(resized, 5, difficulty=d)
        assert np.array_equal(frames[0], crop) and params["difficulty"] == d
        levels.append(mad(frames[1:], crop))
    assert 0.5 < levels[0] < levels[1] < levels[2]


def test_identity_frames_equal_the_crop(sequences, crop):
    assert np.array_equal(sequences["rotate"][0][15], crop)  # angle 0
    assert np.array_equal(sequences["translate"][0][20], crop)  # shift 0
    assert np.array_equal(sequences["scale"][0][24], crop)  # (24 * 2.5 + 40) / 100 = 1
    assert np.array_equal(sequences["shear"][0][15], crop)
    assert np.array_equal(sequences["zoom_blur"][0][0], crop)
    # the reference tilt matrix at 0° is not the identity: x' = (f·x + w/2) / (1 + f), a ~0.3 px shrink at the edges
    assert mad(sequences["tilt"][0][15], crop) < 3


@pytest.mark.parametrize("name", ["rotate", "brightness", "tilt", "shear", "translate"])
def test_change_grows_away_from_the_middle_frame(name, sequences):
    frames = sequences[name][0]
    mid = len(frames) // 2
    for side in (range(mid, len(frames)), range(mid, -1, -1)):
        diffs = [mad(frames[i], frames[mid]) for i in side]
        assert all(b >= a - 0.05 for a, b in pairwise(diffs)), diffs
        assert diffs[-1] > 3


def test_zoom_and_scale_grow_monotonically(sequences, crop):
    diffs = [mad(f, crop) for f in sequences["zoom_blur"][0]]
    assert all(b >= a - 0.05 for a, b in pairwise(diffs)) and diffs[-1] > 2
    diffs = [mad(f, crop) for f in sequences["scale"][0][:25]]
    assert all(b <= a + 0.05 for a, b in pairwise(diffs))


def test_difficulty_is_only_a_stride_for_other_sequences(resized):
    for name in ("rotate", "snow"):
        a, pa = get(f"imagenet_p/{name}").apply(resized, 9, difficulty=1)
        b, pb = get(f"imagenet_p/{name}").apply(resized, 9, difficulty=3)
        assert np.array_equal(a, b) and pa["stride"] == 1 and pb["stride"] == 3
    with pytest.raises(ValueError, match="difficulty"):
        get("imagenet_p/rotate").apply(resized, 0, difficulty=4)


@pytest.mark.parametrize("name", ["gaussian_noise", "shot_noise", "speckle_noise", "snow", "spatter"])
def test_seeded(name, resized):
    c = get(f"imagenet_p/{name}")
    a, b, other = c.apply(resized, 11)[0], c.apply(resized, np.random.default_rng(11))[0], c.apply(resized, 12)[0]
    assert np.array_equal(a, b) and not np.array_equal(a, other)


def test_crop_follows_size():
    small = np.ascontiguousarray(skimage.data.coffee()[::3, ::3])  # 134 × 200
    frames, params = get("imagenet_p/rotate").apply(small, 0)
    assert params["crop"] == round(134 * 224 / 256) == frames.shape[1] == frames.shape[2]
    frames, params = get("imagenet_p/gaussian_noise").apply(small, 0, crop=64)
    assert frames.shape == (31, 64, 64, 3) and params["crop"] == 64


# ---------------------------------------------------------------- against plain transcriptions of the reference


def within_one(a: np.ndarray, b: np.ndarray, share: float = 1.0) -> None:
    diff = np.abs(a.astype(np.int16) - b)
    assert diff.max() <= 1 if share == 1.0 else (diff <= 1).mean() >= share, (diff.max(), (diff > 1).mean())


def test_gaussian_noise_matches_torch_transcription(crop):
    frames = functional.gaussian_noise(crop, 0.05, np.random.default_rng(0))
    noise = np.random.default_rng(0).standard_normal((30, 224, 224, 3), dtype=np.float32)
    x = torch.from_numpy(crop).permute(2, 0, 1).float().div(255)  # ToTensor
    for i in range(1, 31):
        noisy = torch.clamp(x + 0.05 * torch.from_numpy(noise[i - 1]).permute(2, 0, 1), 0, 1)
        ref = noisy.mul(255).byte().permute(1, 2, 0).numpy()  # ToPILImage
        within_one(frames[i], ref)


def test_shot_and_speckle_match_transcription(crop):
    shot = functional.shot_noise(crop, 120, np.random.default_rng(1))
    speckle = functional.speckle_noise(crop, 0.1, np.random.default_rng(2))
    r1, r2 = np.random.default_rng(1), np.random.default_rng(2)
    x = np.array(crop) / 255.0
    for i in range(1, 31):
        within_one(shot[i], np.uint8(255 * np.clip(r1.poisson(x * 120) / 120, 0, 1)))
        within_one(speckle[i], np.uint8(255 * np.clip(x + x * r2.normal(size=x.shape, scale=0.1), 0, 1)))


def torchvision_affine(img: np.ndarray, angle=0.0, translate=(0, 0), scale=1.0, shear=0.0, nearest=False):
    """TF.affine (torchvision ≤ 0.7 on PIL) written out with map_coordinates: centre (w/2+½, h/2+½), fill 0."""
    h, w = img.shape[:2]
    a, b, c, d, e, f = geometry.inverse_affine_matrix((w * 0.5 + 0.5, h * 0.5 + 0.5), angle, translate, scale, shear)
    yy, xx = np.mgrid[0:h, 0:w] + 0.5
    u, v = a * xx + b * yy + c, d * xx + e * yy + f
    inside = (u >= 0) & (u < w) & (v >= 0) & (v < h)
    if nearest:
        out = img[np.clip(np.floor(v), 0, h - 1).astype(int), np.clip(np.floor(u), 0, w - 1).astype(int)]
    else:
        out = np.stack([map_coordinates(img[..., k].astype(float), [v - 0.5, u - 0.5], order=1, mode="nearest")
                        for k in range(3)], axis=-1)  # fmt: skip
        out = np.floor(out + 1e-9).astype(np.uint8)
    return np.where(inside[..., None], out, 0).astype(np.uint8)


def test_inverse_matrix_is_the_rotation_about_the_centre():
    a, b, c, d, e, f = geometry.inverse_affine_matrix((10.5, 20.5), 90, (0, 0), 1.0, 0)
    assert np.allclose([a, b, d, e], [0, 1, -1, 0]) and np.allclose([a * 10.5 + b * 20.5 + c, d * 10.5 + e * 20.5 + f],
                                                                    [10.5, 20.5])  # fmt: skip


@pytest.mark.parametrize(("name", "index", "kwargs"), [
    ("rotate", 2, {"angle": -13}), ("rotate", 29, {"angle": 14}), ("scale", 3, {"scale": 0.475}),
    ("scale", 30, {"scale": 1.15}), ("shear", 0, {"shear": -15}), ("shear", 22, {"shear": 7}),
])  # fmt: skip
def test_affine_frames_match_transcription(name, index, kwargs, sequences, resized):
    ref = geometry.center_crop(torchvision_affine(resized, **kwargs), 224)
    within_one(sequences[name][0][index], ref, share=0.999)


def test_translate_is_an_exact_shift(sequences, resized):
    frames = sequences["translate"][0]
    for i in (0, 7, 33, 40):
        t = i - 20
        shifted = np.zeros_like(resized)
        if t >= 0:
            shifted[:, t:] = resized[:, : resized.shape[1] - t]
        else:
            shifted[:, :t] = resized[:, -t:]
        assert np.array_equal(frames[i], geometry.center_crop(shifted, 224))
        nearest = torchvision_affine(resized, translate=(t, 0), nearest=True)
        assert np.array_equal(frames[i], geometry.center_crop(nearest, 224))


def test_tilt_matches_reference_matrix(sequences, resized):
    import cv2

    h, w = resized.shape[:2]
    for i in (0, 9, 30):
        phi = theta = np.deg2rad(i - 15)
        f = np.sqrt(w**2 + h**2)
        p1 = np.array([[1, 0, -w / 2], [0, 1, -h / 2], [0, 0, 1], [0, 0, 1]])
        rx = np.array([[1, 0, 0, 0], [0, np.cos(theta), -np.sin(theta), 0], [0, np.sin(theta), np.cos(theta), 0],
                       [0, 0, 0, 1]])  # fmt: skip
        ry = np.array([[np.cos(phi), 0, -np.sin(phi), 0], [0, 1, 0, 0], [np.sin(phi), 0, np.cos(phi), 0],
                       [0, 0, 0, 1]])  # fmt: skip
        t = np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, f], [0, 0, 0, 1]])
        p2 = np.array([[f, 0, w / 2, 0], [0, f, h / 2, 0], [0, 0, 1, 0]])
        ref = cv2.warpPerspective(resized, p2 @ t @ rx @ ry @ p1, (w, h))
        within_one(sequences["tilt"][0][i], geometry.center_crop(ref, 224))


def test_zoom_blur_matches_torch_running_mean(sequences, resized, crop):
    frames = sequences["zoom_blur"][0]
    avg = torch.from_numpy(crop).permute(2, 0, 1).float().div(255)
    for i in range(1, 31):
        z = geometry.center_crop(geometry.affine(resized, scale=1 + 0.004 * i, resample=geometry.BILINEAR), 224)
        avg += torch.from_numpy(np.ascontiguousarray(z)).permute(2, 0, 1).float().div(255)
        if i in (1, 2, 17, 30):
            within_one(frames[i], (avg / (i + 1)).mul(255).byte().permute(1, 2, 0).numpy())


def test_brightness_and_gaussian_blur_match_transcription(sequences, crop):
    for i in (0, 4, 15, 22, 30):
        x = rgb2hsv(np.array(crop) / 255.0)
        x[:, :, 2] = np.clip(x[:, :, 2] + (i - 15) * 2 / 100, 0, 1)
        within_one(sequences["brightness"][0][i], np.uint8(np.clip(hsv2rgb(x), 0, 1) * 255))
        s = 0.25 + 0.035 * i
        ref = np.uint8(255 * gaussian_filter(crop / 255.0, sigma=(s, s, 0), mode="nearest", truncate=6.0))
        within_one(sequences["gaussian_blur"][0][i], ref)


def reference_motion_blur(image: np.ndarray, radius: int, sigma: float, angle: float) -> np.ndarray:
    """ImageMagick 6 MotionBlurImage (effect.c) written out with clamped index arrays, then Q16 → 8-bit PNG."""
    width = 2 * radius + 1
    kernel = np.exp(-(np.arange(width) ** 2) / (2.0 * sigma * sigma))
    kernel /= kernel.sum()
    px, py = width * math.sin(math.pi * angle / 180), width * math.cos(math.pi * angle / 180)
    h, w = image.shape[:2]
    yy, xx = np.mgrid[0:h, 0:w]
    acc = np.zeros(image.shape)
    for i, k in enumerate(kernel):
        ox, oy = math.ceil(i * py / math.hypot(px, py) - 0.5), math.ceil(i * px / math.hypot(px, py) - 0.5)
        acc += k * image[np.clip(yy + oy, 0, h - 1), np.clip(xx + ox, 0, w - 1)]
    return np.floor(np.floor(acc * 257 + 0.5) / 257).astype(np.uint8)


def test_motion_blur_matches_transcription(sequences, crop):
    for i in (0, 11, 30):
        within_one(sequences["motion_blur"][0][i], reference_motion_blur(crop, 10, 3, (i - 30) * 4))


def test_snow_matches_transcription(sequences, crop):
    import cv2

    rng = np.random.default_rng(3)
    x = np.array(crop, dtype=np.float32) / 255.0
    layer = rng.normal(size=(224, 224), loc=0.05, scale=0.3)
    layer = clipped_zoom(layer[..., np.newaxis], 3)
    layer[layer < 0.5] = 0
    layer = (np.clip(layer.squeeze(), 0, 1) * 255).astype(np.uint8)
    z = 0.85 * x + (1 - 0.85) * np.maximum(x, cv2.cvtColor(x, cv2.COLOR_RGB2GRAY).reshape(224, 224, 1) * 1.5 + 0.5)
    for i in (0, 16, 30):
        moving = (reference_motion_blur(layer, 14, 4, i * 4 - 150) / 255.0)[..., np.newaxis]
        within_one(sequences["snow"][0][i], np.uint8(np.clip(z + moving + np.rot90(moving, k=2), 0, 1) * 255))


def test_spatter_matches_transcription(sequences, crop):
    import cv2
    from skimage.filters import gaussian

    rng = np.random.default_rng(3)
    x = cv2.cvtColor(np.array(crop, dtype=np.float32) / 255.0, cv2.COLOR_BGR2BGRA)
    liquid = gaussian(rng.normal(loc=0.65, scale=0.27, size=(224, 224)), sigma=3.7)
    liquid[liquid < 0.69] = 0
    frames = sequences["spatter"][0]
    for i in range(31):
        if i in (0, 1, 12, 30):
            layer = (liquid * 255).astype(np.uint8)
            dist = 255 - cv2.Canny(layer, 50, 150)
            dist = cv2.distanceTransform(dist, cv2.DIST_L2, 5)
            _, dist = cv2.threshold(dist, 20, 20, cv2.THRESH_TRUNC)
            dist = cv2.equalizeHist(cv2.blur(dist, (3, 3)).astype(np.uint8))
            dist = cv2.filter2D(dist, cv2.CV_8U, np.array([[-2, -1, 0], [-1, 1, 1], [0, 1, 2]], dtype=np.float32))
            dist = cv2.blur(dist, (3, 3)).astype(np.float32)
            m = cv2.cvtColor(layer * dist, cv2.COLOR_GRAY2BGRA)
            m /= np.max(m, axis=(0, 1))
            m *= 0.6
            color = np.concatenate([v / 255.0 * np.ones_like(m[..., :1]) for v in (175, 238, 238)], axis=2)
            color = cv2.cvtColor(color, cv2.COLOR_BGR2BGRA)
            ref = np.uint8(cv2.cvtColor(np.clip(x + m * color, 0, 1), cv2.COLOR_BGRA2BGR) * 255)
            within_one(frames[i], ref)
        liquid = np.apply_along_axis(lambda col: np.convolve(col, [0.05, 0.1, 0.15, 0.7], mode="same"), 0, liquid)


def _imagemagick() -> str | None:
    exe = shutil.which("convert")
    try:
        ok = exe and "ImageMagick 6" in subprocess.run([exe, "-version"], capture_output=True, text=True).stdout
    except OSError:
        ok = False
    return exe if ok else None


@pytest.mark.skipif(_imagemagick() is None, reason="ImageMagick 6 convert not installed")
def test_motion_blur_frames_equal_imagemagick(sequences, crop, tmp_path):
    from PIL import Image

    Image.fromarray(crop).save(tmp_path / "in.png")
    for i in (0, 13):
        out = tmp_path / f"{i}.png"
        subprocess.run([_imagemagick(), str(tmp_path / "in.png"), "-motion-blur", f"10x3{(i - 30) * 4:+d}", str(out)],
                       check=True)  # fmt: skip
        assert np.array_equal(sequences["motion_blur"][0][i], np.asarray(Image.open(out).convert("RGB")))
