"""ImageNet-C and ImageNet-P families end to end: subset selection, CLI builds, shard layout, loading, determinism."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import numpy as np
import pytest
import webdataset as wds

from corruptgen.api import make_plan
from corruptgen.cli import main
from corruptgen.corruptions import get
from corruptgen.errors import CorruptgenError, UnknownNameError

COMMON = ("gaussian_noise", "shot_noise", "impulse_noise", "defocus_blur", "glass_blur", "motion_blur", "zoom_blur",
          "snow", "frost", "fog", "brightness", "contrast", "elastic_transform", "pixelate",
          "jpeg_compression")  # fmt: skip
EXTRA = ("speckle_noise", "gaussian_blur", "spatter", "saturate")


def names(plan) -> list[str]:
    return [s.name for s in plan.subsets]


def load(root: Path, subset: str):
    import datasets

    files = {"test": sorted(str(p) for p in (root / "data" / subset).glob("*.tar"))}
    return datasets.load_dataset("webdataset", data_files=files, split="test")


# ---------------------------------------------------------------- ImageNet-C


def test_imagenet_c_selection():
    default = make_plan("imagenet-c")
    assert len(default.subsets) == 76 and names(default)[:3] == ["clean", "gaussian_noise_s1", "gaussian_noise_s2"]
    assert default.preprocess.name == "imagenet" and default.quality == 85
    s = default.subset("frost_s4")
    assert (s.corruption, s.severity, s.options, s.category) == ("imagenet_c/frost", 4, (("severity", 4),), 3)
    assert len(make_plan("imagenet-c", extra=True).subsets) == 96
    assert len(make_plan("imagenet-c", subsets="all").subsets) == 96
    plan = make_plan("imagenet-c", subsets="frost,gaussian_noise", severities="1,3", clean=False)
    assert names(plan) == ["gaussian_noise_s1", "gaussian_noise_s3", "frost_s1", "frost_s3"]
    plan = make_plan("imagenet-c", subsets="fog_s2,contrast", severities="2..3", extra=True, clean=False)
    assert names(plan) == ["fog_s2", "contrast_s2", "contrast_s3", *(f"{c}_s{s}" for c in EXTRA for s in (2, 3))]
    assert make_plan("imagenet-c", severities="1..3").plan_id == make_plan("imagenet-c", severities=[3, 2, 1]).plan_id
    assert make_plan("imagenet-c", extra=False).plan_id == default.plan_id
    assert make_plan("imagenet-c", size=112).preprocess.resize_short == 128
    for bad in ("0", "6", "1,x", "3..1", "", "1.5"):
        with pytest.raises(CorruptgenError, match=r"--severities must be integers in 1\.\.5"):
            make_plan("imagenet-c", severities=bad)
    with pytest.raises(CorruptgenError, match="not in --severities"):
        make_plan("imagenet-c", subsets="fog_s2", severities="1")
    with pytest.raises(UnknownNameError, match="did you mean frost"):
        make_plan("imagenet-c", subsets="forst")
    with pytest.raises(CorruptgenError, match="no option --difficulty"):
        make_plan("imagenet-c", difficulty=2)


def test_imagenet_c_corruptions_are_registered():
    from corruptgen.families.imagenet_c import tables

    assert tables.COMMON == COMMON and tables.EXTRA == EXTRA
    for name in COMMON + EXTRA:
        assert get(f"imagenet_c/{name}").family == "imagenet_c"


def test_imagenet_c_build_all_95(tmp_path, capsys, hf_cache):
    assert main(["build", "imagenet-c", "--extra", "--limit", "2", "--out", str(tmp_path)]) == 0
    assert "96 subsets x 2 inputs -> 192 samples" in capsys.readouterr().out
    root = tmp_path / "imagenet-c"
    manifest = json.loads((root / "manifest.json").read_text())
    assert manifest["complete"] and manifest["counts"]["failed_samples"] == 0
    assert sorted(p.name for p in (root / "data").iterdir()) == sorted(
        ["clean", *(f"{c}_s{s}" for c in COMMON + EXTRA for s in range(1, 6))]
    )
    for subset in ("clean", "glass_blur_s5", "spatter_s2", "jpeg_compression_s3"):
        ds = load(root, subset)
        assert len(ds) == 2 and ds[1]["__key__"] == "chelsea" and ds[1]["cls"] == 281
        row = ds[0]
        assert row["jpg"].size == (224, 224) and row["json"]["subset"] == subset
        assert row["json"]["severity"] == (None if subset == "clean" else int(subset[-1]))
        assert row["json"]["preprocessing"]["name"] == "imagenet"


def test_imagenet_c_severities_and_errors(tmp_path, capsys):
    args = ["build", "imagenet-c", "--severities", "1,3", "--subsets", "gaussian_noise,frost", "--limit", "1"]
    assert main([*args, "--out", str(tmp_path)]) == 0
    data = tmp_path / "imagenet-c/data"
    assert sorted(p.name for p in data.iterdir()) == ["clean", "frost_s1", "frost_s3", "gaussian_noise_s1",
                                                      "gaussian_noise_s3"]  # fmt: skip
    capsys.readouterr()
    for bad, message in ((["--severities", "0,6"], "--severities must be integers in 1..5"),
                         (["--subsets", "gausian_noise"], "did you mean gaussian_noise"),
                         (["--subsets", "frost_s9"], "severity of 'frost_s9' must be in 1..5")):  # fmt: skip
        assert main(["build", "imagenet-c", *bad, "--out", str(tmp_path / "x")]) == 2
        err = capsys.readouterr().err
        assert err.startswith("corruptgen: error: ") and err.count("\n") == 1 and message in err


# ---------------------------------------------------------------- ImageNet-P


def test_imagenet_p_selection():
    default = make_plan("imagenet-p")
    assert names(default) == ["clean", "gaussian_noise", "shot_noise", "motion_blur", "zoom_blur", "snow",
                              "brightness", "translate", "rotate", "tilt", "scale"]  # fmt: skip
    assert default.preprocess.name == "imagenet_resize" and default.preprocess.crop is None
    assert default.subset("clean").corruption == "imagenet_p/clean"
    assert all(dict(s.options)["crop"] == 224 for s in default.subsets)
    assert len(make_plan("imagenet-p", subsets="all").subsets) == 15
    plan = make_plan("imagenet-p", subsets="rotate,gaussian_noise", difficulty=2, clean=False)
    assert names(plan) == ["gaussian_noise_d2", "rotate_d2"]
    assert plan.subsets[1].severity == 2 and dict(plan.subsets[1].options) == {"difficulty": 2, "crop": 224}
    assert names(make_plan("imagenet-p", subsets="shear_d3,rotate", clean=False)) == ["rotate", "shear_d3"]
    assert make_plan("imagenet-p", difficulty=1).plan_id == default.plan_id
    small = make_plan("imagenet-p", size=112)
    assert small.preprocess.resize_short == 128 and dict(small.subset("rotate").options)["crop"] == 112
    for kwargs, message in (({"difficulty": 4}, "--difficulty must be 1, 2 or 3"),
                            ({"subsets": "rotate_d2", "difficulty": 3}, "has difficulty 2"),
                            ({"subsets": "rotat"}, "did you mean rotate"),
                            ({"preprocess": "imagenet"}, "without a crop"),
                            ({"severities": "1"}, "no option --severities")):  # fmt: skip
        with pytest.raises(CorruptgenError, match=message):
            make_plan("imagenet-p", **kwargs)


def test_imagenet_p_build_sequences(tmp_path, capsys, hf_cache):
    args = ["build", "imagenet-p", "--subsets", "rotate,gaussian_noise", "--limit", "2", "--out", str(tmp_path)]
    assert main(args) == 0
    assert "3 subsets x 2 inputs -> 6 samples" in capsys.readouterr().out
    root = tmp_path / "imagenet-p"
    with tarfile.open(root / "data/rotate/test-00000.tar") as tar:
        members = tar.getnames()
        meta = json.loads(tar.extractfile("chelsea.json").read())
        first_noise = None
    assert members[:3] == ["astronaut.000.jpg", "astronaut.001.jpg", "astronaut.002.jpg"]
    assert "astronaut.030.jpg" in members and "astronaut.031.jpg" not in members and "chelsea.json" in members
    assert meta["frames"] == 31 and meta["params"]["stride"] == 1 and meta["corruption"] == "rotate"
    assert meta["preprocessing"]["name"] == "imagenet_resize"
    with tarfile.open(root / "data/gaussian_noise/test-00000.tar") as tar:
        first_noise = tar.extractfile("chelsea.000.jpg").read()
    with tarfile.open(root / "data/clean/test-00000.tar") as tar:
        assert tar.extractfile("chelsea.jpg").read() == first_noise  # frame 0 is the clean crop, byte for byte

    sample = next(iter(wds.WebDataset(str(root / "data/rotate/test-00000.tar"), shardshuffle=False).decode("rgb8")))
    frames = np.stack([sample[f"{t:03d}.jpg"] for t in range(sample["json"]["frames"])])
    assert frames.shape == (31, 224, 224, 3) and frames.dtype == np.uint8

    ds = load(root, "gaussian_noise")  # datasets: one Image column per frame ("000.jpg" ... "030.jpg")
    assert len(ds) == 2 and [c for c in ds.column_names if c.endswith(".jpg")] == [f"{t:03d}.jpg" for t in range(31)]
    row = ds[1]
    assert row["json"]["frames"] == 31 and row["000.jpg"].size == (224, 224) and row["cls"] == 281


def test_imagenet_p_size_and_workers_determinism(tmp_path):
    import corruptgen

    kw = dict(subsets="translate,shot_noise", limit=2, shard_size=1, size=64)
    corruptgen.build("imagenet-p", out=tmp_path / "a", workers=1, **kw)
    corruptgen.build("imagenet-p", out=tmp_path / "b", workers=2, **kw)
    a = {p.relative_to(tmp_path / "a").as_posix(): p.read_bytes() for p in sorted((tmp_path / "a").rglob("*.tar"))}
    b = {p.relative_to(tmp_path / "b").as_posix(): p.read_bytes() for p in sorted((tmp_path / "b").rglob("*.tar"))}
    assert len(a) == 3 * 2 and a == b
    sample = next(iter(wds.WebDataset(str(tmp_path / "a/imagenet-p/data/translate/test-00001.tar"),
                                      shardshuffle=False).decode("rgb8")))  # fmt: skip
    assert sample["json"]["frames"] == 41 and sample["040.jpg"].shape == (64, 64, 3)


def test_list_json(capsys):
    assert main(["list", "imagenet-p", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert len(rows) == 14 and rows["translate"]["default"] and not rows["shear"]["default"]
    assert main(["list", "imagenet-c", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert len(rows) == 95 and rows["glass_blur_s5"]["default"] and not rows["saturate_s1"]["default"]
