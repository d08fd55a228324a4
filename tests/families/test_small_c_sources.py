"""Sources for the CIFAR-10/100-C and Tiny-ImageNet-C families: ``npy:<images>[:<labels>]`` arrays and ``hf:``
datasets with 32×32 images (CIFAR's ``img``/``label`` and ``img``/``fine_label`` columns)."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from small_images import photos

import corruptgen
from corruptgen.engine.reader import Build
from corruptgen.errors import CorruptgenError
from corruptgen.io.sources import open_source


@pytest.fixture(scope="module")
def arrays(tmp_path_factory) -> tuple[Path, Path, np.ndarray]:
    root = tmp_path_factory.mktemp("npy")
    images = photos(32)
    np.save(root / "x.npy", images)
    np.save(root / "y.npy", np.array([3, 7, 0, 9], dtype=np.int64))
    return root / "x.npy", root / "y.npy", images


def test_npy_items_labels_and_pixels(arrays) -> None:
    images_path, labels_path, images = arrays
    source = open_source(f"npy:{images_path}:{labels_path}")
    assert [i.key for i in source.items()] == ["00000000", "00000001", "00000002", "00000003"]
    assert [i.label for i in source.items()] == [3, 7, 0, 9] and source.labelled
    for i in range(4):  # lossless: the engine decodes exactly the stored pixels
        assert np.array_equal(np.asarray(Image.open(io.BytesIO(source.read(i)))), images[i])
    assert source.describe()["shape"] == [4, 32, 32, 3]
    unlabelled = open_source(f"npy:{images_path}", limit=2)
    assert len(unlabelled) == 2 and not unlabelled.labelled and unlabelled.items()[0].label is None


def test_npy_is_memory_mapped(arrays) -> None:
    source = open_source(f"npy:{arrays[0]}")
    assert isinstance(source._images(), np.memmap)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda d: np.save(d / "a.npy", np.zeros((2, 32, 32), np.uint8)), "N×H×W×3"),
        (lambda d: np.save(d / "a.npy", np.zeros((2, 32, 32, 3), np.float32)), "dtype float32"),
        (lambda d: np.save(d / "a.npy", np.zeros((2, 32, 32, 4), np.uint8)), "N×H×W×3"),
        (lambda d: (d / "a.npy").write_text("not an array"), "not a .npy file"),
        (lambda d: np.save(d / "a.npy", np.array([{"x": 1}], dtype=object)), "cannot read images"),
    ],
)
def test_npy_bad_arrays_fail_in_one_line(tmp_path: Path, make, message: str) -> None:
    make(tmp_path)
    with pytest.raises(CorruptgenError, match=message):
        open_source(f"npy:{tmp_path / 'a.npy'}")


def test_npy_bad_labels(tmp_path: Path, arrays) -> None:
    np.save(tmp_path / "short.npy", np.arange(3))
    np.save(tmp_path / "float.npy", np.zeros(4))
    for bad in ("short.npy", "float.npy"):
        with pytest.raises(CorruptgenError, match="must be 4 integers"):
            open_source(f"npy:{arrays[0]}:{tmp_path / bad}")
    with pytest.raises(CorruptgenError, match="no such labels file"):
        open_source(f"npy:{arrays[0]}:{tmp_path / 'missing.npy'}")
    with pytest.raises(CorruptgenError, match="no such images file"):
        open_source(f"npy:{tmp_path / 'missing.npy'}")


def test_npy_cli_error_is_one_line_exit_2(tmp_path: Path) -> None:
    np.save(tmp_path / "gray.npy", np.zeros((2, 32, 32), np.uint8))
    run = subprocess.run([sys.executable, "-m", "corruptgen", "build", "cifar10-c", "--source",
                          f"npy:{tmp_path / 'gray.npy'}", "--out", str(tmp_path / "out")],
                         capture_output=True, text=True)  # fmt: skip
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert run.stderr.strip().count("\n") == 0 and "N×H×W×3" in run.stderr


def test_npy_build_keeps_32px_inputs_unresized(arrays, tmp_path: Path) -> None:
    out = corruptgen.build("cifar10-c", source=f"npy:{arrays[0]}:{arrays[1]}", subsets="contrast_s1",
                           image_format="png", out=tmp_path).out_dir  # fmt: skip
    build = Build.open(out)
    clean = [np.asarray(Image.open(io.BytesIO(f["png"]))) for _, f in build.iter_samples("clean")]
    assert np.array_equal(np.stack(clean), arrays[2])
    assert [build.metadata(f)["label"] for _, f in build.iter_samples("contrast_s1")] == [3, 7, 0, 9]


@pytest.mark.parametrize("label_column", ["label", "fine_label"])
def test_hf_cifar_columns_are_detected(tmp_path: Path, label_column: str) -> None:
    datasets = pytest.importorskip("datasets")
    images = photos(32)
    columns = {"img": datasets.Image(), label_column: datasets.ClassLabel(names=[f"c{i}" for i in range(10)])}
    data = {"img": [Image.fromarray(a) for a in images], label_column: [1, 2, 3, 4]}
    if label_column == "fine_label":  # CIFAR-100: fine labels first, then the 20 coarse ones
        columns["coarse_label"] = datasets.ClassLabel(names=[f"k{i}" for i in range(20)])
        data["coarse_label"] = [0, 0, 5, 5]
    ds = datasets.Dataset.from_dict(data, features=datasets.Features(columns))
    datasets.DatasetDict(test=ds).save_to_disk(str(tmp_path / "ds"))
    source = open_source(f"hf:{tmp_path / 'ds'}")
    assert (source.image_column, source.label_column) == ("img", label_column)
    assert [i.label for i in source.items()] == [1, 2, 3, 4]
    out = corruptgen.build("cifar100-c", source=f"hf:{tmp_path / 'ds'}", subsets="fog_s2", image_format="png",
                           out=tmp_path / "out").out_dir  # fmt: skip
    clean = [np.asarray(Image.open(io.BytesIO(f["png"]))) for _, f in Build.open(out).iter_samples("clean")]
    assert np.array_equal(np.stack(clean), images)  # 32×32 in, 32×32 out, no resize


def test_other_sizes_follow_the_reference_resize(tmp_path: Path) -> None:
    np.save(tmp_path / "big.npy", photos(48))
    out = corruptgen.build("tinyimagenet-c", source=f"npy:{tmp_path / 'big.npy'}", subsets="contrast_s1",
                           image_format="png", out=tmp_path).out_dir  # fmt: skip
    clean = [np.asarray(Image.open(io.BytesIO(f["png"]))) for _, f in Build.open(out).iter_samples("clean")]
    expected = [np.asarray(Image.fromarray(a).resize((64, 64), Image.Resampling.BILINEAR)) for a in photos(48)]
    assert np.array_equal(np.stack(clean), np.stack(expected))


def test_family_default_format() -> None:
    """CIFAR builds store PNG by default (lossless, like the released arrays); --format still wins; other families
    keep JPEG."""
    from corruptgen.api import make_plan
    from corruptgen.family.benchmark import get_benchmark

    assert make_plan("cifar10-c", image_format=None).image_format == "png"
    assert get_benchmark("cifar100-c").plan().image_format == "png"
    assert make_plan("cifar10-c", image_format="jpg").image_format == "jpg"
    assert make_plan("tinyimagenet-c").image_format == "jpg" and make_plan("imagenet-c").image_format == "jpg"
