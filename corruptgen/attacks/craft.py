"""Run an :class:`~corruptgen.attacks.spec.AttackSpec` on a batch, and store its result within its bound: in 8 bits
(:func:`to_uint8`) or as float32 (:func:`to_float32`)."""

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
    targets = least_likely(model, images, labels, p["ll"] == "other") if spec.kind.least_likely else None
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


#: A change of at most this many grey levels is float noise, not a perturbation: float32 holds k / 255 to ~8e-6 levels
#: and CW's tanh round trip returns it to ~2e-5 (float64: ~1e-11); the smallest deliberate change, a CW step on a
#: pixel next to saturation, is ~1e-2.
NOISE_LEVELS = 1e-3


def to_uint8(adversarial: torch.Tensor, clean: torch.Tensor, eps: Sequence[float] | None) -> torch.Tensor:
    """Round ``adversarial`` (float (N, 3, H, W) on [0, 1]) to 8 bits (N, H, W, 3) around the uint8 ``clean``
    (N, H, W, 3): each pixel's change to the nearest grey level (half away from zero), except that a change the attack
    made (more than :data:`NOISE_LEVELS`) never rounds to none: less than half a level is stored as one level, away
    from zero. Then each change is capped at its image's ``⌊255·ε⌋`` levels, so the stored L∞ distance never exceeds
    ε, and the image at [0, 255]. Where ``⌊255·ε⌋ = 0`` (ε < 1/255) no 8-bit image within ε differs from ``clean``."""
    base = clean.to(device=adversarial.device, dtype=torch.float64)
    delta = adversarial.detach().permute(0, 2, 3, 1).to(torch.float64) * 255 - base
    size = delta.abs()
    steps = torch.where(size > NOISE_LEVELS, torch.floor(size + 0.5).clamp_min(1), torch.zeros_like(size))
    if eps is not None:
        budget = torch.tensor([grey_levels(e) for e in eps], dtype=torch.float64, device=base.device)
        steps = torch.minimum(steps, budget.view(-1, 1, 1, 1))
    return (base + torch.sign(delta) * steps).clamp_(0, 255).to(torch.uint8)


def clean_float32(clean: torch.Tensor) -> torch.Tensor:
    """The uint8 ``clean`` (N, H, W, 3) as ``--format npy`` stores it: float32 on [0, 1] (``clean / 255``)."""
    return (clean.to(torch.float64) / 255).to(torch.float32)


def to_float32(adversarial: torch.Tensor, clean: torch.Tensor, eps: Sequence[float] | None) -> torch.Tensor:
    """``adversarial`` (float (N, 3, H, W) on [0, 1]) as float32 (N, H, W, 3), the attack's result to float32's
    precision (~6e-8 on [0, 1]), within each image's ε of the *stored* clean image (:func:`clean_float32`, which is
    ``clean / 255`` to ~3e-8): the result is first clamped (in float64) to that ε-ball and [0, 1], then rounded to
    the nearest float32 inside it (a rounding that crossed the bound is one float32 step back). A pixel the attack
    changed (by more than :data:`NOISE_LEVELS`) never equals its stored clean value (one float32 step in the
    attack's direction where rounding met it)."""
    ref = clean_float32(clean).to(adversarial.device)
    base = ref.to(torch.float64)
    exact = adversarial.detach().permute(0, 2, 3, 1).to(torch.float64)
    delta = exact - clean.to(device=exact.device, dtype=torch.float64) / 255
    if eps is None:
        low, high = torch.zeros_like(base), torch.ones_like(base)
    else:
        bound = torch.tensor(list(eps), dtype=torch.float64, device=base.device).view(-1, 1, 1, 1)
        low, high = (base - bound).clamp_(min=0), (base + bound).clamp_(max=1)
    exact = torch.minimum(torch.maximum(exact, low), high)
    out = exact.to(torch.float32)
    met = (delta.abs() * 255 > NOISE_LEVELS) & (out == ref)
    out = torch.where(met, torch.nextafter(ref, torch.where(delta > 0, 2.0, -1.0).to(torch.float32)), out)
    out = torch.where(out.to(torch.float64) > high, torch.nextafter(out, torch.zeros_like(out)), out)
    return torch.where(out.to(torch.float64) < low, torch.nextafter(out, torch.ones_like(out)), out)
