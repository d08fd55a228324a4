"""Adversarial attacks on [0, 1] images, shared by the ``adversarial`` family (transfer sets crafted on a surrogate),
white-box evaluation (``corruptgen eval --attacks``) and the Mixup / TLAT / M-TLAT training augmentations
(:mod:`.training`, re-exported by :mod:`corruptgen.augment`).

>>> from corruptgen.attacks import Classifier, craft, parse_attacks
>>> from corruptgen.models import load_model
>>> model = Classifier(load_model("efficientnet_lite0"))  # doctest: +SKIP
>>> (spec,) = parse_attacks("pgd:eps=0.04")
>>> adversarial = craft(spec, model, images, labels).images  # doctest: +SKIP  (float (N, 3, H, W) on [0, 1])

FGSM, LL-FGSM, PGD, LL-PGD, MI-FGSM (:mod:`.gradient`) and Carlini–Wagner L2 (:mod:`.cw`) follow Laugros's thesis
(§2.3.2.2) and equal torchattacks 3.5.1 (tests). The names load on first use: :mod:`.spec` (parsing, no torch) is what
the command line needs.
"""

from __future__ import annotations

from ..lazy import lazy_exports

_WHERE = {
    "ATTACKS": ".spec", "AttackKind": ".spec", "AttackSpec": ".spec", "make_attack": ".spec", "parse_attacks": ".spec",
    "Classifier": ".classifier", "differentiable": ".classifier",
    "Crafted": ".craft", "craft": ".craft", "grey_levels": ".craft", "to_uint8": ".craft", "to_float32": ".craft",
    "clean_float32": ".craft", "NOISE_LEVELS": ".craft", "Selection": ".spec", "SELECTIONS": ".spec",
    "whitebox_attacks": ".spec",
    "cw_l2": ".cw",
    "fgsm": ".gradient", "least_likely": ".gradient", "loss_gradient": ".gradient", "mi_fgsm": ".gradient",
    "pgd": ".gradient",
    "MTLAT": ".training", "TLAT": ".training", "Mixup": ".training", "soft_cross_entropy": ".training",
}  # fmt: skip

__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
