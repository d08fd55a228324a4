"""Mixup, TLAT and M-TLAT for any torch training loop (Laugros, PhD thesis, Université Grenoble Alpes 2022, §3.3.2).

Each augmentation maps a batch (float images (B, 3, H, W) on [0, 1], int labels (B,)) to a list of ``(x, y_soft)``
pairs whose soft labels are rows that sum to 1; a training step sums the soft cross-entropy over the pairs:

>>> aug = MTLAT(model, num_classes=1000, alpha=0.4, eps_max=0.025, seed=0)  # doctest: +SKIP
>>> loss = sum(soft_cross_entropy(model(x), y) for x, y in aug(images, labels))  # doctest: +SKIP

* :class:`Mixup` (Eq. 3.1, Zhang et al., ICLR 2018): ``[(x_mix, y_mix)]`` with ``x_mix = λ·x_i + (1 − λ)·x_j``;
* :class:`TLAT` (Eq. 3.4–3.5): ``[(x, y), (x_adv, y_adv)]``, the clean batch and its targeted-FGSM version
  ``x_adv = x − ε·sign(∇ₓ L(x, y_target))`` labelled ``(1 − ε)·y + ε·y_target``;
* :class:`MTLAT` (Eq. 3.6, Algorithm 1): ``[(x_mix1, y_mix1), (x_mlat, y_mlat)]``: the batch is shuffled and cut into
  four groups x₁, x₂, x₃, x₄ of distinct images; x_mix1 mixes x₁ with x₂, x_mix2 mixes x₃ with x₄ and becomes the
  targeted-FGSM example labelled ``(1 − ε)·y_mix2 + ε·y_target``. No image is in both halves.

Algorithm 1 writes one training step on four samples ``(x₁, y₁) … (x₄, y₄) ~ Dataset``; on a batch of B images M-TLAT
makes ``⌈⌊B/2⌋/2⌉`` Mixup rows and ``⌊B/4⌋`` adversarial rows (B/4 each when B is a multiple of 4; at most one image
is left out, when B is odd) and needs B ≥ 4. The thesis trains with "a batch size of 256" (§3.3.3.2) without saying
whether it counts loaded images or training rows: a DataLoader batch of 256 gives 64 + 64 rows a step from 256
distinct images, each image once an epoch (the reading we take: one epoch is one pass over the data); 512 gives
128 + 128 rows.

As in Algorithm 1, every output row draws its own λ ~ Beta(α, α), ε ~ U[0, ε_max] and target class ~ U{0, …, N − 1}
(uniform, as in Algorithm 1; not the least likely class, which the thesis uses only in its benchmark attacks).

The attack's model mode, ``attack_mode``: ``"train"`` (default) takes ∇ₓ with the model in train mode, as it is
trained: Algorithm 1's ``∇_{x_mix2} L(x_mix2, y_target, θ)`` inside the training step (with batch norm: the
statistics of the batch attacked; dropout active); the thesis mentions no mode switch, and a training loop that makes
none takes it so. The model's buffers (batch-norm running statistics) are restored after the attack's forward pass,
so the parameters and statistics change only through ``loss_1 + loss_2``. ``"eval"`` takes it in eval mode (running
statistics; torchattacks' default). The model's own mode is restored afterwards; no parameter gradient is
accumulated; the images are clipped to [0, 1]. Randomness is seeded like :class:`corruptgen.augment.RandomCorruption`:
from ``(seed, epoch, key)`` when a key is given, else from ``(seed, epoch, DataLoader worker, call number)``; one
call draws, in this order, the shuffle of the batch, λ₁, λ₂, ε and the target classes.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from ..errors import CorruptgenError
from ..seeding import SeededCalls
from .gradient import fgsm

__all__ = ["MTLAT", "TLAT", "Mixup", "soft_cross_entropy"]

Pairs = list[tuple[torch.Tensor, torch.Tensor]]


def soft_cross_entropy(logits: torch.Tensor, targets: torch.Tensor, reduction: str = "mean") -> torch.Tensor:
    """``−Σ_c y_c · log softmax(z)_c`` per row (``targets`` (B, C) soft labels); mean over rows by default."""
    loss = -(targets * F.log_softmax(logits, dim=1)).sum(dim=1)
    if reduction == "none":
        return loss
    return loss.sum() if reduction == "sum" else loss.mean()


class _Seeded(SeededCalls):
    """Per-call generators like RandomCorruption's (``set_epoch`` for fresh draws every epoch), the class count."""

    def __init__(self, num_classes: int, seed: int | None) -> None:
        if int(num_classes) < 2:
            raise CorruptgenError(f"num_classes must be at least 2, got {num_classes}")
        super().__init__(seed)
        self.num_classes = int(num_classes)

    def _inputs(self, images: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        """Check the batch; returns the one-hot labels (B, N) in the images' dtype."""
        if not isinstance(images, torch.Tensor) or images.ndim != 4 or not images.is_floating_point():
            raise CorruptgenError(f"images must be a float (B, C, H, W) tensor on [0, 1], got "
                                  f"{getattr(images, 'shape', type(images).__name__)}")  # fmt: skip
        labels = torch.as_tensor(labels, device=images.device)
        if labels.shape != (images.shape[0],) or labels.is_floating_point():
            raise CorruptgenError(f"labels must be {images.shape[0]} class indices, got shape {tuple(labels.shape)}")
        if labels.numel() and (int(labels.min()) < 0 or int(labels.max()) >= self.num_classes):
            raise CorruptgenError(f"labels must be in [0, {self.num_classes}), got {labels.min()}..{labels.max()}")
        return F.one_hot(labels.long(), self.num_classes).to(images.dtype)


def _check_fraction(name: str, value: float, low: float, high: float) -> float:
    value = float(value)
    if not low < value <= high:
        raise CorruptgenError(f"{name} must be in ({low}, {high}], got {value}")
    return value


def _mix(images: torch.Tensor, soft: torch.Tensor, alpha: float, rng: np.random.Generator):
    """Eq. 3.1 per row: λ ~ Beta(α, α), the partner a random permutation of the batch."""
    n = images.shape[0]
    lam = torch.as_tensor(rng.beta(alpha, alpha, size=n), dtype=images.dtype, device=images.device)
    partner = torch.as_tensor(rng.permutation(n), device=images.device)
    x = lam.view(-1, 1, 1, 1) * images + (1 - lam).view(-1, 1, 1, 1) * images[partner]
    return x, lam.view(-1, 1) * soft + (1 - lam).view(-1, 1) * soft[partner]


def _mix_pairs(images: torch.Tensor, soft: torch.Tensor, first: torch.Tensor, second: torch.Tensor,
               lam: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """Eq. 3.1 row by row: ``λ·x[first] + (1 − λ)·x[second]`` and the same mix of the soft labels."""
    w = torch.as_tensor(lam, dtype=images.dtype, device=images.device).view(-1, 1)
    x = w.view(-1, 1, 1, 1) * images[first] + (1 - w).view(-1, 1, 1, 1) * images[second]
    return x, w * soft[first] + (1 - w) * soft[second]


#: The model's mode while the adversarial step's gradient is taken (see the module's docstring).
ATTACK_MODES = ("train", "eval")


def _attack_mode(value: str) -> str:
    if value not in ATTACK_MODES:
        raise CorruptgenError(f"attack_mode must be one of {', '.join(ATTACK_MODES)}, got {value!r}")
    return value


def _targeted(model: torch.nn.Module, x: torch.Tensor, soft: torch.Tensor, num_classes: int, eps_max: float,
              rng: np.random.Generator, mode: str) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """Eq. 3.4–3.6: a targeted-FGSM step of ε ~ U[0, ε_max] towards y_target ~ U{0..N−1}, label (1 − ε)·y + ε·y_t;
    the gradient taken in ``mode`` (``"train"``: the model's buffers restored after; ``"eval"``: eval mode)."""
    n = x.shape[0]
    eps = rng.uniform(0.0, eps_max, size=n)
    target = torch.as_tensor(rng.integers(0, num_classes, size=n), device=x.device)
    training = model.training
    saved = [(b, b.detach().clone()) for b in model.buffers()] if mode == "train" else []
    model.train(mode == "train")
    try:
        adversarial = fgsm(model, x, target, eps.tolist(), targets=target)
    finally:
        model.train(training)
        with torch.no_grad():
            for buffer, value in saved:
                buffer.copy_(value)
    e = torch.as_tensor(eps, dtype=soft.dtype, device=soft.device).view(-1, 1)
    return adversarial, (1 - e) * soft + e * F.one_hot(target, num_classes).to(soft.dtype)


class Mixup(_Seeded):
    """Mixup (Zhang et al., ICLR 2018; thesis Eq. 3.1): ``aug(images, labels)`` → ``[(x_mix, y_mix)]``."""

    def __init__(self, num_classes: int, alpha: float = 0.4, seed: int | None = None) -> None:
        super().__init__(num_classes, seed)
        self.alpha = _check_fraction("alpha", alpha, 0.0, float("inf"))

    def __call__(self, images: torch.Tensor, labels: torch.Tensor, key: Any = None) -> Pairs:
        soft = self._inputs(images, labels)
        return [_mix(images, soft, self.alpha, self._generator(key))]


class TLAT(_Seeded):
    """Targeted Labeling Adversarial Training (thesis Eq. 3.4–3.5): ``aug(images, labels)`` →
    ``[(images, y), (x_adv, (1 − ε)·y + ε·y_target)]``; ``attack_mode`` as :class:`MTLAT`'s."""

    def __init__(self, model: torch.nn.Module, num_classes: int, eps_max: float = 0.025, seed: int | None = None,
                 attack_mode: str = "train") -> None:  # fmt: skip
        super().__init__(num_classes, seed)
        self.model = model
        self.eps_max = _check_fraction("eps_max", eps_max, 0.0, 1.0)
        self.attack_mode = _attack_mode(attack_mode)

    def __call__(self, images: torch.Tensor, labels: torch.Tensor, key: Any = None) -> Pairs:
        soft = self._inputs(images, labels)
        rng = self._generator(key)
        adversarial = _targeted(self.model, images, soft, self.num_classes, self.eps_max, rng, self.attack_mode)
        return [(images, soft), adversarial]


class MTLAT(_Seeded):
    """M-TLAT (thesis Eq. 3.6, Algorithm 1): ``aug(images, labels)`` → ``[(x_mix1, y_mix1), (x_mlat, y_mlat)]`` from
    four disjoint groups of the batch (x₁, x₂ → the Mixup half; x₃, x₄ → the adversarial half; B ≥ 4 images).

    ``attack_mode``: ``"train"`` (default: the gradient of the model being trained, buffers restored) or ``"eval"``.
    :meth:`groups` gives the four groups' batch positions of a call (for checks and logging)."""

    def __init__(self, model: torch.nn.Module, num_classes: int, alpha: float = 0.4, eps_max: float = 0.025,
                 seed: int | None = None, attack_mode: str = "train") -> None:  # fmt: skip
        super().__init__(num_classes, seed)
        self.model = model
        self.alpha = _check_fraction("alpha", alpha, 0.0, float("inf"))
        self.eps_max = _check_fraction("eps_max", eps_max, 0.0, 1.0)
        self.attack_mode = _attack_mode(attack_mode)

    @staticmethod
    def groups(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Batch positions of x₁, x₂ (⌈⌊n/2⌋/2⌉ each) and x₃, x₄ (⌊n/4⌋ each): a shuffle of ``0..n−1`` cut in
        order, so no position is in two groups."""
        if n < 4:
            raise CorruptgenError(f"M-TLAT needs at least 4 images a batch (Algorithm 1 mixes two pairs of distinct "
                                  f"images), got {n}: use a larger batch or drop_last=True")  # fmt: skip
        adversarial = n // 4
        mixup = n // 2 - adversarial
        cuts = np.cumsum([mixup, mixup, adversarial, adversarial])
        order = rng.permutation(n)
        return tuple(np.split(order[: cuts[-1]], cuts[:-1]))  # type: ignore[return-value]

    def __call__(self, images: torch.Tensor, labels: torch.Tensor, key: Any = None) -> Pairs:
        soft = self._inputs(images, labels)
        rng = self._generator(key)
        g1, g2, g3, g4 = (torch.as_tensor(g, device=images.device) for g in self.groups(images.shape[0], rng))
        lam1, lam2 = rng.beta(self.alpha, self.alpha, size=len(g1)), rng.beta(self.alpha, self.alpha, size=len(g3))
        first = _mix_pairs(images, soft, g1, g2, lam1)
        x_mix2, y_mix2 = _mix_pairs(images, soft, g3, g4, lam2)
        return [first, _targeted(self.model, x_mix2, y_mix2, self.num_classes, self.eps_max, rng, self.attack_mode)]
