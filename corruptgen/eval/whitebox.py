"""White-box attacks in ``corruptgen eval --attacks``: each model under evaluation is attacked on the build's ``clean``
subset, and each attack is reported like a subset (``whitebox_<attack>``: top-1, APP = acc / acc_clean, residual
robustness = acc_clean − acc; Laugros, PhD thesis 2022, §3.3.3.1 and Table 3.4c).

The attacks are those of :mod:`corruptgen.attacks` (the adversarial family crafts its transfer sets with the same
code), run in float32 on whole batches on the evaluation device. An image without a label is attacked away from the
model's own clean decision (its accuracy is not counted either way). An ε range (``pgd:eps=0.0025..0.025``, the
thesis's §3.2) is drawn per image from a generator seeded by the attack and the image's key. A selection's name
stands for its white-box attacks (``--attacks eccvw2020``: PGD and PGD_LL at ε = 0.04 and CW-L2, §3.3.3.1;
``iccvw2019``: FGSM, FGSM-LL, PGD and LL-PGD with ε per image, §3.2.2; :data:`corruptgen.attacks.SELECTIONS`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from ..attacks import AttackSpec, Classifier, craft, differentiable, whitebox_attacks
from ..errors import CorruptgenError
from ..models.loading import EvalModel
from ..seeding import sample_rng
from .metrics.common import WHITEBOX as CORRUPTION

PREFIX = "whitebox_"


@dataclass(frozen=True)
class WhiteBox:
    """The attacks of an evaluation: their specs, their subset names and the index of the attacked subset."""

    specs: tuple[AttackSpec, ...]
    clean_index: int
    first_index: int  # subset index of the first attack (after the build's selected subsets)

    @property
    def names(self) -> list[str]:
        return [PREFIX + s.subset_name for s in self.specs]

    def info(self) -> dict[str, dict[str, Any]]:
        """Each attack's subset description (as the build's subsets have theirs)."""
        return {PREFIX + s.subset_name: {"corruption": CORRUPTION + s.name, "severity": None, "category": None,
                                         "frames": 1, "attack": s.to_dict()} for s in self.specs}  # fmt: skip


def plan_whitebox(
    attacks: str | Sequence[str | AttackSpec] | None, subsets: Sequence[str], where: str, *, built_clean: bool = False
) -> WhiteBox | None:
    """Parse ``--attacks`` for a build whose selected subsets are ``subsets`` (names, in order); one line on bad
    input or when no ``clean`` subset is selected (``built_clean``: the build has one, eval's ``--no-clean`` left it
    out)."""
    if attacks is None or (not isinstance(attacks, str) and not attacks):
        return None
    specs = whitebox_attacks(attacks)
    if "clean" not in subsets:
        if built_clean:
            raise CorruptgenError("--attacks attacks the clean subset, which --no-clean leaves out: evaluate without "
                                  "--no-clean")  # fmt: skip
        raise CorruptgenError(f"--attacks attacks the clean subset, and {where} has none (it was built with "
                              "--no-clean): attack a build that has one")  # fmt: skip
    taken = sorted(set(subsets) & {PREFIX + s.subset_name for s in specs})
    if taken:
        raise CorruptgenError(f"{where} already has subset(s) {', '.join(taken)}")
    return WhiteBox(specs, list(subsets).index("clean"), len(subsets))


def classifiers(models: Sequence[EvalModel]) -> list[Classifier]:
    """The differentiable view of every model (a model whose input gets no gradient fails in one line)."""
    return [differentiable(m) for m in models]


def attack_batch(whitebox: WhiteBox, classifier: Classifier, images: torch.Tensor, labels: np.ndarray,
                 clean_logits: torch.Tensor, keys: Sequence[str]) -> list[torch.Tensor]:  # fmt: skip
    """Logits of the model on each attack's adversarial versions of ``images`` (uint8 (N, S, S, 3) clean images
    of sample ``keys`` with ``labels``, -1 where unknown: the model's clean decision is attacked instead)."""
    x = images.permute(0, 3, 1, 2).to(classifier.mean.dtype) / 255
    known = torch.as_tensor(labels, device=x.device)
    target = torch.where(known >= 0, known, clean_logits.argmax(1).to(x.device))
    out = []
    for spec in whitebox.specs:
        eps = None
        if isinstance(spec.eps, tuple):
            rngs = [sample_rng(0, "whitebox", spec.subset_name, key)[1] for key in keys]
            eps = [spec.sample_eps(rng) for rng in rngs]
        adversarial = craft(spec, classifier, x, target, eps=eps).images
        with torch.no_grad():
            out.append(classifier(adversarial))
    return out
