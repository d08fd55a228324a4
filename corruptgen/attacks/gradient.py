"""Gradient-sign attacks (L∞): FGSM, PGD and MI-FGSM, untargeted or towards given target classes.

Laugros, PhD thesis (Université Grenoble Alpes, 2022), §2.3.2.2: FGSM Eq. 2.5 (Goodfellow et al., ICLR 2015), PGD
Eq. 2.6 (Madry et al., ICLR 2018; ``steps`` steps of ``eps / steps`` from ``x⁰ = x``, no random start), their
least-likely targeted forms Eq. 2.7–2.8 (Kurakin et al., ICLR 2017: a step *down* the loss of the target), and
MI-FGSM (Dong et al., CVPR 2018: the step follows the accumulated, L1-normalised gradient). Every iterate is projected
onto the ε-ball around ``x`` and onto [0, 1], as torchattacks 3.5.1 does (the tests compare with it).

The loss is the cross-entropy *summed* over the batch, so each image's gradient is its own (torchattacks averages:
the same signs, and after MI-FGSM's normalisation the same steps); ``eps`` is a number or one value per image.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
import torch.nn.functional as F

Model = Callable[[torch.Tensor], torch.Tensor]
Bound = float | Sequence[float] | torch.Tensor


def _per_image(value: Bound, x: torch.Tensor, divide: int = 1) -> float | torch.Tensor:
    """``value / divide`` as a Python float, or per image as an (N, 1, 1, 1) tensor (divided in float64)."""
    if isinstance(value, (int, float)):
        return float(value) / divide
    v = torch.as_tensor(value, dtype=torch.float64).reshape(-1, 1, 1, 1) / divide
    if v.shape[0] != x.shape[0]:
        raise ValueError(f"{v.shape[0]} bounds for {x.shape[0]} images")
    return v.to(device=x.device, dtype=x.dtype)


def loss_gradient(model: Model, x: torch.Tensor, labels: torch.Tensor, targets: torch.Tensor | None = None):
    """∇ₓ of the summed cross-entropy of ``labels`` (untargeted), or of minus that of ``targets`` (targeted: the
    gradient *ascent* direction then lowers the targets' loss)."""
    x = x.detach().requires_grad_(True)
    with torch.enable_grad():
        logits = model(x)
        if targets is None:
            cost = F.cross_entropy(logits, labels, reduction="sum")
        else:
            cost = -F.cross_entropy(logits, targets, reduction="sum")
        (grad,) = torch.autograd.grad(cost, x)
    return grad


@torch.no_grad()
def least_likely(model: Model, images: torch.Tensor, labels: torch.Tensor, exclude: bool = False) -> torch.Tensor:
    """Kurakin et al.'s l_least: the class of lowest logit, "the class that is given the lowest score by the attacked
    neural network" (thesis §2.3.2.2), which is the true class when the model scores it lowest of all. With
    ``exclude``, the lowest among the classes other than ``labels`` (torchattacks' least-likely mode: the target is
    never the true class). The logits are compared in float32, as torchattacks does."""
    logits = model(images).float()
    if exclude:
        logits = logits.scatter(1, labels.view(-1, 1), float("inf"))
    return logits.argmin(1)


def fgsm(model: Model, images: torch.Tensor, labels: torch.Tensor, eps: Bound, *,
         targets: torch.Tensor | None = None) -> torch.Tensor:  # fmt: skip
    """FGSM (Eq. 2.5) ``clip(x + ε·sign(∇ₓL(x, l)))``; with ``targets``, LL-FGSM (Eq. 2.7) ``x − ε·sign(∇ₓL(x, t))``."""
    images = images.detach()
    grad = loss_gradient(model, images, labels, targets)
    return torch.clamp(images + _per_image(eps, images) * grad.sign(), min=0, max=1).detach()


def _iterate(model: Model, images: torch.Tensor, labels: torch.Tensor, eps: Bound, steps: int,
             targets: torch.Tensor | None, decay: float | None) -> torch.Tensor:  # fmt: skip
    images = images.detach()
    bound, alpha = _per_image(eps, images), _per_image(eps, images, steps)
    adv = images.clone()
    momentum = torch.zeros_like(images)
    for _ in range(steps):
        grad = loss_gradient(model, adv, labels, targets)
        if decay is not None:  # MI-FGSM: accumulate the L1-normalised gradient
            scale = torch.mean(torch.abs(grad), dim=(1, 2, 3), keepdim=True).clamp_min(torch.finfo(grad.dtype).tiny)
            grad = grad / scale + momentum * decay
            momentum = grad
        adv = adv.detach() + alpha * grad.sign()
        delta = torch.clamp(adv - images, min=-bound, max=bound)
        adv = torch.clamp(images + delta, min=0, max=1).detach()
    return adv


def pgd(model: Model, images: torch.Tensor, labels: torch.Tensor, eps: Bound, steps: int = 10, *,
        targets: torch.Tensor | None = None) -> torch.Tensor:  # fmt: skip
    """PGD (Eq. 2.6): ``steps`` steps of ``ε/steps`` from ``x``; with ``targets``, LL-PGD (Eq. 2.8)."""
    return _iterate(model, images, labels, eps, steps, targets, None)


def mi_fgsm(model: Model, images: torch.Tensor, labels: torch.Tensor, eps: Bound, steps: int = 10,
            decay: float = 1.0, *, targets: torch.Tensor | None = None) -> torch.Tensor:  # fmt: skip
    """MI-FGSM (Dong et al., CVPR 2018, Algorithm 1): ``g ← μ·g + ∇ / mean|∇|``, step ``ε/steps · sign(g)``."""
    return _iterate(model, images, labels, eps, steps, targets, float(decay))
