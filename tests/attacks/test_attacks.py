"""The attacks equal torchattacks 3.5.1 on a small model, keep their bounds and move the probabilities the right way."""

from __future__ import annotations

import pytest
import torch
from tiny_models import Normalised, tiny_model

from corruptgen.attacks import (
    SELECTIONS,
    Classifier,
    clean_float32,
    craft,
    differentiable,
    least_likely,
    parse_attacks,
    to_float32,
    to_uint8,
    whitebox_attacks,
)
from corruptgen.errors import CorruptgenError, UnknownNameError
from corruptgen.models.loading import EvalModel

torchattacks = pytest.importorskip("torchattacks")  # scripts/install.sh test installs it (without torchvision)


def _reference(spec, net: torch.nn.Module):
    """The torchattacks attack of a spec: PGD without random start, step eps/steps; LL variants targeted at the
    least likely class."""
    p = dict(spec.params)
    base = spec.name.removesuffix("_ll")
    if base == "fgsm":
        attack = torchattacks.FGSM(net, eps=p["eps"])
    elif base == "pgd":
        attack = torchattacks.PGD(net, eps=p["eps"], alpha=p["eps"] / p["steps"], steps=p["steps"], random_start=False)
    else:
        attack = torchattacks.MIFGSM(net, eps=p["eps"], alpha=p["eps"] / p["steps"], steps=p["steps"], decay=p["decay"])
    if spec.kind.least_likely:
        attack.set_mode_targeted_least_likely(quiet=True)
    return attack


@pytest.mark.parametrize("text", ["fgsm:eps=0.04", "fgsm_ll:eps=0.02:ll=other", "pgd:eps=0.04",
                                  "pgd_ll:eps=0.04:ll=other", "mi_fgsm:eps=0.04", "mi_fgsm:eps=0.08"])  # fmt: skip
def test_linf_attacks_equal_torchattacks(text, model, images):
    (spec,) = parse_attacks(text)
    classifier = Classifier(model)
    labels = classifier.predict(images)
    assert len(set(labels.tolist())) > 1  # the model decides between several classes here
    ours = craft(spec, classifier, images, labels).images
    theirs = _reference(spec, Normalised(model.module).eval())(images, labels)
    assert (ours - theirs).abs().max().item() <= 1e-6
    assert (ours - images).abs().max().item() == pytest.approx(spec.eps, abs=1e-6)


def test_cw_l2_equals_torchattacks_and_is_per_image(model, images):
    (spec,) = parse_attacks("cw_l2")
    assert dict(spec.params) == {"c": 50.0, "kappa": 0.0, "steps": 40, "lr": 0.01}  # thesis §3.3.3.1
    classifier = Classifier(model)
    images = images[1:3]  # two images of different predicted classes
    labels = classifier.predict(images)
    batched = craft(spec, classifier, images, labels).images
    reference = torchattacks.CW(Normalised(model.module).eval(), c=50, kappa=0, steps=40, lr=0.01)
    for i in range(len(images)):  # torchattacks stops a batch on its total cost: compare one image at a time
        one = craft(spec, classifier, images[i : i + 1], labels[i : i + 1]).images
        assert (one - reference(images[i : i + 1], labels[i : i + 1])).abs().max().item() <= 1e-6
        assert (one - batched[i : i + 1]).abs().max().item() <= 1e-6  # an image's result does not depend on the batch
    assert (classifier.predict(batched) != labels).all()  # c = 50 flips every decision of this model


def test_cw_kappa_is_the_margin_an_adversarial_iterate_must_reach(model, images):
    """κ > 0: the smallest iterate with max_{i≠t} Z_i − Z_t ≥ κ is kept (Carlini & Wagner's test), else the clean
    image; κ = 0 keeps the smallest misclassified one (torchattacks')."""
    classifier = Classifier(model)
    labels = classifier.predict(images)
    (plain,), (confident,) = parse_attacks("cw_l2"), parse_attacks("cw_l2:kappa=1")
    margins = {}
    for spec in (plain, confident):
        adversarial = craft(spec, classifier, images, labels).images
        logits = classifier(adversarial).detach()
        margins[spec.get("kappa")] = (logits.scatter(1, labels.view(-1, 1), float("-inf")).amax(1)
                                      - logits.gather(1, labels.view(-1, 1))[:, 0])  # fmt: skip
        changed = (adversarial != images).flatten(1).any(1)
        assert (margins[spec.get("kappa")][changed] >= spec.get("kappa")).all()
        assert changed.all()
    assert (margins[0.0] < 1).all()  # κ = 0 keeps barely adversarial images (margins of a few hundredths here)


def test_bounds_after_rounding_and_probabilities(model, images):
    classifier = Classifier(model)
    labels = classifier.predict(images)
    clean = torch.round(images.permute(0, 2, 3, 1) * 255).to(torch.uint8)
    probs = classifier(images).softmax(1).detach()
    for text in ("fgsm:eps=0.02", "pgd:eps=0.04", "mi_fgsm:eps=0.08", "fgsm_ll:eps=0.04", "pgd_ll:eps=0.04"):
        (spec,) = parse_attacks(text)
        out = craft(spec, classifier, images, labels)
        stored = to_uint8(out.images, clean, out.eps)
        assert (stored.int() - clean.int()).abs().max().item() <= 255 * spec.eps
        after = classifier(stored.permute(0, 3, 1, 2).float() / 255).softmax(1).detach()
        if out.targets is None:  # untargeted: the true class loses probability
            rows = torch.arange(len(labels))
            assert (after[rows, labels] < probs[rows, labels]).all(), text
        else:  # least-likely targeted: the target gains probability, and is never the true class
            rows = torch.arange(len(labels))
            assert (out.targets != labels).all()
            assert (after[rows, out.targets] > probs[rows, out.targets]).all(), text


def test_per_image_eps_and_sub_level_bounds(model, images):
    classifier = Classifier(model)
    labels = classifier.predict(images)
    (spec,) = parse_attacks("pgd:eps=0.0025..0.025")
    eps = [0.0025, 0.01, 0.02, 0.025]
    out = craft(spec, classifier, images, labels, eps=eps)
    linf = (out.images - images).abs().amax(dim=(1, 2, 3))
    assert linf.tolist() == pytest.approx(eps, abs=1e-6)
    clean = torch.round(images.permute(0, 2, 3, 1) * 255).to(torch.uint8)
    stored = (to_uint8(out.images, clean, eps).int() - clean.int()).abs().amax(dim=(1, 2, 3))
    assert stored.tolist() == [0, 2, 5, 6]  # ⌊255 ε⌋ grey levels: less than one level cannot be stored
    with pytest.raises(ValueError, match="range"):
        craft(spec, classifier, images, labels)


def test_8_bit_rounding_keeps_every_change_the_attack_made_within_eps():
    """A change of less than half a grey level is stored as one level, away from zero, never as none; larger ones
    round to the nearest level; every change is capped at ⌊255 ε⌋ levels; float noise (CW's tanh round trip) and
    pixels the attack left alone stay unchanged (float32 holds k / 255 to ~1e-5 levels). Below one grey level of ε no
    change fits."""
    clean = torch.tensor([[[[100, 100, 100], [100, 0, 255]]]], dtype=torch.uint8)  # (1, 1, 2, 3)
    levels = torch.tensor([[[[100.2, 99.7, 101.6], [100 + 2e-5, 0.0, 255.0]]]], dtype=torch.float64)
    adversarial = (levels / 255).permute(0, 3, 1, 2)
    assert to_uint8(adversarial, clean, None).tolist() == [[[[101, 99, 102], [100, 0, 255]]]]
    assert to_uint8(adversarial, clean, [1.5 / 255]).tolist() == [[[[101, 99, 101], [100, 0, 255]]]]
    assert to_uint8(adversarial, clean, [0.0025]).tolist() == clean.tolist()  # ⌊255 · 0.0025⌋ = 0 levels


def test_float32_storage_is_the_attacks_result_within_eps(model, images):
    """``--format npy``: the attack's float result to float32's precision, never equal to the stored clean value
    where the attack changed a pixel, and within ε of that stored clean value after rounding."""
    classifier = Classifier(model)
    labels = classifier.predict(images)
    x = images
    clean = torch.round(x.permute(0, 2, 3, 1) * 255).to(torch.uint8)
    reference = clean_float32(clean).double()
    for text, eps in (("pgd:eps=0.003", [0.003] * 4), ("fgsm:eps=0.0025..0.025", [0.0025, 0.01, 0.02, 0.025])):
        (spec,) = parse_attacks(text)
        crafted = craft(spec, classifier, x, labels, eps=eps).images
        stored = to_float32(crafted, clean, eps)
        assert stored.dtype == torch.float32 and stored.shape == clean.shape
        stored = stored.double()
        assert 0 <= stored.min() and stored.max() <= 1
        linf = (stored - reference).abs().amax(dim=(1, 2, 3))
        assert (linf <= torch.tensor(eps, dtype=torch.float64)).all()
        assert linf.tolist() == pytest.approx(eps, abs=1e-7)  # the float perturbation, not ⌊255 ε⌋ / 255
        moved = (crafted.permute(0, 2, 3, 1) - x.permute(0, 2, 3, 1)).abs() > 1e-9
        assert moved.any() and not ((stored == reference) & moved).any()
        assert (stored - crafted.permute(0, 2, 3, 1).double()).abs().max() < 1e-7


def test_least_likely_is_the_lowest_score_or_the_lowest_other_one(model, images):
    """Thesis §2.3.2.2: "the class that is given the lowest score" (the default, ``ll=lowest``), even when that is the
    true class; torchattacks' convention (``ll=other``) never targets the true class."""
    classifier = Classifier(model)
    logits = classifier(images).detach()
    labels = logits.argmin(1)  # the true class is the least likely one
    assert (least_likely(classifier, images, labels) == labels).all()
    assert (least_likely(classifier, images, labels, exclude=True) == logits.argsort(1)[:, 1]).all()
    (thesis,) = parse_attacks("pgd_ll:eps=0.04")
    (theirs,) = parse_attacks("pgd_ll:eps=0.04:ll=other")
    assert thesis.get("ll") == "lowest" and thesis.subset_name == "pgd_ll_eps0_04"
    assert theirs.subset_name == "pgd_ll_eps0_04_llother" and theirs.label() == "pgd_ll:eps=0.04:ll=other"
    assert (craft(thesis, classifier, images, labels).targets == labels).all()
    assert (craft(theirs, classifier, images, labels).targets != labels).all()


@pytest.mark.parametrize(("text", "message"), [
    ("pgdd", "unknown attack 'pgdd'; did you mean pgd"), ("pgd:eps=0", "eps must be in \\(0, 1\\)"),
    ("fgsm:eps=1", "eps must be in \\(0, 1\\)"), ("fgsm:eps=-0.1", "eps must be in"), ("pgd:epsilon=0.1", "no setting"),
    ("pgd:steps=2.5", "whole number"), ("eps=0.1", "before any attack"), ("pgd:eps=0.05..0.01", "LOW < HIGH"),
    ("pgd:eps=0.04,pgd", "twice"), ("cw_l2:c=0", "c must be in"), ("", "empty"),
    ("pgd_ll:ll=highest", "ll must be one of lowest, other"), ("pgd:ll=other", "no setting ll"),
])  # fmt: skip
def test_bad_attack_specs_fail_in_one_line(text, message):
    with pytest.raises((CorruptgenError, UnknownNameError), match=message):
        parse_attacks(text)


def test_cw_settings_are_named_and_both_readings_of_confidence_parse():
    """§3.3.3.1's "confidence score of 50": the preset reads it as c = 50 (the thesis calls c the confidence,
    §2.3.2.2), κ = 0; CW's own κ = 50 reading is a setting away. Every label names all four settings."""
    thesis, kappa = parse_attacks("cw_l2,cw_l2:c=50,kappa=50,steps=40,lr=0.01")
    assert dict(thesis.params) == {"c": 50.0, "kappa": 0.0, "steps": 40, "lr": 0.01}
    assert thesis.label() == "cw_l2:c=50:kappa=0:steps=40:lr=0.01" and thesis.subset_name == "cw_l2"
    assert kappa.label() == "cw_l2:c=50:kappa=50:steps=40:lr=0.01" and kappa.subset_name == "cw_l2_kappa50"
    assert parse_attacks(thesis.label()) == (thesis,) and parse_attacks(kappa.label()) == (kappa,)


def test_selections_are_the_thesis_settings():
    """§3.3.3.1: PGD, PGD_LL (ε = 0.04) and CW_2 white-box, MI_FGSM (ε = 0.04, 0.08) the only black-box attack;
    §3.2.2: FGSM, FGSM-LL, PGD, LL-PGD in both settings, ε from [0.0025, 0.025] on [0, 1] pixels."""
    names = {k: [s.subset_name for s in parse_attacks(v.transfer)] for k, v in SELECTIONS.items()}
    assert names["eccvw2020"] == ["mi_fgsm_eps0_04", "mi_fgsm_eps0_08"]
    assert [s.label() for s in whitebox_attacks("eccvw2020")] == ["pgd:eps=0.04", "pgd_ll:eps=0.04",
                                                                  "cw_l2:c=50:kappa=0:steps=40:lr=0.01"]  # fmt: skip
    iccv = ["fgsm", "fgsm_ll", "pgd", "pgd_ll"]
    assert names["iccvw2019"] == [f"{a}_eps0_0025to0_025" for a in iccv]
    assert [s.name for s in whitebox_attacks(["iccvw2019"])] == iccv
    assert [s.subset_name for s in whitebox_attacks("eccvw2020,fgsm:eps=0.01")][-2:] == ["cw_l2", "fgsm_eps0_01"]
    assert parse_attacks("mi_fgsm:eps=0.04")[0].get("steps") == 10 and parse_attacks("mi_fgsm")[0].get("decay") == 1


def test_spec_syntax_and_subset_names():
    specs = parse_attacks("pgd:eps=0.04,pgd_ll:eps=0.04,cw_l2,fgsm:eps=0.02,mi_fgsm:eps=0.08,steps=20")
    assert [s.subset_name for s in specs] == ["pgd_eps0_04", "pgd_ll_eps0_04", "cw_l2", "fgsm_eps0_02",
                                             "mi_fgsm_eps0_08_steps20"]  # fmt: skip
    assert [s.label() for s in specs][-1] == "mi_fgsm:eps=0.08:steps=20"
    assert parse_attacks("fgsm:eps=0.0025..0.025")[0].subset_name == "fgsm_eps0_0025to0_025"


def test_a_model_without_gradients_is_refused(model):
    def no_grad_forward(x):
        with torch.no_grad():
            return model.forward(x)

    frozen = EvalModel(name="frozen", spec="frozen", forward=no_grad_forward, input_size=16).to("cpu")
    with pytest.raises(CorruptgenError, match="not differentiable"):
        differentiable(frozen)
    leaves = EvalModel(name="numpy", spec="numpy", forward=lambda x: x.detach().numpy().mean((2, 3)), input_size=16)
    with pytest.raises(CorruptgenError, match=r"numpy: returned ndarray, not .* logits of torch"):
        differentiable(leaves.to("cpu"))
    assert isinstance(differentiable(tiny_model()), Classifier)
