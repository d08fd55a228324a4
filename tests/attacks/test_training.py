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


def _algorithm_1_draws(seed, key, n, classes=10, alpha=0.4, eps_max=0.025):
    """The draws of one M-TLAT call in their documented order: groups, λ₁, λ₂, ε, target."""
    rng = call_rng(seed, 0, 0, key)
    groups = [torch.as_tensor(g) for g in MTLAT.groups(n, rng)]
    lam1 = torch.as_tensor(rng.beta(alpha, alpha, size=len(groups[0])), dtype=torch.float32)
    lam2 = torch.as_tensor(rng.beta(alpha, alpha, size=len(groups[2])), dtype=torch.float32)
    eps = torch.as_tensor(rng.uniform(0, eps_max, size=len(groups[2])), dtype=torch.float32)
    target = torch.as_tensor(rng.integers(0, classes, size=len(groups[2])))
    return groups, lam1, lam2, eps, target


def _mix(lam, a, b):
    w = lam.view(-1, *([1] * (a.ndim - 1)))
    return w * a + (1 - w) * b


def test_mtlat_is_algorithm_1(net, batch):
    images, labels = batch
    aug = MTLAT(net, 10, alpha=0.4, eps_max=0.025, seed=5, attack_mode="eval")
    (x_mix1, y_mix1), (x_mlat, y_mlat) = aug(images, labels, key="step")
    (g1, g2, g3, g4), lam1, lam2, eps, target = _algorithm_1_draws(5, "step", 4)
    one_hot = F.one_hot(labels, 10).float()
    assert torch.allclose(x_mix1, _mix(lam1, images[g1], images[g2]))
    assert torch.allclose(y_mix1, _mix(lam1, one_hot[g1], one_hot[g2]))
    x_mix2, y_mix2 = _mix(lam2, images[g3], images[g4]), _mix(lam2, one_hot[g3], one_hot[g4])
    assert torch.allclose(y_mlat, (1 - eps.view(-1, 1)) * y_mix2 + eps.view(-1, 1) * F.one_hot(target, 10))
    for y in (y_mix1, y_mlat):
        assert torch.allclose(y.sum(1), torch.ones(1)) and (y >= 0).all()
    step = (x_mlat - x_mix2).abs().amax(dim=(1, 2, 3))
    assert (step <= eps + 1e-6).all() and (step > 0).all()
    assert net.training and all(p.grad is None for p in net.parameters())  # mode restored, no parameter gradients
    net.eval()
    with torch.no_grad():  # the targeted step lowers the loss of the target class
        before = F.cross_entropy(net(x_mix2), target, reduction="none")
        after = F.cross_entropy(net(x_mlat), target, reduction="none")
    net.train()
    assert (after < before).all()


@pytest.mark.parametrize("n", [4, 8, 9, 10, 11])
def test_mtlat_halves_hold_different_images(n):
    """Algorithm 1's four samples: each output row mixes two distinct images, and no image is in both halves.

    Image i is the indicator of pixel i and its label is class i, so a Mixup row's non-zero pixels and an adversarial
    row's label weights name their sources."""
    images = torch.eye(n).view(n, 1, 1, n).expand(n, 3, 1, n).contiguous()
    labels = torch.arange(n)
    model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3 * n, 1000))
    (x_mix1, _), (x_mlat, y_mlat) = MTLAT(model, 1000, alpha=1.0, seed=n)(images, labels, key=0)
    assert len(x_mix1) == (n // 2 + 1) // 2 and len(x_mlat) == n // 4
    mixup = [set(torch.nonzero(row[0, 0] > 0).flatten().tolist()) for row in x_mix1]
    _, _, _, eps, target = _algorithm_1_draws(n, 0, n, classes=1000, alpha=1.0)
    weights = y_mlat - eps.view(-1, 1) * F.one_hot(target, 1000)  # (1 − ε)·y_mix2: the two sources
    adversarial = [set(torch.nonzero(row[:n] > 1e-6).flatten().tolist()) for row in weights]
    for sources in mixup + adversarial:
        assert len(sources) == 2
    used = [i for sources in mixup + adversarial for i in sources]
    assert len(used) == len(set(used)) == 4 * (n // 4) + 2 * (len(x_mix1) - n // 4)  # every image at most once
    assert not set().union(*mixup) & set().union(*adversarial)


class _BatchNormNet(torch.nn.Module):
    """conv → batch norm → linear: its gradient differs between train mode (batch statistics) and eval mode."""

    def __init__(self) -> None:
        super().__init__()
        g = torch.Generator().manual_seed(0)
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.norm = torch.nn.BatchNorm2d(4)
        self.head = torch.nn.Linear(4 * 16 * 16, 10)
        with torch.no_grad():
            for p in self.parameters():
                p.copy_(torch.randn(p.shape, generator=g) * 0.3)
            self.norm.running_mean.fill_(0.7)
            self.norm.running_var.fill_(3.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(torch.relu(self.norm(self.conv(x))).flatten(1))


@pytest.mark.parametrize("mode", ["train", "eval"])
def test_mtlat_attack_mode(mode):
    """The adversarial step's gradient is the model's in ``attack_mode`` (default train: the network being trained,
    batch statistics); the running statistics and the mode are left as they were."""
    g = torch.Generator().manual_seed(3)
    images = torch.rand(8, 3, 16, 16, generator=g)
    labels = torch.tensor([0, 1, 2, 3, 4, 5, 6, 7])
    net = _BatchNormNet().train()
    before = {k: v.clone() for k, v in net.state_dict().items()}
    options = {} if mode == "train" else {"attack_mode": "eval"}
    (_, _), (x_mlat, _) = MTLAT(net, 10, eps_max=0.05, seed=1, **options)(images, labels, key="k")
    (_, _, g3, g4), _, lam2, eps, target = _algorithm_1_draws(1, "k", 8, eps_max=0.05)
    x_mix2 = _mix(lam2, images[g3], images[g4])
    grads = {}
    for m in ("train", "eval"):
        copy = _BatchNormNet().train(m == "train")
        x = x_mix2.clone().requires_grad_(True)
        (grad,) = torch.autograd.grad(-F.cross_entropy(copy(x), target, reduction="sum"), x)
        grads[m] = torch.clamp(x_mix2 + eps.view(-1, 1, 1, 1) * grad.sign(), 0, 1)
    assert not torch.allclose(grads["train"], grads["eval"])  # the two modes differ on this net
    assert torch.allclose(x_mlat, grads[mode], atol=1e-6)
    assert net.training and all(torch.equal(before[k], v) for k, v in net.state_dict().items())


class _Recorder(torch.nn.Module):
    """A linear classifier that records its mode at every forward pass."""

    def __init__(self) -> None:
        super().__init__()
        self.head = torch.nn.Linear(3 * 16 * 16, 10)
        self.modes: list[bool] = []

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.modes.append(self.training)
        return self.head(x.flatten(1))


def test_the_gradient_is_taken_in_training_mode_by_default(batch):
    images, labels = batch
    net = _Recorder().train()
    MTLAT(net, 10, seed=0)(images, labels)
    assert net.modes == [True] and net.training  # the attack's one forward pass, in the mode of the step
    TLAT(net, 10, seed=0)(images, labels)
    assert net.modes == [True, True]
    net.eval()  # the mode is the option's, whatever the model's; the model's own comes back
    MTLAT(net, 10, seed=0)(images, labels)
    MTLAT(net.train(), 10, seed=0, attack_mode="eval")(images, labels)
    assert net.modes == [True, True, True, False] and net.training


def test_mtlat_needs_four_images(net, batch):
    images, labels = batch
    with pytest.raises(CorruptgenError, match="at least 4 images"):
        MTLAT(net, 10, seed=0)(images[:3], labels[:3])
    with pytest.raises(CorruptgenError, match="attack_mode"):
        MTLAT(net, 10, attack_mode="inference")


def test_tlat_keeps_the_clean_pair_and_labels_the_target(net, batch):
    images, labels = batch
    (x, y), (x_adv, y_adv) = TLAT(net, 10, eps_max=0.025, seed=1, attack_mode="eval")(images, labels, key=0)
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
