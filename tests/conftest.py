"""Shared fixtures: real photographs from scikit-image written as files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import skimage.data
from PIL import Image

PHOTOS = ("astronaut", "chelsea", "coffee", "rocket", "hubble_deep_field", "immunohistochemistry")


def write_photos(root: Path, n: int, *, quality: int = 95) -> list[Path]:
    """``n`` JPEG files under ``root`` cycling through real photos (mirrored on later rounds)."""
    root.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(n):
        arr = getattr(skimage.data, PHOTOS[i % len(PHOTOS)])()
        if (i // len(PHOTOS)) % 2:
            arr = np.ascontiguousarray(arr[:, ::-1])
        p = root / f"img_{i:03d}.jpg"
        Image.fromarray(arr).save(p, quality=quality)
        paths.append(p)
    return paths


def pytest_collection_modifyitems(config, items) -> None:
    """Tests marked ``cuda`` are skipped where torch sees no CUDA device."""
    marked = [item for item in items if item.get_closest_marker("cuda")]
    if not marked:
        return
    import torch

    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="no CUDA device")
    for item in marked:
        item.add_marker(skip)


@pytest.fixture
def photo_folder(tmp_path: Path) -> Path:
    """A flat folder of 7 real JPEG photos."""
    write_photos(tmp_path / "photos", 7)
    return tmp_path / "photos"


@pytest.fixture(scope="session")
def protocol_images() -> list[np.ndarray]:
    """astronaut, coffee, chelsea, rocket after the Syn2Nat protocol (Resize 256x256 INTER_AREA + CenterCrop 224)."""
    from corruptgen.family.preprocess import get_preprocess

    pre = get_preprocess("syn2nat")
    return [pre(getattr(skimage.data, n)()) for n in ("astronaut", "coffee", "chelsea", "rocket")]


@pytest.fixture
def hf_cache(tmp_path_factory, monkeypatch):
    """A private Hugging Face datasets cache (loading shards with ``datasets`` writes there), progress bars off."""
    import datasets

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path_factory.mktemp("hf_cache"))
    datasets.disable_progress_bars()
