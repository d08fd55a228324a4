"""Label spaces (issue N5): an ImageNet model is never scored silently against CIFAR-style labels; the user says
when the classes match (``--labels match``), maps them (``--class-map``) or scores without labels (``ignore``)."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
from eval_helpers import classify_samples, fake_model
from PIL import Image

import corruptgen
from corruptgen.cli import main
from corruptgen.errors import CorruptgenError
from corruptgen.eval import evaluate, load_results


def _photos32(names=("chelsea", "coffee")) -> list[np.ndarray]:
    import skimage.data

    return [np.asarray(Image.fromarray(getattr(skimage.data, n)()).resize((32, 32), Image.Resampling.BILINEAR))
            for n in names]  # fmt: skip


@pytest.fixture(scope="module")
def cifar_npy(tmp_path_factory):
    """``corruptgen build cifar10-c --source npy:images.npy:labels.npy``: CIFAR-10 labels 3 (cat) and 5 (dog)."""
    root = tmp_path_factory.mktemp("npy")
    np.save(root / "images.npy", np.stack(_photos32()))
    np.save(root / "labels.npy", np.array([3, 5]))
    source = f"npy:{root / 'images.npy'}:{root / 'labels.npy'}"
    return corruptgen.build("cifar10-c", source=source, out=root / "out", subsets="frost_s5", card=False).out_dir


@pytest.fixture(scope="module")
def cat_dog(tmp_path_factory):
    """A cifar10-c build of an image folder with class folders ``cat`` and ``dog`` (named classes 0 and 1)."""
    root = tmp_path_factory.mktemp("folders")
    for name, image in zip(("cat", "dog"), _photos32(), strict=True):
        (root / "src" / name).mkdir(parents=True)
        Image.fromarray(image).save(root / "src" / name / "a.png")
    source = f"imagefolder:{root / 'src'}"
    return corruptgen.build("cifar10-c", source=source, out=root / "out", subsets="frost_s5", card=False).out_dir


def test_cli_refuses_an_imagenet_model_on_cifar_labels(cifar_npy, tmp_path, capsys):
    out = tmp_path / "res"
    assert main(["eval", str(cifar_npy), "--out", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "label spaces differ" in err and "--labels match" in err
    assert "unnamed class indices of npy:" in err and "efficientnet_lite0 predicts ImageNet-1k" in err
    assert not out.exists()  # nothing scored
    cmap = tmp_path / "map.json"
    cmap.write_text(json.dumps({"tabby cat": 3, "tiger cat": 3, "Egyptian cat": 3, "n02085620": 5}))
    fast = ["--model", "eval_helpers:MeanColourNet", "--no-report", "--no-predictions", "--no-progress"]
    assert main(["eval", str(cifar_npy), "--out", str(out), "--class-map", str(cmap), *fast]) == 0
    r = load_results(out / "results-MeanColourNet.json")
    assert r["data"]["labels"]["mode"] == "class map" and r["data"]["labels"]["class_map"]["mapped_classes"] == 4
    run = evaluate(cifar_npy, [fake_model()], labels="match", report=False)  # the user says the classes match
    assert run.results[0]["data"]["labels"]["mode"] == "match" and run.results[0]["eval"]["images"] == 4


def test_named_classes_against_models(cat_dog):
    with pytest.raises(CorruptgenError, match=r"classes named by the build, 2 seen \(cat, dog\) but model fake "
                                              r"predicts ImageNet-1k"):  # fmt: skip
        evaluate(cat_dog, [fake_model()], report=False)
    with pytest.raises(CorruptgenError, match="model fake predicts 2 unnamed outputs"):  # size known at first batch
        evaluate(cat_dog, [replace(fake_model(2), num_classes=None)], report=False)
    named = fake_model(2)
    named.forward.class_names = ["cat", "dog"]  # the model declares its classes: the same as the build's
    run = evaluate(cat_dog, [named], report=False)
    assert run.results[0]["metrics"]["subsets"]["clean"]["labelled"] == 2
    assert run.results[0]["data"]["labels"]["model"].startswith("its classes (cat, dog)")
    mapped = evaluate(cat_dog, [fake_model()], report=False, class_map={"tabby cat": "cat", "281": "cat", "0": "dog"})
    top5 = mapped.predictions[0].top5
    assert set(np.unique(top5)) <= {-1, 0, 1} and mapped.results[0]["metrics"]["subsets"]["clean"]["top1"] is not None
    with pytest.raises(CorruptgenError, match="'bird' is not a class name of the build"):
        evaluate(cat_dog, [fake_model()], report=False, class_map={"0": "bird"})
    free = evaluate(cat_dog, [fake_model()], report=False, labels="ignore")
    clean = free.results[0]["metrics"]["subsets"]["clean"]
    assert clean["labelled"] == 0 and clean["top1"] is None and clean["consistency"] == 1.0


#: label names a build's samples record -> refused with this text (None: taken as ImageNet-1k and scored)
NAMED = [
    ({285: "Egyptian cat", 967: "espresso"}, None),  # ImageNet's short names
    ({285: "Egyptian cat", 967: "n07920052"}, None),  # a wnid
    ({285: "Egyptian cat", 967: "dog"}, "classes named by the build"),  # 967 is not a dog
    ({285: "285", 967: "967"}, "unnamed class indices"),  # the names datasets.ClassLabel(num_classes=N) gives
]


@pytest.mark.parametrize(("names", "refused"), NAMED)
def test_label_names_decide_the_build_space(make_build, photos, names, refused):
    samples = [(k, im, {**m, "label_name": names[m["label"]]})
               for k, im, m in classify_samples(photos, "syn2nat", "clean", names=["chelsea", "coffee"])]  # fmt: skip
    build = make_build("syn2nat", {"clean": samples})
    if refused is None:
        evaluate(build, [fake_model()], report=False)
    else:
        with pytest.raises(CorruptgenError, match=refused):
            evaluate(build, [fake_model()], report=False)
