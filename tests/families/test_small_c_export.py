"""Export layouts of the small-image ImageNet-C variants: ``cifar-c`` (CIFAR-10-C's arrays, read here by a
transcription of RobustBench's ``load_corruptions_dataset``) and ``tinyimagenet-c`` (``<corruption>/<severity>/<wnid>/``
folders)."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from small_images import photos

import corruptgen
from corruptgen.export import export_build

CORRUPTIONS = ("gaussian_noise", "contrast")
LABELS = np.array([3, 7, 0, 9])


def robustbench_load(root: Path, n_total: int, n_examples: int, severity: int, corruptions=CORRUPTIONS):
    """RobustBench ``load_corruptions_dataset`` (robustbench/data.py) as it reads the files: ``labels.npy``, then per
    corruption ``np.load(<c>.npy)[(severity - 1) * n_total : severity * n_total][:n_img]`` and ``labels[:n_img]``."""
    labels = np.load(root / "labels.npy")
    xs, ys = [], []
    n_img = int(np.ceil(n_examples / len(corruptions)))
    for corruption in corruptions:
        images = np.load(root / f"{corruption}.npy")[(severity - 1) * n_total : severity * n_total]
        xs.append(images[:n_img])
        ys.append(labels[:n_img])
    x = np.transpose(np.concatenate(xs), (0, 3, 1, 2)).astype(np.float32) / 255
    return x[:n_examples], np.concatenate(ys)[:n_examples]


def shard_pixels(build_dir: Path, subset: str) -> dict[str, np.ndarray]:
    """key -> decoded image, read straight from the subset's tar files."""
    found = {}
    for shard in sorted((build_dir / "data" / subset).glob("*.tar")):
        with tarfile.open(shard) as tar:
            for member in tar:
                key, _, field = member.name.partition(".")
                if field in ("png", "jpg"):
                    found[key] = np.asarray(Image.open(io.BytesIO(tar.extractfile(member).read())).convert("RGB"))
    return found


@pytest.fixture(scope="module")
def cifar_build(tmp_path_factory) -> tuple[Path, np.ndarray]:
    root = tmp_path_factory.mktemp("cifar")
    images = photos(32)
    np.save(root / "x.npy", images)
    np.save(root / "y.npy", LABELS)
    source = f"npy:{root / 'x.npy'}:{root / 'y.npy'}"
    subsets = ",".join(CORRUPTIONS) + ",snow_s2"
    out = corruptgen.build("cifar10-c", source=source, subsets=subsets, out=root / "out", shard_size=3).out_dir
    return Path(out), images


def test_cifar_c_arrays_read_by_robustbench_loading(cifar_build, tmp_path: Path) -> None:
    build_dir, images = cifar_build
    report = export_build(build_dir, tmp_path / "CIFAR-10-C", layout="cifar-c")
    root = tmp_path / "CIFAR-10-C"
    assert sorted(p.name for p in root.glob("*.npy")) == ["clean.npy", "contrast.npy", "gaussian_noise.npy",
                                                          "labels.npy"]  # fmt: skip
    assert any("snow" in note for note in report.notes)  # one severity only: no snow.npy
    n = len(images)
    labels = np.load(root / "labels.npy")
    assert labels.dtype == np.uint8 and np.array_equal(labels, np.tile(LABELS, 5))
    assert np.array_equal(np.load(root / "clean.npy"), images)
    for corruption in CORRUPTIONS:
        stacked = np.load(root / f"{corruption}.npy", mmap_mode="r")
        assert stacked.shape == (5 * n, 32, 32, 3) and stacked.dtype == np.uint8
        for s in range(1, 6):  # block s-1 = severity s, row i = source image i (shards of 3: two chunks)
            shards = shard_pixels(build_dir, f"{corruption}_s{s}")
            expected = np.stack([shards[f"{i:08d}"] for i in range(n)])
            assert np.array_equal(stacked[(s - 1) * n : s * n], expected)
    for severity in (1, 5):
        x, y = robustbench_load(root, n_total=n, n_examples=2 * n, severity=severity)
        assert x.shape == (2 * n, 3, 32, 32) and np.array_equal(y, np.tile(LABELS, 2))
        expected = shard_pixels(build_dir, f"contrast_s{severity}")["00000002"]
        assert np.array_equal(np.rint(x[n + 2].transpose(1, 2, 0) * 255).astype(np.uint8), expected)


def test_cifar_c_export_is_idempotent(cifar_build, tmp_path: Path) -> None:
    names = [f"gaussian_noise_s{s}" for s in range(1, 6)]
    export_build(cifar_build[0], tmp_path / "a", layout="cifar-c", subsets=names)
    again = export_build(cifar_build[0], tmp_path / "a", layout="cifar-c", subsets=names)
    assert again.files.get("identical") == 2 and not again.files.get("written")


def test_tinyimagenet_c_folders(tmp_path: Path) -> None:
    wnids = ("n01443537", "n01629819")
    for i, image in enumerate(photos(64)):
        folder = tmp_path / "tiny" / wnids[i % 2]
        folder.mkdir(parents=True, exist_ok=True)
        Image.fromarray(image).save(folder / f"val_{i}.JPEG", quality=95)
    out = Path(corruptgen.build("tinyimagenet-c", source=f"imagefolder:{tmp_path / 'tiny'}",
                                subsets="fog_s3,frost_s1", out=tmp_path / "out").out_dir)  # fmt: skip
    export_build(out, tmp_path / "Tiny-ImageNet-C", layout="tinyimagenet-c")
    files = sorted(p.relative_to(tmp_path / "Tiny-ImageNet-C").as_posix()
                   for p in (tmp_path / "Tiny-ImageNet-C").rglob("*.JPEG"))  # fmt: skip
    assert "fog/3/n01443537/val_0.JPEG" in files and "frost/1/n01629819/val_3.JPEG" in files
    assert len([f for f in files if f.startswith(("fog/", "frost/"))]) == 8
    with tarfile.open(next((out / "data" / "fog_s3").glob("*.tar"))) as tar:
        shard = tar.extractfile("val_0.jpg").read()
    assert (tmp_path / "Tiny-ImageNet-C" / "fog/3/n01443537/val_0.JPEG").read_bytes() == shard


def test_cifar_c_blocks_must_hold_the_same_images() -> None:
    from corruptgen.families.cifar10_c.export import _block, _Unaligned

    image = np.zeros((32, 32, 3), np.uint8)
    samples = [("b", 1, image + 1), ("a", 0, image)]
    assert np.array_equal(_block(samples, ["a", "b"], "x"), np.stack([image, image + 1]))  # put in source order
    for bad, order in (
        ([("a", 0, image)], ["a", "b"]),
        ([("a", 0, image), ("c", 0, image)], ["a", "b"]),
        ([("a", 0, image), ("b", 0, np.zeros((16, 16, 3), np.uint8))], ["a", "b"]),
        ([], []),
    ):
        with pytest.raises(_Unaligned):
            _block(bad, order, "x")
