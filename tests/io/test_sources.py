"""Tests for corruptgen.io.sources on small real fixtures (folders, HF datasets, tar shards)."""

from __future__ import annotations

import io
import multiprocessing
import operator
import pickle
import re
import tarfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import skimage.data
from PIL import Image

from corruptgen.errors import CorruptgenError
from corruptgen.io.decode import BadImageError, decode_image
from corruptgen.io.labels import imagenet_names, imagenet_val_labels, imagenet_wnids, wnid_to_index
from corruptgen.io.sources import Source, SourceItem, _parse_hf_spec, open_source

KEY_RE = re.compile(r"^[A-Za-z0-9_-]+$")


def _check_keys(source: Source) -> list[str]:
    keys = [item.key for item in source.items()]
    assert len(set(keys)) == len(keys), keys
    assert all(KEY_RE.match(k) for k in keys), keys
    return keys


def _labels(source: Source) -> list[int | None]:
    return [item.label for item in source.items()]


def _roundtrip(source: Source) -> Source:
    return pickle.loads(pickle.dumps(source))


# --------------------------------------------------------------------------------------------------------- labels


def test_imagenet_tables() -> None:
    wnids, names = imagenet_wnids(), imagenet_names()
    assert len(wnids) == len(names) == 1000 and wnids == sorted(wnids)
    assert wnids[0] == "n01440764" and wnid_to_index()["n01440764"] == 0
    assert names[281] == "tabby cat" and names[967] == "espresso" and names[409] == "analog clock"
    val = imagenet_val_labels()
    assert len(val) == 50_000 and val["ILSVRC2012_val_00000001.JPEG"] == 65


# -------------------------------------------------------------------------------------------------------- samples


def test_samples_source() -> None:
    source = open_source("samples")
    keys = _check_keys(source)
    assert keys[:4] == ["astronaut", "chelsea", "coffee", "rocket"] and len(keys) == 10
    by_key = {item.key: item for item in source.items()}
    assert by_key["chelsea"] == SourceItem("chelsea", "skimage:chelsea", 281, "tabby cat")
    assert (by_key["stereo_motorcycle"].label, by_key["clock"].label) == (670, 409)
    assert by_key["astronaut"].label is None and source.labelled
    desc = source.describe()
    assert {k: desc[k] for k in ("spec", "kind", "count", "labelled")} == {
        "spec": "samples",
        "kind": "samples",
        "count": 10,
        "labelled": True,
    }
    chelsea, _ = decode_image(source.read(keys.index("chelsea")))
    np.testing.assert_array_equal(chelsea, skimage.data.chelsea())
    camera, info = decode_image(source.read(keys.index("camera")))
    assert info["mode"] == "L" and camera.shape == (512, 512, 3)
    assert source.read(1) == _roundtrip(source).read(1)  # deterministic PNG encoding


# ---------------------------------------------------------------------------------------------------- imagefolder


def test_imagefolder_wnid_tree(wnid_tree: Path) -> None:
    source = open_source(f"imagefolder:{wnid_tree}")
    assert [i.source_id for i in source.items()] == [
        "n01440764/ILSVRC2012_val_00000293.JPEG",
        "n01440764/ILSVRC2012_val_00002138.JPEG",
        "n01443537/ILSVRC2012_val_00000262.JPEG",
    ]
    assert _labels(source) == [0, 0, 1]
    assert [i.label_name for i in source.items()] == ["tench", "tench", "goldfish"]
    assert _check_keys(source) == [
        "ILSVRC2012_val_00000293",
        "ILSVRC2012_val_00002138",
        "ILSVRC2012_val_00000262",
    ]
    desc = source.describe()
    assert (
        desc["layout"] == "imagenet-wnid" and desc["labelled"] and desc["count"] == 3 and desc["kind"] == "imagefolder"
    )
    arr, info = decode_image(source.read(2))
    assert info["format"] == "JPEG" and arr.shape[2] == 3


def test_imagefolder_class_tree(class_tree: Path) -> None:
    source = open_source(f"imagefolder:{class_tree}")
    ids = [i.source_id for i in source.items()]
    assert ids == ["cat/a.JPG", "cat/broken.png", "cat/nested/c.jpeg", "dog/b.jpg"]
    assert _labels(source) == [0, 0, 0, 1]
    assert [i.label_name for i in source.items()] == ["cat", "cat", "cat", "dog"]
    assert _check_keys(source) == ["a", "broken", "c", "b"]
    assert source.describe()["layout"] == "class-folders"
    with pytest.raises(BadImageError):  # broken files are items; they fail at decode time
        decode_image(source.read(1))


def test_imagefolder_flat_val(val_flat: Path) -> None:
    source = open_source(f"imagefolder:{val_flat}")
    table = imagenet_val_labels()
    expected = [table["ILSVRC2012_val_00000001.JPEG"], table["ILSVRC2012_val_00000002.JPEG"]]
    assert _labels(source) == expected and source.labelled
    assert source.items()[0].label_name == imagenet_names()[expected[0]]
    assert source.describe()["layout"] == "imagenet-val"


def test_imagefolder_flat_unlabelled(tmp_path: Path, encode: Callable[..., bytes], photo: Callable) -> None:
    (tmp_path / "holiday photo.png").write_bytes(encode(photo("coffee", 8)))
    (tmp_path / "IMG.2.webp").write_bytes(encode(photo("rocket", 8), "WEBP"))
    source = open_source(f"imagefolder:{tmp_path}")
    assert not source.labelled and _labels(source) == [None, None]
    assert _check_keys(source) == ["IMG_2", "holiday_photo"]


def test_imagefolder_colliding_names(tmp_path: Path, encode: Callable[..., bytes], photo: Callable) -> None:
    data = encode(photo("chelsea", 8))
    for rel in ("a/x.png", "b/x.png", "b/x.jpg", "b/x.y.png", "b/x_y.png", "c/a b.png", "c/a_b.png"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(data)
    source = open_source(f"imagefolder:{tmp_path}")
    keys = dict(zip((i.source_id for i in source.items()), _check_keys(source), strict=True))
    assert keys["a/x.png"] == "a__x"
    assert keys["b/x.jpg"].startswith("b__x_") and keys["b/x.png"].startswith("b__x_")
    assert keys["b/x.y.png"].startswith("b__x_y_") and keys["b/x_y.png"].startswith("b__x_y_")
    assert keys["c/a b.png"].startswith("c__a_b_") and keys["c/a_b.png"].startswith("c__a_b_")


def test_imagefolder_deterministic_and_limit(class_tree: Path) -> None:
    first = open_source(f"imagefolder:{class_tree}")
    second = open_source(f"imagefolder:{class_tree}")
    assert first.items() == second.items()
    limited = open_source(f"imagefolder:{class_tree}", limit=2)
    assert limited.items() == first.items()[:2] and len(limited) == 2
    assert limited.describe()["total"] == 4
    assert len(open_source(f"imagefolder:{class_tree}", limit=0)) == 0


def test_imagefolder_pickle_and_vanished_file(class_tree: Path) -> None:
    source = open_source(f"imagefolder:{class_tree}")
    copy = _roundtrip(source)
    assert copy.items() == source.items() and copy.read(0) == source.read(0)
    (class_tree / "dog" / "b.jpg").unlink()
    with pytest.raises(BadImageError, match="not found"):
        copy.read(3)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p / "missing", "does not exist"),
        (lambda p: (p / "file.txt").write_text("x") and p / "file.txt", "not a directory"),
        (lambda p: (p / "empty").mkdir() or p / "empty", "no image files"),
    ],
)
def test_imagefolder_errors(tmp_path: Path, make: Callable[[Path], Path], message: str) -> None:
    path = make(tmp_path)
    with pytest.raises(CorruptgenError, match=message) as exc:
        open_source(f"imagefolder:{path}")
    assert str(path) in str(exc.value) and "\n" not in str(exc.value)


# ------------------------------------------------------------------------------------------------------------- hf


def test_hf_save_to_disk(hf_disk: Path, hf_photos: list[np.ndarray]) -> None:
    source = open_source(f"hf:{hf_disk}")
    assert source.describe()["split"] == "test" and len(source) == 3
    assert _labels(source) == [0, 1, 2] and source.labelled
    assert [i.label_name for i in source.items()] == ["tabby", "espresso", "missile"]
    assert _check_keys(source) == ["test_00000000", "test_00000001", "test_00000002"]
    assert source.items()[1].source_id == f"hf:{hf_disk.name}:test:1"  # the folder's name: never its path
    arr, info = decode_image(source.read(1))
    np.testing.assert_array_equal(arr, hf_photos[1])
    assert info["format"] == "PNG"

    train = open_source(f"hf:{hf_disk}:train", limit=1)
    assert len(train) == 1 and train.items()[0].key == "train_00000000"
    copy = _roundtrip(source)
    assert "_handle" not in copy.__dict__
    assert copy.items() == source.items() and copy.read(2) == source.read(2)


def test_hf_parquet_dir(hf_parquet: Path, hf_photos: list[np.ndarray]) -> None:
    source = open_source(f"hf:{hf_parquet}")
    assert source.describe()["split"] == "validation"
    assert _labels(source) == [2, 1, 0] and source.items()[0].label_name == "c"
    arr, _ = decode_image(_roundtrip(source).read(2))
    np.testing.assert_array_equal(arr, hf_photos[2])


def test_hf_key_column_paths_and_int_labels(tmp_path: Path, hf_cache: Path, encode: Callable, photo: Callable) -> None:
    import datasets

    files = []
    for name in ("chelsea", "coffee"):
        files.append(tmp_path / f"{name}.jpg")
        files[-1].write_bytes(encode(photo(name, 8), "JPEG"))
    data = {"img": [str(f) for f in files], "target": [5, -1], "__key__": ["a.b/c", "a_b/c"]}
    features = datasets.Features(img=datasets.Image(), target=datasets.Value("int64"), __key__=datasets.Value("string"))
    datasets.Dataset.from_dict(data, features=features).save_to_disk(str(tmp_path / "ds"))
    source = open_source(f"hf:{tmp_path / 'ds'}")
    keys = _check_keys(source)
    assert keys[0].startswith("a_b__c_") and keys[1].startswith("a_b__c_")  # sanitized keys collide -> hashed
    assert _labels(source) == [5, None] and source.labelled
    assert source.read(0) == files[0].read_bytes()


def test_hf_column_errors(tmp_path: Path, hf_disk: Path) -> None:
    import datasets

    with pytest.raises(CorruptgenError, match="image column 'nope' not found; columns: image, label"):
        open_source(f"hf:{hf_disk}", image_column="nope")
    with pytest.raises(CorruptgenError, match="label column 'nope'"):
        open_source(f"hf:{hf_disk}", label_column="nope")
    datasets.Dataset.from_dict({"text": ["a"], "label": [1]}).save_to_disk(str(tmp_path / "text"))
    with pytest.raises(CorruptgenError, match=r"no image column.*text, label"):
        open_source(f"hf:{tmp_path / 'text'}")


def test_hf_split_errors(tmp_path: Path, hf_disk: Path) -> None:
    import datasets

    with pytest.raises(CorruptgenError, match="no split 'nope'; splits: train, test"):
        open_source(f"hf:{hf_disk}:nope")
    one = datasets.Dataset.from_dict({"text": ["a"]})
    datasets.DatasetDict(a=one, b=one).save_to_disk(str(tmp_path / "dd"))
    with pytest.raises(CorruptgenError, match=r"several splits.*a, b"):
        open_source(f"hf:{tmp_path / 'dd'}")
    with pytest.raises(CorruptgenError, match="cannot load dataset"):
        open_source(f"hf:{tmp_path / 'missing'}")


def test_parse_hf_spec(hf_disk: Path) -> None:
    assert _parse_hf_spec(str(hf_disk)) == (str(hf_disk), None)
    assert _parse_hf_spec(f"{hf_disk}:test") == (str(hf_disk), "test")
    assert _parse_hf_spec("user/name") == ("user/name", None)
    assert _parse_hf_spec("user/name:validation") == ("user/name", "validation")
    assert _parse_hf_spec(r"C:\data\set") == (r"C:\data\set", None)
    assert _parse_hf_spec(r"C:\data\set:train") == (r"C:\data\set", "train")


# ----------------------------------------------------------------------------------------------------- webdataset


def test_webdataset_brace_pattern(wds_shards: Path) -> None:
    source = open_source(f"webdataset:{wds_shards}/clean-{{000..001}}.tar")
    items = source.items()
    assert [i.source_id.rsplit(":", 1)[1] for i in items] == ["s0000.jpg", "s0001.jpg", "sub/x-0002.png", "s0000.jpg"]
    assert _labels(source) == [281, 967, 657, None] and source.labelled
    assert items[2].label_name == "missile" and items[0].label_name is None
    keys = _check_keys(source)
    assert keys[1] == "s0001" and keys[2] == "sub__x-0002"
    assert keys[0].startswith("s0000_") and keys[3].startswith("s0000_")  # same key in two shards
    desc = source.describe()
    assert desc["skipped_samples"] == 1 and len(desc["shards"]) == 2
    with tarfile.open(wds_shards / "clean-001.tar") as tar:
        assert source.read(2) == tar.extractfile("sub/x-0002.png").read()
    assert decode_image(source.read(0))[1]["format"] == "JPEG"


def test_webdataset_glob_pickle_limit(wds_shards: Path) -> None:
    braces = open_source(f"webdataset:{wds_shards}/clean-{{000..001}}.tar")
    globbed = open_source(f"webdataset:{wds_shards}/clean-*.tar")
    assert globbed.items() == braces.items()
    braces.read(0)  # opens a handle, which must not be pickled
    copy = _roundtrip(braces)
    assert copy.items() == braces.items()
    assert [copy.read(i) for i in range(4)] == [braces.read(i) for i in range(4)]
    limited = open_source(f"webdataset:{wds_shards}/clean-*.tar", limit=3)
    assert limited.items() == braces.items()[:3] and limited.read(2) == braces.read(2)


def test_webdataset_compressed_shard(wds_shards: Path) -> None:
    plain = wds_shards / "clean-000.tar"
    with tarfile.open(plain) as src, tarfile.open(wds_shards / "packed.tar.gz", "w:gz") as dst:
        for member in src:
            dst.addfile(member, src.extractfile(member))
    packed = open_source(f"webdataset:{wds_shards}/packed.tar.gz")
    assert [packed.read(i) for i in range(2)] == [open_source(f"webdataset:{plain}").read(i) for i in range(2)]


def test_webdataset_errors(wds_shards: Path) -> None:
    with pytest.raises(CorruptgenError, match=r"shard not found.*clean-002\.tar"):
        open_source(f"webdataset:{wds_shards}/clean-{{000..002}}.tar")
    with pytest.raises(CorruptgenError, match="only local tar files are supported"):
        open_source("webdataset:https://example.com/clean-{000..009}.tar")
    with pytest.raises(CorruptgenError, match="only local tar files"):
        open_source("webdataset:pipe:curl -s http://x/a.tar")
    (wds_shards / "bad.tar").write_bytes(b"not a tar" * 100)
    with pytest.raises(CorruptgenError, match="cannot read tar shard"):
        open_source(f"webdataset:{wds_shards}/bad.tar")


def test_webdataset_truncated_member(wds_shards: Path) -> None:
    path = wds_shards / "clean-000.tar"
    source = open_source(f"webdataset:{path}")
    data = path.read_bytes()
    path.write_bytes(data[:1200])  # shard shrank after scanning
    fresh = _roundtrip(source)
    with pytest.raises(BadImageError):
        fresh.read(1)


# --------------------------------------------------------------------------------------------- specs and workers


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("nope:thing", "unknown image source"),
        ("samples:x", "unknown image source"),
        ("imagefolder:", "missing path"),
        ("hf:", "missing dataset"),
        ("webdataset:", "missing shard"),
    ],
)
def test_bad_specs(spec: str, message: str) -> None:
    with pytest.raises(CorruptgenError, match=message) as exc:
        open_source(spec)
    if message == "unknown image source":
        assert "imagefolder:<dir>" in str(exc.value) and "webdataset:" in str(exc.value)


def test_bare_directory_hint(class_tree: Path) -> None:
    with pytest.raises(CorruptgenError, match="did you mean imagefolder:"):
        open_source(str(class_tree))


def test_columns_only_for_hf(class_tree: Path) -> None:
    with pytest.raises(CorruptgenError, match="only applies to hf"):
        open_source(f"imagefolder:{class_tree}", image_column="image")


def test_spawned_workers_read_same_bytes(class_tree: Path, wds_shards: Path) -> None:
    sources = [open_source(f"imagefolder:{class_tree}"), open_source(f"webdataset:{wds_shards}/clean-*.tar")]
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        remote = pool.map(operator.methodcaller("read", 0), sources)
        remote_items = pool.map(operator.methodcaller("items"), sources)
    assert remote == [s.read(0) for s in sources]
    assert remote_items == [s.items() for s in sources]
    Image.open(io.BytesIO(remote[1])).verify()
