"""Crafting the samples of one subset: the surrogate's clean decision, the attack, 8-bit storage within ε, and the
surrogate's decision on the stored image.

On the CPU every image is attacked alone on one torch thread (float results then depend on nothing but the image and
the model: not on the batch, the worker or the machine's thread count); on CUDA the batch is attacked at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...attacks.spec import AttackSpec
from .surrogate import load_surrogate


def craft_batch(spec: AttackSpec, surrogate_spec: str, sha256: str, images: np.ndarray,
                rngs: Sequence[np.random.Generator], labels: Sequence[int | None], device: str = "cpu",
                ) -> tuple[list[np.ndarray], list[dict[str, Any]]]:  # fmt: skip
    """Adversarial uint8 (H, W, 3) images and their parameters for uint8 ``images`` (N, H, W, 3) of ``labels``
    (``None``: unlabelled, the surrogate's clean decision is attacked)."""
    if device.startswith("cuda"):
        return _craft(spec, surrogate_spec, sha256, images, rngs, labels, device)
    outs: list[np.ndarray] = []
    params: list[dict[str, Any]] = []
    from ...quality.vif import one_torch_thread

    with one_torch_thread():
        for i in range(len(images)):
            one = slice(i, i + 1)
            out, prm = _craft(spec, surrogate_spec, sha256, images[one], rngs[one], labels[one], "cpu")
            outs += out
            params += prm
    return outs, params


def _craft(spec, surrogate_spec, sha256, images, rngs, labels, device):
    import torch

    from ...attacks import craft, to_uint8
    from ...errors import CorruptgenError

    surrogate = load_surrogate(surrogate_spec, device)
    if surrogate.sha256 != sha256:
        raise CorruptgenError(f"surrogate {surrogate_spec} changed since the plan was made (weights sha256 "
                              f"{surrogate.sha256[:12]}…, plan has {sha256[:12]}…)")  # fmt: skip
    eps = [spec.sample_eps(rng) for rng in rngs]
    model = surrogate.classifier
    clean = torch.from_numpy(np.require(images, requirements=("C", "W"))).to(device)  # decoded inputs are read-only
    x = clean.permute(0, 3, 1, 2).to(torch.float64) / 255
    before = model.predict(x)
    given = [None if label is None or int(label) < 0 else int(label) for label in labels]
    for label in given:
        if label is not None and label >= surrogate.num_classes:
            raise CorruptgenError(f"label {label} is outside the {surrogate.num_classes} classes of the surrogate")
    attacked = torch.tensor([b if g is None else g for g, b in zip(given, before.tolist(), strict=True)],
                            device=x.device)  # fmt: skip
    crafted = craft(spec, model, x, attacked, eps=None if spec.eps is None else eps)
    stored = to_uint8(crafted.images, clean, crafted.eps)
    diff = stored.to(torch.float64) - clean.to(torch.float64)
    after = model.predict(stored.permute(0, 3, 1, 2).to(torch.float64) / 255)
    params = []
    for i in range(len(images)):
        p: dict[str, Any] = {"attack": spec.name, **({"eps": eps[i]} if spec.eps is not None else {})}
        p["iterations"] = dict(spec.params).get("steps", 1)
        p.update({k: v for k, v in spec.params if k not in ("eps", "steps")})
        if crafted.targets is not None:
            p["target"] = int(crafted.targets[i])
        p.update(label=int(attacked[i]), label_source="source" if given[i] is not None else "surrogate",
                 surrogate_pred_clean=int(before[i]), surrogate_pred_adv=int(after[i]),
                 linf=float(diff[i].abs().max()) / 255, l2=float(diff[i].square().sum().sqrt()) / 255)  # fmt: skip
        params.append(p)
    return list(stored.cpu().numpy()), params
