"""White-box attacks in eval (``--attacks``): each attack is a subset of the results with its accuracy, APP and
residual robustness, its rows are the model's decisions on exactly the adversarial images, Table 3.4c is in the
report, and bad input fails in one line before anything is written."""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pytest
import torch
from eval_helpers import classify_samples, fake_model, photo, sample_meta

from corruptgen.attacks import Classifier, craft, parse_attacks
from corruptgen.cli import main
from corruptgen.eval import evaluate
from corruptgen.eval.data import decode_image
from corruptgen.eval.predictions import Predictions
from corruptgen.io.codec import encode_image

ATTACKS = "pgd:eps=0.04,fgsm_ll:eps=0.02,cw_l2:steps=5"


@pytest.fixture(scope="module")
def small_photos():
    return {name: photo(name, 32) for name in ("chelsea", "coffee", "rocket", "astronaut")}


def _as_read(image: np.ndarray) -> np.ndarray:
    """The image as the evaluation reads it back from a test build (JPEG quality 90)."""
    return decode_image(encode_image(image, "jpg", 90), "test")


@pytest.fixture
def model():
    return replace(fake_model(), input_size=32)  # differentiable: logits from the input's mean and spread


def test_attacks_are_subsets_with_app_and_rr(make_build, small_photos, model, tmp_path):
    names = sorted(small_photos)
    x = torch.from_numpy(np.stack([_as_read(small_photos[n]) for n in names]))
    classifier = Classifier(model.to("cpu"))
    x01 = x.permute(0, 3, 1, 2).float() / 255
    decided = classifier(x01).argmax(1)
    labels = [int(c) for c in decided[:3]] + [None]  # the model is right on three labelled photos; one unlabelled

    def samples(subset, fn=lambda im: im):
        return [(n, fn(small_photos[n]), sample_meta("syn2nat", subset, n, label))
                for n, label in zip(names, labels, strict=True)]  # fmt: skip

    build = make_build("syn2nat", {"clean": samples("clean"), "solarize": samples("solarize", lambda im: 255 - im)})
    run = evaluate(build, [model], attacks=ATTACKS, out=tmp_path / "res")
    result = run.results[0]
    rows = result["metrics"]["subsets"]
    white = ["whitebox_pgd_eps0_04", "whitebox_fgsm_ll_eps0_02", "whitebox_cw_l2_steps5"]
    assert list(rows) == ["clean", "solarize", *white]
    assert rows["clean"]["top1"] == 1.0
    for name in white:
        row = rows[name]
        assert row["corruption"].startswith("whitebox/") and row["samples"] == 4 and row["labelled"] == 3
        assert row["app"] == pytest.approx(row["top1"]) and row["residual_robustness"] == pytest.approx(1 - row["top1"])
    assert rows["whitebox_pgd_eps0_04"]["top1"] < 1.0
    assert result["metrics"]["summary"]["corrupted_subsets"] == 1  # attacks are rows of their own
    assert result["eval"]["attacks"] == ["pgd:eps=0.04", "fgsm_ll:eps=0.02", "cw_l2:c=50:kappa=0:steps=5:lr=0.01"]
    # the recorded decisions are the model's on the attacked clean images (unlabelled: its own decision attacked)
    pred = Predictions.from_parquet(tmp_path / "res" / result["predictions"])
    (pgd,) = parse_attacks("pgd:eps=0.04")
    expected = classifier(craft(pgd, classifier, x01, decided).images).argmax(1).tolist()
    rows_pgd = pred.mask("whitebox_pgd_eps0_04")
    got = dict(zip(pred.key[rows_pgd].tolist(), pred.top1[rows_pgd].tolist(), strict=True))
    assert [got[n] for n in names] == expected
    report = (tmp_path / "res" / "report.md").read_text()
    assert "Table 3.4c" in report and "| pgd ε=0.04 | fgsm_ll ε=0.02 (white-box) | cw_l2 steps5 (white-box) |" in report


@pytest.mark.parametrize(("args", "message"), [
    (["--attacks", "pgdd"], "unknown attack 'pgdd'"),
    (["--attacks", "pgd:eps=0"], "eps must be in \\(0, 1\\)"),
    (["--attacks", "fgsm:eps=1.5"], "eps must be in \\(0, 1\\)"),
    (["--attacks", "pgd:eps=0.04", "--no-clean"], "which --no-clean leaves out: evaluate without --no-clean$"),
])  # fmt: skip
def test_bad_input_is_one_line_exit_2_and_writes_nothing(args, message, make_build, small_photos, tmp_path, capsys):
    build = make_build("syn2nat", {subset: classify_samples(small_photos, "syn2nat", subset, names=["coffee"])
                                   for subset in ("clean", "solarize")})  # fmt: skip
    out = tmp_path / "res"
    fake = ["--model", "fake=eval_helpers:fake_model"]
    code = main(["eval", str(build), "--out", str(out), "--no-progress", *fake, *args])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and re.search(message, err), err
    assert not out.exists()


def test_a_build_without_clean_is_refused(make_build, small_photos, tmp_path, capsys):
    build = make_build("syn2nat", {"solarize": classify_samples(small_photos, "syn2nat", "solarize", names=["coffee"])})
    code = main(["eval", str(build), "--out", str(tmp_path / "res"), "--attacks", "pgd:eps=0.04"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "has none (it was built with --no-clean)" in err and len(err.splitlines()) == 1
    assert "evaluate without" not in err, err  # this eval passed no --no-clean: the hint names only the build's
    assert not (tmp_path / "res").exists()


def test_a_selection_name_is_its_white_box_attacks(make_build, small_photos, model):
    """``--attacks eccvw2020`` is §3.3.3.1's white-box list (PGD and PGD_LL at ε = 0.04, CW_2 with c = 50, κ = 0 and 40
    iterations), printed as Table 3.4c's white-box columns."""
    build = make_build("syn2nat", {"clean": classify_samples(small_photos, "syn2nat", "clean", names=["coffee"])})
    result = evaluate(build, [model], attacks="eccvw2020", report=False, predictions=False).results[0]
    assert result["eval"]["attacks"] == ["pgd:eps=0.04", "pgd_ll:eps=0.04", "cw_l2:c=50:kappa=0:steps=40:lr=0.01"]
    assert list(result["metrics"]["subsets"]) == ["clean", "whitebox_pgd_eps0_04", "whitebox_pgd_ll_eps0_04",
                                                  "whitebox_cw_l2"]  # fmt: skip


def test_whitebox_on_the_default_model(make_build, tmp_path):
    """EfficientNet-Lite0 on two photos it classifies right: three PGD steps (ε = 0.04) take both away."""
    photos = {name: photo(name) for name in ("chelsea", "coffee")}
    build = make_build("syn2nat", {"clean": classify_samples(photos, "syn2nat", "clean", names=list(photos))})
    before = torch.get_num_threads()
    torch.set_num_threads(1)  # one thread: several only contend on a loaded machine
    try:
        result = evaluate(build, attacks="pgd:eps=0.04,steps=3", report=False, predictions=False).results[0]
    finally:
        torch.set_num_threads(before)
    rows = result["metrics"]["subsets"]
    assert rows["clean"]["top1"] == 1.0
    assert rows["whitebox_pgd_eps0_04_steps3"]["top1"] == 0.0 and rows["whitebox_pgd_eps0_04_steps3"]["app"] == 0.0
