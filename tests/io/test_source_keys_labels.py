"""Keys datasets can read (never hidden), labels from the fixed ImageNet-1k index whatever parsed, and labels checked
against the class count when the source is opened (Q2, Q4, Q5)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import corruptgen
from corruptgen.cli import main
from corruptgen.errors import CorruptgenError
from corruptgen.io.decode import BadImageError
from corruptgen.io.labels import imagenet_names, wnid_to_index
from corruptgen.io.sources import open_source


def _png(path: Path, shade: int = 0) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pixels = np.full((32, 32, 3), shade, np.uint8)
    pixels[8:24, 8:24] = 255 - shade
    Image.fromarray(pixels).save(path)
    return path


# ----------------------------------------------------------------------------------------------------------- keys


def test_keys_never_start_with_underscore_and_datasets_reads_every_row(tmp_path, hf_cache):
    """Non-ASCII names sanitise to ``__``; datasets' webdataset loader skips members whose name starts with ``__`` or
    ``.`` as hidden files, so such keys lost rows (or failed the split-size check)."""
    import datasets

    names = ["日本.png", "中国.png", "_under.png", "__dunder.png", "x__.png", "plain.png"]
    for i, name in enumerate(names):
        _png(tmp_path / "src" / name, 30 * i)
    source = open_source(f"imagefolder:{tmp_path / 'src'}")
    keys = [item.key for item in source.items()]
    assert len(set(keys)) == len(keys) and not [k for k in keys if k.startswith(("_", "."))], keys
    assert "plain" in keys  # ordinary names keep their keys (and so their bytes)
    out = tmp_path / "out"
    build = corruptgen.build("imagenet-c", source=f"imagefolder:{tmp_path / 'src'}", subsets="contrast",
                             severities="1", out=out, card=False, progress=False)  # fmt: skip
    for subset, count in build.manifest["counts"]["per_subset"].items():
        shards = [str(Path(build.out_dir) / rel) for rel in build.manifest["subsets"][subset]["shards"]]
        rows = datasets.load_dataset("webdataset", data_files={"test": shards}, split="test", cache_dir=str(hf_cache))
        assert count == len(names) and len(rows) == count, (subset, rows["__key__"])


# --------------------------------------------------------------------------------------------------------- labels

TENCH, GOLDFISH, SHARK = "n01440764", "n01443537", "n01484850"  # ImageNet-1k classes 0, 1, 2


def test_a_mistyped_wnid_line_shifts_no_label(tmp_path, capsys):
    """The mistyped folder sorts before n01484850: indexing the folders that parsed gave the shark label 3."""
    root = tmp_path / "val"
    rels = [f"{TENCH}/a.png", f"{GOLDFISH}/b.png", f"{SHARK}/c.png"]
    for i, rel in enumerate(rels):
        _png(root / rel, 60 * i)
    listing = tmp_path / "list.txt"
    listing.write_text("\n".join([*rels, "n0144O764/d.png"]) + "\n")  # O for 0
    source = open_source(f"filelist:{listing}:{root}")
    assert [item.label for item in source.items()] == [0, 1, 2, None]
    assert source.items()[2].label_name == imagenet_names()[2] and source.describe()["layout"] == "imagenet-wnid"
    err = capsys.readouterr().err
    assert "line 4 (n0144O764/d.png) is skipped: file not found" in err and len(err.splitlines()) == 1
    build = corruptgen.build("imagenet-c", source=f"filelist:{listing}:{root}", subsets="contrast", severities="1",
                             out=tmp_path / "out", card=False, progress=False, clean=False)  # fmt: skip
    assert build.manifest["counts"]["skipped_inputs"] == 1 and build.manifest["source"]["num_classes"] == 1000


def test_folders_outside_imagenet_are_skipped_not_renumbered(tmp_path):
    for rel in (f"{TENCH}/a.png", f"{SHARK}/b.png", "n99999999/c.png"):
        _png(tmp_path / rel)
    source = open_source(f"imagefolder:{tmp_path}")
    assert [(item.source_id, item.label) for item in source.items()] == [
        (f"{TENCH}/a.png", 0), (f"{SHARK}/b.png", 2), ("n99999999/c.png", None)]  # fmt: skip
    with pytest.raises(BadImageError, match="n99999999 is not an ImageNet-1k class"):
        source.read(2)
    assert source.notes == ["imagefolder: 1 image skipped, in 1 folder not among the ImageNet-1k classes (wnids): "
                            "n99999999"]  # fmt: skip


def test_generic_class_list_indexes_the_roots_folders(tmp_path):
    for rel in ("cat/a.png", "dog/b.png", "eel/c.png"):
        _png(tmp_path / rel)
    listing = tmp_path / "list.txt"
    listing.write_text("eel/c.png\ncta/x.png\n")  # a typo, and only one of the three classes listed
    assert [item.label for item in open_source(f"filelist:{listing}").items()] == [2, None]


def test_numbered_class_folders_are_their_own_labels(tmp_path):
    """ImageNetV2-style folders "0".."999": the folder's number is the label, whatever sorts or is missing."""
    for rel in ("0/a.png", "2/b.png", "10/c.png"):
        _png(tmp_path / rel)
    source = open_source(f"imagefolder:{tmp_path}")
    assert sorted((item.source_id, item.label) for item in source.items()) == [
        ("0/a.png", 0), ("10/c.png", 10), ("2/b.png", 2)]  # fmt: skip
    assert source.num_classes == 11


def test_hf_class_label_of_wnids_gives_imagenet_indices(tmp_path, hf_cache):
    """``load_dataset("imagefolder")`` of a wnid tree makes a ClassLabel of the folders it found: index 1 is the
    second folder present, not ImageNet class 1."""
    import datasets

    features = datasets.Features({"image": datasets.Image(), "label": datasets.ClassLabel(names=[TENCH, SHARK])})
    images = [Image.open(_png(tmp_path / f"{i}.png", 90 * i)) for i in range(2)]
    datasets.Dataset.from_dict({"image": images, "label": [0, 1]}, features=features).save_to_disk(tmp_path / "ds")
    source = open_source(f"hf:{tmp_path / 'ds'}")
    assert [(item.label, item.label_name) for item in source.items()] == [(0, "tench"), (2, imagenet_names()[2])]
    assert source.num_classes == 1000 and wnid_to_index()[SHARK] == 2


# ----------------------------------------------------------------------------------------------- label range


def test_a_huge_npy_label_fails_when_opened_in_one_line(tmp_path, capsys):
    """One label 10⁹ passed the build, then the card listed 10⁹ class names and was killed at 3 GB."""
    np.save(tmp_path / "images.npy", np.zeros((3, 32, 32, 3), np.uint8))
    np.save(tmp_path / "labels.npy", np.array([0, 10**9, 2]))
    with pytest.raises(CorruptgenError, match=r"label 1000000000 of images.npy:1 is not a class index"):
        open_source(f"npy:{tmp_path / 'images.npy'}:{tmp_path / 'labels.npy'}")
    spec = f"npy:{tmp_path / 'images.npy'}:{tmp_path / 'labels.npy'}"
    args = ["build", "cifar10-c", "--source", spec, "--subsets", "fog", "--out", str(tmp_path / "out"), "--no-progress"]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "not a class index" in err and not (tmp_path / "out").exists()
    np.save(tmp_path / "labels.npy", np.array([0, -1, 2]))  # -1: unknown, as everywhere
    assert [i.label for i in open_source(spec).items()] == [0, None, 2]


def test_labels_outside_a_declared_class_count_fail(tmp_path, hf_cache):
    import datasets

    features = datasets.Features({"image": datasets.Image(), "label": datasets.ClassLabel(names=["a", "b"])})
    table = datasets.Dataset.from_dict({"image": [Image.open(_png(tmp_path / "0.png"))], "label": [0]},
                                       features=features)  # fmt: skip
    table = table.cast_column("label", datasets.Value("int64")).map(lambda row: {"label": 5})
    table.cast_column("label", datasets.ClassLabel(names=["a", "b"])).save_to_disk(tmp_path / "ds")
    with pytest.raises(CorruptgenError, match=r"label 5 of hf:.*:0 is outside the 2 classes"):
        open_source(f"hf:{tmp_path / 'ds'}")
