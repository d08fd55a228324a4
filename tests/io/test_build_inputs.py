"""End-to-end builds from every source kind, and from a folder holding every kind of bad input."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tarfile
from pathlib import Path

import numpy as np
import pytest
import skimage.data
from PIL import Image

import corruptgen
from corruptgen.errors import CorruptgenError


def _jpeg(arr: np.ndarray, **kw) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(arr).save(buf, format="JPEG", quality=90, **kw)
    return buf.getvalue()


def _png(img: Image.Image) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


@pytest.fixture
def messy_folder(tmp_path: Path, bomb_png: bytes, huge_jpeg: bytes) -> Path:
    """Real photos in every odd encoding, plus broken files, all with image extensions."""
    root = tmp_path / "messy"
    root.mkdir()
    coffee = skimage.data.coffee()
    chelsea = skimage.data.chelsea()
    good = _jpeg(coffee)
    files = {
        "ok.jpg": good,
        "truncated.jpg": good[: len(good) // 2],
        "empty.jpg": b"",
        "text.png": b"hello, I am not an image\n",
        "cmyk.jpg": _jpeg_mode(Image.fromarray(chelsea).convert("CMYK")),
        "gray16.png": _png(_gray16(skimage.data.camera())),
        "palette.png": _png(Image.fromarray(coffee).convert("P", palette=Image.Palette.ADAPTIVE)),
        "rgba.png": _png(Image.fromarray(np.dstack([chelsea, np.full(chelsea.shape[:2], 128, np.uint8)]))),
        "gray.png": _png(Image.fromarray(skimage.data.camera())),
        "exif_rotated.jpg": _exif_rotated(chelsea),
        "tiny.png": _png(Image.fromarray(np.array([[[200, 10, 10]]], np.uint8))),
        "bomb.png": bomb_png,
        "huge.jpg": huge_jpeg,
    }
    for name, data in files.items():
        (root / name).write_bytes(data)
    return root


def _gray16(gray: np.ndarray) -> Image.Image:
    data = (gray.astype("<u2") * 257).tobytes()
    return Image.frombytes("I;16", (gray.shape[1], gray.shape[0]), data)


def _jpeg_mode(img: Image.Image) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format="JPEG", quality=90)
    return buf.getvalue()


def _exif_rotated(arr: np.ndarray) -> bytes:
    img = Image.fromarray(np.ascontiguousarray(np.rot90(arr, 1)))  # stored rotated; orientation 6 undoes it
    exif = Image.Exif()
    exif[0x0112] = 6
    buf = io.BytesIO()
    img.save(buf, format="JPEG", quality=90, exif=exif)
    return buf.getvalue()


def test_bad_inputs_are_converted_or_skipped_with_reasons(tmp_path, messy_folder):
    result = corruptgen.build("syn2nat", source=f"imagefolder:{messy_folder}", out=tmp_path, subsets="posterize")
    m = result.manifest
    reasons = {s["key"]: s["reason"] for s in m["skipped"]}
    assert set(reasons) == {"truncated", "empty", "text", "bomb", "huge"}
    assert "truncated" in reasons["truncated"] and "0 bytes" in reasons["empty"]
    assert "not a recognised image" in reasons["text"] and "20000x20000" in reasons["bomb"]
    assert "image too large: 20000x20000" in reasons["huge"]  # declared size, although a DCT-scaled decode would fit
    assert m["counts"]["inputs"] == 13 and m["counts"]["skipped_inputs"] == 5
    assert m["counts"]["per_subset"] == {"clean": 8, "posterize": 8}
    assert "skipped 5 of 13 inputs" in result.summary()
    with tarfile.open(tmp_path / "syn2nat/data/clean/test-00000.tar") as tar:
        images = {
            n.split(".")[0]: np.asarray(Image.open(tar.extractfile(n))) for n in tar.getnames() if n.endswith("jpg")
        }
    assert all(a.shape == (224, 224, 3) for a in images.values())
    tiny = images["tiny"].reshape(-1, 3).mean(0)
    assert abs(tiny[0] - 200) < 8 and tiny[1] < 25  # 1x1 red pixel -> a red 224x224 image
    gray = images["gray16"].astype(int)
    assert np.abs(gray[..., 0] - gray[..., 2]).max() <= 6 and gray.mean() > 60  # scaled 16 -> 8 bit, not clipped
    # the EXIF-rotated photo comes out upright: it matches the clean upright chelsea through the same protocol
    upright = corruptgen.family.preprocess.get_preprocess("syn2nat")(skimage.data.chelsea()).astype(int)
    assert np.abs(images["exif_rotated"].astype(int) - upright).mean() < 6
    assert np.abs(images["cmyk"].astype(int) - upright).mean() < 8


def test_strict_exits_non_zero(tmp_path, messy_folder):
    args = [sys.executable, "-m", "corruptgen", "build", "syn2nat", "--source", f"imagefolder:{messy_folder}",
            "--subsets", "posterize", "--out", str(tmp_path), "--no-progress"]  # fmt: skip
    assert subprocess.run(args, capture_output=True).returncode == 0
    r = subprocess.run([*args, "--strict"], capture_output=True, text=True)
    assert r.returncode == 1 and "skipped 5 of 13 inputs" in r.stdout and "Traceback" not in r.stderr
    with pytest.raises(CorruptgenError, match="strict"):
        corruptgen.build("syn2nat", source=f"imagefolder:{messy_folder}", out=tmp_path, subsets="posterize",
                         strict=True)  # fmt: skip


def test_build_from_imagenet_layout(tmp_path, wnid_tree):
    r = corruptgen.build("syn2nat", source=f"imagefolder:{wnid_tree}", out=tmp_path, subsets="to_sepia")
    with tarfile.open(tmp_path / "syn2nat/data/to_sepia/test-00000.tar") as tar:
        meta = json.loads(tar.extractfile("ILSVRC2012_val_00000262.json").read())
        assert tar.extractfile("ILSVRC2012_val_00000262.cls").read() == b"1"
    assert meta["label"] == 1 and meta["label_name"] == "goldfish" and r.manifest["counts"]["samples"] == 6


def test_build_from_hf_dataset(tmp_path, hf_disk):
    r = corruptgen.build("syn2nat", source=f"hf:{hf_disk}:test", out=tmp_path, subsets="emboss", workers=2,
                         shard_size=2)  # fmt: skip
    assert r.manifest["counts"]["per_subset"] == {"clean": 3, "emboss": 3}
    with tarfile.open(tmp_path / "syn2nat/data/emboss/test-00000.tar") as tar:
        meta = json.loads(tar.extractfile("test_00000000.json").read())
    assert meta["label"] == 0 and meta["label_name"] == "tabby" and meta["source_id"].endswith(":test:0")


def test_build_from_webdataset(tmp_path, wds_shards):
    r = corruptgen.build("syn2nat", source=f"webdataset:{wds_shards}/clean-{{000..001}}.tar", out=tmp_path,
                         subsets="downscale")  # fmt: skip
    assert r.manifest["counts"]["per_subset"]["downscale"] == 4  # 2 + 2 samples; the meta-only one has no image
    import webdataset as wds

    samples = list(wds.WebDataset(str(tmp_path / "syn2nat/data/downscale/test-00000.tar"), shardshuffle=False))
    assert sorted(int(s["cls"]) for s in samples) == [-1, 281, 657, 967]
    assert len({s["__key__"] for s in samples}) == 4 and all("." not in s["__key__"] for s in samples)
