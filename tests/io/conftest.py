"""Fixtures for the I/O tests: real scikit-image photographs written as files, datasets and tar shards."""

from __future__ import annotations

import io
import json
import struct
import tarfile
import zlib
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import skimage.data
from PIL import Image

BOMB_SIDE = 20_000


def small_photo(name: str, step: int = 4) -> np.ndarray:
    """A real scikit-image photograph, subsampled to keep tests fast."""
    arr = getattr(skimage.data, name)()
    return np.ascontiguousarray(arr[::step, ::step])


def encode(arr: np.ndarray | Image.Image, fmt: str = "PNG", **params) -> bytes:
    """Encodes an array or PIL image to bytes."""
    img = arr if isinstance(arr, Image.Image) else Image.fromarray(arr)
    buf = io.BytesIO()
    img.save(buf, format=fmt, **params)
    return buf.getvalue()


@pytest.fixture(name="encode")
def encode_fixture() -> Callable[..., bytes]:
    """The :func:`encode` helper, as a fixture (test modules do not import conftest)."""
    return encode


@pytest.fixture(name="photo")
def photo_fixture() -> Callable[..., np.ndarray]:
    """The :func:`small_photo` helper, as a fixture."""
    return small_photo


def write_jpeg(path: Path, name: str, *, step: int = 4) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(encode(small_photo(name, step), "JPEG", quality=90))
    return path


def _png_chunk(kind: bytes, payload: bytes) -> bytes:
    return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload))


@pytest.fixture(scope="session")
def chelsea() -> np.ndarray:
    return small_photo("chelsea", step=2)


@pytest.fixture(scope="session")
def bomb_png() -> bytes:
    """A real, valid 20000x20000 greyscale PNG (all zeros) written by hand with streaming zlib (~400 KB)."""
    compressor = zlib.compressobj(9)
    rows_per_block = 500
    block = bytes(BOMB_SIDE + 1) * rows_per_block  # filter byte 0 + zero pixels per row
    idat = b"".join(compressor.compress(block) for _ in range(BOMB_SIDE // rows_per_block)) + compressor.flush()
    header = struct.pack(">IIBBBBB", BOMB_SIDE, BOMB_SIDE, 8, 0, 0, 0, 0)
    signature = b"\x89PNG\r\n\x1a\n"
    return signature + _png_chunk(b"IHDR", header) + _png_chunk(b"IDAT", idat) + _png_chunk(b"IEND", b"")


@pytest.fixture(scope="session")
def huge_jpeg() -> bytes:
    """A real 20000x20000 greyscale JPEG (needs a 400 MB image once; encodes in well under a second)."""
    img = Image.new("L", (BOMB_SIDE, BOMB_SIDE), 0)
    try:
        return encode(img, "JPEG", quality=50)
    finally:
        img.close()


@pytest.fixture
def hf_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Keeps ``load_dataset`` caches out of the user's home."""
    import datasets

    cache = tmp_path_factory.mktemp("hf_cache")
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", cache)
    datasets.disable_progress_bars()
    return cache


@pytest.fixture
def wnid_tree(tmp_path: Path) -> Path:
    """ImageNet-val style ``<wnid>/<file>`` tree with two wnids (tench=0, goldfish=1)."""
    root = tmp_path / "wnid"
    write_jpeg(root / "n01443537" / "ILSVRC2012_val_00000262.JPEG", "coffee")
    write_jpeg(root / "n01440764" / "ILSVRC2012_val_00000293.JPEG", "chelsea")
    write_jpeg(root / "n01440764" / "ILSVRC2012_val_00002138.JPEG", "rocket")
    return root


@pytest.fixture
def class_tree(tmp_path: Path) -> Path:
    """Generic ``<class>/<file>`` tree with a broken file, a non-image and a hidden file."""
    root = tmp_path / "classes"
    write_jpeg(root / "dog" / "b.jpg", "astronaut")
    write_jpeg(root / "cat" / "a.JPG", "chelsea")
    write_jpeg(root / "cat" / "nested" / "c.jpeg", "coffee")
    (root / "cat" / "broken.png").write_bytes(b"this is not an image")
    (root / "cat" / "notes.txt").write_text("not listed")
    (root / "dog" / ".hidden.jpg").write_bytes(b"skipped")
    return root


@pytest.fixture
def val_flat(tmp_path: Path) -> Path:
    """Flat folder of ILSVRC2012 validation file names."""
    root = tmp_path / "val"
    write_jpeg(root / "ILSVRC2012_val_00000001.JPEG", "chelsea")
    write_jpeg(root / "ILSVRC2012_val_00000002.JPEG", "coffee")
    return root


def _hf_dataset(images: list[np.ndarray], labels: list[int], names: list[str], **extra: list):
    import datasets

    features = {"image": datasets.Image(), "label": datasets.ClassLabel(names=names)}
    features |= {k: datasets.Value("string") for k in extra}
    data = {"image": [Image.fromarray(a) for a in images], "label": labels, **extra}
    return datasets.Dataset.from_dict(data, features=datasets.Features(features))


@pytest.fixture
def hf_photos() -> list[np.ndarray]:
    return [small_photo(n, step=8) for n in ("chelsea", "coffee", "rocket")]


@pytest.fixture
def hf_disk(tmp_path: Path, hf_cache: Path, hf_photos: list[np.ndarray]) -> Path:
    """A DatasetDict (train/test) saved with ``save_to_disk``: Image + ClassLabel columns."""
    import datasets

    names = ["tabby", "espresso", "missile"]
    dd = datasets.DatasetDict(
        train=_hf_dataset(hf_photos[:2], [0, 1], names),
        test=_hf_dataset(hf_photos, [0, 1, 2], names),
    )
    path = tmp_path / "hf_disk"
    dd.save_to_disk(str(path))
    return path


@pytest.fixture
def hf_parquet(tmp_path: Path, hf_cache: Path, hf_photos: list[np.ndarray]) -> Path:
    """A local directory of parquet files loadable with ``load_dataset(dir)``."""
    path = tmp_path / "hf_parquet"
    (path / "data").mkdir(parents=True)
    ds = _hf_dataset(hf_photos, [2, 1, 0], ["a", "b", "c"])
    ds.to_parquet(str(path / "data" / "validation-00000-of-00001.parquet"))
    return path


def _add_member(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))


@pytest.fixture
def wds_shards(tmp_path: Path) -> Path:
    """Writes two shards: shard 0 has jpg+cls samples, shard 1 jpg+json (and a sample without image)."""
    root = tmp_path / "wds"
    root.mkdir()
    with tarfile.open(root / "clean-000.tar", "w") as tar:
        for i, name in enumerate(("chelsea", "coffee")):
            _add_member(tar, f"s{i:04d}.jpg", encode(small_photo(name, 8), "JPEG"))
            _add_member(tar, f"s{i:04d}.cls", f"{[281, 967][i]}\n".encode())
    with tarfile.open(root / "clean-001.tar", "w") as tar:
        meta = {"label": 657, "label_name": "missile"}
        _add_member(tar, "sub/x-0002.json", json.dumps(meta).encode())
        _add_member(tar, "sub/x-0002.png", encode(small_photo("rocket", 8)))
        _add_member(tar, "s0000.jpg", encode(small_photo("astronaut", 8), "JPEG"))  # same key as in shard 0
        _add_member(tar, "meta-only.json", b"{}")
    return root
