"""Carlini–Wagner L2 (Carlini & Wagner, IEEE S&P 2017; Laugros, PhD thesis 2022, Eq. 2.9–2.10), untargeted.

Minimises ``‖x' − x‖₂² + c·max(Z(x')_t − max_{i≠t} Z(x')_i, −κ)`` over ``x' = (tanh(w) + 1) / 2`` with Adam
(``steps`` iterations, learning rate ``lr``, no search over ``c``), keeping per image the smallest-L2 iterate that was
adversarial with confidence κ (``max_{i≠t} Z_i − Z_t ≥ κ``; the clean image when none was), and stopping an image
early when its cost rose at one of the ten check points — the procedure of torchattacks 3.5.1's ``CW``, with three
differences: an iterate counts as adversarial only with margin κ, as in Carlini & Wagner's own code (``compare``: the
true logit plus κ below another one; torchattacks counts any misclassified iterate, which is the same at κ = 0 and
makes κ all but inert, the first misclassified iterate being kept); and two that make an image's result its own: the
early stop is decided per image (torchattacks stops the whole batch on the batch's total cost; the same at batch size
1), and ``max_{i≠t}`` is taken over the other classes only (torchattacks takes the max of the one-hot-masked logits,
which reads 0 for the masked entries: the same whenever a logit other than t is positive).

The thesis calls ``c`` "confidence" (§2.3.2.2, Eq. 2.9), so §3.3.3.1's "40 iterations and a confidence score of 50"
is read as ``c = 50`` with Eq. 2.10's margin at 0 (``κ = 0``; the preset ``cw_l2``). In Carlini & Wagner's paper, and
in cleverhans, foolbox and ART, "confidence" is κ: ``cw_l2:kappa=50`` is that reading (docs/adversarial.md says what
it changes).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .gradient import Model


def _margin(logits: torch.Tensor, labels: torch.Tensor, kappa: float) -> torch.Tensor:
    """Eq. 2.10, untargeted: ``max(Z_t − max_{i≠t} Z_i, −κ)`` per image."""
    one_hot = F.one_hot(labels, logits.shape[1]).bool()
    real = logits.gather(1, labels.view(-1, 1)).squeeze(1)
    other = logits.masked_fill(one_hot, float("-inf")).amax(1)
    return torch.clamp(real - other, min=-kappa)


class _Adam:
    """``torch.optim.Adam``'s update of one tensor (betas 0.9, 0.999; eps 1e-8; no weight decay), float op for float
    op, without ``torch.optim`` (whose first step imports torch's compiler: seconds per process)."""

    def __init__(self, param: torch.Tensor, lr: float) -> None:
        self.param, self.lr, self.t = param, lr, 0
        self.m, self.v = torch.zeros_like(param), torch.zeros_like(param)

    @torch.no_grad()
    def step(self, grad: torch.Tensor) -> None:
        self.t += 1
        self.m.lerp_(grad, 1 - 0.9)
        self.v.mul_(0.999).addcmul_(grad, grad, value=1 - 0.999)
        step_size = self.lr / (1 - 0.9**self.t)
        denom = (self.v.sqrt() / (1 - 0.999**self.t) ** 0.5).add_(1e-8)
        self.param.addcdiv_(self.m, denom, value=-step_size)


def cw_l2(model: Model, images: torch.Tensor, labels: torch.Tensor, *, c: float = 50.0, kappa: float = 0.0,
          steps: int = 40, lr: float = 0.01) -> torch.Tensor:  # fmt: skip
    """Adversarial images (N, 3, H, W) on [0, 1] for ``images`` with true classes ``labels`` (see the module)."""
    images = images.detach().contiguous()
    n = images.shape[0]
    x = torch.clamp(images * 2 - 1, min=-1, max=1)
    w = (0.5 * torch.log((1 + x) / (1 - x))).detach().requires_grad_(True)
    best = images.clone()
    best_l2 = 1e10 * torch.ones(n, device=images.device)
    previous = 1e10 * torch.ones(n, device=images.device)
    active = torch.ones(n, dtype=torch.bool, device=images.device)
    optimizer = _Adam(w, lr)
    check = max(steps // 10, 1)
    for step in range(steps):
        with torch.enable_grad():
            adv = 1 / 2 * (torch.tanh(w) + 1)
            l2 = F.mse_loss(adv.flatten(1), images.flatten(1), reduction="none").sum(dim=1)
            logits = model(adv)
            cost = l2 + c * _margin(logits, labels, kappa)
            (grad,) = torch.autograd.grad(cost.sum(), w)
        optimizer.step(grad)
        if kappa:  # Carlini & Wagner: adversarial with confidence κ, max_{i≠t} Z_i − Z_t ≥ κ
            adversarial = -_margin(logits.detach(), labels, float("inf")) >= kappa
        else:  # misclassified (torchattacks' test; the same at κ = 0)
            adversarial = logits.detach().argmax(1) != labels
        improved = adversarial & (best_l2 > l2.detach()) & active
        mask = improved.float()
        best_l2 = mask * l2.detach() + (1 - mask) * best_l2
        mask = mask.view(-1, 1, 1, 1)
        best = mask * adv.detach() + (1 - mask) * best
        if step % check == 0:
            cost = cost.detach()
            active &= ~(cost > previous)
            previous = torch.where(active, cost, previous)
            if not bool(active.any()):
                break
    return best.detach()
