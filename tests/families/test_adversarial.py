"""The adversarial family: transfer sets crafted on a surrogate (a tiny one here, EfficientNet-Lite0 once), stored as
PNG within ε (every change the attack made kept) or as float32 arrays, the surrogate's decisions on the stored images
recorded, an image stored identical to its clean twin explained, bytes independent of batching, threads and workers,
bad input refused in one line before anything is written."""

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
from corruptgen.engine.reader import Build

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
            diff = np.abs(image.astype(int) - clean[key][0].astype(int))
            assert diff.max() <= 255 * p["eps"] and diff.max() / 255 == pytest.approx(p["linf_stored"])
            assert np.sqrt(np.square(diff / 255).sum()) == pytest.approx(p["l2_stored"])
            assert p["linf"] == pytest.approx(p["eps"]) and p["stored_unchanged"] == (diff.max() == 0)
            assert (p["unchanged_reason"] is None) == (diff.max() > 0)
            if subset.startswith("pgd"):
                assert 0.0025 <= p["eps"] <= 0.025  # drawn per sample from the halved §3.2 range
            label = meta["label"]
            assert p["label_source"] == ("surrogate" if label is None else "source")
            x = torch.from_numpy(np.stack([clean[key][0], image])).permute(0, 3, 1, 2).double() / 255
            before, after = surrogate.classifier.predict(x).tolist()
            assert (p["surrogate_pred_clean"], p["surrogate_pred_adv"]) == (before, after)
            assert p["label"] == (before if label is None else label)
            assert p["fooled_surrogate"] == (after != p["label"])
            assert p["surrogate_wrong_clean"] == (before != p["label"])
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
    assert p["fooled_surrogate"] and not p["stored_unchanged"] and p["unchanged_reason"] is None
    assert p["linf_stored"] <= 0.04 and math.floor(255 * 0.04) == round(255 * p["linf_stored"])


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


def _twins(build: Build) -> dict[str, int]:
    """Per attacked subset, the samples stored identical to their clean twin; each says so and why in its json (and
    no other does)."""
    clean = {key: fields for key, fields in build.iter_samples("clean")}
    found = {}
    for subset in build.configs():
        if subset == "clean":
            continue
        found[subset] = 0
        for key, fields in build.iter_samples(subset):
            image = next(f for f in fields if f in ("png", "npy"))
            same = fields[image] == clean[key][image]
            p = build.metadata(fields)["params"]
            assert p["stored_unchanged"] is same and (p["linf_stored"] == 0) is same, (subset, key)
            assert (p["unchanged_reason"] is None) is not same, (subset, key, p["unchanged_reason"])
            found[subset] += same
    return found


def test_no_sample_equals_its_clean_twin_unless_its_json_says_why(tmp_path, capsys):
    """The default build (the thesis's transfer sets, MI-FGSM at ε = 0.04 and 0.08) stores no clean image; a CW set on
    images the surrogate already misclassifies, or an ε below one grey level, do, each saying why, and the build
    says how many in one line per subset."""
    out = tmp_path / "default"
    assert main(["build", "adversarial", "--surrogate", TINY, "--limit", "3", "--size", "32", "--out", str(out),
                 "--no-progress"]) == 0  # fmt: skip
    assert _twins(Build.open(out / "adversarial")) == {"mi_fgsm_eps0_04": 0, "mi_fgsm_eps0_08": 0}
    assert "identical" not in capsys.readouterr().err
    out = tmp_path / "some"
    assert main(["build", "adversarial", "--surrogate", TINY, "--limit", "3", "--size", "32", "--out", str(out),
                 "--no-progress", "--attacks", "cw_l2:steps=5,fgsm:eps=0.003,pgd_ll:eps=0.01"]) == 0  # fmt: skip
    build = Build.open(out / "adversarial")
    same = _twins(build)
    assert same["fgsm_eps0_003"] == 3 and same["pgd_ll_eps0_01"] == 0 and same["cw_l2_steps5"] >= 1
    reasons = {build.metadata(f)["params"]["unchanged_reason"] for s in ("fgsm_eps0_003", "cw_l2_steps5")
               for _, f in build.iter_samples(s)} - {None}  # fmt: skip
    assert any("below one grey level" in r for r in reasons)
    assert any("misclassifies the clean image" in r for r in reasons)
    err = capsys.readouterr().err.strip().splitlines()
    assert sorted(line.split(" stores ")[0] for line in err) == ["corruptgen: note: subset cw_l2_steps5",
                                                                 "corruptgen: note: subset fgsm_eps0_003"]  # fmt: skip
    assert f"stores {same['cw_l2_steps5']} of 3 images identical" in "\n".join(err)
    card = (out / "adversarial" / "README.md").read_text()
    for subset in ("fgsm_eps0_003", "cw_l2_steps5", "pgd_ll_eps0_01"):  # the card's counts are the samples'
        params = [build.metadata(f)["params"] for _, f in build.iter_samples(subset)]
        fooled, wrong = (sum(p[k] for p in params) for k in ("fooled_surrogate", "surrogate_wrong_clean"))
        assert f"| `{subset}` | {fooled} of 3 ({fooled / 3:.0%}) | {wrong} | {same[subset]} |" in card


def test_float_storage_keeps_the_attack_and_reads_back_everywhere(tmp_path):
    """``--format npy``: every image (clean too) is a float32 (H, W, 3) array on [0, 1]; an ε below one grey level is
    stored, not dropped; webdataset, torch_loader, `datasets` (through the card's features), export and eval read
    the very values."""
    import webdataset as wds

    from corruptgen.eval import evaluate
    from corruptgen.hub import load, torch_loader

    corruptgen.build("adversarial", out=tmp_path, limit=2, attacks="fgsm:eps=0.003,cw_l2:steps=5", surrogate=TINY,
                     size=16, image_format="npy", progress=False)  # fmt: skip
    root = tmp_path / "adversarial"
    build = Build.open(root)
    arrays = {}
    for subset in build.configs():
        for key, fields in build.iter_samples(subset):
            assert set(fields) == {"npy", "json", "cls"}
            array = np.load(io.BytesIO(fields["npy"]), allow_pickle=False)
            assert array.dtype == np.float32 and array.shape == (16, 16, 3) and 0 <= array.min() <= array.max() <= 1
            arrays[subset, key] = array
    for key, fields in build.iter_samples("fgsm_eps0_003"):
        p = build.metadata(fields)["params"]
        assert p["linf_stored"] == pytest.approx(0.003, abs=1e-7) and not p["stored_unchanged"]
        assert np.abs(arrays["fgsm_eps0_003", key] - arrays["clean", key]).max() == pytest.approx(0.003, abs=1e-7)
    # webdataset's own decoder (numpy.load without pickles)
    shard = str(root / build.shards("fgsm_eps0_003")[0])
    for sample in wds.WebDataset(shard, shardshuffle=False).decode():
        assert np.array_equal(sample["npy"], arrays["fgsm_eps0_003", sample["__key__"]])
    # torch_loader: float tensors (3, H, W) unrounded, or float32 arrays
    images, _, metas = next(iter(torch_loader(root, "fgsm_eps0_003", batch_size=2)))
    assert images.dtype == torch.float32 and tuple(images.shape) == (2, 3, 16, 16)
    for image, meta in zip(images, metas, strict=True):
        assert torch.equal(image, torch.from_numpy(arrays["fgsm_eps0_003", meta["key"]]).permute(2, 0, 1))
    numpy_images, _, metas = next(iter(torch_loader(root, "clean", batch_size=2, decode="numpy")))
    assert numpy_images.dtype == np.float32 and np.array_equal(numpy_images[0], arrays["clean", metas[0]["key"]])
    # datasets, through the card's declared features
    row = next(iter(load(root, subset="cw_l2_steps5")))
    assert np.array_equal(np.asarray(row["npy"], dtype=np.float32), arrays["cw_l2_steps5", row["__key__"]])
    # export: the arrays as they are stored
    assert main(["export", str(root), "--layout", "imagenet-c", "--out", str(tmp_path / "exported")]) == 0
    exported = sorted((tmp_path / "exported").rglob("*.npy"))
    labelled = sum(build.metadata(f)["label"] is not None for s in build.configs() for _, f in build.iter_samples(s))
    assert len(exported) == labelled >= len(build.configs())  # an unlabelled sample has no class folder
    for file in exported:  # <subset>/<wnid>/<key>.npy
        subset = file.relative_to(tmp_path / "exported").parts[0]
        assert np.array_equal(np.load(file, allow_pickle=False), arrays[subset, file.stem])
    # eval reads the floats (unrounded) and knows the surrogate evaluated on its own transfer sets
    from corruptgen.eval.data import decode_image

    fields = dict(build.iter_samples("fgsm_eps0_003"))["chelsea"]
    assert np.array_equal(decode_image(fields["npy"]), arrays["fgsm_eps0_003", "chelsea"] * np.float32(255))
    result = evaluate(root, [TINY], report=False, predictions=False).results[0]
    assert set(result["metrics"]["subsets"]) == {"clean", "fgsm_eps0_003", "cw_l2_steps5"}
    assert result["data"]["surrogate"]["is_evaluated_model"] is True
    assert result["metrics"]["subsets"]["cw_l2_steps5"]["on_surrogate"] is True


def test_the_thesis_sets_and_pre_processing_are_the_default(tmp_path):
    """§3.3.3.1: MI-FGSM (ε = 0.04, 0.08) is the only transfer attack; §3.3.3.2: the only pre-processing is the
    resize to 224 × 224, the laugros family's, so both families' clean subsets are the same images."""
    plan = corruptgen.make_plan("adversarial", surrogate=TINY)
    assert [s.name for s in plan.subsets] == ["clean", "mi_fgsm_eps0_04", "mi_fgsm_eps0_08"]
    assert plan.preprocess == corruptgen.make_plan("laugros").preprocess
    assert dict(plan.subsets[1].options)["steps"] == 10 and dict(plan.subsets[1].options)["decay"] == 1
    iccv = corruptgen.make_plan("adversarial", surrogate=TINY, selection="iccvw2019")
    assert [s.name for s in iccv.subsets][1:] == [f"{a}_eps0_0025to0_025" for a in ("fgsm", "fgsm_ll", "pgd", "pgd_ll")]
    for family, options in (("laugros", {}), ("adversarial", {"surrogate": TINY})):
        corruptgen.build(family, out=tmp_path, subsets="clean", limit=2, size=48, image_format="png", progress=False,
                         **options)  # fmt: skip
    hashes = [_member_hashes(Build.open(tmp_path / family)) for family in ("laugros", "adversarial")]
    assert hashes[0] == hashes[1] and len(hashes[0]) == 4  # two clean images and their labels


def test_float_arrays_are_the_adversarial_familys_only(tmp_path, capsys):
    code = main(["build", "syn2nat", "--format", "npy", "--limit", "1", "--out", str(tmp_path / "o"), "--no-progress"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "syn2nat writes --format jpg, png, webp" in err
    assert not (tmp_path / "o").exists()
