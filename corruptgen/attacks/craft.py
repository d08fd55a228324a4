"""Run an :class:`~corruptgen.attacks.spec.AttackSpec` on a batch, and store its result in 8 bits within its bound."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from .cw import cw_l2
from .gradient import Model, fgsm, least_likely, mi_fgsm, pgd
from .spec import AttackSpec


@dataclass
class Crafted:
    """Adversarial images (float (N, 3, H, W) on [0, 1]) with the least-likely targets (LL attacks) and the ε of
    each image (L∞ attacks)."""

    images: torch.Tensor
    targets: torch.Tensor | None
    eps: list[float] | None


def craft(spec: AttackSpec, model: Model, images: torch.Tensor, labels: torch.Tensor,
          eps: Sequence[float] | None = None) -> Crafted:  # fmt: skip
    """Attack ``images`` (float on [0, 1]) of classes ``labels`` with ``spec`` on ``model``.

    ``eps`` gives each image its bound (drawn by the caller when the spec's ε is a range); by default the spec's
    number.
    """
    p = dict(spec.params)
    if spec.eps is None:
        return Crafted(cw_l2(model, images, labels, c=p["c"], kappa=p["kappa"], steps=p["steps"], lr=p["lr"]),
                       None, None)  # fmt: skip
    if eps is None:
        if isinstance(spec.eps, tuple):
            raise ValueError(f"{spec.label()}: ε is a range; give each image its ε")
        bound: float | list[float] = spec.eps
        values = [spec.eps] * images.shape[0]
    else:
        bound = values = [float(e) for e in eps]
    targets = least_likely(model, images, labels) if spec.kind.least_likely else None
    base = spec.name.removesuffix("_ll")
    if base == "fgsm":
        adv = fgsm(model, images, labels, bound, targets=targets)
    elif base == "pgd":
        adv = pgd(model, images, labels, bound, p["steps"], targets=targets)
    else:
        adv = mi_fgsm(model, images, labels, bound, p["steps"], p["decay"], targets=targets)
    return Crafted(adv, targets, values)


def grey_levels(eps: float) -> int:
    """The largest change in 8-bit grey levels that stays within ``eps`` (on [0, 1]): ``⌊255·ε⌋``."""
    return math.floor(255 * eps + 1e-9)


def to_uint8(adversarial: torch.Tensor, clean: torch.Tensor, eps: Sequence[float] | None) -> torch.Tensor:
    """Round ``adversarial`` (float (N, 3, H, W) on [0, 1]) to 8 bits (N, H, W, 3), keeping every pixel within its
    image's ε of the uint8 ``clean`` (N, H, W, 3): the stored L∞ distance never exceeds ε (a perturbation of less than
    one grey level cannot be stored and is dropped)."""
    out = torch.round(adversarial.detach().permute(0, 2, 3, 1) * 255)
    if eps is not None:
        levels = torch.tensor([grey_levels(e) for e in eps], dtype=out.dtype, device=out.device).view(-1, 1, 1, 1)
        base = clean.to(device=out.device, dtype=out.dtype)
        out = torch.minimum(torch.maximum(out, base - levels), base + levels)
    return out.clamp_(0, 255).to(torch.uint8)
