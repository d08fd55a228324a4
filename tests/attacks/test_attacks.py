"""The attacks equal torchattacks 3.5.1 on a small model, keep their bounds and move the probabilities the right way."""

from __future__ import annotations

import pytest
import torch
from tiny_models import Normalised, tiny_model

from corruptgen.attacks import Classifier, craft, differentiable, least_likely, parse_attacks, to_uint8
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


@pytest.mark.parametrize("text", ["fgsm:eps=0.04", "fgsm_ll:eps=0.02", "pgd:eps=0.04", "pgd_ll:eps=0.04",
                                  "mi_fgsm:eps=0.04", "mi_fgsm:eps=0.08"])  # fmt: skip
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


def test_least_likely_is_the_lowest_other_logit(model, images):
    classifier = Classifier(model)
    logits = classifier(images).detach()
    labels = logits.argmin(1)  # the true class is the least likely one: the target is the next lowest
    targets = least_likely(classifier, images, labels)
    assert (targets == logits.argsort(1)[:, 1]).all()


@pytest.mark.parametrize(("text", "message"), [
    ("pgdd", "unknown attack 'pgdd'; did you mean pgd"), ("pgd:eps=0", "eps must be in \\(0, 1\\)"),
    ("fgsm:eps=1", "eps must be in \\(0, 1\\)"), ("fgsm:eps=-0.1", "eps must be in"), ("pgd:epsilon=0.1", "no setting"),
    ("pgd:steps=2.5", "whole number"), ("eps=0.1", "before any attack"), ("pgd:eps=0.05..0.01", "LOW < HIGH"),
    ("pgd:eps=0.04,pgd", "twice"), ("cw_l2:c=0", "c must be in"), ("", "empty"),
])  # fmt: skip
def test_bad_attack_specs_fail_in_one_line(text, message):
    with pytest.raises((CorruptgenError, UnknownNameError), match=message):
        parse_attacks(text)


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
