"""The adversarial family: transfer sets crafted on a surrogate (a tiny one here, EfficientNet-Lite0 once), stored as
PNG within ε, the surrogate's decisions recorded, bytes independent of batching, threads and workers, bad input
refused in one line before anything is written."""

from __future__ import annotations

import hashlib
import io
import math
import re

import numpy as np
import pytest
import torch
from PIL import Image

import corruptgen
from corruptgen.cli import main
from corruptgen.reader import Build

TINY = "tiny_models:TinySurrogate"  # tests/tiny_models.py: 1000 classes, 16x16 input, fixed weights
ATTACKS = "fgsm_ll:eps=0.04,pgd:eps=0.0025..0.025,mi_fgsm:eps=0.08"


def _images(build: Build, subset: str) -> dict[str, tuple[np.ndarray, dict]]:
    out = {}
    for key, fields in build.iter_samples(subset):
        out[key] = (np.asarray(Image.open(io.BytesIO(fields["png"])).convert("RGB")), build.metadata(fields))
    return out


def _member_hashes(build: Build) -> dict[str, str]:
    return {f"{s}/{k}.{f}": hashlib.sha256(v).hexdigest() for s in build.configs()
            for k, fields in build.iter_samples(s) for f, v in fields.items() if f in ("png", "cls")}  # fmt: skip


@pytest.fixture(scope="module")
def tiny_build(tmp_path_factory):
    out = tmp_path_factory.mktemp("adv")
    corruptgen.build("adversarial", out=out, limit=3, attacks=ATTACKS, surrogate=TINY, size=64, progress=False)
    return Build.open(out / "adversarial")


def test_samples_keep_their_bound_and_record_the_surrogate(tiny_build):
    from corruptgen.families.adversarial.surrogate import load_surrogate

    surrogate = load_surrogate(TINY)
    plan = tiny_build.manifest["plan"]
    assert plan["image_format"] == "png"
    assert plan["family_options"]["surrogate"] == TINY
    assert plan["family_options"]["surrogate_sha256"] == surrogate.sha256
    assert surrogate.sha256 in (tiny_build.root / "README.md").read_text()  # the card names the weights
    clean = _images(tiny_build, "clean")
    for subset in ("fgsm_ll_eps0_04", "pgd_eps0_0025to0_025", "mi_fgsm_eps0_08"):
        samples = _images(tiny_build, subset)
        assert sorted(samples) == sorted(clean) == ["astronaut", "chelsea", "coffee"]
        for key, (image, meta) in samples.items():
            p = meta["params"]
            assert p["attack"] == subset.split("_eps")[0]
            assert p["iterations"] == (1 if p["attack"].startswith("fgsm") else 10)
            diff = np.abs(image.astype(int) - clean[key][0].astype(int)).max()
            assert diff <= 255 * p["eps"] and diff / 255 == pytest.approx(p["linf"])
            if subset.startswith("pgd"):
                assert 0.0025 <= p["eps"] <= 0.025  # drawn per sample from the halved §3.2 range
            label = meta["label"]
            assert p["label_source"] == ("surrogate" if label is None else "source")
            x = torch.from_numpy(np.stack([clean[key][0], image])).permute(0, 3, 1, 2).double() / 255
            before, after = surrogate.classifier.predict(x).tolist()
            assert (p["surrogate_pred_clean"], p["surrogate_pred_adv"]) == (before, after)
            assert p["label"] == (before if label is None else label)
            if "target" in p:
                assert p["target"] != p["label"]
    flips = [m["params"]["surrogate_pred_adv"] != m["params"]["surrogate_pred_clean"]
             for _, m in _images(tiny_build, "mi_fgsm_eps0_08").values()]  # fmt: skip
    assert any(flips)


def test_bytes_do_not_depend_on_batching_threads_or_workers(tiny_build, tmp_path):
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        corruptgen.build("adversarial", out=tmp_path, limit=3, attacks=ATTACKS, surrogate=TINY, size=64,
                         batch_size=1, shard_size=1, workers=2, progress=False)  # fmt: skip
    finally:
        torch.set_num_threads(before)
    assert _member_hashes(Build.open(tmp_path / "adversarial")) == _member_hashes(tiny_build)


@pytest.mark.parametrize(("args", "message"), [
    (["--attacks", "pgdd"], "unknown attack 'pgdd'"),
    (["--attacks", "pgd:eps=0"], "eps must be in \\(0, 1\\)"),
    (["--attacks", "fgsm:eps=1"], "eps must be in \\(0, 1\\)"),
    (["--selection", "iccv"], "unknown --selection"),
    (["--surrogate", "no_such_module_here:net"], "cannot import module"),
    (["--surrogate", "torchscript:/no/such/file.pt"], "no TorchScript file"),
    (["--surrogate", "tiny_models:NoGradSurrogate"], "not differentiable"),
    (["--selection", "iccvw2019", "--subsets", "cw_l2"], "use one of --subsets, --selection"),
])  # fmt: skip
def test_bad_input_is_one_line_exit_2_and_writes_nothing(args, message, tmp_path, capsys):
    out = tmp_path / "out"
    surrogate = [] if "--surrogate" in args else ["--surrogate", TINY]
    code = main(["build", "adversarial", "--limit", "1", "--out", str(out), "--no-progress", *surrogate, *args])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert re.search(message, err), err
    assert not out.exists()


def test_lossy_format_only_when_asked_with_a_warning(capsys):
    plan = corruptgen.make_plan("adversarial", surrogate=TINY, attacks="fgsm:eps=0.04")
    assert plan.image_format == "png" and not capsys.readouterr().err
    plan = corruptgen.make_plan("adversarial", surrogate=TINY, attacks="fgsm:eps=0.04", image_format="jpg")
    err = capsys.readouterr().err.strip()
    assert plan.image_format == "jpg" and len(err.splitlines()) == 1 and "warning" in err


def test_default_surrogate_is_efficientnet_lite0(tmp_path):
    """The offline default model: named with its weights' sha256 in the manifest; FGSM flips its decision."""
    from corruptgen.models import load_model, weights_sha256

    result = corruptgen.build("adversarial", out=tmp_path, limit=1, attacks="fgsm:eps=0.04", progress=False)
    options = result.manifest["plan"]["family_options"]
    assert options["surrogate"] == "efficientnet_lite0"
    assert options["surrogate_sha256"] == weights_sha256(load_model("efficientnet_lite0"))
    ((_, (_, meta)),) = _images(Build.open(tmp_path / "adversarial"), "fgsm_eps0_04").items()
    p = meta["params"]
    assert p["label_source"] == "surrogate" and p["surrogate_pred_adv"] != p["surrogate_pred_clean"]
    assert p["linf"] <= 0.04 and math.floor(255 * 0.04) == round(255 * p["linf"])


def _npy_source(folder, labels) -> str:
    """An ``npy:`` source of random 24×24 images whose labels are unnamed class indices (as CIFAR arrays)."""
    images = np.random.default_rng(0).integers(0, 256, (len(labels), 24, 24, 3), dtype=np.uint8)
    np.save(folder / "images.npy", images)
    np.save(folder / "labels.npy", np.asarray(labels))
    return f"npy:{folder / 'images.npy'}:{folder / 'labels.npy'}"


def _class_folders(folder, names) -> str:
    for i, name in enumerate(names):
        (folder / name).mkdir(parents=True)
        Image.fromarray(np.full((24, 24, 3), 40 * i, dtype=np.uint8)).save(folder / name / "a.png")
    return f"imagefolder:{folder}"


@pytest.mark.parametrize("kind", ["unnamed", "named"])
def test_labels_of_another_space_are_refused_before_anything_is_crafted(tmp_path, capsys, kind):
    """CIFAR-style indices (or cat/dog folders) are not the ImageNet surrogate's classes: attacking away from them
    would be meaningless, so the build refuses in one line, before any output exists."""
    source = _npy_source(tmp_path, [3, 7, 1]) if kind == "unnamed" else _class_folders(tmp_path / "in", ["cat", "dog"])
    out = tmp_path / "out"
    code = main(["build", "adversarial", "--source", source, "--surrogate", TINY, "--attacks", "fgsm:eps=0.04",
                 "--size", "16", "--out", str(out), "--no-progress"])  # fmt: skip
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1, err
    described = "unnamed class indices" if kind == "unnamed" else "classes named by the source"
    assert "label spaces differ" in err and described in err and "--labels match" in err
    assert not out.exists()


def test_labels_match_uses_them_and_ignore_attacks_the_surrogates_decisions(tmp_path):
    labels = [3, 7, 1]
    source = _npy_source(tmp_path, labels)
    found = {}
    for mode in ("match", "ignore"):
        corruptgen.build("adversarial", source=source, out=tmp_path / mode, attacks="fgsm:eps=0.04", surrogate=TINY,
                         size=16, labels=mode, progress=False)  # fmt: skip
        build = Build.open(tmp_path / mode / "adversarial")
        found[mode] = [meta["params"] for _, meta in _images(build, "fgsm_eps0_04").values()]
    assert sorted(p["label"] for p in found["match"]) == sorted(labels)
    assert {p["label_source"] for p in found["match"]} == {"source"}
    assert {p["label_source"] for p in found["ignore"]} == {"surrogate"}
    assert [p["label"] for p in found["ignore"]] == [p["surrogate_pred_clean"] for p in found["ignore"]]


def test_labels_check_is_the_default_plan():
    """``--labels check`` only refuses: its plans (and ids) are those of a build without the option."""
    default = corruptgen.make_plan("adversarial", surrogate=TINY, attacks="fgsm:eps=0.04")
    assert corruptgen.make_plan("adversarial", surrogate=TINY, attacks="fgsm:eps=0.04", labels="check") == default
    ignore = corruptgen.make_plan("adversarial", surrogate=TINY, attacks="fgsm:eps=0.04", labels="ignore")
    assert ignore.plan_id != default.plan_id


def test_a_source_without_any_label_needs_no_check(tmp_path):
    """Labels all -1 (unknown): nothing to compare, every sample is attacked away from the surrogate's decision."""
    source = _npy_source(tmp_path, [-1, -1])
    corruptgen.build("adversarial", source=source, out=tmp_path / "out", attacks="fgsm:eps=0.04", surrogate=TINY,
                     size=16, progress=False)  # fmt: skip
    samples = _images(Build.open(tmp_path / "out" / "adversarial"), "fgsm_eps0_04")
    assert {meta["params"]["label_source"] for _, meta in samples.values()} == {"surrogate"}
