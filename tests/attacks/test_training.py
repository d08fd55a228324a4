"""Mixup (Eq. 3.1), TLAT (Eq. 3.4–3.5) and M-TLAT (Eq. 3.6, Algorithm 1) of Laugros's thesis, checked against their
equations with the same random draws."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from tiny_models import tiny_model

from corruptgen.augment import MTLAT, TLAT, Mixup, soft_cross_entropy
from corruptgen.errors import CorruptgenError
from corruptgen.seeding import call_rng


@pytest.fixture(scope="module")
def net() -> torch.nn.Module:
    return tiny_model().module.train()  # a model being trained: its mode must survive the adversarial step


@pytest.fixture(scope="module")
def batch(images) -> tuple[torch.Tensor, torch.Tensor]:
    return images, torch.tensor([1, 4, 7, 9])


def _mix_draws(rng, n):
    return torch.as_tensor(rng.beta(0.4, 0.4, size=n), dtype=torch.float32), torch.as_tensor(rng.permutation(n))


def test_mixup_is_eq_3_1(batch):
    images, labels = batch
    ((x, y),) = Mixup(10, alpha=0.4, seed=3)(images, labels, key="k")
    lam, partner = _mix_draws(call_rng(3, 0, 0, "k"), 4)
    one_hot = F.one_hot(labels, 10).float()
    assert torch.allclose(x, lam.view(-1, 1, 1, 1) * images + (1 - lam).view(-1, 1, 1, 1) * images[partner])
    assert torch.allclose(y, lam.view(-1, 1) * one_hot + (1 - lam).view(-1, 1) * one_hot[partner])
    assert torch.allclose(y.sum(1), torch.ones(4))


def test_mtlat_is_algorithm_1(net, batch):
    images, labels = batch
    aug = MTLAT(net, 10, alpha=0.4, eps_max=0.025, seed=5)
    (x_mix1, y_mix1), (x_mlat, y_mlat) = aug(images, labels, key="step")
    rng = call_rng(5, 0, 0, "step")
    one_hot = F.one_hot(labels, 10).float()
    mixed = []
    for _ in range(2):
        lam, partner = _mix_draws(rng, 4)
        mixed.append((lam.view(-1, 1, 1, 1) * images + (1 - lam).view(-1, 1, 1, 1) * images[partner],
                      lam.view(-1, 1) * one_hot + (1 - lam).view(-1, 1) * one_hot[partner]))  # fmt: skip
    eps = torch.as_tensor(rng.uniform(0, 0.025, size=4), dtype=torch.float32)
    target = torch.as_tensor(rng.integers(0, 10, size=4))
    assert torch.allclose(x_mix1, mixed[0][0]) and torch.allclose(y_mix1, mixed[0][1])
    x_mix2, y_mix2 = mixed[1]
    assert torch.allclose(y_mlat, (1 - eps.view(-1, 1)) * y_mix2 + eps.view(-1, 1) * F.one_hot(target, 10))
    for y in (y_mix1, y_mlat):
        assert torch.allclose(y.sum(1), torch.ones(4)) and (y >= 0).all()
    step = (x_mlat - x_mix2).abs().amax(dim=(1, 2, 3))
    assert (step <= eps + 1e-6).all() and (step > 0).all()
    assert net.training and all(p.grad is None for p in net.parameters())  # mode restored, no parameter gradients
    net.eval()
    with torch.no_grad():  # the targeted step lowers the loss of the target class
        before = F.cross_entropy(net(x_mix2), target, reduction="none")
        after = F.cross_entropy(net(x_mlat), target, reduction="none")
    net.train()
    assert (after < before).all()


def test_tlat_keeps_the_clean_pair_and_labels_the_target(net, batch):
    images, labels = batch
    (x, y), (x_adv, y_adv) = TLAT(net, 10, eps_max=0.025, seed=1)(images, labels, key=0)
    assert torch.equal(x, images) and torch.equal(y, F.one_hot(labels, 10).float())
    rng = call_rng(1, 0, 0, 0)
    eps = torch.as_tensor(rng.uniform(0, 0.025, size=4), dtype=torch.float32)
    target = torch.as_tensor(rng.integers(0, 10, size=4))
    assert torch.allclose(y_adv, (1 - eps.view(-1, 1)) * y + eps.view(-1, 1) * F.one_hot(target, 10))
    assert ((x_adv - images).abs().amax(dim=(1, 2, 3)) <= eps + 1e-6).all()


def test_seeded_training_step(net, batch):
    images, labels = batch
    first = MTLAT(net, 10, seed=0)(images, labels)
    again = MTLAT(net, 10, seed=0)(images, labels)
    assert all(torch.equal(a, b) for pa, pb in zip(first, again, strict=True) for a, b in zip(pa, pb, strict=True))
    later = MTLAT(net, 10, seed=0)
    later.set_epoch(1)
    assert not torch.equal(later(images, labels)[0][0], first[0][0])
    loss = sum(soft_cross_entropy(net(x), y) for x, y in first)
    loss.backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad(set_to_none=True)


@pytest.mark.parametrize(("make", "args", "message"), [
    (lambda n: Mixup(10, alpha=0), None, "alpha"),
    (lambda n: MTLAT(n, 10, eps_max=1.5), None, "eps_max"),
    (lambda n: Mixup(10), (torch.zeros(2, 3, 4, 4), torch.tensor([0, 10])), "labels must be in"),
    (lambda n: Mixup(10), (torch.zeros(2, 3, 4, 4, dtype=torch.uint8), torch.tensor([0, 1])), "float"),
])  # fmt: skip
def test_bad_arguments(net, make, args, message):
    with pytest.raises(CorruptgenError, match=message):
        make(net)(*args)
