"""The fast paths equal the reference's calls bit for bit.

brightness and saturate on uint8 images (the registered path) equal the float64 skimage-formula functions on every
colour with two equal channels (the hue ties), a colour grid, grey levels, random and real images, for the severity
tables of every ImageNet-C-style family; pixelate's gather equals PIL's BOX enlargement."""

from __future__ import annotations

import numpy as np
import pytest
import skimage.data
from PIL import Image

from corruptgen.corruptions import get, list_corruptions
from corruptgen.families.imagenet_c import digital, weather

FAMILIES = ("imagenet_c", "cifar10_c", "cifar100_c", "tinyimagenet_c", "imagenet64_c")


def _table_values(name: str, fields: tuple[str, ...]) -> list[tuple[float, ...]]:
    values = set()
    for family in FAMILIES:
        for row in get(f"{family}/{name}").params["severities"].values():
            values.add(tuple(float(row[f]) for f in fields))
    return sorted(values)


def _colours() -> np.ndarray:
    k = np.arange(256, dtype=np.uint8)
    a, b = (x.ravel() for x in np.meshgrid(k, k, indexing="ij"))
    ties = [np.stack([(a, b)[i] for i in order], -1) for order in
            ((0, 0, 1), (0, 1, 0), (1, 0, 0), (0, 1, 1), (1, 0, 1), (1, 1, 0))]  # fmt: skip
    c = np.arange(0, 256, 6, dtype=np.uint8)
    grid = np.stack(np.meshgrid(c, c, c, indexing="ij"), -1).reshape(-1, 3)
    noise = np.random.default_rng(0).integers(0, 256, size=(30_000, 3), dtype=np.uint8)
    photo = skimage.data.astronaut()[::2, ::2].reshape(-1, 3)
    pixels = np.concatenate([*ties, grid, noise, photo])
    return pixels[: pixels.shape[0] // 512 * 512].reshape(-1, 512, 3)


COLOURS = _colours()


def _reference_cast(y: np.ndarray) -> np.ndarray:
    return np.uint8(np.clip(y, 0, 1) * 255)


@pytest.mark.parametrize("delta", [d for (d,) in _table_values("brightness", ("delta",))] + [-0.25, 0.0])
def test_brightness_uint8_is_the_float_path(delta):
    expected = _reference_cast(weather.brightness(COLOURS / 255.0, delta))
    np.testing.assert_array_equal(weather.brightness_uint8(COLOURS, delta), expected)


@pytest.mark.parametrize("scale, shift", [*_table_values("saturate", ("scale", "shift")), (1.0, 0.0), (0.0, 0.3)])
def test_saturate_uint8_is_the_float_path(scale, shift):
    expected = _reference_cast(digital.saturate(COLOURS / 255.0, scale, shift))
    np.testing.assert_array_equal(digital.saturate_uint8(COLOURS, scale, shift), expected)


def test_odd_shapes_and_views():
    image = np.ascontiguousarray(skimage.data.coffee()[:151, :300])  # 45,300 pixels: one chunk and a part of one
    view = skimage.data.chelsea()[::3, ::2]  # non-contiguous input
    for img in (image, view, image[:1, :1]):
        np.testing.assert_array_equal(
            weather.brightness_uint8(img, 0.3), _reference_cast(weather.brightness(img / 255.0, 0.3))
        )
        np.testing.assert_array_equal(
            digital.saturate_uint8(img, 2.0, 0.1), _reference_cast(digital.saturate(img / 255.0, 2.0, 0.1))
        )


def _pil_pixelate(image: np.ndarray, factor: float) -> np.ndarray:
    h, w = image.shape[:2]
    small = (max(int(w * factor), 1), max(int(h * factor), 1))
    box = Image.Resampling.BOX
    return np.asarray(Image.fromarray(image).resize(small, box).resize((w, h), box))


def test_box_enlargement_is_a_gather():
    rng = np.random.default_rng(1)
    for n_out in range(1, 65):
        for n_in in range(1, n_out + 1):
            row = rng.integers(0, 256, size=(2, n_in, 3), dtype=np.uint8)
            expected = np.asarray(Image.fromarray(row).resize((n_out, 2), Image.Resampling.BOX))
            np.testing.assert_array_equal(row[:, digital._box_enlarge_index(n_in, n_out)], expected)


@pytest.mark.parametrize("shape", [(32, 32), (64, 64), (224, 224), (57, 300), (1, 5)])
def test_pixelate_equals_pil_box_box(shape):
    image = np.random.default_rng(2).integers(0, 256, size=(*shape, 3), dtype=np.uint8)
    factors = [f for (f,) in _table_values("pixelate", ("factor",))] + [0.01, 0.77, 1.0, 1.5]
    for factor in factors:
        np.testing.assert_array_equal(digital.pixelate_uint8(image, factor), _pil_pixelate(image, factor))


@pytest.mark.parametrize("quality", sorted({int(q) for (q,) in _table_values("jpeg_compression", ("quality",))}))
def test_jpeg_through_opencv_is_pil(quality):
    """The OpenCV JPEG round trip gives PIL's pixels (the reference's calls), on real photos of odd and even sizes."""
    for name in ("astronaut", "coffee", "chelsea"):
        image = np.ascontiguousarray(getattr(skimage.data, name)()[:117, :90])
        for img in (image, image[:32, :32], image[::3, ::2]):
            expected = digital._jpeg_pil(img, quality)
            np.testing.assert_array_equal(digital._jpeg_opencv(img, quality), expected)
            np.testing.assert_array_equal(digital.jpeg_uint8(img, quality), expected)


def test_deterministic_corruptions_get_no_generator():
    from corruptgen.corruptions.registry import NO_RANDOMNESS

    plain = {c.name for c in list_corruptions("imagenet_c") if not c.random}
    assert plain == {"defocus_blur", "zoom_blur", "brightness", "contrast", "pixelate", "jpeg_compression",
                     "gaussian_blur", "saturate"}  # fmt: skip
    with pytest.raises(RuntimeError, match="random=False"):
        NO_RANDOMNESS.uniform()
