"""The VCR family end to end: plans and options, a CLI build that loads with ``datasets``, Δv on every stored sample,
determinism across workers, and ``corruptgen coverage`` on a VCR and an ImageNet-C build."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from corruptgen.api import make_plan
from corruptgen.cli import main
from corruptgen.errors import CorruptgenError, UnknownNameError
from corruptgen.quality import vif
from corruptgen.quality.coverage import bin_counts, coverage, scan

NAMES = ("shot_noise", "impulse_noise", "gaussian_noise", "glass_blur", "gaussian_blur", "defocus_blur",
         "motion_blur", "brightness", "frost", "blur", "median_blur", "hue_saturation_value", "color_jitter",
         "uniform_noise")  # fmt: skip


def read_shard(path: Path) -> dict[str, dict[str, bytes]]:
    out: dict[str, dict[str, bytes]] = {}
    with tarfile.open(path) as tar:
        for m in tar.getmembers():
            key, _, ext = m.name.partition(".")
            out.setdefault(key, {})[ext] = tar.extractfile(m).read()
    return out


def decode(data: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))


def test_vcr_plans():
    plan = make_plan("vcr")
    assert [s.name for s in plan.subsets] == ["clean", *NAMES]
    assert plan.preprocess.name == "imagenet" and plan.subset("clean").options == ()
    frost = plan.subset("frost")
    assert (frost.corruption, frost.category, frost.per_input) == ("vcr/frost", 3, 1)
    assert dict(frost.options) == {"delta_v": "uniform", "search": 2, "search_group": 4, "image_format": "jpg",
                                   "quality": 85}  # fmt: skip
    plan = make_plan("vcr", subsets="frost,blur", per_image=4, delta_v="param", image_format="png", clean=False)
    assert [s.name for s in plan.subsets] == ["frost", "blur"] and all(s.per_input == 4 for s in plan.subsets)
    assert dict(plan.subset("blur").options) == {"delta_v": "param", "image_format": "png", "quality": 85}
    assert plan.subset("blur").sample_keys("x") == ["x_000", "x_001", "x_002", "x_003"]
    assert make_plan("vcr", per_image=1, delta_v="Uniform").plan_id == make_plan("vcr").plan_id
    assert make_plan("vcr", search_group=4).plan_id == make_plan("vcr").plan_id
    assert dict(make_plan("vcr", search_group=3).subset("frost").options)["search_group"] == 3
    assert make_plan("vcr", search_group=3).plan_id != make_plan("vcr").plan_id
    assert make_plan("vcr", quality=90).subset("brightness").options[-1] == ("quality", 90)
    assert len(make_plan("vcr", subsets="all", clean=False).subsets) == 14
    for kwargs, error, message in (
        ({"per_image": 0}, CorruptgenError, "--per-image must be a positive integer"),
        ({"delta_v": "log"}, CorruptgenError, "--delta-v must be one of uniform, param"),
        ({"search_group": 0}, CorruptgenError, "--search-group must be an integer in 1..1024"),
        ({"subsets": "forst"}, UnknownNameError, "did you mean frost"),
        ({"severities": "1"}, CorruptgenError, "no option --severities"),
    ):
        with pytest.raises(error, match=message):
            make_plan("vcr", **kwargs)


def test_vcr_build_loads_and_stores_delta_v(tmp_path, capsys, hf_cache):
    import datasets

    assert main(["build", "vcr", "--limit", "2", "--per-image", "2", "--out", str(tmp_path)]) == 0
    assert "15 subsets x 2 inputs -> 58 samples" in capsys.readouterr().out
    root = tmp_path / "vcr"
    manifest = json.loads((root / "manifest.json").read_text())
    assert manifest["complete"] and manifest["counts"]["failed_samples"] == 0
    assert sorted(p.name for p in (root / "data").iterdir()) == sorted(["clean", *NAMES])
    clean = read_shard(root / "data/clean/test-00000.tar")
    assert sorted(clean) == ["astronaut", "chelsea"]
    for name in NAMES:
        files = {"test": [str(p) for p in sorted((root / "data" / name).glob("*.tar"))]}
        ds = datasets.load_dataset("webdataset", data_files=files, split="test")
        assert len(ds) == 4 and ds[0]["jpg"].size == (224, 224) and ds[3]["__key__"] == "chelsea_001"
        samples = read_shard(root / "data" / name / "test-00000.tar")
        strata: dict[str, list[int]] = {}
        for key, fields in samples.items():
            meta = json.loads(fields["json"])
            p = meta["params"]
            assert meta["source_key"] == key[:-4] and meta["repeat"] == int(key[-3:])
            position, count = p["stratum"]  # the repeats of one input split the target quantile into strata
            assert count == 2 and position / 2 <= p["target_delta_v"] < (position + 1) / 2
            strata.setdefault(meta["source_key"], []).append(position)
            assert p["delta_v_mode"] == "uniform" and p["stored_as"] == "jpg q85"
            assert 0.0 <= p["delta_v"] <= 1.0 and p["delta_v"] == pytest.approx(max(0.0, 1.0 - p["vif"]))
            assert 0.0 <= p["target_delta_v"] <= 1.0 and 0.0 <= p["strength"] <= 1.0
            if key == "chelsea_001":  # Δv is that of the stored pair, decoded from the shards
                measured = vif(decode(clean["chelsea"]["jpg"]), decode(fields["jpg"]))
                assert p["vif"] == pytest.approx(measured, abs=1e-10)  # stored to 10 decimals
        assert {k: sorted(v) for k, v in strata.items()} == {"astronaut": [0, 1], "chelsea": [0, 1]}


def test_vcr_workers_do_not_change_bytes(tmp_path):
    import corruptgen

    kw = dict(subsets="shot_noise,glass_blur,color_jitter", limit=2, per_image=2, shard_size=1, size=96)
    corruptgen.build("vcr", out=tmp_path / "a", workers=1, **kw)
    corruptgen.build("vcr", out=tmp_path / "b", workers=2, **kw)
    a = {p.relative_to(tmp_path / "a").as_posix(): p.read_bytes() for p in sorted((tmp_path / "a").rglob("*.tar"))}
    b = {p.relative_to(tmp_path / "b").as_posix(): p.read_bytes() for p in sorted((tmp_path / "b").rglob("*.tar"))}
    assert len(a) == 4 * 2 and a == b


def test_vcr_search_groups_do_not_depend_on_chunks_or_batches(tmp_path):
    """Δv searches run in groups of ``search_group`` consecutive samples fixed by the plan: one chunk, chunks that
    cut the groups (members loaded from the neighbouring chunk) and any --batch-size give the same bytes."""
    import corruptgen

    kw = dict(subsets="brightness", limit=3, per_image=3, size=96, search_group=4, clean=False)
    corruptgen.build("vcr", out=tmp_path / "a", shard_size=3, **kw)
    corruptgen.build("vcr", out=tmp_path / "b", shard_size=1, batch_size=1, **kw)
    a, b = ({k: v for shard in sorted((tmp_path / d).rglob("*.tar")) for k, v in read_shard(shard).items()}
            for d in "ab")  # fmt: skip
    assert len(a) == 9 and a == b
    searched = [json.loads(sample["json"])["params"] for sample in a.values()]
    assert all(abs(p["delta_v"] - p["target_delta_v"]) <= 0.02 for p in searched if p["target_delta_v"] < 0.9)


def test_vcr_cli_errors(tmp_path, capsys):
    for bad, message in ((["--delta-v", "log"], "--delta-v must be one of uniform, param"),
                         (["--subsets", "gausian_noise"], "did you mean gaussian_noise"),
                         (["--difficulty", "2"], "vcr takes no option --difficulty")):  # fmt: skip
        assert main(["build", "vcr", *bad, "--limit", "1", "--out", str(tmp_path)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("corruptgen: error: ") and err.count("\n") == 1 and message in err
    assert main(["coverage", str(tmp_path / "nowhere")]) == 2
    assert "no build directory" in capsys.readouterr().err


def test_coverage_counts():
    values = np.concatenate([np.linspace(0, 1, 800, endpoint=False), [1.0, 1.0, np.nan]])
    counts = bin_counts(values)
    assert counts.sum() == 802 and counts[-1] == 22 and (counts[:-1] == 20).all()
    assert coverage(values) == 1.0 and coverage(values[:400]) == 0.5 and coverage([]) == 0.0


def test_coverage_command_on_vcr_and_imagenet_c_builds(tmp_path, capsys):
    import corruptgen

    corruptgen.build("vcr", out=tmp_path, subsets="frost,median_blur", limit=2, per_image=3, size=96)
    corruptgen.build("imagenet-c", out=tmp_path, subsets="frost", severities="1,5", limit=2, size=96)
    capsys.readouterr()

    out_json = tmp_path / "cov.json"
    assert main(["coverage", str(tmp_path / "vcr"), "--json", str(out_json)]) == 0
    text = capsys.readouterr().out
    header = text.splitlines()[0].split()
    assert header[:3] == ["subset", "/", "corruption"] and "N" in header
    assert "frost" in text and "median_blur" in text and "stored" in text and "covered with ≥ 20 images" in text
    assert (tmp_path / "vcr/delta_v_coverage.png").stat().st_size > 1000
    rows = {r["subset"]: r for r in json.loads(out_json.read_text())}
    assert set(rows) == {"frost", "median_blur"} and rows["frost"]["n"] == 6 and sum(rows["frost"]["counts"]) == 6
    assert rows["frost"]["coverage"] == 0.0 and rows["frost"]["delta_v_source"] == "stored"

    png = tmp_path / "inc.png"
    assert main(["coverage", str(tmp_path / "imagenet-c"), "--plot", str(png), "--bins", "10", "--min-count", "1"]) == 0
    text = capsys.readouterr().out
    assert "frost_s1" in text and "frost_s5" in text and "computed" in text and png.stat().st_size > 1000
    rows = scan(tmp_path / "imagenet-c", subsets=["frost_s5"])
    assert rows[0].source == "computed" and rows[0].n == 2
    root = tmp_path / "imagenet-c/data"
    clean, corrupted = read_shard(root / "clean/test-00000.tar"), read_shard(root / "frost_s5/test-00000.tar")
    expected = 1.0 - vif(decode(clean["astronaut"]["jpg"]), decode(corrupted["astronaut"]["jpg"]))
    assert rows[0].values[0] == pytest.approx(expected, abs=1e-12)
    pooled = scan(tmp_path / "imagenet-c", by="corruption")  # the 2 severities of frost in one row, as Tab. 2
    assert [(r.name, r.n, r.source) for r in pooled] == [("frost", 4, "computed")]
    with pytest.raises(CorruptgenError, match="no subset 'fog_s1'"):
        scan(tmp_path / "imagenet-c", subsets=["fog_s1"])
