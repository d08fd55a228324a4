"""Array sources (``samples``, ``npy:``) hand their arrays to the engine without an image codec, with the pixels a PNG
round trip gave, the byte cap and the pixel cap."""

from __future__ import annotations

import json

import numpy as np
import pytest

import corruptgen
import corruptgen.engine.chunk
from corruptgen.errors import NoSamplesError
from corruptgen.io.decode import BadImageError, decode_array, decode_image
from corruptgen.io.sources import open_source
from corruptgen.io.sources.base import array_png


@pytest.mark.parametrize("shape", [(5, 7), (5, 7, 3), (5, 7, 4), (5, 7, 2), (1, 1, 3)])
def test_decode_array_equals_decoding_the_png(shape):
    array = np.random.default_rng(0).integers(0, 256, shape, dtype=np.uint8)
    ours = decode_array(array)
    assert ours.flags.writeable and ours.flags.c_contiguous
    np.testing.assert_array_equal(ours, decode_image(array_png(array))[0])


def test_decode_array_checks_the_pixel_cap():
    with pytest.raises(BadImageError, match=r"7x5 pixels > limit of 34 \(--max-pixels\)"):
        decode_array(np.zeros((5, 7, 3), np.uint8), max_pixels=34)


def test_samples_are_arrays_and_read_is_still_png():
    source = open_source("samples", limit=9)
    grey = source.read_input(8)  # camera: a greyscale photo
    assert isinstance(grey, np.ndarray) and grey.shape == (512, 512) and grey.dtype == np.uint8
    np.testing.assert_array_equal(decode_array(grey), decode_image(source.read(8))[0])
    with pytest.raises(BadImageError, match=r"file too large: skimage:camera: 262144 bytes > limit of 1000"):
        source.read_input(8, max_bytes=1000)


def _npy(tmp_path, n=3):
    images = np.random.default_rng(1).integers(0, 256, (n, 32, 32, 3), dtype=np.uint8)
    np.save(tmp_path / "img.npy", images)
    return images, f"npy:{tmp_path / 'img.npy'}"


def test_a_build_from_an_array_source_uses_no_image_codec(tmp_path, monkeypatch):
    images, spec = _npy(tmp_path)
    reference = corruptgen.build("cifar10-c", source=spec, subsets="fog_s3", out=tmp_path / "png", card=False)

    def no_codec(*args, **kwargs):
        raise AssertionError("an array went through an image codec")

    monkeypatch.setattr(corruptgen.engine.chunk, "decode_image", no_codec)
    monkeypatch.setattr("corruptgen.io.sources.base.array_png", no_codec)
    (tmp_path / "png").rename(tmp_path / "first")
    result = corruptgen.build("cifar10-c", source=spec, subsets="fog_s3", out=tmp_path / "png", card=False)
    assert result.manifest["counts"]["samples"] == 2 * len(images)
    for rel, rec in reference.manifest["shards"].items():
        assert result.manifest["shards"][rel]["sha256"] == rec["sha256"]
    assert result.manifest["shards"] == json.loads((tmp_path / "first/cifar10-c/manifest.json").read_text())["shards"]


def test_the_byte_cap_of_an_array_source_is_its_pixels(tmp_path):
    _, spec = _npy(tmp_path, n=1)
    with pytest.raises(NoSamplesError, match=r"image 0 of .*img.npy: 3072 bytes > 3071"):
        corruptgen.build("cifar10-c", source=spec, subsets="fog_s3", out=tmp_path / "o", card=False,
                         max_bytes=32 * 32 * 3 - 1)  # fmt: skip
    corruptgen.build("cifar10-c", source=spec, subsets="fog_s3", out=tmp_path / "o", card=False, overwrite=True,
                     max_bytes=32 * 32 * 3)  # fmt: skip
