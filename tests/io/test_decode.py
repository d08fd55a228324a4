"""Tests for corruptgen.io.decode on real photographs and hand-made edge cases."""

from __future__ import annotations

import pickle
from collections.abc import Callable

import numpy as np
import pytest
from PIL import Image, ImageFile

from corruptgen.io.decode import DEFAULT_MAX_PIXELS, BadImageError, decode_image

BOMB_SIDE = 20_000  # side of the bomb_png / huge_jpeg fixtures


def _mean_abs_diff(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a.astype(np.int16) - b.astype(np.int16)).mean())


def _decode_ok(data: bytes, **kwargs) -> tuple[np.ndarray, dict]:
    arr, info = decode_image(data, **kwargs)
    assert arr.dtype == np.uint8 and arr.ndim == 3 and arr.shape[2] == 3 and arr.flags.c_contiguous
    return arr, info


# ------------------------------------------------------------------------------------------------------ bad input


def test_zero_bytes() -> None:
    with pytest.raises(BadImageError, match="empty"):
        decode_image(b"")


def test_text_file() -> None:
    with pytest.raises(BadImageError, match="not a recognised image") as exc:
        decode_image(b"Hello, this is a README and not a photo.\n" * 10)
    assert exc.value.reason == str(exc.value)


@pytest.mark.parametrize("fraction", [0.1, 0.5, 0.95])
def test_truncated_jpeg(chelsea: np.ndarray, fraction: float, encode: Callable[..., bytes]) -> None:
    data = encode(chelsea, "JPEG", quality=90)
    with pytest.raises(BadImageError, match="truncated"):
        decode_image(data[: int(len(data) * fraction)])


def test_truncated_png(chelsea: np.ndarray, encode: Callable[..., bytes]) -> None:
    data = encode(chelsea)
    with pytest.raises(BadImageError):
        decode_image(data[: len(data) // 2])


def test_corrupt_header() -> None:
    with pytest.raises(BadImageError):
        decode_image(b"\x89PNG\r\n\x1a\n" + b"\x00" * 40)


def test_fuzzed_bytes_never_raise_anything_else(chelsea: np.ndarray, encode: Callable[..., bytes]) -> None:
    rng = np.random.default_rng(0)
    originals = [encode(chelsea[:64, :64], fmt) for fmt in ("PNG", "JPEG", "GIF", "BMP", "TIFF", "WEBP")]
    for data in originals:
        for _ in range(15):
            buf = bytearray(data)
            positions = rng.integers(0, len(buf), size=int(rng.integers(1, 8)))
            for p in positions:
                buf[p] = int(rng.integers(0, 256))
            cut = int(rng.integers(1, len(buf) + 1))
            try:
                _decode_ok(bytes(buf[:cut]))
            except BadImageError as exc:
                assert exc.reason and "\n" not in exc.reason


def test_pil_globals_restored(chelsea: np.ndarray, encode: Callable[..., bytes]) -> None:
    before = Image.MAX_IMAGE_PIXELS, ImageFile.LOAD_TRUNCATED_IMAGES
    decode_image(encode(chelsea))
    with pytest.raises(BadImageError):
        decode_image(encode(chelsea, "JPEG")[:500])
    assert (Image.MAX_IMAGE_PIXELS, ImageFile.LOAD_TRUNCATED_IMAGES) == before


def test_bad_image_error_pickles() -> None:
    err = pickle.loads(pickle.dumps(BadImageError("file not found: x.jpg")))
    assert isinstance(err, BadImageError) and err.reason == "file not found: x.jpg"


# ----------------------------------------------------------------------------------------------------------- modes


@pytest.mark.parametrize(
    ("fmt", "params"), [("PNG", {}), ("BMP", {}), ("TIFF", {}), ("PPM", {}), ("WEBP", {"lossless": True})]
)
def test_lossless_roundtrip(chelsea: np.ndarray, fmt: str, params: dict, encode: Callable[..., bytes]) -> None:
    arr, info = _decode_ok(encode(chelsea, fmt, **params))
    np.testing.assert_array_equal(arr, chelsea)
    assert info["mode"] == "RGB" and info["size"] == [chelsea.shape[1], chelsea.shape[0]]
    assert info["drafted"] is False and info["exif_rotated"] is False


def test_jpeg_full_resolution_by_default(encode: Callable[..., bytes], photo: Callable[..., np.ndarray]) -> None:
    photo = photo("astronaut", step=1)
    arr, info = _decode_ok(encode(photo, "JPEG", quality=95))
    assert arr.shape == photo.shape and info["format"] == "JPEG" and not info["drafted"]
    assert _mean_abs_diff(arr, photo) < 3


def test_cmyk_jpeg(chelsea: np.ndarray, encode: Callable[..., bytes]) -> None:
    cmyk = Image.fromarray(chelsea).convert("CMYK")
    arr, info = _decode_ok(encode(cmyk, "JPEG", quality=95))
    assert info["mode"] == "CMYK"
    assert _mean_abs_diff(arr, chelsea) < 4


def test_cmyk_with_black_channel_uses_multiplicative_formula(encode: Callable[..., bytes]) -> None:
    rng = np.random.default_rng(1)
    cmyk = rng.integers(0, 256, size=(16, 16, 4), dtype=np.uint8)
    arr, _ = _decode_ok(encode(Image.fromarray(cmyk, "CMYK"), "TIFF"))
    c, k = cmyk[..., :3].astype(float), cmyk[..., 3:].astype(float)
    expected = (255 - c) * (255 - k) / 255
    assert np.abs(arr - expected).max() <= 1


def test_16bit_png_gradient_scaled_not_clipped(encode: Callable[..., bytes]) -> None:
    g8 = np.tile(np.arange(256, dtype=np.uint8), (4, 1))
    g16 = g8.astype(np.uint16) * 257
    arr, info = _decode_ok(encode(Image.fromarray(g16)))
    assert info["mode"].startswith("I")
    np.testing.assert_array_equal(arr[..., 0], g8)
    np.testing.assert_array_equal(arr[..., 0], arr[..., 2])


def test_16bit_values_rounded(encode: Callable[..., bytes]) -> None:
    values = np.array([[0, 128, 129, 385, 386, 1000, 65534, 65535]], dtype=np.uint16)
    arr, _ = _decode_ok(encode(Image.fromarray(values)))
    np.testing.assert_array_equal(arr[0, :, 0], np.round(values[0] / 257).astype(np.uint8))


def test_16bit_big_endian_tiff(encode: Callable[..., bytes]) -> None:
    values = (np.arange(64, dtype=np.uint16).reshape(8, 8) * 1000).astype(">u2")
    img = Image.fromarray(values)
    assert img.mode == "I;16B"
    arr, _ = _decode_ok(encode(img, "TIFF"))
    np.testing.assert_array_equal(arr[..., 1], np.round(values.astype(float) / 257).astype(np.uint8))


@pytest.mark.parametrize(("peak", "scaled"), [(60000, True), (200, False)])
def test_int32_mode(peak: int, scaled: bool, encode: Callable[..., bytes]) -> None:
    values = np.linspace(0, peak, 64).astype(np.int32).reshape(8, 8)
    img = Image.fromarray(values, "I")
    arr, info = _decode_ok(encode(img, "TIFF"))
    assert info["mode"] == "I"
    expected = np.round(values / 257) if scaled else values
    np.testing.assert_array_equal(arr[..., 0], expected.astype(np.uint8))


@pytest.mark.parametrize("peak", [1.0, 255.0])
def test_float_mode(peak: float, encode: Callable[..., bytes]) -> None:
    values = np.linspace(0, peak, 64, dtype=np.float32).reshape(8, 8)
    arr, info = _decode_ok(encode(Image.fromarray(values, "F"), "TIFF"))
    assert info["mode"] == "F"
    np.testing.assert_array_equal(arr[..., 0], np.round(values / peak * 255).astype(np.uint8))


def test_palette_without_transparency(chelsea: np.ndarray, encode: Callable[..., bytes]) -> None:
    pal = Image.fromarray(chelsea).quantize(64)
    arr, info = _decode_ok(encode(pal))
    assert info["mode"] == "P" and not info["alpha_composited"]
    np.testing.assert_array_equal(arr, np.asarray(pal.convert("RGB")))


def test_palette_with_transparency(chelsea: np.ndarray, encode: Callable[..., bytes]) -> None:
    pal = Image.fromarray(chelsea).quantize(64)
    index = np.asarray(pal)
    transparent = int(index[0, 0])
    arr, info = _decode_ok(encode(pal, transparency=transparent))
    assert info["alpha_composited"]
    mask = index == transparent
    assert (arr[mask] == 255).all()
    np.testing.assert_array_equal(arr[~mask], np.asarray(pal.convert("RGB"))[~mask])


def test_rgba_composited_over_white(chelsea: np.ndarray, encode: Callable[..., bytes]) -> None:
    alpha = np.full(chelsea.shape[:2], 255, np.uint8)
    alpha[:10] = 0
    alpha[10:20] = 128
    arr, info = _decode_ok(encode(np.dstack([chelsea, alpha])))
    assert info["mode"] == "RGBA" and info["alpha_composited"]
    assert (arr[:10] == 255).all()
    np.testing.assert_array_equal(arr[20:], chelsea[20:])
    expected = np.round((chelsea[10:20].astype(float) * 128 + 255 * 127) / 255)
    assert np.abs(arr[10:20] - expected).max() <= 1


def test_la_composited_over_white(encode: Callable[..., bytes], photo: Callable[..., np.ndarray]) -> None:
    gray = photo("camera", 4)
    alpha = np.full(gray.shape, 255, np.uint8)
    alpha[:, :5] = 0
    arr, info = _decode_ok(encode(Image.fromarray(np.dstack([gray, alpha]), "LA")))
    assert info["mode"] == "LA"
    assert (arr[:, :5] == 255).all()
    np.testing.assert_array_equal(arr[:, 5:, 1], gray[:, 5:])


def test_grayscale_to_three_channels(encode: Callable[..., bytes], photo: Callable[..., np.ndarray]) -> None:
    gray = photo("camera", 4)
    arr, info = _decode_ok(encode(gray))
    assert info["mode"] == "L"
    for channel in range(3):
        np.testing.assert_array_equal(arr[..., channel], gray)


def test_bilevel_mode(encode: Callable[..., bytes], photo: Callable[..., np.ndarray]) -> None:
    bits = Image.fromarray(photo("camera", 4)).convert("1")
    arr, info = _decode_ok(encode(bits))
    assert info["mode"] == "1"
    assert set(np.unique(arr).tolist()) <= {0, 255}


def test_exif_orientation_6_rotates(chelsea: np.ndarray, encode: Callable[..., bytes]) -> None:
    img = Image.fromarray(chelsea)
    exif = img.getexif()
    exif[0x0112] = 6
    arr, info = _decode_ok(encode(img, "JPEG", quality=95, exif=exif.tobytes()))
    assert info["exif_rotated"] is True
    assert info["size"] == [chelsea.shape[1], chelsea.shape[0]]
    expected = np.rot90(chelsea, -1)  # orientation 6: rotate 90 degrees clockwise for display
    assert arr.shape == expected.shape
    assert _mean_abs_diff(arr, expected) < 3


def test_one_pixel(encode: Callable[..., bytes]) -> None:
    arr, info = _decode_ok(encode(np.array([[[10, 20, 30]]], np.uint8)))
    assert arr.shape == (1, 1, 3) and arr[0, 0].tolist() == [10, 20, 30]
    assert info["size"] == [1, 1]


def test_animated_gif_first_frame(encode: Callable[..., bytes]) -> None:
    frames = [Image.new("RGB", (8, 8), color) for color in ((255, 0, 0), (0, 0, 255))]
    buf = encode(frames[0], "GIF", save_all=True, append_images=frames[1:], duration=100, loop=0)
    arr, info = _decode_ok(buf)
    assert info["animated"] is True and info["format"] == "GIF"
    assert arr.reshape(-1, 3).tolist() == [[255, 0, 0]] * 64


# --------------------------------------------------------------------------------------------- decompression bombs


def test_png_bomb_rejected_with_size(bomb_png: bytes) -> None:
    assert len(bomb_png) < 2_000_000
    with pytest.raises(BadImageError) as exc:
        decode_image(bomb_png)
    assert f"{BOMB_SIDE}x{BOMB_SIDE}" in exc.value.reason
    assert str(DEFAULT_MAX_PIXELS) in exc.value.reason and "--max-pixels" in exc.value.reason


def test_png_limit_is_exact(bomb_png: bytes) -> None:
    with pytest.raises(BadImageError, match="image too large"):
        decode_image(bomb_png, max_pixels=BOMB_SIDE * BOMB_SIDE - 1)


def test_huge_jpeg_rejected_by_declared_size(huge_jpeg: bytes) -> None:
    # a DCT-scaled decode (2500x2500) would fit the limit; the declared 20000x20000 does not
    with pytest.raises(BadImageError, match=f"image too large: {BOMB_SIDE}x{BOMB_SIDE}"):
        decode_image(huge_jpeg, min_side_hint=256, fast_draft=True)
    arr, info = _decode_ok(huge_jpeg, max_pixels=BOMB_SIDE * BOMB_SIDE, min_side_hint=256, fast_draft=True)
    assert info["drafted"] is True and info["size"] == [BOMB_SIDE, BOMB_SIDE]
    assert arr.shape == (BOMB_SIDE // 8, BOMB_SIDE // 8, 3)


def test_huge_jpeg_rejected_when_draft_is_not_enough(huge_jpeg: bytes) -> None:
    with pytest.raises(BadImageError, match=f"image too large: {BOMB_SIDE}x{BOMB_SIDE}"):
        decode_image(huge_jpeg, max_pixels=10_000, min_side_hint=256)


def test_min_side_hint_drafts_only_when_asked(encode: Callable[..., bytes], photo: Callable[..., np.ndarray]) -> None:
    photo = photo("astronaut", step=1)  # 512x512
    data = encode(photo, "JPEG", quality=95)
    full, info = _decode_ok(data)
    assert full.shape == photo.shape and not info["drafted"]
    same, info = _decode_ok(data, min_side_hint=128)
    assert np.array_equal(same, full) and not info["drafted"]
    small, info = _decode_ok(data, min_side_hint=128, fast_draft=True)
    assert info["drafted"] is True and info["draft_size"] == [128, 128]
    assert small.shape == (128, 128, 3)
    reference = np.asarray(Image.fromarray(photo).reduce(4))
    assert _mean_abs_diff(small, reference) < 6


def test_min_side_hint_keeps_shorter_side(encode: Callable[..., bytes], photo: Callable[..., np.ndarray]) -> None:
    photo = photo("rocket", step=1)  # 427x640
    arr, info = _decode_ok(encode(photo, "JPEG"), min_side_hint=200, fast_draft=True)
    assert min(arr.shape[:2]) >= 200 and info["drafted"] is True
    arr, info = _decode_ok(encode(photo, "JPEG"), min_side_hint=300, fast_draft=True)
    assert arr.shape == photo.shape and info["drafted"] is False
