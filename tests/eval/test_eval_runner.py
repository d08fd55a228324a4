"""End to end: builds (real ones and hand-written tars) through the runner, the CLI, reports and bad inputs."""

from __future__ import annotations

import json
import os
import shutil
import tarfile

import fsspec
import numpy as np
import pytest
from eval_helpers import PHOTOS, classify_samples, fake_model, noise, sample_meta

import corruptgen
from corruptgen.cli import main
from corruptgen.errors import CorruptgenError
from corruptgen.eval import data as eval_data
from corruptgen.eval import evaluate, load_results
from corruptgen.eval.metrics import MetricOptions, imagenet_p
from corruptgen.eval.metrics.vcr import VCRSettings


@pytest.fixture(scope="module")
def tiny_syn2nat(tmp_path_factory):
    """`corruptgen build syn2nat --limit 3 --subsets solarize` (astronaut unlabelled, chelsea, coffee)."""
    out = tmp_path_factory.mktemp("build")
    corruptgen.build("syn2nat", out=out, subsets="solarize", limit=3)
    return out / "syn2nat"


@pytest.fixture(scope="module")
def default_eval(tiny_syn2nat, tmp_path_factory):
    """The CLI with the default model on the tiny build."""
    out = tmp_path_factory.mktemp("results")
    assert main(["eval", str(tiny_syn2nat), "--out", str(out), "--no-progress"]) == 0
    return out


def test_default_model_on_a_tiny_build(default_eval, tiny_syn2nat):
    r = load_results(default_eval / "results-efficientnet_lite0.json")
    clean = r["metrics"]["subsets"]["clean"]
    assert clean["top1"] > 0 and clean["labelled"] == 2  # coffee is an espresso; the astronaut has no label
    assert clean["consistency"] == 1.0
    assert r["metrics"]["family"] == "syn2nat" and r["metrics"]["syn2nat"]["n_corruptions"] == 1
    manifest = json.loads((tiny_syn2nat / "manifest.json").read_text())
    assert r["data"]["plan_id"] == manifest["plan_id"] and r["data"]["checksums_verified"]
    assert r["data"]["shards"] == {k: v["sha256"] for k, v in manifest["shards"].items()}
    assert r["model"]["mean"] == [0.5, 0.5, 0.5] and r["versions"]["torch"]
    for name in ("report.md", "summary.csv", "top1-syn2nat.csv", "plots/syn2nat-accuracy.png",
                 "predictions-efficientnet_lite0.parquet"):  # fmt: skip
        assert (default_eval / name).exists(), name
    assert (default_eval / "plots/syn2nat-accuracy.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "Syn2Nat score" in (default_eval / "report.md").read_text()


def test_report_recomputes_from_predictions(default_eval, tmp_path, capsys):
    assert main(["report", str(default_eval), "--out", str(tmp_path / "rep"), "--recompute"]) == 0
    original = load_results(default_eval / "results-efficientnet_lite0.json")
    saved_path = default_eval / "results-efficientnet_lite0.recomputed.json"
    assert f"wrote recomputed results {saved_path}" in capsys.readouterr().out
    saved = load_results(saved_path)  # full precision, not only the report's rounded text
    assert saved["recomputed"] and saved["recomputed_from"] == "results-efficientnet_lite0.json"
    assert saved["metrics"]["subsets"] == original["metrics"]["subsets"]
    assert main(["report", str(default_eval), "--out", str(tmp_path / "rep2")]) == 0  # the copy is not read twice
    assert "report for 1 result file:" in capsys.readouterr().out
    from corruptgen.eval.report import collect, recompute

    again = recompute(collect([default_eval])[0], MetricOptions())
    assert again["metrics"]["subsets"] == original["metrics"]["subsets"]
    assert (tmp_path / "rep/report.md").exists()


def _hub_mirror(build, tmp_path, monkeypatch, manifest: bool = False):
    """A local directory laid out like the Hub repo (data/<subset>/*.tar), served in place of HfFileSystem."""
    repo = tmp_path / "hub" / "owner" / "bench"
    shutil.copytree(build / "data", repo / "data")
    if manifest:
        shutil.copy(build / "manifest.json", repo / "manifest.json")
    monkeypatch.setattr(eval_data, "_hub_location", lambda r, rev: (fsspec.filesystem("file"), str(repo), lambda p: p))
    return repo


def test_hub_layout_streaming_and_not_give_the_same_predictions(tiny_syn2nat, tmp_path, monkeypatch):
    import datasets

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf-cache")
    _hub_mirror(tiny_syn2nat, tmp_path, monkeypatch)
    local = evaluate(tiny_syn2nat, [fake_model()], report=False).predictions[0]
    for streaming, workers in ((True, 0), (False, 2)):
        run = evaluate("hf:owner/bench", [fake_model()], streaming=streaming, workers=workers, report=False)
        pred = run.predictions[0]
        assert (pred.top5 == local.top5).all() and pred.key.tolist() == local.key.tolist()
        data = run.results[0]["data"]
        assert data["kind"] == "hub" and len(data["shards"]) == 2 and all(len(v) == 64 for v in data["shards"].values())
        assert run.results[0]["eval"]["streaming"] is streaming


def _no_fork():
    raise AssertionError("eval's DataLoader forked this (multi-threaded) process")


def test_subset_selection_limit_and_workers(make_build, photos):
    subsets = {"clean": classify_samples(photos, "imagenet-c", "clean")}
    for s, sigma in ((1, 0.1), (2, 0.3)):
        subsets[f"gaussian_noise_s{s}"] = classify_samples(
            photos, "imagenet-c", f"gaussian_noise_s{s}", lambda im, i, sg=sigma: noise(im, sg, i),
            corruption="gaussian_noise", severity=s)  # fmt: skip
    build = make_build("imagenet-c", subsets, shard_size=4)  # 2 shards per subset
    a = evaluate(build, [fake_model()], subsets="gaussian_noise_s2", report=False)
    assert a.results[0]["data"]["subsets"] == ["clean", "gaussian_noise_s2"]
    with pytest.MonkeyPatch.context() as mp:  # decoding workers start without forking this threaded process
        mp.setattr(os, "fork", _no_fork)
        b = evaluate(build, [fake_model()], subsets=["gaussian_noise_s2"], workers=2, report=False)
    assert (a.predictions[0].top5 == b.predictions[0].top5).all()
    c = evaluate(build, [fake_model()], limit=2, workers=2, report=False)
    assert c.results[0]["eval"]["images"] == 6 and set(c.predictions[0].key.tolist()) == {"chelsea", "coffee"}
    ic = evaluate(build, [fake_model()], report=False).results[0]["metrics"]["imagenet_c"]
    assert set(ic["corruptions"]) == {"gaussian_noise"} and ic["mce"] is not None and not ic["complete"]


def test_imagenet_p_sequences(make_build, photos, tmp_path):
    def seq(im, i):
        return np.stack([im] + [noise(im, 0.2, 10 * i + t) for t in range(1, 6)])

    subsets = {
        "clean": classify_samples(photos, "imagenet-p", "clean"),
        "gaussian_noise": classify_samples(photos, "imagenet-p", "gaussian_noise", seq, corruption="gaussian_noise",
                                           severity=1, params={"compare": "first", "difficulty": 1}),
        "translate": classify_samples(photos, "imagenet-p", "translate",
                                      lambda im, i: np.stack([np.roll(im, 20 * t, 1) for t in range(6)]),
                                      corruption="translate", severity=2,
                                      params={"compare": "consecutive", "stride": 2, "difficulty": 2}),
    }  # fmt: skip
    build = make_build("imagenet-p", subsets)
    run = evaluate(build, [fake_model()], out=tmp_path / "res", workers=2)
    pred = run.predictions[0]
    assert (pred.frame[pred.subset == "translate"] == np.tile(np.arange(6), 6)).all()
    per = run.results[0]["metrics"]["imagenet_p"]["perturbations"]
    assert per["translate"]["stride"] == 2 and per["gaussian_noise"]["compare"] == "first"
    videos = [pred.top1[(pred.subset == "translate") & (pred.key == k)] for k in dict.fromkeys(pred.key.tolist())]
    assert per["translate"]["flip_probability"] == pytest.approx(imagenet_p.flip_probability(videos, "consecutive", 2))
    assert run.results[0]["metrics"]["subsets"]["translate"]["consistency"] is None
    assert (tmp_path / "res/report.md").read_text().count("mFP") >= 1


def test_vcr_and_human_data(make_build, photos, tmp_path):
    rng = np.random.default_rng(0)
    samples = []
    for i, (name, label) in enumerate(PHOTOS):
        for j in range(8):
            sigma = float(rng.uniform(0, 0.8))
            meta = sample_meta(
                "vcr",
                "gaussian_noise",
                f"{name}_{j:03d}",
                label,
                corruption="gaussian_noise",
                params={"sigma": sigma, "vif": 1 - sigma, "delta_v": sigma, "target_delta_v": None},
            )
            meta["source_key"] = name
            samples.append((f"{name}_{j:03d}", noise(photos[name], sigma, 100 * i + j), meta))
    build = make_build("vcr", {"clean": classify_samples(photos, "vcr", "clean"), "gaussian_noise": samples})
    human = tmp_path / "human.csv"
    human.write_text("vd_score,orig_pred,transf_pred,label\n" + "".join(
        f"{v:.3f},cat,{'cat' if v < 0.6 else 'dog'},cat\n" for v in np.linspace(0, 1, 60)))  # fmt: skip
    from corruptgen.eval.metrics.vcr import load_human_csv

    opts = MetricOptions(humans=load_human_csv(human), vcr=VCRSettings(bins=10, min_per_bin=2))
    run = evaluate(build, [fake_model()], out=tmp_path / "res", options=opts)
    e = run.results[0]["metrics"]["vcr"]["subsets"]["gaussian_noise"]
    assert e["n"] == 48 and e["curve_p"]["grid"][0] == 1.0 and 0 <= e["R_a"] <= 1
    assert e["human"]["human_R_a"] == pytest.approx(0.6, abs=0.05) and e["human"]["hmri_a"] is not None
    assert run.predictions[0].pred16 is not None
    assert (tmp_path / "res/plots/vcr-vcr-gaussian_noise.png").exists()
    assert (tmp_path / "res/plots/vcr-delta-v.png").exists()


def test_opticsbench_delta_and_kendall_report(make_build, photos, tmp_path):
    import cv2

    subsets = {"clean": classify_samples(photos, "opticsbench", "clean")}
    for s, k in ((1, 3), (2, 9)):
        subsets[f"defocus_disk_s{s}"] = classify_samples(photos, "opticsbench", f"defocus_disk_s{s}",
                                                         lambda im, i, k=k: cv2.blur(im, (k, k)),
                                                         corruption="defocus_disk", severity=s)  # fmt: skip
        subsets[f"coma_s{s}"] = classify_samples(photos, "opticsbench", f"coma_s{s}",
                                                 lambda im, i, k=k: cv2.blur(im, (k, 1)), corruption="coma",
                                                 severity=s)  # fmt: skip
    build = make_build("opticsbench", subsets)
    models = [fake_model(name="a"), fake_model(990, name="b"), fake_model(980, name="c")]
    run = evaluate(build, models, out=tmp_path / "res", options=MetricOptions(accuracy=False), labels="match")
    for r in run.results:
        assert set(r["metrics"]["optics"]["delta"]) == {"coma_s1", "coma_s2"}
    assert "Kendall" in (tmp_path / "res/report.md").read_text()
    assert (tmp_path / "res/plots/opticsbench-accuracy-vs-severity.png").exists()


# ---- bad inputs ---------------------------------------------------------------------------------------------------


def test_missing_subset_and_not_a_build(tiny_syn2nat, tmp_path, capsys):
    with pytest.raises(CorruptgenError, match=r"unknown subset 'nope' in .*; it has 2 subsets: clean, solarize$"):
        evaluate(tiny_syn2nat, [fake_model()], subsets="nope")
    assert main(["eval", str(tiny_syn2nat), "--subsets", "nope", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("corruptgen: error: unknown subset") and err.count("\n") == 1
    with pytest.raises(CorruptgenError, match="holds the builds syn2nat: pass one of them"):
        evaluate(tiny_syn2nat.parent, [fake_model()])
    with pytest.raises(CorruptgenError, match=r"the path does not exist \(not a build directory\)"):
        evaluate(str(tmp_path / "no" / "such" / "dir"), [fake_model()])


def test_label_free_data(make_build, photos):
    samples = [(k, im, {**m, "label": None}) for k, im, m in classify_samples(photos, "syn2nat", "clean")]
    build = make_build("syn2nat", {"clean": samples, "solarize": samples}, labelled=False)
    with pytest.raises(CorruptgenError, match=r"no labelled image .* --no-accuracy"):
        evaluate(build, [fake_model()], report=False)
    run = evaluate(build, [fake_model()], report=False, options=MetricOptions(accuracy=False))
    assert run.results[0]["metrics"]["subsets"]["solarize"]["consistency"] == 1.0


def test_mismatched_label_space(tiny_syn2nat):
    with pytest.raises(CorruptgenError, match=r"ImageNet-1k .* model fake predicts 10 unnamed outputs"):
        evaluate(tiny_syn2nat, [fake_model(10)])  # refused up front (more: test_eval_labels.py)
    with pytest.raises(CorruptgenError, match="outside the 10 outputs of model fake: the label spaces do not match"):
        evaluate(tiny_syn2nat, [fake_model(10)], labels="match")  # said to match, but labels exceed the outputs


def test_corrupt_shards(tiny_syn2nat, tmp_path, capsys):
    bad = tmp_path / "bad"
    shutil.copytree(tiny_syn2nat, bad)
    shard = bad / "data/solarize/test-00000.tar"
    shard.write_bytes(shard.read_bytes()[:3000])  # truncated
    with pytest.raises(CorruptgenError, match="does not match its manifest checksum"):
        evaluate(bad, [fake_model()])
    assert main(["eval", str(bad), "--out", str(tmp_path / "o"), "--no-progress"]) == 2
    assert "corrupt or modified shard" in capsys.readouterr().err
    (bad / "manifest.json").unlink()  # no manifest: the broken tar itself must give a clear message
    with pytest.raises(CorruptgenError, match=r"solarize|test-00000"):
        evaluate(bad, [fake_model()], subsets="solarize", clean=False, report=False)


def test_undecodable_image(make_build, photos):
    samples = classify_samples(photos, "syn2nat", "clean", names=["coffee"])
    build = make_build("syn2nat", {"clean": samples}, manifest=False)
    tar = build / "data/clean/test-00000.tar"
    out = tar.with_name("x.tar")
    with tarfile.open(tar) as src, tarfile.open(out, "w") as dst:
        for m in src.getmembers():
            data = src.extractfile(m).read()
            if m.name.endswith(".jpg"):
                data = b"not a jpeg" * 10
            m.size = len(data)
            import io

            dst.addfile(m, io.BytesIO(data))
    out.replace(tar)
    with pytest.raises(CorruptgenError, match="cannot decode image coffee"):
        evaluate(build, [fake_model()], report=False)


def test_analyze_overlap_and_correlation_cli(tmp_path, capsys):
    names = ["a1", "a2", "a3", "b1", "b2", "b3"]
    acc = np.full((7, 7), 0.4)
    acc[:, 0] = 0.8
    for i in range(6):
        for j in range(6):
            same = (i < 3) == (j < 3)
            acc[i + 1, j + 1] = 0.75 if i == j else (0.65 if same else 0.41)
    csv = tmp_path / "acc.csv"
    csv.write_text(
        ",clean,"
        + ",".join(names)
        + "\n"
        + "\n".join(f"{n}," + ",".join(f"{v:.3f}" for v in row) for n, row in zip(["clean", *names], acc, strict=True))
    )
    assert main(["analyze", "overlap", str(csv), "--out", str(tmp_path / "ov"), "--n-init", "10"]) == 0
    cats = json.loads((tmp_path / "ov/categories.json").read_text())
    assert sorted(map(sorted, cats.values())) == [["a1", "a2", "a3"], ["b1", "b2", "b3"]]
    assert (tmp_path / "ov/overlap.png").read_bytes()[:4] == b"\x89PNG"
    syn = tmp_path / "syn.csv"
    syn.write_text("model,clean,a1,b1\nm1,0.8,0.5,0.6\nm2,0.7,0.5,0.6\nm3,0.6,0.3,0.5\nm4,0.9,0.8,0.8\n")
    nat = tmp_path / "nat.csv"
    nat.write_text("model,natA\nm1,0.6\nm2,0.55\nm3,0.45\nm4,0.8\n")
    assert main(["analyze", "correlation", str(syn), str(nat), "--out", str(tmp_path / "c.json")]) == 2
    assert "--unit percent|fraction" in capsys.readouterr().err  # the unit is never guessed
    assert main(["analyze", "correlation", str(syn), str(nat), "--unit", "fraction", "--out",
                 str(tmp_path / "c.json")]) == 0  # fmt: skip
    res = json.loads((tmp_path / "c.json").read_text())
    assert res["units"] == {"synthetic": "fraction", "natural": "fraction"}
    assert len(res["natural"]["natA"]["r"]) == 1 and -1 <= res["natural"]["natA"]["mean_r"] <= 1
    cats = str(tmp_path / "ov/categories.json")  # a1..b3 are not columns of syn.csv
    assert main(["analyze", "correlation", str(syn), str(nat), "--categories", cats, "--n", "2", "--k", "1",
                 "--count", "3", "--unit", "fraction"]) == 2  # fmt: skip
    assert "not in the synthetic table" in capsys.readouterr().err
